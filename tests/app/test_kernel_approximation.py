"""The kernel-approximation page under AppTest: every control, odd URL values, both languages,
the Run button (kept result, busy server)."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from tests.app.conftest import assert_clean, charts, open_page
from ui import kernel_approximation as uk
from ui import live_run

PAGE = "kernel-approximation"


def chart(at, key: str) -> dict:
    """The Plotly figure (as JSON) of the chart with this key."""
    found = [c for c in charts(at) if c.proto.id.endswith(f"-{key}")]
    assert len(found) == 1, f"{key}: {len(found)} charts"
    return json.loads(found[0].proto.spec)


def rows(fig: dict, trace: int = 0) -> int:
    """Rows of a heatmap's z (a nested list, or a base64 typed array with a shape)."""
    z = fig["data"][trace]["z"]
    return int(z["shape"].split(",")[0]) if isinstance(z, dict) else len(z)


def values(a) -> np.ndarray:
    """A Plotly data array, plain list or base64 typed array, as float numpy."""
    if isinstance(a, dict):
        return np.frombuffer(base64.b64decode(a["bdata"]), dtype=a["dtype"]).astype(float)
    return np.asarray(a, dtype=float)


def title(at, key: str) -> str:
    return chart(at, key)["layout"]["title"]["text"]


def metric(at, label_start: str) -> str:
    found = [m.value for m in at.metric if m.label.startswith(label_start)]
    assert found, [m.label for m in at.metric]
    return found[0]


@pytest.mark.parametrize(
    ("lang", "heading"), [("en", "Attention as a kernel"), ("zh", "注意力是可以近似的核")]
)
def test_page_renders_in_both_languages(lang, heading):
    at = open_page(PAGE, lang=lang)
    assert_clean(at)
    assert heading in at.title[0].value
    keys = {c.proto.id.rsplit("-", 1)[-1] for c in charts(at)}
    assert {"ka_fig_rff_fit", "ka_fig_rff_error", "ka_fig_approx", "ka_fig_feature_error"} <= keys
    assert {"ka_fig_denominators", "ka_fig_causal", "ka_fig_tsai"} <= keys
    assert not at.error
    assert not at.warning
    # nothing measured yet: the cost section invites a run instead of measuring on page load
    assert len(at.info) == 1


def test_moving_m_changes_the_fit_and_its_error():
    at = open_page(PAGE, params={"ka_m": "4"})
    small = float(metric(at, "RMS gap"))
    assert "m = 4 " in title(at, "ka_fig_rff_fit")
    at.select_slider(key="ka_m").set_value(2048).run()
    assert_clean(at)
    assert "m = 2048 " in title(at, "ka_fig_rff_fit")
    assert float(metric(at, "RMS gap")) < small


def test_regression_controls_bandwidth_and_seed():
    at = open_page(PAGE)
    before = metric(at, "RMS gap")
    at.select_slider(key="ka_h").set_value(0.8).run()
    assert "h = 0.8" in title(at, "ka_fig_rff_fit")
    at.number_input(key="ka_seed").set_value(7).run()
    assert_clean(at)
    assert metric(at, "RMS gap") != before


@pytest.mark.parametrize("kind", ["positive_orthogonal", "positive_iid", "trigonometric"])
def test_every_feature_kind(kind):
    at = open_page(PAGE)
    at.radio(key="ka_kind").set_value(kind).run()
    assert_clean(at)
    ratio = float(metric(at, "Smallest denominator"))
    if kind != "trigonometric":
        assert ratio > 0


def test_trigonometric_features_at_small_m_break_the_denominator():
    at = open_page(
        PAGE, params={"ka_kind": "trigonometric", "ka_att_m": "2", "ka_sigma": "1.0", "ka_att_seed": "3"}
    )
    assert_clean(at)
    assert at.radio(key="ka_kind").value == "trigonometric"
    assert float(metric(at, "Smallest denominator")) < 0.1


def test_attention_inputs_and_approximation_controls():
    at = open_page(PAGE)
    fig = chart(at, "ka_fig_approx")
    assert rows(fig) == 16
    at.slider(key="ka_len").set_value(24).run()
    at.select_slider(key="ka_dk").set_value(4).run()
    at.select_slider(key="ka_sigma").set_value(1.0).run()
    at.number_input(key="ka_att_seed").set_value(5).run()
    assert_clean(at)
    assert rows(chart(at, "ka_fig_approx")) == 24
    err_small_m = float(metric(at, "Relative error of the weights"))
    at.select_slider(key="ka_att_m").set_value(2048).run()
    assert float(metric(at, "Relative error of the weights")) < err_small_m


@pytest.mark.parametrize("fmap", ["favor", "elu"])
def test_causal_prefix_sums_match_the_masked_form_on_screen(fmap):
    at = open_page(PAGE)
    at.radio(key="ka_causal_map").set_value(fmap).run()
    at.select_slider(key="ka_causal_m").set_value(8).run()
    assert_clean(at)
    assert float(metric(at, "max |prefix")) < 1e-10


def test_run_measures_marks_and_keeps_the_result():
    at = open_page(PAGE, params={"ka_cost_len": "512", "ka_cost_m": "64"})
    assert at.select_slider(key="ka_cost_len").value == 512
    at.button(key="ka_btn_cost").click()
    at.run()
    assert_clean(at)
    fig = chart(at, "ka_fig_cost_seconds")
    assert [tr["name"] for tr in fig["data"]] == ["exact softmax", "FAVOR+", "linear (elu + 1)"]
    mem = chart(at, "ka_fig_cost_peak_bytes")
    np.testing.assert_array_equal(values(mem["data"][0]["x"]), [128, 256, 512])
    exact_mib = values(mem["data"][0]["y"])
    assert exact_mib[-1] >= 512 * 512 * 4 / 2**20  # the (L, L) float32 scores, measured
    assert (values(mem["data"][2]["y"]) < exact_mib).all()
    assert any("m = 64" in c.value for c in at.caption)
    # moving another control keeps the last result on screen (no new measurement needed)
    at.select_slider(key="ka_cost_m").set_value(256).run()
    at.select_slider(key="ka_m").set_value(64).run()
    assert_clean(at)
    assert any("m = 64" in c.value for c in at.caption)
    chart(at, "ka_fig_cost_seconds")


def test_a_busy_server_refuses_a_second_measurement():
    """Another session's measurement holds the server's one cost slot: Run is refused at once."""
    with live_run.limiter().try_hold(live_run.COST) as got:
        assert got
        at = open_page(PAGE, params={"ka_cost_len": "256"})
        at.button(key="ka_btn_cost").click()
        at.run()
        assert_clean(at)
        assert any("Another user" in w.value for w in at.warning)
        assert "ka_cost_result" not in at.session_state  # nothing measured
    assert live_run.limiter().free(live_run.COST) == live_run.MAX_COST_MEASUREMENTS


@pytest.mark.parametrize(
    "params",
    [
        {"ka_m": "3", "ka_h": "abc", "ka_seed": "-5"},
        {"ka_len": "999", "ka_dk": "7", "ka_sigma": "nan", "ka_att_seed": "1e99"},
        {"ka_kind": "bogus", "ka_causal_map": "none", "ka_att_m": "0"},
        {"ka_cost_len": "16384", "ka_cost_m": "4096"},
        {"ka_kind": "三角函数（sin/cos）", "ka_causal_map": "elu"},
    ],
)
def test_odd_url_values_fall_back_without_a_traceback(params):
    at = open_page(PAGE, params=params)
    assert_clean(at)
    assert at.select_slider(key="ka_cost_len").value <= uk.MAX_COST_LENGTH
    assert chart(at, "ka_fig_approx")


def test_a_chinese_label_in_the_url_selects_its_option_in_english():
    at = open_page(PAGE, lang="en", params={"ka_kind": "三角函数（sin/cos）"})
    assert_clean(at)
    assert at.radio(key="ka_kind").value == "trigonometric"


def test_chinese_page_runs_the_measurement():
    at = open_page(PAGE, lang="zh", params={"ka_cost_len": "256"})
    at.button(key="ka_btn_cost").click()
    at.run()
    assert_clean(at)
    assert next(tr["name"] for tr in chart(at, "ka_fig_cost_seconds")["data"]) == "精确 softmax"


# ----------------------------------------------------------------------------------------------
# issue 22.6: the page's claims are the computation on screen
# ----------------------------------------------------------------------------------------------


def test_the_rms_gap_metric_is_the_charts_median_at_m():
    """The metric sat at 0.262 beside a chart point near 0.4: now it is the chart's own point, the
    median of the draws the caption and the legend name, recomputed here one draw at a time."""
    from core.data import post_data
    from core.random_features import rff_nw_predict

    at = open_page(PAGE, lang="en", params={"ka_m": "16", "ka_seed": "3"}, folded=True)
    assert_clean(at)
    fig = chart(at, "ka_fig_rff_error")
    (fit_line,) = [d for d in fig["data"] if d["name"] == f"fit error (median of {uk.RFF_SEEDS} draws)"]
    at_m = list(values(fit_line["x"])).index(16.0)
    shown = float(metric(at, f"RMS gap to the exact fit (median of {uk.RFF_SEEDS} draws)"))
    d = post_data()
    xq = np.linspace(-3, 3, uk.N_QUERY)
    draws = [rff_nw_predict(d.x, d.y, xq, 0.3, 16, seed=3 + s).rms_error for s in range(uk.RFF_SEEDS)]
    assert shown == pytest.approx(float(np.median(draws)), rel=2e-3)  # the metric shows 3 digits
    assert values(fit_line["y"])[at_m] == pytest.approx(float(np.median(draws)), rel=1e-9)
    captions = "\n".join(c.value for c in at.caption)
    assert f"median of {uk.RFF_SEEDS} independent draws (seeds 3–{3 + uk.RFF_SEEDS - 1}" in captions
    assert f"has an RMS gap of {draws[0]:.3g}." in captions  # the draw on the left, said apart
    assert "averaged" not in captions


@pytest.mark.parametrize(("sigma", "d_k"), [("0.25", "8"), ("0.5", "16")])
def test_the_trigonometric_sentence_is_the_comparison_on_screen(sigma, d_k):
    """At σ = 0.25, D = 8 trigonometric features are better at every m: the page used to say they
    are "far worse at small m" for every σ. Its sentence now comes from the comparison shown."""
    from core.lessons import kernel_approximation as ka

    at = open_page(PAGE, params={"ka_sigma": sigma, "ka_dk": d_k})
    assert_clean(at)
    inp = ka.attention_inputs(16, int(d_k), float(sigma), 0, uk.D_V)
    cmp = ka.compare_features(inp.q, inp.k, uk.FEATURE_M_GRID, ka.FEATURE_KINDS, uk.FEATURE_SEEDS, 0)
    ratio = cmp.ratio("trigonometric", ("positive_orthogonal", "positive_iid"))
    (sentence,) = [m.value for m in at.markdown if m.value.startswith("**Trigonometric features against")]
    assert f"(σ = {sigma}, D = {d_k})" in sentence
    for i, m in enumerate(cmp.m):
        worse, better = ratio[i] > 1 + ka.SAME_RTOL, ratio[i] < 1 / (1 + ka.SAME_RTOL)
        word = "worse" if worse else "better" if better else "about the same"
        # the m falls in a run introduced by its own word: "worse at m = 2–64 (...)"
        runs = [part for part in sentence.split(": ", 1)[1].split("; ") if part.startswith(word)]
        assert any(_in_run(int(m), part) for part in runs), (m, word, sentence)
    if sigma == "0.25":
        assert "worse" not in sentence.split(": ", 1)[1]


def _in_run(m: int, part: str) -> bool:
    """Whether ``m`` lies in the run "… at m = a–b (…)" or "… at m = a (…)"."""
    span = part.split("m = ", 1)[1].split(" ", 1)[0].rstrip(".")
    low, _, high = span.partition("–")
    return int(low) <= m <= int(high or low)


def test_the_polynomial_sentence_says_exp_of_twice_the_score():
    from core.lessons import kernel_approximation as ka

    at = open_page(PAGE, params={"ka_sigma": "0.5", "ka_dk": "16"})
    inp = ka.attention_inputs(16, 16, 0.5, 0, uk.D_V)
    match = ka.polynomial_match(inp.q, inp.k)
    (look,) = [c.value for c in at.caption if "(1 + s)²" in c.value]
    assert "exp(2s)" in look
    assert f"|s| ≤ {match.radius:.2f}" in look
    assert f"{match.share:.0%}" in look


def test_comparison_runs_group_consecutive_m():
    from core.lessons import kernel_approximation as ka

    cmp = ka.FeatureComparison(
        m=np.array([2.0, 4.0, 8.0, 16.0]),
        kinds=("trig", "pos"),
        error=np.array([[3.0, 2.0, 1.0, 0.5], [1.0, 1.0, 1.0, 1.0]]),
        kernel_mse=np.zeros((2, 4)),
        negative_share=np.zeros((2, 4)),
        near_zero_share=np.zeros((2, 4)),
    )
    assert uk.comparison_runs(cmp, "trig", ("pos",)) == [
        uk.OutcomeRun("worse", "2–4", "×2.00–3.00"),
        uk.OutcomeRun("same", "8", "×1.00"),
        uk.OutcomeRun("better", "16", "×0.50"),
    ]
