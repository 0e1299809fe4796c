"""Questions before answers (issue 22.1): no question of any page can be answered by reading up.

For every question of every page this walks the page as a learner first gets it (every fold open,
nothing answered), in page order (the sidebar first: it is beside everything), and checks:

- what answers the question (its *revealers*: a chart, a metric, a table, a sentence quoting the
  number or stating the outcome) is nowhere on the page, open beside it or below it, and a line in
  its place says to answer first;
- no text before the question (widget labels and help included) holds a phrase that gives the
  answer away (``before``);
- once "Show me" is pressed, every revealer is on the page, after the question's box.

The revealers are written here, from the catalogue, independently of the pages: a new question
must be added to :data:`REVEALS` (a test fails otherwise), which is the audit the issue asks for.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from streamlit.testing.v1.element_tree import Block, Widget

from tests.app.conftest import assert_clean, is_chart, open_page, show_answers
from tests.conftest import ROOT
from ui.i18n import load_catalogue

EN = load_catalogue("en")
TINY_TRAINING = {"tr_epochs": "2", "tr_n_train": "128", "tr_seq_len": "8", "tr_batch": "32"}

Marker = Callable[[str], bool]


def chart(key: str) -> Marker:
    """A chart whose key is ``key`` (or starts with it, for ``..._fig_{n}``)."""
    return lambda text: text.startswith(f"chart:{key}")


def metric(i18n_key: str) -> Marker:
    label = EN[i18n_key].split("{")[0]
    return lambda text: text.startswith(f"metric:{label}")


def table(column_key: str) -> Marker:
    return lambda text: text.startswith("table:") and EN[column_key] in text


def says(*i18n_keys: str) -> Marker:
    """Text holding the longest fixed part of one of these catalogue sentences (placeholders cut)."""
    parts = [max(re.split(r"\{[^}]*\}", EN[k]), key=len).strip() for k in i18n_keys]
    assert all(len(p) >= 12 for p in parts), parts
    return lambda text: any(p in text for p in parts)


def literal(phrase: str) -> Marker:
    return lambda text: phrase in text


@dataclass(frozen=True)
class Reveals:
    """What answers one question, and what may or must sit around it."""

    hidden: tuple[Marker, ...] = ()  # absent until answered, then after the question
    before: tuple[str, ...] = ()  # phrases no element before the question may hold
    above: tuple[Marker, ...] = ()  # material the question points at ("the maps above")
    below: tuple[Marker, ...] = ()  # material the question points at, drawn under it
    placeholder: bool = True  # a line says to answer first
    notes: str = field(default="", compare=False)


REVEALS: dict[str, Reveals] = {
    "kr_active": Reveals(hidden=(chart("kr_fig_row"), says("kr.row_summary"))),
    "kr_row": Reveals(
        below=(chart("kr_fig_matrix"),), placeholder=False, notes="the matrix does not show indices"
    ),
    "kr_cv_small_h": Reveals(hidden=(chart("kr_fig_cv"), says("kr.look_cv"))),
    "k2a_tau": Reveals(
        hidden=(
            metric("k2a.metric_tau"),
            chart("k2a_fig1"),
            chart("k2a_fig2"),
            chart("k2a_fig_fit"),
            chart("k2a_fig3"),
        ),
        before=("τ = h²", "h² = τ", "by 2τ"),
    ),
    "k2a_dot_equal": Reveals(
        hidden=(metric("k2a.metric_dot_diff"), chart("k2a_fig_dot"), says("k2a.dot_body"))
    ),
    "k2a_no_loo": Reveals(
        hidden=(
            metric("k2a.metric_h_no_loo"),
            table("k2a.col_h"),
            chart("k2a_fig_h_path"),
            says("k2a.learn_body"),
        )
    ),
    "sdp_dk_peak": Reveals(hidden=(chart("sdp_fig_dk"), says("sdp.dk_claim"), says("sdp.dk_body"))),
    "sdp_empty_naive": Reveals(
        hidden=(
            metric("sdp.metric_naive_nan"),
            chart("sdp_fig_naive"),
            says("sdp.nan_body"),
            literal("=\\text{NaN}"),
        )
    ),
    "sdp_empty_safe": Reveals(
        hidden=(metric("sdp.metric_safe_nan"), chart("sdp_fig_safe"), says("sdp.nan_why"))
    ),
    "sdp_softmax_zero": Reveals(
        hidden=(
            metric("sdp.metric_zeros"),
            chart("sdp_fig_normalizers"),
            chart("sdp_fig_nw_normalizers"),
            says("sdp.sparse_body"),
        )
    ),
    "ka_quadruple_m": Reveals(
        hidden=(metric("ka.metric_slope"), chart("ka_fig_rff_error"), says("ka.rff_body")), before=("1/√m",)
    ),
    "ka_negative": Reveals(hidden=(chart("ka_fig_approx"), metric("ka.metric_rel_error"))),
    "ka_best_features": Reveals(
        hidden=(chart("ka_fig_feature_error"), chart("ka_fig_denominators"), says("ka.features_why"))
    ),
    "mh_sharpest": Reveals(hidden=(chart("mh_fig_bars"),), above=(chart("mh_fig_grid"),)),
    "mh_view_error": Reveals(
        hidden=(says("mh.contig_body"), table("mh.contig_col_contiguous")), before=("view raised an error",)
    ),
    "mh_perm_moves": Reveals(hidden=(chart("mh_fig_perm"), table("mh.perm_col_pe"))),
    "tr_query0": Reveals(hidden=(chart("tr_attention_fig_"),)),
    "tr_recent": Reveals(hidden=(chart("tr_distance_fig"), metric("tr.metric_recent3"))),
    "tr_ahead": Reveals(hidden=(chart("tr_distance_fig"), metric("tr.metric_ahead"))),
    "tr_shuffle": Reveals(hidden=(metric("tr.metric_ratio"), metric("tr.metric_shuffled"))),
    "ic_steeper": Reveals(before=("narrower window", "narrows with more"), placeholder=False),
    "ic_learned_h": Reveals(
        hidden=(
            chart("ic_bw_fig_"),
            chart("ic_task_fig_"),
            says("ic.status"),
            says("ic.verdict_h_match", "ic.verdict_h_near", "ic.verdict_h_wide", "ic.verdict_h_narrow"),
        )
    ),
    "ih_cliff": Reveals(
        hidden=(
            chart("ih_curves_fig_"),
            says("ih.status_cliff", "ih.status_no_cliff"),
            table("ih.col_measured"),
        ),
        before=("plateau", "cliff", "phase change", "sudden"),
    ),
    "ih_ablate": Reveals(
        hidden=(chart("ih_ablate_fig"), table("ih.col_measured")),
        above=(chart("ih_heads_fig"),),
        notes="the maps show which head is which, not what switching one off costs",
    ),
    "ih_blur": Reveals(
        hidden=(chart("ih_kernel_fig"), metric("ih.metric_gap"), metric("ih.metric_scale_acc")),
    ),
    "ic_more_context": Reveals(
        hidden=(chart("ic_sweep_fig"), says("ic.trend_n_context")),
        before=("narrower window", "narrows with more"),
    ),
}

#: (page, link parameters, a button pressed after opening, the questions then on screen)
SCENARIOS = [
    ("kernel-regression", {}, None, {"kr_active", "kr_row", "kr_cv_small_h"}),
    ("kernels-to-attention", {}, None, {"k2a_tau", "k2a_dot_equal", "k2a_no_loo"}),
    (
        "scaled-dot-product",
        {},
        None,
        {"sdp_dk_peak", "sdp_empty_naive", "sdp_empty_safe", "sdp_softmax_zero"},
    ),
    ("kernel-approximation", {}, None, {"ka_quadruple_m", "ka_negative", "ka_best_features"}),
    ("multi-head", {}, None, {"mh_sharpest", "mh_view_error", "mh_perm_moves"}),
    ("training", TINY_TRAINING, None, {"tr_query0"}),
    ("training", TINY_TRAINING, "tr_btn_train", {"tr_recent", "tr_shuffle"}),
    ("training", TINY_TRAINING | {"tr_causal": "false"}, "tr_btn_train", {"tr_ahead", "tr_shuffle"}),
    ("in-context", {"ic_steps": "100"}, "ic_btn_train", {"ic_learned_h"}),
    ("in-context", {"ic_steps": "100"}, "ic_btn_sweep", {"ic_steeper", "ic_more_context"}),
    ("induction-heads", {}, None, {"ih_cliff", "ih_ablate", "ih_blur"}),
]


# ----------------------------------------------------------------------------------------------
# the page as a list of texts, in page order
# ----------------------------------------------------------------------------------------------

TEXT_ELEMENTS = {
    "markdown",
    "caption",
    "latex",
    "title",
    "header",
    "subheader",
    "success",
    "info",
    "warning",
    "error",
    "code",
}


def _text(node) -> str:
    """What a learner reads in one element (a chart by its key)."""
    kind = getattr(node, "type", None)
    if isinstance(node, Widget):
        return f"widget:{node.key} {getattr(node, 'label', '')} {getattr(node, 'help', '') or ''}"
    if is_chart(node):  # st.plotly_chart's element or a kept chart's (key "chart_<key>")
        return "chart:" + node.proto.id.rsplit("-", 1)[-1].removeprefix("chart_")
    if kind == "metric":
        return f"metric:{node.label} {node.value}"
    if kind == "table":
        frame = node.value
        return "table:" + " | ".join(map(str, frame.columns)) + "\n" + frame.to_string()
    if isinstance(node, Block):
        return f"block:{getattr(node, 'label', '') or ''}"
    if kind in TEXT_ELEMENTS:
        return str(node.value)
    return ""


@dataclass
class Walk:
    """The page in order (sidebar first), and where each question's box sits in it."""

    texts: list[str]
    boxes: dict[str, tuple[int, int]]  # qid -> (first index, index after its last element)

    def outside(self, qid: str | None = None):
        """(index, text) of every element outside every question box."""
        inside = [range(a, b) for a, b in self.boxes.values()]
        return [(i, s) for i, s in enumerate(self.texts) if not any(i in r for r in inside)]


def walk(at) -> Walk:
    texts: list[str] = []
    boxes: dict[str, tuple[int, int]] = {}

    def visit(node) -> None:
        start = len(texts)
        texts.append(_text(node))
        if isinstance(node, Block):
            for i in sorted(node.children):
                visit(node.children[i])
            direct = [c for c in node.children.values() if isinstance(c, Widget)]
            for w in direct:
                key = w.key or ""
                if key.startswith("q_") and not key.endswith(("_check", "_show")) and w.type != "button":
                    boxes[key[2:]] = (start, len(texts))

    visit(at.sidebar)
    visit(at.main)
    return Walk(texts, boxes)


def _found(w: Walk, marker: Marker) -> list[int]:
    return [i for i, s in w.outside() if marker(s)]


# ----------------------------------------------------------------------------------------------
# the tests
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("page", "params", "button", "expected"), SCENARIOS)
def test_no_question_can_be_answered_by_reading_up_or_beside_it(page, params, button, expected):
    at = open_page(page, params=params, answered=False)
    assert_clean(at)
    if button:
        at.button(key=button).click().run()
        assert_clean(at)
    before = walk(at)
    assert set(before.boxes) == expected, "every question on screen must be listed in REVEALS"
    hint = EN["q.hidden"]
    for qid in expected:
        r, (start, _) = REVEALS[qid], before.boxes[qid]
        for n, marker in enumerate(r.hidden):
            assert not _found(before, marker), f"{qid}: revealer {n} is on the page before it is answered"
        for phrase in r.before:
            said = [s for i, s in before.outside() if i < start and phrase in s]
            assert not said, f"{qid}: {phrase!r} is said before the question: {said[0][:120]!r}"
        for marker in r.above:
            assert any(i < start for i in _found(before, marker)), f"{qid}: what it points at is not above it"
        for marker in r.below:
            assert any(i > start for i in _found(before, marker)), f"{qid}: what it points at is not below it"
        if r.placeholder:
            assert any(i > start and hint in s for i, s in before.outside()), f"{qid}: no line says to answer"

    show_answers(at, *sorted(expected))
    assert_clean(at)
    after = walk(at)
    assert set(after.boxes) == expected
    for qid in expected:
        start = after.boxes[qid][0]
        for n, marker in enumerate(REVEALS[qid].hidden):
            found = _found(after, marker)
            assert found, f"{qid}: revealer {n} is not on the page after Show me"
            assert min(found) > start, f"{qid}: revealer {n} is above its question"
    assert not any(hint in s for _, s in after.outside()), "everything was shown"


def test_every_question_of_the_pages_is_audited():
    """Each question of the pages (a ``Question`` spec, or a ``questions.ask`` call) has its entry
    here, and each entry is walked."""
    asked = []
    for path in sorted((ROOT / "pages").glob("*.py")):
        source = path.read_text(encoding="utf-8")
        asked += re.findall(r'(?:\bQuestion|questions\.ask)\(\s*(f?"[^"]+")', source)
    assert asked
    for qid in asked:
        pattern = re.sub(r"\\\{[^}]*\\\}", r"\\w+", re.escape(qid.lstrip("f").strip('"')))
        assert any(re.fullmatch(pattern, known) for known in REVEALS), f"question {qid} is not in REVEALS"
    walked = set().union(*(expected for *_, expected in SCENARIOS))
    assert walked == set(REVEALS)
