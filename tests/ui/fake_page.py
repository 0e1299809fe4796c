"""A tiny page that trains the fake loop live with ``ui.live_run.LiveRun``: only drawing code, as a
real page has. Run by ``tests/ui/test_live_run.py`` in AppTest (not collected by pytest).

``fk_pause_at`` in session state: the redraw after that step presses Pause (as a learner's click
arriving while the loop runs), so the loop's next ``should_stop`` sees it.
"""

from __future__ import annotations

import streamlit as st

from tests.ui.fake_loop import FAKE, FakeConfig, FakeRun


def redraw(run: FakeRun, status) -> None:
    status.caption(f"step {run.steps_done} of {run.config.steps}")
    if st.session_state.get("fk_pause_at") == run.steps_done:
        FAKE.on_pause()


FAKE.on_page_start()
steps = st.number_input("steps", key="fk_steps", min_value=1, max_value=50, value=6)
seed = st.number_input("seed", key="fk_seed", min_value=0, max_value=9, value=0)
config = FakeConfig(steps=int(steps), seed=int(seed))
FAKE.buttons(True)
FAKE.warn_if_changed(config)
status = st.empty()
if FAKE.is_training(config):
    FAKE.train_and_rerun(config, redraw=lambda run: redraw(run, status), status=status)
run = FAKE.current()
status.caption("no run" if run is None else f"at rest: {run.steps_done} of {run.config.steps}")
