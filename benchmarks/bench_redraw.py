"""What a chart element of our own would save on a live slider's release (issue 25), replayed.

``python -m benchmarks redraw [--repeats N] [--sliders KEY ...]`` (part of ``make bench``). The
release -> settled target (p50 <= 250 ms) is not met on the sliders that redraw the heaviest charts
(``make bench-drag``): after the run, the browser's time goes mostly to Plotly, and Streamlit 1.67
draws every changed chart twice. This measures that part alone, and what a v2 component that keeps
its ``div`` would do instead, in one Chromium run:

- each live slider of ``benchmarks.bench_drag.SLIDERS`` is set (AppTest, questions answered, the
  page's own code) to the values at both ends of bench-drag's drag, and the figures it redraws
  are taken as ``st.plotly_chart`` sends them;
- a blank page loads the pinned plotly wheel's ``plotly.min.js`` (offline) and, alternating
  between the two values (``--repeats`` times, default 8):

  * **Streamlit 1.67's way** (``st.plotly_chart``): a changed figure is a new element, so it is
    drawn into a new ``div`` (``Plotly.react`` on an empty one), then drawn again once the element
    has re-applied its theme to a JSON copy of the figure, the title bolded once more (bench-drag
    counts the two ``plotly_afterplot`` of every redrawn chart in the app);
  * **one Plotly.react on the kept element**: the new figure drawn where the old one was.

Printed per chart and per slider (the sum of its charts): the p50 of each way, in ms, and their
ratio. Both run in the same page and process, interleaved. This is Plotly's part only: the app's
settle time also holds the commit, the script run and React's rendering (bench-drag).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import plotly

from benchmarks.bench_browser import CHROMIUM_FLAGS, VIEWPORT
from benchmarks.bench_drag import SLIDERS
from tests.e2e.conftest import chromium_path

#: The plotly.js that the pinned plotly wheel ships (4.1.1; Streamlit 1.67 bundles 4.2.0 in a chunk
#: of its own that a page cannot load).
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
#: The app's chart width at 1400 px (bench-drag's viewport): Streamlit sets it on the element.
WIDTH = 940

#: ``repeats`` timed redraws of one chart, alternating between its two figures (the first drawn
#: before timing), the Streamlit way (``mode`` "streamlit") or onto the kept element ("kept");
#: returns the ms of each (the drawings awaited, the layout read once after them).
_REPLAY = """async ([figs, mode, repeats, width]) => {
  const copy = (x) => JSON.parse(JSON.stringify(x));
  const sized = (f) => { const g = copy(f); g.layout.width = width; return g; };
  const config = {displayModeBar: false};
  const host = document.getElementById('host');
  host.innerHTML = '';
  let div = document.createElement('div');
  host.appendChild(div);
  const first = sized(figs[0]);
  await Plotly.react(div, first.data, first.layout, config);
  const times = [];
  for (let i = 1; i <= repeats; i++) {
    const f = sized(figs[i % 2]);
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    const t0 = performance.now();
    if (mode === 'streamlit') {
      div.remove();
      div = document.createElement('div');
      host.appendChild(div);
      await Plotly.react(div, f.data, f.layout, config);
      const themed = copy(f);
      const title = themed.layout.title;
      if (title && typeof title.text === 'string') title.text = '<b>' + title.text + '</b>';
      await Plotly.react(div, themed.data, themed.layout, config);
    } else {
      await Plotly.react(div, f.data, f.layout, config);
    }
    div.getBoundingClientRect();
    times.push(performance.now() - t0);
  }
  return times;
}"""


def _values(data: dict[str, Any], fractions: tuple[float, float]) -> list[Any]:
    """The slider's values at two fractions of its track (its component data: options or range)."""
    out = []
    for f in fractions:
        if data.get("options"):
            options = data["options"]
            out.append(options[round(f * (len(options) - 1))])
        else:
            lo, hi, step = data["min"], data["max"], data["step"]
            out.append(round(lo + round(f * (hi - lo) / step) * step, 10))
    return out


def figures(path: str, params: dict[str, str], key: str, fractions: tuple[float, float], charts) -> dict:
    """{chart key: [spec at value 1, spec at value 2]} as the app sends them (AppTest)."""
    from tests.app.conftest import open_page
    from tests.app.live import live_slider

    at = open_page(path, params=params, folded=True)
    values = _values(live_slider(at, key).data, fractions)
    out: dict[str, list[dict]] = {c: [] for c in charts}
    for value in values:
        at = open_page(path, params={**params, key: str(value)}, folded=True)
        for element in at.get("plotly_chart"):
            chart = element.proto.id.rsplit("-", 1)[-1]
            if chart in out:
                out[chart].append(json.loads(element.proto.spec))
    missing = [c for c, specs in out.items() if len(specs) != 2]
    if missing:
        raise RuntimeError(f"{key}: charts {missing} not drawn at both values {values}")
    return {"values": values, "charts": out}


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks redraw", description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=8, help="redraws per chart and way (default 8)")
    parser.add_argument("--sliders", nargs="*", help="only these URL keys (default: every live slider)")
    args = parser.parse_args(list(argv))
    exe = chromium_path()
    if exe is None:
        raise SystemExit("no Chromium: install it (`apt-get install -y chromium`) or set CHROMIUM_PATH")
    from playwright.sync_api import sync_playwright

    start = time.monotonic()
    built = [
        (key, figures(path, params, key, (a, b), charts))
        for path, params, key, a, b, charts in SLIDERS
        if not args.sliders or key in args.sliders
    ]
    rows = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.set_content(f"<div id=host style='width:{WIDTH}px'></div>")
            page.add_script_tag(path=str(PLOTLY_JS))  # offline: the wheel's file, no CDN
            for key, found in built:
                per_chart = {}
                for chart, specs in found["charts"].items():
                    times: dict[str, list[float]] = {"streamlit": [], "kept": []}
                    for mode in ("streamlit", "kept", "kept", "streamlit"):  # interleaved
                        times[mode] += page.evaluate(_REPLAY, [specs, mode, args.repeats, WIDTH])
                    per_chart[chart] = {m: statistics.median(ts) for m, ts in times.items()}
                rows.append((key, found["values"], per_chart))
        finally:
            browser.close()
    print(f"Plotly's part of a release, replayed at {WIDTH} px (p50 of {2 * args.repeats} redraws each, ms):")
    print(f"{'slider / chart':<22} {'Streamlit 1.67':>15} {'kept element':>13} {'ratio':>6}")
    for key, values, per_chart in rows:
        st_sum = sum(c["streamlit"] for c in per_chart.values())
        kept_sum = sum(c["kept"] for c in per_chart.values())
        name = f"{key} {'/'.join(map(str, values))}"
        print(f"{name:<22} {st_sum:15.1f} {kept_sum:13.1f} {kept_sum / st_sum:6.2f}")
        for chart, c in per_chart.items():
            print(f"  {chart:<20} {c['streamlit']:15.1f} {c['kept']:13.1f} {c['kept'] / c['streamlit']:6.2f}")
    print(f"({time.monotonic() - start:.0f} s)")


if __name__ == "__main__":
    main(sys.argv[1:])
