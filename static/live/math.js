// The math of the live sliders, in the browser: the numbers `core` computes, for the frames drawn
// while a slider is dragged (ui/live_slider.py, static/live/live.js).
//
// Pure functions on plain arrays, no DOM. Each one mirrors a `core` function and follows its
// numerics step by step (the stable softmax of kernels with log-weights, NaN rows of compact
// kernels with no sample in reach, exact zeros for masked keys), so that the figure under the hand
// is the figure Python draws on release. tests/e2e/test_live_math.py evaluates this module in
// Chromium on fixed inputs and compares every function with `core` (max relative difference
// <= 1e-9, every kernel of core.kernels.REGISTRY), and checks that a planted difference fails.
//
// Shapes (the legend of core/__init__.py): x, y (N,) samples; queries (Q,); weights (Q, N) as an
// array of Q rows (Float64Array of N), rows = query points; attention scores (L, S), rows = queries.

const SQRT_2PI = Math.sqrt(2 * Math.PI);

// core.kernels.REGISTRY: K(u), support radius (Infinity: never 0), log_power (p when
// K(u) ∝ exp(-|u|^p / p): the weights are a stable softmax of -|d|^p / (p h^p)).
export const KERNELS = {
  gaussian: { support: Infinity, logPower: 2, k: (u) => Math.exp(-0.5 * u * u) / SQRT_2PI },
  laplace: { support: Infinity, logPower: 1, k: (u) => 0.5 * Math.exp(-Math.abs(u)) },
  uniform: { support: 1, logPower: null, k: (u) => (Math.abs(u) <= 1 ? 0.5 : 0) },
  epanechnikov: { support: 1, logPower: null, k: (u) => (Math.abs(u) <= 1 ? 0.75 * (1 - u * u) : 0) },
  biweight: {
    support: 1,
    logPower: null,
    k: (u) => {
      const inside = 1 - u * u;
      return Math.abs(u) <= 1 ? (15 / 16) * inside * inside : 0;
    },
  },
  triangular: { support: 1, logPower: null, k: (u) => (Math.abs(u) <= 1 ? 1 - Math.abs(u) : 0) },
  cosine: {
    support: 1,
    logPower: null,
    k: (u) => (Math.abs(u) <= 1 ? (Math.PI / 4) * Math.cos(0.5 * Math.PI * u) : 0),
  },
  tricube: {
    support: 1,
    logPower: null,
    k: (u) => {
      const a = Math.abs(u);
      const inside = Math.max(1 - a ** 3, 0);
      return a <= 1 ? (70 / 81) * inside ** 3 : 0;
    },
  },
};

/** The registry record of kernel `name`; throws on an unknown name (as core.kernels.get_kernel). */
export function kernel(name) {
  const k = KERNELS[name];
  if (!k) throw new Error(`unknown kernel ${name}; known kernels: ${Object.keys(KERNELS).join(", ")}`);
  return k;
}

/** K(u) elementwise: core.kernels.<name>(u), (M,) -> (M,). */
export function kernelValues(name, u) {
  const k = kernel(name).k;
  return Float64Array.from(u, k);
}

/** |d|^p without pow for p = 1, 2 (core.kernels.power_of_abs). */
function powerOfAbs(d, p) {
  if (p === 2) return d * d;
  const a = Math.abs(d);
  return p === 1 ? a : a ** p;
}

/** Unnormalised kernel values of one query against every sample, (N,): a kernel with log-weights
 * is shifted so that the row's largest value is 1 (core.nadaraya_watson._kernel_block). */
function kernelRow(xq, x, kern, h) {
  const n = x.length;
  const out = new Float64Array(n);
  const p = kern.logPower;
  if (p !== null) {
    const scale = -1 / (p * h ** p);
    let top = -Infinity;
    for (let i = 0; i < n; i++) {
      const z = powerOfAbs(xq - x[i], p) * scale;
      out[i] = z;
      if (z > top) top = z;
    }
    for (let i = 0; i < n; i++) out[i] = Math.exp(out[i] - top);
    return out;
  }
  for (let i = 0; i < n; i++) out[i] = kern.k((xq - x[i]) / h);
  return out;
}

/** Nadaraya-Watson weights: core.nadaraya_watson.nw_weights. (N,), (Q,) -> Q rows of (N,), each
 * summing to 1; a query with zero total weight (compact kernel, no sample in reach) is all NaN. */
export function nwWeights(x, queries, kernelName, h) {
  const kern = kernel(kernelName);
  return Array.from(queries, (q) => {
    const row = kernelRow(q, x, kern, h);
    let s = 0;
    for (let i = 0; i < row.length; i++) s += row[i];
    for (let i = 0; i < row.length; i++) row[i] = s > 0 ? row[i] / s : NaN;
    return row;
  });
}

/** Nadaraya-Watson fit at every query: core.nadaraya_watson.nw_predict, (N,), (N,), (Q,) -> (Q,);
 * NaN where the total kernel weight is 0. */
export function nwPredict(x, y, queries, kernelName, h) {
  const kern = kernel(kernelName);
  const out = new Float64Array(queries.length);
  for (let j = 0; j < queries.length; j++) {
    const row = kernelRow(queries[j], x, kern, h);
    let num = 0;
    let den = 0;
    for (let i = 0; i < row.length; i++) {
      num += row[i] * y[i];
      den += row[i];
    }
    out[j] = den > 0 ? num / den : NaN;
  }
  return out;
}

/** Leave-one-out CV error (1/N) Σ_i (y_i - f̂_{-i}(x_i))² at bandwidth h:
 * core.nadaraya_watson.loo_cv_errors for one h; NaN if some f̂_{-i}(x_i) is undefined. */
export function looCv(x, y, kernelName, h) {
  const kern = kernel(kernelName);
  const n = x.length;
  if (n < 2) return NaN;
  const p = kern.logPower;
  const scale = p === null ? 0 : -1 / (p * h ** p);
  const nearest = p === null ? null : nearestPowers(x, p);
  let sse = 0;
  for (let i = 0; i < n; i++) {
    const shift = p === null ? 0 : nearest[i]; // log-weights: the nearest other sample gets exponent 0
    let num = 0;
    let den = 0;
    for (let j = 0; j < n; j++) {
      if (j === i) continue;
      const k = p === null ? kern.k((x[i] - x[j]) / h) : Math.exp((powerOfAbs(x[i] - x[j], p) - shift) * scale);
      num += k * y[j];
      den += k;
    }
    if (!(den > 0)) return NaN;
    const r = y[i] - num / den;
    sse += r * r;
  }
  return sse / n;
}

const NEAREST = new WeakMap(); // x -> {p -> (N,) |d|^p to the nearest other sample}

/** For each sample, |x_i - x_j|^p to its nearest other sample (computed once per x and p). */
function nearestPowers(x, p) {
  let byPower = NEAREST.get(x);
  if (!byPower) NEAREST.set(x, (byPower = new Map()));
  if (!byPower.has(p)) {
    const n = x.length;
    const out = new Float64Array(n).fill(Infinity);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) if (j !== i) out[i] = Math.min(out[i], powerOfAbs(x[i] - x[j], p));
    }
    byPower.set(p, out);
  }
  return byPower.get(p);
}

/** Gaussian NW as softmax attention: core.kernel_attention.nadaraya_watson_attention.
 * Scores -(q - k)² / (2h²), softmax over the keys, y_hat = weights @ y. Returns {yHat (Q,), weights}. */
export function gaussianAttention(x, y, queries, h) {
  const weights = Array.from(queries, (q) => {
    const scores = Float64Array.from(x, (k) => {
      const d = q - k;
      return -(d * d) / (2 * h * h);
    });
    return softmax(scores);
  });
  const yHat = Float64Array.from(weights, (w) => {
    let s = 0;
    for (let i = 0; i < w.length; i++) s += w[i] * y[i];
    return s;
  });
  return { yHat, weights };
}

/** Softmax of one row over its allowed keys (mask: null, or booleans, true = may attend): masked
 * keys get exactly 0 and a row with no allowed key is all 0 (core.attention.masked_softmax). */
export function softmax(row, allowed = null) {
  const n = row.length;
  const out = new Float64Array(n);
  let top = -Infinity;
  for (let j = 0; j < n; j++) if ((allowed === null || allowed[j]) && row[j] > top) top = row[j];
  if (top === -Infinity) return out; // no allowed key: zeros
  let s = 0;
  for (let j = 0; j < n; j++) {
    if (allowed !== null && !allowed[j]) continue;
    out[j] = Math.exp(row[j] - top);
    s += out[j];
  }
  for (let j = 0; j < n; j++) out[j] /= s;
  return out;
}

/** The attention pipeline on raw scores Q Kᵀ (L rows of S): scaled = raw · scale, masked (-inf
 * where the mask forbids), weights = masked softmax (core.attention.attention_steps, softmax).
 * mask: null or L rows of S booleans. Returns {scaled, masked, weights}, each L rows of (S,). */
export function attentionSteps(raw, scale, mask = null) {
  const scaled = raw.map((r) => Float64Array.from(r, (v) => v * scale));
  const masked = scaled.map((r, i) => (mask ? Float64Array.from(r, (v, j) => (mask[i][j] ? v : -Infinity)) : r));
  const weights = scaled.map((r, i) => softmax(r, mask ? mask[i] : null));
  return { scaled, masked, weights };
}

/** core.attention_analysis.row_stats of a weight matrix (L rows of S): over the rows that hold
 * weight (no NaN, not all zero), the mean largest weight and the mean entropy in nats (log of
 * weights clamped at 1e-12, as core.diagnostics.attention_entropy); NaN rows and zero rows counted. */
export function rowStats(weights) {
  let live = 0;
  let maxSum = 0;
  let entSum = 0;
  let nanRows = 0;
  let zeroRows = 0;
  for (const row of weights) {
    if (row.some(Number.isNaN)) {
      nanRows++;
      continue;
    }
    let s = 0;
    let top = -Infinity;
    let ent = 0;
    for (const w of row) {
      s += w;
      if (w > top) top = w;
      ent -= w * Math.log(Math.max(w, 1e-12));
    }
    if (!(s > 0)) {
      zeroRows++;
      continue;
    }
    live++;
    maxSum += top;
    entSum += ent;
  }
  return {
    maxWeight: live ? maxSum / live : 0,
    entropy: live ? entSum / live : 0,
    nanRows,
    zeroRows,
  };
}

/** The unbiased standard deviation of the finite entries of a score matrix (L rows of S); 0 with
 * fewer than 2 of them (core.attention_analysis.score_std). */
export function scoreStd(scores) {
  const v = scores.flatMap((r) => Array.from(r)).filter(Number.isFinite);
  if (v.length < 2) return 0;
  const mean = v.reduce((a, b) => a + b, 0) / v.length;
  return Math.sqrt(v.reduce((a, b) => a + (b - mean) * (b - mean), 0) / (v.length - 1));
}

/** A number formatted as Python's format(value, spec) for the specs the page titles use:
 * "[.P](g|f|e)" and "" (repr-like, as str(float) for the values shown). */
export function pyFormat(value, spec = "") {
  if (Number.isNaN(value)) return "nan";
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  if (Object.is(value, -0)) return `-${pyFormat(0, spec)}`;
  const m = /^(?:\.(\d+))?([gfe%]?)$/.exec(spec);
  if (!m) throw new Error(`unsupported format spec ${spec}`);
  const kind = m[2] || "";
  if (kind === "f") return fixed(value, m[1] === undefined ? 6 : Number(m[1]));
  if (kind === "e") return expo(value, m[1] === undefined ? 6 : Number(m[1]));
  if (kind === "%") return `${fixed(value * 100, m[1] === undefined ? 6 : Number(m[1]))}%`;
  if (kind === "" && m[1] === undefined) return repr(value);
  const p = Math.max(1, m[1] === undefined ? 6 : Number(m[1]));
  // Python's g: exponent X of the value rounded to P significant digits; fixed when -4 <= X < P
  if (value === 0) return "0";
  const [mant, exp] = value.toExponential(p - 1).split("e");
  const x = Number(exp);
  if (x >= -4 && x < p) return trimZeros(fixed(value, p - 1 - x));
  return `${trimZeros(mant)}e${x < 0 ? "-" : "+"}${String(Math.abs(x)).padStart(2, "0")}`;
}

function fixed(value, digits) {
  if (!(Math.abs(value) < 1e21)) return repr(value);
  // Both round the exact binary value; on an exact tie (0.125 to 2 digits) toFixed rounds away
  // from zero and Python to the even digit.
  const exact = Math.abs(value).toFixed(Math.min(100, digits + 30));
  const cut = exact.indexOf(".") + 1 + digits;
  if (/^50*$/.test(exact.slice(cut))) {
    const kept = exact.slice(0, digits ? cut : cut - 1);
    if (Number(kept.at(-1)) % 2 === 0) return (value < 0 ? "-" : "") + kept;
  }
  return value.toFixed(digits);
}

function expo(value, digits) {
  const [mant, exp] = value.toExponential(digits).split("e");
  const x = Number(exp);
  return `${mant}e${x < 0 ? "-" : "+"}${String(Math.abs(x)).padStart(2, "0")}`;
}

function trimZeros(s) {
  return s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s;
}

function repr(value) {
  // str(float): shortest round-trip digits (as JS), fixed notation for 1e-4 <= |v| < 1e16
  if (Number.isInteger(value) && Math.abs(value) < 1e16) return `${value}.0`;
  const a = Math.abs(value);
  if (a >= 1e-4 && a < 1e16) return String(value);
  const [mant, exp] = value.toExponential().split("e");
  const x = Number(exp);
  return `${mant}e${x < 0 ? "-" : "+"}${String(Math.abs(x)).padStart(2, "0")}`;
}

/** The weight axis of a live figure: range [0, c] with c the smallest of 1, 2.5, 5 times a power
 * of ten that holds `top`, and five equal intervals (figures.common.weight_axis). Returns
 * {range: [0, c], dtick, decimals}: the tick labels have `decimals` digits after the point
 * (trailing zeros trimmed, Plotly's "~f"). */
export function weightAxis(top) {
  const v = Number.isFinite(top) && top > 0 ? top : 1;
  let e = Math.floor(Math.log10(v));
  let c = null;
  while (c === null) {
    for (const m of [1, 2.5, 5]) {
      const cand = Number((m * 10 ** e).toPrecision(12));
      if (cand >= v * (1 - 1e-12)) {
        c = cand;
        break;
      }
    }
    e += 1;
  }
  const dtick = Number((c / 5).toPrecision(12));
  const decimals = Math.max(0, -Math.floor(Math.log10(dtick) + 1e-9));
  return { range: [0, c], dtick, decimals };
}

/** Tick label of a weight axis (weightAxis): fixed `decimals`, trailing zeros trimmed. */
export function tickLabel(value, decimals) {
  return trimZeros(value.toFixed(decimals));
}

/** The ticks Plotly draws on a linear colour bar of range [lo, hi] that is `lengthPx` long: its
 * automatic step (plotly.js axes.autoTicks: about one tick per 40 px, 4 to 9 intervals, the step
 * rounded up to 2, 5 or 10 times a power of ten) and its labels (trailing zeros trimmed, "−" for
 * minus). A tick counts when it lies within the range widened by 1e-4 of its span on each side, as
 * plotly.js axes.calcTicks widens it (a bar whose top is 0.99985 has no tick "1").
 * Returns [{value, label}], or null where Plotly would write exponents (|log10| > 3). */
export function niceTicks(lo, hi, lengthPx) {
  if (!(hi > lo)) return null;
  const top = Math.max(Math.abs(lo), Math.abs(hi));
  if (Math.abs(Math.floor(Math.log10(top) + 0.01)) > 3) return null;
  const nt = Math.min(Math.max(lengthPx / 40, 4), 9) + 1;
  const rough = (hi - lo) / nt;
  const base = 10 ** Math.floor(Math.log10(rough));
  const ratio = rough / base;
  const dtick = base * (ratio <= 2 ? 2 : ratio <= 5 ? 5 : 10);
  const decimals = Math.max(0, -Math.floor(Math.log10(dtick) + 0.01) + 1);
  const out = [];
  const tol = (hi - lo) * 1e-4;
  for (let k = Math.ceil((lo - tol) / dtick); k * dtick <= hi + tol; k++) {
    const value = k * dtick;
    const label = trimZeros(value.toFixed(decimals)).replace(/^-/, "\u2212");
    out.push({ value, label: label === "\u22120" ? "0" : label });
  }
  return out;
}
