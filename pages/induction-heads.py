"""Induction heads: attention that copies, trained live (Olsson et al., 2022; Elhage et al., 2021).

Thin page: controls, the live run and the readings in ``ui.induction_heads``; the task, the model
and the scores in ``core.induction``; the loop in ``core.induction_training``; what the page reads
off a model in ``core.lessons.induction_heads``; the figures in ``figures.induction_heads``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import streamlit as st

from core.induction import InductionConfig
from core.lessons import induction_heads as lesson
from ui import classroom, controls, questions
from ui import induction_heads as lesson_ui
from ui.i18n import t
from ui.layout import page_header, show_figure, table
from ui.questions import Question
from ui.sections import Section, run_sections

#: Held-out sequences the maps can show.
SEQUENCES = 16
#: The blurred lookup the kernel question asks about (one of ``core.lessons.induction_heads.SCALES``).
BLUR = 0.2

#: Before the curves: a cliff, a steady climb or flat? (The run on screen's own curve.)
CURVE_SHAPE = Question("ih_cliff", choices={k: f"q.ih_cliff_{k}" for k in ("cliff", "steady", "flat")})
#: Before the ablation chart: which head's removal costs the most? (Choices: the model's heads.)
WORST_HEAD = Question("ih_ablate")
#: Before the kernel view: blurring the lookup by :data:`BLUR`, does the copy fall, stay or rise?
BLURRED = Question("ih_blur", choices={k: f"q.ih_blur_{k}" for k in ("falls", "same", "rises")})


@dataclass(frozen=True)
class View:
    """What every section reads: the controls' config (None: not valid, error shown) and the run on
    screen (the session's run, the shipped default before any)."""

    config: InductionConfig | None
    shown: lesson_ui.Shown


def idea_section() -> None:
    with st.expander(t("ih.idea_title"), expanded=False):
        st.markdown(t("ih.idea_body"))
        st.latex(r"\hat y_t = \sum_{s \le t} \mathrm{softmax}_s\!\big(q(x_t)^\top k(x_{s-1})\big)\, v(x_s)")


def task_section(page: View) -> None:
    view = page.shown
    st.markdown(t("ih.task_body"))
    v = lesson_ui.sequence_view(view, 0)
    fig = lesson_ui.sequence_chart(v)
    show_figure(fig, key="ih_sequence_fig", look_for_key="ih.sequence_look", code=lesson.sequence_view)
    st.markdown(t("ih.model_body"))


def _cliff_question(view: lesson_ui.Shown) -> None:
    if len(view.history) < 2:
        return
    CURVE_SHAPE.ask(
        lesson_ui.curve_shape(view.history),
        prompt={"steps": view.steps_done},
        explain=lesson_ui.cliff_numbers(view.history),
    )


def live_section(page: View) -> None:
    """Buttons, the curves of the run on screen (the shipped default before any) and training."""
    config = page.config
    st.markdown(t("ih.watch_body"))
    lesson_ui.LIVE.buttons(config is not None)
    run = lesson_ui.LIVE.current()
    lesson_ui.LIVE.warn_if_changed(config)
    training_now = lesson_ui.LIVE.is_training(config)
    view = lesson_ui.shown(run)
    if run is None:
        st.info(t("ih.default_note"))
    if not training_now:
        _cliff_question(view)
    live = lesson_ui.LiveView()
    if training_now:
        live.status.info(t("ih.starting"))
        lesson_ui.LIVE.train_and_rerun(
            config, redraw=lambda r: live.draw(lesson_ui.shown(r), live=True), status=live.status
        )
    live.draw(view)
    wants_control = config is not None and not view.control and view.config.n_layers > 1 and not view.default
    if wants_control and lesson_ui.control_button():
        lesson_ui.train_control(view.config, lambda: st.caption(lesson_ui.LIVE.waiting_message()))
        st.rerun()


@st.fragment  # its controls rerun it alone, not the page (a classroom's reruns stay light)
def heads_section(page: View) -> None:
    view = page.shown
    st.markdown(t("ih.heads_body"))
    index = int(
        controls.slider("ih.sequence", key="ih_seq", min_value=0, max_value=SEQUENCES - 1, value=0, step=1)
    )
    v = lesson_ui.sequence_view(view, index)
    c = view.config
    fig = lesson_ui.heads_chart(view, v)
    show_figure(
        fig, key="ih_heads_fig", look_for_key="ih.heads_look", code=lesson.sequence_view, period=v.period
    )
    st.subheader(t("ih.strip_title"))
    heads = [f"{layer}_{h}" for layer in range(c.n_layers) for h in range(c.n_heads)]
    col_q, col_h = st.columns(2)
    query = int(controls.slider("ih.query", key="ih_query", min_value=0, max_value=c.seq_len - 1,
                                value=c.seq_len - 1, step=1, where=col_q))  # fmt: skip
    head = controls.selectbox("ih.strip_head", key="ih_head", options=heads, index=len(heads) - 1,
                              option_prefix="ih.head_", where=col_h)  # fmt: skip
    layer, h = map(int, head.split("_"))
    fig = lesson_ui.strip_chart(v, layer, h, query)
    show_figure(fig, key="ih_strip_fig", look_for_key="ih.strip_look", code=lesson.sequence_view)


@st.fragment  # its controls rerun it alone, not the page (a classroom's reruns stay light)
def text_section(page: View) -> None:
    view = page.shown
    st.markdown(t("ih.text_body"))
    text = controls.text_input(
        "ih.text", key="ih_text", value=lesson_ui.DEFAULT_TEXT, help_key="ih.text_help"
    )
    try:
        p = lesson_ui.predict_text(view, text)
    except ValueError as err:
        st.warning(t("ih.text_error", error=str(err)))
        return
    rows = lesson_ui.text_rows(p)
    st.metric(t("ih.metric_copy"), lesson_ui.share(p.copy_accuracy))
    table(rows)


def ablate_section(page: View) -> None:
    view = page.shown
    st.markdown(t("ih.ablate_body"))
    ab = lesson_ui.ablation(view)
    worst = max(ab.single, key=lambda a: a.drop).heads[0]
    WORST_HEAD.ask(
        f"{worst[0]}_{worst[1]}",
        choices={f"{layer}_{h}": f"ih.head_{layer}_{h}" for layer, h in (a.heads[0] for a in ab.single)},
        explain={"head": lesson_ui.head_name(*worst), "drop": f"{ab.of(*worst).drop:.2f}",
                 "full": f"{ab.full.accuracy:.2f}"},
    )  # fmt: skip
    questions.reveal("ih_ablate", partial(_ablation_chart, ab))


def _ablation_chart(ab: lesson.Ablation) -> None:
    fig = lesson_ui.ablation_chart(ab)
    show_figure(fig, key="ih_ablate_fig", look_for_key="ih.ablate_look", code=lesson.ablation)


def kernel_section(page: View) -> None:
    view = page.shown
    st.markdown(t("ih.kernel_body"))
    if view.config.n_layers < 2:
        st.info(t("ih.kernel_one_layer"))
        return
    BLURRED.ask(
        partial(lesson_ui.blur_answer, view, BLUR),
        prompt={"scale": BLUR},
        explain=lambda: lesson_ui.blur_numbers(lesson_ui.kernel_view(view), BLUR),
    )
    questions.reveal("ih_blur", partial(_kernel_chart, view))
    st.page_link("pages/kernel-regression.py", label=t("ih.kernel_link"), icon=":material/show_chart:")


@st.fragment  # its controls rerun it alone, not the page (a classroom's reruns stay light)
def _kernel_chart(view: lesson_ui.Shown) -> None:
    with st.spinner(t("ih.measuring")):
        kv = lesson_ui.kernel_view(view)
    scales = [float(s) for s in kv.scales]
    scale = controls.select_slider(
        "ih.scale",
        key="ih_scale",
        options=scales,
        value=1.0,
        format_func=lambda s: f"×{s:g}",
        help_key="ih.scale_help",
    )
    k = scales.index(scale)
    cols = st.columns(3)
    cols[0].metric(t("ih.metric_gap"), f"×{lesson_ui.kernel_ratio(kv):.0f}", help=t("ih.metric_gap_help"))
    cols[1].metric(t("ih.metric_scale_acc", scale=f"{scale:g}"), f"{kv.accuracy[k]:.2f}")
    cols[2].metric(t("ih.metric_keys", scale=f"{scale:g}"), f"{kv.effective_keys[k]:.1f}")
    fig = lesson_ui.kernel_chart(kv)
    show_figure(fig, key="ih_kernel_fig", look_for_key="ih.kernel_look", code=lesson.kernel_view)


def honest_section(page: View) -> None:
    view = page.shown
    st.markdown(t("ih.honest_body"))
    questions.reveal(
        ("ih_cliff", "ih_ablate"), lambda: table(lesson_ui.honest_rows(view, lesson_ui.ablation(view)))
    )
    st.caption(t("ih.honest_caption"))


def render() -> None:
    page_header("ih.title", "ih.intro")
    lesson_ui.LIVE.on_page_start()
    if classroom.on_title_slide():
        idea_section()
    with classroom.controls_area():
        config = lesson_ui.render_controls().or_error("ih.error_config")

    view = View(config, lesson_ui.shown(lesson_ui.LIVE.current()))
    run_sections(
        "induction-heads",
        [
            Section("ih.task_title", partial(task_section, view)),
            Section("ih.watch_title", partial(live_section, view)),
            Section("ih.heads_title", partial(heads_section, view)),
            Section("ih.text_title", partial(text_section, view)),
            Section("ih.ablate_title", partial(ablate_section, view)),
            Section("ih.kernel_title", partial(kernel_section, view)),
            Section("ih.honest_title", partial(honest_section, view)),
        ],
    )


render()
