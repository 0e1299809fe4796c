"""Kernels -> attention: Gaussian Nadaraya-Watson regression is softmax attention.

Thin page: controls -> View -> sections. ``ui.kernels_to_attention`` draws the controls, calls
``core.lessons.kernels_to_attention`` (cached) and shows ``figures.kernels_to_attention``'s figures;
each claim is printed with the number that backs it, computed now.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import streamlit as st

from core.lessons.kernels_to_attention import BandwidthLearning
from ui import kernels_to_attention as lesson_ui
from ui import questions
from ui.i18n import t
from ui.layout import dictionary_table, page_header
from ui.questions import YES_NO, Question
from ui.sections import Section, controls_first, once, run_sections


@dataclass(frozen=True)
class View:
    """What every section reads: the page-wide controls, drawn where a section first needs them."""

    knobs: Callable[[], lesson_ui.Knobs]  # h, x*, N and the seed (``ui.sections.once``)


def mapping_section(view: View) -> None:
    dictionary_table()
    st.markdown(t("k2a.mapping_body"))
    st.latex(lesson_ui.MAPPING_LATEX)


#: Before the three figures: which temperature τ does the attention use for this h?
TAU = Question(
    "k2a_tau", prompt_key="q.k2a_tau_prompt", explain_key="q.k2a_tau_explain",
    tolerance=0.01, relative=True, min_value=0.0, step=0.0001, fmt="%.4f",
)  # fmt: skip


def three_section(view: View) -> None:
    """NW against attention: the question, the numbers, then the post's three figures."""
    st.markdown(t("k2a.three_body"))
    c = view.knobs()
    grid = lesson_ui.k2a_nw_vs_attention(c.n, c.seed, c.bandwidth)
    one = lesson_ui.k2a_query_weights(c.n, c.seed, c.bandwidth, c.x0)
    h = c.bandwidth  # the temperature the page's attention uses is h² (metric below)
    TAU.ask(h * h, prompt={"h": h}, explain=lesson_ui.tau_explain(h, grid))
    questions.reveal("k2a_tau", partial(lesson_ui.three_results, c, grid, one))


#: Before the dot-product heatmaps: with these norms and this τ, is dot product = Gaussian kernel?
DOT_EQUAL = Question(
    "k2a_dot_equal", prompt_key="q.k2a_dot_prompt", explain_key="q.k2a_dot_explain", choices=YES_NO
)


def dot_section(view: View) -> None:
    _dot_vs_distance(view.knobs().seed)


@st.fragment
def _dot_vs_distance(seed: int) -> None:
    """Dot product against Gaussian kernel: its three sliders rerun only this section."""
    tau, spread, dim = lesson_ui.dot_controls()
    res = lesson_ui.k2a_dot_vs_gaussian(lesson_ui.N_VECTORS, dim, tau, spread, seed)
    answer = "yes" if res.max_abs_diff < 1e-6 else "no"
    DOT_EQUAL.ask(answer, prompt={"spread": spread, "tau": tau}, explain=lesson_ui.dot_explain(res))
    questions.reveal("k2a_dot_equal", partial(lesson_ui.dot_results, res, tau, spread))


#: Before the 1-D results: trained with the point included, does h end smaller or larger?
NO_LOO = Question(
    "k2a_no_loo", prompt_key="q.k2a_loo_prompt", explain_key="q.k2a_loo_explain",
    choices={"smaller": "q.k2a_loo_smaller", "larger": "q.k2a_loo_larger"},
)  # fmt: skip


def learn_section(view: View) -> None:
    c = view.knobs()
    _learnable(c.n, c.seed)


@st.fragment
def _learnable(n: int, seed: int) -> None:
    """Learning h by gradient descent: trains only on its button (0.1-0.6 s); the last result stays."""
    shown, wanted = lesson_ui.learn_run(n, seed)
    res = lesson_ui.learn(shown)
    if shown != wanted:
        st.info(t("k2a.learn_stale", steps=shown.steps, lr=shown.lr, h0=shown.h0), icon=":material/history:")
    if not isinstance(res, BandwidthLearning):
        lesson_ui.learn_results(shown, res)
        return
    smaller = res.no_loo.fit.bandwidth < res.loo.fit.bandwidth
    NO_LOO.ask(  # the body says what happens: it comes after the question
        "smaller" if smaller else "larger",
        prompt={"h0": shown.h0, "steps": shown.steps},
        explain=lesson_ui.no_loo_explain(res),
    )
    questions.reveal("k2a_no_loo", partial(lesson_ui.learn_results, shown, res))


def render() -> None:
    page_header("k2a.title", "k2a.intro")
    view = View(knobs=once(lesson_ui.three_controls))
    controls_first(view.knobs)
    run_sections(
        "kernels-to-attention",
        [
            Section("k2a.mapping_title", partial(mapping_section, view)),
            Section("k2a.three_title", partial(three_section, view)),
            Section("k2a.dot_title", partial(dot_section, view), folded=True),
            Section("k2a.learn_title", partial(learn_section, view), folded=True),
        ],
    )


render()
