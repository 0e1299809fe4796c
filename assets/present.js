// Presentation mode (?present=1), mounted by ui/classroom.py:keyboard_and_fit as a components.v2
// element (no iframe: it runs in the app's page). Two jobs, nothing sent back to Python:
//
// 1. Keys: ArrowRight / PageDown click "Next", ArrowLeft / PageUp click "Previous" (a presentation
//    clicker sends PageUp / PageDown), so a key step is exactly a click: same callback, same URL.
//    Not while the focus is in a control that uses these keys itself (a slider, a text or number
//    field, a select, a radio group, a table), nor with a modifier (Alt+Left is the browser's Back).
// 2. Fit: each chart that starts on the first screen of the slide gets the height from its top to
//    the bottom of the window (Streamlit's chart follows its container's height: the figure is
//    redrawn at that height), so the slide's figure is seen whole without scrolling, at 1280x720
//    as at 1920x1080. A chart left with too little room (MIN_PX, SQUEEZE) keeps its own height.
export default function () {
  // one set of listeners per page, however often Streamlit calls this function
  if (window.__attentionPresentCleanup) window.__attentionPresentCleanup();
  // Below these a chart is more legible at its own height, running past the window's bottom: a
  // chart shrinks to no less than SQUEEZE of the height its figure asks for, and never below MIN_PX.
  const MIN_PX = 300;
  const SQUEEZE = 0.7;
  const BOTTOM_GAP_PX = 12; // air between the chart and the window's bottom edge
  const USES_KEYS = [
    "input", "textarea", "select", "[contenteditable='true']", "[role='slider']",
    "[role='spinbutton']", "[role='combobox']", "[role='listbox']", "[role='radiogroup']",
    "[role='tablist']", "[role='menu']", "[role='grid']", "[data-testid='stDataFrame']",
  ].join(",");
  const STEPS = { ArrowRight: "next", PageDown: "next", ArrowLeft: "previous", PageUp: "previous" };

  const onKey = (event) => {
    const step = STEPS[event.key];
    if (!step || event.defaultPrevented || event.isComposing) return;
    if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    const target = (event.composedPath && event.composedPath()[0]) || event.target;
    if (target instanceof Element && target.closest(USES_KEYS)) return;
    const button = document.querySelector(`.st-key-slide_${step} button`);
    if (!button || button.disabled) return;
    event.preventDefault(); // PageDown would also scroll
    button.click();
  };

  const charts = () => {
    const main = document.querySelector("[data-testid='stMain']");
    return main ? [main, [...main.querySelectorAll("[data-testid='stPlotlyChart']")]] : [null, []];
  };

  // The height a chart's figure asks for (its layout.height before any fit), kept on the element.
  const natural = (chart) => {
    if (!chart.dataset.naturalHeight) {
      const plot = chart.querySelector(".js-plotly-plot");
      if (!plot || !plot.layout || !plot.layout.height) return 0; // not drawn yet: the next mutation
      chart.dataset.naturalHeight = String(plot.layout.height);
    }
    return Number(chart.dataset.naturalHeight);
  };

  // The chart and the element around it, whose flex basis Streamlit sets to the figure's height
  // (the chart alone would overflow it, over the caption below).
  // The chart's data-present-fit says what was decided ("<n>px", or "own": its own height), so that
  // a reader (the tests) can tell a chart not yet fitted from one fitted to its own height.
  const size = (chart, height) => {
    const holder = chart.closest("[data-testid='stElementContainer']");
    for (const [element, property] of [[chart, "height"], [holder, "height"], [holder, "flexBasis"]]) {
      if (element && element.style[property] !== height) element.style[property] = height;
    }
    const fit = height || "own";
    if (chart.dataset.presentFit !== fit) chart.dataset.presentFit = fit;
  };

  let frame = 0;
  const fit = () => {
    frame = 0;
    const [main, found] = charts();
    if (!main) return;
    const scrolled = main.scrollTop + (document.scrollingElement ? document.scrollingElement.scrollTop : 0);
    const bottom = window.innerHeight - BOTTOM_GAP_PX;
    for (const chart of found) {
      if (chart.closest("[data-testid='stExpander'], [data-testid='stPopoverBody']")) continue;
      const own = natural(chart);
      if (!own) continue;
      // charts are measured in order: one that grew has already moved those under it
      const room = Math.floor(bottom - (chart.getBoundingClientRect().top + scrolled));
      size(chart, room >= Math.max(MIN_PX, SQUEEZE * own) ? `${room}px` : "");
    }
  };
  const schedule = () => {
    if (!frame) frame = requestAnimationFrame(fit);
  };

  // new slides and redrawn charts arrive as new nodes; a window change (projector) moves the bottom
  const observer = new MutationObserver(schedule);
  const main = document.querySelector("[data-testid='stMain']");
  if (main) observer.observe(main, { childList: true, subtree: true });
  window.addEventListener("resize", schedule);
  document.addEventListener("keydown", onKey);
  document.documentElement.dataset.presentKeys = "on"; // for tests: the keys are listened to
  schedule();

  const cleanup = () => {
    if (window.__attentionPresentCleanup === cleanup) delete window.__attentionPresentCleanup;
    observer.disconnect();
    window.removeEventListener("resize", schedule);
    document.removeEventListener("keydown", onKey);
    delete document.documentElement.dataset.presentKeys;
    if (frame) cancelAnimationFrame(frame);
    for (const chart of charts()[1]) {
      size(chart, ""); // back to the scrolling page
      delete chart.dataset.presentFit;
    }
  };
  window.__attentionPresentCleanup = cleanup;
  return cleanup;
}
