"""What ``make serve`` promises a class, tested on the real processes (issue 22, item 9).

* A replica hides error details from students. No page of the lesson raises on purpose, and a
  debug hook in production code would be a door left open, so the test runs a replica exactly as
  ``deploy/serve.py`` starts one (``make_replicas``: same command line, production flags of
  ``deploy/streamlit-production.toml``, environment, working directory) on a three-line script
  that raises an exception with a recognisable message; then it reads every websocket frame the
  replica sends for that run, raw bytes, which is all a browser can ever show. The message, the
  exception's type, the function it came from and any "Traceback" must not be among them, while an
  exception element (the generic notice) must be. The same script on a replica whose only change
  is ``--client.showErrorDetails=full`` does send the message and the stack: the check can fail.
  HAProxy passes websocket frames through untouched (a tunnel), so the replica is asked directly.
* An upload without the XSRF token is refused: HTTP PUTs to Streamlit's upload route through
  HAProxy, into a live session on the replica that holds it, get 403 from the replica without the
  ``_streamlit_xsrf`` cookie, without the ``X-Xsrftoken`` header or with a token that does not match;
  the same upload with the cookie's token in the header is accepted (204).
* SIGTERM (what ``docker stop``, systemd and Kubernetes send), not only Ctrl+C, stops HAProxy and
  every replica: no process left, checked by pid (the last test: it stops the module's server).
"""

from __future__ import annotations

import contextlib
import signal
import textwrap
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import websocket
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from benchmarks.load.client import STREAM_PATH, SUBPROTOCOL
from deploy.serve import Replica, make_replicas, stop_processes, wait_healthy
from tests.serve.conftest import START_TIMEOUT_S, assert_stops_everything, free_base_port

#: In the exception's message only: if these bytes reach the websocket, so does the message.
SECRET = "grades-of-student-4711-are-in-/srv/private/marks.csv"
#: The function that raises: it is in the stack trace, and nowhere else.
FUNCTION = "compute_the_private_marks"
LEAKY_SCRIPT = f"""
import streamlit as st

def {FUNCTION}():
    raise KeyError({SECRET!r})

st.title("Before the error")
{FUNCTION}()
"""
XSRF_COOKIE = "_streamlit_xsrf"
REPLICA_COOKIE = "STREAMLIT_REPLICA"


# ---------------------------------------------------------------- a tab's first run, raw frames


@contextlib.contextmanager
def open_tab(http_url: str, cookies: dict[str, str] | None = None) -> Iterator[list[bytes]]:
    """A tab's websocket, open while the block runs: the frames of its first run of the default page.

    ``http_url``: ``http://127.0.0.1:PORT`` (a replica or the proxy). Yields the raw frames
    (serialised ``ForwardMsg``) up to and including the final ``script_finished``; the session
    lives on the server until the block ends and the websocket closes.
    """
    header = "; ".join(f"{k}={v}" for k, v in (cookies or {}).items()) or None
    ws = websocket.create_connection(
        http_url.replace("http://", "ws://") + STREAM_PATH,
        subprotocols=[SUBPROTOCOL],
        suppress_origin=True,
        timeout=120,
        cookie=header,
    )
    try:
        msg = BackMsg()
        msg.rerun_script.query_string = ""
        ws.send_binary(msg.SerializeToString())
        frames: list[bytes] = []
        while True:
            raw = ws.recv()
            frames.append(raw)
            fwd = ForwardMsg.FromString(raw)
            done = fwd.WhichOneof("type") == "script_finished"
            if done and fwd.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                break
        yield frames
    finally:
        ws.close()


def first_run(http_url: str) -> list[bytes]:
    """Every websocket frame the server sends for a new tab's first run (see ``open_tab``)."""
    with open_tab(http_url) as frames:
        return frames


def exceptions(frames: list[bytes]) -> list:
    """The exception elements (``Exception`` protos) among ``frames``."""
    found = []
    for raw in frames:
        fwd = ForwardMsg.FromString(raw)
        if fwd.WhichOneof("type") == "delta" and fwd.delta.new_element.WhichOneof("type") == "exception":
            found.append(fwd.delta.new_element.exception)
    return found


# ---------------------------------------------------------------- error details


def _replica_of(script: Path, tmp: Path, *, show: str | None = None) -> Replica:
    """One replica of ``script`` as ``deploy/serve.py`` makes it (``show``: another showErrorDetails)."""
    (replica,) = make_replicas(1, free_base_port(1), tmp, script=script)
    if show is not None:
        flag = "--client.showErrorDetails="
        assert sum(a.startswith(flag) for a in replica.argv) == 1, replica.argv
        replica.argv = [f"{flag}{show}" if a.startswith(flag) else a for a in replica.argv]
    return replica


@pytest.fixture(scope="module")
def leaky_script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("leaky") / "leaky_page.py"
    path.write_text(textwrap.dedent(LEAKY_SCRIPT))
    return path


@dataclass(frozen=True)
class Run:
    """The leaky script's first run on one replica: the frames a student got, the replica's log."""

    frames: list[bytes]
    log: Path


@pytest.fixture
def leaky_run(leaky_script: Path, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Run]:
    """The leaky script run once on a fresh replica (``request.param``: its showErrorDetails)."""
    replica = _replica_of(leaky_script, tmp_path, show=request.param)
    replica.start()
    try:
        wait_healthy([replica], START_TIMEOUT_S)
        yield Run(first_run(replica.url), replica.log_path)
    finally:
        stop_processes(replica.history)


@pytest.mark.parametrize("leaky_run", [None], indirect=True, ids=["production"])
def test_a_replica_hides_error_details_from_students(leaky_run):
    (shown,) = exceptions(leaky_run.frames)  # the student is told that something went wrong
    assert shown.message
    assert SECRET not in shown.message
    assert (shown.type, list(shown.stack_trace)) == ("", [])
    sent = b"".join(leaky_run.frames)
    for detail in (SECRET, FUNCTION, "KeyError", "Traceback", 'leaky_page.py", line'):
        assert detail.encode() not in sent, detail
    # The replica's log keeps it all, for the teacher (stderr is line-buffered: it is written).
    log = leaky_run.log.read_text(errors="replace")
    assert SECRET in log
    assert FUNCTION in log


@pytest.mark.parametrize("leaky_run", ["full"], indirect=True, ids=["full"])
def test_the_same_error_shows_its_details_when_allowed(leaky_run):
    # The twin of the test above, on a replica that differs by one flag: the check can fail.
    (shown,) = exceptions(leaky_run.frames)
    assert SECRET in shown.message
    assert shown.type == "KeyError"
    assert any(FUNCTION in line for line in shown.stack_trace)
    assert SECRET.encode() in b"".join(leaky_run.frames)


# ---------------------------------------------------------------- uploads and the XSRF token


def _get_cookies(url: str, cookies: dict[str, str] | None = None) -> dict[str, str]:
    """The cookies a GET of ``url`` sets (name -> value), on top of ``cookies``."""
    jar = dict(cookies or {})
    request = urllib.request.Request(url)
    if jar:
        request.add_header("Cookie", "; ".join(f"{k}={v}" for k, v in jar.items()))
    with urllib.request.urlopen(request, timeout=30) as response:
        for header in response.headers.get_all("Set-Cookie") or ():
            name, value = header.split(";", 1)[0].split("=", 1)
            jar[name.strip()] = value.strip()
    return jar


def _put_csv(url: str, cookies: dict[str, str], token: str | None) -> tuple[int, str | None]:
    """PUT a small CSV as the browser's uploader does; (HTTP status, X-Replica of the answer)."""
    boundary = "attention-lesson-test-boundary"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="mine.csv"\r\n'
        f"Content-Type: text/csv\r\n\r\nx,y\r\n0.1,0.2\r\n0.3,0.4\r\n--{boundary}--\r\n"
    ).encode()
    request = urllib.request.Request(url, data=body, method="PUT")
    request.add_header("Content-Type", f"multipart/form-data; boundary={boundary}")
    if cookies:
        request.add_header("Cookie", "; ".join(f"{k}={v}" for k, v in cookies.items()))
    if token is not None:
        request.add_header("X-Xsrftoken", token)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers.get("X-Replica")
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("X-Replica")


def test_an_upload_without_the_xsrf_token_is_refused(served):
    # A student's browser: the proxy pins it to a replica, which sets the XSRF cookie; its tab
    # opens a session there (the upload route only takes files for a live session).
    jar = _get_cookies(f"{served.url}/_stcore/health")
    replica, token = jar[REPLICA_COOKIE], jar[XSRF_COOKIE]
    with open_tab(served.url, jar) as frames:
        (hello,) = [m for m in map(ForwardMsg.FromString, frames) if m.WhichOneof("type") == "new_session"]
        upload = f"{served.url}/_stcore/upload_file/{hello.new_session.initialize.session_id}/file-1"
        # Another browser's token (a second visitor's cookie): valid in form, not this student's.
        other = _get_cookies(f"{served.url}/_stcore/health", {REPLICA_COOKIE: replica})[XSRF_COOKIE]
        assert other != token
        pinned = {REPLICA_COOKIE: replica}
        forged = [
            ("no cookie, no header", pinned, None),
            ("cookie, no header", jar, None),
            ("header, no cookie", pinned, token),
            ("another browser's token", jar, other),
        ]
        for what, cookies, header in forged:
            # Refused by the replica (X-Replica: the proxy passed the request on), not by the proxy.
            assert _put_csv(upload, cookies, header) == (403, replica), what
        # The browser's own upload: the cookie's token in the header. Accepted into the session.
        assert _put_csv(upload, jar, token) == (204, replica)


# ---------------------------------------------------------------- stopping (last: ends the server)


def test_sigterm_stops_every_process_it_started(served):
    assert_stops_everything(served, signal.SIGTERM)
