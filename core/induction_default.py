"""The induction lesson's default run, computed ahead: trained by code, shipped as a file, checked by a test.

A page should teach before anything is pressed: the default config's training curves, its 1-layer
control's curve, and the trained model whose heads the page reads (maps, ablation, kernel view,
your own text). Training both takes about 10-15 CPU seconds (``benchmarks/bench_induction.py``),
too long for a first page load, so :func:`default_runs` is run once with
``python -m core.induction_default`` and its result saved to :data:`SHIPPED_FILE` (the trained
weights, float32, and both histories: ~0.2 MB). ``tests/core/test_induction.py`` trains the
default again and checks that the file is what the code produces.

The file is a numpy ``.npz`` read with ``allow_pickle=False`` (no code can hide in it): the config
as JSON, the model's ``state_dict`` under ``weights/``, and each history's fields as arrays.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
import torch

from core.induction import InductionConfig, InductionTransformer
from core.induction_training import EvalPoint, train_induction

#: The shipped default run.
SHIPPED_FILE = Path(__file__).resolve().parent.parent / "assets" / "precomputed" / "induction_default.npz"
_POINT_FIELDS = tuple(f.name for f in fields(EvalPoint))


@dataclass(frozen=True)
class DefaultRuns:
    """A config's 2-layer run, trained to the end, with its 1-layer control: what a page shows first.

    Attributes:
        config: the 2-layer config (the control is ``config.control``).
        model: the trained :class:`InductionTransformer` in eval mode.
        history: the 2-layer run's measurements (:class:`EvalPoint`, one per ``eval_every`` steps).
        control_history: the 1-layer control's measurements, with the same budget.
    """

    config: InductionConfig
    model: InductionTransformer
    history: tuple[EvalPoint, ...]
    control_history: tuple[EvalPoint, ...]


def default_runs(config: InductionConfig | None = None) -> DefaultRuns:
    """Train ``config`` (default: :class:`InductionConfig`) and its 1-layer control to the end.

    Deterministic for the config (same weights and histories on one machine, run after run).

    Raises:
        ValueError: if ``config`` is not a 2-layer (or deeper) :class:`InductionConfig`.
    """
    config = InductionConfig() if config is None else config
    if not isinstance(config, InductionConfig) or config.n_layers < 2:
        raise ValueError("the default run needs an InductionConfig with at least 2 layers")
    run = train_induction(config)
    control = train_induction(config.control)
    run.model.eval()
    return DefaultRuns(
        config=config, model=run.model, history=tuple(run.history), control_history=tuple(control.history)
    )


def _history_arrays(prefix: str, history: tuple[EvalPoint, ...]) -> dict[str, np.ndarray]:
    return {f"{prefix}/{name}": np.array([getattr(p, name) for p in history]) for name in _POINT_FIELDS}


def save_default_runs(runs: DefaultRuns, path: str | Path = SHIPPED_FILE) -> None:
    """Write ``runs`` to ``path`` as a compressed ``.npz`` (see the module docstring)."""
    arrays = {"config": np.array(json.dumps(asdict(runs.config), sort_keys=True))}
    arrays |= {f"weights/{k}": v.detach().numpy() for k, v in runs.model.state_dict().items()}
    arrays |= _history_arrays("history", runs.history)
    arrays |= _history_arrays("control_history", runs.control_history)
    with open(path, "wb") as f:
        np.savez_compressed(f, **arrays)


def _history(data: dict[str, np.ndarray], prefix: str) -> tuple[EvalPoint, ...]:
    columns = [data[f"{prefix}/{name}"] for name in _POINT_FIELDS]
    n = len(columns[0])
    if any(len(c) != n for c in columns) or n < 1:
        raise ValueError(f"the {prefix} columns have different lengths")
    return tuple(
        EvalPoint(
            step=int(step), loss=float(loss), copy_loss=float(copy), accuracy=float(acc),
            previous_token=np.asarray(pt, dtype=float), prefix_matching=np.asarray(pm, dtype=float),
        )
        for step, loss, copy, acc, pt, pm in zip(*columns, strict=True)
    )  # fmt: skip


def load_default_runs(path: str | Path = SHIPPED_FILE) -> DefaultRuns:
    """Read a file written by :func:`save_default_runs`.

    Raises:
        ValueError: if the file is missing, not such a file, or its weights do not fit its config.
    """
    try:
        with np.load(path, allow_pickle=False) as npz:
            data = {k: npz[k] for k in npz.files}
        config = InductionConfig(**json.loads(str(data["config"])))
        model = InductionTransformer(config)
        state = {
            k.removeprefix("weights/"): torch.from_numpy(v)
            for k, v in data.items()
            if k.startswith("weights/")
        }
        model.load_state_dict(state, strict=True)
        history, control = _history(data, "history"), _history(data, "control_history")
    except (OSError, KeyError, TypeError, ValueError, RuntimeError, zipfile.BadZipFile) as err:
        raise ValueError(f"not a shipped induction run ({path}): {err}") from err
    return DefaultRuns(config=config, model=model.eval(), history=history, control_history=control)


if __name__ == "__main__":  # regenerate the shipped default: python -m core.induction_default [OUT]
    import sys

    save_default_runs(default_runs(), sys.argv[1] if len(sys.argv) > 1 else SHIPPED_FILE)
