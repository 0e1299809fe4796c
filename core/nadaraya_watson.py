"""Nadaraya-Watson kernel regression: the weighted average that attention grows out of.

    f̂(x) = Σ_i w_i(x) y_i,   w_i(x) = K((x - x_i)/h) / Σ_j K((x - x_j)/h)

(Nadaraya 1964; Watson 1964; the post's section 1.2). Read as attention: the query point x asks,
the samples x_i are the keys, the y_i are the values, K is the similarity score, the denominator is
the softmax-like normaliser and the bandwidth h sets how sharp the weights are. With the Gaussian
kernel the weights *are* a softmax: w_i(x) = softmax_i(-(x - x_i)² / (2h²)).

Shapes (legend in ``core/__init__.py``): x_train, y_train (N,), x_query (Q,), weights (Q, N) with
rows = query points, predictions (Q,).

Numerics, chosen so that the page can show every corner case without warnings:

The code asks the kernel's record (``core.kernels.Kernel``) for its properties, never its name:

* A kernel that never vanishes (``kernel.log_power``: Gaussian, Laplace) is evaluated like a stable
  softmax of its log-weights (``core.kernels.softmax_weights``): each row's exponent is shifted by
  its largest value (the nearest sample) before ``exp``. The weights are mathematically unchanged,
  but they never underflow to 0/0: for a tiny h the fit tends to nearest-neighbour regression
  instead of NaN. (The post's literal loop, :func:`nw_predict_loop`, does underflow; the page shows
  the difference.)
* With a compact kernel (``kernel.compact``) a query with no sample within h has zero total weight;
  its prediction and its row of weights are NaN, silently (no RuntimeWarning, no exception).
* :func:`nw_predict` never builds the (Q, N) matrix: queries are processed in sorted chunks, and each
  chunk only looks at the window of sorted samples that can get a weight: within the support of a
  compact kernel; for a kernel that never vanishes, within the radius beyond which a sample's
  weight is below e^-40 ≈ 4e-18 of the nearest sample's (``LOG_CUTOFF``; the relative error is at
  most N·4e-18). :func:`loo_cv_errors` and :func:`select_bandwidth` use the same windows.
* A piecewise-constant kernel (``kernel.piecewise_constant``: the box) makes CV(h) a step function;
  :func:`select_bandwidth` then searches the pairwise distances where it can change.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from core.checks import as_1d, positive
from core.kernels import Kernel, get_kernel, power_of_abs, softmax_weights

#: Elements of the largest kernel block nw_predict builds at once (2**20 float64 = 8 MiB).
PREDICT_BLOCK = 2**20
#: Queries per nw_predict chunk when N is small: blocks that stay in cache and narrow windows are
#: several times faster than one big block (measured: 64 rows, 1 ms vs 12 ms for Q = 500, N = 1,000).
PREDICT_ROWS = 64
#: Largest block of differences loo_cv_errors keeps (2**22 float64 = 32 MiB): cached up to N = 2048.
LOO_BLOCK = 2**22
#: Rows per LOO block: small blocks keep each block's window of samples narrow.
LOO_ROWS = 64
#: select_bandwidth with a piecewise-constant kernel (uniform) is exact when the bracket holds at most
#: this many pairwise distances (where its step-function CV can change); else it scans a 0.25% grid.
MAX_BREAKS = 3000
#: nw_weights refuses to build a dense (Q, N) matrix larger than this (512 MiB of float64).
MAX_DENSE = 2**26
#: Terms of a never-vanishing kernel (Gaussian, Laplace) whose weight is below e^-40 ≈ 4e-18 of the
#: nearest sample's are skipped: the relative error this adds is at most N·4e-18 (below float64
#: rounding for N < 50, 4e-13 at 100,000).
LOG_CUTOFF = 40.0
#: Brent's tolerance on log h: it stops with a bracket about 4·tol ≈ 0.6% wide, so h* is stable to
#: well under the 1% the page and the benchmark ask for.
BRENT_TOL = 1.5e-3


# ----------------------------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------------------------


def _check_train(x_train: object, y_train: object) -> tuple[np.ndarray, np.ndarray]:
    x = as_1d("x_train", x_train)
    y = as_1d("y_train", y_train)
    if x.shape != y.shape:
        raise ValueError(f"x_train and y_train must have the same length, got {x.size} and {y.size}")
    return x, y


# ----------------------------------------------------------------------------------------------
# kernel blocks
# ----------------------------------------------------------------------------------------------


def _kernel_block(xq: np.ndarray, xt: np.ndarray, kernel: Kernel, h: float) -> np.ndarray:
    """Unnormalised kernel values (q, n), rows = queries. Rows of a kernel with log-weights are
    shifted so that their largest value is 1 (see module doc)."""
    d = xq[:, None] - xt[None, :]  # (q, 1) - (1, n) -> (q, n)
    if kernel.log_power is not None:
        return softmax_weights(kernel.log_weights(d, h, overwrite=True), normalise=False, overwrite=True)
    return kernel.fn(d / h)


def _normalise_rows(k: np.ndarray) -> np.ndarray:
    """Divide each row by its sum; rows summing to 0 become NaN (no warning)."""
    s = k.sum(axis=1, keepdims=True)  # (q, 1)
    w = np.full_like(k, np.nan)
    np.divide(k, s, out=w, where=s > 0)
    return w


def _reach(kernel: Kernel, h: float, nearest: float) -> float:
    """Distance |x - x_i| beyond which a sample gets no weight from a query whose nearest sample is
    ``nearest`` away: the support radius times h for a compact kernel; for a kernel with log-weights
    -|d|^p / (p h^p), where that exceeds the nearest sample's by ``LOG_CUTOFF``:
    (nearest^p + p·LOG_CUTOFF·h^p)^(1/p) (Gaussian: √(g² + 80h²), Laplace: g + 40h). Slightly
    widened: a wider window only adds (near-)zero terms."""
    p = kernel.log_power
    radius = kernel.support * h if p is None else (nearest**p + p * LOG_CUTOFF * h**p) ** (1.0 / p)
    return radius * (1.0 + 1e-9)


def _window(xs: np.ndarray, q: np.ndarray, kernel: Kernel, h: float) -> tuple[int, int]:
    """Index range [lo, hi) of sorted samples ``xs`` that can get a non-zero weight from sorted ``q``."""
    g = 0.0
    if kernel.log_power is not None:
        pos = np.clip(np.searchsorted(xs, q), 1, xs.size - 1) if xs.size > 1 else np.zeros(q.size, int)
        nearest = np.minimum(np.abs(q - xs[pos - 1 if xs.size > 1 else pos]), np.abs(q - xs[pos]))
        g = float(nearest.max())
    radius = _reach(kernel, h, g)
    lo = int(np.searchsorted(xs, q[0] - radius, side="left"))
    hi = int(np.searchsorted(xs, q[-1] + radius, side="right"))
    return lo, hi


# ----------------------------------------------------------------------------------------------
# public API
# ----------------------------------------------------------------------------------------------


def nw_weights(
    x_train: np.ndarray,
    x_query: np.ndarray,
    kernel: str = "gaussian",
    bandwidth: float = 0.5,
) -> np.ndarray:
    """Nadaraya-Watson weight matrix: the "attention map" of kernel regression.

    Args:
        x_train: (N,) sample inputs x_i (the keys).
        x_query: (Q,) query points x (the queries).
        kernel: a name in ``core.kernels.NAMES``.
        bandwidth: h > 0, in the units of x.

    Returns:
        (Q, N) array, rows = query points; each row sums to 1, except a query with zero total kernel
        weight (compact kernel, no sample within h): that whole row is NaN.

    Raises:
        ValueError: on an unknown kernel, h <= 0 or not finite, empty or non-1-D inputs, NaN or
            inf in the data, or Q·N above ``MAX_DENSE`` (use :func:`nw_predict` for big inputs).
    """
    k = get_kernel(kernel)
    h = positive("bandwidth", bandwidth)
    xt = as_1d("x_train", x_train)
    xq = as_1d("x_query", x_query)
    if xq.size * xt.size > MAX_DENSE:
        raise ValueError(
            f"a dense ({xq.size}, {xt.size}) weight matrix is too large (> {MAX_DENSE} entries); "
            "use nw_predict, which works in chunks"
        )
    with np.errstate(all="ignore"):
        return _normalise_rows(_kernel_block(xq, xt, k, h))


def nw_predict(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_query: np.ndarray,
    kernel: str = "gaussian",
    bandwidth: float = 0.5,
    *,
    chunk_size: int | None = None,
) -> np.ndarray:
    """Nadaraya-Watson prediction f̂(x) = Σ_i w_i(x) y_i at every query point, memory-bounded.

    Queries are sorted and processed ``chunk_size`` at a time; each chunk builds kernel values only
    for the window of sorted samples that can get a weight (within the support of a compact kernel;
    for Gaussian and Laplace, within the radius beyond which weights are below e^-40 of the largest). Peak
    memory is O(chunk_size · N) however large Q is: N = Q = 100,000 never allocates a Q x N matrix.

    Args:
        x_train: (N,) sample inputs.
        y_train: (N,) sample outputs.
        x_query: (Q,) query points (any order; the result follows this order).
        kernel: a name in ``core.kernels.NAMES``.
        bandwidth: h > 0, in the units of x.
        chunk_size: queries per chunk; default ``min(PREDICT_ROWS, max(1, PREDICT_BLOCK // N))``.

    Returns:
        (Q,) predictions; NaN where a query has zero total kernel weight (only possible with a
        compact kernel), without warnings.

    Raises:
        ValueError: on an unknown kernel, h <= 0 or not finite, mismatched lengths, empty or
            non-1-D inputs, NaN or inf in the data, or a chunk_size that is not a positive integer.
    """
    k = get_kernel(kernel)
    h = positive("bandwidth", bandwidth)
    xt, yt = _check_train(x_train, y_train)
    xq = as_1d("x_query", x_query)
    if chunk_size is None:
        chunk_size = min(PREDICT_ROWS, max(1, PREDICT_BLOCK // xt.size))
    elif isinstance(chunk_size, bool) or not isinstance(chunk_size, int | np.integer) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")

    order = np.argsort(xt, kind="stable")
    xs, ys = xt[order], yt[order]
    q_order = np.argsort(xq, kind="stable")
    out = np.full(xq.size, np.nan)
    with np.errstate(all="ignore"):
        for start in range(0, xq.size, int(chunk_size)):
            idx = q_order[start : start + int(chunk_size)]
            q = xq[idx]  # (c,), ascending
            lo, hi = _window(xs, q, k, h)
            if hi <= lo:
                continue  # no sample near this chunk: all NaN
            kq = _kernel_block(q, xs[lo:hi], k, h)  # (c, w)
            num = kq @ ys[lo:hi]  # (c, w) x (w,) -> (c,)
            den = kq.sum(axis=1)  # (c,)
            pred = np.full(q.size, np.nan)
            np.divide(num, den, out=pred, where=den > 0)
            out[idx] = pred
    return out


def default_bandwidths(x: np.ndarray, num: int = 60) -> np.ndarray:
    """Log-spaced bandwidths from spread·1e-4 to spread (spread = max(x) - min(x)), (num,).

    Raises:
        ValueError: if x is empty, has NaN/inf, or all its values are equal.
    """
    x = as_1d("x", x)
    spread = float(x.max() - x.min())
    if spread <= 0:
        raise ValueError("x has no spread (all values are equal): no bandwidth can be chosen")
    return np.geomspace(spread * 1e-4, spread, num)


class _LooCV:
    """Leave-one-out CV error of one data set at any bandwidth; the set-up work is done once.

    Samples are sorted by x and cut into row blocks. For each block and bandwidth only the window of
    columns (samples) that can get a weight is touched, so a small h costs O(N·window) instead of
    O(N²). Blocks are cached when N² <= ``LOO_BLOCK``: for a kernel with log-weights -|d|^p / (p h^p)
    they hold |d|^p minus its row minimum (so every h costs one multiplication and one ``exp``); for a
    compact kernel the signed differences d.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, kernel: Kernel) -> None:
        order = np.argsort(x, kind="stable")
        self.x, self.y, self.kernel = x[order], y[order], kernel
        n = x.size
        self.n = n
        self.rows = max(1, min(LOO_ROWS, LOO_BLOCK // n))
        # distance from each sample to its nearest *other* sample (sorted, so a neighbour), (N,)
        gaps = np.diff(self.x)
        self.nearest = np.minimum(np.r_[np.inf, gaps], np.r_[gaps, np.inf])
        self.cache = n * n <= LOO_BLOCK
        self.blocks: dict[int, np.ndarray] = {}

    def _block(self, start: int, stop: int, lo: int, hi: int) -> np.ndarray:
        """(c, w) shifted |d|^p (log-weight kernels) or signed differences d (compact) between rows
        start:stop and columns lo:hi. Cached whole (c, N) when N² is small, else built per call."""
        if self.cache and start in self.blocks:
            return self.blocks[start][:, lo:hi]
        c_lo, c_hi = (0, self.n) if self.cache else (lo, hi)
        r = np.arange(stop - start)
        d = self.x[start:stop, None] - self.x[None, c_lo:c_hi]  # (c, 1) - (1, w) -> (c, w)
        p = self.kernel.log_power
        if p is not None:
            power_of_abs(d, p, overwrite=True)  # |d|^p
            d[r, start + r - c_lo] = np.inf  # leave sample i out: its weight will be exp(-inf) = 0
            # the nearest other sample gets exponent 0: the row's largest weight is 1
            d -= power_of_abs(self.nearest[start:stop], p)[:, None]
        if self.cache:
            self.blocks[start] = d
            return d[:, lo:hi]
        return d

    def __call__(self, h: float) -> float:
        """CV(h) = (1/N) Σ_i (y_i - f̂_{-i}(x_i))², NaN if some f̂_{-i}(x_i) is undefined."""
        x, y, n, kernel = self.x, self.y, self.n, self.kernel
        p = kernel.log_power
        scale = None if p is None else -1.0 / (p * h**p)  # log-weight = scale · (cached |d|^p)
        sse = 0.0
        for start in range(0, n, self.rows):
            stop = min(n, start + self.rows)
            radius = _reach(kernel, h, 0.0 if scale is None else float(self.nearest[start:stop].max()))
            lo = int(np.searchsorted(x, x[start] - radius, side="left"))
            hi = int(np.searchsorted(x, x[stop - 1] + radius, side="right"))
            blk = self._block(start, stop, lo, hi)  # (c, w)
            if scale is not None:
                # (c, w); rows already shifted, the own sample has exponent -inf -> weight 0
                k = softmax_weights(blk * scale, normalise=False, shift=False, overwrite=True)
            else:
                k = kernel.fn(blk / h)
                r = np.arange(stop - start)
                k[r, start + r - lo] = 0.0  # leave sample i out
            num = k @ y[lo:hi]  # (c, w) x (w,) -> (c,)
            den = k.sum(axis=1)  # (c,); with log-weights >= 1 (the nearest other sample's weight)
            if not (den > 0).all():
                return math.nan
            resid = y[start:stop] - num / den
            sse += float(resid @ resid)
        return sse / n


def _check_loo(x: object, y: object, kernel: object) -> tuple[np.ndarray, np.ndarray, Kernel]:
    k = get_kernel(kernel)  # type: ignore[arg-type]
    x, y = _check_train(x, y)
    if x.size < 2:
        raise ValueError("leave-one-out needs at least 2 samples")
    return x, y, k


def loo_cv_errors(
    x: np.ndarray,
    y: np.ndarray,
    kernel: str = "gaussian",
    bandwidths: np.ndarray | None = None,
) -> np.ndarray:
    """Leave-one-out cross-validation error CV(h) = (1/N) Σ_i (y_i - f̂_{-i}(x_i))² for each h.

    f̂_{-i} is the Nadaraya-Watson fit without sample i (the objective of statsmodels
    ``KernelReg(bw="cv_ls")``). Vectorised: sample i's own kernel value is zeroed in the kernel
    matrix, which is built in row blocks over the window of samples that can get a weight.

    Args:
        x: (N,) inputs, N >= 2.
        y: (N,) outputs.
        kernel: a name in ``core.kernels.NAMES``.
        bandwidths: (M,) bandwidths > 0; default :func:`default_bandwidths`.

    Returns:
        (M,) mean squared LOO errors, in squared units of y. NaN for a bandwidth at which some
        sample has no other sample within the kernel's support (its LOO fit is undefined).

    Raises:
        ValueError: on an unknown kernel, mismatched lengths, fewer than 2 samples, NaN or inf,
            or a bandwidth <= 0.
    """
    x, y, kernel = _check_loo(x, y, kernel)
    hs = default_bandwidths(x) if bandwidths is None else as_1d("bandwidths", bandwidths)
    if (hs <= 0).any():
        raise ValueError(f"every bandwidth must be > 0, got min {hs.min()}")
    cv = _LooCV(x, y, kernel)
    with np.errstate(all="ignore"):
        return np.array([cv(float(h)) for h in hs])


def select_bandwidth(x: np.ndarray, y: np.ndarray, kernel: str = "gaussian") -> float:
    """The bandwidth h* that minimises the leave-one-out CV error, to a relative precision of 0.6%.

    A log grid with 5 points per decade, scanned upward from spread/1000 (spread = max x - min x)
    until CV(h) has clearly turned up or h reaches spread/4, and extended while its best point is at
    an edge (up to the spread, down to spread·1e-6), locates the best bracket; Brent's method on
    log h refines it until the bracket is about 0.6% wide, so h* is stable to well under 1%.
    With a compact kernel CV(h) is only piecewise smooth and can have several local minima, so
    the bracket is first scanned on a 0.25%-spaced grid. With a piecewise-constant kernel (the
    uniform box of radius r) CV(h) is a step function that changes only where r·h equals a pairwise
    distance |x_i - x_j|; it is evaluated at every such h in the bracket (exact), or, when there are
    more than ``MAX_BREAKS`` of them, on the 0.25% grid (whose narrow dips it may then miss). Kernels
    with log-weights (Gaussian, Laplace) give a smooth CV(h): Brent's method alone.
    If the minimum is at the largest bandwidth (y looks like noise around a constant), that edge
    (the spread of x) is returned.

    Args:
        x: (N,) inputs, N >= 2, not all equal.
        y: (N,) outputs.
        kernel: a name in ``core.kernels.NAMES``.

    Returns:
        h* in the units of x.

    Raises:
        ValueError: as :func:`loo_cv_errors`, or if x has no spread, or no bandwidth gives a defined
            LOO error.
    """
    x, y, kernel = _check_loo(x, y, kernel)
    spread = float(x.max() - x.min())
    if spread <= 0:
        raise ValueError("x has no spread (all values are equal): no bandwidth can be chosen")
    evaluate = _LooCV(x, y, kernel)

    def f(log_h: float) -> float:
        v = evaluate(math.exp(log_h))
        return math.inf if math.isnan(v) else v

    step = math.log(10.0) / 5.0  # 5 points per decade
    top, bottom = math.log(spread / 4.0), math.log(spread) - 3.0 * math.log(10.0)
    with np.errstate(all="ignore"):
        # Scan upward from spread/1000: small bandwidths are cheap (narrow windows), and past its
        # minimum CV(h) climbs steadily, so the costly large bandwidths are evaluated only when the
        # curve has not yet clearly turned up (three rises in a row, 50% above the best so far).
        up = list(np.arange(bottom, top + 1e-9, step))
        scanned: list[float] = []
        for log_h in up:
            scanned.append(f(log_h))
            best = min(scanned)
            rising = len(scanned) >= 4 and scanned[-1] > scanned[-2] > scanned[-3] > scanned[-4]
            if rising and math.isfinite(best) and scanned[-1] > 1.5 * best:
                break
        logs, values = up[: len(scanned)][::-1], scanned[::-1]  # largest h first
        # Extend the grid while its best point is at an edge: up to the spread, down to spread·1e-6.
        while int(np.argmin(values)) == 0 and logs[0] < math.log(spread) - 1e-9:
            logs.insert(0, min(logs[0] + step, math.log(spread)))
            values.insert(0, f(logs[0]))
        while int(np.argmin(values)) == len(values) - 1 and logs[-1] > math.log(spread) - 6 * math.log(10.0):
            logs.append(logs[-1] - step)
            values.append(f(logs[-1]))
        if math.isinf(min(values)):
            raise ValueError("no bandwidth gives a defined leave-one-out error")
        k = int(np.argmin(values))
        if k == 0:
            return float(math.exp(logs[0]))
        a, b = logs[min(k + 1, len(logs) - 1)], logs[k - 1]
        r = kernel.support
        if (
            kernel.piecewise_constant
            and (breaks := _pair_distances(x, r * math.exp(a), r * math.exp(b)) / r).size <= MAX_BREAKS
        ):
            # CV(h) is a step function that only changes where r·h equals a pairwise distance (a
            # sample enters a window): evaluating it at each such h in the bracket finds the exact
            # minimum.
            break_values = [evaluate(float(h)) for h in breaks]
            j = int(np.nanargmin(break_values)) if breaks.size and not np.isnan(break_values).all() else -1
            if j >= 0 and break_values[j] <= values[k]:
                k_log, k_value = math.log(breaks[j]), break_values[j]
            else:
                k_log, k_value = logs[k], values[k]
        elif kernel.compact:
            # With a compact kernel CV(h) is only piecewise smooth (it changes form whenever a sample
            # enters or leaves a window) and can have several local minima close together: scan the
            # bracket on a 0.25%-spaced grid first.
            fine = np.linspace(a, b, int((b - a) / 2.5e-3) + 2)
            fine_values = [f(v) for v in fine]
            j = int(np.argmin(fine_values))
            if fine_values[j] <= values[k]:
                k_log, k_value = float(fine[j]), fine_values[j]
                a, b = float(fine[max(j - 1, 0)]), float(fine[min(j + 1, fine.size - 1)])
            else:
                k_log, k_value = logs[k], values[k]
        else:
            k_log, k_value = logs[k], values[k]
        if kernel.piecewise_constant:
            best_log = k_log  # a step function: nothing to polish
        else:
            best_log, best_value = _brent(f, a, b, tol=BRENT_TOL)
            if best_value > k_value:
                best_log = k_log
    return float(math.exp(best_log))


def _pair_distances(x: np.ndarray, low: float, high: float) -> np.ndarray:
    """Sorted distinct |x_i - x_j| in [low, high] (at most MAX_BREAKS + 1 of them are collected)."""
    xs = np.sort(x)
    found: list[np.ndarray] = []
    count = 0
    for i in range(xs.size - 1):
        lo = np.searchsorted(xs, xs[i] + low, side="left")
        hi = np.searchsorted(xs, xs[i] + high, side="right")
        if hi > lo:
            d = xs[lo:hi] - xs[i]
            found.append(d[(d >= low) & (d <= high)])
            count += found[-1].size
            if count > MAX_BREAKS:
                break
    return np.unique(np.concatenate(found)) if found else np.array([])


def _brent(f: Callable[[float], float], a: float, b: float, tol: float) -> tuple[float, float]:
    """Brent's minimisation on [a, b] (parabolic steps, golden-section fallback; Numerical Recipes
    §10.3, as scipy's ``fminbound``). Stops when the bracket around the best point is about 4·tol.
    Returns (argmin, min)."""
    cgold = 0.5 * (3.0 - math.sqrt(5.0))
    x = w = v = a + cgold * (b - a)
    fx = fw = fv = f(x)
    d = e = 0.0
    for _ in range(100):
        xm = 0.5 * (a + b)
        if abs(x - xm) <= 2.0 * tol - 0.5 * (b - a):
            break
        parabolic = False
        if abs(e) > tol:
            r = (x - w) * (fx - fv)
            q = (x - v) * (fx - fw)
            p = (x - v) * q - (x - w) * r
            q = 2.0 * (q - r)
            if q > 0:
                p = -p
            q = abs(q)
            if abs(p) < abs(0.5 * q * e) and q * (a - x) < p < q * (b - x):
                e, d = d, p / q
                parabolic = True
                if (x + d) - a < 2.0 * tol or b - (x + d) < 2.0 * tol:
                    d = tol if xm >= x else -tol
        if not parabolic:
            e = (a - x) if x >= xm else (b - x)
            d = cgold * e
        u = x + (d if abs(d) >= tol else math.copysign(tol, d))
        fu = f(u)
        if fu <= fx:
            if u >= x:
                a = x
            else:
                b = x
            v, w, x, fv, fw, fx = w, x, u, fw, fx, fu
        else:
            if u < x:
                a = u
            else:
                b = u
            if fu <= fw or w == x:
                v, w, fv, fw = w, u, fw, fu
            elif fu <= fv or v in (x, w):
                v, fv = u, fu
    return x, fx


def count_turning_points(values: np.ndarray, rtol: float = 1e-9) -> int:
    """Number of local maxima and minima of a sampled curve (how wiggly a fit is).

    Steps smaller than ``rtol`` times the curve's range count as flat (a piecewise-constant fit
    from the uniform kernel is flat between its jumps); NaN values are skipped.

    Args:
        values: (Q,) curve values on an ordered grid.

    Raises:
        ValueError: if values is not 1-D.
    """
    v = np.asarray(values, dtype=float)
    if v.ndim != 1:
        raise ValueError(f"values must be 1-D, got shape {v.shape}")
    v = v[np.isfinite(v)]
    if v.size < 3:
        return 0
    step = np.diff(v)
    scale = float(v.max() - v.min())
    signs = np.sign(step[np.abs(step) > rtol * scale]) if scale > 0 else np.array([])
    return int(np.count_nonzero(signs[1:] != signs[:-1]))


# ----------------------------------------------------------------------------------------------
# the post's literal code (section 2.4), kept for the page's "loop vs matrix" comparison.
# A deliberate teaching copy of the Gaussian weights: it stays as the post wrote it (unshifted, one
# query at a time) so the page can time it and show where it underflows; the library path is
# core.kernels.softmax_weights / gaussian_weights.
# ----------------------------------------------------------------------------------------------


def post_gaussian_kernel(dist: np.ndarray, h: float) -> np.ndarray:
    """The post's ``gaussian_kernel``: exp(-dist² / (2h²)), unnormalised. Same shape as ``dist``.

    A deliberate teaching copy (see the section comment): not the shared helper."""
    return np.exp(-(dist**2) / (2 * h**2))


def post_nadaraya_watson(X: np.ndarray, y: np.ndarray, x_query: float, h: float = 0.5) -> float:
    """The post's ``nadaraya_watson`` for one query point: O(N) work, one Python call per query."""
    weights = post_gaussian_kernel(x_query - X, h)
    weights = weights / np.sum(weights)
    return np.sum(weights * y)


def nw_predict_loop(
    x_train: np.ndarray, y_train: np.ndarray, x_query: np.ndarray, bandwidth: float = 0.5
) -> np.ndarray:
    """The post's per-query Python loop over :func:`post_nadaraya_watson` (Gaussian kernel), (Q,).

    ``np.array([nadaraya_watson(X, y, x, h=h) for x in x_grid])``, verbatim but for the names. Unlike
    :func:`nw_predict` it does not shift the exponent, so for a tiny h every weight of a query far from
    the samples underflows and the result is 0/0 = NaN (silenced here).

    Raises:
        ValueError: on h <= 0 or not finite, mismatched lengths, empty inputs, NaN or inf.
    """
    h = positive("bandwidth", bandwidth)
    X, y = _check_train(x_train, y_train)
    xq = as_1d("x_query", x_query)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.array([post_nadaraya_watson(X, y, x, h=h) for x in xq], dtype=float)
