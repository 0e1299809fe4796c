"""core.lessons.multi_head, the post's contiguous() pitfall: torch's own error, and the fix."""

from __future__ import annotations

import pytest
import torch

from core.lessons.multi_head import run_contiguity_pitfall


@pytest.mark.parametrize(("B", "H", "L", "d_v"), [(1, 4, 5, 2), (2, 8, 3, 4), (1, 2, 2, 2)])
def test_contiguity_pitfall_raises_torch_own_error_and_the_fix_works(B, H, L, d_v):
    heads = torch.randn(B, H, L, d_v)
    with pytest.raises(RuntimeError) as expected:
        heads.transpose(1, 2).view(B, L, H * d_v)
    demo = run_contiguity_pitfall(heads)
    assert demo.view_error == str(expected.value)
    assert "view size is not compatible" in demo.view_error
    assert not demo.transposed_is_contiguous
    assert demo.transposed_strides == (H * L * d_v, d_v, L * d_v, 1)
    assert demo.fixed_shape == (B, L, H * d_v)
    assert demo.fixed_strides == (L * H * d_v, H * d_v, 1)
    assert demo.fixed_matches_reshape
    # the first query's concatenation is head 0's row, then head 1's row, ...
    assert demo.concat_row0 == pytest.approx(torch.cat([heads[0, h, 0] for h in range(H)]).tolist())


@pytest.mark.parametrize(("H", "L", "d_v"), [(1, 6, 3), (4, 1, 3), (4, 6, 1)])
def test_contiguity_view_works_when_an_axis_has_length_one(H, L, d_v):
    heads = torch.randn(1, H, L, d_v)
    assert heads.transpose(1, 2).view(1, L, H * d_v).shape == (1, L, H * d_v)  # torch agrees
    demo = run_contiguity_pitfall(heads)
    assert demo.view_error is None
    with pytest.raises(ValueError, match="B, H, L, d_v"):
        run_contiguity_pitfall(torch.randn(3, 4))
