"""Training groups as tensors: backbone states from the state banks, features, labels.

The signals always come from the frozen backbone's last states; the model's own input is the
states below its tuned layers when it tunes any (``tuned``, :meth:`TokenStates.model_input`).

Example:
    >>> soft_targets(torch.tensor([[0, 10]]), 11)[0, 1].argmax().item()
    10
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from ragkit.rerank.backbone import StateBank, TokenStates
from ragkit.rerank.features import candidate_signals, overlaps
from ragkit.rerank.model import SIGNALS, group_features
from ragkit.training.synthetic import TrainingGroup


@dataclass(frozen=True)
class GroupBatch:
    """``B`` groups of ``K`` candidates ready for :class:`GroupwiseReranker`."""

    query: torch.Tensor  # (B, Tq, H)
    query_mask: torch.Tensor  # (B, Tq)
    docs: torch.Tensor  # (B, K, Td, H)
    doc_mask: torch.Tensor  # (B, K, Td)
    features: torch.Tensor  # (B, K, F)
    labels: torch.Tensor  # (B, K) teacher levels
    valid: torch.Tensor  # (B, K)

    def inputs(self) -> tuple[torch.Tensor, ...]:
        return self.query, self.query_mask, self.docs, self.doc_mask, self.features

    def singles(self) -> GroupBatch:
        """Every candidate as its own group of one (the pointwise view of the same data)."""
        batch, slots = self.labels.shape
        repeat = self.query.repeat_interleave(slots, 0)
        one = torch.ones(batch * slots, 1, dtype=torch.bool)
        signals = self.features[..., :SIGNALS].reshape(batch * slots, 1, SIGNALS)
        return GroupBatch(
            repeat,
            self.query_mask.repeat_interleave(slots, 0),
            self.docs.reshape(batch * slots, 1, *self.docs.shape[2:]),
            self.doc_mask.reshape(batch * slots, 1, -1),
            group_features(signals, one),
            self.labels.reshape(batch * slots, 1),
            one,
        )


@functools.lru_cache(maxsize=65536)
def group_overlaps(query: str, passages: tuple[str, ...], language: str) -> torch.Tensor:
    """:func:`~ragkit.rerank.features.overlaps` of one group, analyzed once per training run."""
    return overlaps(query, passages, language)


def make_batch(
    groups: Sequence[TrainingGroup],
    queries: StateBank,
    passages: StateBank,
    language: str = "en",
    tuned: bool = False,
) -> GroupBatch:
    """Stack groups of equal size into one :class:`GroupBatch` (``language``: term analysis;
    ``tuned``: for a model that tunes backbone layers)."""
    query_states = queries.get([g.query for g in groups])
    doc_states = [passages.get(g.passages) for g in groups]
    signals = torch.stack(
        [
            candidate_signals(
                TokenStates(query_states.hidden[i : i + 1], query_states.mask[i : i + 1]),
                docs,
                group_overlaps(group.query, group.passages, language),
                torch.tensor(group.prior, dtype=torch.float32),
                passages.get(group.anchors).pooled(),
            )
            for i, (group, docs) in enumerate(zip(groups, doc_states, strict=True))
        ]
    )
    valid = torch.ones(signals.shape[:2], dtype=torch.bool)
    return GroupBatch(
        query_states.model_input(tuned),
        query_states.mask,
        torch.stack([d.model_input(tuned) for d in doc_states]),
        torch.stack([d.mask for d in doc_states]),
        group_features(signals, valid),
        torch.tensor([g.labels for g in groups]),
        valid,
    )


def soft_targets(labels: torch.Tensor, level_count: int, width: float = 1.0) -> torch.Tensor:
    """Per-candidate target distributions over levels: a Gaussian of ``width`` at the label."""
    levels = torch.arange(level_count, dtype=torch.float32)
    distance = (levels - labels.unsqueeze(-1).float()) / width
    return torch.softmax(-0.5 * distance**2, dim=-1)
