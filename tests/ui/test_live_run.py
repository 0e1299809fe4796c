"""``ui.live_run`` apart from the real pages: the server's slot limiter, the buttons' state
transitions, the core loops' convention, and a tiny fake page trained, paused, stepped and reset in
AppTest (``tests/ui/fake_page.py`` over ``tests/ui/fake_loop.py``)."""

from __future__ import annotations

import contextlib
import threading
import time

import pytest
import streamlit as st
from streamlit.runtime.scriptrunner_utils.exceptions import RerunData, RerunException, StopException
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT
from tests.ui.fake_loop import STEP, FakeConfig, start_fake, train_fake
from ui import live_run
from ui.i18n import load_catalogue
from ui.live_run import DONE, IDLE, PAUSED, RUNNING, Labels, LiveRun, Loop, SlotLimiter, hold_lock

#: Streamlit's signals that stop an interrupted script thread at its next Streamlit call.
STOP_SIGNALS = [StopException, lambda: RerunException(RerunData())]


def _expected(seed: int, steps: int) -> list[int]:
    """The values a straight run of ``steps`` steps takes (written out, not by the loop)."""
    return [1000 * seed + k * k for k in range(steps)]


# --------------------------------------------------------------------------------------------
# The slot limiter
# --------------------------------------------------------------------------------------------


def test_try_hold_is_bounded_and_never_waits():
    slots = SlotLimiter({"p": 2}, poll_s=5.0)  # a blocking wait would take 5 s
    with slots.try_hold("p") as first, slots.try_hold("p") as second:
        assert (first, second) == (True, True)
        assert slots.free("p") == 0
        started = time.monotonic()
        with slots.try_hold("p") as third:
            assert third is False
        assert time.monotonic() - started < 1.0
        assert slots.free("p") == 0  # a refused try gives nothing back
    assert slots.free("p") == 2
    with slots.try_hold("p") as again:
        assert again


def test_hold_waits_polling_while_full_then_takes_the_freed_slot():
    """Moved from tests/app/test_training.py: the wait polls ``on_wait`` (the page's "waiting"
    message, where a press interrupts it) and gets the slot once the holder lets it go."""
    slots = SlotLimiter({"p": 1}, poll_s=0.05)
    holder_ready, release = threading.Event(), threading.Event()

    def hold() -> None:
        with slots.hold("p", on_wait=lambda: None):
            holder_ready.set()
            release.wait(10)

    threading.Thread(target=hold).start()
    assert holder_ready.wait(5)
    waits = []

    def on_wait() -> None:
        waits.append(slots.free("p"))
        if len(waits) == 2:
            release.set()

    with slots.hold("p", on_wait):
        assert len(waits) >= 2  # it polled (and would have shown the message) while the slot was taken
        assert waits[:2] == [0, 0]
        assert slots.free("p") == 0
    assert slots.free("p") == 1  # released again afterwards


def test_hold_lets_exactly_capacity_holders_in_at_once():
    """Four sessions on two slots: two meet inside (a barrier of two passes), never three."""
    slots = SlotLimiter({"p": 2}, poll_s=0.01)
    inside, most, count_lock = [0], [0], threading.Lock()
    barrier = threading.Barrier(2, timeout=10)
    errors: list[BaseException] = []

    def session() -> None:
        try:
            with slots.hold("p", on_wait=lambda: None):
                with count_lock:
                    inside[0] += 1
                    most[0] = max(most[0], inside[0])
                barrier.wait()  # breaks (BrokenBarrierError) unless a second holder is inside too
                with count_lock:
                    inside[0] -= 1
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=session) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert errors == []
    assert most[0] == 2
    assert slots.free("p") == 2


@pytest.mark.parametrize("signal", [RuntimeError, *STOP_SIGNALS])
def test_a_slot_is_given_back_when_the_block_raises(signal):
    """Also on Streamlit's stop and rerun signals (a press while a run holds its slot)."""
    slots = SlotLimiter({"p": 1})
    for take in (lambda: slots.hold("p", on_wait=lambda: None), lambda: slots.try_hold("p")):
        with pytest.raises((RuntimeError, StopException, RerunException)), take():
            raise signal()
        assert slots.free("p") == 1
    with slots.try_hold("p") as got:  # the semaphore itself is free again, and bounded
        assert got
        with slots.try_hold("p") as second:
            assert not second


@pytest.mark.parametrize("signal", STOP_SIGNALS)
def test_a_stop_signal_while_waiting_takes_no_slot(signal):
    """Pause pressed while waiting: Streamlit raises in ``on_wait``; nothing is taken nor given back."""
    slots = SlotLimiter({"p": 1}, poll_s=0.01)

    def on_wait() -> None:
        raise signal()

    with slots.try_hold("p") as got:
        assert got
        with pytest.raises((StopException, RerunException)), slots.hold("p", on_wait):
            pytest.fail("entered the block without a free slot")
        assert slots.free("p") == 0
    assert slots.free("p") == 1
    with slots.try_hold("p") as first, slots.try_hold("p") as second:
        assert (first, second) == (True, False)


def test_pools_are_separate_and_checked():
    slots = SlotLimiter({"a": 1, "b": 1})
    with slots.try_hold("a") as a, slots.try_hold("b") as b:
        assert (a, b) == (True, True)
    with pytest.raises(ValueError, match=r"unknown pool 'c'; known: \['a', 'b'\]"):
        slots.free("c")
    for capacity in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="positive integer"):
            SlotLimiter({"a": capacity})


def test_the_server_has_one_limiter_with_the_training_and_cost_pools():
    assert live_run.limiter() is live_run.limiter()  # st.cache_resource: one per process
    assert dict(live_run.limiter().capacities) == {"training": 2, "cost": 1}
    assert live_run.limiter().capacities[live_run.TRAINING] == live_run.MAX_CONCURRENT


def test_hold_lock_polls_while_another_thread_finishes_its_batch():
    lock, holder_ready, release = threading.Lock(), threading.Event(), threading.Event()

    def hold() -> None:
        with lock:
            holder_ready.set()
            release.wait(10)

    threading.Thread(target=hold).start()
    assert holder_ready.wait(5)
    waits = []

    def on_wait() -> None:
        waits.append(1)
        if len(waits) == 3:
            release.set()

    with hold_lock(lock, on_wait, poll_s=0.01):
        assert len(waits) >= 3
        assert lock.locked()
    assert not lock.locked()


# --------------------------------------------------------------------------------------------
# Core loops and the live run's state machine (outside a script run: bare session state)
# --------------------------------------------------------------------------------------------


@pytest.fixture
def live():
    """A live run over the fake loop, its session state cleared before and after."""
    run = LiveRun("ut", Loop(start=start_fake, train=train_fake, unit="step", step=STEP))
    keys = (run.key, run.sentinel)
    for key in keys:
        st.session_state.pop(key, None)
    yield run
    for key in keys:
        st.session_state.pop(key, None)


def test_a_loop_of_another_convention_is_refused():
    with pytest.raises(ValueError, match="on_epoch"):
        Loop(start=start_fake, train=train_fake, unit="epoch")
    with pytest.raises(ValueError, match="step must be at least 1"):
        Loop(start=start_fake, train=train_fake, unit="step", step=0)


def test_the_apps_core_loops_fit_the_convention():
    """The training page's, the in-context page's and the coming induction page's loops, as core
    has them: each makes a Loop without a change to core."""
    from core import in_context, induction_training, training

    Loop(start=training.start_run, train=training.train, unit="epoch")
    Loop(start=in_context.start_icl, train=in_context.train_icl, unit="step", step=25)
    Loop(start=induction_training.start_induction, train=induction_training.train_induction, unit="step")


def test_an_induction_run_steps_and_resumes_exactly_through_the_live_run():
    """The induction-heads loop driven by a LiveRun (Step, then Train): the same losses as one
    straight ``train_induction`` call."""
    from core.induction import InductionConfig
    from core.induction_training import start_induction, train_induction

    config = InductionConfig(d_model=16, batch_size=4, steps=5, eval_every=2, eval_size=8, seed=3)
    induction = LiveRun("ind_test", Loop(start=start_induction, train=train_induction, unit="step"))
    st.session_state.pop(induction.key, None)
    try:
        induction.on_step()
        run = induction.train_live(config, redraw=lambda r: None, on_wait=lambda: None)
        assert (run.steps_done, induction.mode()) == (1, PAUSED)
        induction.on_train()
        assert induction.train_live(config, redraw=lambda r: None, on_wait=lambda: None) is run
        assert (run.steps_done, induction.mode()) == (5, DONE)
        assert run.train_loss == train_induction(config).train_loss
    finally:
        st.session_state.pop(induction.key, None)


def test_the_buttons_callbacks_move_the_mode(live):
    forgotten = []
    live.after_reset = lambda: forgotten.append(True)
    state = live.state()
    assert (state.mode, state.run) == (IDLE, None)
    live.on_pause()  # nothing to pause
    assert state.mode == IDLE
    live.on_train()
    assert (state.mode, state.start_new) == (RUNNING, True)
    live.on_pause()
    assert state.mode == PAUSED
    live.on_step()
    assert (state.mode, state.start_new) == ("step", True)
    live.on_pause()
    assert state.mode == PAUSED
    state.mode = DONE
    live.on_pause()  # a finished run stays finished
    assert state.mode == DONE
    state.run, state.wall, state.notice = start_fake(FakeConfig()), 3.0, "ic.notice_finished"
    live.on_reset()
    assert (state.run, state.mode, state.wall, state.notice) == (None, IDLE, 0.0, None)
    assert forgotten == [True]
    assert live.state() is state  # one object in session state, kept


def test_no_valid_config_pauses_a_run(live):
    live.on_train()
    assert live.is_training(FakeConfig())
    assert not live.is_training(None)
    assert live.mode() == PAUSED


def test_leaving_the_page_pauses_a_run_and_a_press_on_it_does_not(live):
    """``on_page_start``: the page's buttons are missing from session state exactly when another
    page ran since (Streamlit drops undrawn widgets' state)."""
    live.on_train()
    st.session_state[live.sentinel] = False  # the page's own press: its buttons are there
    live.on_page_start()
    assert live.mode() == RUNNING
    del st.session_state[live.sentinel]  # another page ran
    live.on_page_start()
    assert live.mode() == PAUSED


def test_train_live_trains_steps_extends_and_keeps_a_run_across_a_changed_control(live):
    config = FakeConfig(steps=5, seed=1)
    redraws, waits = [], []

    def train(cfg: FakeConfig):
        return live.train_live(
            cfg, redraw=lambda r: redraws.append(r.steps_done), on_wait=lambda: waits.append(1)
        )

    live.on_step()
    run = train(config)
    assert (run.values, live.mode()) == (_expected(1, STEP), PAUSED)
    live.on_train()
    assert train(config) is run  # resumed in place
    assert (run.values, live.mode()) == (_expected(1, 5), DONE)
    assert redraws == [1, 2, 3, 4, 5]  # one redraw per unit
    assert run.stop_checks == 5  # should_stop asked before every step
    assert live.wall_seconds() > 0
    live.on_train()  # finished: Train only says how to go on
    assert train(config) is run
    assert (live.pop_notice(), live.mode(), run.steps_done) == ("ut.notice_finished", DONE, 5)
    live.on_step()  # Step past the plan extends the run
    train(config)
    assert (run.steps_done, run.config.steps, run.values) == (7, 7, _expected(1, 7))
    # a control changed while training: the run is kept and paused until a press
    other = FakeConfig(steps=5, seed=2)
    live.state().mode = RUNNING
    assert train(other) is run
    assert live.mode() == PAUSED
    live.on_step()  # an explicit press starts the new run
    new = train(other)
    assert new is not run
    assert new.values == _expected(2, STEP)
    assert waits == []  # slots were free
    assert live_run.limiter().free(live_run.TRAINING) == live_run.MAX_CONCURRENT


def test_train_live_waits_for_a_training_slot(live):
    """All training slots taken: the run waits, showing the message, and trains once one frees."""
    slots, held, waits = live_run.limiter(), threading.Event(), []

    def hold_all_briefly() -> None:
        with contextlib.ExitStack() as stack:
            for _ in range(live_run.MAX_CONCURRENT):
                stack.enter_context(slots.hold(live_run.TRAINING, on_wait=lambda: None))
            held.set()
            while not waits:
                time.sleep(0.01)

    threading.Thread(target=hold_all_briefly).start()
    assert held.wait(5)
    live.on_train()
    run = live.train_live(FakeConfig(steps=3), redraw=lambda r: None, on_wait=lambda: waits.append(1))
    assert waits
    assert run.values == _expected(0, 3)


# --------------------------------------------------------------------------------------------
# A fake page in AppTest
# --------------------------------------------------------------------------------------------


def _fake_page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "tests" / "ui" / "fake_page.py"), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _status(at: AppTest) -> str:
    return at.caption[-1].value


def test_a_fake_page_trains_pauses_steps_and_resets():
    at = _fake_page()
    cat = load_catalogue("en")
    labels = Labels.of("ic")
    assert [b.label for b in at.button] == [
        cat[labels.train],
        cat[labels.pause],
        cat[labels.step].format(steps=STEP),
        cat[labels.reset],
    ]
    assert at.button(key="fk_btn_pause").disabled  # nothing runs
    assert _status(at) == "no run"

    at.button(key="fk_btn_step").click().run()  # Step: STEP units, then paused
    live = at.session_state["fk_live"]
    run = live.run
    assert (run.values, live.mode) == (_expected(0, STEP), PAUSED)
    assert _status(at) == f"at rest: {STEP} of 6"
    assert not at.button(key="fk_btn_train").disabled

    at.session_state["fk_pause_at"] = 4  # Pause pressed while step 4 is drawn
    at.button(key="fk_btn_train").click().run()
    assert at.session_state["fk_live"].run is run
    assert (run.steps_done, at.session_state["fk_live"].mode) == (4, PAUSED)
    assert not at.button(key="fk_btn_train").disabled
    assert at.button(key="fk_btn_pause").disabled

    at.button(key="fk_btn_train").click().run()  # resume: the same run, exactly
    assert at.session_state["fk_live"].run is run
    assert (run.values, at.session_state["fk_live"].mode) == (_expected(0, 6), DONE)
    assert _status(at) == "at rest: 6 of 6"

    at.button(key="fk_btn_train").click().run()  # finished: a notice says how to go on
    assert [i.value for i in at.info] == [cat["ic.notice_finished"]]
    at.run()
    assert not at.info  # shown once

    at.number_input(key="fk_seed").set_value(4).run()  # a control moves: the run stays, the page says so
    assert [w.value for w in at.warning] == [cat["ic.config_changed"]]
    assert at.session_state["fk_live"].run is run

    at.button(key="fk_btn_reset").click().run()
    assert (at.session_state["fk_live"].run, at.session_state["fk_live"].mode) == (None, IDLE)
    assert _status(at) == "no run"
    assert not at.warning
    assert not at.exception
    assert live_run.limiter().free(live_run.TRAINING) == live_run.MAX_CONCURRENT


def test_config_choice_or_error_shows_the_error_only_without_a_config(monkeypatch):
    shown = []
    monkeypatch.setattr(live_run.st, "error", shown.append)
    config = FakeConfig()
    assert live_run.ConfigChoice(config).or_error("ic.error_config") is config
    assert shown == []
    assert live_run.ConfigChoice(None, "steps must be positive").or_error("ic.error_config") is None
    assert len(shown) == 1
    assert "steps must be positive" in shown[0]
