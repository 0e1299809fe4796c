"""Train a toy Transformer live: the post's second stage, its pitfalls reproduced with numbers.

Thin page: controls and the live run live in ``ui.training``; the model and the loop in
``core.transformer`` / ``core.training``; the measurements and verdicts in ``core.lessons.training``;
the figures in ``figures.training``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import NoReturn

import streamlit as st

from core.lessons import training as lesson
from core.lessons.training import AttentionSummary, Findings, ShuffleTest
from core.training import Preview, TrainingRun
from core.transformer import TransformerConfig
from ui import classroom, questions
from ui import training as lesson_ui
from ui.i18n import t
from ui.layout import page_header, show_figure, table
from ui.questions import Question
from ui.sections import Section, run_sections


@dataclass(frozen=True)
class View:
    """What every section reads: the controls' config (None: not valid, error shown) and this
    session's run (None before any)."""

    config: TransformerConfig | None
    run: TrainingRun | None


def render_data(shown: Preview) -> None:
    """The task in one line and a few of the run's walks, before any run exists."""
    st.header(t("tr.preview_title"))  # a section title (h2): nothing between it and the h1
    st.markdown(t("tr.preview_task"))
    show_figure(lesson_ui.walks_chart(shown), key="tr_walks_fig", look_for_key="tr.walks_look")


#: Before training: the weight query 0 gives key 0 (its explanation: one per mask).
QUERY0 = Question("tr_query0", choices={name: f"q.tr_query0_{name}" for name in ("one", "uniform", "zero")})


def _untrained_question(shown: Preview) -> None:
    """Before training: the weight query 0 gives key 0 in the untrained model's map (layer 1, head 1)."""
    T = shown.config.seq_len
    weight = float(shown.attention[0][0, 0, 0])
    levels = {"one": 1.0, "uniform": 1.0 / T, "zero": 0.0}
    QUERY0.ask(
        min(levels, key=lambda name: abs(levels[name] - weight)),
        prompt={"mask": t("common.yes" if shown.config.causal else "common.no")},
        choice_kwargs={"T": T},
        explain_key="q.tr_query0_explain_causal" if shown.config.causal else "q.tr_query0_explain_open",
        explain={"weight": f"{weight:.3f}", "T": T},
    )


#: After training: does attention go to the recent positions (causal) / to position t + 1 (open)?
ATTENTION = {kind: Question(f"tr_{kind}", choices=questions.YES_NO) for kind in ("recent", "ahead")}


def _attention_question(run: TrainingRun, attention: AttentionSummary) -> None:
    """After training: does attention go where the post says (recent positions / position t + 1)?"""
    verdict = lesson.attention_verdict(attention, causal=run.config.causal)
    kind = "recent" if run.config.causal else "ahead"
    factor = lesson.RECENT_FACTOR if run.config.causal else lesson.AHEAD_FACTOR
    ATTENTION[kind].ask(
        "yes" if verdict.key.endswith("_yes") else "no",
        prompt={"epochs": run.epochs_done, "factor": factor},
        explain={
            "share": f"{attention.recent3 if run.config.causal else attention.ahead:.0%}",
            "uniform": f"{attention.recent3_uniform if run.config.causal else attention.ahead_uniform:.0%}",
        },
    )


#: After training: what shuffling the history does to the loss, in the verdict's three bands.
SHUFFLE = Question(
    "tr_shuffle",
    choices={name: f"q.tr_shuffle_{name}" for name in ("collapse", "some", "same")},
    choice_kwargs={"collapse": lesson.COLLAPSE_RATIO, "same": lesson.UNAFFECTED_RATIO},
)


def _shuffle_question(run: TrainingRun, shuffle: ShuffleTest) -> None:
    """After training: what shuffling the history does to the loss, in the verdict's three bands."""
    key = lesson.shuffle_verdict(shuffle, positional=run.config.positional != "none").key
    outcome = "collapse" if "collapse" in key else "same" if "same" in key else "some"
    SHUFFLE.ask(
        outcome,
        prompt={"pos": t(f"tr.positional_{run.config.positional}")},
        explain={
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


def _findings(run: TrainingRun) -> Findings:
    """The run's measured findings (measured once per state of the run, then kept)."""
    with st.spinner(t("tr.measuring")):
        return lesson_ui.findings(run)


def findings_header(view: View) -> None:
    """The findings' own h2 and introduction, above the first of them."""
    run = view.run
    st.header(t("tr.findings_title"))
    st.markdown(t("tr.findings_intro", epochs=run.epochs_done))


def prediction_section(view: View) -> None:
    """The post's observations, measured on the current model: first, what it predicts."""
    run = view.run
    found = _findings(run)
    show_figure(lesson_ui.prediction_chart(found), key="tr_prediction_fig", look_for_key="tr.prediction_look")


def where_section(view: View) -> None:
    run = view.run
    found = _findings(run)
    _attention_question(run, found.attention)
    questions.reveal(
        f"tr_{'recent' if run.config.causal else 'ahead'}", partial(lesson_ui.where_results, run, found)
    )


def shuffle_section(view: View) -> None:
    run = view.run
    found = _findings(run)
    st.markdown(t("tr.shuffle_intro"))
    s = found.shuffle
    _shuffle_question(run, s)
    questions.reveal("tr_shuffle", partial(lesson_ui.shuffle_results, run, s))


def leak_section(view: View) -> None:
    run = view.run
    found = _findings(run)
    st.markdown(t("tr.leak_intro"))
    cols = st.columns(4)
    cols[0].metric(t("tr.metric_teacher"), f"{found.val_loss:.3g}", help=t("tr.metric_teacher_help"))
    cols[1].metric(t("tr.metric_prefix"), f"{found.prefix_error:.3g}", help=t("tr.metric_prefix_help"))
    cols[2].metric(t("tr.metric_rollout"), f"{found.rollout.model:.3g}", help=t("tr.metric_rollout_help"))
    cols[3].metric(t("tr.metric_rollout_last"), f"{found.rollout.last_value:.3g}")
    lesson_ui.say(
        lesson.leak_verdict(
            found.val_loss, found.prefix_error, run.baselines.optimum, causal=run.config.causal
        )
    )
    lesson_ui.say(lesson.rollout_verdict(found.rollout))


def diagnostics_section(view: View) -> None:
    run = view.run
    found = _findings(run)
    st.markdown(t("tr.diagnostics_intro"))
    show_figure(
        lesson_ui.diagnostics_chart(found), key="tr_diagnostics_fig", look_for_key="tr.diagnostics_look"
    )


def speed_section(view: View) -> None:
    run = view.run
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
    view = View(config, run)
    sections = [Section("tr.live_title", partial(live_section, view), level=None)]
    if run is not None and (run.epochs_done >= 1 or run.batches_done > 0):
        sections += [
            Section(
                "tr.prediction_title",
                partial(prediction_section, view),
                level=3,
                above=partial(findings_header, view),
            ),
            Section("tr.where_title", partial(where_section, view), level=3),
            Section("tr.shuffle_title", partial(shuffle_section, view), level=3),
            Section("tr.leak_title", partial(leak_section, view), level=3),
            Section("tr.diagnostics_title", partial(diagnostics_section, view), level=3),
            Section("tr.speed_title", partial(speed_section, view), level=3),
        ]
    run_sections("training", sections)


def live_section(page: View) -> None:
    """Train / watch: the live charts (before any run: the data and the untrained model)."""
    config, run = page.config, page.run
    training = lesson_ui.LIVE.is_training(config)
    lesson_ui.LIVE.warn_if_changed(config)
    shown = run.config if run is not None else config
    # Before any run: the data, the untrained model and the baselines of the run Train would start.
    upcoming = lesson_ui.preview(config) if config is not None and (run is None or training) else None
    if run is None and upcoming is not None and not training:
        render_data(upcoming)
        _untrained_question(upcoming)
    view = lesson_ui.LiveView(wide_heads=shown is not None and shown.n_heads > lesson_ui.WIDE_HEADS)
    if training:
        _train_and_rerun(view, config, run, upcoming)
    if run is None:
        view.status.info(t("tr.press_train"))
        if upcoming is not None:
            view.draw_preview(upcoming)
        return
    epoch, layer = lesson_ui.replay_controls(run)
    view.draw(run, epoch=epoch, layer=layer)


def _train_and_rerun(
    view: lesson_ui.LiveView, config: TransformerConfig, run: TrainingRun | None, upcoming: Preview
) -> NoReturn:
    """Train inside this script run, redrawing ``view`` after each epoch, then rerun the page."""
    if run is not None and run.config.same_run_as(config):
        view.draw(run, live=True)
    else:
        view.status.info(t("tr.starting"))
        view.draw_preview(upcoming)  # until the first epoch is drawn
    lesson_ui.LIVE.train_and_rerun(config, redraw=lambda r: view.draw(r, live=True), status=view.status)


render()
