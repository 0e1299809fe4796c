"""The multi-head & positions page in AppTest: every control, both languages, odd URL values."""

from __future__ import annotations

import json
from dataclasses import astuple

import numpy as np
import pytest

from core.lessons.multi_head import points_from_json, redundancy_vs_heads
from tests.app.conftest import DOUBLED_PUNCTUATION, assert_clean, charts, open_page, page_texts, show_answers
from ui.i18n import load_catalogue
from ui.multi_head import SHIPPED_REDUNDANCY, SHIPPED_REDUNDANCY_FILE

PAGE = "multi-head"
EN = load_catalogue("en")
ZH = load_catalogue("zh")
#: The redundancy experiment at its cheapest, so tests that do not look at it stay fast.
CHEAP = {"mh_red_d": "16", "mh_red_steps": "0"}


def _opt(key: str) -> str:
    """How a bound radio writes an option into the URL: its English label (``mh.pe_learned``...)."""
    return EN[key]


def _metrics(at) -> dict[str, float]:
    return {m.label: float(m.value) for m in at.metric}


def _charts(at) -> int:
    return len(charts(at))


def _texts(at) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info]
    return "\n".join(parts)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_default_page_in_both_languages(lang):
    at = open_page(PAGE, lang=lang)
    assert_clean(at)
    cat = EN if lang == "en" else ZH
    assert at.title[0].value == cat["mh.title"]
    assert [h.value for h in at.header][:1] == [cat["mh.heads_title"]]
    # the deeper sections sit in folds titled with their section titles (opened by this link)
    folds = [e.label for e in at.expander if e.proto.query_param_key.startswith("open_")]
    assert folds == [cat[f"mh.{k}_title"] for k in ("lib", "contig", "pos", "red")]
    # head grid, concat, bars, similarity, PE, kernel, two distance plots, permutation, and the
    # redundancy experiment's default run, computed ahead and shipped (it never trains on load)
    assert _charts(at) == 10
    assert "d_model = 64, 100 steps, seed 42" not in _texts(at)  # the shipped run is the view's run
    red = at.table[-1].value
    assert list(red.iloc[:, 0]) == [1, 2, 4, 8, 16, 32]
    assert not at.warning
    # issue 22.8: "W_O" read as "w_o" in the Chinese title. Nothing lower-cased it (the spec held
    # "W_O"): at 16 px Latin capitals beside CJK ideographs look like small letters. The title now
    # writes W with a subscript O, as the formula above it does, in both languages.
    (concat,) = [c for c in charts(at) if c.proto.id.endswith("mh_fig_concat")]
    title = json.loads(concat.proto.spec)["layout"]["title"]["text"]
    assert "W<sub>O</sub>" in title
    assert "w_o" not in title.lower()
    assert [s for s in page_texts(at) if DOUBLED_PUNCTUATION.search(s)] == []


def test_permutation_table_shows_the_symmetry_and_its_breaking():
    at = open_page(PAGE, params=CHEAP)
    assert_clean(at)
    perm = at.table[1].value  # rows: none, sinusoidal, learned; columns: no mask, causal
    values = perm.iloc[:, 1:].astype(float).to_numpy()
    assert values[0, 0] < 1e-12  # no encoding, no mask: only rows and columns move
    assert (values[1:, 0] > 1e-3).all()  # an encoding changes the map
    assert (values[:, 1] > 1e-3).all()  # so does a causal mask, even without an encoding


def test_every_model_control():
    at = open_page(PAGE, params=CHEAP)
    assert_clean(at)
    at.select_slider(key="mh_d").set_value(48).run()
    assert_clean(at)
    assert at.select_slider(key="mh_heads").options == [str(h) for h in (1, 2, 3, 4, 6, 8, 12, 16, 24)]
    at.select_slider(key="mh_heads").set_value(24).run()
    assert_clean(at)
    assert "d_k = 2, d_v = 2" in _texts(at)
    at.radio(key="mh_dims").set_value("custom").run()
    at.select_slider(key="mh_heads").set_value(5).run()
    at.slider(key="mh_dk").set_value(3).run()
    at.slider(key="mh_dv").set_value(7).run()
    assert_clean(at)
    assert "d_k = 3, d_v = 7" in _texts(at)
    assert EN["mh.lib_custom_note"] in _texts(at)  # torch's module cannot take these widths
    m = _metrics(at)
    assert m[EN["mh.lib_output_diff"].format(dtype="float64")] < 1e-12
    at.radio(key="mh_input").set_value("random").run()
    at.slider(key="mh_len").set_value(17).run()
    assert_clean(at)
    assert "(1, 5, 17, 7)" in _texts(at)  # the contiguity demo runs on the page's own heads
    for pe in ("sinusoidal", "learned", "none"):
        at.radio(key="mh_pe").set_value(pe).run()
        assert_clean(at)
    at.radio(key="mh_mask").set_value("causal").run()
    at.number_input(key="mh_seed").set_value(7).run()
    assert_clean(at)
    assert _charts(at) == 10


def test_section_controls():
    at = open_page(PAGE, params=CHEAP)
    at.slider(key="mh_threshold").set_value(0.5).run()
    assert_clean(at)
    assert "pair(s) at or above 0.50: h" in _texts(at)  # random heads overlap a lot: some pairs pass
    at.slider(key="mh_threshold").set_value(1.0).run()
    assert EN["mh.pairs_none"].format(threshold=1.0) in _texts(at)
    at.radio(key="mh_perm").set_value("reverse").run()
    assert_clean(at)
    order = next(c.value for c in at.caption if c.value.startswith("Shuffled order"))
    assert order.endswith("10:tired, 9:was, 8:cat, 7:the, 6:because, 5:mat, 4:the, 3:on, 2:sat, 1:cat, 0:the")
    at.select_slider(key="mh_perm_head").set_value(8).run()
    assert_clean(at)
    at.select_slider(key="mh_red_d").set_value(32).run()
    at.select_slider(key="mh_red_steps").set_value(50).run()
    assert_clean(at)
    assert _charts(at) == 10
    # moving the experiment's sliders never trains: the shown run says it is an older one
    assert EN["mh.red_stale"].format(d_model=64, steps=100, seed=42) in _texts(at)
    at.button(key="mh_red_run").click().run()
    assert_clean(at)
    red = at.table[-1].value
    assert list(red.iloc[:, 0]) == [1, 2, 4, 8, 16, 32]
    assert red.iloc[0, 1] == "0.000"  # one head: nothing to repeat
    assert "seed 42). The controls have changed" not in _texts(at)  # the run matches the controls
    # the last result stays on screen while the controls move, and says it is the last run
    at.select_slider(key="mh_red_d").set_value(16).run()
    assert_clean(at)
    assert list(at.table[-1].value.iloc[:, 0]) == [1, 2, 4, 8, 16, 32]
    assert EN["mh.red_stale"].format(d_model=32, steps=50, seed=42) in _texts(at)


def test_one_head_and_contiguity_without_error():
    at = open_page(PAGE, params={**CHEAP, "mh_dims": _opt("mh.dims_custom"), "mh_heads": "1", "mh_dv": "1"})
    assert_clean(at)
    assert EN["mh.one_head"] in _texts(at)
    assert EN["mh.contig_no_error"] in _texts(at)  # H = 1: view after transpose works


#: Controls that refuse a link's value: (label key, the link's value, the value shown).
SEED_REFUSED = ("common.seed", "-5", "42")
THRESHOLD_REFUSED = ("mh.threshold", "2", "0.9")


@pytest.mark.parametrize(
    ("params", "warned", "refused"),
    [
        ({"mh_d": "64", "mh_heads": "7"}, "7", ()),
        ({"mh_heads": "0"}, "0", ()),
        ({"mh_heads": "abc"}, "abc", ()),
        ({"mh_d": "abc"}, None, (("mh.d_model", "abc", "64"),)),
        (
            {"mh_d": "100000", "mh_len": "999", "mh_seed": "-5", "mh_dk": "0"},
            None,
            (("mh.d_model", "100000", "64"), SEED_REFUSED),
        ),
        ({"mh_pe": "rotary", "mh_mask": "future", "mh_input": "poem", "mh_dims": "x"}, None, ()),
        (
            {"mh_threshold": "2", "mh_perm": "rotate", "mh_perm_head": "99"},
            None,
            (THRESHOLD_REFUSED, ("mh.perm_head", "99", "1")),
        ),
        (
            {"mh_red_d": "7", "mh_red_steps": "100000"},
            None,
            (("mh.red_d", "7", "64"), ("mh.red_steps", "100000", "100")),
        ),
    ],
)
def test_odd_url_values_fall_back(params, warned, refused):
    at = open_page(PAGE, params={**CHEAP, **params}, answered=False)  # the run the link opened
    assert_clean(at)
    # a control that refuses the link's value says so, once, under itself (ui.controls)
    expected = [
        EN["common.link_value_refused"].format(label=EN[label_key], value=raw, shown=shown)
        for label_key, raw, shown in refused
    ]
    if warned is not None:  # the head count says it its own way, with the counts d_model allows
        expected.append(EN["mh.heads_fallback"].format(requested=warned, d_model=64, used=8))
    assert [w.value for w in at.warning] == expected
    show_answers(at)
    assert _charts(at) == 10
    at.slider(key="mh_threshold").set_value(0.8).run()
    assert not at.warning  # said once, not on every rerun


def test_heads_fall_back_when_d_model_changes():
    at = open_page(PAGE, params={**CHEAP, "mh_heads": "32"})
    assert at.select_slider(key="mh_heads").value == 32
    at.select_slider(key="mh_d").set_value(48).run()
    assert_clean(at)
    assert at.select_slider(key="mh_heads").value == 8
    assert EN["mh.heads_fallback"].format(requested="32", d_model=48, used=8) == at.warning[0].value


def test_chinese_page_uses_the_chinese_sentence():
    at = open_page(PAGE, lang="zh", params={"mh_red_d": "16", "mh_red_steps": "0"})
    assert_clean(at)
    order = next(c.value for c in at.caption if c.value.startswith("打乱后的顺序"))
    assert "小猫" in order


def _specs(at) -> dict[str, str]:
    """Every chart's Plotly spec by its element id (the id holds the key, e.g. ``mh_fig_grid``)."""
    return {c.proto.id.rsplit("-", 1)[-1]: c.proto.spec for c in charts(at)}


@pytest.mark.parametrize(
    ("kind", "key", "value", "figure"),
    [
        ("slider", "mh_threshold", 0.6, "mh_fig_similarity"),
        ("radio", "mh_perm", "reverse", "mh_fig_perm"),
        ("select_slider", "mh_perm_head", 3, "mh_fig_perm"),
    ],
)
def test_a_fragment_control_moves_only_its_own_figure(kind, key, value, figure):
    at = open_page(PAGE, params=CHEAP)
    before = _specs(at)
    getattr(at, kind)(key=key).set_value(value).run()
    assert_clean(at)
    after = _specs(at)
    assert after.keys() == before.keys()
    assert {k for k in before if before[k] != after[k]} == {figure}


def test_a_url_reproduces_the_view():
    params = {**CHEAP, "mh_d": "32", "mh_heads": "4", "mh_pe": _opt("mh.pe_sinusoidal"), "mh_mask": "causal"}
    at = open_page(PAGE, params=params)
    assert_clean(at)
    by_hand = open_page(PAGE, params=CHEAP)
    by_hand.select_slider(key="mh_d").set_value(32).run()
    by_hand.select_slider(key="mh_heads").set_value(4).run()
    by_hand.radio(key="mh_pe").set_value("sinusoidal").run()
    by_hand.radio(key="mh_mask").set_value("causal").run()
    assert_clean(by_hand)
    assert _specs(by_hand) == _specs(at)
    assert at.radio(key="mh_pe").value == "sinusoidal"


def test_the_shipped_default_run_is_what_the_experiment_computes():
    d_model, steps, seed = SHIPPED_REDUNDANCY
    shipped = points_from_json(SHIPPED_REDUNDANCY_FILE.read_text(encoding="utf-8"))
    assert [p.n_heads for p in shipped] == [1, 2, 4, 8, 16, 32]
    # each head count is an independent, seeded run: recompute the two cheapest ones
    fresh = redundancy_vs_heads(d_model, [1, 2], train_steps=steps, seed=seed).points
    # float32 training: the last bits depend on the number of torch threads of the process
    for got, want in zip(fresh, shipped[:2], strict=True):
        assert got.n_heads == want.n_heads
        np.testing.assert_allclose(astuple(got), astuple(want), rtol=1e-5)
