"""Our scaled dot-product attention against ``torch.nn.functional.scaled_dot_product_attention``.

``python -m benchmarks attention`` (or ``make bench``). For (B, H, L, D) = (8, 8, 256, 64) on the
CPU it prints, measured in the same run, the best-of-n time of each implementation, their ratio
and the largest absolute difference of the outputs: without a mask and with a causal mask, in
float32 and float64. Ours is the readable path (scores, masked_fill, softmax, matmul, all
materialised); torch's built-in may dispatch to a fused kernel, so a ratio above 1 is expected.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from benchmarks.timing import best_time
from core.attention import causal_mask, scaled_dot_product_attention

SHAPE = (8, 8, 256, 64)  # B, H, L, D


def _inputs(dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return tuple(torch.randn(*SHAPE, generator=gen, dtype=dtype) for _ in range(3))  # type: ignore[return-value]


def main() -> None:
    L = SHAPE[2]
    print(f"attention (B, H, L, D) = {SHAPE}, torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"{'dtype':>8} {'mask':>7} {'ours ms':>9} {'torch ms':>9} {'ratio':>7} {'max |diff|':>11}")
    for dtype in (torch.float32, torch.float64):
        q, k, v = _inputs(dtype)
        for mask_name, mask in (("none", None), ("causal", causal_mask(L))):
            with torch.no_grad():
                ours, _ = scaled_dot_product_attention(q, k, v, mask=mask)
                ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
                t_ours = best_time(lambda q=q, k=k, v=v, m=mask: scaled_dot_product_attention(q, k, v, m))
                t_ref = best_time(lambda q=q, k=k, v=v, m=mask: F.scaled_dot_product_attention(q, k, v, m))
            diff = float((ours - ref).abs().max())
            name = str(dtype).removeprefix("torch.")
            print(
                f"{name:>8} {mask_name:>7} {1e3 * t_ours:9.2f} {1e3 * t_ref:9.2f} "
                f"{t_ours / t_ref:7.2f} {diff:11.2e}"
            )


if __name__ == "__main__":
    main()
