"""What ``ui.layout.show_figure`` adds to a rerun per figure: the CSV button and the handout record.

``python -m benchmarks show_figure``. Inside one Streamlit script run (``AppTest``), the same
kernel-regression fit figure is shown ``FIGURES`` times three ways, interleaved figure by figure, over
``REPEAT`` rounds; times are the script thread's CPU time (``time.thread_time``), which the other
load of a shared machine does not inflate:

- reference: what ``show_figure`` did before issue 10.4, ``st.plotly_chart`` and the caption;
- show_figure: the same plus the "Download the numbers (CSV)" button (a callable, nothing built)
  and the handout record;
- show_figure + code: with ``code=`` as well (an expander holding the function's source).

Best round's mean ms per figure of each, and the added cost over the reference (target < 1 ms). The CSV
itself is built only on click; its cost is printed last, for scale.
"""

from __future__ import annotations

import time

from streamlit.testing.v1 import AppTest

FIGURES = 60
REPEAT = 5


def _script() -> None:
    import time

    import numpy as np
    import streamlit as st

    import server
    from benchmarks.bench_show_figure import FIGURES, REPEAT
    from core.nadaraya_watson import nw_predict
    from figures.common import Labels
    from figures.export import figure_csv
    from figures.kernel_regression import fit_figure
    from ui.handout import begin_page
    from ui.i18n import t
    from ui.layout import PLOTLY_CONFIG, show_figure

    server.install()  # as app.main does: each figure serialised once (server.plotly_spec)
    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(-3, 3, 100))
    y = np.sin(x) + 0.3 * rng.normal(size=100)
    grid = np.linspace(-3, 3, 200)
    fit = np.sin(grid)
    names = {"data": "data", "truth": "truth", "fit": "fit", "undefined": "undefined", "query": "x*"}
    labels = Labels.of(title="fit", x="x", y="y", **names)
    fig = fit_figure(x, y, grid, fit, truth=np.sin(grid), x_query=0.5, labels=labels)
    begin_page("bench", "bench")

    def reference(i: int) -> None:
        st.plotly_chart(fig, width="stretch", config=PLOTLY_CONFIG, key=f"ref_{i}")
        st.caption(":material/visibility: " + t("kr.look_fit"))

    def plain(i: int) -> None:
        show_figure(fig, key=f"new_{i}", look_for_key="kr.look_fit")

    def with_code(i: int) -> None:
        show_figure(fig, key=f"code_{i}", look_for_key="kr.look_fit", code=nw_predict)

    variants = {"reference": reference, "show_figure": plain, "show_figure + code": with_code}
    best = dict.fromkeys(variants, float("inf"))
    for r in range(REPEAT):
        spent = dict.fromkeys(variants, 0.0)
        for i in range(FIGURES):  # interleaved figure by figure: load changes hit all three alike
            for name, fn in variants.items():
                start = time.thread_time()
                fn(r * FIGURES + i)
                spent[name] += time.thread_time() - start
        for name in variants:
            best[name] = min(best[name], spent[name] / FIGURES)
    start = time.thread_time()
    figure_csv(fig)
    best["csv on click"] = time.thread_time() - start
    st.session_state["bench"] = best


def main() -> None:
    started = time.perf_counter()
    at = AppTest.from_function(_script, default_timeout=600)
    at.run()
    if at.exception:
        raise SystemExit(at.exception[0].value)
    best = at.session_state["bench"]
    ref = best["reference"]
    print(f"{FIGURES} figures x {REPEAT} rounds ({time.perf_counter() - started:.1f} s)")
    for name, seconds in best.items():
        extra = "" if name in ("reference", "csv on click") else f"  added {1e3 * (seconds - ref):+.2f} ms"
        print(f"{name:>20}: {1e3 * seconds:6.2f} ms per figure{extra}")


if __name__ == "__main__":
    main()
