"""Marks drawn over a cached figure: what ``ui.layout.show_figure`` hands ``st.plotly_chart``.

A figure cached on its data (``ui.layout.cached``) is shown with marks that follow a control
(the current d_k on scaled dot-product). :class:`Marked` is the figure with its marks as the plain
dict ``st.plotly_chart`` accepts; it changes neither the figure nor Plotly. Without the server's
Plotly fast path, Plotly validates that dict into a new figure (~45 ms for the d_k chart); with it
(``server.plotly_spec``, installed by ``app.main``) the marks are added to the figure's dict, made
once per figure, and a step of the control costs one JSON serialisation (~0.5 ms). Both give the
same JSON (``tests/server/test_plotly_spec.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go


@dataclass(frozen=True)
class Marks:
    """Shapes and annotations drawn over a figure without rebuilding it (a moving marker).

    They are layout dicts as Plotly's validation would leave them
    (``figures.scaled_dot_product.vline_marks``).
    """

    shapes: tuple[dict, ...] = ()
    annotations: tuple[dict, ...] = ()

    def figure(self, fig: go.Figure) -> go.Figure:
        """A validated copy of ``fig`` with the marks (for exports such as the handout)."""
        out = go.Figure(fig)
        out.update_layout(
            shapes=[*fig.layout.shapes, *self.shapes],
            annotations=[*fig.layout.annotations, *self.annotations],
        )
        return out

    def over(self, fig: go.Figure) -> Marked:
        """``fig`` with these marks, for ``st.plotly_chart`` (nothing copied: the shared figure is kept)."""
        return Marked(fig, self)


class Marked(dict):
    """A figure and its marks, as the ``go.Figure(**kwargs)`` dict Plotly validates.

    The dict holds the figure's own trace and layout objects (not copied) and the layout's shapes
    and annotations with the marks appended; ``figure`` and ``marks`` are kept for the fast path.
    """

    def __init__(self, fig: go.Figure, marks: Marks) -> None:
        super().__init__(
            data=fig.data,
            layout=fig.layout,
            layout_shapes=[*fig.layout.shapes, *marks.shapes],
            layout_annotations=[*fig.layout.annotations, *marks.annotations],
        )
        self.figure = fig
        self.marks = marks
