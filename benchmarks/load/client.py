"""A small Streamlit websocket client: one browser tab as the server sees it, without the browser.

It speaks the protocol of ``streamlit.web.server.starlette.starlette_websocket``: a websocket on
``/_stcore/stream`` with the subprotocol ``streamlit``, binary ``BackMsg`` protobufs out and
``ForwardMsg`` protobufs in. A script run is requested with ``BackMsg.rerun_script`` (a
``ClientState``: the page's ``page_name`` = its URL path, the query string, the widget states and,
for a control inside an ``st.fragment``, the fragment's id) and ends with a ``script_finished``
ForwardMsg. ``FINISHED_EARLY_FOR_RERUN`` (the app called ``st.rerun``) is not the end: the run that
follows is waited for too.

Controls are discovered from the deltas the server sends: each ``Slider`` proto (``st.slider`` and
``st.select_slider``) carries its ``id``, range, step, options, ``query_param_key`` and the id of
the fragment that drew it. Moving one sends every value this tab has set so far (as the frontend's
widget manager does), the moved one at a fresh random value: a step of the slider, never the value
it has now. A bound control's value is also written into the query string, as the browser writes
it into the URL.

A question (``ui.questions``) holds back what answers it until the student presses Check or "Show
me": after a full run that drew questions (opening the page, opening a fold) the session presses
"Show me" on each in one more run (as a student who tried them; ``answers=False``: one who does
not), so moving a control then redraws what a student sees. The answers are never in the URL, so
a link cannot open them.

A folded section (``ui.sections``: a closed expander that runs its section once opened) is a
control too: "moving" it opens it, as a student clicks its title (a boolean widget state, and
``open_...=true`` in the query string); an open fold is not moved again. A session may also start
from a link's query string (``link``), e.g. one that opens every fold.

Each run also counts the elements (content, not controls) that differ from what the same place of
the page showed before: evidence that a move reached the server and changed what it draws.

Cookies are kept as a browser keeps them: a session first loads its page over HTTP (as a browser
loads the URL), sending the cookies it holds and keeping those the response sets, then opens the
websocket with them. A Locust student passes one jar to every session it opens, so behind
``make serve`` the ``STREAMLIT_REPLICA`` cookie that HAProxy set on the student's first response pins
the student's page loads, websockets and reloads to one replica. The ``X-Replica`` header the proxy
adds says which replica answered the page and which took the websocket (both ``None`` without a
proxy).

A rerun is an error when its ForwardMsgs contain an exception element, a script compilation error or
"page not found", when it does not finish within the timeout, or when the connection drops.

It uses ``websocket-client`` (blocking sockets): under Locust, gevent's monkey-patching makes it
cooperative; elsewhere (the tests) it is a plain blocking client.
"""

from __future__ import annotations

import contextlib
import random
import time
import urllib.request
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import websocket
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.Slider_pb2 import Slider
from streamlit.proto.WidgetStates_pb2 import WidgetState

from lessons import LESSONS

STREAM_PATH = "/_stcore/stream"
SUBPROTOCOL = "streamlit"
#: The header ``deploy/haproxy.cfg`` adds to every response: the name of the replica that answered.
REPLICA_HEADER = "X-Replica"
#: The lesson's pages a student opens (URL paths of lessons.LESSONS). Not home (no controls), not the
#: pages whose controls train a model (``Lesson.trains``: training, in-context).
LOAD_PAGES: tuple[str, ...] = tuple(lesson.url_path for lesson in LESSONS if not lesson.trains)
#: Keys of sliders that train a model on every step (the learnable kernel on kernels-to-attention):
#: never moved, like the Run buttons.
TRAINING_CONTROLS = frozenset({"k2a_steps", "k2a_lr", "k2a_h0"})
#: Seconds a rerun may take before it counts as an error.
RERUN_TIMEOUT_S = 120.0
_ID_PREFIX = "$$ID-"
#: Element types that are controls or effects, not content: left out of "what the page shows".
_NOT_CONTENT = frozenset(
    {
        "audio_input", "balloons", "button", "button_group", "camera_input", "chat_input", "checkbox",
        "color_picker", "date_input", "date_time_input", "download_button", "feedback", "file_uploader",
        "link_button", "menu_button", "multiselect", "number_input", "page_link", "pagination", "radio",
        "selectbox", "skeleton", "slider", "snow", "spinner", "text_area", "text_input", "time_input",
        "toast",
    }
)  # fmt: skip
#: Where an element sits on the page (ForwardMsg.metadata.delta_path).
Place = tuple[int, ...]


class LoadTargetError(ValueError):
    """The host is not a plain http://127.0.0.1:PORT address."""


def loopback_port(host: str) -> int:
    """The port of ``http://127.0.0.1:PORT``; anything else (another host, localhost, a path) is refused."""
    parts = urlsplit(host)
    if parts.scheme != "http" or parts.hostname != "127.0.0.1" or parts.port is None:
        raise LoadTargetError(f"the load generator only targets http://127.0.0.1:PORT, not {host!r}")
    if parts.path not in ("", "/") or parts.query or parts.username or parts.password:
        raise LoadTargetError(f"give the server's root, http://127.0.0.1:PORT, not {host!r}")
    return parts.port


def stream_url(host: str) -> str:
    """The websocket URL of the Streamlit server at ``host`` (loopback only)."""
    return f"ws://127.0.0.1:{loopback_port(host)}{STREAM_PATH}"


def _is_show_me(widget_id: str) -> bool:
    """Whether a button is a question's "Show me" (``ui.questions``: key ``q_<qid>_show``)."""
    key = control_key(widget_id)
    return key.startswith("q_") and key.endswith("_show")


def control_key(widget_id: str) -> str:
    """The user key of a widget id (``$$ID-<hash>-<key>``), or the id itself when it has none."""
    if widget_id.startswith(_ID_PREFIX):
        return widget_id[len(_ID_PREFIX) :].split("-", 1)[-1]
    return widget_id


@dataclass(frozen=True)
class Control:
    """A slider or select-slider as the server described it, or a folded section (``fold``)."""

    id: str
    key: str
    select: bool  # select_slider: values are option indices, sent as option strings
    lo: float
    hi: float
    step: float
    integer: bool
    options: tuple[str, ...]
    value: tuple[float, ...]  # the value it shows (indices for a select-slider)
    server_set: bool  # the value was set by the app, not the default
    fragment_id: str
    query_param_key: str
    fold: bool = False  # a folded section's expander: 0 = closed, 1 = open

    @classmethod
    def from_fold(cls, e: Any, fragment_id: str) -> Control:
        """A folded section's expander (``Block.Expandable`` with an id): open = 1, closed = 0."""
        opened = float(bool(e.expanded))
        return cls(
            id=e.id, key=control_key(e.id), select=False, lo=0.0, hi=1.0, step=1.0, integer=True, options=(),
            value=(opened,), server_set=False, fragment_id=fragment_id, query_param_key=e.query_param_key,
            fold=True,
        )  # fmt: skip

    @classmethod
    def from_proto(cls, w: Slider, fragment_id: str) -> Control:
        value = tuple(w.default)
        if w.set_value and w.type == Slider.SELECT_SLIDER and w.raw_value:
            # select_slider sends a value the app set as option strings (raw_value)
            options = list(w.options)
            if all(v in options for v in w.raw_value):
                value = tuple(float(options.index(v)) for v in w.raw_value)
        elif w.set_value and w.value:
            value = tuple(w.value)
        return cls(
            id=w.id,
            key=control_key(w.id),
            select=w.type == Slider.SELECT_SLIDER,
            lo=w.min,
            hi=w.max,
            step=w.step or 1.0,
            integer=w.data_type == Slider.INT,
            options=tuple(w.options),
            value=value,
            server_set=w.set_value,
            fragment_id=fragment_id,
            query_param_key=w.query_param_key,
        )

    @property
    def movable(self) -> bool:
        if self.fold:
            return True  # whether it is still closed: StreamlitSession.movable
        return self.key not in TRAINING_CONTROLS and self.n_steps >= 1 and len(self.value) in (1, 2)

    @property
    def n_steps(self) -> int:
        return round((self.hi - self.lo) / self.step)

    def at(self, k: int) -> float:
        """The value of step ``k`` (0 .. n_steps), as the widget would hold it."""
        v = round(self.lo + k * self.step, 10)
        return float(round(v)) if self.integer or self.select else v

    def fresh_value(self, rng: random.Random, current: tuple[float, ...]) -> tuple[float, ...]:
        """A random value on the slider's steps that differs from ``current`` (a fold: open)."""
        if self.fold:
            return (1.0,)
        while True:
            if len(current) == 2:
                a, b = sorted(rng.sample(range(self.n_steps + 1), 2))
                value = (self.at(a), self.at(b))
            else:
                value = (self.at(rng.randint(0, self.n_steps)),)
            if value != tuple(current):
                return value

    def state(self, value: tuple[float, ...]) -> WidgetState:
        """The WidgetState the frontend sends for this value."""
        ws = WidgetState(id=self.id)
        if self.fold:
            ws.bool_value = bool(value[0])
        elif self.select:
            ws.string_array_value.data.extend(self.options[int(i)] for i in value)
        else:
            ws.double_array_value.data.extend(value)
        return ws

    def url_value(self, value: tuple[float, ...]) -> str:
        if self.fold:
            return "true" if value[0] else "false"
        if self.select:
            return self.options[int(value[0])]
        return str(int(value[0])) if self.integer else repr(value[0])


@dataclass(frozen=True)
class Rerun:
    """One script run as the client saw it."""

    page: str
    control: str  # the moved control's key; "" for opening the page
    seconds: float  # send -> final script_finished (or -> the error)
    finished: bool  # a final script_finished arrived
    error: str | None
    changed: int  # elements whose content differs from what the same place showed before
    elements: int  # deltas received
    nbytes: int
    fragment: bool

    @property
    def ok(self) -> bool:
        return self.finished and self.error is None


@dataclass
class StreamlitSession:
    """One tab on one page of the app at ``host`` (``http://127.0.0.1:PORT``)."""

    host: str
    page: str
    locale: str = "en-US"
    timeout: float = RERUN_TIMEOUT_S
    sent: int = 0
    finished: int = 0
    in_flight: bool = False  # a script run was sent and its script_finished is awaited
    broken: bool = False
    controls: dict[str, Control] = field(default_factory=dict)
    #: The browser's cookies for this host (name -> value); pass one dict to share it between tabs.
    cookies: dict[str, str] = field(default_factory=dict)
    #: The query string of the link the tab was opened with (e.g. ``{"open_sdp_nan": "true"}``).
    link: dict[str, str] = field(default_factory=dict)
    page_replica: str | None = None  # X-Replica of the page load (None: no proxy in front)
    replica: str | None = None  # X-Replica of the websocket handshake
    _ws: websocket.WebSocket | None = None
    _states: dict[str, WidgetState] = field(default_factory=dict)
    _values: dict[str, tuple[float, ...]] = field(default_factory=dict)
    _query: dict[str, str] = field(default_factory=dict)
    _elements: dict[Place, int] = field(default_factory=dict)
    #: Whether the student tries the questions: "Show me" is pressed on each as it appears.
    answers: bool = True
    #: Ids of the "Show me" buttons the last full run drew (questions not tried yet).
    _show_me: set[str] = field(default_factory=set)

    def connect(self) -> None:
        """Load the page over HTTP, then open the websocket, each with the cookies held so far."""
        self.load_page()
        self._ws = websocket.create_connection(
            stream_url(self.host),
            subprotocols=[SUBPROTOCOL],
            suppress_origin=True,
            timeout=self.timeout,
            cookie=self._cookie_header(),
        )
        headers = self._ws.getheaders() or {}
        self._keep_cookies(headers.get("set-cookie"))
        self.replica = headers.get(REPLICA_HEADER.lower())

    def load_page(self) -> None:
        """GET the page's URL as a browser does before it opens the websocket (its HTML, no assets)."""
        request = urllib.request.Request(f"http://127.0.0.1:{loopback_port(self.host)}/{self.page}")
        if self.cookies:
            request.add_header("Cookie", self._cookie_header())
        with urllib.request.urlopen(request, timeout=self.timeout) as response:
            response.read()
            for set_cookie in response.headers.get_all("Set-Cookie") or ():
                self._keep_cookies(set_cookie)
            self.page_replica = response.headers.get(REPLICA_HEADER)

    def _cookie_header(self) -> str | None:
        return "; ".join(f"{k}={v}" for k, v in self.cookies.items()) or None

    def _keep_cookies(self, set_cookie: str | None) -> None:
        if set_cookie:
            self.cookies.update({name: morsel.value for name, morsel in SimpleCookie(set_cookie).items()})

    def close(self) -> None:
        if self._ws is not None:
            with contextlib.suppress(OSError, websocket.WebSocketException):
                self._ws.close(timeout=1)
            self._ws = None

    def open(self) -> Rerun:
        """The first run of the page, as a browser loading its URL (with the ``link``'s query)."""
        self._query = {**self.link, **self._query}
        return self._answered(self._run(control=None))

    def _answered(self, run: Rerun) -> Rerun:
        """After a full run that drew questions not tried yet (``answers``): the run that presses
        "Show me" on each, returned instead (the page as a student sees it once they tried them)."""
        if not self.answers or not run.ok or run.fragment or not self._show_me:
            return run
        return self._run(control=None, press=tuple(sorted(self._show_me)))

    def rerun(self) -> Rerun:
        """A full rerun with nothing changed."""
        return self._run(control=None)

    def movable(self, *, folds: bool = True) -> list[Control]:
        """Controls that can move now, by key: sliders, and folds still closed (unless not ``folds``)."""
        return sorted((c for c in self.controls.values() if self._can_move(c, folds)), key=lambda c: c.key)

    def _can_move(self, c: Control, folds: bool) -> bool:
        if c.fold:
            return folds and not self._values.get(c.id, c.value)[0]  # only a closed fold opens
        return c.movable

    def move(self, rng: random.Random, key: str | None = None) -> Rerun:
        """Move one control (``key``, or a random one) to a fresh value and time the rerun."""
        choices = self.movable()
        if key is not None:
            choices = [c for c in choices if c.key == key]
        if not choices:
            return Rerun(self.page, key or "", 0.0, False, "no control to move", 0, 0, 0, False)
        control = rng.choice(choices)
        value = control.fresh_value(rng, self._values.get(control.id, control.value))
        self._values[control.id] = value
        self._states[control.id] = control.state(value)
        if control.query_param_key:
            self._query[control.query_param_key] = control.url_value(value)
        return self._answered(self._run(control=control))  # an opened fold may hold a question

    def _client_state(self, control: Control | None, press: tuple[str, ...] = ()) -> bytes:
        msg = BackMsg()
        cs = msg.rerun_script
        cs.page_name = self.page
        cs.query_string = urlencode(self._query)
        cs.widget_states.widgets.extend(self._states.values())
        cs.widget_states.widgets.extend(WidgetState(id=i, trigger_value=True) for i in press)  # clicks
        if control is not None and control.fragment_id:
            cs.fragment_id = control.fragment_id
        cs.context_info.locale = self.locale
        cs.context_info.timezone = "UTC"
        cs.context_info.url = f"{self.host}/{self.page}"
        return msg.SerializeToString()

    def _run(self, control: Control | None, press: tuple[str, ...] = ()) -> Rerun:
        fragment = bool(control and control.fragment_id)
        name = control.key if control else ""
        if self._ws is None:
            self.connect()
        assert self._ws is not None
        payload = self._client_state(control, press)
        start = time.perf_counter()
        deadline = start + self.timeout
        self.sent += 1
        error: str | None = None
        finished = False
        elements = nbytes = 0
        seen: dict[str, Control] = {}
        drawn: dict[Place, int] = {}
        shows: set[str] = set()
        self.in_flight = True
        try:
            self._ws.send_binary(payload)
            while True:
                self._ws.settimeout(max(0.001, deadline - time.perf_counter()))
                raw = self._ws.recv()
                nbytes += len(raw)
                fwd = ForwardMsg()
                fwd.ParseFromString(raw)
                kind = fwd.WhichOneof("type")
                if kind == "delta":
                    elements += 1
                    self._note_delta(fwd, seen, drawn, shows)
                    if error is None and _is_exception(fwd):
                        error = "exception: " + fwd.delta.new_element.exception.message[:200]
                elif kind == "page_info_changed":
                    self._query = dict(parse_qsl(fwd.page_info_changed.query_string))
                elif kind == "page_not_found":
                    error = error or f"page not found: {self.page}"
                elif kind == "session_event" and fwd.session_event.HasField("script_compilation_exception"):
                    exc = fwd.session_event.script_compilation_exception
                    error = error or f"compilation error: {exc.message[:200]}"
                elif kind == "script_finished":
                    status = fwd.script_finished
                    if status == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                        continue  # st.rerun(): the next run is part of this interaction
                    if status == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                        error = error or "script compile error"
                    finished = True
                    self.finished += 1
                    break
        except websocket.WebSocketTimeoutException:
            error = f"no script_finished within {self.timeout:g} s"
            self.broken = True
        except (OSError, websocket.WebSocketException) as exc:
            error = f"connection: {type(exc).__name__}: {exc}"
            self.broken = True
        finally:
            self.in_flight = False
        seconds = time.perf_counter() - start
        changed = sum(1 for p, d in drawn.items() if self._elements.get(p, d) != d)
        self._elements.update(drawn)
        if finished:
            self._update_controls(seen, full=not fragment)
            if not fragment:
                self._show_me = shows
        return Rerun(self.page, name, seconds, finished, error, changed, elements, nbytes, fragment)

    def _note_delta(
        self, fwd: ForwardMsg, seen: dict[str, Control], drawn: dict[Place, int], shows: set[str]
    ) -> None:
        """Note the element a delta draws (its place and content) and the controls among them.

        Only what the page shows counts: transient deltas (spinners) come and go at the place of an
        element in every run, and controls carry per-run fields (a download button's fresh file id,
        a one-shot ``set_value``); both would make an unchanged page look changed.
        """
        delta = fwd.delta
        kind = delta.WhichOneof("type")
        if kind == "add_block":
            drawn[tuple(fwd.metadata.delta_path)] = hash(delta.SerializeToString())
            block = delta.add_block
            if block.WhichOneof("type") == "expandable" and block.expandable.query_param_key.startswith(
                "open_"
            ):
                seen[block.expandable.id] = Control.from_fold(block.expandable, delta.fragment_id)
        if kind != "new_element":
            return
        element = delta.new_element.WhichOneof("type")
        if element not in _NOT_CONTENT:
            drawn[tuple(fwd.metadata.delta_path)] = hash(delta.SerializeToString())
        elif element == "button" and _is_show_me(delta.new_element.button.id):
            shows.add(delta.new_element.button.id)
        elif element == "slider":
            w = delta.new_element.slider
            if not w.disabled and not w.form_id:  # a form's slider waits for its submit button
                seen[w.id] = Control.from_proto(w, delta.fragment_id)

    def _update_controls(self, seen: dict[str, Control], *, full: bool) -> None:
        if full:
            self.controls = seen
            # Values of controls that are gone are no longer sent (the frontend forgets them too).
            for gone in set(self._states) - set(seen):
                self._states.pop(gone, None)
                self._values.pop(gone, None)
        else:
            self.controls.update(seen)
        for c in seen.values():
            if c.fold and c.id not in self._states:
                # the frontend sends the state of every expander it drew: open when the link opened it
                opened = bool(c.value[0]) or self.link.get(c.query_param_key) == "true"
                self._values[c.id] = (float(opened),)
                self._states[c.id] = c.state(self._values[c.id])
            if c.server_set:  # the app set the value (session state): the frontend adopts it
                self._values[c.id] = c.value
                self._states[c.id] = c.state(c.value)


def _is_exception(fwd: ForwardMsg) -> bool:
    delta = fwd.delta
    return delta.WhichOneof("type") == "new_element" and delta.new_element.WhichOneof("type") == "exception"
