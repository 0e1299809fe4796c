"""A section's own controls rerun only that section, on a real server (``st.fragment``).

Spoken over Streamlit's websocket with the load generator's client (``benchmarks.load.client``):
what the server sends back after a move is exactly what it reran. A fragment's control gets a
fragment-only rerun that redraws a small part of the page, and what it draws changes; a page-wide
control reruns the whole page.
"""

from __future__ import annotations

import random

import pytest

from benchmarks.load.client import LOAD_PAGES, StreamlitSession
from tests.app.conftest import fold_keys

pytestmark = pytest.mark.e2e

#: Controls that must rerun only their own section (their sliders sit inside an ``st.fragment``).
FRAGMENT_CONTROLS = {
    "kernels-to-attention": {"k2a_tau", "k2a_spread", "k2a_dim"},
    "scaled-dot-product": {"sdp_nw_x0", "sdp_nw_h"},
    "multi-head": {"mh_threshold", "mh_perm_head", "mh_red_d", "mh_red_steps"},
    "kernel-approximation": {"ka_h", "ka_m", "ka_att_m", "ka_causal_m", "ka_cost_m", "ka_cost_len"},
}

#: Settings of an experiment that runs on its Run button: moving them keeps the last result on screen.
RUN_BUTTON_SETTINGS = {"mh_red_d", "mh_red_steps", "ka_cost_m", "ka_cost_len"}


@pytest.mark.parametrize("page", LOAD_PAGES)
def test_section_controls_rerun_only_their_section(app_url, page):
    # a link that opens every folded section: the whole page
    session = StreamlitSession(app_url, page, link=dict.fromkeys(fold_keys(page), "true"))
    rng = random.Random(0)
    try:
        opened = session.open()
        assert opened.ok, opened.error
        assert not session.movable(folds=True) or session.movable(folds=True) == session.movable(folds=False)
        keys = {c.key for c in session.movable()}
        expected = FRAGMENT_CONTROLS.get(page, set())
        assert expected <= keys, f"controls missing on {page}: {sorted(expected - keys)}"
        assert {c.key for c in session.movable() if c.fragment_id} == expected
        for key in sorted(keys):
            run = session.move(rng, key)
            assert run.ok, f"{key}: {run.error}"
            if key not in RUN_BUTTON_SETTINGS:
                assert run.changed >= 1, f"moving {key} changed nothing on {page}"
            if key in expected:
                assert run.fragment
                assert run.elements < opened.elements / 2, f"{key} redrew {run.elements} of {opened.elements}"
            else:
                assert not run.fragment
                assert run.elements >= opened.elements * 0.8, f"{key} is page-wide but redrew {run.elements}"
    finally:
        session.close()


@pytest.mark.parametrize(
    ("page", "fold"), [("scaled-dot-product", "open_sdp_sparse"), ("multi-head", "open_mh_pos")]
)
def test_opening_a_fold_runs_its_section_and_it_stays_open(app_url, page, fold):
    """A student's click on a folded section's title: the page reruns with the section drawn in
    it (its sliders appear), and it stays open on the next rerun."""
    session = StreamlitSession(app_url, page)
    try:
        opened = session.open()
        assert opened.ok, opened.error
        folds = [c for c in session.movable() if c.fold]
        assert [c.query_param_key for c in folds] == sorted(fold_keys(page))
        before = {c.key for c in session.movable(folds=False)}
        run = session.move(random.Random(0), fold)
        assert run.ok, run.error
        assert not run.fragment
        assert run.changed >= 1
        assert fold not in {c.key for c in session.movable()}  # open: not opened again
        inside = {c.key for c in session.movable(folds=False)} - before
        assert inside, f"opening {fold} drew no slider"
        again = session.rerun()
        assert again.ok, again.error
        assert again.changed == 0
        assert {c.key for c in session.movable(folds=False)} - before == inside
    finally:
        session.close()
