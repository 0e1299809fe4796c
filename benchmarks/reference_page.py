"""The one-chart reference page of the page benchmarks (issue 8): one slider, one Plotly line chart.

``bench_pages`` runs it with ``AppTest`` next to the app's pages, ``bench_browser`` serves it with a
second ``streamlit run benchmarks/reference_page.py``. It is the floor a page of this app can reach
on this machine: the same Streamlit, the same house template (``figures.common.base_layout``), a
200-point line and nothing else. Not a page of the app: nothing links to it. ``?elements=N`` adds N
elements under the chart that the slider does not change (``filler``): the drag benchmark's second
floor, what a page's elements alone cost a release.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # ``streamlit run`` puts only this folder on sys.path
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import plotly.graph_objects as go  # noqa: E402
import streamlit as st  # noqa: E402

from figures.common import base_layout  # noqa: E402

POINTS = 200
#: The most elements ``?elements=N`` adds under the chart.
MAX_ELEMENTS = 400


def elements_asked() -> int:
    """``?elements=N`` (0 to :data:`MAX_ELEMENTS`): elements added under the chart; 0 without it."""
    try:
        n = int(st.query_params.get("elements", "0"))
    except ValueError:
        return 0
    return min(max(n, 0), MAX_ELEMENTS)


def filler(n: int) -> None:
    """``n`` elements of the kinds a page of the app has under its charts, in turn: a folded expander
    holding one line (the numbers, the code), a caption (the "what to look for" note), a download
    button (the CSV) and a paragraph. None changes with the slider: what a release costs a page for
    its elements alone (``python -m benchmarks drag``)."""
    for i in range(n):
        kind = i % 4
        if kind == 0:
            with st.expander(f"Fold {i}"):
                st.markdown(f"Inside fold {i}: **numbers** and code.")
        elif kind == 1:
            st.caption(f":material/visibility: A note {i} under a chart, with $x^2$.")
        elif kind == 2:
            st.download_button("Download", data="a,b\n1,2\n", key=f"ref_download_{i}", on_click="ignore")
        else:
            st.markdown(f"Paragraph {i}: *kernel* regression, **attention**.")


def main() -> None:
    st.set_page_config(page_title="Reference page", layout="wide")
    st.title("Reference page")
    frequency = st.slider("Frequency", min_value=0.5, max_value=5.0, value=1.0, step=0.05, key="ref_f")
    x = np.linspace(-3, 3, POINTS)
    fig = go.Figure(go.Scatter(x=x, y=np.sin(frequency * x), mode="lines", name="sin"))
    base_layout(fig, title=f"sin({frequency:g} x)")
    st.plotly_chart(fig, width="stretch", key="ref_chart")
    filler(elements_asked())


if __name__ == "__main__":
    main()
