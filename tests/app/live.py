"""Live sliders (``ui.live_slider``) in AppTest, which runs no JavaScript.

A live slider is a v2 component: AppTest sees an element with the component's data, not a slider.
The browser commits a value on release through the component's callback, which puts it into
``st.session_state[<key>]`` before the rerun; a test commits a value the same way
(:meth:`LiveSlider.set_value` then ``run()``), or through the URL (``?kr_h=1``, as a link does).
What the slider shows is read back from the component's data (:attr:`LiveSlider.value`).
"""

from __future__ import annotations

import json
from typing import Any

from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block

from ui.live_slider import COMPONENT_NAME


def live_elements(at: AppTest) -> dict[str, dict[str, Any]]:
    """{control key: the component's data} for every live slider drawn by the last run."""
    found: dict[str, dict[str, Any]] = {}

    def walk(node: Any) -> None:
        proto = getattr(node, "proto", None)
        if getattr(node, "type", None) == "bidi_component" and proto.component_name == COMPONENT_NAME:
            data = json.loads(json.loads(proto.json))  # the data is one JSON text (ui.live_slider._data)
            found[data["key"]] = data
        if isinstance(node, Block):
            for child in node.children.values():
                walk(child)

    walk(at._tree)
    return found


class LiveSlider:
    """The live slider ``key`` of an AppTest: ``value``, ``options``, ``set_value(v).run()``."""

    def __init__(self, at: AppTest, key: str) -> None:
        self.at, self.key = at, key

    @property
    def data(self) -> dict[str, Any]:
        sliders = live_elements(self.at)
        assert self.key in sliders, f"no live slider {self.key!r}; drawn: {sorted(sliders)}"
        return sliders[self.key]

    @property
    def value(self) -> Any:
        """The value the slider shows (the committed one)."""
        return self.data["value"]

    @property
    def options(self) -> list[Any]:
        return self.data["options"]

    @property
    def label(self) -> str:
        return self.data["label"]

    def set_value(self, value: Any) -> LiveSlider:
        """Commit ``value`` as the component's release does (call ``run()`` next)."""
        self.at.session_state[self.key] = value
        return self

    def run(self) -> AppTest:
        return self.at.run()


def live_slider(at: AppTest, key: str) -> LiveSlider:
    """The live slider ``key`` of the page ``at`` shows (fails when it is not drawn)."""
    slider = LiveSlider(at, key)
    slider.data  # noqa: B018 (fails early and clearly when the slider is not on the page)
    return slider
