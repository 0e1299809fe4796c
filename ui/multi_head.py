"""Cached wrappers of the multi-head & positions page (one line around ``core`` each), its model
controls and :class:`View`, and its drawing helpers (each figure with its ``Labels``, what a
section shows once its question is answered).

Every argument that changes the result is a parameter (nothing is read from module globals), the
caches are bounded, and results are frozen dataclasses of numpy arrays (``core.lessons.multi_head``),
so they pickle cheaply. No torch here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import streamlit as st

from core import diagnostics, positional
from core.lessons import multi_head as mha
from core.lessons.multi_head import (
    BROKEN_CODE,
    FIXED_CODE,
    ContiguityDemo,
    RedundancyPoint,
    points_from_json,
    redundancy_vs_heads,
)
from core.multihead import MultiHeadAttention
from core.positional import POSITIONAL_KINDS
from figures import multi_head as figs
from figures.common import Labels
from ui import caching, controls
from ui.i18n import current_language, t
from ui.layout import cached, look_for, show_figure, table

LayerSpec = mha.LayerSpec
heads_for = mha.heads_for
MASK_KINDS = mha.MASK_KINDS
PE_FIGURE_LENGTH = mha.PE_FIGURE_LENGTH


@caching.data(max_entries=32)
def head_view(spec: mha.LayerSpec) -> mha.HeadView:
    """:func:`core.lessons.multi_head.head_view`, cached (raises ValueError on bad sizes)."""
    return mha.head_view(spec)


@caching.data(max_entries=64)
def head_pairs(weights: np.ndarray, threshold: float) -> tuple[tuple[int, int, float], ...]:
    """:func:`core.lessons.multi_head.head_pairs`, cached."""
    return mha.head_pairs(weights, threshold)


@caching.data(max_entries=32)
def library_check(spec: mha.LayerSpec) -> tuple:
    """:func:`core.lessons.multi_head.library_check` (float64, float32), cached."""
    return mha.library_check(spec)


@caching.data(max_entries=32)
def contiguity(heads: np.ndarray) -> ContiguityDemo:
    """:func:`core.lessons.multi_head.contiguity`, cached."""
    return mha.contiguity(heads)


@caching.data(max_entries=16)
def positions_view(d_model: int, seed: int) -> mha.PositionsView:
    """:func:`core.lessons.multi_head.positions_view`, cached."""
    return mha.positions_view(d_model, seed)


@caching.data(max_entries=32)
def permutation_view(spec: mha.LayerSpec, perm_kind: str) -> mha.PermutationView:
    """:func:`core.lessons.multi_head.permutation_view`, cached."""
    return mha.permutation_view(spec, perm_kind)


@caching.data(max_entries=64)
def redundancy_point(d_model: int, n_heads: int, train_steps: int, seed: int) -> RedundancyPoint:
    """One head count of the redundancy experiment (``core.lessons.multi_head``; trains: seconds).

    One cached call per head count, so the page can move its progress bar between calls (a
    cached function must not draw into a block created outside it). Every call uses the same
    seeded weights, batches and held-out walks, so the points equal one ``redundancy_vs_heads`` run.
    """
    return redundancy_vs_heads(d_model, [n_heads], train_steps=train_steps, seed=seed).points[0]


#: The redundancy experiment's default run (d_model 64, 100 steps, seed 42), computed ahead with
#: ``python -m core.lessons.multi_head <file> 64 100 42`` and shipped, so the page shows a result on load.
SHIPPED_REDUNDANCY = (64, 100, 42)
SHIPPED_REDUNDANCY_FILE = (
    Path(__file__).resolve().parent.parent
    / "assets"
    / "precomputed"
    / "mh_redundancy_d64_steps100_seed42.json"
)


@caching.resource()
def shipped_redundancy() -> tuple[tuple[int, int, int], tuple[RedundancyPoint, ...]] | None:
    """The shipped default run as ((d_model, steps, seed), points), or None if the file is missing/bad."""
    try:
        return SHIPPED_REDUNDANCY, points_from_json(SHIPPED_REDUNDANCY_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


# ----------------------------------------------------------------------------------------------
# drawing helpers of the page (what a section shows once its question is answered)
# ----------------------------------------------------------------------------------------------

#: Similarity from which the experiment counts a pair of heads as repeating (core default).
RED_THRESHOLD = 0.9
#: Session-state slot holding the last redundancy result: ((d_model, steps, seed), points).
RED_RESULT = "_mh_red_result"


def fmt_diff(x: float | None) -> str:
    """A max-abs difference as ``1.2e-07``, or a dash where none was measured."""
    return "—" if x is None else f"{x:.1e}"


def show_head_bars(view: View) -> None:
    """Each head's normalised entropy and effective support."""
    att = view.att
    bars = cached(figs.head_bars)(
        att.normalized_entropy,
        att.support,
        head_labels=short_heads(view.spec.n_heads),
        max_support=float(len(att.labels)),
        titles=(t("mh.fig_entropy_title"), t("mh.fig_support_title")),
        y_titles=(t("mh.entropy_y"), t("mh.support_y")),
        labels=Labels.of(x=t("mh.head_axis"), uniform=t("mh.ref_uniform"), all_keys=t("mh.ref_all_keys")),
    )
    show_figure(bars, key="mh_fig_bars", look_for_key="mh.look_bars", code=diagnostics.per_head_summary)


def _contiguity_code(demo: ContiguityDemo) -> None:
    left, right = st.columns(2)
    with left:
        st.markdown(t("mh.contig_broken"))
        st.code(BROKEN_CODE, language="python", wrap_lines=True)
        if demo.view_error is None:
            st.info(t("mh.contig_no_error"))
        else:
            st.markdown(t("mh.contig_raised"))
            st.code("RuntimeError: " + demo.view_error, language="text", wrap_lines=True)
    with right:
        st.markdown(t("mh.contig_fixed"))
        st.code(FIXED_CODE, language="python", wrap_lines=True)
        same = t("common.yes" if demo.fixed_matches_reshape else "common.no")
        st.markdown(t("mh.contig_fixed_result", shape=str(demo.fixed_shape), same=same))


def contiguity_results(demo: ContiguityDemo) -> None:
    """The post's story (it says what happens), both lines run, and the strides that explain it."""
    B, H, L, d_v = demo.shape
    st.markdown(t("mh.contig_body"))
    st.caption(t("mh.contig_shapes", B=B, H=H, L=L, d_v=d_v))
    _contiguity_code(demo)
    yes, no = t("common.yes"), t("common.no")
    steps = ("heads", "transposed", "fixed")
    table(
        {
            t("mh.contig_col_step"): [t(f"mh.contig_step_{s}") for s in steps],
            t("mh.contig_col_shape"): [str(demo.shape), str(demo.transposed_shape), str(demo.fixed_shape)],
            t("mh.contig_col_strides"): [
                str(demo.strides),
                str(demo.transposed_strides),
                str(demo.fixed_strides),
            ],
            t("mh.contig_col_contiguous"): [yes, yes if demo.transposed_is_contiguous else no, yes],
        },
        hide_index=True,
    )
    look_for("mh.look_contiguity")


def _permutation_table(result: mha.PermutationView) -> None:
    kinds = POSITIONAL_KINDS
    columns = {
        t("mh.perm_col_mask", mask=t(f"mh.mask_{mk}")): [fmt_diff(result.map_diff[(pe, mk)]) for pe in kinds]
        for mk in MASK_KINDS
    }
    table({t("mh.perm_col_pe"): [t(f"mh.pe_{pe}") for pe in kinds], **columns}, hide_index=True)


def permutation_results(
    spec: LayerSpec, labels: tuple[str, ...], result: mha.PermutationView, head: int
) -> None:
    """The difference of every encoding and mask, and the chosen head's maps (they answer it)."""
    perm = [int(i) for i in result.perm]
    _permutation_table(result)
    shown = spec.pe_kind if spec.pe_kind != "none" else "sinusoidal"
    rows = tuple((t(f"mh.pe_{pe}"), *(m[head - 1] for m in result.maps[pe])) for pe in ("none", shown))
    fig = cached(figs.permutation_grid)(
        rows,
        tokens=tuple(labels[i] for i in perm),
        column_titles=(t("mh.perm_col_shuffled"), t("mh.perm_col_predicted"), t("mh.perm_col_diff")),
        labels=Labels.of(
            title=t("mh.fig_perm_title", head=head, mask=t(f"mh.mask_{spec.mask_kind}")),
            x=t("common.key"),
            y=t("common.query"),
            z=t("common.weight"),
            diff=t("mh.diff_short"),
        ),
    )
    show_figure(fig, key="mh_fig_perm", look_for_key="mh.look_perm", code=mha.permutation_experiment)


def run_redundancy(d_model: int, steps: int, seed: int) -> None:
    """Train one small model per head count, with a progress bar; keep the result in the session."""
    heads = heads_for(d_model)
    bar = st.progress(0.0, text=t("mh.red_progress"))
    points = []
    for done, n_heads in enumerate(heads, start=1):
        points.append(redundancy_point(d_model, n_heads, steps, seed))
        bar.progress(done / len(heads), text=t("mh.red_progress"))
    bar.empty()
    st.session_state[RED_RESULT] = ((d_model, steps, seed), tuple(points))


def _redundancy_figure(steps: int, points: tuple[RedundancyPoint, ...]) -> None:
    heads = [p.n_heads for p in points]
    init_name, trained_name = t("mh.red_init"), t("mh.red_trained", steps=steps)
    series = [(init_name, tuple(p.redundancy_init if p.n_heads > 1 else None for p in points))]
    support = [(init_name, tuple(p.support_init for p in points))]
    if steps:  # with 0 steps the trained model is the initial one: one line, not two on top of each other
        series.append((trained_name, tuple(p.redundancy_trained if p.n_heads > 1 else None for p in points)))
        support.append((trained_name, tuple(p.support_trained for p in points)))
    fig = cached(figs.redundancy_curve)(
        tuple(heads),
        tuple(series),
        tuple(support),
        titles=(t("mh.fig_red_title"), t("mh.fig_red_support_title")),
        y_titles=(t("mh.red_y"), t("mh.support_y")),
        labels=Labels.of(x=t("mh.heads_axis")),
    )
    show_figure(fig, key="mh_fig_redundancy", look_for_key="mh.look_redundancy", code=redundancy_vs_heads)


def _redundancy_table(points: tuple[RedundancyPoint, ...]) -> None:
    table(
        {
            t("mh.heads_axis"): [p.n_heads for p in points],
            t("mh.red_col_init"): [f"{p.redundancy_init:.3f}" for p in points],
            t("mh.red_col_trained"): [f"{p.redundancy_trained:.3f}" for p in points],
            t("mh.red_col_pairs", threshold=RED_THRESHOLD): [
                f"{p.similar_pairs_trained:.0%}" for p in points
            ],
            t("mh.red_col_support"): [f"{p.support_init:.1f} → {p.support_trained:.1f}" for p in points],
            t("mh.red_col_loss"): [f"{p.loss_init:.2f} → {p.loss_trained:.2f}" for p in points],
        },
        hide_index=True,
    )


def _redundancy_summary(steps: int, points: tuple[RedundancyPoint, ...]) -> None:
    multi = [p for p in points if p.n_heads > 1]
    if not multi:
        return
    first, last = multi[0], multi[-1]
    st.markdown(
        t(
            "mh.red_summary",
            init_lo=min(p.redundancy_init for p in multi),
            init_hi=max(p.redundancy_init for p in multi),
            steps=steps,
            h_first=first.n_heads,
            r_first=first.redundancy_trained,
            h_last=last.n_heads,
            r_last=last.redundancy_trained,
            share_last=last.similar_pairs_trained,
            loss_one=points[0].loss_trained,
            loss_last=last.loss_trained,
        )
    )


def last_redundancy() -> tuple[tuple[int, int, int], tuple[RedundancyPoint, ...]] | None:
    """The last run of this session, else the shipped default run (computed ahead), as
    ((d_model, steps, seed), points); None when neither is there."""
    return st.session_state.get(RED_RESULT) or shipped_redundancy()


def redundancy_results(steps: int, points: tuple[RedundancyPoint, ...]) -> None:
    """A redundancy run (``steps`` training steps): redundancy and support against H, table, summary."""
    _redundancy_figure(steps, points)
    _redundancy_table(points)
    _redundancy_summary(steps, points)


# ----------------------------------------------------------------------------------------------
# the page's model controls and View
# ----------------------------------------------------------------------------------------------

D_MODELS = [8, 16, 32, 48, 64, 96, 128, 192, 256]
DEFAULT_D_MODEL = 64
DEFAULT_HEADS = 8


@dataclass(frozen=True)
class View:
    """The page-wide values every section reads: the controls (``spec``) and the layer's forward
    pass on the page's input (``att``: weights (H, T, T), concat, per-head statistics...)."""

    spec: LayerSpec
    att: mha.HeadView


def _warn_refused_heads(
    requested: str | None, options: list[int], d_model: int, dims: str, used: int
) -> None:
    """A linked head count this d_model does not allow: Streamlit already fell back to the default;
    say so once (the URL keeps the old value until the control is touched, and the warning should
    not repeat on every rerun)."""
    stale = (requested, d_model, dims)
    invalid = requested is not None and requested not in {str(o) for o in options}
    if invalid and st.session_state.get("_mh_heads_warned") != stale:
        st.session_state["_mh_heads_warned"] = stale
        st.warning(t("mh.heads_fallback", requested=requested, d_model=d_model, used=used))


def _head_controls(c1, c2, c3, c4) -> tuple[int, int, int | None, int | None]:
    """d_model, the head count (among those d_model allows) and the per-head widths (custom)."""
    d_model = int(
        controls.select_slider(
            "mh.d_model",
            key="mh_d",
            options=D_MODELS,
            value=DEFAULT_D_MODEL,
            help_key="mh.d_model_help",
            where=c1,
        )
    )
    dims = controls.radio(
        "mh.dims",
        key="mh_dims",
        options=["split", "custom"],
        option_prefix="mh.dims_",
        help_key="mh.dims_help",
        where=c2,
    )
    options = heads_for(d_model, dims)
    requested = st.query_params.get("mh_heads")
    default = DEFAULT_HEADS if DEFAULT_HEADS in options else options[-1]
    n_heads = int(
        controls.select_slider(
            "mh.heads",
            key="mh_heads",
            options=options,
            value=default,
            help_key="mh.heads_help",
            where=c3,
            warn_refused=False,  # said below, with the head counts this d_model allows
        )
    )
    _warn_refused_heads(requested, options, d_model, dims, n_heads)
    if dims != "custom":
        c4.markdown(f"**{t('mh.per_head')}**")
        c4.markdown(f"d_k = d_v = d_model / H = {d_model // n_heads}")
        return d_model, n_heads, None, None
    d_k = int(controls.slider("mh.d_k", key="mh_dk", min_value=1, max_value=64, value=8, step=1, where=c4))
    d_v = int(controls.slider("mh.d_v", key="mh_dv", min_value=1, max_value=64, value=8, step=1, where=c4))
    return d_model, n_heads, d_k, d_v


def model_controls() -> LayerSpec:
    """The model and input controls, in a bordered panel at the top: they drive every section."""
    with st.container(border=True):
        d_model, n_heads, d_k, d_v = _head_controls(*st.columns(4))
        c5, c6, c7, c8 = st.columns(4)
        kind = controls.radio(
            "mh.input", key="mh_input", options=["sentence", "random"], option_prefix="mh.input_", where=c5
        )
        length = 10
        if kind == "random":
            length = int(
                controls.slider(
                    "mh.length", key="mh_len", min_value=2, max_value=32, value=10, step=1, where=c5
                )
            )
        pe = controls.radio(
            "mh.pe",
            key="mh_pe",
            options=POSITIONAL_KINDS,
            option_prefix="mh.pe_",
            help_key="mh.pe_help",
            where=c6,
        )
        mask = controls.radio(
            "mh.mask", key="mh_mask", options=MASK_KINDS, option_prefix="mh.mask_", where=c7
        )
        seed = controls.seed("mh_seed", where=c8)
    sentence = current_language() if kind == "sentence" else "en"
    return LayerSpec(d_model, n_heads, d_k, d_v, seed, kind, length, sentence, pe, mask)


# ----------------------------------------------------------------------------------------------
# the sections' figures and lines
# ----------------------------------------------------------------------------------------------


def short_heads(n_heads: int) -> tuple[str, ...]:
    """The heads' short labels ("h1", ...), in the page's language."""
    return tuple(t("mh.head_short", h=h + 1) for h in range(n_heads))


def show_heads(view: View) -> None:
    """Every head's weight map on one scale, then the heads' outputs side by side."""
    att, H = view.att, view.spec.n_heads
    grid = cached(figs.head_grid)(
        att.weights,
        tokens=att.labels,
        head_titles=tuple(t("mh.head_n", h=h + 1) for h in range(H)),
        labels=Labels.of(
            title=t("mh.fig_grid_title"), x=t("common.key"), y=t("common.query"), z=t("common.weight")
        ),
    )
    look = "mh.look_grid_sentence" if view.spec.input_kind == "sentence" else "mh.look_grid_random"
    show_figure(
        grid, key="mh_fig_grid", look_for_key=look, code=(mha.head_view, MultiHeadAttention.forward_trace)
    )
    concat = cached(figs.concat_heatmap)(
        att.concat,
        n_heads=H,
        tokens=att.labels,
        head_titles=short_heads(H),
        labels=Labels.of(title=t("mh.fig_concat_title"), x=t("mh.concat_x"), y=t("common.query")),
    )
    show_figure(
        concat, key="mh_fig_concat", look_for_key="mh.look_concat", code=MultiHeadAttention.forward_trace
    )


def sharpest(att: mha.HeadView) -> int:
    """The head (0-based) with the lowest normalised entropy: the sharpest weights."""
    return min(range(att.weights.shape[0]), key=lambda h: att.normalized_entropy[h])


def show_similarity(view: View, pairs: tuple[tuple[int, int, float], ...]) -> None:
    """The (H, H) head-similarity matrix, the ``pairs`` above the threshold circled."""
    fig = cached(figs.similarity_matrix)(
        view.att.similarity,
        head_labels=short_heads(view.spec.n_heads),
        pairs=pairs,
        labels=Labels.of(
            title=t("mh.fig_similarity_title"),
            x=t("mh.head_axis"),
            y=t("mh.head_axis"),
            z=t("mh.similarity"),
            pair=t("mh.pair_name"),
        ),
    )
    show_figure(
        fig, key="mh_fig_similarity", look_for_key="mh.look_similarity", code=diagnostics.head_similarity
    )


def show_pairs(view: View, pairs: tuple[tuple[int, int, float], ...], threshold: float) -> None:
    """The redundancy score and the pairs of heads above ``threshold`` (the first 12 listed)."""
    if view.spec.n_heads == 1:
        st.info(t("mh.one_head"))
        return
    st.markdown(t("mh.redundancy_line", score=view.att.redundancy))
    if not pairs:
        st.markdown(t("mh.pairs_none", threshold=threshold))
        return
    listed = ", ".join(t("mh.pair_item", a=a + 1, b=b + 1, s=s) for a, b, s in pairs[:12])
    more = t("mh.pairs_more", n=len(pairs) - 12) if len(pairs) > 12 else ""
    st.markdown(t("mh.pairs_found", n=len(pairs), threshold=threshold, pairs=listed) + more)


def library_results(spec: LayerSpec) -> None:
    """Our module against ``torch.nn.MultiheadAttention`` with the same weights, one column per dtype."""
    rows = library_check(spec)
    if rows[0].reference != "torch.nn.MultiheadAttention":
        st.info(t("mh.lib_custom_note"))
    for col, row in zip(st.columns(len(rows)), rows, strict=True):
        col.metric(t("mh.lib_output_diff", dtype=row.dtype), fmt_diff(row.output_max_diff))
        if row.weights_max_diff is not None:
            col.metric(t("mh.lib_weights_diff", dtype=row.dtype), fmt_diff(row.weights_max_diff))
    st.caption(t("mh.lib_reference", reference=rows[0].reference))
    look_for("mh.look_library")


def show_positions(spec: LayerSpec) -> None:
    """The sinusoidal table and its kernel PE·PEᵀ side by side."""
    pos = positions_view(spec.d_model, spec.seed)
    left, right = st.columns(2)
    with left:
        title = t("mh.fig_pe_title", n=PE_FIGURE_LENGTH, d=spec.d_model)
        fig = cached(figs.encoding_heatmap)(
            pos.sinusoidal, labels=Labels.of(title=title, x=t("mh.dimension"), y=t("mh.position"))
        )
        show_figure(fig, key="mh_fig_pe", look_for_key="mh.look_pe", code=positional.sinusoidal_encoding)
    with right:
        kernel = Labels.of(title=t("mh.fig_kernel_title"), x=t("mh.position_q"), y=t("mh.position_p"))
        fig = cached(figs.kernel_heatmap)(pos.kernel_sinusoidal, labels=kernel)
        show_figure(fig, key="mh_fig_kernel", look_for_key="mh.look_kernel", code=positional.position_kernel)


def show_kernel_rows(spec: LayerSpec) -> None:
    """Rows of the position kernel against distance: sinusoidal (with its closed form) and learned."""
    pos = positions_view(spec.d_model, spec.seed)
    formula = None if pos.formula is None else (t("mh.formula_name"), *pos.formula)
    for col, kind in zip(st.columns(2), ("sinusoidal", "learned"), strict=True):
        rows = pos.rows_sinusoidal if kind == "sinusoidal" else pos.rows_learned
        with col:
            fig = cached(figs.kernel_by_distance)(
                tuple((t("mh.row_p", p=r.p), r.distances, r.values) for r in rows),
                labels=Labels.of(
                    title=t(f"mh.fig_rows_{kind}_title"), x=t("mh.distance"), y=t("mh.kernel_y")
                ),
                formula=formula if kind == "sinusoidal" else None,
            )
            show_figure(fig, key=f"mh_fig_rows_{kind}", look_for_key=f"mh.look_rows_{kind}")
