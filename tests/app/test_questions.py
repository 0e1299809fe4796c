"""Predict-then-see questions (issue 10.3) in AppTest, page by page.

Every question is answered wrong, then right, through its widget and its Check button, and the
verdict is read from the question's own box. The right answer is computed *here*, independently
of ``ui.questions``: from ``core`` on the page's current controls, or from the data the page
rendered (a chart's numbers, a metric, a table). One question per page depends on a control: after
the control moves, the verdict already shown is re-checked (it turns wrong) and the new right
answer is accepted. Presentation mode with ``?questions=false`` hides every question.
"""

from __future__ import annotations

import base64
import json
import math
from urllib.parse import parse_qsl

import numpy as np
import pytest
from streamlit.testing.v1.element_tree import Block, Widget

from core import attention as attn
from core import in_context as core_ic
from core import kernel_attention as bridge
from core import training as core_training
from core.data import make_data
from core.lessons import kernel_approximation as ka
from core.lessons import multi_head as mha
from core.lessons import scaled_dot_product as aa
from core.lessons import training as verdicts
from core.nadaraya_watson import loo_cv_errors, nw_weights, select_bandwidth
from tests.app.conftest import assert_clean, charts, open_page, show_answers
from tests.app.live import live_slider
from ui import in_context as ui_ic
from ui import kernel_approximation as uk
from ui import training as ui_tr
from ui.controls import OPTIONS_SEEN
from ui.i18n import load_catalogue
from ui.kernel_regression import bandwidth_grid

EN = load_catalogue("en")
TINY_TRAINING = {"tr_epochs": "2", "tr_n_train": "128", "tr_seq_len": "8", "tr_batch": "32"}


# ----------------------------------------------------------------------------------------------
# helpers: find a question's box, answer it, read its verdict
# ----------------------------------------------------------------------------------------------


def _widget(node, key: str) -> Widget | None:
    if isinstance(node, Widget) and node.key == key:
        return node
    if isinstance(node, Block):
        for child in node.children.values():
            found = _widget(child, key)
            if found is not None:
                return found
    return None


def _box(at, qid: str) -> Block:
    """The innermost block holding question ``qid``'s answer widget: its bordered box."""
    key = f"q_{qid}"

    def walk(node) -> Block | None:
        if isinstance(node, Block):
            for child in node.children.values():
                if isinstance(child, Widget) and child.key == key:
                    return node
                found = walk(child)
                if found is not None:
                    return found
        return None

    box = walk(at._tree)
    assert box is not None, f"question {qid!r} is not on the page"
    return box


def _alerts(node) -> list[str]:
    kinds = []
    if getattr(node, "type", None) in ("success", "error"):
        kinds.append(node.type)
    if isinstance(node, Block):
        for child in node.children.values():
            kinds.extend(_alerts(child))
    return kinds


def verdict(at, qid: str) -> str | None:
    """``"right"``, ``"wrong"`` or None (nothing checked) in question ``qid``'s box."""
    kinds = _alerts(_box(at, qid))
    assert len(kinds) <= 1, kinds
    return {"success": "right", "error": "wrong"}.get(kinds[0]) if kinds else None


def answer(at, qid: str, value) -> str | None:
    """Pick or type ``value`` (the browser reruns), press Check; return the verdict shown."""
    key = f"q_{qid}"
    w = _widget(at._tree, key)
    assert w is not None, f"question {qid!r} is not on the page"
    (at.radio(key=key) if w.type == "radio" else at.number_input(key=key)).set_value(value).run()
    assert_clean(at)
    assert verdict(at, qid) is None  # a new response hides any earlier verdict until Check
    at.button(key=f"q_{qid}_check").click().run()
    assert_clean(at)
    return verdict(at, qid)


def choices(at, qid: str) -> tuple:
    return at.session_state[OPTIONS_SEEN][f"q_{qid}"]


def check_choice(at, qid: str, right: str) -> None:
    """A wrong choice is judged wrong, the right one right."""
    ids = choices(at, qid)
    assert right in ids
    wrong = next(c for c in ids if c != right)
    assert answer(at, qid, wrong) == "wrong"
    assert answer(at, qid, right) == "right"


def check_number(at, qid: str, right: float, wrong: float) -> None:
    assert answer(at, qid, wrong) == "wrong"
    assert answer(at, qid, right) == "right"


def assert_stale_verdict_rechecked(at, qid: str) -> None:
    """After a control moved: the response checked before is judged again, now wrong, and says so."""
    assert verdict(at, qid) == "wrong"
    assert any(EN["q.rechecked"] in c.value for c in at.caption)


def _array(value) -> np.ndarray:
    """A trace array as Plotly's JSON holds it: a list, or base64 with a dtype."""
    if isinstance(value, dict):
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).astype(float)
    return np.asarray(value, dtype=float)


def chart(at, key: str) -> dict:
    for c in charts(at):
        if c.proto.id.rsplit("-", 1)[-1] == key:
            return json.loads(c.proto.spec)
    raise AssertionError(f"no chart {key!r}")


def _chart_keys(at) -> set[str]:
    return {c.proto.id.rsplit("-", 1)[-1] for c in charts(at)}


def nearest(levels: dict[str, float], value: float) -> str:
    return min(levels, key=lambda k: abs(levels[k] - value))


# ----------------------------------------------------------------------------------------------
# scaled dot-product
# ----------------------------------------------------------------------------------------------


def _sdp_now(at):
    """The page's inputs, mask and scale rebuilt from its controls with core."""
    s = at.session_state
    source, dk, mode, mask_mode = s["sdp_input"], int(s["sdp_dk"]), s["sdp_scale"], s["sdp_mask"]
    length = int(s["sdp_len"]) if source == "random" else 8
    temperature = float(s["sdp_temp"]) if mode == "custom" else 1.0
    inp = aa.make_inputs(source, length, dk, int(s["sdp_seed"]), 0)
    mask = aa.build_mask(mask_mode, len(inp.labels), 0, None)
    return inp, mask, attn.scale_for(mode, dk, temperature)


def _sdp_peak(at) -> str:
    e = aa.dk_experiment(list(aa.DK_OPTIONS), length=16, n_trials=32, seed=int(at.session_state["sdp_seed"]))
    peak = float(e.max_weight_unscaled[list(e.d_k).index(int(at.session_state["sdp_dk"]))])
    return nearest({"one": 1.0, "uniform": 1 / 16}, peak)


def test_scaled_dot_product_questions():
    at = open_page("scaled-dot-product", answered=False)
    assert_clean(at)
    inp, mask, scale = _sdp_now(at)
    assert mask is None  # default: no mask, so the questions probe the "make one" button's mask
    L = len(inp.labels)
    probe = aa.build_mask("custom", L, 0, "0" + aa.default_custom_mask(L)[1:])
    naive = aa.naive_weights(inp, probe, scale)[0]
    safe = aa.pipeline_steps(inp, probe, scale).weights[0]
    assert np.isnan(naive).all()
    assert (safe == 0).all()
    check_choice(at, "sdp_empty_naive", "nan")
    check_choice(at, "sdp_empty_safe", "zeros")
    soft = next(r for r in aa.normalizer_weights(inp, mask, scale) if r.name == "softmax")
    check_choice(at, "sdp_softmax_zero", "yes" if soft.zeros else "no")

    expected = _sdp_peak(at)
    check_choice(at, "sdp_dk_peak", expected)
    live_slider(at, "sdp_dk").set_value(4).run()  # the control moves: the answer follows
    assert_clean(at)
    changed = _sdp_peak(at)
    assert changed != expected
    assert_stale_verdict_rechecked(at, "sdp_dk_peak")
    assert answer(at, "sdp_dk_peak", changed) == "right"


def test_scaled_dot_product_softmax_zero_follows_the_temperature():
    params = {"sdp_scale": "custom", "sdp_temp": "0.05", "sdp_dk": "512"}
    at = open_page("scaled-dot-product", params=params, answered=False)
    assert_clean(at)
    soft = next(r for r in aa.normalizer_weights(*_sdp_now(at)) if r.name == "softmax")
    assert soft.zeros > 0  # float underflow at a tiny temperature
    check_choice(at, "sdp_softmax_zero", "yes")


# ----------------------------------------------------------------------------------------------
# kernels -> attention
# ----------------------------------------------------------------------------------------------


def _k2a_table_h(at) -> tuple[float, float]:
    """(h with leave-one-out, h without) from the page's table of the learned bandwidths."""
    for table in at.table:
        frame = table.value
        if EN["k2a.col_h"] in frame.columns:
            h = [float(v) for v in frame[EN["k2a.col_h"]]]
            return h[0], h[1]
    raise AssertionError("no table of learned bandwidths")


def test_kernels_to_attention_questions():
    at = open_page("kernels-to-attention", answered=False)
    assert_clean(at)
    s = at.session_state
    q = bridge.random_vectors(
        8, int(s["k2a_dim"]), norm_spread=float(s["k2a_spread"]), seed=int(s["k2a_seed"])
    )
    k = bridge.random_vectors(
        8, int(s["k2a_dim"]), norm_spread=float(s["k2a_spread"]), seed=int(s["k2a_seed"]) + 1
    )
    same = bridge.dot_vs_gaussian(q, k, float(s["k2a_tau"])).max_abs_diff < 1e-6
    check_choice(at, "k2a_dot_equal", "yes" if same else "no")
    show_answers(at, "k2a_no_loo")  # the table the answer is read from
    h_loo, h_no = _k2a_table_h(at)
    check_choice(at, "k2a_no_loo", "smaller" if h_no < h_loo else "larger")

    h = float(s["k2a_h"])
    check_number(at, "k2a_tau", h * h, 2 * h * h + 0.1)
    live_slider(at, "k2a_h").set_value(0.5).run()
    assert_clean(at)
    assert_stale_verdict_rechecked(at, "k2a_tau")
    assert answer(at, "k2a_tau", 0.25) == "right"


# ----------------------------------------------------------------------------------------------
# multi-head
# ----------------------------------------------------------------------------------------------


def _mh_spec(at) -> mha.LayerSpec:
    s = at.session_state
    kind = s["mh_input"]
    return mha.LayerSpec(
        int(s["mh_d"]),
        int(s["mh_heads"]),
        None,
        None,
        int(s["mh_seed"]),
        kind,
        int(s["mh_len"]) if kind == "random" else 10,
        "en",
        s["mh_pe"],
        s["mh_mask"],
    )


def _mh_perm(at) -> str:
    spec = _mh_spec(at)
    diff = mha.permutation_view(spec, at.session_state["mh_perm"]).map_diff[(spec.pe_kind, spec.mask_kind)]
    return "yes" if diff < 1e-6 else "no"


def test_multi_head_questions():
    at = open_page("multi-head", answered=False)
    assert_clean(at)
    spec = _mh_spec(at)
    view = mha.head_view(spec)
    H = spec.n_heads
    sharpest = int(np.argmin(view.normalized_entropy)) + 1
    check_number(at, "mh_sharpest", sharpest, sharpest % H + 1)
    demo = mha.contiguity(view.heads)
    check_choice(at, "mh_view_error", "no" if demo.view_error is None else "yes")

    expected = _mh_perm(at)
    assert expected == "yes"  # no positions, no mask: shuffling only moves rows and columns
    check_choice(at, "mh_perm_moves", expected)
    at.radio(key="mh_pe").set_value("sinusoidal").run()
    assert_clean(at)
    assert _mh_perm(at) == "no"
    assert_stale_verdict_rechecked(at, "mh_perm_moves")
    assert answer(at, "mh_perm_moves", "no") == "right"


def test_multi_head_view_works_with_one_head():
    at = open_page("multi-head", params={"mh_heads": "1"}, answered=False)
    assert_clean(at)
    assert mha.contiguity(mha.head_view(_mh_spec(at)).heads).view_error is None
    check_choice(at, "mh_view_error", "no")


# ----------------------------------------------------------------------------------------------
# kernel approximation
# ----------------------------------------------------------------------------------------------


def _ka_negative(at) -> str:
    s = at.session_state
    inp = ka.attention_inputs(
        int(s["ka_len"]), int(s["ka_dk"]), float(s["ka_sigma"]), int(s["ka_att_seed"]), uk.D_V
    )
    r = ka.approximate_attention(inp.q, inp.k, inp.v, int(s["ka_att_m"]), s["ka_kind"], int(s["ka_att_seed"]))
    return "yes" if r.approx.min() < 0 else "no"


def test_kernel_approximation_questions():
    at = open_page("kernel-approximation", answered=False)
    assert_clean(at)
    show_answers(at, "ka_quadruple_m", "ka_best_features")  # the numbers the answers are read from
    slope = float(next(m.value for m in at.metric if m.label == EN["ka.metric_slope"]))
    check_choice(at, "ka_quadruple_m", nearest({"halves": -0.5, "quarters": -1.0, "same": 0.0}, slope))
    traces = chart(at, "ka_fig_feature_error")["data"]
    last = {
        kind: _array(tr["y"])[-1]
        for kind in ka.FEATURE_KINDS
        for tr in traces
        if tr["name"] == EN[f"ka.kind_{kind}"]
    }
    check_choice(at, "ka_best_features", min(last, key=last.get))

    expected = _ka_negative(at)
    assert expected == "no"  # positive features: every weight is positive
    check_choice(at, "ka_negative", expected)
    at.radio(key="ka_kind").set_value("trigonometric").run()
    at.select_slider(key="ka_att_m").set_value(8).run()
    assert_clean(at)
    assert _ka_negative(at) == "yes"
    assert_stale_verdict_rechecked(at, "ka_negative")
    assert answer(at, "ka_negative", "yes") == "right"


# ----------------------------------------------------------------------------------------------
# kernel regression
# ----------------------------------------------------------------------------------------------


def _kr_data(at):
    s = at.session_state
    return make_data(
        n=int(s["kr_n"]), noise=float(s["kr_noise"]), seed=int(s["kr_seed"]), target=s["kr_target"]
    )


def _kr_cv(at) -> str:
    d, kernel = _kr_data(at), at.session_state["kr_kernel"]
    cv = loo_cv_errors(d.x, d.y, kernel=kernel, bandwidths=np.asarray(bandwidth_grid(1.0)))
    h_star = select_bandwidth(d.x, d.y, kernel=kernel)
    cv_star = float(loo_cv_errors(d.x, d.y, kernel=kernel, bandwidths=np.array([h_star]))[0])
    return "undefined" if math.isnan(cv[0]) else "rises" if cv[0] > cv_star else "falls"


def _kr_row(at) -> int:
    """The matrix row nearest to x*, from the rows the page's matrix figure drew."""
    rows = _array(chart(at, "kr_fig_matrix")["data"][0]["y"])
    return int(np.argmin(np.abs(rows - float(at.session_state["kr_xq"]))))


def test_kernel_regression_questions():
    at = open_page("kernel-regression", answered=False)
    assert_clean(at)
    expected = _kr_cv(at)
    assert expected == "rises"  # Gaussian on the post's data: CV has its minimum inside the grid
    check_choice(at, "kr_cv_small_h", expected)
    d, s = _kr_data(at), at.session_state
    w = nw_weights(d.x, np.array([float(s["kr_xq"])]), kernel=s["kr_kernel"], bandwidth=float(s["kr_h"]))[0]
    active = int(np.count_nonzero(w > 1e-3 * w.max()))
    check_number(at, "kr_active", active, min(d.x.size, 2 * active + 10))

    row = _kr_row(at)
    check_number(at, "kr_row", row, (row + 10) % 60)
    live_slider(at, "kr_xq").set_value(-1.5).run()
    assert_clean(at)
    moved = _kr_row(at)
    assert moved != row
    assert_stale_verdict_rechecked(at, "kr_row")
    assert answer(at, "kr_row", moved) == "right"
    # a kernel with compact support: CV is undefined at the smallest h
    at.selectbox(key="kr_kernel").set_value("uniform").run()
    assert_clean(at)
    assert _kr_cv(at) == "undefined"
    assert verdict(at, "kr_cv_small_h") == "wrong"
    assert answer(at, "kr_cv_small_h", "undefined") == "right"


# ----------------------------------------------------------------------------------------------
# training
# ----------------------------------------------------------------------------------------------


def _tr_query0(at) -> str:
    config = ui_tr.make_config({name: at.session_state[key] for key, name in ui_tr.CONTROL_FIELDS.items()})
    weight = float(core_training.preview(config).attention[0][0, 0, 0])
    return nearest({"one": 1.0, "uniform": 1 / config.seq_len, "zero": 0.0}, weight)


def test_training_questions_before_and_after_training():
    at = open_page("training", params=TINY_TRAINING, answered=False)
    assert_clean(at)
    expected = _tr_query0(at)
    assert expected == "one"  # causal mask: query 0 sees only key 0
    check_choice(at, "tr_query0", expected)
    at.toggle(key="tr_causal").set_value(False).run()
    assert_clean(at)
    assert _tr_query0(at) == "uniform"
    assert_stale_verdict_rechecked(at, "tr_query0")
    assert answer(at, "tr_query0", "uniform") == "right"

    at.toggle(key="tr_causal").set_value(True).run()
    at.button(key="tr_btn_train").click().run()
    assert_clean(at)
    run = at.session_state["tr_live"].run
    found = at.session_state["tr_live"].findings[1]  # what the page measured and showed
    a = found.attention
    recent = a.recent3 >= verdicts.RECENT_FACTOR * a.recent3_uniform
    check_choice(at, "tr_recent", "yes" if recent else "no")
    ratio = found.shuffle.ratio
    shuffle = (
        "collapse"
        if ratio >= verdicts.COLLAPSE_RATIO
        else "same"
        if ratio <= verdicts.UNAFFECTED_RATIO
        else "some"
    )
    check_choice(at, "tr_shuffle", shuffle)
    assert run.config.causal
    assert _widget(at._tree, "q_tr_query0") is None  # a before-training question


# ----------------------------------------------------------------------------------------------
# in-context
# ----------------------------------------------------------------------------------------------


def _ic_config(at) -> core_ic.ICLConfig:
    s = at.session_state
    keys = {
        "lipschitz": "ic_L",
        "noise": "ic_noise",
        "n_context": "ic_n",
        "dim": "ic_d",
        "family": "ic_family",
    }
    keys |= {"attention": "ic_attention", "steps": "ic_steps", "lr": "ic_lr", "seed": "ic_seed"}
    return ui_ic.make_config({name: s[key] for name, key in keys.items()})


def _trend(before: float, after: float) -> str:
    return "narrower" if after < before / 1.1 else "wider" if after > before * 1.1 else "same"


def _ic_steeper(at) -> str:
    config = _ic_config(at).replace(steps=1)
    h = core_ic.references(config).oracle_h
    h2 = core_ic.references(config.replace(lipschitz=2 * config.lipschitz)).oracle_h
    return _trend(h, h2)


def test_in_context_steeper_reference_is_measured_only_once_answered(monkeypatch):
    """The 2L reference (a second NW oracle and LOO-CV) is not paid for on a control step."""
    measured: list[float] = []
    real = core_ic.references
    monkeypatch.setattr(
        core_ic, "references", lambda c, loo=True: measured.append(c.lipschitz) or real(c, loo=loo)
    )
    params = {"ic_seed": "424242", "ic_steps": "100"}  # a seed no test caches
    at = open_page("in-context", params=params, answered=False)
    assert_clean(at)
    assert measured == [4.0]  # the page's own reference only
    config = _ic_config(at)
    expected = _trend(real(config).oracle_h, real(config.replace(lipschitz=8.0)).oracle_h)
    assert answer(at, "ic_steeper", expected) == "right"
    assert measured == [4.0, 8.0]  # measured once the learner answered, and the verdict uses it


def test_in_context_questions():
    at = open_page("in-context", params={"ic_steps": "100"}, answered=False)
    assert_clean(at)
    expected = _ic_steeper(at)
    assert expected == "narrower"  # L = 4 -> 8 with 32 points: the window follows the slope
    check_choice(at, "ic_steeper", expected)
    at.select_slider(key="ic_L").set_value(8.0).run()
    assert_clean(at)
    changed = _ic_steeper(at)
    assert changed == "wider"  # L = 8 -> 16: too few points for so narrow a window; average more
    assert_stale_verdict_rechecked(at, "ic_steeper")
    assert answer(at, "ic_steeper", changed) == "right"

    at.button(key="ic_btn_train").click().run()
    assert_clean(at)
    run = at.session_state["ic_live"].run
    ratio = run.bandwidth[-1] / core_ic.references(run.config.replace(steps=1)).oracle_h
    learned = "match" if abs(ratio - 1) <= 0.25 else "wide" if ratio > 1 else "narrow"
    check_choice(at, "ic_learned_h", learned)

    at.button(key="ic_btn_sweep").click().run()
    assert_clean(at)
    show_answers(at, "ic_more_context")  # the chart the answer is read from
    traces = {tr["name"]: tr for tr in chart(at, "ic_sweep_fig")["data"]}
    learned_n = _array(traces[EN["ic.legend_sweep_learned_n"]]["y"])
    check_choice(at, "ic_more_context", _trend(learned_n[0], learned_n[-1]))


# ----------------------------------------------------------------------------------------------
# presentation mode and languages
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shown", [True, False])
def test_presenting_teacher_can_hide_the_questions(shown):
    params = {"present": "1"} | ({} if shown else {"questions": "false"})
    at = open_page("kernels-to-attention", params=params, answered=False)
    at.selectbox(key="slide").set_value(2).run()  # the slide with the τ = h² question
    assert_clean(at)
    assert [h.value for h in at.header] == [EN["k2a.three_title"]]
    assert at.toggle(key="questions").value is shown
    assert (_widget(at._tree, "q_k2a_tau") is not None) is shown
    assert (_widget(at._tree, "q_k2a_tau_check") is not None) is shown
    # with the questions off nothing is held back: the figures that show τ are on the slide
    assert (_chart_keys(at) >= {"k2a_fig1", "k2a_fig2", "k2a_fig3"}) is not shown
    assert any(EN["q.hidden"] in c.value for c in at.caption) is shown


def test_questions_in_chinese():
    zh = load_catalogue("zh")
    at = open_page("kernels-to-attention", lang="zh", answered=False)
    assert_clean(at)
    assert at.number_input(key="q_k2a_tau").label == zh["q.your_answer"]
    h = float(at.session_state["k2a_h"])
    assert answer(at, "k2a_tau", h * h) == "right"
    assert any(s.value == zh["q.right"] for s in at.success)


def test_number_tolerance_and_choice_ids():
    """``ui.questions.is_right``: absolute and relative tolerance, ids compared as strings."""
    from ui.questions import is_right

    assert is_right(34, np.int64(34))
    assert not is_right(35, 34)
    assert is_right(0.0909, 0.09, tolerance=0.01, relative=True)
    assert not is_right(0.095, 0.09, tolerance=0.01, relative=True)
    assert is_right(118, 100, tolerance=0.2, relative=True)
    assert not is_right(None, 1)
    assert not is_right(float("nan"), 1.0, tolerance=1.0)
    assert is_right("yes", "yes")
    assert not is_right("no", "yes")


# ----------------------------------------------------------------------------------------------
# questions before answers (issue 22.1) and answers out of links (issue 22.2)
# ----------------------------------------------------------------------------------------------


def _markdown_in(node) -> list[str]:
    found = []
    if getattr(node, "type", None) == "markdown":
        found.append(node.value)
    if isinstance(node, Block):
        for child in node.children.values():
            found.extend(_markdown_in(child))
    return found


def test_show_me_reveals_what_the_question_held_back_and_states_the_answer():
    at = open_page("kernel-regression", answered=False)
    assert_clean(at)
    assert "kr_fig_row" not in _chart_keys(at)  # the weights of x* would answer "how many"
    assert any(EN["q.hidden"] in c.value for c in at.caption)
    d, s = _kr_data(at), at.session_state
    w = nw_weights(d.x, np.array([float(s["kr_xq"])]), kernel=s["kr_kernel"], bandwidth=float(s["kr_h"]))[0]
    active = int(np.count_nonzero(w > 1e-3 * w.max()))

    at.button(key="q_kr_active_show").click().run()
    assert_clean(at)
    assert "kr_fig_row" in _chart_keys(at)
    said = _markdown_in(_box(at, "kr_active"))
    assert any(EN["q.answer_is"].format(answer=active) in m for m in said)
    assert any(EN["q.kr_active_explain"].split("{")[0] in m for m in said)
    assert _widget(at._tree, "q_kr_active_show") is None  # shown: nothing left to press
    assert verdict(at, "kr_active") is None  # no response was checked
    assert check_number(at, "kr_active", active, min(d.x.size, 2 * active + 10)) is None  # Check still works
    assert "kr_fig_cv" not in _chart_keys(at)  # each question keeps its own answer back


def test_check_reveals_too_and_stays_revealed_for_the_session():
    at = open_page("kernel-regression", answered=False)
    assert answer(at, "kr_cv_small_h", "falls") == "wrong"
    assert "kr_fig_cv" in _chart_keys(at)  # a wrong answer sees the curve too: that is the lesson
    live_slider(at, "kr_xq").set_value(-1.0).run()  # another control: still revealed
    assert_clean(at)
    assert "kr_fig_cv" in _chart_keys(at)


def test_answers_never_enter_the_url():
    at = open_page("kernel-regression", answered=False)
    answer(at, "kr_cv_small_h", "rises")
    answer(at, "kr_row", 7)
    assert at.radio(key="q_kr_cv_small_h").value == "rises"
    assert not [k for k in at.query_params if k.startswith("q_")], dict(at.query_params)


def test_an_answer_survives_a_language_switch():
    at = open_page("kernel-regression", answered=False)
    answer(at, "kr_cv_small_h", "rises")
    at.session_state["lang"] = "zh"  # what clicking the sidebar's language switch does
    at.run()
    assert_clean(at)
    assert at.radio(key="q_kr_cv_small_h").value == "rises"
    assert verdict(at, "kr_cv_small_h") == "right"


def _student_link(at) -> str:
    at.session_state["student_link"] = True  # the teacher opens "Copy link for students"
    at.run()
    assert_clean(at)
    (code,) = [c.value for c in at.code if "?" in c.value or c.value.startswith("http")]
    return code


def test_the_student_link_holds_the_view_without_answers_or_presentation():
    params = {"kr_xq": "-1.5", "present": "1", "slide": "2", "questions": "0", "q_kr_row": "34"}
    at = open_page("kernel-regression", lang="zh", params=params, folded=True, answered=False)
    assert_clean(at)
    query = dict(parse_qsl(_student_link(at).split("?", 1)[1]))
    assert query == {"kr_xq": "-1.5", "lang": "zh"}
    assert at.query_params["present"] == "1"  # the teacher's own view is left as it is
