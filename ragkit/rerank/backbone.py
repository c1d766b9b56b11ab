"""The backbone: token-level hidden states of a bundled sentence-transformers encoder.

The interaction layers read the backbone's hidden states, truncated to a token budget. The
backbone's weights are never changed, so its states are computed without gradients and can be
cached (training computes each text's states once). A reranker may *tune* the backbone's top
``tuned`` layers: it then keeps its own trained copy of them (:class:`UpperLayers`) and reads
the frozen states from below them (:meth:`Backbone.encode` with ``tuned`` > 0), which training
caches once per text, so a training step costs only the tuned layers. The frozen model's last
states still feed the reranker's signals (:mod:`ragkit.rerank.features`).

Example:
    >>> backbone = Backbone("all-minilm-l6-v2")  # doctest: +SKIP
    >>> states = backbone.encode(["boiling point of water"], max_tokens=32, kind="query")  # doctest: +SKIP
    >>> states.hidden.shape[0], states.hidden.shape[2]  # doctest: +SKIP
    (1, 384)
    >>> split = backbone.encode(["boiling point"], 32, "query", tuned=2)  # doctest: +SKIP
    >>> upper = backbone.upper_layers(2)  # doctest: +SKIP
    >>> torch.allclose(upper(split.lower, split.mask), split.hidden, atol=1e-4)  # doctest: +SKIP
    True
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, cast

import torch
from torch import nn
from transformers import PreTrainedModel
from transformers.masking_utils import create_bidirectional_mask

from ragkit.embed.models import load_encoder, model_spec


@dataclass(frozen=True)
class TokenStates:
    """``hidden`` ``(n, tokens, dim)`` float states and ``mask`` ``(n, tokens)`` (True = token).

    ``lower``: the same texts' states below the tuned layers, when they were asked for.
    """

    hidden: torch.Tensor
    mask: torch.Tensor
    lower: torch.Tensor | None = None

    def model_input(self, tuned: bool) -> torch.Tensor:
        """The states a reranker reads: ``lower`` for one that tunes backbone layers, else
        ``hidden``."""
        if not tuned:
            return self.hidden
        if self.lower is None:
            raise ValueError("a reranker with tuned layers needs the states below them")
        return self.lower

    def pooled(self) -> torch.Tensor:
        """Mean of each text's token states, L2-normalized (the encoder's sentence vector)."""
        weights = self.mask.unsqueeze(-1).to(self.hidden.dtype)
        mean = (self.hidden * weights).sum(1) / weights.sum(1).clamp(min=1.0)
        return torch.nn.functional.normalize(mean.float(), dim=-1)

    def padded(self, tokens: int) -> TokenStates:
        """The same states right-padded (or cut) to exactly ``tokens`` positions."""
        have = self.hidden.shape[1]
        if have >= tokens:
            lower = None if self.lower is None else self.lower[:, :tokens]
            return TokenStates(self.hidden[:, :tokens], self.mask[:, :tokens], lower)
        extra = tokens - have
        return TokenStates(
            torch.nn.functional.pad(self.hidden, (0, 0, 0, extra)),
            torch.nn.functional.pad(self.mask, (0, extra)),
            None if self.lower is None else torch.nn.functional.pad(self.lower, (0, 0, 0, extra)),
        )


class UpperLayers(nn.Module):
    """A trainable copy of a backbone's top transformer layers, run over cached lower states.

    Built by :meth:`Backbone.upper_layers` (initialized from the backbone) or, to load saved
    weights into, from the backbone's architecture alone.
    """

    def __init__(self, layers: nn.ModuleList, config: object) -> None:
        super().__init__()
        self.layers = layers
        self.model_config = config

    def forward(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``(n, T, H)`` states after the layers (``mask`` ``(n, T)``, True = token).

        A text with no token at all (group padding) attends to its first position, so no row
        of the attention is empty; its states are masked out downstream anyway.
        """
        mask = mask.clone()
        mask[:, 0] |= ~mask.any(-1)
        attention = create_bidirectional_mask(
            config=self.model_config, inputs_embeds=states, attention_mask=mask.long()
        )
        for layer in self.layers:
            output = layer(states, attention_mask=attention)
            states = output[0] if isinstance(output, tuple) else output
        return states


class Backbone:
    """Token states from a sentence-transformers model's transformer (loaded once per process)."""

    def __init__(self, name: str = "all-minilm-l6-v2", batch_size: int = 32) -> None:
        self.spec = model_spec(name)
        encoder = load_encoder(self.spec.location)
        self.tokenizer = encoder.tokenizer
        self.transformer = cast(PreTrainedModel, encoder[0].auto_model).eval()
        self.dimension = int(self.transformer.config.hidden_size)
        self.layer_count = int(self.transformer.config.num_hidden_layers)
        self.batch_size = batch_size

    def upper_layers(self, tuned: int) -> UpperLayers:
        """A trainable copy of the top ``tuned`` layers, initialized from the backbone."""
        if not 0 < tuned <= self.layer_count:
            raise ValueError(f"tuned layers must be 1..{self.layer_count}, got {tuned}")
        layers = copy.deepcopy(self.transformer.encoder.layer[self.layer_count - tuned :])
        for parameter in layers.parameters():
            parameter.requires_grad_(True)
        return UpperLayers(nn.ModuleList(layers), self.transformer.config).train()

    @torch.inference_mode()
    def encode(
        self,
        texts: Sequence[str],
        max_tokens: int,
        kind: Literal["query", "passage"],
        tuned: int = 0,
    ) -> TokenStates:
        """States of ``texts`` (with the model's query/passage prefix), ``max_tokens`` positions.

        ``tuned`` > 0 also returns, as ``lower``, the states entering the top ``tuned`` layers
        (from the same pass).
        """
        prefix = self.spec.query_prefix if kind == "query" else self.spec.passage_prefix
        hidden = torch.zeros(len(texts), max_tokens, self.dimension)
        lower = torch.zeros(len(texts), max_tokens, self.dimension) if tuned else None
        mask = torch.zeros(len(texts), max_tokens, dtype=torch.bool)
        for start in range(0, len(texts), self.batch_size):
            batch = [prefix + t for t in texts[start : start + self.batch_size]]
            encoded = self.tokenizer(
                batch, truncation=True, max_length=max_tokens, padding=True, return_tensors="pt"
            )
            output = self.transformer(**encoded, output_hidden_states=tuned > 0)
            width = output.last_hidden_state.shape[1]
            rows = slice(start, start + len(batch))
            hidden[rows, :width] = output.last_hidden_state
            if lower is not None:
                lower[rows, :width] = output.hidden_states[self.layer_count - tuned]
            mask[rows, :width] = encoded["attention_mask"].bool()
        return TokenStates(hidden, mask, lower)


class StateBank:
    """Backbone states of many texts, each encoded once (training reads them many times).

    Kept as float16 to halve memory (2,860 passages × 128 tokens × 384 ≈ 280 MB); with
    ``tuned`` > 0 the states below the tuned layers are kept too (twice the memory).

    Example:
        >>> bank = StateBank(Backbone("all-minilm-l6-v2"), 32, "passage")  # doctest: +SKIP
        >>> bank.add(["a text", "another"]); bank.get(["another"]).hidden.shape  # doctest: +SKIP
        torch.Size([1, 32, 384])
    """

    def __init__(
        self,
        backbone: Backbone,
        max_tokens: int,
        kind: Literal["query", "passage"],
        tuned: int = 0,
    ):
        self.backbone = backbone
        self.max_tokens = max_tokens
        self.kind: Literal["query", "passage"] = kind
        self.tuned = tuned
        self.rows: dict[str, int] = {}
        self._hidden: list[torch.Tensor] = []
        self._lower: list[torch.Tensor] = []
        self._mask: list[torch.Tensor] = []

    def add(self, texts: Sequence[str], batch: int = 256) -> None:
        """Encode the texts not yet in the bank."""
        missing = list(dict.fromkeys(t for t in texts if t not in self.rows))
        for start in range(0, len(missing), batch):
            part = missing[start : start + batch]
            states = self.backbone.encode(part, self.max_tokens, self.kind, self.tuned)
            for offset, text in enumerate(part):
                self.rows[text] = len(self.rows)
                self._hidden.append(states.hidden[offset].half())
                self._mask.append(states.mask[offset])
                if states.lower is not None:
                    self._lower.append(states.lower[offset].half())

    def get(self, texts: Sequence[str]) -> TokenStates:
        """States of ``texts`` (added first when missing), float32."""
        self.add(texts)
        rows = [self.rows[t] for t in texts]
        lower = torch.stack([self._lower[r] for r in rows]).float() if self.tuned else None
        return TokenStates(
            torch.stack([self._hidden[r] for r in rows]).float(),
            torch.stack([self._mask[r] for r in rows]),
            lower,
        )
