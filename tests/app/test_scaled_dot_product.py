"""The scaled-dot-product page in AppTest: every control, both languages, odd URL values."""

from __future__ import annotations

import json

import pytest

from core.lessons.scaled_dot_product import (
    DK_OPTIONS,
    apply_editor_edits,
    build_mask,
    default_custom_mask,
    dk_experiment,
)
from tests.app.conftest import DOUBLED_PUNCTUATION, assert_clean, charts, open_page, page_texts
from tests.app.live import live_slider
from ui.i18n import load_catalogue

PAGE = "scaled-dot-product"
EN = load_catalogue("en")


def _opt(kind: str, option: str) -> str:
    """How a bound radio writes option ``option`` into the URL: its English label."""
    return EN[f"sdp.{kind}_{option}"]


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _charts(at) -> int:
    return len(charts(at))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_renders_in_both_languages(lang):
    at = open_page(PAGE, lang=lang)
    assert_clean(at)
    title = at.title[0].value
    assert ("Scaled dot-product" in title) if lang == "en" else ("缩放点积注意力" in title)
    assert _charts(at) >= 9  # Q/K/V, the pipeline (4 panels), output, d_k (4 panels), 5 in the folds
    m = _metrics(at)
    key = "Largest difference" if lang == "en" else "最大差异"
    assert float(m[key]) < 1e-10  # ours vs torch's built-in on the page's inputs
    # issue 22.8: no doubled punctuation ("。，") anywhere, the sparsemax fold's composed text included
    assert [s for s in page_texts(at) if DOUBLED_PUNCTUATION.search(s)] == []


def test_scale_and_dk_controls_change_the_numbers():
    at = open_page(PAGE, params={"sdp_dk": "512"})
    assert_clean(at)
    scaled = float(_metrics(at)["Mean largest weight"])
    assert float(_metrics(at)["Scale factor 1/τ"]) == pytest.approx(1 / 512**0.5, rel=1e-3)
    at.radio(key="sdp_scale").set_value("one").run()
    assert_clean(at)
    unscaled = float(_metrics(at)["Mean largest weight"])
    assert unscaled > 0.8 > 0.5 > scaled  # the page's claim: no scale -> weights on one position
    at.radio(key="sdp_scale").set_value("custom").run()
    live_slider(at, "sdp_temp").set_value(64.0).run()
    assert_clean(at)
    assert float(_metrics(at)["Scale factor 1/τ"]) == pytest.approx(1 / 64, rel=1e-3)
    live_slider(at, "sdp_dk").set_value(4).run()
    assert_clean(at)


@pytest.mark.parametrize("source", ["random", "sentence_en", "sentence_zh"])
def test_inputs_and_masks(source):
    at = open_page(PAGE, params={"sdp_input": _opt("input", source), "sdp_mask": _opt("mask", "causal")})
    assert_clean(at)
    assert at.radio(key="sdp_input").value == source
    assert at.radio(key="sdp_mask").value == "causal"
    assert _metrics(at)["Queries with no allowed key"] == "0"
    if source == "random":
        at.slider(key="sdp_len").set_value(12).run()
        at.number_input(key="sdp_seed").set_value(7).run()
        assert_clean(at)
    at.radio(key="sdp_mask").set_value("padding").run()
    at.slider(key="sdp_pad").set_value(3).run()
    assert_clean(at)
    at.radio(key="sdp_mask").set_value("none").run()
    assert_clean(at)


def test_padding_every_key_gives_naive_nan_and_safe_zero():
    at = open_page(PAGE, params={"sdp_mask": _opt("mask", "padding"), "sdp_pad": "8", "sdp_len": "8"})
    assert_clean(at)
    m = _metrics(at)
    assert m["Queries with no allowed key"] == "8"
    assert m["NaN rows, additive −∞"] == "8"
    assert m["NaN rows, safe version"] == "0"


def test_custom_mask_from_a_chinese_url():
    zh = load_catalogue("zh")
    params = {"sdp_mask": zh["sdp.mask_custom"], "sdp_cmask": "0-3-7-f-1f-3f-7f-ff"}
    at = open_page(PAGE, lang="zh", params=params)
    assert_clean(at)
    assert at.radio(key="sdp_mask").value == "custom"
    assert _metrics(at)["NaN 行数，加 −∞"] == "1"


def test_custom_mask_from_url_and_the_empty_row_button():
    # causal 8x8 with query 0 fully masked, written in the URL
    at = open_page(PAGE, params={"sdp_mask": _opt("mask", "custom"), "sdp_cmask": "0-3-7-f-1f-3f-7f-ff"})
    assert_clean(at)
    assert not at.warning
    m = _metrics(at)
    assert m["Queries with no allowed key"] == "1"
    assert m["NaN rows, additive −∞"] == "1"
    assert m["NaN rows, safe version"] == "0"
    # back to no mask, then the button builds the same trap
    at.radio(key="sdp_mask").set_value("none").run()
    assert _metrics(at)["NaN rows, additive −∞"] == "0"
    at.button(key="sdp_btn_empty_row").click().run()
    assert_clean(at)
    assert at.radio(key="sdp_mask").value == "custom"
    assert _metrics(at)["NaN rows, additive −∞"] == "1"
    # editing the text control changes the mask
    at.text_input(key="sdp_cmask").set_value("ff-ff-ff-ff-ff-ff-ff-ff").run()
    assert_clean(at)
    assert _metrics(at)["Queries with no allowed key"] == "0"


@pytest.mark.parametrize("bad", ["zzz", "1-3", "1-3-7-f-1f-3f-7f-1ff", "1-3-7-f-1f-3f-7f-ff-"])
def test_tampered_mask_text_warns_and_falls_back(bad):
    at = open_page(PAGE, params={"sdp_mask": _opt("mask", "custom"), "sdp_cmask": bad})
    assert_clean(at)
    assert at.warning, "a tampered mask must show a warning"
    assert "not a valid" in at.warning[0].value
    assert _metrics(at)["Queries with no allowed key"] == "0"  # the causal fallback


@pytest.mark.parametrize(
    "params",
    [
        {"sdp_dk": "13", "sdp_len": "999", "sdp_input": "evil", "sdp_seed": "NaN"},
        {"sdp_dk": "100000", "sdp_len": "-4", "sdp_scale": "bogus", "sdp_temp": "-1"},
        {"sdp_mask": "all", "sdp_pad": "1e9", "sdp_nw_h": "0", "sdp_nw_x0": "99"},
        {"sdp_mask": "padding", "sdp_pad": "-3", "sdp_scale": EN["sdp.scale_custom"], "sdp_temp": "1e9"},
    ],
)
def test_odd_url_values_never_break_the_page(params):
    at = open_page(PAGE, params=params)
    assert_clean(at)
    assert _charts(at) >= 9  # Q/K/V, the pipeline (4 panels), output, d_k (4 panels), 5 in the folds


def test_troubleshooting_buttons_set_the_controls():
    at = open_page(PAGE)
    at.button(key="sdp_btn_loss_reproduce").click().run()
    assert at.radio(key="sdp_scale").value == "one"
    assert live_slider(at, "sdp_dk").value == 512
    at.button(key="sdp_btn_loss_fix").click().run()
    assert at.radio(key="sdp_scale").value == "sqrt_dk"
    at.button(key="sdp_btn_peak_reproduce").click().run()
    assert_clean(at)
    assert at.radio(key="sdp_scale").value == "custom"
    assert float(_metrics(at)["Mean largest weight"]) > 0.9
    at.button(key="sdp_btn_peak_fix").click().run()
    assert float(_metrics(at)["Mean largest weight"]) < 0.9
    at.button(key="sdp_btn_nan_reproduce").click().run()
    assert _metrics(at)["NaN rows, additive −∞"] == "1"
    at.button(key="sdp_btn_nan_fix").click().run()
    assert_clean(at)
    assert _metrics(at)["NaN rows, additive −∞"] == "0"


def test_sparsemax_section_controls():
    at = open_page(PAGE)
    at.select_slider(key="sdp_nw_h").set_value(0.05).run()
    at.slider(key="sdp_nw_x0").set_value(-2.0).run()
    assert_clean(at)
    m = _metrics(at)
    soft_zeros = 200 - int(m["Non-zero weights, softmax"].split("/")[0])
    assert soft_zeros > 0  # at h = 0.05 far samples underflow...
    captions = " ".join(c.value for c in at.caption)
    # ...and every softmax zero is an underflow, never structural
    assert f"Softmax zeros here: {soft_zeros}, of which {soft_zeros} are exp underflows" in captions
    nonzero_sparse = int(m["Non-zero weights, sparsemax"].split("/")[0])
    assert 1 <= nonzero_sparse < 200
    assert any("up to" in md.value and "e-1" in md.value for md in at.markdown)


def test_mask_editor_helpers():
    labels = [str(i) for i in range(4)]
    assert default_custom_mask(4) == "1-3-7-f"
    # untick key 0 of query 2, tick key 3 of query 0
    text = apply_editor_edits("1-3-7-f", 4, {2: {"0": False}, 0: {"3": True}}, labels)
    assert text == "9-3-6-f"
    mask = build_mask("custom", 4, 0, text)
    assert mask.tolist()[2] == [False, True, True, False]
    # an invalid starting text starts from the causal mask; unknown rows and columns are ignored
    assert apply_editor_edits("garbage", 4, {9: {"0": True}, 1: {"x": True}}, labels) == "1-3-7-f"
    with pytest.raises(ValueError, match="rows"):
        build_mask("custom", 4, 0, "1-3")


def _specs(at) -> dict[str, str]:
    """Every chart's Plotly spec by its element id (the id holds the key, e.g. ``sdp_fig_raw``)."""
    return {c.proto.id.rsplit("-", 1)[-1]: c.proto.spec for c in charts(at)}


def _texts_of(spec: str) -> str:
    """The readable text of a Plotly spec (JSON escapes undone)."""
    return json.dumps(json.loads(spec), ensure_ascii=False)


def test_the_kernel_regression_fragment_moves_only_its_own_figure():
    at = open_page(PAGE)
    before = _specs(at)
    assert "sdp_fig_nw_normalizers" in before
    at.slider(key="sdp_nw_x0").set_value(-1.0).run()
    assert_clean(at)
    after = _specs(at)
    assert after.keys() == before.keys()
    changed = {k for k in before if before[k] != after[k]}
    assert changed == {"sdp_fig_nw_normalizers"}  # every other section's chart is left as it was


def test_page_wide_controls_update_every_section_and_a_url_reproduces_the_view():
    params = {"sdp_dk": "64", "sdp_scale": "one", "sdp_mask": "causal", "sdp_seed": "3", "sdp_len": "6"}
    at = open_page(PAGE, params=params)
    assert_clean(at)
    assert at.radio(key="sdp_scale").value == "one"
    assert at.radio(key="sdp_mask").value == "causal"
    view = _specs(at)
    m = _metrics(at)
    assert float(m["Temperature τ"]) == 1.0
    # the same view built by moving the controls by hand
    by_hand = open_page(PAGE)
    live_slider(by_hand, "sdp_dk").set_value(64).run()
    by_hand.radio(key="sdp_scale").set_value("one").run()
    by_hand.radio(key="sdp_mask").set_value("causal").run()
    by_hand.number_input(key="sdp_seed").set_value(3).run()
    by_hand.slider(key="sdp_len").set_value(6).run()
    assert_clean(by_hand)
    assert _specs(by_hand) == view
    assert _metrics(by_hand)["Mean largest weight"] == m["Mean largest weight"]
    # a page-wide control changes the pipeline, Q/K/V and the troubleshooting weights
    by_hand.radio(key="sdp_mask").set_value("none").run()
    changed = {k for k, v in _specs(by_hand).items() if view[k] != v}
    assert {"sdp_fig_pipeline", "sdp_fig_trouble_weights"} <= changed
    assert "sdp_fig_nw_normalizers" not in changed


def test_qkv_heatmaps_and_one_scale_convention():
    at = open_page(PAGE, params={"sdp_dk": "16"})
    spec = _texts_of(_specs(at)["sdp_fig_qkv"])
    assert "Queries Q (L × 16)" in spec
    assert "Values V (S × 4)" in spec
    scaled = _texts_of(_specs(at)["sdp_fig_pipeline"])
    assert "÷ τ (τ = 4, × 0.25)" in scaled  # the heading's convention: scores ÷ τ, τ = √d_k
    assert any(h.value.startswith("The pipeline: QKᵀ → ÷ τ") for h in at.header)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_language_switch_keeps_the_radio_selections(lang):
    other = "zh" if lang == "en" else "en"
    at = open_page(
        PAGE, lang=lang, params={"sdp_scale": "custom", "sdp_mask": "causal", "sdp_input": "sentence_zh"}
    )
    assert_clean(at)
    at.session_state["lang"] = other  # what clicking the sidebar's language switch does
    at.run()
    assert_clean(at)
    assert at.radio(key="sdp_scale").value == "custom"
    assert at.radio(key="sdp_mask").value == "causal"
    assert at.radio(key="sdp_input").value == "sentence_zh"


def _dk_markers(at) -> dict[str, list[float]]:
    """Panel axis -> the x of its vertical marker lines, on the d_k experiment's chart."""
    out: dict[str, list[float]] = {}
    for chart in charts(at):
        if chart.proto.id.split("-", 2)[-1] == "sdp_fig_dk":
            for s in json.loads(chart.proto.spec)["layout"].get("shapes", []):
                if s["x0"] == s["x1"] and s.get("yref", "").endswith("domain"):
                    out.setdefault(s["xref"], []).append(s["x0"])
    return out


def test_dk_marker_follows_the_slider_on_the_cached_experiment_chart():
    """d_k moves only the marker drawn over the experiment's chart (cached per seed): every step
    shows it at the new d_k, once on each of its four panels, and the handout's copy has it too."""
    from ui.handout import STATE_KEY

    def figures_shown() -> dict[str, object]:  # chart key -> the figure object drawn (under its marks)
        items = at.session_state[STATE_KEY].items.values()
        return {e.key: e.obj[0] for e in items if e.kind == "figure" and e.key.startswith("sdp_fig_dk")}

    panels = ("x", "x2", "x3", "x4")
    at = open_page(PAGE, params={"sdp_dk": "16"})
    assert_clean(at)
    assert _dk_markers(at) == {axis: [16] for axis in panels}
    before = figures_shown()
    live_slider(at, "sdp_dk").set_value(128).run()
    assert_clean(at)
    assert _dk_markers(at) == {axis: [128] for axis in panels}
    after = figures_shown()
    assert list(after) == ["sdp_fig_dk"]
    assert after["sdp_fig_dk"] is before["sdp_fig_dk"]  # the same figure: not rebuilt
    items = {item.key: item for item in at.session_state[STATE_KEY].snapshot()}
    marks = [(s.xref, s.x0) for s in items["sdp_fig_dk"].figure.layout.shapes if s.x0 == s.x1]
    assert sorted(marks) == [(axis, 128) for axis in panels]


def test_the_dk_claim_and_the_troubleshooting_row_quote_the_experiment_at_the_current_dk():
    """The claim under the d_k curves and the "loss" row of the troubleshooting table quote the d_k
    experiment at the slider's d_k (one table of numbers feeds both: each field in its place)."""
    at = open_page(PAGE, params={"sdp_dk": "64", "sdp_seed": "3"})
    assert_clean(at)
    e = dk_experiment(list(DK_OPTIONS), length=16, n_trials=32, seed=3)
    i = list(DK_OPTIONS).index(64)
    texts = page_texts(at)
    claim = EN["sdp.dk_claim"].format(
        dk=64,
        var=f"{e.var_measured[i]:.1f}",
        max_u=f"{e.max_weight_unscaled[i]:.2f}",
        max_s=f"{e.max_weight_scaled[i]:.2f}",
        sat_u=f"{100 * e.saturated_unscaled[i]:.0f}",
        grad_u=f"{e.grad_scores_unscaled[i]:.2g}",
        grad_s=f"{e.grad_scores_scaled[i]:.2g}",
        cv_u=f"{e.grad_query_cv_unscaled[i]:.2f}",
        cv_s=f"{e.grad_query_cv_scaled[i]:.2f}",
    )
    assert claim in texts
    loss = EN["sdp.trouble_now_loss"].format(
        dk=64,
        cv_u=f"{e.grad_query_cv_unscaled[i]:.2f}",
        cv_s=f"{e.grad_query_cv_scaled[i]:.2f}",
        grad_u=f"{e.grad_scores_unscaled[i]:.2g}",
    )
    assert loss in texts
