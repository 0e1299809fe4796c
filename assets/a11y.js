// Accessibility the app cannot say from Python (WCAG 2.1 AA, issue 24). ui/a11y.py mounts this on
// every run with the words of the page's language; it runs in the app's own document
// (st.components.v2, no iframe). One MutationObserver re-applies, at most once per animation frame,
// what Streamlit's re-renders replace (changes inside a chart's SVG or a live slider, which redraw
// themselves on every frame of a drag, are not looked at):
//   - <html lang> follows the UI language (3.1.1);
//   - "Skip to the main controls", the first Tab stop, focuses the first control of the main area
//     (2.4.1); Streamlit's own "Skip to main content" speaks the page's language;
//   - every chart is a named figure (role, aria-label, aria-describedby from its hidden
//     .attn-chart-text, written by ui/a11y.label_chart); its SVG, a jumble of tick labels for a
//     screen reader, is hidden from it: the numbers are in the chart's "Show the numbers" table;
//   - a table, a formula or a code block wider than its column (a phone, 200% zoom) scrolls by keyboard too:
//     focusable, a region with a name (2.1.1, axe's scrollable-region-focusable).

const CONTROLS = [
  'input:not([type="hidden"]):not([disabled])',
  "button:not([disabled])",
  "select",
  "textarea",
  "summary",
  '[role="slider"]',
].join(",");
// Not "the main controls": a heading's anchor link, a help "?" button, our own skip link.
const NOT_CONTROLS = '[data-testid="stHeaderActionElements"], [data-testid="stTooltipHoverTarget"], .attn-skip';

function set(el, name, value) {
  if (value === null || value === undefined) {
    if (el.hasAttribute(name)) el.removeAttribute(name);
  } else if (el.getAttribute(name) !== value) {
    el.setAttribute(name, value);
  }
}

function firstControl() {
  const main = document.querySelector('[data-testid="stMain"]');
  if (!main) return null;
  for (const el of main.querySelectorAll(CONTROLS)) {
    if (!el.closest(NOT_CONTROLS) && !el.closest('[aria-hidden="true"]')) return el;
  }
  return null;
}

function skipLinks(words) {
  // Streamlit's own link (to the main area): its text node is kept, so React still owns it.
  const own = document.querySelector('[data-testid="stSkipToContent"]');
  if (own && words.skipMain && own.firstChild && own.firstChild.nodeValue !== words.skipMain) {
    own.firstChild.nodeValue = words.skipMain;
  }
  let link = document.getElementById("attn-skip-controls");
  if (!link) {
    link = document.createElement("a");
    link.id = "attn-skip-controls";
    link.className = "attn-skip";
    link.href = "#stMain";
    link.addEventListener("click", (event) => {
      const target = firstControl();
      if (!target) return;
      event.preventDefault();
      target.scrollIntoView({ block: "center" });
      target.focus({ focusVisible: true });
    });
    document.body.prepend(link); // outside Streamlit's React root: never re-rendered away
  }
  if (words.skipControls && link.textContent !== words.skipControls) link.textContent = words.skipControls;
}

function charts() {
  for (const text of document.querySelectorAll(".attn-chart-text[data-chart]")) {
    const box = document.querySelector(".st-key-" + CSS.escape(text.dataset.chart));
    const chart = box && box.querySelector('[data-testid="stPlotlyChart"]');
    if (!chart) continue;
    set(chart, "role", "figure");
    set(chart, "aria-label", text.dataset.name || null);
    set(chart, "aria-describedby", text.id);
    for (const svg of chart.querySelectorAll("svg.main-svg")) set(svg, "aria-hidden", "true");
  }
}

function scrollRegions(words) {
  const kinds = [
    ['[data-testid="stTable"] > div', words.scrollTable],
    ['[data-testid="stMain"] .katex-display', words.scrollFormula],
    ['[data-testid="stCode"] pre', words.scrollCode],
  ];
  for (const [selector, label] of kinds) {
    for (const el of document.querySelectorAll(selector)) {
      if (el.scrollWidth > el.clientWidth + 1) {
        set(el, "tabindex", "0");
        set(el, "role", "region");
        set(el, "aria-label", label || null);
        el.dataset.attnScroll = "1";
      } else if (el.dataset.attnScroll) {
        for (const name of ["tabindex", "role", "aria-label"]) set(el, name, null);
        delete el.dataset.attnScroll;
      }
    }
  }
}

function apply(state) {
  const words = state.data || {};
  if (words.lang) set(document.documentElement, "lang", words.lang);
  skipLinks(words);
  charts();
  scrollRegions(words);
}

function ignored(node) {
  return node instanceof SVGElement || (node instanceof Element && node.closest(".attn-live") !== null);
}

function schedule(state) {
  if (state.frame) return;
  state.frame = requestAnimationFrame(() => {
    state.frame = 0;
    state.looks += 1; // counted for tests/e2e/test_live_drag.py
    apply(state);
  });
}

export default function (component) {
  const state = (window.__attnA11y = window.__attnA11y || { data: {}, frame: 0, looks: 0 });
  state.data = component.data || {};
  if (!state.observer) {
    // Nothing this script sets lives inside an SVG or a live slider: a chart redrawing itself
    // (Plotly's ticks, titles, colour bars) and a slider's value and readout, on every frame of a
    // drag (static/live/live.js), are no reason to look again. A look reads the scroll widths of the
    // page's tables and formulas: a layout of its own in that frame.
    state.observer = new MutationObserver((records) => {
      if (records.some((r) => !ignored(r.target))) schedule(state);
    });
    state.observer.observe(document.body, { childList: true, subtree: true });
    window.addEventListener("resize", () => schedule(state));
  }
  apply(state);
}
