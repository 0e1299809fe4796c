// Live sliders (ui/live_slider.py): a native range input whose figures follow the hand.
//
// While the slider moves, nothing goes to the server: each `input` event recomputes the figures'
// numbers in the browser (math.js, the same numbers as `core`) and redraws their moving parts on
// a canvas laid over each Plotly chart the page already shows, in the chart's own axes, colours
// and type sizes (read from the chart: presentation mode's larger type and a phone's narrow chart
// come for free). The chart's own traces that move are hidden meanwhile (style.visibility only);
// its moving texts (title, a marker's label, tick labels) are covered by clones that say the new
// thing. On release (`change`) the value is committed to Python: one rerun; when each chart has
// drawn the Python figure (a chart of ui/house_chart.py draws it into the same element and counts
// the drawing in data-rev; st.plotly_chart, with ?live=0, into a new element) its overlay is
// removed in the same task, so the Python figure takes over without a visible jump (or, for a
// chart Python did not redraw, once the run has finished).
//
// Why a canvas and not Plotly.react: measured in Chromium on the class machine, a Plotly.restyle of
// the kernel-regression fit takes 60-130 ms a frame and the weight-row chart 200-500 ms; the
// canvas draws both in 1-3 ms. Frame times are kept in window.__liveStats (benchmarks/bench_drag.py).

const VERSION = new URL(import.meta.url).search;
const M = await import(new URL("./math.js", import.meta.url).href + VERSION);

// frames: one per frame drawn {key, t0: the input event's time, t1: drawn, value, views: ms each};
// settled: the time each commit's last overlay went (the Python figures in place).
const STATS = (window.__liveStats ??= { frames: [], commits: 0, takeovers: 0, settled: [] });
const SVG = "http://www.w3.org/2000/svg";

// ---------------------------------------------------------------------------------------------
// the slider: a native input[type=range] in the component's element (no shadow root: tests,
// benchmarks and assistive tools find it like any other slider of the page)
// ---------------------------------------------------------------------------------------------

const STYLE = `
.attn-live { font-family: var(--st-font, "Source Sans", sans-serif); color: var(--st-text-color, #31333f);
  padding: 0 0 0.25rem 0; }
.attn-live .head { display: flex; align-items: center; justify-content: space-between; gap: 0.35rem;
  font-size: 0.875rem; min-height: 1.5rem; margin-bottom: 0.25rem; }
.attn-live .head p { margin: 0; }
.attn-live .help { display: inline-flex; width: 1rem; height: 1rem; border-radius: 50%; font-size: 0.7rem;
  border: 1px solid currentColor; color: var(--attn-text-muted, #5e5c59); align-items: center; justify-content: center; cursor: help; }
.attn-live .help[hidden] { display: none; }
.attn-live .track { position: relative; padding-top: 1.45rem; }
.attn-live .value { position: absolute; top: 0; transform: translateX(-50%); font-size: 0.875rem;
  white-space: nowrap; color: var(--st-primary-color, #0072b2); font-family: var(--st-code-font, monospace);
  pointer-events: none; }
.attn-live input[type=range] { width: 100%; margin: 0; accent-color: var(--st-primary-color, #0072b2);
  height: 1.5rem; touch-action: none; cursor: pointer; background: transparent; }
.attn-live input[type=range]:focus-visible { outline: 2px solid var(--st-primary-color, #0072b2);
  outline-offset: 2px; }
.attn-live .ends { display: flex; justify-content: space-between; font-size: 0.75rem;
  color: var(--attn-text-muted, #5e5c59);
  font-family: var(--st-code-font, monospace); }
.attn-live .readout { font-size: 0.8rem; min-height: 1.1rem; color: var(--attn-text-muted, #5e5c59); }
.attn-live .readout[hidden] { display: block; visibility: hidden; }
.attn-live .absent { font-size: 0.8rem; color: var(--attn-text-muted, #5e5c59); margin-top: 0.15rem; }
.attn-live.docked { position: fixed; bottom: 0.5rem; z-index: 999; box-sizing: border-box; }
.attn-live.docked .readout[hidden] { display: none; }
@media (max-width: 640px) { .attn-live.docked .ends { display: none; } .attn-live.docked .head { margin-bottom: 0; } }
`;

/** Mount (or update) the slider of `data` into the component's root; returns its cleanup. */
export function mount(component, data) {
  const root = component.parentElement;
  let slider = root.__liveSlider;
  if (!slider) {
    slider = new Slider(root);
    root.__liveSlider = slider;
  }
  slider.update(data, component.setStateValue);
  watchAbsent(slider);
  dock.watch(slider);
  warmUp(data);
  return () => {}; // the DOM stays: the next rerun's mount reuses it (no flicker, a drag survives)
}

class Slider {
  constructor(root) {
    const style = document.createElement("style");
    style.textContent = STYLE;
    const box = document.createElement("div");
    box.className = "attn-live";
    // the label as Streamlit writes a widget's, so the page's styles (presentation mode's larger
    // type) apply to it as to the other controls
    box.innerHTML = `<div class="head"><label data-testid="stWidgetLabel"><div data-testid="stMarkdownContainer">
      <p></p></div></label><span class="help" aria-hidden="true" hidden>?</span></div>
      <div class="track"><output class="value"></output><input type="range"></div>
      <div class="ends"><span class="lo"></span><span class="hi"></span></div>
      <div class="readout" hidden></div><div class="absent" hidden></div>`;
    root.append(style, box);
    this.root = root;
    this.box = box;
    this.input = box.querySelector("input");
    this.labelEl = box.querySelector("label");
    this.labelText = box.querySelector("label p");
    this.helpEl = box.querySelector(".help");
    this.valueEl = box.querySelector(".value");
    this.readoutEl = box.querySelector(".readout");
    this.absentEl = box.querySelector(".absent");
    this.lo = box.querySelector(".lo");
    this.hi = box.querySelector(".hi");
    this.input.id = `live-${Math.random().toString(36).slice(2)}`;
    this.labelEl.htmlFor = this.input.id;
    this.pressed = false;
    this.n = 0;
    this.input.addEventListener("pointerdown", () => {
      this.sayIfAbsent(true);
      this.pressed = true;
      this.startValue = this.committed;
      drags.begin(this);
    });
    const release = () => {
      if (!this.pressed) return;
      this.pressed = false;
      dock.update(this); // a dock change held back while the hand was on the slider
      // no `change` follows when the hand comes back to where it started: nothing to commit
      queueMicrotask(() => setTimeout(() => drags.settleIfIdle(this), 0));
    };
    this.input.addEventListener("pointerup", release);
    this.input.addEventListener("pointercancel", release);
    this.input.addEventListener("lostpointercapture", release);
    this.input.addEventListener("input", (e) => {
      const v = this.read();
      this.show(v);
      drags.move(this, v, e.timeStamp);
    });
    this.input.addEventListener("change", () => {
      this.pressed = false;
      const v = this.read();
      this.show(v);
      // the run starts first; the last frame is drawn while the server works
      this.setStateValue("commit", { value: v, n: ++this.n, t: Date.now() });
      drags.commit(this, v);
      dock.update(this);
    });
  }

  update(data, setStateValue) {
    this.data = data;
    this.setStateValue = setStateValue;
    this.committed = data.value;
    this.input.dataset.key = data.key;
    // the control's key as Streamlit marks a keyed widget's box (its own element is live_<key>): page
    // styles, tests and tools find the slider of kr_h under .st-key-kr_h like any other control's
    this.box.className = `attn-live st-key-${data.key}`;
    this.input.setAttribute("aria-label", data.label);
    this.labelText.textContent = data.label;
    this.helpEl.hidden = !data.help;
    this.helpEl.title = data.help || "";
    // the help is the slider's description for assistive tools (the "?" is a mouse's tooltip)
    if (data.help) this.input.setAttribute("aria-description", data.help);
    else this.input.removeAttribute("aria-description");
    if (data.options) {
      this.input.min = "0";
      this.input.max = String(data.options.length - 1);
      this.input.step = "1";
      this.lo.textContent = data.labels[0];
      this.hi.textContent = data.labels[data.labels.length - 1];
    } else {
      this.input.min = String(data.min);
      this.input.max = String(data.max);
      this.input.step = String(data.step);
      this.lo.textContent = data.min.toFixed(data.decimals);
      this.hi.textContent = data.max.toFixed(data.decimals);
    }
    if (!this.pressed && !drags.isMoving(this)) {
      this.input.value = String(this.position(data.value));
      this.show(data.value);
    }
  }

  /** Whether none of the charts this slider moves is on the page (a question holds them back, or
   * their section is closed or on another slide): a drag would move nothing. */
  isAbsent() {
    const d = this.data;
    return (
      !!d.absent &&
      d.targets.length > 0 &&
      !d.targets.some((t) => document.querySelector(`.st-key-${CSS.escape(t.key)} .js-plotly-plot`))
    );
  }

  /** Say so under the slider (`now`: at once, as when the hand takes the slider; otherwise only if
   * it still holds a moment later: the charts of a run are drawn after it, and the note must not
   * flash while they come). Returns whether the charts are absent. */
  sayIfAbsent(now = false) {
    const absent = this.isAbsent();
    const show = (on) => {
      this.absentEl.hidden = !on;
      this.absentEl.textContent = on ? this.data.absent : "";
    };
    if (!absent) {
      clearTimeout(this.absentTimer);
      this.absentTimer = null;
      show(false);
    } else if (now) {
      show(true);
    } else if (this.absentEl.hidden && !this.absentTimer) {
      this.absentTimer = setTimeout(() => {
        this.absentTimer = null;
        show(this.isAbsent());
      }, ABSENT_SHOW_MS);
    }
    return absent;
  }

  /** The input's position for a value: an option's index, or the value itself. */
  position(value) {
    if (!this.data.options) return value;
    const i = this.data.options.findIndex((o) => Math.abs(o - value) <= 1e-12 * Math.abs(o));
    return Math.max(0, i);
  }

  /** The value under the thumb: an option, or a number on the step grid. */
  read() {
    const raw = Number(this.input.value);
    const d = this.data;
    if (d.options) return d.options[Math.round(raw)];
    const k = Math.round((raw - d.min) / d.step);
    const digits = Math.max(d.decimals, decimalsOf(d.step));
    return Number(Math.min(d.max, d.min + k * d.step).toFixed(digits));
  }

  text(value) {
    const d = this.data;
    return d.options ? d.labels[this.position(value)] : value.toFixed(d.decimals);
  }

  show(value) {
    this.valueEl.textContent = this.text(value);
    const lo = Number(this.input.min);
    const hi = Number(this.input.max);
    const f = hi > lo ? (Number(this.position(value)) - lo) / (hi - lo) : 0;
    // the thumb's centre travels from half a thumb inside the left edge to half inside the right
    this.valueEl.style.left = `calc(${(f * 100).toFixed(3)}% + ${((0.5 - f) * 16).toFixed(2)}px)`;
  }

  readout(state, model) {
    const specs = this.data.readouts || [];
    if (!specs.length) return;
    this.readoutEl.hidden = false;
    this.readoutEl.textContent = specs
      .map((r) => `${fill(r.label, state)}: ${M.pyFormat(stat(model, state, r.stat), r.spec)}`)
      .join(" · ");
  }

  hideReadout() {
    this.readoutEl.hidden = true;
  }
}

/** Once the page has finished its run, in idle time, compute the figures at the committed value and
 * its neighbours: the functions are compiled before the first drag, whose first frames find their
 * numbers ready. (Not while the run's charts are being drawn: that is the browser's busiest time.) */
// ---------------------------------------------------------------------------------------------
// the dock: once a slider's place has scrolled above the window, the slider is kept at the
// window's bottom, over its own column, so that the figures further down (the weight row, the
// map, the d_k curve) follow the hand in view. Back in its place when that place is in view
// again. Never while presenting (the controls are in the slide bar's box: data.dock is null),
// never moved while the hand is on it. The slider's own element is pinned (CSS position: fixed):
// the same input, so focus, a drag and the tests' `.st-key-<key> input` stay as they are.
// ---------------------------------------------------------------------------------------------

const dock = {
  sliders: new Set(),
  io: null,
  ro: null,
  bar: null,

  watch(slider) {
    if (this.sliders.has(slider)) return this.update(slider);
    this.sliders.add(slider);
    this.io ??= new IntersectionObserver((entries) => {
      for (const e of entries) {
        const s = e.target.__liveSlider;
        if (!s) continue;
        // above the window: its bottom edge has gone past the top (not: below, still to come)
        s.above = !e.isIntersecting && e.boundingClientRect.bottom <= (e.rootBounds?.top ?? 0) + 1;
        this.update(s);
      }
    });
    this.ro ??= new ResizeObserver(() => this.place());
    this.io.observe(slider.root);
    this.ro.observe(slider.root); // its column's width
    this.ro.observe(slider.box); // its height (a note under it) sets the bar's
  },

  /** Pin or unpin `slider` as its place and its data say (not while the hand is on it). */
  update(slider) {
    if (!slider.root.isConnected) {
      this.io?.unobserve(slider.root);
      this.ro?.unobserve(slider.root);
      this.ro?.unobserve(slider.box);
      this.sliders.delete(slider);
      slider.box.classList.remove("docked");
      return this.place();
    }
    const want = !!slider.above && !!slider.data?.dock;
    const docked = slider.box.classList.contains("docked");
    if (want === docked || slider.pressed || drags.isMoving(slider)) return;
    if (want) {
      // the place keeps the slider's height: the page below does not move up
      slider.root.style.minHeight = `${slider.box.offsetHeight}px`;
      slider.box.classList.add("docked");
    } else {
      slider.box.classList.remove("docked");
      slider.root.style.minHeight = "";
    }
    this.place();
  },

  /** Each pinned slider over its column, in rows as their places are (side by side on a wide
   * window, one over the other where the columns stack, as on a phone); the bar behind them. */
  place() {
    const pinned = [...this.sliders].filter((s) => s.box.classList.contains("docked"));
    const homes = new Map(pinned.map((s) => [s, s.root.getBoundingClientRect()]));
    const rows = [];
    for (const s of [...pinned].sort((a, b) => homes.get(a).top - homes.get(b).top)) {
      const row = rows.find((r) => Math.abs(homes.get(r[0]).top - homes.get(s).top) < 8);
      if (row) row.push(s);
      else rows.push([s]);
    }
    // the last row at the bottom, the rows before it above (the page's order, read downwards)
    let bottom = 0;
    for (const row of rows.reverse()) {
      const height = Math.max(...row.map((s) => s.box.offsetHeight));
      for (const s of row) {
        const r = homes.get(s);
        Object.assign(s.box.style, { left: `${r.left}px`, width: `${r.width}px`, bottom: `calc(${bottom}px + 0.5rem)` });
      }
      bottom += height;
    }
    for (const s of this.sliders) {
      if (!pinned.includes(s)) s.box.style.left = s.box.style.width = s.box.style.bottom = "";
    }
    // the page's end can still be scrolled above the dock
    const block = document.querySelector('[data-testid="stMainBlockContainer"]');
    if (!pinned.length) {
      if (this.bar) this.bar.hidden = true;
      if (block) block.style.paddingBottom = "";
      return;
    }
    if (!this.bar) {
      this.bar = document.createElement("div");
      this.bar.className = "attn-live-dock";
      this.bar.setAttribute("aria-hidden", "true");
      document.body.appendChild(this.bar);
    }
    const main = document.querySelector('[data-testid="stMain"]');
    const app = document.querySelector('[data-testid="stApp"]');
    const m = main?.getBoundingClientRect();
    const height = bottom;
    Object.assign(this.bar.style, {
      position: "fixed",
      left: `${m ? m.left : 0}px`,
      right: "0",
      bottom: "0",
      height: `calc(${height}px + 1rem)`,
      zIndex: "998",
      background: app ? getComputedStyle(app).backgroundColor : "#fff",
      borderTop: "1px solid rgba(49, 51, 63, 0.2)",
      boxShadow: "0 -2px 8px rgba(0, 0, 0, 0.08)",
      pointerEvents: "none", // only the sliders on it take the hand
    });
    this.bar.hidden = false;
    if (block) block.style.paddingBottom = `calc(${height}px + 7rem)`;
  },
};

function warmUp(data) {
  // a while after the run: the new charts are drawn first (the browser's busiest time)
  whenRunEnds(() => setTimeout(() => drags.slider || prefetch(data, data.value, 1), WARM_DELAY_MS));
}

/** How long the charts of a slider must stay absent before it says so (see Slider.sayIfAbsent). */
const ABSENT_SHOW_MS = 700;
const absentWatch = { sliders: new Set(), state: null, charts: null, queued: false };

/** Each live slider on the page says whether its charts are there (Slider.sayIfAbsent): after every
 * run of the page (a run that leaves a slider's data as it was does not mount it again, e.g. "Show
 * me" drawing its charts), and, while one of them says none is, as soon as a chart is drawn (a
 * chart is drawn after the run has ended). Two observers for all the sliders; the one that watches
 * the charts only while a note is shown. */
function watchAbsent(slider) {
  absentWatch.sliders.add(slider);
  const app = document.querySelector('[data-testid="stApp"]');
  if (app && !absentWatch.state) {
    absentWatch.state = new MutationObserver(() => {
      if (app.getAttribute("data-test-script-state") !== "running") checkAbsent();
    });
    absentWatch.state.observe(app, { attributes: true, attributeFilter: ["data-test-script-state"] });
  }
  whenRunEnds(checkAbsent);
}

function checkAbsent() {
  if (absentWatch.queued) return;
  absentWatch.queued = true;
  requestAnimationFrame(() => {
    absentWatch.queued = false;
    let waiting = false;
    for (const s of absentWatch.sliders) {
      if (!s.box.isConnected) absentWatch.sliders.delete(s);
      else waiting = s.sayIfAbsent() || waiting;
    }
    const main = document.querySelector('[data-testid="stMain"]');
    if (waiting && !absentWatch.charts && main) {
      // Plotly marks a chart's element .js-plotly-plot when it draws into it
      absentWatch.charts = new MutationObserver(checkAbsent);
      absentWatch.charts.observe(main, { subtree: true, attributes: true, attributeFilter: ["class"] });
    } else if (!waiting && absentWatch.charts) {
      absentWatch.charts.disconnect();
      absentWatch.charts = null;
    }
  });
}

/** Call `fn` once the script run in progress has ended (at once if none is running). */
function whenRunEnds(fn) {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute("data-test-script-state") !== "running") return fn();
  const observer = new MutationObserver(() => {
    if (app.getAttribute("data-test-script-state") === "running") return;
    observer.disconnect();
    fn();
  });
  observer.observe(app, { attributes: true, attributeFilter: ["data-test-script-state"] });
}

const WARM_DELAY_MS = 500;
const prefetching = { generation: 0 };

/** In idle time, compute the figures at `value` and at the options up to `reach` steps from it (a
 * select-slider's steps each need new numbers; the drag's next frames then find them ready). Only
 * the charts on the page are computed for (a folded section's are not). */
function prefetch(data, value, reach = 2) {
  const model = models.get(data.model);
  if (!model) return;
  const values = [value];
  if (data.options) {
    const i = data.options.findIndex((o) => o === value);
    for (let d = 1; d <= reach; d++) {
      for (const j of [i + d, i - d]) if (data.options[j] !== undefined) values.push(data.options[j]);
    }
  }
  const shown = data.targets.filter((t) => document.querySelector(`.st-key-${CSS.escape(t.key)} .js-plotly-plot`));
  const todo = values.flatMap((v) => shown.map((t) => [t.view, v]));
  const generation = prefetching.generation;
  const step = (deadline) => {
    if (generation !== prefetching.generation) return; // a commit since: its rerun first
    while (todo.length && (!deadline || deadline.timeRemaining() > 4)) {
      const [view, v] = todo.shift();
      const state = { ...data.model, [data.param]: v };
      Object.assign(state, model.derive?.(state));
      WARM[view]?.(model, state);
    }
    if (todo.length) idle(step);
  };
  idle(step);
}

function idle(fn) {
  if (window.requestIdleCallback) requestIdleCallback(fn);
  else setTimeout(() => fn(null), 50);
}

function decimalsOf(step) {
  const s = String(step);
  return s.includes("e-") ? Number(s.split("e-")[1]) : (s.split(".")[1] || "").length;
}

// ---------------------------------------------------------------------------------------------
// a drag: overlays over the charts, frames on animation frames, the commit and the takeover
// ---------------------------------------------------------------------------------------------

const overlays = new Map(); // chart key -> Overlay (one per chart, shared by every slider)

const drags = {
  slider: null,
  pending: null,
  scheduled: false,
  generation: 0,

  isMoving(slider) {
    return this.slider === slider && (slider.pressed || this.pending !== null);
  },

  begin(slider) {
    this.slider = slider;
    this.generation += 1;
    // every layout read first, then every write: the page is laid out once, not once per chart
    const found = slider.data.targets
      .filter((t) => !overlays.has(t.key))
      .map((t) => Overlay.locate(t.key))
      .filter(Boolean);
    for (const place of found) overlays.set(place.key, new Overlay(place));
    // Draw the value under the thumb at once, before the hand moves: the overlay shows what the chart
    // shows, and the drawing code and fonts are ready for the first move's frame.
    if (found.length) this.draw(slider, slider.read(), performance.now(), false);
  },

  move(slider, value, t0) {
    if (this.slider !== slider) this.begin(slider);
    this.pending = { slider, value, t0 };
    if (!this.scheduled) {
      this.scheduled = true;
      requestAnimationFrame(() => this.frame());
    }
  },

  frame() {
    this.scheduled = false;
    const p = this.pending;
    this.pending = null;
    if (!p) return;
    this.draw(p.slider, p.value, p.t0);
    prefetch(p.slider.data, p.value);
  },

  draw(slider, value, t0, record = true) {
    const data = slider.data;
    const model = models.get(data.model);
    if (!model) return;
    const state = { ...data.model, [data.param]: value };
    Object.assign(state, model.derive?.(state));
    const views = {};
    for (const target of data.targets) {
      const o = overlays.get(target.key);
      if (!o || !o.live()) continue;
      const start = performance.now();
      try {
        o.begin();
        VIEWS[target.view](o, model, state);
        for (const [where, template] of Object.entries(target.titles || {})) o.text(where, fill(template, state));
      } catch (err) {
        console.error(`live slider: view ${target.view} failed`, err);
        o.restore();
        overlays.delete(target.key);
      }
      views[target.view] = performance.now() - start;
    }
    if (!record) return;
    slider.readout(state, model);
    STATS.frames.push({ key: data.key, t0, t1: performance.now(), value, views });
  },

  commit(slider, value) {
    if (this.pending) this.frame(); // the last position is drawn before the rerun starts
    else if (this.slider !== slider) {
      this.begin(slider);
      this.draw(slider, value, performance.now());
    }
    STATS.commits += 1;
    prefetching.generation += 1; // the rerun's charts come first: no more figures computed ahead
    const generation = ++this.generation;
    slider.hideReadout();
    const settled = () => {
      if (generation === this.generation && overlays.size === 0) STATS.settled.push(performance.now());
    };
    const charts = [...overlays.entries()];
    for (const [key, o] of charts) {
      o.takeOverOnRedraw(() => {
        overlays.delete(key);
        settled();
      });
    }
    afterRun().then(() => {
      if (generation !== this.generation) return; // a new drag began: it owns the overlays now
      this.slider = null;
      const left = overlays.size;
      for (const [key, o] of [...overlays.entries()]) {
        if (o.gd.isConnected && o.gd.dataset.pending) continue; // a kept chart still drawing: its takeover
        // far from the window (static/chart/chart.js), a chart may still be given its new figure
        // (the page can take a large one late) and would hold it back: the overlay stays, unseen,
        // until the chart comes near, then goes if nothing is left to draw (else: its takeover)
        if (o.gd.isConnected && o.gd.parentElement?.__chart?.near === false) {
          o.gd.addEventListener("attn-chart-near", () => {
            if (o.gd.dataset.pending || overlays.get(key) !== o) return;
            o.restore();
            overlays.delete(key);
            settled();
          }, { once: true });
          continue;
        }
        o.restore();
        overlays.delete(key);
      }
      if ((left && !overlays.size) || !charts.length) settled();
    });
  },

  /** After a release that changed nothing (no `change` event): the overlays go at once. */
  settleIfIdle(slider) {
    if (this.slider !== slider || slider.pressed) return;
    if (slider.read() !== slider.committed) return; // a `change` is on its way
    this.generation += 1;
    this.slider = null;
    slider.hideReadout();
    for (const [key, o] of [...overlays.entries()]) {
      o.restore();
      overlays.delete(key);
    }
  },
};

/** Resolves once the rerun a commit starts has finished (the app root's script state went to
 * "running" and back), two animation frames later; after 10 s without a run, resolves anyway. */
function afterRun() {
  const app = document.querySelector('[data-testid="stApp"]');
  return new Promise((resolve) => {
    if (!app) return resolve();
    let seenRunning = false;
    const finish = () => {
      observer.disconnect();
      clearTimeout(timer);
      requestAnimationFrame(() => requestAnimationFrame(resolve));
    };
    const observer = new MutationObserver(() => {
      const state = app.getAttribute("data-test-script-state");
      if (state === "running") seenRunning = true;
      else if (seenRunning) finish();
    });
    observer.observe(app, { attributes: true, attributeFilter: ["data-test-script-state"] });
    const timer = setTimeout(finish, 10000);
  });
}

/** A title template filled from the live state: {name} or {name:spec} as Python's format. */
function fill(template, state) {
  return template.replace(/\{(\w+)(?::([^}]*))?\}/g, (_, name, spec) => M.pyFormat(Number(state[name]), spec || ""));
}

// ---------------------------------------------------------------------------------------------
// an overlay: a canvas over one Plotly chart, and the chart's nodes it hides while it draws
// ---------------------------------------------------------------------------------------------

class Overlay {
  /** Where the chart shown with key `key` (ui.layout.show_figure) is, or null: layout reads only. */
  static locate(key) {
    const box = document.querySelector(`.st-key-${CSS.escape(key)}`);
    const gd = box?.querySelector(".js-plotly-plot");
    if (!gd || !gd._fullLayout || !gd._fullData || !gd.calcdata) return null;
    return {
      key,
      box,
      gd,
      boxRect: box.getBoundingClientRect(),
      gdRect: gd.getBoundingClientRect(),
      static: getComputedStyle(box).position === "static",
    };
  }

  constructor({ box, gd, boxRect, gdRect, static: isStatic }) {
    this.box = box;
    this.gd = gd;
    this.rev = gd.dataset.rev; // a kept chart (ui/house_chart.py) counts its drawings here
    this.hidden = new Map(); // node -> its visibility before
    this.clones = [];
    this.maps = new Map(); // heatmap trace uid -> its MapLayer (one pixel per cell, scaled by CSS)
    this.canvas = document.createElement("canvas");
    this.canvas.className = "live-overlay";
    this.canvas.setAttribute("aria-hidden", "true");
    // above a map layer (zIndex 1, mapLayer): what the canvas draws over a map (its peaks) shows
    Object.assign(this.canvas.style, { position: "absolute", pointerEvents: "none", zIndex: "2" });
    if (isStatic) {
      this.boxPosition = box.style.position;
      box.style.position = "relative";
    }
    box.appendChild(this.canvas);
    // the chart under an overlay may wait until it is near the window to draw a new figure: the
    // overlay shows that figure meanwhile (static/chart/chart.js)
    gd.dataset.overlaid = "1";
    this.ctx = this.canvas.getContext("2d");
    this.size(boxRect, gdRect);
  }

  live() {
    return this.gd.isConnected && this.canvas.isConnected;
  }

  /** Clear the canvas (sized to the chart once: reading the layout every frame would force the
   * browser to lay the page out again after each frame's changes). */
  begin() {
    this.ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    this.ctx.clearRect(0, 0, this.w, this.h);
    for (const c of this.clones) c.remove();
    this.clones = [];
  }

  size(b, g) {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.round(g.width);
    const h = Math.round(g.height);
    Object.assign(this.canvas.style, {
      left: `${g.left - b.left}px`,
      top: `${g.top - b.top}px`,
      width: `${w}px`,
      height: `${h}px`,
    });
    this.canvas.width = Math.round(w * dpr);
    this.canvas.height = Math.round(h * dpr);
    Object.assign(this, { w, h, dpr, left: g.left - b.left, top: g.top - b.top });
  }

  hide(node) {
    if (!node || this.hidden.has(node)) return;
    this.hidden.set(node, node.style.visibility);
    node.style.visibility = "hidden";
  }

  /** Cover a text of the chart ("title", "annotation:<name>") with a clone that says `text`. */
  text(where, text) {
    let node = null;
    if (where === "title") node = this.gd.querySelector(".g-gtitle .gtitle");
    else if (where.startsWith("annotation:")) {
      const i = this.gd._fullLayout.annotations.findIndex((a) => a.name === where.slice(11));
      node = i < 0 ? null : this.gd.querySelector(`g.annotation[data-index="${i}"] text.annotation-text`);
    }
    if (!node || /[<>]/.test(text)) return;
    const clone = node.cloneNode(true);
    const leaf = deepestText(clone);
    if (!leaf) return;
    leaf.nodeValue = text;
    this.hide(node);
    clone.style.visibility = "visible";
    node.parentNode.insertBefore(clone, node.nextSibling);
    this.clones.push(clone);
  }

  /** Put back everything hidden, remove the clones and the canvas. */
  restore() {
    for (const [node, before] of this.hidden) node.style.visibility = before;
    this.hidden.clear();
    for (const c of this.clones) c.remove();
    this.clones = [];
    this.canvas.remove();
    delete this.gd.dataset.overlaid;
    for (const m of this.maps.values()) m.wrap.remove();
    this.maps.clear();
    if (this.boxPosition !== undefined) this.box.style.position = this.boxPosition;
    this.watcher?.disconnect();
    this.watcher = null;
  }

  /** Restore as soon as the Python figure is drawn: Streamlit draws a new figure into a new chart
   * element; a kept chart (ui/house_chart.py) draws it into the same one and counts it (data-rev).
   * Watched through DOM mutations of the chart's box (an animation-frame loop would make the browser paint the whole page every frame while it is busiest: measured, the new charts came
   * up to 0.6 s later). */
  takeOverOnRedraw(done) {
    if (this.watcher) return;
    const drawn = () => {
      const gd = this.box.isConnected ? this.box.querySelector(".js-plotly-plot") : null;
      const redrawn = gd && (gd !== this.gd || (gd.dataset.rev !== undefined && gd.dataset.rev !== this.rev));
      return !this.box.isConnected || (redrawn && gd._fullLayout && gd.querySelector(".main-svg"));
    };
    this.watcher = new MutationObserver(() => {
      if (!drawn()) return;
      STATS.takeovers += 1;
      this.restore();
      done();
    });
    this.watcher.observe(this.box, { childList: true, subtree: true, attributes: true, attributeFilter: ["data-rev"] });
  }

  // --- the chart's pieces ---------------------------------------------------------------

  trace(meta) {
    const i = this.gd._fullData.findIndex((t) => t.meta === meta);
    return i < 0 ? null : { i, t: this.gd._fullData[i], node: this.gd.calcdata[i]?.[0]?.node3?.node?.() ?? null };
  }

  axis(ref) {
    return this.gd._fullLayout[`${ref[0]}axis${ref.slice(1)}`];
  }

  /** Hide the layout shape / annotation named `name`; returns {shape|annotation, node} or null. */
  shape(name) {
    const i = this.gd._fullLayout.shapes.findIndex((s) => s.name === name);
    if (i < 0) return null;
    return { i, s: this.gd._fullLayout.shapes[i], node: this.gd.querySelector(`.shapelayer path[data-index="${i}"]`) };
  }

  annotation(name) {
    const i = this.gd._fullLayout.annotations.findIndex((a) => a.name === name);
    if (i < 0) return null;
    return { i, a: this.gd._fullLayout.annotations[i], node: this.gd.querySelector(`g.annotation[data-index="${i}"]`) };
  }

  /** Move a named annotation (and hide the original) by dx px: a translated clone of it. */
  moveAnnotation(name, dx) {
    const a = this.annotation(name);
    if (!a?.node) return;
    const wrap = document.createElementNS(SVG, "g");
    wrap.setAttribute("transform", `translate(${dx.toFixed(2)},0)`);
    const clone = a.node.cloneNode(true);
    clone.style.visibility = "visible";
    wrap.appendChild(clone);
    this.hide(a.node);
    a.node.parentNode.insertBefore(wrap, a.node.nextSibling);
    this.clones.push(wrap);
  }

  /** Relabel the ticks of a linear axis whose range became [0, c] with five intervals
   * (M.weightAxis): the tick k of the old axis now reads k·dtick. */
  relabel(ax, axisSpec) {
    const texts = [...this.gd.querySelectorAll(`g.${ax._id}tick text`)];
    for (const node of texts) {
      const x = node.__data__?.x ?? node.parentNode.__data__?.x;
      if (x === undefined) continue;
      const k = Math.round(x / ax.dtick);
      const clone = node.cloneNode(true);
      clone.textContent = M.tickLabel(k * axisSpec.dtick, axisSpec.decimals);
      clone.style.visibility = "visible";
      this.hide(node);
      node.parentNode.insertBefore(clone, node.nextSibling);
      this.clones.push(clone);
    }
  }

  /** The colour bar of heatmap trace `tr` for a colour range [lo, hi]: its tick labels as Plotly
   * will draw them for that range (niceTicks), at their places on the bar; the old ones hidden. */
  relabelColorbar(tr, lo, hi) {
    const t = tr.t;
    const bar = this.gd.querySelector(`g.cb${CSS.escape(t.uid)}`);
    const old = bar ? [...bar.querySelectorAll(`g.ycb${CSS.escape(t.uid)}tick text`)] : [];
    // the bar's pixel scale, from two of its ticks: y = a + b * value
    const placed = old
      .map((n) => [Number(n.getAttribute("data-unformatted")?.replace("\u2212", "-")), translateY(n)])
      .filter(([v, y]) => Number.isFinite(v) && Number.isFinite(y));
    if (placed.length < 2 || !(t.zmax > t.zmin) || !(hi > lo)) return;
    const [[v0, y0], [v1, y1]] = [placed[0], placed[placed.length - 1]];
    const b = (y1 - y0) / (v1 - v0);
    const yBottom = y0 + b * (t.zmin - v0);
    const yTop = y0 + b * (t.zmax - v0);
    const ticks = M.niceTicks(lo, hi, Math.abs(yBottom - yTop));
    if (!ticks) return;
    for (const node of old) this.hide(node);
    const model = old[0];
    for (const { value, label } of ticks) {
      const clone = model.cloneNode(true);
      clone.textContent = label;
      clone.style.visibility = "visible";
      clone.setAttribute("transform", `translate(0,${(yBottom + ((value - lo) / (hi - lo)) * (yTop - yBottom)).toFixed(2)})`);
      model.parentNode.parentNode.appendChild(clone);
      this.clones.push(clone);
    }
  }
}

function translateY(node) {
  const m = /translate\(\s*[-\d.e]+\s*,\s*([-\d.e]+)\s*\)/.exec(node.getAttribute("transform") || "");
  return m ? Number(m[1]) : NaN;
}

function deepestText(node) {
  const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
  let found = null;
  while (walker.nextNode()) {
    if (walker.currentNode.nodeValue.trim()) {
      if (found) return null; // several text pieces (a line break, a formula): left as it is
      found = walker.currentNode;
    }
  }
  return found;
}

// ---------------------------------------------------------------------------------------------
// drawing on the canvas, in a chart's axes
// ---------------------------------------------------------------------------------------------

/** Whether a linear axis is a weight axis (figures.common.weight_axis): [0, c], five intervals. */
function isWeightAxis(ax) {
  return ax && ax.type === "linear" && ax.range[0] === 0 && Math.abs(ax.range[1] / ax.dtick - 5) < 1e-9;
}

/** The range of a weight axis for values up to `top`, its ticks relabelled; another axis keeps
 * its range (null: the chart's own mapping). */
function weightRange(o, ax, top) {
  if (!isWeightAxis(ax)) return null;
  const spec = M.weightAxis(top);
  o.relabel(ax, spec);
  return spec.range;
}

/** Pixel of a data value on an axis (its own range, or `range` [lo, hi] for a linear axis). */
function px(ax, v, range = null) {
  if (!range) return ax._offset + ax.d2p(v);
  const f = (v - range[0]) / (range[1] - range[0]);
  return ax._id[0] === "x" ? ax._offset + f * ax._length : ax._offset + (1 - f) * ax._length;
}

function clip(ctx, xa, ya) {
  ctx.beginPath();
  ctx.rect(xa._offset, ya._offset, xa._length, ya._length);
  ctx.clip();
}

function dashOf(dash, width) {
  const w = Math.max(width, 3);
  if (dash === "dot") return [w, w];
  if (dash === "dash") return [3 * w, 3 * w];
  if (dash === "dashdot") return [3 * w, w, w, w];
  if (dash === "longdash") return [5 * w, 5 * w];
  return [];
}

/** A polyline with gaps at NaN (Plotly's connectgaps false). */
function line(o, xa, ya, xs, ys, style, yRange = null) {
  const ctx = o.ctx;
  ctx.save();
  clip(ctx, xa, ya);
  ctx.strokeStyle = style.color;
  ctx.lineWidth = style.width;
  ctx.setLineDash(dashOf(style.dash, style.width));
  ctx.lineJoin = "round";
  ctx.beginPath();
  let pen = false;
  for (let i = 0; i < xs.length; i++) {
    const y = ys[i];
    if (y === null || Number.isNaN(y)) {
      pen = false;
      continue;
    }
    const X = px(xa, xs[i]);
    const Y = px(ya, y, yRange);
    if (pen) ctx.lineTo(X, Y);
    else ctx.moveTo(X, Y);
    pen = true;
  }
  ctx.stroke();
  ctx.restore();
}

/** A filled area under a line down to y = 0 (fill: tozeroy). */
function area(o, xa, ya, xs, ys, color, yRange = null) {
  const ctx = o.ctx;
  ctx.save();
  clip(ctx, xa, ya);
  ctx.fillStyle = color;
  ctx.beginPath();
  const y0 = px(ya, 0, yRange);
  ctx.moveTo(px(xa, xs[0]), y0);
  for (let i = 0; i < xs.length; i++) ctx.lineTo(px(xa, xs[i]), px(ya, ys[i], yRange));
  ctx.lineTo(px(xa, xs[xs.length - 1]), y0);
  ctx.closePath();
  ctx.fill();
  ctx.restore();
}

/** Vertical segments from 0 to each value (a stem plot). */
function stems(o, xa, ya, xs, ys, style, yRange = null) {
  const ctx = o.ctx;
  ctx.save();
  clip(ctx, xa, ya);
  ctx.strokeStyle = style.color;
  ctx.lineWidth = style.width;
  ctx.beginPath();
  const y0 = px(ya, 0, yRange);
  for (let i = 0; i < xs.length; i++) {
    if (!Number.isFinite(ys[i])) continue;
    const X = px(xa, xs[i]);
    ctx.moveTo(X, y0);
    ctx.lineTo(X, px(ya, ys[i], yRange));
  }
  ctx.stroke();
  ctx.restore();
}

const STAR = (r) => {
  const rs = r * 1.4;
  const [x1, x2, x3, x4] = [rs * 0.225, rs * 0.951, rs * 0.363, rs * 0.588];
  const [y1, y2, y3, y4] = [-rs * 0.309, rs * 0.382, rs * 0.118, rs * 0.809];
  return new Path2D(
    `M${x1},${y1}H${x2}L${x3},${y3}L${x4},${y4}L0,${y2}L-${x4},${y4}L-${x3},${y3}L-${x2},${y1}H-${x1}L0,-${rs}Z`,
  );
};

/** Markers as Plotly draws them (circle, star, x-thin): size = diameter in px. `colors` is one
 * colour, or one per point. */
function markers(o, xa, ya, xs, ys, style, yRange = null) {
  const ctx = o.ctx;
  ctx.save();
  clip(ctx, xa, ya);
  const r = style.size / 2;
  ctx.globalAlpha = style.opacity ?? 1;
  ctx.lineWidth = style.lineWidth ?? 0;
  ctx.strokeStyle = style.lineColor ?? "#444";
  const star = style.symbol === "star" ? STAR(r) : null;
  for (let i = 0; i < xs.length; i++) {
    if (!Number.isFinite(ys[i])) continue;
    const X = px(xa, xs[i]);
    const Y = px(ya, ys[i], yRange);
    ctx.fillStyle = Array.isArray(style.colors) ? style.colors[i] : style.colors;
    if (style.symbol === "x-thin") {
      const rx = r * 1.4;
      ctx.beginPath();
      ctx.moveTo(X + rx, Y + rx);
      ctx.lineTo(X - rx, Y - rx);
      ctx.moveTo(X + rx, Y - rx);
      ctx.lineTo(X - rx, Y + rx);
      ctx.stroke();
      continue;
    }
    ctx.beginPath();
    if (star) {
      ctx.translate(X, Y);
      ctx.fill(star);
      if (ctx.lineWidth > 0) ctx.stroke(star);
      ctx.translate(-X, -Y);
      continue;
    }
    ctx.arc(X, Y, r, 0, 2 * Math.PI);
    ctx.fill();
    if (ctx.lineWidth > 0) ctx.stroke();
  }
  ctx.restore();
}

/** A vertical line at x over the subplot's height (a layout shape's style). */
function vline(o, xa, ya, x, style) {
  const ctx = o.ctx;
  ctx.save();
  clip(ctx, xa, ya);
  ctx.strokeStyle = style.color;
  ctx.lineWidth = style.width;
  ctx.setLineDash(dashOf(style.dash, style.width));
  const X = px(xa, x);
  ctx.beginPath();
  ctx.moveTo(X, ya._offset);
  ctx.lineTo(X, ya._offset + ya._length);
  ctx.stroke();
  ctx.restore();
}

// colour scales: [[fraction, "rgb(r, g, b)" | "#rrggbb"], ...] -> value -> [r, g, b]
const scales = new WeakMap();
function parseColor(c) {
  if (c.startsWith("#")) {
    const h = c.length === 4 ? [...c.slice(1)].map((d) => d + d).join("") : c.slice(1);
    return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16));
  }
  return c.match(/[\d.]+/g).slice(0, 3).map(Number);
}
function colorScale(scale, reverse = false) {
  let s = scales.get(scale);
  if (!s) {
    s = scale.map(([f, c]) => [Number(f), parseColor(c)]);
    scales.set(scale, s);
  }
  const stops = reverse ? s.map(([f, c]) => [1 - f, c]).reverse() : s;
  return (f) => {
    if (!(f > 0)) return stops[0][1];
    if (f >= 1) return stops[stops.length - 1][1];
    let k = 1;
    while (k < stops.length - 1 && stops[k][0] < f) k++;
    const [f0, c0] = stops[k - 1];
    const [f1, c1] = stops[k];
    const u = f1 > f0 ? (f - f0) / (f1 - f0) : 0;
    return [0, 1, 2].map((j) => Math.round(c0[j] + (c1[j] - c0[j]) * u));
  };
}
function rgb(c) {
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

/** The colour range of values as Plotly's auto range would take it: [min, max] of the finite ones.
 * `values`: an array of numbers, or of rows (a matrix). */
function autoRange(values) {
  let lo = Infinity;
  let hi = -Infinity;
  const scan = (row) => {
    for (let i = 0; i < row.length; i++) {
      const v = row[i];
      if (!Number.isFinite(v)) continue;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  };
  if (values.length && typeof values[0] === "object") values.forEach(scan);
  else scan(values);
  return lo <= hi ? [lo, hi] : [0, 1];
}

/** A heatmap without cell texts (the (Q, N) weight maps): its cells written into a canvas of one
 * pixel per cell through a colour lookup table (no allocation per cell), laid over the trace's cells
 * in the chart's plot area and scaled there by CSS. A frame writes rows x cols pixels; the browser
 * scales them when it composites, where drawing them scaled into the chart-sized overlay made every
 * frame repaint the whole plot area (the kernel-regression map: 60 x 200 cells over ~1,000 x 400 px).
 * `at`: the axes, the top-left corner of cell (0, 0)'s box and the cell steps (negative: reversed). */
function mapLayer(o, tr, z, lo, hi, at) {
  const rows = z.length;
  const cols = z[0].length;
  const uid = tr.t.uid;
  let m = o.maps.get(uid);
  if (!m || m.canvas.width !== cols || m.canvas.height !== rows) {
    m?.wrap.remove();
    const wrap = document.createElement("div");
    wrap.className = "live-map";
    wrap.setAttribute("aria-hidden", "true");
    const { xa, ya } = at;
    Object.assign(wrap.style, {
      position: "absolute",
      pointerEvents: "none",
      zIndex: "1",
      overflow: "hidden", // the plot area clips the cells, as the chart does
      left: `${o.left + xa._offset}px`,
      top: `${o.top + ya._offset}px`,
      width: `${xa._length}px`,
      height: `${ya._length}px`,
    });
    const canvas = document.createElement("canvas");
    canvas.className = "live-overlay";
    canvas.width = cols;
    canvas.height = rows;
    Object.assign(canvas.style, {
      position: "absolute",
      imageRendering: "pixelated", // cells, not a blur (Plotly's zsmooth false)
      left: `${Math.min(at.x0, at.x0 + at.dx * cols) - xa._offset}px`,
      top: `${Math.min(at.y0, at.y0 + at.dy * rows) - ya._offset}px`,
      width: `${Math.abs(at.dx) * cols}px`,
      height: `${Math.abs(at.dy) * rows}px`,
    });
    wrap.appendChild(canvas);
    o.box.appendChild(wrap);
    const ctx = canvas.getContext("2d");
    const img = ctx.createImageData(cols, rows);
    m = { wrap, canvas, ctx, img, px: new Uint32Array(img.data.buffer) };
    o.maps.set(uid, m);
  }
  const lut = colorLut(tr.t.colorscale, tr.t.reversescale);
  const top = LUT_SIZE - 1;
  const span = hi - lo;
  const flipX = at.dx < 0;
  const flipY = at.dy < 0;
  for (let i = 0; i < rows; i++) {
    const row = z[i];
    const base = (flipY ? rows - 1 - i : i) * cols;
    for (let j = 0; j < cols; j++) {
      const v = row[j];
      const k = base + (flipX ? cols - 1 - j : j);
      if (!Number.isFinite(v)) {
        m.px[k] = 0; // transparent
        continue;
      }
      const f = span > 0 ? (v - lo) / span : 0.5;
      m.px[k] = lut[f > 0 ? (f >= 1 ? top : Math.round(f * top)) : 0];
    }
  }
  m.ctx.putImageData(m.img, 0, 0);
}

const LUT_SIZE = 1024;
const luts = new Map(); // colour scale (JSON) and direction -> LUT_SIZE opaque pixels (Uint32, RGBA bytes)
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** The colour scale sampled at LUT_SIZE levels, as pixels for a Uint32 view of ImageData. */
function colorLut(scale, reverse = false) {
  const key = JSON.stringify(scale) + (reverse ? "r" : "");
  let lut = luts.get(key);
  if (!lut) {
    const color = colorScale(scale, reverse);
    lut = new Uint32Array(LUT_SIZE);
    for (let k = 0; k < LUT_SIZE; k++) {
      const [r, g, b] = color(k / (LUT_SIZE - 1));
      lut[k] = LITTLE_ENDIAN ? ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0 : ((r << 24) | (g << 16) | (b << 8) | 255) >>> 0;
    }
    luts.set(key, lut);
  }
  return lut;
}

const offscreen = document.createElement("canvas");
const images = new Map(); // "cols x rows" -> a reused ImageData (no garbage per frame)

function imageData(ctx, cols, rows) {
  const k = `${cols}x${rows}`;
  let img = images.get(k);
  if (!img) images.set(k, (img = ctx.createImageData(cols, rows)));
  else img.data.fill(0);
  return img;
}

/** A heatmap trace's axes and the page x of its column j / y of its row i (cell centres): a category
 * axis places cell j at index j, a numeric one at its coordinate. */
function cells(o, tr) {
  const t = tr.t;
  const xa = o.axis(t.xaxis);
  const ya = o.axis(t.yaxis);
  const cx = (j) => (xa.type === "category" || !t.x ? xa._offset + xa.l2p(j) : px(xa, t.x[j]));
  const cy = (i) => (ya.type === "category" || !t.y ? ya._offset + ya.l2p(i) : px(ya, t.y[i]));
  return { xa, ya, cx, cy };
}

/** The marker on each row's largest weight of the map `tr` showing `z` (figures.kernel_regression.
 * weight_matrix_figure's "peak" trace: rows with a defined, non-zero weight; the first largest
 * one, as numpy's nanargmax), drawn in the style of the chart's own `peak` trace, which is hidden. */
function peaks(o, tr, z, peak) {
  const { xa, ya, cx, cy } = cells(o, tr);
  const mk = peak.t.marker;
  const ctx = o.ctx;
  ctx.save();
  clip(ctx, xa, ya);
  ctx.globalAlpha = mk.opacity ?? 1;
  ctx.lineWidth = mk.line?.width ?? 1;
  const open = String(mk.symbol).endsWith("-open"); // an open symbol is stroked in the marker colour
  ctx.strokeStyle = open ? mk.color : (mk.line?.color ?? mk.color);
  ctx.fillStyle = mk.color;
  for (let i = 0; i < z.length; i++) {
    let best = -1;
    let top = 0;
    for (let j = 0; j < z[i].length; j++) {
      const v = z[i][j];
      if (v > top) {
        top = v;
        best = j;
      }
    }
    if (best < 0) continue; // undefined or all-zero row: no marker
    ctx.beginPath();
    ctx.arc(cx(best), cy(i), mk.size / 2, 0, 2 * Math.PI);
    if (!open) ctx.fill();
    ctx.stroke();
  }
  ctx.restore();
  o.hide(peak.node);
}

/** A heatmap trace redrawn with matrix `z` (rows of columns), colours over [lo, hi]; NaN cells are
 * left blank. The trace's own image is hidden. `text`: optional cell texts (rows of strings). */
function heatmap(o, tr, z, lo, hi, text = null) {
  const t = tr.t;
  const rows = z.length;
  const cols = z[0].length;
  const { xa, ya, cx, cy } = cells(o, tr);
  const dx = cols > 1 ? (cx(cols - 1) - cx(0)) / (cols - 1) : xa._length;
  const dy = rows > 1 ? (cy(rows - 1) - cy(0)) / (rows - 1) : ya._length;
  if (!text) {
    mapLayer(o, tr, z, lo, hi, { xa, ya, x0: cx(0) - dx / 2, y0: cy(0) - dy / 2, dx, dy });
    o.hide(tr.node);
    return;
  }
  if (offscreen.width !== cols || offscreen.height !== rows) {
    offscreen.width = cols;
    offscreen.height = rows;
  }
  const octx = offscreen.getContext("2d");
  const img = imageData(octx, cols, rows);
  const color = colorScale(t.colorscale, t.reversescale);
  const span = hi - lo;
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const v = z[i][j];
      const k = 4 * (i * cols + j);
      if (!Number.isFinite(v)) continue; // transparent
      const c = color(span > 0 ? (v - lo) / span : 0.5);
      img.data[k] = c[0];
      img.data[k + 1] = c[1];
      img.data[k + 2] = c[2];
      img.data[k + 3] = 255;
    }
  }
  octx.putImageData(img, 0, 0);
  const ctx = o.ctx;
  ctx.save();
  clip(ctx, xa, ya);
  ctx.imageSmoothingEnabled = false;
  ctx.translate(cx(0) - dx / 2, cy(0) - dy / 2);
  ctx.scale(dx / 1, dy / 1);
  ctx.drawImage(offscreen, 0, 0);
  ctx.restore();
  if (text) {
    const font = t.textfont || {};
    const family = font.family || o.gd._fullLayout.font.family;
    ctx.save();
    clip(ctx, xa, ya);
    ctx.font = `${font.size || 12}px ${family}`;
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    for (let i = 0; i < rows; i++) {
      for (let j = 0; j < cols; j++) {
        const v = z[i][j];
        const c = Number.isFinite(v) ? color(span > 0 ? (v - lo) / span : 0.5) : [255, 255, 255];
        const bright = (c[0] * 299 + c[1] * 587 + c[2] * 114) / 1000;
        ctx.fillStyle = t._input?.textfont?.color || (bright < 128 ? "#fff" : "#444"); // Plotly: contrast
        ctx.fillText(text[i][j], cx(j), cy(i));
      }
    }
    ctx.restore();
  }
  o.hide(tr.node);
}

// ---------------------------------------------------------------------------------------------
// models: the page's numbers as functions of the live state (memoised per model and value)
// ---------------------------------------------------------------------------------------------

const models = {
  byData: new WeakMap(), // the data's model object -> its model (no JSON text per frame)
  byText: new Map(), // the model's JSON text -> its model: sliders of one page share one, and a
  // rerun that changed nothing else keeps the numbers already computed
  get(model) {
    if (!MODELS[model?.kind]) return null;
    let m = this.byData.get(model);
    if (!m) {
      const text = JSON.stringify(withoutState(model));
      m = this.byText.get(text);
      if (!m) {
        m = new (MODELS[model.kind])(model);
        this.byText.set(text, m);
        if (this.byText.size > 8) this.byText.delete(this.byText.keys().next().value);
      }
      this.byData.set(model, m);
    }
    return m;
  },
};

/** A model without its sliders' values (h, x*, d_k, τ): what its numbers depend on besides them. */
function withoutState(model) {
  const { h, xq, x0, dk, temperature, ...rest } = model;
  return rest;
}

function memo(fn) {
  const store = new Map();
  return (...args) => {
    const k = args.join("|");
    if (!store.has(k)) {
      if (store.size > 256) store.clear();
      store.set(k, fn(...args));
    }
    return store.get(k);
  };
}

/** Kernel regression (ui.kernel_regression.live_model). */
class KernelRegression {
  constructor(m) {
    this.m = m;
    this.fit = memo((h) => M.nwPredict(m.x, m.y, m.grid, m.kernel, h));
    this.row = memo((h, xq) => ({
      w: M.nwWeights(m.x, [xq], m.kernel, h)[0],
      yHat: M.nwPredict(m.x, m.y, [xq], m.kernel, h)[0],
    }));
    this.matrix = memo((h) => M.nwWeights(m.x, m.queries, m.kernel, h));
    this.cv = memo((h) => M.looCv(m.x, m.y, m.kernel, h));
  }
}

/** Kernels -> attention (ui.attention.k2a_live_model): Gaussian NW and attention on one data set. */
class KernelsToAttention {
  constructor(m) {
    this.m = m;
    this.one = memo((h, x0) => {
      const att = M.gaussianAttention(m.x, m.y, [x0], h);
      return { nw: M.nwWeights(m.x, [x0], "gaussian", h)[0], att: att.weights[0], prediction: att.yHat[0] };
    });
    this.grid = memo((h) => {
      const att = M.gaussianAttention(m.x, m.y, m.queries, h);
      const nw = M.nwWeights(m.x, m.queries, "gaussian", h);
      // the NW fit as its weights times y (nw_predict's numbers to rounding: one pass fewer)
      const fitNw = Float64Array.from(nw, (w) => w.reduce((s, wi, i) => s + wi * m.y[i], 0));
      return { nw, att: att.weights, fitNw, fitAtt: att.yHat };
    });
  }
}

/** Scaled dot-product attention (ui.attention.sdp_live_model): raw scores per d_k, mask, scale. */
class ScaledDotProduct {
  constructor(m) {
    this.m = m;
    this.mask = m.mask ? m.mask.map((row) => [...row].map((c) => c === "1")) : null;
    this.steps = memo((dk, temperature) => {
      const raw = m.raw[String(dk)];
      if (!raw) return null;
      return { raw, ...M.attentionSteps(raw, this.scale(dk, temperature), this.mask) };
    });
  }

  /** The numbers of the titles that follow from the state: the scale factor and τ = 1/scale. */
  derive(state) {
    const scale = this.scale(state.dk, state.temperature);
    return { scale, tau: 1 / scale };
  }

  scale(dk, temperature) {
    if (this.m.mode === "sqrt_dk") return 1 / Math.sqrt(dk);
    if (this.m.mode === "one") return 1;
    return 1 / temperature;
  }
}

const MODELS = { kr: KernelRegression, k2a: KernelsToAttention, sdp: ScaledDotProduct };

/** A readout's number (Readout.stat in ui/live_slider.py). */
function stat(model, state, name) {
  if (name === "max_weight" || name === "entropy") {
    const s = model.steps(state.dk, state.temperature);
    if (!s) return NaN;
    const r = M.rowStats(s.weights);
    return name === "max_weight" ? r.maxWeight : r.entropy;
  }
  if (name === "scale") return model.scale(state.dk, state.temperature);
  if (name === "temperature") return 1 / model.scale(state.dk, state.temperature);
  if (name === "raw_std") {
    const s = model.steps(state.dk, state.temperature);
    return s ? M.scoreStd(s.raw) : NaN;
  }
  if (name === "tau") return state.h * state.h;
  if (name === "prediction") return model.one(state.h, state.x0).prediction;
  throw new Error(`unknown readout ${name}`);
}

// ---------------------------------------------------------------------------------------------
// views: what each live chart redraws (the figures.* builder named beside each)
// ---------------------------------------------------------------------------------------------

function lineStyle(tr, fallback) {
  const l = tr?.t?.line;
  return l ? { color: l.color, width: l.width, dash: l.dash } : fallback;
}

function markerStyle(tr, fallback) {
  const mk = tr?.t?.marker;
  if (!mk) return fallback;
  return {
    size: mk.size,
    symbol: mk.symbol,
    colors: mk.color,
    opacity: mk.opacity,
    lineWidth: mk.line?.width ?? 0,
    lineColor: mk.line?.color,
  };
}

/** The vertical marker `name` (a layout shape) drawn at x instead of where it is; its label (an
 * annotation of the same name, if any) moved along. */
function movedVline(o, name, x) {
  const sh = o.shape(name);
  if (!sh) return;
  const s = sh.s;
  const xa = o.axis(s.xref);
  const ya = o.axis(s.yref.split(" ")[0] === "paper" ? "y" : s.yref.split(" ")[0]);
  o.hide(sh.node);
  const yaFull = s.yref === "paper" ? { _offset: o.gd._fullLayout._size.t, _length: o.gd._fullLayout._size.h } : ya;
  vline(o, xa, yaFull, x, { color: s.line.color, width: s.line.width, dash: s.line.dash });
  const a = o.annotation(name);
  if (a) o.moveAnnotation(name, px(xa, x) - px(xa, Number(s.x0)));
}

/** What each view computes, without drawing (warmUp). */
const WARM = {
  kr_fit: (m, st) => m.fit(st.h),
  kr_row: (m, st) => m.row(st.h, st.xq),
  kr_matrix: (m, st) => m.matrix(st.h),
  kr_cv: (m, st) => m.cv(st.h),
  k2a_weights: (m, st) => m.one(st.h, st.x0),
  k2a_matrix: (m, st) => m.grid(st.h),
  k2a_fit: (m, st) => m.grid(st.h),
  k2a_side: (m, st) => m.grid(st.h),
  sdp_pipeline: (m, st) => m.steps(st.dk, st.temperature),
};

const VIEWS = {
  /** figures.kernel_regression.fit_figure: the fit, its undefined points, the x* marker. */
  kr_fit(o, model, st) {
    const m = model.m;
    const fit = model.fit(st.h);
    const xa = o.axis("x");
    const ya = o.axis("y");
    const tr = o.trace("fit");
    if (tr) {
      line(o, xa, ya, m.grid, fit, lineStyle(tr));
      o.hide(tr.node);
    }
    const und = o.trace("undefined");
    if (und) o.hide(und.node);
    const bad = [];
    for (let i = 0; i < fit.length; i++) if (Number.isNaN(fit[i])) bad.push(m.grid[i]);
    if (bad.length) {
      const yMin = Math.min(...m.y);
      markers(o, xa, ya, bad, bad.map(() => yMin), {
        size: 9,
        symbol: "x-thin",
        colors: "#d62728",
        lineWidth: 2,
        lineColor: "#d62728",
      });
    }
    movedVline(o, "x_query", st.xq);
  },

  /** figures.kernel_regression.attention_row_figure: samples coloured by their weight, the
   * estimate at x*, the weights as stems on a weight axis that follows the largest weight. */
  kr_row(o, model, st) {
    const m = model.m;
    const { w, yHat } = model.row(st.h, st.xq);
    const xa = o.axis("x");
    const ya = o.axis("y");
    const ya2 = o.axis("y2");
    const dots = o.trace("weighted");
    if (dots) {
      const style = markerStyle(dots);
      const c = w.map((v) => (Number.isNaN(v) ? 0 : v));
      const [lo, hi] = autoRange(c);
      const color = colorScale(dots.t.marker.colorscale, dots.t.marker.reversescale);
      style.colors = Array.from(c, (v) => rgb(color(hi > lo ? (v - lo) / (hi - lo) : 0.5)));
      markers(o, xa, ya, m.x, m.y, style);
      o.hide(dots.node);
    }
    const est = o.trace("estimate");
    if (est) o.hide(est.node);
    if (Number.isFinite(yHat)) {
      markers(o, xa, ya, [st.xq], [yHat], markerStyle(est, {
        size: 16, symbol: "star", colors: "#D55E00", lineWidth: 1, lineColor: "black",
      })); // prettier-ignore
    }
    const stem = o.trace("stems");
    if (stem && ya2) {
      const range = weightRange(o, ya2, Math.max(...Array.from(w).filter(Number.isFinite), 0));
      stems(o, xa, ya2, m.x, w, lineStyle(stem), range);
      o.hide(stem.node);
    }
    movedVline(o, "x_query", st.xq);
    movedVline(o, "x_query_weights", st.xq);
  },

  /** figures.kernel_regression.weight_matrix_figure: the (Q, N) map and its row peaks. */
  kr_matrix(o, model, st) {
    const tr = o.trace("weights");
    if (!tr) return;
    const z = model.matrix(st.h);
    const [lo, hi] = tr.t.zauto ? autoRange(z) : [tr.t.zmin, tr.t.zmax];
    heatmap(o, tr, z, lo, hi);
    o.relabelColorbar(tr, lo, hi);
    const peak = o.trace("peak");
    if (peak) peaks(o, tr, z, peak);
  },

  /** figures.kernel_regression.cv_figure: the current h and its leave-one-out error. */
  kr_cv(o, model, st) {
    const tr = o.trace("current");
    const cv = model.cv(st.h);
    movedVline(o, "current_h", st.h);
    if (tr) {
      o.hide(tr.node);
      if (Number.isFinite(cv)) markers(o, o.axis("x"), o.axis("y"), [st.h], [cv], markerStyle(tr));
    }
  },

  /** figures.attention.weight_distribution: one query's NW weights (filled line) and attention
   * weights (dots), on a weight axis that follows the largest weight. */
  k2a_weights(o, model, st) {
    const m = model.m;
    const { nw, att } = model.one(st.h, st.x0);
    const xa = o.axis("x");
    const ya = o.axis("y");
    const range = weightRange(o, ya, Math.max(...nw, ...att));
    const a = o.trace("nw");
    if (a) {
      area(o, xa, ya, m.x, nw, a.t.fillcolor, range);
      line(o, xa, ya, m.x, nw, lineStyle(a), range);
      o.hide(a.node);
    }
    const b = o.trace("att");
    if (b) {
      markers(o, xa, ya, m.x, att, markerStyle(b), range);
      o.hide(b.node);
    }
    movedVline(o, "x_query", st.x0);
  },

  /** figures.attention.nw_matrix: the attention weights (Q, N). */
  k2a_matrix(o, model, st) {
    const tr = o.trace("weights");
    if (!tr) return;
    const z = model.grid(st.h).att;
    const [lo, hi] = tr.t.zauto ? autoRange(z) : [tr.t.zmin, tr.t.zmax];
    heatmap(o, tr, z, lo, hi);
    o.relabelColorbar(tr, lo, hi);
  },

  /** figures.attention.fit_figure (uids "nw", "att"): both fits on the query grid. */
  k2a_fit(o, model, st) {
    const m = model.m;
    const g = model.grid(st.h);
    for (const [uid, ys] of [["nw", g.fitNw], ["att", g.fitAtt]]) {
      const tr = o.trace(uid);
      if (!tr) continue;
      line(o, o.axis("x"), o.axis("y"), m.queries, ys, lineStyle(tr));
      o.hide(tr.node);
    }
  },

  /** figures.attention.side_by_side: NW and attention maps on one colour range. */
  k2a_side(o, model, st) {
    const g = model.grid(st.h);
    const hi = Math.max(autoRange(g.nw)[1], autoRange(g.att)[1]);
    for (const [uid, z] of [["nw", g.nw], ["att", g.att]]) {
      const tr = o.trace(uid);
      if (!tr) continue;
      heatmap(o, tr, z, 0, hi);
      if (tr.t.showscale) o.relabelColorbar(tr, 0, hi);
    }
  },

  /** figures.attention.pipeline_heatmaps (raw, scaled, masked, weights): uids panel0..panel3. */
  sdp_pipeline(o, model, st) {
    const s = model.steps(st.dk, st.temperature);
    if (!s) return;
    const panels = [
      [s.raw, "scores"],
      [s.scaled, "scores"],
      [s.masked, "scores"],
      [s.weights, "weights"],
    ];
    panels.forEach(([z, kind], k) => {
      const tr = o.trace(`panel${k}`);
      if (!tr) return;
      let shown = z;
      let lo = 0;
      let hi = 1;
      if (kind === "scores") {
        shown = z.map((r) => Array.from(r, (v) => (v === -Infinity ? NaN : v)));
        const finite = shown.flatMap((r) => r.filter(Number.isFinite));
        const bound = finite.length ? Math.max(...finite.map(Math.abs)) : 1;
        hi = bound || 1;
        lo = -hi;
      }
      const text = tr.t.text
        ? z.map((r) =>
            Array.from(r, (v) =>
              Number.isNaN(v) ? "NaN" : v === -Infinity ? "\u2212\u221e" : M.pyFormat(v, ".2f"),
            ),
          )
        : null;
      heatmap(o, tr, shown, lo, hi, text);
      if (kind === "scores") o.relabelColorbar(tr, lo, hi);
    });
  },

  /** The d_k curves (figures.attention.line_panels + vline_marks): the current d_k marker. */
  sdp_dk_marker(o, model, st) {
    for (const name of ["current", "current_2", "current_3", "current_4"]) movedVline(o, name, st.dk);
  },
};
