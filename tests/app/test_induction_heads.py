"""AppTest of the induction-heads page: it teaches before training (the shipped default run),
every control, tampered links, Train / Step / Reset on a tiny run, the 1-layer control, both
languages.

Expected numbers come from the shipped run's stored history read here by plain loops, not from
the page's helpers. Tiny configs (sequence length 16, 100 steps) keep a training under ~2 s.
"""

from __future__ import annotations

import pytest

from core.lessons.induction_heads import load_default_runs
from tests.app.conftest import assert_clean, charts, open_page
from ui.i18n import load_catalogue

EN, ZH = load_catalogue("en"), load_catalogue("zh")
#: A run that trains in a second or two: short sequences, a small vocabulary, one or two layers.
TINY = {"ih_len": "16", "ih_period": "4", "ih_vocab": "8", "ih_steps": "100"}
CHARTS = (
    "ih_sequence_fig",
    "ih_curves_fig_",
    "ih_heads_fig",
    "ih_strip_fig",
    "ih_ablate_fig",
    "ih_kernel_fig",
)


def chart_keys(at) -> list[str]:
    return [c.proto.id.split("-", 2)[-1] for c in charts(at)]


def texts(at, kind: str = "caption") -> str:
    return "\n".join(str(e.value) for e in at.get(kind))


def halfway_step(history) -> int:
    """The first measured step whose accuracy reaches halfway from the first to the last (a loop)."""
    first, last = history[0].accuracy, history[-1].accuracy
    for point in history:
        if point.accuracy >= (first + last) / 2:
            return point.step
    raise AssertionError("no crossing")


@pytest.mark.parametrize(("lang", "cat"), [("en", EN), ("zh", ZH)])
def test_page_teaches_before_training(lang, cat):
    at = open_page("induction-heads", lang=lang)
    assert_clean(at)
    assert at.title[0].value == cat["ih.title"]
    keys = chart_keys(at)
    for key in CHARTS:
        assert any(k.startswith(key) for k in keys), (key, keys)
    assert any(cat["ih.default_note"][:12] in i.value for i in at.info)
    shipped = load_default_runs()
    cliff = halfway_step(shipped.history)
    assert 150 <= cliff <= 500  # the shipped run has a plateau then a cliff
    status = cat["ih.status_cliff"].format(steps=600, acc=f"{shipped.history[-1].accuracy:.2f}", cliff=cliff)
    assert status in texts(at)
    assert not at.button(key="ih_btn_train").disabled
    assert at.button(key="ih_btn_pause").disabled


def test_the_questions_hold_their_answers_until_shown():
    at = open_page("induction-heads", answered=False)
    assert_clean(at)
    keys = chart_keys(at)
    assert not any(k.startswith(("ih_curves_fig_", "ih_ablate_fig", "ih_kernel_fig")) for k in keys)
    assert "ih_heads_fig" in keys  # the maps are what the ablation question points at
    # the shipped run: a cliff, and switching off layer 0's previous-token head costs the most
    at.radio(key="q_ih_cliff").set_value("cliff").run()
    at.button(key="q_ih_cliff_check").click().run()
    assert_clean(at)
    assert any(k.startswith("ih_curves_fig_") for k in chart_keys(at))


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"ih_len": "16"},
            "seq_len must be >= 2 * max_period = 24",
        ),  # the longest segment, twice, does not fit
        ({"ih_vocab": "8"}, "vocab >= max_period"),  # 12 distinct tokens from 8
    ],
)
def test_settings_that_make_no_run_say_why(params, message):
    at = open_page("induction-heads", params=params)
    assert_clean(at)
    assert any(message in e.value for e in at.error)
    assert at.button(key="ih_btn_train").disabled
    assert any(k.startswith("ih_heads_fig") for k in chart_keys(at))  # the page still teaches


def test_every_control():
    at = open_page("induction-heads", params={"ih_period": "6", "ih_layers": "3", "ih_seed": "5"})
    assert_clean(at)
    assert not at.error
    at.slider(key="ih_seq").set_value(3).run()
    at.slider(key="ih_query").set_value(20).run()
    at.selectbox(key="ih_head").set_value("0_0").run()
    assert_clean(at)
    title = EN["ih.strip_fig_title"].format(head=EN["ih.head"].format(layer=0, head=0), query=20)
    strip = next(c for c in charts(at) if c.proto.id.endswith("ih_strip_fig"))
    assert title in strip.proto.spec
    at.select_slider(key="ih_scale").set_value(0.2).run()
    assert_clean(at)
    assert any(m.label == EN["ih.metric_scale_acc"].format(scale="0.2") for m in at.metric)
    for key, value in (("ih_len", 48), ("ih_vocab", 64), ("ih_steps", 200), ("ih_period", 8)):
        at.select_slider(key=key).set_value(value).run()
        assert_clean(at)
        assert not at.error
    at.radio(key="ih_layers").set_value(1).run()
    at.number_input(key="ih_seed").set_value(7).run()
    assert_clean(at)


def test_your_own_text_is_copied_on_its_second_occurrence():
    at = open_page("induction-heads")
    at.text_input(key="ih_text").set_value("注意力就是核回归 注意力就是核回归").run()
    assert_clean(at)
    frame = at.table[0].value
    chars = list(frame[EN["ih.col_char"]])
    assert "".join(chars) == "注意力就是核回归" * 2  # spaces dropped
    copies = list(frame[EN["ih.col_copy"]])
    assert copies[:8] == [""] * 8  # nothing to copy before the repeat
    assert copies[8:15].count("✓") >= 5  # the shipped model copies the second occurrence
    at.text_input(key="ih_text").set_value("x" * 40).run()
    assert_clean(at)
    assert any("40 characters" in w.value for w in at.warning)


@pytest.mark.parametrize(
    "params",
    [
        {"ih_vocab": "abc"},
        {"ih_layers": "7"},
        {"ih_seed": "-1"},
        {"ih_query": "999"},
        {"ih_seq": "x"},
        {"ih_head": "9_9"},
        {"ih_scale": "zzz"},
        {"ih_steps": "1e9"},
    ],
)
def test_tampered_links_give_a_message_not_a_traceback(params):
    at = open_page("induction-heads", params=params)
    assert_clean(at)
    assert any(k.startswith("ih_heads_fig") for k in chart_keys(at))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_step_train_reset_on_a_tiny_run(lang):
    cat = ZH if lang == "zh" else EN
    at = open_page("induction-heads", lang=lang, params=TINY | {"ih_layers": "1"})
    at.button(key="ih_btn_step").click().run()
    assert_clean(at)
    progress = at.get("progress")[0].proto
    assert cat["ih.progress"].format(done=20, total=100) == progress.text
    assert not any(cat["ih.default_note"][:12] in i.value for i in at.info)
    at.button(key="ih_btn_train").click().run()
    assert_clean(at)
    assert at.get("progress")[0].proto.text == cat["ih.progress"].format(done=100, total=100)
    assert any(i.value == cat["ih.kernel_one_layer"] for i in at.info)  # no induction head in 1 layer
    at.button(key="ih_btn_reset").click().run()
    assert_clean(at)
    assert any(cat["ih.default_note"][:12] in i.value for i in at.info)


def test_the_one_layer_control_is_trained_on_request():
    at = open_page("induction-heads", params=TINY | {"ih_layers": "2", "ih_steps": "100"})
    at.button(key="ih_btn_step").click().run()
    assert_clean(at)
    curves = next(c for c in charts(at) if "ih_curves_fig_" in c.proto.id)
    assert EN["ih.legend_control"] not in curves.proto.spec
    at.button(key="ih_btn_control").click().run()
    assert_clean(at)
    curves = next(c for c in charts(at) if "ih_curves_fig_" in c.proto.id)
    assert EN["ih.legend_control"] in curves.proto.spec
    assert not [b for b in at.button if b.key == "ih_btn_control"]
