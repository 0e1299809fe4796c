"""The training page in AppTest: tiny configs, every control, buttons, presets, both languages, odd URLs."""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import pytest

from core import training as core_training
from core.lessons.training import preset_config
from core.transformer import TransformerConfig
from tests.app.conftest import assert_clean, charts, open_page, show_answers
from ui import live_run
from ui import training as ui_tr
from ui.i18n import load_catalogue

#: A run of a couple of seconds: 2 epochs of 4 batches on 8-value windows.
TINY = {"tr_epochs": "2", "tr_n_train": "128", "tr_seq_len": "8", "tr_batch": "32"}


def _live(at) -> ui_tr.TrainingState:
    return at.session_state["tr_live"]


def _run(at):
    return _live(at).run


def _charts(at) -> dict[str, dict]:
    """{element key: Plotly spec} of the page's charts."""
    return {c.proto.id.rsplit("-", 1)[-1]: json.loads(c.proto.spec) for c in charts(at)}


def _array(value) -> np.ndarray:
    """A trace array as Plotly's JSON holds it: a list, or base64 with a dtype (and a shape)."""
    if isinstance(value, dict):
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = value.get("shape")
        return flat.reshape([int(n) for n in str(shape).split(",")]) if shape else flat
    return np.asarray(value, dtype=float)


def _page_config(at) -> TransformerConfig:
    """The config the page's controls hold now (what Train would start)."""
    return ui_tr.make_config({name: at.session_state[key] for key, name in ui_tr.CONTROL_FIELDS.items()})


def _assert_preview_of(at, cat, config: TransformerConfig) -> None:
    """The page shows the data, epoch-0 attention and baselines of the run ``config`` would start."""
    charts = _charts(at)
    reference = core_training.start_run(config)  # independent of the page: the run itself
    # (a) the data: every walk drawn is one of the run's training windows, the bold one its
    # fixed validation window, and the next value to predict is marked
    walks = charts["tr_walks_fig"]["data"]
    train_rows = reference.data.train.numpy().astype(float)
    drawn = [_array(w["y"]) for w in walks if w["name"] == cat["tr.legend_walks"]]
    assert len(drawn) >= 3
    for y in drawn:
        assert np.any(np.all(np.isclose(train_rows, y[None, :], rtol=0, atol=1e-7), axis=1))
    example = core_training.fixed_example(reference.data).numpy().astype(float)
    (bold,) = [w for w in walks if w["name"] == cat["tr.legend_example"]]
    np.testing.assert_allclose(_array(bold["y"]), example[:-1], atol=1e-7)
    (target,) = [w for w in walks if w["name"] == cat["tr.legend_next"]]
    assert _array(target["y"])[-1] == pytest.approx(example[-1], abs=1e-7)
    assert any(cat["tr.preview_task"] == m.value for m in at.markdown)
    # (b) the untrained model's attention: the run's epoch-0 snapshot, head by head
    (attention_key,) = [k for k in charts if k.startswith("tr_attention_fig")]
    heads = [d for d in charts[attention_key]["data"] if d["type"] == "heatmap"]
    snapshot = reference.snapshots[0][0].astype(float)  # (H, T, T), layer 1
    assert len(heads) == config.n_heads
    for h, trace in enumerate(heads):
        np.testing.assert_array_equal(_array(trace["z"]), snapshot[h])
    title = charts[attention_key]["layout"]["title"]["text"]
    assert title == cat["tr.attention_title"].format(epoch=0, layer=1)
    # (c) empty loss axes over the run's epochs, with the run's baselines drawn
    (loss_key,) = [k for k in charts if k.startswith("tr_loss_fig")]
    loss = {d["name"]: d for d in charts[loss_key]["data"]}
    assert len(_array(loss[cat["tr.legend_train"]]["y"])) == 0
    assert len(_array(loss[cat["tr.legend_val"]]["y"])) == 0
    for baseline in ("mean", "last_value", "optimum"):
        y = _array(loss[cat[f"tr.legend_{baseline}"]]["y"])
        np.testing.assert_array_equal(y, [getattr(reference.baselines, baseline)] * 2)
    assert charts[loss_key]["layout"]["xaxis"]["range"] == [-0.3, config.epochs + 0.3]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_renders_before_training(lang):
    """Issue 10.1: the page teaches before Train is pressed, and starts nothing by doing so."""
    at = open_page("training", lang=lang)
    assert_clean(at)
    cat = load_catalogue(lang)
    assert at.title[0].value == cat["tr.title"]
    assert at.button(key="tr_btn_train").label == cat["tr.btn_train"]
    assert not at.button(key="tr_btn_train").disabled
    assert at.button(key="tr_btn_pause").disabled  # nothing to pause yet
    assert any(cat["tr.press_train"] in i.value for i in at.info)
    _assert_preview_of(at, cat, _page_config(at))
    assert _run(at) is None
    assert _live(at).mode == "idle"
    assert live_run.limiter().free(live_run.TRAINING) == live_run.MAX_CONCURRENT  # no slot taken


def test_the_preview_follows_the_controls_before_training():
    at = open_page("training", params=TINY)
    cat = load_catalogue("en")
    before = _charts(at)["tr_walks_fig"]["data"][0]["y"]
    at.number_input(key="tr_seed").set_value(5)
    at.run()
    assert_clean(at)
    config = _page_config(at)
    assert config.seed == 5
    assert _charts(at)["tr_walks_fig"]["data"][0]["y"] != before  # another seed, other walks
    _assert_preview_of(at, cat, config)
    at.select_slider(key="tr_heads").set_value(8)  # wide heads: the maps go below the loss
    at.run()
    assert_clean(at)
    wide = _page_config(at)
    _assert_preview_of(at, cat, wide)
    assert _run(at) is None
    # Train then starts exactly the previewed run
    at.button(key="tr_btn_train").click()
    at.run()
    assert_clean(at)
    assert _run(at).config == wide
    np.testing.assert_array_equal(_run(at).snapshots[0], core_training.preview(wide).attention)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_train_to_the_end_then_reset(lang):
    at = open_page("training", lang=lang, params=TINY)
    at.button(key="tr_btn_train").click()
    at.run()
    assert_clean(at)
    run = _run(at)
    assert run.epochs_done == 2
    assert _live(at).mode == "done"
    cat = load_catalogue(lang)
    assert [h.value for h in at.header] == [cat["tr.findings_title"]]
    assert at.select_slider(key="tr_replay").value == 2  # the replay slider follows the newest epoch
    # the page trains what core.train trains, number for number
    reference = core_training.train(run.config)
    assert run.val_loss == reference.val_loss
    at.select_slider(key="tr_replay").set_value(0)
    at.run()
    assert_clean(at)
    at.button(key="tr_btn_reset").click()
    at.run()
    assert_clean(at)
    assert _run(at) is None
    assert _live(at).mode == "idle"


def test_step_then_resume_equals_one_run():
    at = open_page("training", params=TINY)
    at.button(key="tr_btn_step").click()
    at.run()
    assert_clean(at)
    run = _run(at)
    assert run.epochs_done == 1
    assert _live(at).mode == "paused"
    assert len(at.header) == 1  # findings shown while paused
    at.button(key="tr_btn_train").click()  # resume
    at.run()
    assert_clean(at)
    assert _run(at) is run
    assert run.epochs_done == 2
    straight = core_training.train(run.config)
    assert run.batch_loss == straight.batch_loss
    # a finished run: Train again only explains how to go on
    at.button(key="tr_btn_train").click()
    at.run()
    assert_clean(at)
    assert any(load_catalogue("en")["tr.notice_finished"] in i.value for i in at.info)
    assert _run(at).epochs_done == 2
    # raising the epochs extends the same run
    at.slider(key="tr_epochs").set_value(3)
    at.button(key="tr_btn_train").click()
    at.run()
    assert_clean(at)
    assert _run(at) is run
    assert run.epochs_done == 3


def test_changing_a_control_does_not_discard_the_run_until_train_is_pressed():
    at = open_page("training", params=TINY)
    at.button(key="tr_btn_step").click()
    at.run()
    run = _run(at)
    at.number_input(key="tr_seed").set_value(5)
    at.run()
    assert_clean(at)
    assert _run(at) is run
    assert any(load_catalogue("en")["tr.config_changed"] in w.value for w in at.warning)
    at.button(key="tr_btn_step").click()  # an explicit press starts a new run with the new seed
    at.run()
    assert _run(at) is not run
    assert _run(at).config.seed == 5


@pytest.mark.parametrize(
    ("preset", "control", "expected"),
    [
        ("heads32", "tr_heads", 32),
        ("no_mask", "tr_causal", False),
        ("no_scale", "tr_scale", "one"),
        ("learned_dropout", "tr_pos", "learned"),
        ("no_positions", "tr_pos", "none"),
        ("heads32_diverse", "tr_diversity", 1.0),
    ],
)
def test_presets_set_the_controls(preset, control, expected):
    at = open_page("training", params=TINY)
    at.selectbox(key="tr_preset").set_value(preset)
    at.run()
    assert_clean(at)
    assert at.session_state[control] == expected
    config = preset_config(preset)
    assert at.session_state["tr_epochs"] == config.epochs  # every control, not just the one shown
    assert at.session_state["tr_n_train"] == config.n_train
    assert not any(load_catalogue("en")["tr.preset_modified"] == c.value for c in at.caption)
    at.selectbox(key="tr_preset").set_value("post")
    at.run()
    assert at.session_state["tr_heads"] == 4
    assert at.session_state["tr_causal"] is True


@pytest.mark.parametrize(("lang", "value"), [("en", "heads32"), ("en", "32 heads"), ("zh", "32 个头")])
def test_a_preset_link_sets_the_controls_it_does_not_name(lang, value):
    at = open_page("training", lang=lang, params={"tr_preset": value, "tr_epochs": "3"})
    assert_clean(at)
    assert at.selectbox(key="tr_preset").value == "heads32"
    assert at.session_state["tr_heads"] == 32
    assert at.session_state["tr_epochs"] == 3  # the link's own value wins
    # epochs differ from the preset's 20, so the page says this is the learner's own experiment
    assert any(load_catalogue(lang)["tr.preset_modified"] == c.value for c in at.caption)


def test_every_control_and_a_training_with_all_options_off_default():
    at = open_page("training", params=TINY)
    at.select_slider(key="tr_d_model").set_value(32)
    at.select_slider(key="tr_heads").set_value(2)
    at.slider(key="tr_layers").set_value(2)
    at.radio(key="tr_pos").set_value("learned")
    at.toggle(key="tr_pre_ln").set_value(False)
    at.radio(key="tr_scale").set_value("custom").run()  # the divisor is editable only then
    at.number_input(key="tr_divisor").set_value(2.0)
    at.slider(key="tr_dropout").set_value(0.1)
    at.toggle(key="tr_causal").set_value(False)
    at.select_slider(key="tr_diversity").set_value(0.1)
    at.select_slider(key="tr_lr").set_value(0.01)
    at.select_slider(key="tr_batch").set_value(64)
    at.slider(key="tr_momentum").set_value(0.5)
    at.number_input(key="tr_seed").set_value(3)
    at.run()
    assert_clean(at)
    at.button(key="tr_btn_train").click()
    at.run()
    assert_clean(at)
    config = _run(at).config
    assert (config.d_model, config.n_heads, config.n_layers, config.positional) == (32, 2, 2, "learned")
    assert (config.norm_first, config.scale, config.custom_divisor, config.causal) == (
        False,
        "custom",
        2.0,
        False,
    )
    assert (config.attn_dropout, config.diversity_weight, config.learning_rate) == (0.1, 0.1, 0.01)
    assert (config.batch_size, config.momentum, config.seed) == (64, 0.5, 3)
    at.radio(key="tr_layer").set_value(2)  # two layers: a layer picker appears
    at.run()
    assert_clean(at)
    cat = load_catalogue("en")
    assert any(cat["tr.metric_prefix"] == m.label for m in at.metric)


@pytest.mark.parametrize(
    "params",
    [
        {"tr_heads": "7"},
        {"tr_epochs": "9999"},
        {"tr_pos": "rotary"},
        {"tr_preset": "gpt4"},
        {"tr_replay": "50"},
        {"tr_lr": "banana"},
        {"tr_seed": "-3"},
        {"tr_causal": "maybe"},
        {"tr_layer": "9"},
    ],
)
def test_odd_url_values_fall_back(params):
    at = open_page("training", params=params)
    assert_clean(at)
    assert not at.error


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_invalid_combination_shows_a_translated_error(lang):
    at = open_page("training", lang=lang, params={"tr_d_model": "16", "tr_heads": "32"})
    assert_clean(at)
    assert at.error
    assert at.error[0].value.startswith(load_catalogue(lang)["tr.error_heads"].split("{")[0])
    assert at.button(key="tr_btn_train").disabled
    assert "tr_walks_fig" not in _charts(at)  # no config, nothing to preview


def test_many_heads_train_and_draw():
    at = open_page("training")
    at.selectbox(key="tr_preset").set_value("heads32_diverse")
    at.run()
    at.slider(key="tr_epochs").set_value(1)
    at.select_slider(key="tr_n_train").set_value(128)
    at.select_slider(key="tr_seq_len").set_value(8)
    at.run()
    at.button(key="tr_btn_train").click()
    at.run()
    assert_clean(at)
    run = _run(at)
    assert run.config.n_heads == 32
    assert run.config.diversity_weight == 1.0
    assert run.epochs_done == 1


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("causal", ["true", "false"])
def test_verdicts_match_the_run_on_screen(lang, causal):
    """Issue 13.2: without the mask the page never claims recency; sentences quote this run."""
    at = open_page("training", lang=lang, params=TINY | {"tr_causal": causal})
    at.button(key="tr_btn_train").click()
    at.run()
    show_answers(at)  # the findings' questions come first; their verdicts after
    assert_clean(at)
    run = _run(at)
    assert run.config.causal is (causal == "true")
    from core.lessons import training as verdicts

    found = _live(at).findings[1]  # what the page measured and showed
    cat = load_catalogue(lang)
    text = "\n".join(m.value for m in at.markdown)
    attention = verdicts.attention_verdict(found.attention, causal=run.config.causal)
    assert cat[attention.key].format(**attention.values) in text
    recent_keys = ("tr.verdict_recent_yes", "tr.verdict_recent_no")
    if not run.config.causal:
        assert not any(cat[k].split("{")[0] in text for k in recent_keys)
        assert f"{found.attention.ahead:.0%}" in text
    rollout = verdicts.rollout_verdict(found.rollout)
    assert cat[rollout.key].format(**rollout.values) in text
    ratio = found.rollout.model / found.rollout.last_value
    worse = ratio > 1 + verdicts.ROLLOUT_SAME_RTOL  # ×1.01 is "about the same", not "worse"
    assert (cat["tr.verdict_rollout_worse"].split("{")[0] in text) is worse
    # issue 22.7: the diagnostics table has a row for the leak, red exactly when the page says the
    # model cheats (mask off), green with the mask
    leak = next(d for d in found.diagnostics if d.id == "leak")
    cells = _diagnostics_cells(at)
    (row,) = [i for i, symptom in enumerate(cells["symptom"]) if symptom == _flat(cat["tr.diag_leak"])]
    assert cells["status"][row] == _flat(cat[f"tr.level_{leak.level}"])
    cheats = cat["tr.verdict_leak_cheats"].split("{")[0] in text
    assert (leak.level == "red") is cheats
    if run.config.causal:
        assert leak.level == "green"
        assert leak.value == 1.0


def _flat(text: str) -> str:
    """A table cell without the figure's line breaks and spaces (it wraps long cells)."""
    return text.replace("<br>", "").replace(" ", "")


def _diagnostics_cells(at) -> dict[str, list[str]]:
    """The troubleshooting table's columns (status, symptom, measure, remedy), line breaks removed."""
    (table,) = [d for d in _charts(at)["tr_diagnostics_fig"]["data"] if d["type"] == "table"]
    columns = ("status", "symptom", "measure", "remedy")
    return {
        c: [_flat(v) for v in values] for c, values in zip(columns, table["cells"]["values"], strict=True)
    }


def test_paused_before_the_first_epoch_ends_says_so():
    """Issue 22.7: paused inside epoch 1 the status read "0.00 epochs/s ... training loss nan"."""
    at = open_page("training", params=TINY)
    config = _page_config(at)
    run = core_training.start_run(config)
    batches = iter(range(2))
    core_training.train(config, resume=run, should_stop=lambda: next(batches, None) is None)
    assert run.epochs_done == 0
    assert run.batches_done == 2
    _live(at).run, _live(at).mode = run, "paused"
    at.run()
    assert_clean(at)
    cat = load_catalogue("en")
    status = "\n".join(c.value for c in at.caption)
    assert "no epoch finished yet" in status
    assert "nan" not in status
    assert "0.00 epochs/s" not in status
    assert cat["tr.speed_no_epoch"] in status
    speeds = {m.label: m.value for m in at.metric}
    assert speeds[cat["tr.metric_epochs_per_s"]] == "–"
    assert speeds[cat["tr.metric_epochs_per_s_page"]] == "–"


def test_the_custom_divisor_is_editable_only_with_the_custom_scale():
    at = open_page("training", params=TINY)
    assert at.radio(key="tr_scale").value == "sqrt_dk"
    assert at.number_input(key="tr_divisor").disabled
    at.radio(key="tr_scale").set_value("custom").run()
    assert not at.number_input(key="tr_divisor").disabled
    at.radio(key="tr_scale").set_value("one").run()
    assert at.number_input(key="tr_divisor").disabled


def test_the_runs_table_writes_numbers_as_numbers():
    """Issue 22.7: the runs table padded every number to four decimals ("38.0000")."""
    at = open_page("training", params=TINY)
    at.button(key="tr_btn_train").click().run()
    assert_clean(at)
    cat = load_catalogue("en")
    (history,) = [t.value for t in at.table if cat["tr.hist_epochs"] in t.value.columns]
    row = history.iloc[0]
    assert row[cat["tr.hist_epochs"]] == "2"
    found = _live(at).findings[1]
    run = _run(at)
    assert row[cat["tr.hist_val"]] == f"{found.val_loss / run.baselines.optimum:.3g}"
    assert row[cat["tr.hist_shuffle"]] == f"{found.shuffle.ratio:.3g}"
    for cell in map(str, row.to_numpy()):
        assert not re.search(r"\.\d*0000$", cell), cell
    assert ui_tr.significant(38.0) == "38"
    assert ui_tr.significant(1.40697) == "1.41"
    assert ui_tr.significant(0.831852) == "0.832"
    assert ui_tr.significant(4.123, 2) == "4.1"
    assert ui_tr.significant(1234.5) == "1,234"
