"""The frozen backbone: token-level hidden states of a bundled sentence-transformers encoder.

The interaction layers read the backbone's last hidden states, truncated to a token budget.
The backbone is never trained, so states are computed without gradients and can be cached
(training computes each document's states once).

Example:
    >>> backbone = Backbone("all-minilm-l6-v2")  # doctest: +SKIP
    >>> states = backbone.encode(["boiling point of water"], max_tokens=32, kind="query")  # doctest: +SKIP
    >>> states.hidden.shape[0], states.hidden.shape[2]  # doctest: +SKIP
    (1, 384)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, cast

import torch
from transformers import PreTrainedModel

from ragkit.embed.models import load_encoder, model_spec


@dataclass(frozen=True)
class TokenStates:
    """``hidden`` ``(n, tokens, dim)`` float states and ``mask`` ``(n, tokens)`` (True = token)."""

    hidden: torch.Tensor
    mask: torch.Tensor

    def pooled(self) -> torch.Tensor:
        """Mean of each text's token states, L2-normalized (the encoder's sentence vector)."""
        weights = self.mask.unsqueeze(-1).to(self.hidden.dtype)
        mean = (self.hidden * weights).sum(1) / weights.sum(1).clamp(min=1.0)
        return torch.nn.functional.normalize(mean.float(), dim=-1)

    def padded(self, tokens: int) -> TokenStates:
        """The same states right-padded (or cut) to exactly ``tokens`` positions."""
        have = self.hidden.shape[1]
        if have >= tokens:
            return TokenStates(self.hidden[:, :tokens], self.mask[:, :tokens])
        extra = tokens - have
        return TokenStates(
            torch.nn.functional.pad(self.hidden, (0, 0, 0, extra)),
            torch.nn.functional.pad(self.mask, (0, extra)),
        )


class Backbone:
    """Token states from a sentence-transformers model's transformer (loaded once per process)."""

    def __init__(self, name: str = "all-minilm-l6-v2", batch_size: int = 32) -> None:
        self.spec = model_spec(name)
        encoder = load_encoder(self.spec.location)
        self.tokenizer = encoder.tokenizer
        self.transformer = cast(PreTrainedModel, encoder[0].auto_model).eval()
        self.dimension = int(self.transformer.config.hidden_size)
        self.batch_size = batch_size

    @torch.inference_mode()
    def encode(
        self, texts: Sequence[str], max_tokens: int, kind: Literal["query", "passage"]
    ) -> TokenStates:
        """States of ``texts`` (with the model's query/passage prefix), ``max_tokens`` positions."""
        prefix = self.spec.query_prefix if kind == "query" else self.spec.passage_prefix
        hidden = torch.zeros(len(texts), max_tokens, self.dimension)
        mask = torch.zeros(len(texts), max_tokens, dtype=torch.bool)
        for start in range(0, len(texts), self.batch_size):
            batch = [prefix + t for t in texts[start : start + self.batch_size]]
            encoded = self.tokenizer(
                batch, truncation=True, max_length=max_tokens, padding=True, return_tensors="pt"
            )
            output = self.transformer(**encoded).last_hidden_state
            width = output.shape[1]
            hidden[start : start + len(batch), :width] = output
            mask[start : start + len(batch), :width] = encoded["attention_mask"].bool()
        return TokenStates(hidden, mask)


class StateBank:
    """Backbone states of many texts, each encoded once (training reads them many times).

    Kept as float16 to halve memory (2,860 passages × 128 tokens × 384 ≈ 280 MB).

    Example:
        >>> bank = StateBank(Backbone("all-minilm-l6-v2"), 32, "passage")  # doctest: +SKIP
        >>> bank.add(["a text", "another"]); bank.get(["another"]).hidden.shape  # doctest: +SKIP
        torch.Size([1, 32, 384])
    """

    def __init__(self, backbone: Backbone, max_tokens: int, kind: Literal["query", "passage"]):
        self.backbone = backbone
        self.max_tokens = max_tokens
        self.kind: Literal["query", "passage"] = kind
        self.rows: dict[str, int] = {}
        self._hidden: list[torch.Tensor] = []
        self._mask: list[torch.Tensor] = []

    def add(self, texts: Sequence[str], batch: int = 256) -> None:
        """Encode the texts not yet in the bank."""
        missing = list(dict.fromkeys(t for t in texts if t not in self.rows))
        for start in range(0, len(missing), batch):
            part = missing[start : start + batch]
            states = self.backbone.encode(part, self.max_tokens, self.kind)
            for offset, text in enumerate(part):
                self.rows[text] = len(self.rows)
                self._hidden.append(states.hidden[offset].half())
                self._mask.append(states.mask[offset])

    def get(self, texts: Sequence[str]) -> TokenStates:
        """States of ``texts`` (added first when missing), float32."""
        self.add(texts)
        rows = [self.rows[t] for t in texts]
        return TokenStates(
            torch.stack([self._hidden[r] for r in rows]).float(),
            torch.stack([self._mask[r] for r in rows]),
        )
