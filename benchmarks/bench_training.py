"""Training speed: headless ``train()``, the live page's per-epoch work, and plain PyTorch.

``python -m benchmarks training``. For the default config (the post's model, 20 epochs):

- headless: ``core.training.train`` alone;
- page, every epoch: the same run with an ``on_epoch`` that does the live page's work after every
  epoch (build the loss and attention figures with ``figures.training`` and serialise them to
  JSON, as ``st.plotly_chart`` does); the page itself redraws at most every 0.7 s;
- page, throttled: the same, redrawing only when ``ui.live_run.RedrawClock`` allows, 0.7 s after
  the last redraw (what the page does);
- reference: a plain PyTorch loop over the same batches with ``torch.nn.TransformerEncoderLayer``
  of the same size (pre-LN, GELU, d_ff 128), a linear embedding, sinusoidal positions and a
  linear head; on one thread, like ``train()``, and on two.

Each is the best of ``REPEAT`` interleaved runs, in seconds per epoch, with ratios to the headless
run. On a shared 2-core machine wall-clock ratios move by ±10 % from run to run, so the time spent
inside the page's callbacks is also printed: it is the page's cost without that noise.
"""

from __future__ import annotations

import dataclasses
import time

import plotly.io as pio
import torch
from torch import nn

from core.positional import sinusoidal_encoding
from core.training import random_walk_dataset, train
from core.transformer import TransformerConfig
from figures.common import Labels
from figures.training import attention_heads, loss_curves
from ui.live_run import RedrawClock

REPEAT = 3
THROTTLE_S = 0.7
NAMES = {"train": "training", "val": "validation", "batch": "per batch", "mean": "mean",
         "last_value": "last value", "optimum": "best possible"}  # fmt: skip


def page_work(result) -> None:
    """What the live page does after an epoch: build both figures and serialise them."""
    loss = loss_curves(
        result.train_loss, result.val_loss, dataclasses.asdict(result.baselines),
        labels=Labels.of(title="loss", x="epoch", y="MSE", **NAMES), max_epochs=result.config.epochs,
        batch_loss=result.batch_loss,
        batches_per_epoch=result.batches_per_epoch,
    )  # fmt: skip
    weights = result.snapshots[max(result.snapshots)][0]
    attention = attention_heads(
        weights, head_titles=[f"head {h + 1}" for h in range(weights.shape[0])],
        labels=Labels.of(title="attention", x="key", y="query", z="weight"),
    )  # fmt: skip
    for fig in (loss, attention):
        pio.to_json(fig, validate=False)


def run_headless(config: TransformerConfig) -> float:
    start = time.perf_counter()
    train(config)
    return (time.perf_counter() - start) / config.epochs


#: Seconds spent inside the page callbacks, per variant (the least noisy measure of their cost).
CALLBACK_SHARE: dict[float, float] = {}


def run_with_page(config: TransformerConfig, throttle_s: float) -> float:
    spent = [0.0]
    clock = RedrawClock(throttle_s, spacing=0, wait_first=False)  # the page's (pages/training.py)

    def on_epoch(result) -> None:
        if clock.due():
            began = time.perf_counter()
            page_work(result)
            clock.done(began)
            spent[0] += time.perf_counter() - began

    start = time.perf_counter()
    result = train(config, on_epoch=on_epoch)
    share = spent[0] / result.seconds
    CALLBACK_SHARE[throttle_s] = min(CALLBACK_SHARE.get(throttle_s, float("inf")), share)
    return (time.perf_counter() - start) / config.epochs


class TorchReference(nn.Module):
    """The same model from torch's own parts (its encoder layer instead of ours)."""

    def __init__(self, c: TransformerConfig) -> None:
        super().__init__()
        self.embed = nn.Linear(1, c.d_model)
        self.register_buffer("pe", sinusoidal_encoding(c.seq_len, c.d_model))
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(
                c.d_model,
                c.n_heads,
                dim_feedforward=c.d_ff,
                dropout=0.0,
                activation="gelu",
                batch_first=True,
                norm_first=c.norm_first,
            )
            for _ in range(c.n_layers)
        )
        self.norm = nn.LayerNorm(c.d_model) if c.norm_first else nn.Identity()
        self.head = nn.Linear(c.d_model, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.shape[1]
        h = self.embed(x.unsqueeze(-1)) + self.pe[:T]
        mask = nn.Transformer.generate_square_subsequent_mask(T)
        for layer in self.layers:
            h = layer(h, src_mask=mask, is_causal=True)
        return self.head(self.norm(h)).squeeze(-1)


def run_torch(config: TransformerConfig, threads: int) -> float:
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        torch.manual_seed(config.seed)
        data = random_walk_dataset(
            config.n_train, config.n_val, config.seq_len, step_std=config.step_std,
            momentum=config.momentum, seed=config.seed,
        )  # fmt: skip
        model = TorchReference(config)
        optimizer = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
        generator = torch.Generator().manual_seed(config.seed)
        start = time.perf_counter()
        for _ in range(config.epochs):
            model.train()
            order = torch.randperm(config.n_train, generator=generator)
            for i in range(0, config.n_train, config.batch_size):
                batch = data.train[order[i : i + config.batch_size]]
                loss = torch.mean((model(batch[:, :-1]) - batch[:, 1:]) ** 2)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
            model.eval()
            with torch.no_grad():
                torch.mean((model(data.val[:, :-1]) - data.val[:, 1:]) ** 2)
        return (time.perf_counter() - start) / config.epochs
    finally:
        torch.set_num_threads(previous)


def main() -> None:
    config = TransformerConfig()
    train(config.replace(epochs=1, n_train=64))  # warm-up: torch.optim's one-off import, allocator
    runs = {
        "headless train()": lambda: run_headless(config),
        "page work, every epoch": lambda: run_with_page(config, 0.0),
        f"page work, every {THROTTLE_S} s (the page)": lambda: run_with_page(config, THROTTLE_S),
        "torch.nn.TransformerEncoderLayer, 1 thread": lambda: run_torch(config, 1),
        "torch.nn.TransformerEncoderLayer, 2 threads": lambda: run_torch(config, 2),
    }
    rows = {name: float("inf") for name in runs}
    for _ in range(REPEAT):  # interleaved, so a busy moment on a shared machine hits all alike
        for name, fn in runs.items():
            rows[name] = min(rows[name], fn())
    base = rows["headless train()"]
    print(f"default config: {config.epochs} epochs x {config.n_train} windows, batch {config.batch_size}")
    print(f"{'':46s} {'s/epoch':>8s} {'epochs/s':>9s} {'20 epochs':>10s} {'vs headless':>12s}")
    for name, per_epoch in rows.items():
        total = config.epochs * per_epoch
        print(f"{name:46s} {per_epoch:8.3f} {1 / per_epoch:9.2f} {total:9.1f}s {per_epoch / base:11.2f}x")
    for throttle_s, share in CALLBACK_SHARE.items():
        print(f"time inside the page callbacks (redraw every {throttle_s} s): +{share:.1%} of training time")
    per_redraw = min(_time_page_work(config) for _ in range(3))
    print(
        f"page work per redraw (two figures + JSON): {per_redraw * 1000:.1f} ms = "
        f"{per_redraw / base:.1%} of an epoch when redrawn after every epoch"
    )


def _time_page_work(config: TransformerConfig) -> float:
    result = train(config.replace(epochs=2, n_train=64))
    start = time.perf_counter()
    for _ in range(10):
        page_work(result)
    return (time.perf_counter() - start) / 10


def findings(seeds: tuple[int, ...] = (0, 1, 2)) -> None:
    """The post's observations per preset over a few seeds (minutes; not part of ``make bench``).

    ``python -m benchmarks.bench_training --findings``: the numbers quoted in the presets'
    descriptions on the page (assets/i18n/*/training.json, ``tr.expect_*``) come from this.
    """
    from core.lessons.training import PRESETS, measure_findings, preset_config

    columns = [
        "val/best",
        "oscillation",
        "similarity",
        "shuffle x",
        "recent3",
        "honest/tf",
        "rollout/last",
        "s",
    ]
    print(f"{'preset':16s} " + " ".join(f"{c:>12s}" for c in columns) + "   (mean over seeds)")
    for name in PRESETS:
        rows = []
        for seed in seeds:
            start = time.perf_counter()
            result = train(preset_config(name).replace(seed=seed))
            seconds = time.perf_counter() - start
            found = measure_findings(result)
            diag = {d.id: d.value for d in found.diagnostics}
            rows.append([
                found.val_loss / result.baselines.optimum, diag["oscillation"], diag["redundancy"],
                found.shuffle.ratio, found.attention.recent3, found.prefix_error / found.val_loss,
                found.rollout.model / found.rollout.last_value, seconds,
            ])  # fmt: skip
        means = [sum(col) / len(col) for col in zip(*rows, strict=True)]
        print(f"{name:16s} " + " ".join(f"{m:12.3g}" for m in means))


if __name__ == "__main__":
    import sys

    if "--findings" in sys.argv:
        findings()
    else:
        main()
