"""The live sliders' JavaScript math (static/live/math.js) against ``core``, evaluated in Chromium.

While a live slider moves, the figures are computed by math.js (``ui.live_slider``); on release the
Python figure takes over. So both must compute the same numbers: on fixed inputs, every function
of math.js is compared with the ``core`` function it mirrors, for every kernel of
``core.kernels.REGISTRY`` (a kernel added to the registry and not to math.js fails here), and
softmax attention with its scale and mask. The measure is the largest relative difference
|a - b| / max(|a|, |b|) over all entries (floored at 1e-280: subnormal numbers carry a few bits),
and NaN must sit exactly where ``core`` has NaN; the bound is 1e-9. A planted difference (a source
mutated by one small change) must make the check fail, so the check can fail.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from core import attention as attn
from core.kernel_attention import nadaraya_watson_attention
from core.kernels import REGISTRY
from core.lessons import scaled_dot_product as aa
from core.nadaraya_watson import loo_cv_errors, nw_predict, nw_weights
from figures.common import weight_axis
from tests.conftest import ROOT

pytestmark = pytest.mark.e2e

SOURCE = (ROOT / "static" / "live" / "math.js").read_text(encoding="utf-8")
#: The largest relative difference allowed between math.js and core (issue 25's target).
TOLERANCE = 1e-9
#: Bandwidths from very narrow (compact kernels leave queries without a sample: NaN rows; the
#: Gaussian's weights underflow but for the nearest sample) to wider than the data.
BANDWIDTHS = (0.004, 0.05, 0.3, 2.5)


def _inputs() -> dict[str, list]:
    rng = np.random.default_rng(25)
    x = np.sort(rng.uniform(-3, 3, 60))
    x[7] = x[6]  # a repeated x: two samples at one place
    y = np.sin(2 * x) + rng.normal(0, 0.2, x.size)
    queries = np.concatenate([np.linspace(-3.5, 3.5, 37), [x[10], x[20] + 1e-9, 8.0]])
    u = np.concatenate([np.linspace(-3, 3, 121), [-1.0, 1.0, -1 - 1e-12, 1 + 1e-12, 0.0]])
    raw = rng.normal(0, 3, (7, 7))
    mask = np.tril(np.ones((7, 7), dtype=bool))
    mask[3] = False  # a row with every key masked
    return {"x": x, "y": y, "queries": queries, "u": u, "raw": raw, "mask": mask}


INPUTS = _inputs()


def rel_diff(js: object, ref: object) -> float:
    """Largest relative difference between two arrays of numbers; inf where NaNs disagree."""
    a = np.asarray(js, dtype=float)
    b = np.asarray(ref, dtype=float)
    if a.shape != b.shape:
        return math.inf
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if (nan_a != nan_b).any():
        return math.inf
    a, b = a[~nan_a], b[~nan_b]
    if a.size == 0:
        return 0.0
    if (np.isinf(a) != np.isinf(b)).any() or (a[np.isinf(a)] != b[np.isinf(b)]).any():
        return math.inf
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    scale = np.maximum(np.maximum(np.abs(a), np.abs(b)), 1e-280)
    return float((np.abs(a - b) / scale).max()) if a.size else 0.0


_EVALUATE = """async ({source, inputs, kernels, bandwidths}) => {
  const url = URL.createObjectURL(new Blob([source], {type: "text/javascript"}));
  const M = await import(url);
  const arr = (a) => Array.from(a);
  const mat = (m) => m.map(arr);
  const {x, y, queries, u, raw, mask} = inputs;
  const out = {kernels: {}};
  for (const k of kernels) {
    const per = {values: arr(M.kernelValues(k, u)), weights: [], predict: [], loo: []};
    for (const h of bandwidths) {
      per.weights.push(mat(M.nwWeights(x, queries, k, h)));
      per.predict.push(arr(M.nwPredict(x, y, queries, k, h)));
      per.loo.push(M.looCv(x, y, k, h));
    }
    out.kernels[k] = per;
  }
  out.attention = [];
  for (const scale of [1, 0.125, 1 / Math.sqrt(16)]) {
    for (const m of [null, mask]) {
      const s = M.attentionSteps(raw, scale, m);
      const stats = M.rowStats(s.weights);
      out.attention.push({scaled: mat(s.scaled), masked: mat(s.masked), weights: mat(s.weights), stats,
                          std: M.scoreStd(s.masked)});
    }
  }
  out.gaussian = bandwidths.map((h) => {
    const g = M.gaussianAttention(x, y, queries, h);
    return {yHat: arr(g.yHat), weights: mat(g.weights)};
  });
  return out;
}"""


def evaluate(page, source: str) -> dict:
    """Run math.js (``source``) in the page on the fixed inputs: its results, as plain lists."""
    inputs = {k: np.asarray(v).tolist() for k, v in INPUTS.items()}
    kernels = [k.name for k in REGISTRY]
    return page.evaluate(
        _EVALUATE, {"source": source, "inputs": inputs, "kernels": kernels, "bandwidths": list(BANDWIDTHS)}
    )


def differences(js: dict) -> dict[str, float]:
    """{what: largest relative difference to core} for every function and kernel."""
    x, y, queries, u = INPUTS["x"], INPUTS["y"], INPUTS["queries"], INPUTS["u"]
    out: dict[str, float] = {}
    for kernel in REGISTRY:
        got = js["kernels"][kernel.name]
        out[f"{kernel.name}: K(u)"] = rel_diff(got["values"], kernel.fn(u))
        for i, h in enumerate(BANDWIDTHS):
            out[f"{kernel.name}: nw_weights h={h}"] = rel_diff(
                got["weights"][i], nw_weights(x, queries, kernel.name, h)
            )
            out[f"{kernel.name}: nw_predict h={h}"] = rel_diff(
                got["predict"][i], nw_predict(x, y, queries, kernel.name, h)
            )
            loo = loo_cv_errors(x, y, kernel.name, np.array([h]))[0]
            out[f"{kernel.name}: loo_cv h={h}"] = rel_diff(
                [np.nan if got["loo"][i] is None else got["loo"][i]], [loo]
            )
    q, k = torch.from_numpy(INPUTS["raw"]), torch.eye(7, dtype=torch.float64)
    i = 0
    for scale in (1.0, 0.125, 1 / math.sqrt(16)):
        for mask in (None, INPUTS["mask"]):
            ref = attn.attention_steps(q, k, k, None if mask is None else torch.from_numpy(mask), scale=scale)
            got = js["attention"][i]
            name = f"attention scale={scale:g} mask={mask is not None}"
            out[f"{name}: scaled"] = rel_diff(got["scaled"], ref.scaled.numpy())
            out[f"{name}: masked"] = rel_diff(got["masked"], ref.masked.numpy())
            out[f"{name}: weights"] = rel_diff(got["weights"], ref.weights.numpy())
            stats = aa.row_stats(ref.weights.numpy())
            js_stats = got["stats"]
            out[f"{name}: row_stats"] = rel_diff(
                [js_stats["maxWeight"], js_stats["entropy"], js_stats["nanRows"], js_stats["zeroRows"]],
                [stats.max_weight, stats.entropy, stats.nan_rows, stats.zero_rows],
            )
            out[f"{name}: score_std"] = rel_diff([got["std"]], [aa.score_std(ref.masked.numpy())])
            i += 1
    for i, h in enumerate(BANDWIDTHS):
        y_hat, w = nadaraya_watson_attention(x, y, queries, h)
        out[f"gaussian attention h={h}: y_hat"] = rel_diff(js["gaussian"][i]["yHat"], y_hat)
        out[f"gaussian attention h={h}: weights"] = rel_diff(js["gaussian"][i]["weights"], w)
    return out


@pytest.fixture(scope="module")
def blank(browser):
    """An empty page to evaluate the module in (no server needed)."""
    context = browser.new_context()
    page = context.new_page()
    page.set_content("<!doctype html><title>math.js</title>")
    yield page
    context.close()


def test_math_js_computes_what_core_computes(blank):
    diffs = differences(evaluate(blank, SOURCE))
    assert any(name.startswith("biweight:") for name in diffs)  # every kernel of the registry ran
    worst = max(diffs, key=diffs.get)
    assert diffs[worst] <= TOLERANCE, f"{worst}: {diffs[worst]:.3g}"


#: (what to change in math.js, the function it perturbs) — each one a small, plausible slip.
PLANTS = [
    (
        "const scale = -1 / (p * h ** p);",
        "const scale = -1 / (p * h ** p) * (1 + 1e-7);",
        "gaussian: nw_weights",
    ),
    ("(70 / 81) * inside ** 3", "(70 / 81) * inside ** 3.0000001", "tricube: K(u)"),
    ("if (!(den > 0)) return NaN;", "if (!(den > 1e-300)) return NaN; num *= 1 + 1e-8;", "laplace: loo_cv"),
    ("out[j] = Math.exp(row[j] - top);", "out[j] = Math.exp(row[j] - top + 1e-8 * j);", "weights"),
    ("return -(d * d) / (2 * h * h);", "return -(d * d) / (2 * h * h + 1e-12);", "gaussian attention"),
]


@pytest.mark.parametrize(("old", "new", "where"), PLANTS, ids=[p[2] for p in PLANTS])
def test_a_planted_difference_fails_the_check(blank, old, new, where):
    assert SOURCE.count(old) == 1, f"the plant no longer matches math.js: {old!r}"
    diffs = differences(evaluate(blank, SOURCE.replace(old, new)))
    failing = [name for name, d in diffs.items() if d > TOLERANCE]
    assert any(where in name for name in failing), f"no failure in {where!r}; failing: {failing[:5]}"


_FORMAT = """async ({source, cases, tops}) => {
  const url = URL.createObjectURL(new Blob([source], {type: "text/javascript"}));
  const M = await import(url);
  return {formats: cases.map(([v, spec]) => M.pyFormat(v, spec)),
          axes: tops.map((t) => { const a = M.weightAxis(t); return [a.range[1], a.dtick, a.decimals]; })};
}"""

FORMAT_CASES = [
    (v, spec)
    for v in (0.3, 0.027, 3.0, 1.0, 0.0001234, 12345.678, -0.5, 0.125, 2.5e-7, 1e16, 0.1 + 0.2, 100.0, -0.0)
    for spec in ("", ".3g", ".1f", ".2f", ".4g", ".2g", ".3f", ".4f")
]
WEIGHT_TOPS = (1.0, 0.9999, 0.26, 0.25, 0.0312, 0.005, 0.0049, 7e-4, 1.3, 0.0, float("nan"))


def test_numbers_are_written_as_python_and_the_figures_write_them(blank):
    got = blank.evaluate(
        _FORMAT,
        {
            "source": SOURCE,
            "cases": [list(c) for c in FORMAT_CASES],
            "tops": [0 if math.isnan(t) else t for t in WEIGHT_TOPS],
        },
    )
    assert got["formats"] == [format(v, spec) for v, spec in FORMAT_CASES]
    for top, (c, dtick, decimals) in zip(WEIGHT_TOPS, got["axes"], strict=True):
        axis = weight_axis(0.0 if math.isnan(top) else top)
        assert [c, dtick] == [axis["range"][1], axis["dtick"]]
        assert axis["tickformat"] == f".{decimals}~f"
