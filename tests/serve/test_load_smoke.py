"""The classroom load generator works (issue 8): a short run against a real ``streamlit run``.

It proves the harness, not the speed: the numbers belong to ``make bench`` (``python -m benchmarks
load``). Checked here: only loopback hosts are accepted; on every page the client finds the controls,
each move reruns without error and changes what the page shows while a rerun with nothing moved
changes nothing; and 3 Locust students for 9 s finish every rerun they send, with no error.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Iterator

import pytest

from benchmarks.load.client import (
    LOAD_PAGES,
    TRAINING_CONTROLS,
    LoadTargetError,
    StreamlitSession,
    loopback_port,
)
from benchmarks.load.server import serve_streamlit
from tests.app.conftest import fold_keys
from tests.conftest import ROOT

USERS = 3
#: A multiple of the 3 s pacing: the students spawned together start a move exactly when the run
#: stops. Locust's own stop killed those moves after they were sent (12 of 15 runs finished); the
#: harness now starts no move after the stop and lets those in flight finish.
SECONDS = 9


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with serve_streamlit() as server:
        yield server.url


def _open(url: str, page: str) -> StreamlitSession:
    """A session on a link that opens every folded section (``ui.sections``): every control."""
    session = StreamlitSession(url, page, link=dict.fromkeys(fold_keys(page), "true"))
    session.connect()
    opened = session.open()
    assert opened.ok, f"{page}: {opened.error}"
    return session


def test_only_loopback_is_a_target():
    assert loopback_port("http://127.0.0.1:8501") == 8501
    for host in (
        "http://localhost:8501",
        "http://10.1.2.3:8501",
        "http://example.com:80",
        "https://127.0.0.1:8501",
        "http://127.0.0.1",
        "http://127.0.0.1:8501/kernel-regression",
    ):
        with pytest.raises(LoadTargetError):
            loopback_port(host)


def test_load_pages_are_lesson_pages_without_training():
    from lessons import LESSONS

    assert set(LOAD_PAGES) <= {lesson.url_path for lesson in LESSONS}
    assert not set(LOAD_PAGES) & {"home", "training", "in-context", "induction-heads"}


@pytest.mark.parametrize("page", LOAD_PAGES)
def test_every_control_moves_and_reruns(server_url, page):
    session = _open(server_url, page)
    try:
        controls = session.movable()
        assert controls, f"no slider or select-slider found on {page}"
        assert not [c.key for c in controls if c.fold]  # the link opened every fold
        assert not {c.key for c in controls} & TRAINING_CONTROLS
        rng = random.Random(0)
        moves = [session.move(rng, key=c.key) for c in controls]
        assert [(m.control, m.error) for m in moves if not m.ok] == []
        # The new values reached the server: what it draws changed ...
        assert any(m.changed for m in moves), [(m.control, m.changed) for m in moves]
        # ... and not because every run draws something new. (The first full run after a fragment's
        # runs inside a folded section redraws that section at the places of a full run, which the
        # fragment's deltas numbered from its own container: it re-baselines the page.)
        assert session.rerun().ok
        still = session.rerun()
        assert still.ok, still.error
        assert still.changed == 0
        assert session.sent == session.finished
    finally:
        session.close()


def test_three_students_for_nine_seconds(server_url, tmp_path):
    out = tmp_path / "load.json"
    subprocess.run(
        [
            sys.executable, "-m", "benchmarks", "load", "--users", str(USERS), "--seconds", str(SECONDS),
            "--host", server_url, "--seed", "0", "--json", str(out),
        ],
        cwd=ROOT,
        check=True,
        timeout=240,
    )  # fmt: skip
    result = json.loads(out.read_text())
    assert result["errors"] == 0, result["error_messages"]
    assert result["opens"] >= USERS
    assert result["sent"] == result["finished"], "a script run never got its script_finished"
    assert result["reruns"] >= 2 * USERS
    assert result["changed"] >= 1, "no move changed what a page shows"
    assert result["p95_s"] is not None
    assert result["peak_rss_bytes"] is not None
