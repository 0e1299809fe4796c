"""The one-chart reference page of the page benchmarks (issue 8): one slider, one Plotly line chart.

``bench_pages`` runs it with ``AppTest`` next to the app's pages, ``bench_browser`` serves it with a
second ``streamlit run benchmarks/reference_page.py``. It is the floor a page of this app can reach
on this machine: the same Streamlit, the same house template (``figures.common.base_layout``), a
200-point line and nothing else. Not a page of the app: nothing links to it.
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


def main() -> None:
    st.set_page_config(page_title="Reference page", layout="wide")
    st.title("Reference page")
    frequency = st.slider("Frequency", min_value=0.5, max_value=5.0, value=1.0, step=0.05, key="ref_f")
    x = np.linspace(-3, 3, POINTS)
    fig = go.Figure(go.Scatter(x=x, y=np.sin(frequency * x), mode="lines", name="sin"))
    base_layout(fig, title=f"sin({frequency:g} x)")
    st.plotly_chart(fig, width="stretch", key="ref_chart")


if __name__ == "__main__":
    main()
