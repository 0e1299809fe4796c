"""The inline loader of a v2 component whose code is served from ``static/`` (Streamlit's static serving).

A component's ``js=`` text travels with its element on every rerun, so the live sliders
(``ui.live_slider``) and the kept charts (``ui.house_chart``) send a few lines that import the real
module from ``/app/static/...``. That import is where one dropped request used to cost the whole page: a
browser keeps a *failed* module import for the page's life (every later ``import()`` of that URL fails
at once, without asking the server again), so one connection reset while ``chart.js`` was fetched left
every chart of the page blank, each with a component error, until the page was reloaded (the symptom of
a CI failure: a phone view with no chart element for 60 s). :func:`loader` imports the module once per
page, shared by every element of the component, and after a failed fetch asks again for a new URL
(``&retry=<n>``: the same file, a fresh module-map entry), waiting 0.25, 0.5, 1 and 2 s between the five
tries. Only then does the element show its error (Streamlit keeps an element's error until it is mounted
again); an element mounted later starts a new import.

``static/live/live.js`` imports ``math.js`` with its own URL's query, so a retried ``live.js`` fetches a
fresh ``math.js`` too; ``static/chart/chart.js`` retries plotly.js the same way.
``tests/e2e/test_static_retry.py`` drops the first fetch of each file and checks the page still draws.
"""

from __future__ import annotations

#: ``load(url)``: the module at ``url`` (relative to the page), imported once per page, retried.
_LOAD = """// one import per page for every element of the component; a failed fetch is asked again
// for a new URL (a browser keeps a failed module import for the page's life)
const modules = new Map(); // url -> the module's promise
const tries = new Map(); // url -> fetches asked so far
function load(url) {
  let module = modules.get(url);
  if (!module) {
    module = (async () => {
      for (let wait = 250; ; wait *= 2) {
        const n = tries.get(url) ?? 0;
        tries.set(url, n + 1);
        const href = new URL(url, window.location.href);
        if (n) href.searchParams.set("retry", String(n));
        try {
          return await import(href.href);
        } catch (err) {
          if (wait > 2000) {
            modules.delete(url); // an element mounted later tries again
            throw err;
          }
          console.warn(`${href.pathname} did not load (try ${n + 1}); asking again`, err);
          await new Promise((resolve) => setTimeout(resolve, wait));
        }
      }
    })();
    modules.set(url, module);
  }
  return module;
}
"""


def loader(body: str) -> str:
    """The component's ``js=``: ``load`` (above), then ``export default async function (component)``
    with ``body`` inside it (which calls ``await load(<url>)``)."""
    return f"{_LOAD}\nexport default async function (component) {{\n{body}\n}}\n"
