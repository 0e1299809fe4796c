// The live sliders' charts (ui/house_chart.py): one element kept from run to run, one Plotly.react
// when its figure changes (st.plotly_chart draws a changed figure into a new element, twice).
//
// The element is built once per component root: div.stPlotlyChart[data-testid=stPlotlyChart]
// holding the Plotly graph div. The chart's data (a JSON head line, then the figure's JSON) is read
// from its copy in the page (below); the same data as the last drawn is not drawn again. Drawings
// are queued: a newer figure that arrives while one is drawn replaces any not yet started. After
// each drawing the graph div's data-rev counts it (static/live/live.js hands its overlay over on
// that change; the drag benchmark waits for it). Width: the element's, followed on resize; height:
// the figure's, or the element's own while presentation mode sets one (assets/present.js).
//
// A new figure for a chart that was drawn before waits, so that the charts in view are drawn first
// (a release of d_k redraws the Q/K/V chart above the window and the pipeline in it: ~25-90 ms,
// then ~70-180 ms on the test machine, each a long task of the main thread):
// - under a live slider's overlay (static/live/live.js marks its graph div data-overlaid), while it
//   is out of the window, even just below it: the overlay already shows that figure, so nothing
//   stale is ever seen (a release of h on kernel regression redraws the fit in view and the weight
//   row ~450 px under the window: its drawing, ~50-100 ms here, waits until it is scrolled to);
// - otherwise while it is far from the window, until it comes near, or the page is idle with no
//   chart near the window drawing or waiting to and no live slider held (requestIdleCallback; 5 s
//   at most: never held for good). "Near" is meant as within half a window's height, but see the
//   observer below: in the main area it is, today, in the window.
// data-pending stays set meanwhile (an overlay stays while it is). A first drawing is done at once.
//
// The figure travels once, in a hidden copy of the data that React writes into the page above the
// chart during the commit that brings the run's change (ui/house_chart.py; a MutationObserver sees
// it before the page is painted, where st.plotly_chart draws). The component's call, an effect after
// the paint (~25-60 ms later on the test machine), brings only the head and the figure's digest: it
// finds a changed figure drawn, and draws a first figure (or one React wrote into a new element)
// from the page's copy.

const LOADED = {};

/** Every kept chart of the page (a far chart waits for those near the window). */
const CHARTS = new Set();
const idle = window.requestIdleCallback ?? ((run) => setTimeout(run, 100));

// while the page is printed, every figure held back is drawn (Chart.held)
let printing = false;
window.addEventListener("beforeprint", () => {
  printing = true;
  for (const el of document.querySelectorAll(".attn-chart")) el.__chart?.release();
});
window.addEventListener("afterprint", () => {
  printing = false;
});

/** The served plotly.js (ui/house_chart.py), loaded once per page and kept to itself: its script
 * sets window.Plotly, which Streamlit's own chunk (another version) may also set; each chart keeps
 * the one that drew it. A failed fetch is asked again (`?retry=<n>`) after 0.25, 0.5, 1 and 2 s, as
 * ui/static_module.py does for this module: one dropped request must not leave the charts blank. */
function loadPlotly(url) {
  LOADED[url] ??= (async () => {
    for (let n = 0, wait = 250; ; n += 1, wait *= 2) {
      try {
        return await loadScript(n ? `${url}${url.includes("?") ? "&" : "?"}retry=${n}` : url);
      } catch (err) {
        if (wait > 2000) {
          delete LOADED[url]; // the next figure tries again
          throw err;
        }
        console.warn(`plotly.js did not load (try ${n + 1}); asking again`, err);
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  })();
  return LOADED[url];
}

function loadScript(src) {
  return new Promise((resolve, reject) => {
    const before = window.Plotly;
    const script = document.createElement("script");
    script.src = src;
    script.async = true;
    script.onload = () => {
      const mine = window.Plotly;
      if (before) window.Plotly = before;
      resolve(mine);
    };
    script.onerror = () => {
      script.remove();
      reject(new Error(`plotly.js did not load from ${src}`));
    };
    document.head.appendChild(script);
  });
}

// the expand icon of Streamlit's own chart toolbar (Material "fullscreen"), as a Plotly modebar icon
const FULLSCREEN_ICON = {
  width: 24,
  height: 24,
  path: "M7 14H5v5h5v-2H7v-3zm-2-4h2V7h3V5H5v5zm12 7h-3v2h5v-5h-2v3zM14 5v2h3v3h2V5h-5z",
  transform: "matrix(1 0 0 -1 0 24)",
};

class Chart {
  constructor(root) {
    this.el = document.createElement("div");
    this.el.className = "stPlotlyChart attn-chart";
    this.el.dataset.testid = "stPlotlyChart";
    this.gd = document.createElement("div");
    this.gd.dataset.rev = "0";
    this.el.appendChild(this.gd);
    root.appendChild(this.el);
    this.drawn = null; // the data last drawn (or being drawn)
    this.next = null; // {head, figure} waiting for the drawing in progress
    this.busy = false;
    this.fitted = { width: 0, height: 0 };
    this.resize = new ResizeObserver(() => this.fit());
    this.resize.observe(this.el);
    // presentation mode sets and clears the element's height (a style change the size may not show)
    this.styled = new MutationObserver(() => this.fit());
    this.styled.observe(this.el, { attributes: true, attributeFilter: ["style"] });
    // fired at the element entering or leaving full screen (nothing held once the element goes)
    this.el.addEventListener("fullscreenchange", () => this.fit());
    // near the window: within half a window's height of it, as meant. Measured 2026-12-07: the
    // margin does not reach past Streamlit's main area, a scrolling element of its own (stMain,
    // overflow auto) that clips the chart, and the observer's root is the window: a chart 436 px
    // under a 1000 px window is not near. In the main area "near" is "in the window"; with stMain as
    // the root the margin would work (not done: a chart that nothing covers would then draw before
    // it is seen, more work after a release; the charts under an overlay wait for the window anyway)
    this.near = true;
    this.seen = new IntersectionObserver(
      (entries) => {
        this.near = entries[entries.length - 1].isIntersecting;
        if (!this.near) return;
        if (this.next) this.release();
        // nothing to draw: a live overlay kept over the chart while it was far may go (live.js)
        else this.gd.dispatchEvent(new Event("attn-chart-near"));
      },
      { rootMargin: "50% 0px" },
    );
    this.seen.observe(this.el);
    // in the window itself: a chart under a live overlay draws its new figure only then (the overlay
    // shows that figure until it does)
    this.inView = true;
    this.shown = new IntersectionObserver((entries) => {
      this.inView = entries[entries.length - 1].isIntersecting;
      if (this.inView && this.next) this.release();
    });
    this.shown.observe(this.el);
    // an overlay gone (static/live/live.js) while a figure waits under it: drawn now if near, else
    // when near or idle
    this.uncovered = new MutationObserver(() => {
      if (this.gd.dataset.overlaid || !this.next) return;
      if (this.held()) this.hold();
      else this.release();
    });
    this.uncovered.observe(this.gd, { attributes: true, attributeFilter: ["data-overlaid"] });
    this.el.__chart = this; // printing draws every figure held back (below)
    this.idleOk = false; // a far chart without an overlay may draw (the page was idle)
    this.idleAsked = false;
    CHARTS.add(this);
  }

  /** Whether the figure waiting should wait: drawn before, and out of the window under a live
   * overlay, or far away and not yet given an idle moment (see the top of this file). */
  held() {
    if (printing || !this.gd._fullLayout) return false;
    if (this.gd.dataset.overlaid) return !this.inView;
    return !this.near && !this.idleOk;
  }

  /** Whether this chart is drawing, or has a figure to draw now, near the window. */
  drawingNear() {
    return this.near && (this.busy || (!!this.next && !this.held()));
  }

  /** Draw the figure waiting once the page is idle, no chart near the window is drawing and no live
   * slider is held (its frames come first); 5 s at most. */
  whenIdle() {
    if (this.idleAsked) return;
    this.idleAsked = true;
    const until = performance.now() + 5000;
    const busy = () =>
      [...CHARTS].some((c) => c.drawingNear()) || !!document.querySelector(".attn-live input:active");
    const attempt = () =>
      idle(
        () => {
          for (const c of CHARTS) if (!c.el.isConnected) CHARTS.delete(c); // a page left
          if (performance.now() < until && busy()) return attempt();
          this.idleAsked = false;
          this.idleOk = true;
          this.release();
        },
        { timeout: 2000 },
      );
    attempt();
  }

  /** Draw a figure held back (it came near the window or into it, or the page is printed). */
  release() {
    if (this.next && !this.busy) this.drain();
  }

  /** The size to draw at: the element's width; the element's height if set, else the figure's. */
  size(layout) {
    const width = Math.round(this.el.clientWidth) || undefined;
    const full = document.fullscreenElement === this.el;
    const set = full || (this.el.style.height && this.el.style.height !== "auto");
    const height = set ? Math.round(this.el.clientHeight) : layout.height;
    return { width, height };
  }

  show(head, text) {
    this.name ??= this.el.closest('[class*="st-key-"]')?.className.match(/st-key-(\S+)/)?.[1];
    performance.mark(`chart:show:${this.name}`); // for profiles of a release (benchmarks)
    if (text === this.drawn) return;
    this.drawn = text;
    this.next = { head, text };
    this.gd.dataset.pending = "1"; // static/live/live.js keeps its overlay until this drawing is done
    this.idleOk = false;
    if (this.held()) return this.hold();
    if (!this.busy) this.drain();
  }

  /** A figure held back: a far chart without a live overlay asks for an idle moment (one under an
   * overlay waits until it comes into the window). */
  hold() {
    if (!this.gd.dataset.overlaid) this.whenIdle();
  }

  async drain() {
    this.busy = true;
    try {
      while (this.next && !this.held()) {
        const { head, text } = this.next;
        this.next = null;
        const Plotly = (this.Plotly ??= await loadPlotly(head.plotly));
        const figure = JSON.parse(text.slice(text.indexOf("\n") + 1));
        const layout = figure.layout || {};
        if (head.marks) {
          layout.shapes = [...(layout.shapes || []), ...head.marks.shapes];
          layout.annotations = [...(layout.annotations || []), ...head.marks.annotations];
        }
        this.height = layout.height;
        // the height the figure asks for, for presentation mode's fit (assets/present.js)
        if (layout.height) this.el.dataset.naturalHeight = String(layout.height);
        else delete this.el.dataset.naturalHeight;
        const { width, height } = this.size(layout);
        Object.assign(layout, { width, height });
        this.gd.style.height = height ? `${height}px` : "";
        try {
          await Plotly.react(this.gd, figure.data || [], layout, this.config(head));
        } catch (err) {
          console.error(`chart ${this.name}: plotly.js could not draw the figure`, err);
          this.drawn = null; // drawn again by the next data, even the same
          continue;
        }
        performance.mark(`chart:drawn:${this.name}`);
        this.fitted = { width, height };
        if (!this.next) delete this.gd.dataset.pending;
        this.gd.dataset.rev = String(Number(this.gd.dataset.rev) + 1);
      }
    } catch (err) {
      console.error(`chart ${this.name}: plotly.js did not load`, err);
      this.drawn = null; // the next data tries again
    } finally {
      this.busy = false;
      if (!this.next) delete this.gd.dataset.pending; // a figure held back keeps it
      // a figure that came while this one was drawn, and the chart went far meanwhile (a page laid
      // out again for a phone moves the charts): held back now, it asks for its idle moment too
      else if (this.held()) this.hold();
    }
    // a size change while it drew: looked at in the next frame, where the page is laid out anyway
    // (read at once, the width forced a layout of the whole page after each drawing)
    requestAnimationFrame(() => this.fit());
  }

  /** Watch the chart's data written into the page above it (ui/house_chart.py: a hidden st.html
   * element in the same keyed container), the only place the figure travels. React writes it during
   * the commit that brings a new figure, where st.plotly_chart draws; the component's call (its data:
   * the head and the figure's digest) comes in an effect after the page's paint. A changed figure is
   * drawn from there, before the paint; the component's call then finds it drawn. Looked up again on
   * every call: React may have made a new element. Until the copy is in the page (Streamlit's html
   * element is loaded on its first use), the keyed container is watched for it. */
  watch() {
    const box = this.el.closest(".stElementContainer")?.parentElement;
    const html = box?.querySelector(":scope > .stElementContainer > .stHtml:has(> .attn-figure)");
    this.writes ??= new MutationObserver(() => (this.written ? this.fromPage() : this.watch()));
    if (!html) {
      if (box && this.waiting !== box) {
        performance.mark("chart:await-copy"); // for profiles of a first load (benchmarks)
        this.written = null;
        this.waiting = box;
        this.writes.disconnect();
        this.writes.observe(box, { childList: true, subtree: true });
      }
      return;
    }
    if (html !== this.written) {
      this.written = html;
      this.waiting = null;
      this.writes.disconnect();
      this.writes.observe(html, { childList: true, subtree: true, characterData: true });
    }
    this.fromPage();
  }

  /** Show the figure written into the page (see watch). */
  fromPage() {
    const data = this.written?.querySelector(":scope > .attn-figure")?.textContent ?? "";
    const at = data.indexOf("\n");
    if (at < 0) return;
    let head;
    try {
      head = JSON.parse(data.slice(0, at));
    } catch (err) {
      return console.error(`chart ${this.name}: the figure in the page is not JSON`, err);
    }
    this.show(head, `${JSON.stringify(head.marks)}\n${data.slice(at + 1)}`);
  }

  /** The figure's config, with a full-screen button as st.plotly_chart has (Streamlit's toolbar).
   * Made once per config: Plotly.react compares it with the last one, and any difference (a new
   * click function) makes it draw the chart anew instead of updating it. */
  config(head) {
    const id = JSON.stringify([head.config, head.fullscreen]);
    if (this.configId !== id) {
      const full = {
        name: "fullscreen",
        title: head.fullscreen,
        icon: FULLSCREEN_ICON,
        click: () => (document.fullscreenElement ? document.exitFullscreen() : this.el.requestFullscreen?.()),
      };
      this.configId = id;
      this.configObject = { ...(head.config || {}), modeBarButtonsToAdd: [full] };
    }
    return this.configObject;
  }

  /** Follow the element's size (a narrower window, presentation mode's height). */
  fit() {
    if (!this.Plotly || !this.gd._fullLayout || this.busy) return;
    const { width, height } = this.size({ height: this.height });
    if (width === this.fitted.width && height === this.fitted.height) return;
    this.fitted = { width, height };
    this.gd.style.height = height ? `${height}px` : "";
    this.Plotly.relayout(this.gd, { width, height });
  }
}

/** Draw the component's figure into its kept chart element: the figure is read from its copy in
 * the page (see Chart.watch); the component brings the head and the figure's digest. */
export function mount(component, _head, _digest) {
  const root = component.parentElement;
  root.__houseChart ??= new Chart(root);
  root.__houseChart.watch();
}
