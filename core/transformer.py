"""A toy Transformer for one-dimensional sequences: the model of the post's second stage.

The post: "each value is embedded into 64 dimensions, sinusoidal positional encoding, one
TransformerEncoder layer with multi-head self-attention (4 heads, hidden size 64), a fully
connected output layer". :class:`TransformerConfig` holds those defaults and every knob the
training page exposes; :class:`ToyTransformer` builds the model from it on top of
``core.multihead.MultiHeadAttention`` and returns the attention weights of every layer and head,
so the page can draw them while the model learns.

    x (B, T) values -> Linear(1, d_model) + positions -> n_layers x [self-attention + feed-forward]
                    -> Linear(d_model, 1) -> prediction (B, T)

Everything random in the model (initial weights, attention dropout) draws from ``torch.Generator``
objects seeded from ``config.seed``, never from torch's global generator, so two trainings
running at the same time in one server process (two Streamlit sessions) cannot disturb each
other's random streams: the same config gives the same numbers, run after run.

Shapes: B batch, T sequence length (L = S = T for self-attention), H heads, d_model width.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

import torch
from torch import nn

from core.attention import SCALE_MODES, causal_mask
from core.multihead import MultiHeadAttention
from core.positional import POSITIONAL_KINDS, LearnedPositionalEmbedding, SinusoidalPositionalEncoding

#: Positional encodings the config accepts (option ids for the page).
#: Positional encodings and scale modes: the one vocabulary of ``core.positional`` and
#: ``core.attention`` (kept under these names for existing callers).
POSITIONAL = POSITIONAL_KINDS
#: How the attention scores are scaled: divided by √d_k, by 1 (no scaling), or by a custom number.
SCALES = SCALE_MODES

#: Classroom caps: one user must not be able to starve a shared server.
MAX_D_MODEL = 128
MAX_HEADS = 32
MAX_LAYERS = 3
MAX_EPOCHS = 100
MAX_SEQ_LEN = 64
MAX_TRAIN = 4096
MAX_VAL = 1024
#: Cap on :meth:`TransformerConfig.work`: about 14x the default run (~10 s), so ~2 minutes at most.
MAX_WORK = 1.0e12


@dataclass(frozen=True)
class TransformerConfig:
    """Everything that defines one training run: model, optimiser and data.

    Frozen (hashable), so it can key caches and be compared to decide whether a paused run can
    be resumed. Invalid values raise ``ValueError`` in ``__post_init__``, with the classroom caps
    (``MAX_*`` in this module) enforced there too.
    """

    # --- model -----------------------------------------------------------------------------
    d_model: int = 64  # the post: "each value is embedded into a 64-dimensional vector"
    n_heads: int = 4  # the post: 4 heads; must divide d_model (d_k = d_model / n_heads = 16)
    n_layers: int = 1  # the post: "one TransformerEncoder layer"
    d_ff: int = 128  # feed-forward width; 2 x d_model keeps 20 epochs within ~10 s on a laptop CPU
    norm_first: bool = (
        True  # pre-LN (GPT-2 style): steadier in 20 short epochs; False = post-LN (torch default)
    )
    positional: str = "sinusoidal"  # the post: sine/cosine encoding, same width as the embedding
    scale: str = "sqrt_dk"  # divide scores by √d_k (the post); "one" reproduces its broken run
    custom_divisor: float = 4.0  # used only when scale == "custom": scores / custom_divisor
    attn_dropout: float = 0.0  # dropout on attention weights; the post's remedy for peaked weights
    causal: bool = True  # next-step prediction: position t may only see positions <= t
    # --- training --------------------------------------------------------------------------
    diversity_weight: float = 0.0  # weight of the head-diversity regulariser (the post's 5.3)
    learning_rate: float = 3e-3  # Adam; 1e-3 is still far from converged after 20 epochs
    batch_size: int = 32  # windows per optimiser step; 24 steps per epoch with the default data
    epochs: int = 20  # the post: "after about 20 epochs both losses were low"
    seed: int = 0  # seeds the data, the initial weights, the shuffles and the dropout
    # --- data ------------------------------------------------------------------------------
    seq_len: int = 32  # input length T; the window holds T + 1 values (the last is only a target)
    n_train: int = 768  # training windows, sized so 20 epochs take ~10 s on a 2-core CPU
    n_val: int = 256  # validation windows, cut from a separate walk
    step_std: float = 0.03  # step noise; keeps a window's values within about ±2
    momentum: float = 0.8  # step correlation: the previous value carries information (0 = plain walk)

    def __post_init__(self) -> None:
        def check_int(name: str, lo: int, hi: int) -> None:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
                raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")

        def check_float(name: str, lo: float, hi: float, *, open_lo: bool = False) -> None:
            value = getattr(self, name)
            if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value!r}")
            if value > hi or value < lo or (open_lo and value == lo):
                bracket = "(" if open_lo else "["
                raise ValueError(f"{name} must be in {bracket}{lo}, {hi}], got {value!r}")

        check_int("d_model", 4, MAX_D_MODEL)
        check_int("n_heads", 1, MAX_HEADS)
        check_int("n_layers", 1, MAX_LAYERS)
        check_int("d_ff", 4, 4 * MAX_D_MODEL)
        check_int("batch_size", 1, 512)
        check_int("epochs", 1, MAX_EPOCHS)
        check_int("seed", 0, 2**31 - 1)
        check_int("seq_len", 4, MAX_SEQ_LEN)
        check_int("n_train", 8, MAX_TRAIN)
        check_int("n_val", 8, MAX_VAL)
        if self.d_model % self.n_heads != 0:
            raise ValueError(f"n_heads={self.n_heads} must divide d_model={self.d_model}")
        if self.positional not in POSITIONAL:
            raise ValueError(f"positional must be one of {POSITIONAL}, got {self.positional!r}")
        if self.scale not in SCALES:
            raise ValueError(f"scale must be one of {SCALES}, got {self.scale!r}")
        if not isinstance(self.norm_first, bool) or not isinstance(self.causal, bool):
            raise ValueError("norm_first and causal must be booleans")
        check_float("custom_divisor", 0.01, 1000.0, open_lo=False)
        check_float("attn_dropout", 0.0, 0.9)
        check_float("diversity_weight", 0.0, 100.0)
        check_float("learning_rate", 0.0, 0.1, open_lo=True)
        check_float("step_std", 0.0, 10.0, open_lo=True)
        check_float("momentum", 0.0, 0.95)
        if self.work() > MAX_WORK:
            raise ValueError(
                f"this run is too big for a shared classroom server (work {self.work():.2g} > "
                f"{MAX_WORK:.2g}): lower epochs, training windows, layers, d_model or sequence length"
            )

    @property
    def d_k(self) -> int:
        """Per-head query/key width d_model / n_heads."""
        return self.d_model // self.n_heads

    @property
    def score_scale(self) -> float:
        """The factor the attention scores are multiplied by before the softmax."""
        if self.scale == "sqrt_dk":
            return 1.0 / math.sqrt(self.d_k)
        if self.scale == "one":
            return 1.0
        return 1.0 / self.custom_divisor

    def work(self) -> float:
        """Rough multiply-adds of one whole training run (forward + backward ~ 3 x forward).

        Per window and layer: T (4 d_model² + 2 d_model d_ff) for the projections and the
        feed-forward, plus H T² (2 d_k + 60) for scores, softmax, masking and weighted sums
        (memory-bound, hence the large constant; calibrated so 32 heads cost ~2.3x 4 heads, as
        measured). With the head-diversity regulariser, per batch and layer: 2 H² (T/4) T x 200
        (head-pair divergences on 2 windows and every 4th query, as core.training computes them;
        calibrated on the 32-head preset, which it makes about twice as slow).
        """
        T, D, H = self.seq_len, self.d_model, self.n_heads
        per_window = self.n_layers * (T * (4 * D * D + 2 * D * self.d_ff) + H * T * T * (2 * self.d_k + 60))
        total = 3.0 * per_window * (self.n_train + self.n_val / 3) * self.epochs
        if self.diversity_weight > 0 and H > 1:
            batches = math.ceil(self.n_train / self.batch_size) * self.epochs
            total += 3.0 * self.n_layers * 2 * H * H * (T / 4) * T * 200 * batches
        return total

    def replace(self, **changes: object) -> TransformerConfig:
        """A copy with ``changes`` applied (validated again)."""
        values = asdict(self)
        unknown = sorted(set(changes) - set(values))
        if unknown:
            raise ValueError(f"unknown config field(s) {unknown}; known: {sorted(values)}")
        values.update(changes)
        return TransformerConfig(**values)

    def same_run_as(self, other: TransformerConfig) -> bool:
        """True when ``other`` differs from this config at most in ``epochs`` (so it can resume)."""
        return all(
            getattr(self, f.name) == getattr(other, f.name) for f in fields(self) if f.name != "epochs"
        )


class GeneratorDropout(nn.Module):
    """Dropout whose mask comes from a private ``torch.Generator`` (reproducible across threads).

    ``torch.nn.Dropout`` draws from torch's process-wide generator, which two concurrent
    trainings in one server would share; this one draws from ``generator`` only.
    """

    def __init__(self, p: float, generator: torch.Generator) -> None:
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {p}")
        self.p = p
        self.generator = generator

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0.0:
            return x
        keep = torch.rand(x.shape, generator=self.generator, dtype=x.dtype) >= self.p
        return x * keep / (1.0 - self.p)


class EncoderBlock(nn.Module):
    """One Transformer encoder layer: self-attention and a feed-forward net, each with a residual.

    Post-LN (``norm_first=False``, the original paper and torch's default):
        x = LN(x + MHA(x));  x = LN(x + FF(x))
    Pre-LN (``norm_first=True``, GPT-2 style):
        x = x + MHA(LN(x));  x = x + FF(LN(x))
    """

    def __init__(self, config: TransformerConfig, generator: torch.Generator) -> None:
        super().__init__()
        self.norm_first = config.norm_first
        self.attention = MultiHeadAttention(
            config.d_model, config.n_heads, dropout=config.attn_dropout, scale=config.score_scale
        )
        # Replace the module's nn.Dropout (global RNG) by one with a private generator.
        self.attention.attn_dropout = GeneratorDropout(config.attn_dropout, generator)
        self.norm_attention = nn.LayerNorm(config.d_model)
        self.norm_feed_forward = nn.LayerNorm(config.d_model)
        self.feed_forward = nn.Sequential(
            nn.Linear(config.d_model, config.d_ff), nn.GELU(), nn.Linear(config.d_ff, config.d_model)
        )

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        """x (B, T, d_model), mask (T, T) or None -> (B, T, d_model) and weights (B, H, T, T)."""
        if self.norm_first:
            h = self.norm_attention(x)
            attended, weights = self.attention(h, h, h, mask=mask)
            x = x + attended
            x = x + self.feed_forward(self.norm_feed_forward(x))
        else:
            attended, weights = self.attention(x, x, x, mask=mask)
            x = self.norm_attention(x + attended)
            x = self.norm_feed_forward(x + self.feed_forward(x))
        return x, weights


class ToyTransformer(nn.Module):
    """The post's toy model: value embedding, positions, encoder layer(s), linear output head.

    Args:
        config: a :class:`TransformerConfig`; its ``seed`` fixes the initial weights and the
            dropout stream (independently of torch's global generator).

    ``forward(x)`` maps values (B, T) to next-step predictions (B, T) (position t predicts the
    value at t + 1) and returns the attention weights of every layer: (n_layers, B, H, T, T).
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        if not isinstance(config, TransformerConfig):
            raise ValueError(f"expected a TransformerConfig, got {type(config).__name__}")
        self.config = config
        self.dropout_generator = torch.Generator().manual_seed(config.seed + 1)
        self.embed = nn.Linear(1, config.d_model)
        if config.positional == "sinusoidal":
            self.position: nn.Module = SinusoidalPositionalEncoding(config.d_model, max_len=config.seq_len)
        elif config.positional == "learned":
            self.position = LearnedPositionalEmbedding(config.d_model, max_len=config.seq_len)
        else:
            self.position = nn.Identity()
        self.blocks = nn.ModuleList(
            EncoderBlock(config, self.dropout_generator) for _ in range(config.n_layers)
        )
        self.final_norm = nn.LayerNorm(config.d_model) if config.norm_first else nn.Identity()
        self.head = nn.Linear(config.d_model, 1)
        self.reset_parameters(torch.Generator().manual_seed(config.seed))

    @torch.no_grad()
    def reset_parameters(self, generator: torch.Generator) -> None:
        """Initialise every weight from ``generator``, with torch's default schemes.

        Attention projections: Xavier-uniform weights and zero biases
        (``MultiHeadAttention.reset_parameters``, as ``torch.nn.MultiheadAttention``); other linear
        layers: Kaiming-uniform weights and U(-1/√fan_in, 1/√fan_in) biases (as
        ``nn.Linear.reset_parameters``); LayerNorm: ones and zeros; a learned position table:
        N(0, 0.02²).
        """
        in_attention = set()
        for module in self.modules():
            if isinstance(module, MultiHeadAttention):
                module.reset_parameters(generator)
                in_attention |= {id(m) for m in module.modules()}
        for module in self.modules():
            if id(module) in in_attention:
                continue
            if isinstance(module, nn.Linear):
                nn.init.kaiming_uniform_(module.weight, a=math.sqrt(5), generator=generator)
                if module.bias is not None:
                    bound = 1.0 / math.sqrt(module.weight.shape[1])
                    nn.init.uniform_(module.bias, -bound, bound, generator=generator)
            elif isinstance(module, nn.LayerNorm):
                nn.init.ones_(module.weight)
                nn.init.zeros_(module.bias)
            elif isinstance(module, LearnedPositionalEmbedding):
                nn.init.normal_(module.table, 0.0, 0.02, generator=generator)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Predict the next value at every position.

        Args:
            x: (B, T) float values, 1 <= T <= config.seq_len.

        Returns:
            predictions (B, T), where predictions[:, t] is the guess for the value after x[:, t],
            and the attention weights (n_layers, B, H, T, T), rows = queries.

        Raises:
            ValueError: if x is not (B, T) or T exceeds config.seq_len.
        """
        if not isinstance(x, torch.Tensor) or x.dim() != 2:
            raise ValueError(f"x must be a (batch, length) tensor, got {getattr(x, 'shape', type(x))}")
        T = x.shape[1]
        if not 1 <= T <= self.config.seq_len:
            raise ValueError(f"sequence length {T} must be in [1, {self.config.seq_len}]")
        h = self.position(self.embed(x.unsqueeze(-1)))  # (B, T, 1) -> (B, T, d_model)
        mask = causal_mask(T, device=x.device) if self.config.causal else None  # (T, T)
        all_weights = []
        for block in self.blocks:
            h, weights = block(h, mask)  # (B, T, d_model), (B, H, T, T)
            all_weights.append(weights)
        predictions = self.head(self.final_norm(h)).squeeze(-1)  # (B, T, 1) -> (B, T)
        return predictions, torch.stack(all_weights)  # (n_layers, B, H, T, T)
