"""Train a toy Transformer live: the post's second stage, its pitfalls reproduced with numbers.

Thin page: controls and the live run live in ``ui.training``; the model and the loop in
``core.transformer`` / ``core.training``; the measurements and verdicts in ``core.lessons.training``;
the figures in ``figures.training``.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any, NoReturn

import streamlit as st

from core.lessons import training as lesson
from core.lessons.training import AttentionSummary, Findings, ShuffleTest
from core.random_walks import Baselines
from core.training import Preview, TrainingRun
from core.transformer import TransformerConfig
from figures import training as lesson_figures
from ui import classroom, controls, questions
from ui import training as lesson_ui
from ui.i18n import t
from ui.layout import cached_figures, page_header, show_figure, table
from ui.live_run import RedrawClock
from ui.sections import Section, heading, run_sections

#: The page's figure builders, each cached on its inputs (see ui.layout.cached_figures).
figs = cached_figures(lesson_figures)

BASELINE_IDS = ("mean", "last_value", "optimum")
#: While training, charts are redrawn after an epoch only if this long has passed since the last
#: redraw: fast epochs would otherwise queue more chart renders than a browser can keep up with.
CHART_INTERVAL_S = 0.7
#: Up to this many heads the attention maps sit beside the loss chart; more go below it.
WIDE_HEADS = 4

walks_figure = figs.walks_plot  # cached (see figs above)


class LiveView:
    """The placeholders that change while a model trains, and how to draw a run into them."""

    def __init__(self, wide_heads: bool) -> None:
        self.progress = st.empty()
        self.status = st.empty()
        if wide_heads:
            self.loss, self.attention = st.empty(), st.empty()
        else:
            left, right = st.columns(2)
            self.loss, self.attention = left.empty(), right.empty()
        self.draws = 0
        self.clock = RedrawClock(CHART_INTERVAL_S, spacing=0, wait_first=False)

    def draw(self, run: TrainingRun, *, epoch: int | None = None, layer: int = 0, live: bool = False) -> None:
        """Loss curves, the attention maps of ``epoch`` (default: the latest) and the status line."""
        self.draws += 1
        epoch = run.snapshot_epochs[-1] if epoch is None or epoch not in run.snapshots else epoch
        fraction = min(1.0, run.epochs_done / run.config.epochs)
        self.progress.progress(fraction, text=t("tr.progress", done=run.epochs_done, total=run.config.epochs))
        self.status.caption(_status_line(run, live=live))
        if live and not self.clock.due():
            return  # progress and status every epoch; charts at most every CHART_INTERVAL_S
        started = time.perf_counter()
        self._draw_loss(
            run.config,
            run.baselines,
            look="tr.loss_look",
            train_loss=run.train_loss,
            val_loss=run.val_loss,
            batch_loss=run.batch_loss,
            batches_per_epoch=run.batches_per_epoch,
        )
        look = "tr.attention_look_live" if live else "tr.attention_look"
        self._draw_attention(run.snapshots[epoch][layer], epoch=epoch, layer=layer, look=look)
        self.clock.done(started)

    def draw_preview(self, shown: Preview) -> None:
        """Before any run: empty loss axes with the baselines, and the untrained model's attention
        (once the question about it is answered)."""
        self.draws += 1
        self._draw_loss(shown.config, shown.baselines, look="tr.loss_look_preview")
        draw = partial(
            self._draw_attention, shown.attention[0], epoch=0, layer=0, look="tr.attention_look_untrained"
        )
        questions.reveal("tr_query0", draw, where=self.attention)

    def _draw_loss(
        self,
        config: TransformerConfig,
        baselines: Baselines,
        *,
        look: str,
        train_loss: list[float] = (),
        val_loss: list[float] = (),
        batch_loss: list[float] | None = None,
        batches_per_epoch: int | None = None,
    ) -> None:
        """The loss curves against the baselines (empty curves before any run)."""
        loss_fig = figs.loss_curves(
            train_loss,
            val_loss,
            {k: getattr(baselines, k) for k in BASELINE_IDS},
            names={
                "train": t("tr.legend_train"),
                "val": t("tr.legend_val"),
                "batch": t("tr.legend_batch"),
                **{k: t(f"tr.legend_{k}") for k in BASELINE_IDS},
            },
            title=t("tr.loss_title"),
            x_title=t("tr.axis_epoch"),
            y_title=t("tr.axis_loss"),
            max_epochs=config.epochs,
            batch_loss=batch_loss,
            batches_per_epoch=batches_per_epoch,
        )
        with self.loss.container():
            show_figure(loss_fig, key=f"tr_loss_fig_{self.draws}", look_for_key=look)

    def _draw_attention(self, weights: Any, *, epoch: int, layer: int, look: str) -> None:
        """One layer's attention maps, ``weights`` (H, T, T), after ``epoch`` (0: untrained)."""
        H = weights.shape[0]
        half_width = H <= WIDE_HEADS  # beside the loss chart: 3-4 heads in a 2 x 2 grid stay square
        attention_fig = figs.attention_heads(
            weights,
            cols=(2 if H > 2 else H) if half_width else None,
            row_height=210 if half_width and H > 2 else None,
            head_titles=[t("tr.head", h=h + 1) for h in range(H)],
            title=t("tr.attention_title", epoch=epoch, layer=layer + 1),
            x_title=t("tr.axis_key"),
            y_title=t("tr.axis_query"),
            colorbar_title=t("tr.axis_weight"),
        )
        with self.attention.container():
            show_figure(attention_fig, key=f"tr_attention_fig_{self.draws}", look_for_key=look)


def _status_line(run: TrainingRun, *, live: bool) -> str:
    """Epochs, steps, speed and the latest losses against the baselines (paused mid-epoch: said first).

    Before the first epoch ends there is no speed nor training loss to show: the line says so.
    """
    config = run.config
    status = t(
        "tr.status" if run.epochs_done else "tr.status_no_epoch",
        epoch=run.epochs_done,
        total=config.epochs,
        steps=run.batches_done,
        rate=run.epochs_done / run.seconds if run.seconds > 0 else 0.0,
        train=run.train_loss[-1] if run.train_loss else float("nan"),
        val=run.val_loss[-1],
        last_value=run.baselines.last_value,
        optimum=run.baselines.optimum,
    )
    if not live and run.cursor is not None:  # paused in the middle of an epoch
        status = t("tr.status_paused", epoch=run.epochs_done + 1, steps=run.batches_done) + " · " + status
    return status


def render_data(shown: Preview) -> None:
    """The task in one line and a few of the run's walks, before any run exists."""
    st.header(t("tr.preview_title"))  # a section title (h2): nothing between it and the h1
    st.markdown(t("tr.preview_task"))
    fig = walks_figure(
        shown.walks,
        shown.example,
        names={
            "train": t("tr.legend_walks"),
            "example": t("tr.legend_example"),
            "target": t("tr.legend_next"),
        },
        title=t("tr.walks_title", k=len(shown.walks), seed=shown.config.seed),
        x_title=t("tr.axis_position"),
        y_title=t("tr.axis_value"),
    )
    show_figure(fig, key="tr_walks_fig", look_for_key="tr.walks_look")


def _untrained_question(shown: Preview) -> None:
    """Before training: the weight query 0 gives key 0 in the untrained model's map (layer 1, head 1)."""
    T = shown.config.seq_len
    weight = float(shown.attention[0][0, 0, 0])
    levels = {"one": 1.0, "uniform": 1.0 / T, "zero": 0.0}
    questions.ask(
        "tr_query0",
        prompt_key="q.tr_query0_prompt",
        prompt_kwargs={"mask": t("common.yes" if shown.config.causal else "common.no")},
        choices={name: f"q.tr_query0_{name}" for name in levels},
        choice_kwargs={"T": T},
        answer=min(levels, key=lambda name: abs(levels[name] - weight)),
        explain_key="q.tr_query0_explain_causal" if shown.config.causal else "q.tr_query0_explain_open",
        explain_kwargs={"weight": f"{weight:.3f}", "T": T},
    )


def _attention_question(run: TrainingRun, attention: AttentionSummary) -> None:
    """After training: does attention go where the post says (recent positions / position t + 1)?"""
    verdict = lesson.attention_verdict(attention, causal=run.config.causal)
    kind = "recent" if run.config.causal else "ahead"
    factor = lesson.RECENT_FACTOR if run.config.causal else lesson.AHEAD_FACTOR
    questions.ask(
        f"tr_{kind}",
        prompt_key=f"q.tr_{kind}_prompt",
        prompt_kwargs={"epochs": run.epochs_done, "factor": factor},
        choices={"yes": "common.yes", "no": "common.no"},
        answer="yes" if verdict.key.endswith("_yes") else "no",
        explain_key=f"q.tr_{kind}_explain",
        explain_kwargs={
            "share": f"{attention.recent3 if run.config.causal else attention.ahead:.0%}",
            "uniform": f"{attention.recent3_uniform if run.config.causal else attention.ahead_uniform:.0%}",
        },
    )


def _shuffle_question(run: TrainingRun, shuffle: ShuffleTest) -> None:
    """After training: what shuffling the history does to the loss, in the verdict's three bands."""
    key = lesson.shuffle_verdict(shuffle, positional=run.config.positional != "none").key
    outcome = "collapse" if "collapse" in key else "same" if "same" in key else "some"
    questions.ask(
        "tr_shuffle",
        prompt_key="q.tr_shuffle_prompt",
        prompt_kwargs={"pos": t(f"tr.positional_{run.config.positional}")},
        choices={name: f"q.tr_shuffle_{name}" for name in ("collapse", "some", "same")},
        choice_kwargs={"collapse": lesson.COLLAPSE_RATIO, "same": lesson.UNAFFECTED_RATIO},
        answer=outcome,
        explain_key="q.tr_shuffle_explain",
        explain_kwargs={
            "ordered": f"{shuffle.ordered:.3g}",
            "shuffled": f"{shuffle.shuffled:.3g}",
            "ratio": f"{shuffle.ratio:.2f}",
        },
    )


def render_controls_and_config() -> TransformerConfig | None:
    """Preset, grouped controls and the resulting config (None with an error shown)."""
    lesson_ui.preset_selector()
    st.caption(":material/lightbulb: " + t(f"tr.expect_{st.session_state[lesson_ui.PRESET_KEY]}"))
    choice = lesson_ui.render_controls()
    if choice.config is None:
        st.error(t(choice.error_key, error=choice.error))
        return None
    if not lesson_ui.preset_matches(choice.config):
        st.caption(t("tr.preset_modified"))
    return choice.config


def _say(verdict: lesson.Verdict) -> None:
    """A verdict sentence, quoting the run's own numbers."""
    st.markdown(t(verdict.key, **verdict.values))


def _findings(run: TrainingRun) -> Findings:
    """The run's measured findings (measured once per state of the run, then kept)."""
    with st.spinner(t("tr.measuring")):
        return lesson_ui.findings(run)


def prediction_section(run: TrainingRun) -> None:
    """The post's observations, measured on the current model: first, what it predicts."""
    found = _findings(run)
    st.header(t("tr.findings_title"))
    st.markdown(t("tr.findings_intro", epochs=run.epochs_done))
    heading("tr.prediction_title", sub=True)
    fig = figs.prediction_plot(
        found.example,
        found.example_one_step,
        found.example_rollout,
        found.context,
        names={
            "truth": t("tr.legend_truth"),
            "one_step": t("tr.legend_one_step"),
            "rollout": t("tr.legend_rollout"),
            "context": t("tr.legend_context"),
        },
        title=t("tr.prediction_fig_title"),
        x_title=t("tr.axis_position"),
        y_title=t("tr.axis_value"),
    )
    show_figure(fig, key="tr_prediction_fig", look_for_key="tr.prediction_look")


def where_section(run: TrainingRun) -> None:
    found = _findings(run)
    heading("tr.where_title", sub=True)
    _attention_question(run, found.attention)
    questions.reveal(f"tr_{'recent' if run.config.causal else 'ahead'}", partial(_where_results, run, found))


def _where_results(run: TrainingRun, found: Findings) -> None:
    """Where the attention goes, by distance, with the shares the question asked about."""
    col_fig, col_numbers = st.columns([3, 2])
    with col_fig:
        fig = figs.distance_bars(
            found.distances,
            found.shares,
            found.uniform,
            names={"model": t("tr.legend_model_attention"), "uniform": t("tr.legend_uniform")},
            title=t("tr.distance_fig_title"),
            x_title=t("tr.axis_distance"),
            y_title=t("tr.axis_share"),
        )
        look = "tr.distance_look" if run.config.causal else "tr.distance_look_nomask"
        show_figure(fig, key="tr_distance_fig", look_for_key=look)
    with col_numbers:
        a = found.attention
        if run.config.causal:
            st.metric(t("tr.metric_recent3"), f"{a.recent3:.0%}", help=t("tr.metric_recent3_help"))
            st.metric(t("tr.metric_recent3_uniform"), f"{a.recent3_uniform:.0%}")
        else:
            st.metric(t("tr.metric_ahead"), f"{a.ahead:.0%}", help=t("tr.metric_ahead_help"))
            st.metric(t("tr.metric_future"), f"{a.future:.0%}", help=t("tr.metric_future_help"))
        st.metric(t("tr.metric_support"), f"{a.support:.1f}", help=t("tr.metric_support_help"))
        _say(lesson.attention_verdict(a, causal=run.config.causal))


def shuffle_section(run: TrainingRun) -> None:
    found = _findings(run)
    heading("tr.shuffle_title", sub=True)
    st.markdown(t("tr.shuffle_intro"))
    s = found.shuffle
    _shuffle_question(run, s)
    questions.reveal("tr_shuffle", partial(_shuffle_results, run, s))


def _shuffle_results(run: TrainingRun, s: ShuffleTest) -> None:
    """The loss in order and shuffled, and what it says."""
    cols = st.columns(3)
    cols[0].metric(t("tr.metric_ordered"), f"{s.ordered:.3g}")
    cols[1].metric(t("tr.metric_shuffled"), f"{s.shuffled:.3g}")
    cols[2].metric(t("tr.metric_ratio"), f"×{s.ratio:.2f}")
    _say(lesson.shuffle_verdict(s, positional=run.config.positional != "none"))


def leak_section(run: TrainingRun) -> None:
    found = _findings(run)
    heading("tr.leak_title", sub=True)
    st.markdown(t("tr.leak_intro"))
    cols = st.columns(4)
    cols[0].metric(t("tr.metric_teacher"), f"{found.val_loss:.3g}", help=t("tr.metric_teacher_help"))
    cols[1].metric(t("tr.metric_prefix"), f"{found.prefix_error:.3g}", help=t("tr.metric_prefix_help"))
    cols[2].metric(t("tr.metric_rollout"), f"{found.rollout.model:.3g}", help=t("tr.metric_rollout_help"))
    cols[3].metric(t("tr.metric_rollout_last"), f"{found.rollout.last_value:.3g}")
    _say(
        lesson.leak_verdict(
            found.val_loss, found.prefix_error, run.baselines.optimum, causal=run.config.causal
        )
    )
    _say(lesson.rollout_verdict(found.rollout))


def diagnostics_section(run: TrainingRun) -> None:
    found = _findings(run)
    heading("tr.diagnostics_title", sub=True)
    st.markdown(t("tr.diagnostics_intro"))
    rows = [
        {
            "level": d.level,
            "status": t(f"tr.level_{d.level}"),
            "symptom": t(f"tr.diag_{d.id}"),
            "measure": t(f"tr.diag_{d.id}_measure", value=d.value, amber=d.amber, red=d.red),
            "remedy": t(f"tr.diag_{d.id}_remedy"),
        }
        for d in found.diagnostics
    ]
    fig = figs.diagnostics_table(
        rows,
        headers={
            "status": t("tr.col_status"),
            "symptom": t("tr.col_symptom"),
            "measure": t("tr.col_measure"),
            "remedy": t("tr.col_remedy"),
        },
    )
    show_figure(fig, key="tr_diagnostics_fig", look_for_key="tr.diagnostics_look")


def speed_section(run: TrainingRun) -> None:
    heading("tr.speed_title", sub=True)
    wall = lesson_ui.LIVE.wall_seconds()
    done = run.epochs_done > 0  # speeds are per finished epoch: none before the first
    cols = st.columns(3)
    cols[0].metric(
        t("tr.metric_epochs_per_s"), f"{run.epochs_done / run.seconds:.2f}" if done and run.seconds else "–"
    )
    cols[1].metric(
        t("tr.metric_epochs_per_s_page"), f"{run.epochs_done / wall:.2f}" if done and wall else "–"
    )
    cols[2].metric(t("tr.metric_overhead"), f"{wall / run.seconds - 1:+.0%}" if wall and run.seconds else "–")
    st.caption(t("tr.speed_caption") if done else t("tr.speed_no_epoch"))

    rows = lesson_ui.history_table()
    if rows:
        st.subheader(t("tr.history_title"))
        table(rows, hide_index=True)  # wraps to the page width: no column cut off on the right
        st.caption(t("tr.history_caption"))


def task_section() -> None:
    """The task and its baselines, folded under the intro."""
    with st.expander(t("tr.task_title")):
        st.markdown(t("tr.task_body"))
        st.latex(r"x_{t+1} = x_t + d_{t+1}, \qquad d_{t+1} = m\, d_t + \sigma\, \varepsilon_{t+1}")
        st.markdown(t("tr.task_baselines"))


def buttons_section(config: TransformerConfig | None) -> None:
    """A one-off notice left by the previous run, then Train / Pause / Step / Reset."""
    lesson_ui.LIVE.buttons(config is not None)


def render() -> None:
    page_header("tr.title", "tr.intro")
    lesson_ui.LIVE.on_page_start()
    if classroom.on_title_slide():  # while presenting, the task and the buttons go with the live slide
        task_section()
    with classroom.controls_area():
        config = render_controls_and_config()
    if classroom.on_title_slide():
        buttons_section(config)
    run = lesson_ui.LIVE.current()
    sections = [Section("tr.live_title", partial(live_section, config, run))]
    if run is not None and (run.epochs_done >= 1 or run.batches_done > 0):
        sections += [
            Section("tr.prediction_title", partial(prediction_section, run)),
            Section("tr.where_title", partial(where_section, run)),
            Section("tr.shuffle_title", partial(shuffle_section, run)),
            Section("tr.leak_title", partial(leak_section, run)),
            Section("tr.diagnostics_title", partial(diagnostics_section, run)),
            Section("tr.speed_title", partial(speed_section, run)),
        ]
    run_sections("training", sections)


def live_section(config: TransformerConfig | None, run: TrainingRun | None) -> None:
    """Train / watch: the live charts (before any run: the data and the untrained model)."""
    training = lesson_ui.LIVE.is_training(config)
    lesson_ui.LIVE.warn_if_changed(config)
    shown = run.config if run is not None else config
    # Before any run: the data, the untrained model and the baselines of the run Train would start.
    upcoming = lesson_ui.preview(config) if config is not None and (run is None or training) else None
    if run is None and upcoming is not None and not training:
        render_data(upcoming)
        _untrained_question(upcoming)
    view = LiveView(wide_heads=shown is not None and shown.n_heads > WIDE_HEADS)
    if training:
        _train_and_rerun(view, config, run, upcoming)
    if run is None:
        view.status.info(t("tr.press_train"))
        if upcoming is not None:
            view.draw_preview(upcoming)
        return
    epoch, layer = _replay_controls(run)
    view.draw(run, epoch=epoch, layer=layer)


def _train_and_rerun(
    view: LiveView, config: TransformerConfig, run: TrainingRun | None, upcoming: Preview
) -> NoReturn:
    """Train inside this script run, redrawing ``view`` after each epoch, then rerun the page."""
    if run is not None and run.config.same_run_as(config):
        view.draw(run, live=True)
    else:
        view.status.info(t("tr.starting"))
        view.draw_preview(upcoming)  # until the first epoch is drawn
    lesson_ui.LIVE.train_and_rerun(config, redraw=lambda r: view.draw(r, live=True), status=view.status)


def _replay_controls(run: TrainingRun) -> tuple[int | None, int]:
    """The replay slider (epoch; None before the first epoch) and, with layers, the layer (0-based)."""
    layer, epoch = 0, None
    with st.container(border=True):
        st.markdown(t("tr.replay_title"))
        cols = st.columns([3, 1])
        if run.epochs_done >= 1:
            with cols[0]:
                epoch = lesson_ui.replay_slider(run)
        if run.config.n_layers > 1:
            with cols[1]:
                layer = (
                    int(
                        controls.radio(
                            "tr.layer",
                            key="tr_layer",
                            options=list(range(1, run.config.n_layers + 1)),
                            format_func=str,
                        )
                    )
                    - 1
                )
    return epoch, layer


render()
