"""Our ``MultiHeadAttention`` against ``torch.nn.MultiheadAttention`` with the same weights.

``python -m benchmarks multihead`` (or ``make bench``). Self-attention on (B, L, d_model) =
(8, 128, 256) on the CPU, in eval mode without gradients, for H = 8 and 32, with and without a
causal mask, in float32 and float64. Printed, measured in the same run: the best-of-n forward time
of ours, of torch asked for per-head weights (``need_weights=True, average_attn_weights=False``:
the like-for-like comparison, since ours always returns them) and of torch without weights (which
may take its fused fast path); the ratios ours / torch; and the largest absolute differences of
the outputs and of the per-head weights.
"""

from __future__ import annotations

import torch
from torch import nn

from benchmarks.timing import best_time
from core.attention import causal_mask
from core.multihead import MultiHeadAttention

B, L, D_MODEL = 8, 128, 256


def _pair(n_heads: int, dtype: torch.dtype) -> tuple[MultiHeadAttention, nn.MultiheadAttention]:
    torch.manual_seed(0)
    ref = nn.MultiheadAttention(D_MODEL, n_heads, batch_first=True).to(dtype).eval()
    with torch.no_grad():  # non-zero biases, so that they are compared too
        ref.in_proj_bias.normal_(std=0.1)
        ref.out_proj.bias.normal_(std=0.1)
    return MultiHeadAttention.from_torch(ref).eval(), ref


def _row(x: torch.Tensor, n_heads: int, mask: torch.Tensor | None) -> tuple[float, ...]:
    """(ours s, torch with weights s, torch without weights s, max |d out|, max |d weights|)."""
    ours, ref = _pair(n_heads, x.dtype)
    torch_mask = None if mask is None else ~mask  # torch: True = may NOT attend

    def run_ours():
        return ours(x, x, x, mask=mask)

    def run_torch_weights():
        return ref(x, x, x, attn_mask=torch_mask, need_weights=True, average_attn_weights=False)

    def run_torch():
        return ref(x, x, x, attn_mask=torch_mask, need_weights=False)

    with torch.no_grad():
        out, w = run_ours()
        ref_out, ref_w = run_torch_weights()
        times = tuple(best_time(fn, repeat=10) for fn in (run_ours, run_torch_weights, run_torch))
    return (*times, float((out - ref_out).abs().max()), float((w - ref_w).abs().max()))


def main() -> None:
    print(
        f"multi-head self-attention (B, L, d_model) = ({B}, {L}, {D_MODEL}), "
        f"torch {torch.__version__}, {torch.get_num_threads()} threads"
    )
    print(
        f"{'dtype':>8} {'H':>3} {'mask':>7} {'ours ms':>8} {'torch+w ms':>10} {'torch ms':>9} "
        f"{'ratio+w':>8} {'ratio':>6} {'max|d out|':>10} {'max|d w|':>9}"
    )
    gen = torch.Generator().manual_seed(1)
    for dtype in (torch.float32, torch.float64):
        x = torch.randn(B, L, D_MODEL, generator=gen).to(dtype)
        for n_heads in (8, 32):
            for mask_name, mask in (("none", None), ("causal", causal_mask(L))):
                t_ours, t_ref_w, t_ref, d_out, d_w = _row(x, n_heads, mask)
                name = str(dtype).removeprefix("torch.")
                print(
                    f"{name:>8} {n_heads:3d} {mask_name:>7} {1e3 * t_ours:8.2f} {1e3 * t_ref_w:10.2f} "
                    f"{1e3 * t_ref:9.2f} {t_ours / t_ref_w:8.2f} {t_ours / t_ref:6.2f} "
                    f"{d_out:10.1e} {d_w:9.1e}"
                )


if __name__ == "__main__":
    main()
