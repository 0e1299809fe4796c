"""Attention *learns* kernel regression: one softmax unit trained on many small regression tasks
picks the bandwidth Nadaraya-Watson would need (Collins et al., NeurIPS 2024).

Thin page: controls and the live run in ``ui.in_context``; the math in ``core.in_context``, what
the page measures in ``core.lessons.in_context``; the figures in ``figures.in_context``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import NoReturn

import streamlit as st

from core import in_context as icl
from core.in_context import ICLConfig, ICLRun, References
from core.lessons import in_context as lesson
from core.lessons.in_context import Sweep
from ui import classroom, questions
from ui import in_context as lesson_ui
from ui.i18n import t
from ui.layout import page_header, show_figure, table
from ui.questions import Question
from ui.sections import Section, run_sections

#: At most this many ellipses drawn for the window over training.
ELLIPSES = 10


#: A bandwidth that moves by less than this factor counts as "about the same" in the questions.
SAME_FACTOR = 1.1
TREND_CHOICES = {"narrower": "q.ic_narrower", "wider": "q.ic_wider", "same": "q.ic_same"}
#: Before training: the oracle's bandwidth at 2L against the one at L.
STEEPER = Question("ic_steeper", choices=TREND_CHOICES, choice_kwargs={"factor": SAME_FACTOR})
#: After training: where the learned bandwidth ended, against the oracle's.
LEARNED = Question(
    "ic_learned_h",
    prompt_key="q.ic_learned_prompt",
    explain_key="q.ic_learned_explain",
    choices={k: f"q.ic_learned_{k}" for k in ("match", "wide", "narrow")},
    choice_kwargs={"pct": f"{lesson_ui.AT_ORACLE_RTOL:.0%}"},
)
#: After the sweep: more context, narrower or wider bandwidth?
MORE_CONTEXT = Question(
    "ic_more_context",
    prompt_key="q.ic_context_prompt",
    explain_key="q.ic_context_explain",
    choices=TREND_CHOICES,
    choice_kwargs={"factor": SAME_FACTOR},
)


@dataclass(frozen=True)
class View:
    """What every section reads: the controls' config (None: not valid, error shown) and this
    session's run (None before any)."""

    config: ICLConfig | None
    run: ICLRun | None


def _trend(before: float, after: float) -> str:
    """``narrower``, ``wider`` or ``same`` (within :data:`SAME_FACTOR`) from one bandwidth to the next."""
    if after < before / SAME_FACTOR:
        return "narrower"
    return "wider" if after > before * SAME_FACTOR else "same"


def _lipschitz_question(config: ICLConfig, refs: References) -> None:
    """Before training: double L; the oracle's bandwidth at 2L against the one at L (both measured).

    The 2L reference is measured only once the learner has answered (its own ~0.2-1.5 s).
    """
    lips = {"L": f"{config.lipschitz:g}", "L2": f"{2 * config.lipschitz:g}", "n": config.n_context}

    def steeper_h() -> float:
        return lesson_ui.references(config.replace(lipschitz=2 * config.lipschitz), loo=False).oracle_h

    STEEPER.ask(
        lambda: _trend(refs.oracle_h, steeper_h()),
        prompt=lips,
        explain=lambda: lips | {"h": f"{refs.oracle_h:.3f}", "h2": f"{steeper_h():.3f}"},
    )


def _learned_question(run: ICLRun, refs: References) -> None:
    """After training: where the learned bandwidth ended, against the oracle (the page's verdict)."""
    h = run.bandwidth[-1]
    outcome = {"ic.verdict_h_match": "match", "ic.verdict_h_wide": "wide", "ic.verdict_h_narrow": "narrow"}
    LEARNED.ask(
        outcome[lesson_ui.verdict_bandwidth(h, refs.oracle_h)],
        prompt={"steps": run.steps_done, "oracle_h": f"{refs.oracle_h:.3f}"},
        explain={
            "h": f"{h:.3f}",
            "oracle_h": f"{refs.oracle_h:.3f}",
            "loo_h": f"{refs.loo_h_median:.3f}",
        },
    )


def idea_section() -> None:
    with st.expander(t("ic.idea_title"), expanded=False):
        st.markdown(t("ic.idea_body"))
        st.latex(r"\hat y(x_q) = \sum_{i=1}^{N} \mathrm{softmax}_i\!\left(x_i^\top M\, x_q\right) y_i")
        st.latex(r"\|x_i\| = \|x_q\| = 1:\quad x_i^\top (wI)\, x_q = w - \tfrac{w}{2}\,\|x_i - x_q\|^2")
        st.markdown(t("ic.idea_equivalence"))


def live_section(page: View) -> None:
    """Buttons, the live charts and the run."""
    config = page.config
    lesson_ui.LIVE.buttons(config is not None)
    run = lesson_ui.LIVE.current()
    lesson_ui.LIVE.warn_if_changed(config)
    shown = run.config if run is not None else config
    if shown is None:
        return
    training = lesson_ui.LIVE.is_training(config)
    with st.spinner(t("ic.measuring_refs")):
        # before any run, without the slow LOO-CV line: a task control's step stays light
        refs = lesson_ui.references(shown, loo=run is not None or training)
    if run is None:
        _lipschitz_question(shown, refs)
    elif not training and run.steps_done >= run.config.steps:
        _learned_question(run, refs)  # a finished run: before the charts, they show where h ended
    view = lesson_ui.LiveView()
    if training:
        _train_and_rerun(view, config, run, refs)
    view.draw(shown, refs, run)
    if run is not None:
        questions.reveal("ic_learned_h", partial(lesson_ui.bandwidth_verdict, run, refs), placeholder=False)


def _train_and_rerun(
    view: lesson_ui.LiveView, config: ICLConfig, run: ICLRun | None, refs: References
) -> NoReturn:
    """Train inside this script run, redrawing ``view`` as it goes, then rerun the page."""
    if run is not None and run.config.same_run_as(config):
        view.draw(run.config, refs, run, live=True)
    else:  # a new run: keep the empty axes and the task on screen until its first redraw
        with st.spinner(t("ic.measuring_refs")):
            refs = lesson_ui.references(config)
        view.draw(config, refs, None)
        view.status.info(t("ic.starting"))
    lesson_ui.LIVE.train_and_rerun(
        config, redraw=lambda r: view.draw(r.config, refs, r, live=True), status=view.status
    )


def window_section(page: View) -> None:
    """The window of M as an ellipse over training, against the hidden direction b."""
    run = page.run
    st.markdown(t("ic.window_intro"))
    if run is None or run.config.family != "low_rank":
        st.info(t("ic.window_hint"))
        return
    shape = lesson_ui.window_snapshots(run, ELLIPSES)
    col_fig, col_numbers = st.columns([3, 2])
    with col_fig:
        fig = lesson_ui.window_chart(shape, run.config.dim)
        ellipse_code = (lesson.plane_of, lesson.window_of)
        show_figure(fig, key="ic_ellipse_fig", look_for_key="ic.ellipse_look", code=ellipse_code)
        drawn = float(shape.window.across_b[0])  # the direction across b the ellipse is drawn in
        if lesson.curvature_kind(drawn) != "window":
            st.caption(
                t("ic.ellipse_no_window", reading=lesson_ui.curvature_reading(drawn), cap=f"{shape.cap:g}")
            )
    with col_numbers:
        st.metric(t("ic.metric_angle"), f"{shape.window.angle_deg:.1f}°", help=t("ic.metric_angle_help"))
        st.metric(t("ic.metric_cosine"), f"{shape.window.cosine:.3f}")
        table(lesson_ui.window_rows(shape.window))
        st.markdown(t(lesson_ui.verdict_alignment(shape.window)))
        st.markdown(lesson_ui.window_claim(shape.window))
        if run.config.dim == 2:
            st.caption(t("ic.window_d2"))


@st.fragment
def compare_section(page: View) -> None:
    """Softmax vs linear attention, trained the same way (on a button, cached)."""
    config = page.config
    st.markdown(t("ic.compare_intro"))
    lesson_ui.request_button("compare", "ic.btn_compare", ":material/balance:")
    result = lesson_ui.comparison(config, on_wait=lambda: st.caption(lesson_ui.LIVE.waiting_message()))
    if result is None:
        st.caption(t("ic.compare_hint"))
        return
    errors, refs = result
    show_figure(
        lesson_ui.compare_chart(errors, refs),
        key="ic_compare_fig",
        look_for_key="ic.compare_look",
        code=icl.train_icl,
    )
    st.markdown(t("ic.compare_verdict", ratio=errors["linear"][0] / errors["softmax"][0]))


@st.fragment
def sweep_section(page: View) -> None:
    """The paper's trends, measured (on a button with progress, cached)."""
    config = page.config
    st.markdown(t("ic.sweep_intro"))
    lesson_ui.request_button("sweep", "ic.btn_sweep", ":material/query_stats:")
    result = lesson_ui.sweep_with_progress(config)
    if result is None:
        st.caption(t("ic.sweep_hint"))
        return
    _context_question(result)
    questions.reveal("ic_more_context", partial(_show_sweep, result))


def _context_question(result: Sweep) -> None:
    """After the sweep: more context, narrower or wider bandwidth? (The sweep's own numbers.)"""
    n0, n1 = int(result.n_context[0]), int(result.n_context[-1])
    MORE_CONTEXT.ask(
        _trend(float(result.learned_n[0]), float(result.learned_n[-1])),
        prompt={"n0": n0, "n1": n1},
        explain={
            "n0": n0,
            "n1": n1,
            "h0": f"{result.learned_n[0]:.3f}",
            "h1": f"{result.learned_n[-1]:.3f}",
            "o0": f"{result.oracle_n[0]:.3f}",
            "o1": f"{result.oracle_n[-1]:.3f}",
        },
    )


def _show_sweep(result: Sweep) -> None:
    """The learned and oracle bandwidths along L and n, the trends' table and how long it took."""
    show_figure(
        lesson_ui.sweep_chart(result), key="ic_sweep_fig", look_for_key="ic.sweep_look", code=lesson.sweep
    )
    table(lesson_ui.trend_rows(result))
    note = lesson_ui.sweep_note(result)
    if note:
        st.info(t(note))
    st.caption(t("ic.sweep_caption", seconds=result.seconds))


def takeaway_section(page: View) -> None:
    st.markdown(t("ic.takeaway"))


def render() -> None:
    page_header("ic.title", "ic.intro")
    lesson_ui.LIVE.on_page_start()
    if classroom.on_title_slide():  # part of the page's header
        idea_section()
    with classroom.controls_area():
        config = lesson_ui.render_controls().or_error("ic.error_config")
    view = View(config, lesson_ui.LIVE.current())
    sections = [
        Section("ic.live_title", partial(live_section, view), level=None),
        Section("ic.window_title", partial(window_section, view)),  # the run on screen
    ]
    if config is not None:
        sections += [
            Section("ic.compare_title", partial(compare_section, view)),
            Section("ic.sweep_title", partial(sweep_section, view)),
        ]
    sections.append(Section("ic.takeaway_title", partial(takeaway_section, view)))
    run_sections("in-context", sections)


render()
