"""The post's ``contiguous()`` pitfall, run for real (section 3.2 of the post).

After the heads are computed, they are (B, H, L, d_v). To concatenate them we swap the head and
position axes, (B, H, L, d_v) -> (B, L, H, d_v), and merge the last two into H * d_v. ``transpose``
does not move any data: it only swaps two strides, so the result is no longer laid out row by row
in memory ("not contiguous"). ``view`` can only reinterpret memory, never copy it, so it raises::

    RuntimeError: view size is not compatible with input tensor's size and stride ...

The fix is ``.contiguous()`` (copy into a fresh row-major block) before ``view``, or ``reshape``
(which copies only when it must). This module runs both and returns what happened, with the
real error text from the installed torch.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

#: The two lines the page shows (B, L, H, d_v are the shapes of the run).
BROKEN_CODE = "heads.transpose(1, 2).view(B, L, H * d_v)"
FIXED_CODE = "heads.transpose(1, 2).contiguous().view(B, L, H * d_v)"


@dataclass(frozen=True)
class ContiguityDemo:
    """What ``view`` after ``transpose`` did, and what the fix did.

    Attributes:
        shape: (B, H, L, d_v) of the per-head outputs.
        strides: their strides (elements to skip per step along each axis).
        transposed_shape: (B, L, H, d_v) after ``transpose(1, 2)``.
        transposed_strides: strides after the transpose (two of them swapped, no data moved).
        transposed_is_contiguous: ``is_contiguous()`` after the transpose.
        view_error: the ``RuntimeError`` message ``view`` raised, or None when it worked (it does
            when H, L or d_v is 1: an axis of length 1 has no stride to disturb).
        fixed_shape: (B, L, H * d_v) from ``.contiguous().view(...)``.
        fixed_strides: its strides (row-major again).
        fixed_matches_reshape: whether the fix equals ``reshape`` exactly (it must).
        concat_row0: the first query's concatenated heads, (H * d_v,), to show what the fix built.
    """

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    transposed_shape: tuple[int, ...]
    transposed_strides: tuple[int, ...]
    transposed_is_contiguous: bool
    view_error: str | None
    fixed_shape: tuple[int, ...]
    fixed_strides: tuple[int, ...]
    fixed_matches_reshape: bool
    concat_row0: tuple[float, ...]


def run_contiguity_pitfall(heads: torch.Tensor) -> ContiguityDemo:
    """Try ``heads.transpose(1, 2).view(B, L, H * d_v)``, then the ``.contiguous()`` fix.

    Args:
        heads: (B, H, L, d_v) per-head outputs, contiguous (as ``weights @ v`` produces them).

    Raises:
        ValueError: if ``heads`` is not a 4-D tensor.
    """
    if not isinstance(heads, torch.Tensor) or heads.dim() != 4:
        raise ValueError("heads must be a (B, H, L, d_v) tensor")
    heads = heads.detach().contiguous()
    B, H, L, d_v = heads.shape
    swapped = heads.transpose(1, 2)  # (B, L, H, d_v), a new view of the same memory
    try:
        swapped.view(B, L, H * d_v)
        error = None
    except RuntimeError as err:  # the pitfall itself: this is the message users meet
        error = str(err)
    fixed = swapped.contiguous().view(B, L, H * d_v)  # (B, L, H * d_v), copied row-major
    return ContiguityDemo(
        shape=tuple(heads.shape),
        strides=tuple(heads.stride()),
        transposed_shape=tuple(swapped.shape),
        transposed_strides=tuple(swapped.stride()),
        transposed_is_contiguous=swapped.is_contiguous(),
        view_error=error,
        fixed_shape=tuple(fixed.shape),
        fixed_strides=tuple(fixed.stride()),
        fixed_matches_reshape=bool(torch.equal(fixed, swapped.reshape(B, L, H * d_v))),
        concat_row0=tuple(float(v) for v in fixed[0, 0]),
    )
