"""README's "What the app measures" table, recomputed: every number in its measurement column.

Each row of the table is recomputed with the core functions its page uses, on the page's defaults,
and every number the README writes in that row is compared with it (inputs such as "h = 0.3" too),
in order, within half a unit of the last digit shown ("0.161": ±0.0005, "50%": ±0.5 %). Two
exceptions, said where they apply: rounding-level differences (below 1e-12) only need the same order
of magnitude (their digits depend on the BLAS), and the training rows also allow 5 % (float32
training on another CPU may round differently). A row the test does not know, or a number that is
missing or extra, fails: the README cannot drift from the pages again.

The training rows train the presets (20-40 epochs each); they share the session's runs of
``tests/core/conftest.py`` and are marked ``slow`` like the other trained tests (``make test`` runs them).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import pytest
import torch

from core import attention
from core import training as tr
from core.lessons import kernel_regression as claims
from core.lessons import kernels_to_attention
from core.lessons import multi_head as mha
from core.lessons import scaled_dot_product as aa
from core.lessons.training import DIAGNOSTICS, Findings, measure_findings, preset_config
from core.transformer import TransformerConfig
from tests.conftest import ROOT

TITLE = "## What the app measures"
#: A number as the README writes it: sign, digits, decimals, exponent, percent.
NUMBER = re.compile(r"[-+−]?\d+(?:\.\d+)?(?:e[-−]?\d+)?%?")
#: Below this a difference is floating-point rounding: only its order of magnitude is checked.
ROUNDING = 1e-12
#: Extra relative tolerance of the training rows.
TRAINED_RTOL = 0.05


def readme_rows() -> dict[str, str]:
    """{claim: measurement} of the table under ``TITLE``."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index(TITLE) :].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] not in ("Claim in the post", "---"):
            rows[cells[0]] = cells[1]
    return rows


def shown_numbers(cell: str) -> list[tuple[float, float]]:
    """(value, half a unit of the last digit shown) of every number in ``cell``, in order."""
    out = []
    for token in NUMBER.findall(cell.replace("−", "-")):
        percent = token.endswith("%")
        body = token.rstrip("%").lstrip("+")
        mantissa, _, exponent = body.partition("e")
        decimals = len(mantissa.partition(".")[2])
        half = 0.5 * 10.0 ** (-decimals) * (10.0 ** int(exponent) if exponent else 1.0)
        value = float(body)
        out.append((value / 100, half / 100) if percent else (value, half))
    return out


def assert_row(cell: str, measured: list[float], *, rtol: float = 0.0) -> None:
    """Every number of ``cell`` matches ``measured`` (same count, same order)."""
    shown = shown_numbers(cell)
    assert len(shown) == len(measured), f"README shows {[v for v, _ in shown]}, measured {measured}"
    for (value, half), actual in zip(shown, measured, strict=True):
        if abs(value) < ROUNDING:
            assert 0 <= actual < ROUNDING, (cell, value, actual)
            assert actual / 10 <= value <= actual * 10, (cell, value, actual)
            continue
        tol = max(half, rtol * abs(actual)) * (1 + 1e-9)
        assert abs(value - actual) <= tol, f"{cell!r}: README {value}, measured {actual:.6g}"


def row(prefix: str) -> str:
    """The measurement cell of the claim starting with ``prefix``."""
    (cell,) = [m for claim, m in readme_rows().items() if claim.startswith(prefix)]
    return cell


# --------------------------------------------------------------------------------------------
# the pages without training (defaults written as the pages set them)
# --------------------------------------------------------------------------------------------


def test_the_table_has_exactly_the_rows_this_test_checks():
    claimed = list(readme_rows())
    assert len(claimed) == len(CHECKED), "a README row was added or removed: check it here too"
    for claim, prefix in zip(claimed, CHECKED, strict=True):
        assert claim.startswith(prefix), (claim, prefix)


def test_bandwidth_selection_row():
    # Kernel regression page: the post's data (200 points, seed 42); core.lessons.kernel_regression
    # .post_claims
    found = claims.post_claims()
    h_star, cv_star = found.best["gaussian"]
    cv_post = dict(found.claim_cv)[claims.POST_H]
    measured = [h_star, cv_post / cv_star - 1, claims.POST_H]
    measured += [found.best["uniform"][0], found.best["epanechnikov"][0]]
    assert_row(row("LOO-CV picks h"), measured)
    assert not found.in_claimed_range("gaussian")
    assert found.in_claimed_range("uniform")
    assert found.in_claimed_range("epanechnikov")


def test_turning_points_row():
    found = claims.post_claims()
    tp = found.turning_points_at_post_h
    measured = [claims.POST_H, tp["uniform"], tp["gaussian"], found.truth_turning_points]
    assert_row(row("Uniform kernel is jagged"), measured)


def test_attention_equals_kernel_regression_row():
    # Kernels -> attention page defaults: h = 0.3, x* = 0.5, N = 200, seed 42 (its metrics)
    grid = kernels_to_attention.nw_vs_attention(200, 42, 0.3)
    one = kernels_to_attention.query_weights(200, 42, 0.3, 0.5)
    measured = [max(grid.max_diff_weights, one.max_diff), grid.max_diff_fit]
    assert_row(row("Softmax attention = kernel regression"), measured)


def test_saturation_row():
    # Scaled dot-product page: ui.scaled_dot_product.sdp_dk_experiment (L = 16, 32 trials), seed 0, d_k = 512
    e = aa.dk_experiment(list(aa.DK_OPTIONS), length=16, n_trials=32, seed=0)
    i = list(e.d_k).index(512)
    measured = [512, e.max_weight_unscaled[i], e.max_weight_scaled[i]]
    measured += [e.grad_scores_unscaled[i], e.grad_scores_scaled[i]]
    assert_row(row("Without √d_k the softmax saturates"), measured)


def test_masked_row_row():
    cell = row("Adding -inf gives NaN")
    assert shown_numbers(cell) == []
    q, k, v = attention.random_qkv(4, 8, 4, 0)
    mask = torch.ones(4, 4, dtype=torch.bool)
    mask[2] = False  # query 2 may attend to nothing
    naive_out, naive_w = attention.naive_masked_attention(q, k, v, mask)
    out, w = attention.scaled_dot_product_attention(q, k, v, mask)
    assert torch.isnan(naive_w[2]).all()
    assert torch.isnan(naive_out[2]).all()
    assert torch.equal(w[2], torch.zeros(4, dtype=w.dtype))
    assert torch.equal(out[2], torch.zeros_like(out[2]))
    assert "NaN" in cell
    assert "zeros" in cell


def test_positions_row():
    # Multi-head page defaults: d_model 64, 8 heads split, seed 42, the English sentence, no
    # positions, no mask; the permutation "shuffle"; its table's no-mask column
    spec = mha.LayerSpec(64, 8, None, None, 42, "sentence", 10, "en", "none", "none")
    view = mha.permutation_view(spec, "shuffle")
    measured = [view.map_diff[("none", "none")], view.map_diff[("sinusoidal", "none")]]
    assert_row(row("Without positions, order is invisible"), measured)


# --------------------------------------------------------------------------------------------
# the training page (its presets)
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def found(post_run, no_positions_run) -> Callable[[str], tuple[tr.TrainingRun, Findings]]:
    """Preset or seed name -> (run, its findings), each trained and measured once."""
    runs = {"post": post_run, "no_positions": no_positions_run}
    cache: dict[str, tuple[tr.TrainingRun, Findings]] = {}

    def get(name: str) -> tuple[tr.TrainingRun, Findings]:
        if name not in cache:
            if name in runs:
                run = runs[name]
            elif name.startswith("seed"):
                run = tr.train(TransformerConfig(seed=int(name[4:])))
            else:
                run = tr.train(preset_config(name))
            cache[name] = (run, measure_findings(run))
        return cache[name]

    return get


def _diagnostic(findings: Findings, name: str):
    assert name in DIAGNOSTICS
    return next(d for d in findings.diagnostics if d.id == name)


@pytest.mark.slow
def test_heads_row(found):
    post, post_found = found("post")
    many, many_found = found("heads32")
    measured = [many.config.n_heads, post.config.n_heads]
    measured += [many_found.val_loss / many.baselines.optimum, post_found.val_loss / post.baselines.optimum]
    measured += [_diagnostic(many_found, "redundancy").value, _diagnostic(post_found, "redundancy").value]
    assert_row(row("32 heads repeat each other"), measured, rtol=TRAINED_RTOL)


@pytest.mark.slow
def test_recency_row(found):
    post, f0 = found("post")
    f1, f2 = found("seed1")[1], found("seed2")[1]
    a = f0.attention
    measured = [post.config.seed, post.config.epochs, a.recent3, 3, a.recent3_uniform, 1, 2]
    measured += [f1.attention.recent3, f2.attention.recent3]
    assert_row(row("Attention concentrates on recent positions"), measured, rtol=TRAINED_RTOL)


@pytest.mark.slow
def test_oscillation_row(found):
    unscaled = _diagnostic(found("no_scale")[1], "oscillation")
    scaled = _diagnostic(found("post")[1], "oscillation")
    measured = [unscaled.value, scaled.value, unscaled.amber]
    assert_row(row("No √d_k scale makes the loss oscillate"), measured, rtol=TRAINED_RTOL)
    assert unscaled.level == scaled.level == "green"  # "not reproduced as violent"


@pytest.mark.slow
def test_leak_row(found):
    cheat, cheat_found = found("no_mask")
    post_found = found("post")[1]
    measured = [cheat.config.epochs, cheat_found.val_loss / cheat.baselines.optimum]
    measured += [
        cheat_found.rollout.model / cheat_found.rollout.last_value,
        post_found.rollout.model / post_found.rollout.last_value,
    ]
    assert_row(row("No causal mask: the model cheats"), measured, rtol=TRAINED_RTOL)


@pytest.mark.slow
def test_shuffle_row(found):
    measured = [found("post")[1].shuffle.ratio, found("no_positions")[1].shuffle.ratio]
    assert_row(row("Shuffled input collapses"), measured, rtol=TRAINED_RTOL)


#: The claims this module checks, in the README's order.
CHECKED = (
    "LOO-CV picks h",
    "Uniform kernel is jagged",
    "Softmax attention = kernel regression",
    "Without √d_k the softmax saturates",
    "Adding -inf gives NaN",
    "32 heads repeat each other",
    "Without positions, order is invisible",
    "Attention concentrates on recent positions",
    "No √d_k scale makes the loss oscillate",
    "No causal mask: the model cheats",
    "Shuffled input collapses",
)


def test_shown_numbers_reads_the_readme_notation():
    assert shown_numbers("h = 0.3, +24%, 3.3e-4 vs 1.0, ×8.8, 59") == [
        (0.3, 0.05),
        (0.24, 0.005),
        (3.3e-4, 0.05e-4),
        (1.0, 0.05),
        (8.8, 0.05),
        (59.0, 0.5),
    ]
    assert math.isclose(shown_numbers("4e-16")[0][0], 4e-16)
