"""Induction heads: attention that copies, trained live (Olsson et al., 2022; Elhage et al., 2021).

Thin page: controls, the live run and the readings in ``ui.induction_heads``; the task, the model
and the scores in ``core.induction``; the loop in ``core.induction_training``; what the page reads
off a model in ``core.lessons.induction_heads``; the figures in ``figures.induction_heads``.
"""

from __future__ import annotations

import time
from functools import partial

import streamlit as st

from core import induction_training as training
from core.induction import InductionConfig
from core.lessons import induction_heads as lesson
from figures import induction_heads as lesson_figures
from ui import classroom, controls, questions
from ui import induction_heads as lesson_ui
from ui.i18n import t
from ui.layout import page_header, show_figure, table
from ui.live_run import RedrawClock
from ui.questions import Question
from ui.sections import Section, run_sections

#: Live charts: at most every 0.7 s, and so that redraws take at most an eleventh of the time.
CHART_INTERVAL_S, SPACING = 0.7, 10.0
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


def idea_section() -> None:
    with st.expander(t("ih.idea_title"), expanded=False):
        st.markdown(t("ih.idea_body"))
        st.latex(r"\hat y_t = \sum_{s \le t} \mathrm{softmax}_s\!\big(q(x_t)^\top k(x_{s-1})\big)\, v(x_s)")


def controls_section() -> InductionConfig | None:
    choice = lesson_ui.render_controls()
    if choice.config is None:
        st.error(t("ih.error_config", error=choice.error))
    return choice.config


def task_section(view: lesson_ui.Shown) -> None:
    st.markdown(t("ih.task_body"))
    v = lesson_ui.sequence_view(view, 0)
    names = {r: t(f"ih.role_{r}") for r in ("prefix", "segment", "repeat")}
    fig = lesson_ui.sequence_figure(
        tuple(int(x) for x in v.tokens), tuple(lesson_ui.roles(v)), names=names,
        title=t("ih.sequence_title", period=v.period), x_title=t("ih.axis_position"),
    )  # fmt: skip
    show_figure(fig, key="ih_sequence_fig", look_for_key="ih.sequence_look", code=lesson.sequence_view)
    st.markdown(t("ih.model_body"))


class LiveView:
    """The placeholders that change while the model trains, and how to draw a run into them."""

    def __init__(self) -> None:
        self.progress, self.status, self.chart = st.empty(), st.empty(), st.empty()
        self.draws, self.clock = 0, RedrawClock(CHART_INTERVAL_S, spacing=SPACING)

    def draw(self, view: lesson_ui.Shown, *, live: bool = False) -> None:
        total = max(view.config.steps, view.steps_done)
        self.progress.progress(
            min(1.0, view.steps_done / total), text=t("ih.progress", done=view.steps_done, total=total)
        )
        if live and not self.clock.due():
            return
        started = time.perf_counter()
        self.draws += 1
        cliff = lesson_ui.cliff_step(view.history)
        questions.reveal("ih_cliff", partial(self._status, view, cliff), placeholder=False)
        questions.reveal("ih_cliff", partial(self._chart, view, cliff, live), where=self.chart)
        self.clock.done(started)

    def _status(self, view: lesson_ui.Shown, cliff: int | None) -> None:
        last = view.history[-1]
        key = "ih.status_cliff" if cliff is not None else "ih.status_no_cliff"
        self.status.caption(t(key, steps=last.step, acc=f"{last.accuracy:.2f}", cliff=cliff))

    def _chart(self, view: lesson_ui.Shown, cliff: int | None, live: bool) -> None:
        # live frames change every draw: not worth caching
        build = lesson_figures.formation_figure if live else lesson_ui.formation_figure
        h, c = view.history, view.control
        names = {k: t(f"ih.legend_{k}") for k in ("accuracy", "loss", "control", "control_loss")}
        fig = build(
            tuple(p.step for p in h), tuple(p.accuracy for p in h), tuple(p.loss for p in h),
            {k: tuple(v) for k, v in lesson_ui.score_lines(view).items()},
            tuple(p.step for p in c), tuple(p.accuracy for p in c), tuple(p.loss for p in c),
            cliff=cliff, max_steps=max(view.config.steps, view.steps_done),
            names=names | {"cliff": t("ih.legend_cliff", step=cliff)},
            titles=(t("ih.curves_title"), t("ih.loss_title")), x_title=t("ih.axis_step"),
            y_titles=(t("ih.axis_share"), t("ih.axis_loss")),
        )  # fmt: skip
        with self.chart.container():
            show_figure(
                fig, key=f"ih_curves_fig_{self.draws}", look_for_key="ih.curves_look", code=training.formation
            )


def _cliff_question(view: lesson_ui.Shown) -> None:
    if len(view.history) < 2:
        return
    CURVE_SHAPE.ask(
        lesson_ui.curve_shape(view.history),
        prompt={"steps": view.steps_done},
        explain=lesson_ui.cliff_numbers(view.history),
    )


def live_section(config: InductionConfig | None) -> None:
    """Buttons, the curves of the run on screen (the shipped default before any) and training."""
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
    live = LiveView()
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
def heads_section(view: lesson_ui.Shown) -> None:
    st.markdown(t("ih.heads_body"))
    index = int(
        controls.slider("ih.sequence", key="ih_seq", min_value=0, max_value=SEQUENCES - 1, value=0, step=1)
    )
    v = lesson_ui.sequence_view(view, index)
    labels = tuple(f"{i}:{int(x)}" for i, x in enumerate(v.tokens))
    c = view.config
    titles = tuple(lesson_ui.head_name(layer, h) for layer in range(c.n_layers) for h in range(c.n_heads))
    fig = lesson_ui.heads_figure(
        v.weights,
        labels,
        titles=titles,
        x_title=t("ih.axis_key"),
        y_title=t("ih.axis_query"),
        w_title=t("ih.axis_weight"),
    )
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
    fig = lesson_ui.strip_figure(
        tuple(str(int(x)) for x in v.tokens), tuple(float(w) for w in v.weights[layer, h, query]), query,
        title=t("ih.strip_fig_title", head=lesson_ui.head_name(layer, h), query=query),
        names={"keys": t("ih.axis_key"), "queries": t("ih.axis_query")},
    )  # fmt: skip
    show_figure(fig, key="ih_strip_fig", look_for_key="ih.strip_look", code=lesson.sequence_view)


@st.fragment  # its controls rerun it alone, not the page (a classroom's reruns stay light)
def text_section(view: lesson_ui.Shown) -> None:
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


def ablate_section(view: lesson_ui.Shown) -> None:
    st.markdown(t("ih.ablate_body"))
    ab = lesson_ui.ablation(view)
    worst = max(ab.single, key=lambda a: a.drop).heads[0]
    WORST_HEAD.ask(
        f"{worst[0]}_{worst[1]}",
        choices={f"{layer}_{h}": f"ih.head_{layer}_{h}" for layer, h in (a.heads[0] for a in ab.single)},
        explain={"head": lesson_ui.head_name(*worst), "drop": f"{ab.of(*worst).drop:.2f}",
                 "full": f"{ab.full.accuracy:.2f}"},
    )  # fmt: skip
    questions.reveal("ih_ablate", partial(_ablation_chart, view, ab))


def _ablation_chart(view: lesson_ui.Shown, ab: lesson.Ablation) -> None:
    def role(heads: tuple) -> str:
        return (
            "previous"
            if heads == (ab.previous_token_head,)
            else "induction"
            if set(heads) <= set(ab.induction_heads)
            else "other"
        )

    bars = [(t("ih.bar_full"), ab.full.accuracy, "full")]
    bars += [
        (t("ih.bar_off", head=lesson_ui.head_name(*a.heads[0])), a.accuracy, role(a.heads)) for a in ab.single
    ]
    if ab.induction_group is not None and len(ab.induction_group.heads) > 1:
        bars.append((t("ih.bar_group"), ab.induction_group.accuracy, "induction"))
    labels, acc, kinds = (tuple(x) for x in zip(*bars, strict=True))
    fig = lesson_ui.ablation_figure(
        labels, acc, kinds, title=t("ih.ablate_fig_title"), y_title=t("ih.axis_accuracy")
    )
    show_figure(fig, key="ih_ablate_fig", look_for_key="ih.ablate_look", code=lesson.ablation)


def kernel_section(view: lesson_ui.Shown) -> None:
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
    fig = lesson_ui.kernel_figure(
        kv.match_scores, kv.other_scores, kv.scales, kv.accuracy, kv.effective_keys,
        names={k: t(f"ih.legend_{k}") for k in ("match", "other", "accuracy", "keys")},
        titles=(t("ih.kernel_scores_title", head=lesson_ui.head_name(*kv.head)), t("ih.kernel_scale_title")),
        x_titles=(t("ih.axis_score"), t("ih.axis_scale")),
        y_titles=(t("ih.axis_share_keys"), t("ih.axis_accuracy")),
    )  # fmt: skip
    show_figure(fig, key="ih_kernel_fig", look_for_key="ih.kernel_look", code=lesson.kernel_view)


def honest_section(view: lesson_ui.Shown) -> None:
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
        config = controls_section()

    def on_screen() -> lesson_ui.Shown:
        return lesson_ui.shown(lesson_ui.LIVE.current())

    run_sections(
        "induction-heads",
        [
            Section("ih.task_title", lambda: task_section(on_screen())),
            Section("ih.watch_title", partial(live_section, config)),
            Section("ih.heads_title", lambda: heads_section(on_screen())),
            Section("ih.text_title", lambda: text_section(on_screen())),
            Section("ih.ablate_title", lambda: ablate_section(on_screen())),
            Section("ih.kernel_title", lambda: kernel_section(on_screen())),
            Section("ih.honest_title", lambda: honest_section(on_screen())),
        ],
    )


render()
