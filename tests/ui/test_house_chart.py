"""``ui.house_chart`` without a browser: the theme merge, the themed figure, plotly.js served."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import numpy as np
import plotly.graph_objects as go

from ui import house_chart
from ui.house_chart import PLOTLY_JS, VENDOR_DIR, figure_json, merged, plotly_js_name, theme, themed
from ui.plotly_spec import Marks


def test_merged_is_a_deep_merge_that_leaves_its_inputs_alone():
    base = {"font": {"size": 15, "color": "#000"}, "title": {"x": 0.5}, "keep": 1}
    over = {"font": {"size": 12}, "title": {"pad": {"l": 4}}, "new": [1, 2]}
    assert merged(base, over) == {
        "font": {"size": 12, "color": "#000"},
        "title": {"x": 0.5, "pad": {"l": 4}},
        "keep": 1,
        "new": [1, 2],
    }
    assert base == {"font": {"size": 15, "color": "#000"}, "title": {"x": 0.5}, "keep": 1}
    assert over == {"font": {"size": 12}, "title": {"pad": {"l": 4}}, "new": [1, 2]}


def test_themed_figure_has_the_theme_in_its_template_and_a_bold_title():
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]), layout={"title": {"text": "h = 0.3"}, "height": 300})
    spec = themed(fig)
    assert spec["layout"]["title"]["text"] == "<b>h = 0.3</b>"
    assert spec["layout"]["height"] == 300
    template = spec["layout"]["template"]["layout"]
    assert template["font"]["size"] == theme()["font"]["size"] == 12  # Streamlit's, over the house 15
    assert template["xaxis"]["title"]["standoff"] == theme()["xaxis"]["title"]["standoff"]
    assert fig.layout.title.text == "h = 0.3"  # the figure itself is untouched
    assert fig.layout.template.layout.font.size != 12


def test_figure_json_is_made_once_per_figure_and_is_plotly_json():
    fig = go.Figure(go.Heatmap(z=np.arange(6.0).reshape(2, 3)))
    text = figure_json(fig)
    assert figure_json(fig) is text  # kept with the figure
    spec = json.loads(text)
    assert spec["data"][0]["type"] == "heatmap"
    assert spec["layout"]["template"]["layout"]["paper_bgcolor"] == theme()["paper_bgcolor"]


def test_data_carries_marks_and_reads_back():
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]), layout={"shapes": [{"type": "line", "x0": 0, "x1": 1}]})
    mark = {"type": "line", "x0": 1.5, "x1": 1.5, "name": "d_k"}
    label = {"text": "current d_k", "x": 1.5, "showarrow": False}
    text = house_chart.data_text(fig, Marks(shapes=(mark,), annotations=(label,)), {"displaylogo": False})
    head = json.loads(text.partition("\n")[0])
    assert head["marks"] == {"shapes": [mark], "annotations": [label]}
    assert "sendChartToCloud" in head["config"]["modeBarButtonsToRemove"]  # as Streamlit removes it
    spec = house_chart.figure_of(text)
    assert [s.get("name") for s in spec["layout"]["shapes"]] == [None, "d_k"]
    assert spec["layout"]["annotations"] == [label]


def test_plotly_js_is_served_from_a_copy_of_the_wheels_file():
    name = plotly_js_name()
    served = VENDOR_DIR / name
    assert served.read_bytes() == PLOTLY_JS.read_bytes()
    assert name.endswith(".min.js")
    assert "/app/static/vendor/" + name in house_chart.data_text(go.Figure(), None, {}).partition("\n")[0]


class _Text(HTMLParser):
    """The text of the ``div.attn-figure`` of an HTML page, as a browser's parser reads it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.inside, self.hidden, self.parts = False, False, []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "div" and ("class", "attn-figure") in attrs:
            self.inside, self.hidden = True, any(name == "hidden" for name, _ in attrs)

    def handle_endtag(self, tag: str) -> None:
        self.inside = self.inside and tag != "div"

    def handle_data(self, data: str) -> None:
        if self.inside:
            self.parts.append(data)


def test_the_figure_written_into_the_page_reads_back_as_the_components_data():
    # markup, entities and Chinese in the figure's texts: the page's copy must read back unchanged
    title = "<i>f</i>(x) & 核回归 < 1 > 0 \"q\" 'k'"
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4], name="</div><script>x</script>"), layout={"title": title})
    data = house_chart.data_text(fig, None, {})
    parser = _Text()
    parser.feed(house_chart.figure_html(data))
    parser.close()
    assert parser.hidden
    assert "".join(parser.parts) == data
    assert "<script>" not in house_chart.figure_html(data)
    # the tests' reader of the page copy reads the same data and figure
    assert house_chart.copy_data(house_chart.figure_html(data)) == data
    assert house_chart.figure_of(house_chart.figure_html(data)) == house_chart.figure_of(data)
    name = house_chart.figure_of(house_chart.figure_html(data))["data"][0]["name"]
    assert name == "</div><script>x</script>"


def _kept_chart_page() -> None:
    import numpy as np
    import plotly.graph_objects as go

    from ui.house_chart import house_chart

    x = np.linspace(0.0, 1.0, 2000)
    fig = go.Figure(go.Scatter(x=x, y=np.sin(7 * x), name="fit-7f3a"), layout={"title": "h = 0.3"})
    house_chart(fig, key="kept", config={"displaylogo": False})


def test_the_figure_travels_once_in_the_page_and_the_component_names_it():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_kept_chart_page).run()
    assert not at.exception
    nodes = list(at._tree)
    copies = [n.proto.body for n in nodes if n.type == "html"]
    components = [json.loads(n.proto.json) for n in nodes if n.type == "bidi_component"]
    assert len(copies) == len(components) == 1
    assert "fit-7f3a" in copies[0]
    assert len(copies[0]) > 20_000  # 2000 points
    assert "fit-7f3a" not in components[0]  # the head and a digest only
    assert len(components[0]) < 1000
    head, _, digest = components[0].partition("\n")
    escaped = head.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert copies[0].startswith(f'<div class="attn-figure" hidden>{escaped}\n')
    assert re.fullmatch("[0-9a-f]{16}", digest)
    spec = house_chart.figure_of(copies[0])
    assert spec["data"][0]["name"] == "fit-7f3a"
    assert spec["layout"]["title"]["text"] == "<b>h = 0.3</b>"
