"""Rewards of reranking rollouts: nDCG@10 of the induced ranking plus a calibration term.

A rollout assigns one sampled relevance level to every candidate of a group. Its reward is

``r = w_ndcg · nDCG@10(ranking by sampled level) + w_cal · calibration``

* nDCG@10 uses graded gains ``2^(4 · y / (L − 1)) − 1`` of the teacher levels ``y`` (so level
  10 of 0..10 gains 15, as grade 4 does in Cranfield); ties between sampled levels break by
  the policy's expected score, so equal levels keep the model's own order;
* ``calibration = 1 − mean_d |s_d − y_d| / (L − 1)``: sampled levels should sit on the
  teacher's scale, which is what makes scores of different groups comparable (the
  distributional term; set ``w_cal = 0`` to ablate it).

Example:
    >>> import torch
    >>> labels = torch.tensor([[10, 0, 3]])
    >>> perfect = torch.tensor([[[10, 0, 3]]])
    >>> rollout_rewards(perfect, labels, torch.zeros(1, 3), torch.ones(1, 3, dtype=torch.bool), 11)
    tensor([[1.5000]])
"""

from __future__ import annotations

import math

import torch


def gains(levels: torch.Tensor, level_count: int) -> torch.Tensor:
    """Graded gain ``2^(4 · level / (L − 1)) − 1`` of each level."""
    return torch.pow(2.0, 4.0 * levels.float() / (level_count - 1)) - 1.0


def ndcg_at_k(
    scores: torch.Tensor,
    labels: torch.Tensor,
    valid: torch.Tensor,
    level_count: int,
    k: int = 10,
) -> torch.Tensor:
    """nDCG@k of ranking each row's valid candidates by ``scores`` (``(..., K)`` → ``(...)``).

    Rows whose labels are all 0 score 0.

    Example:
        >>> labels = torch.tensor([[10, 0]]); valid = torch.ones(1, 2, dtype=torch.bool)
        >>> ndcg_at_k(torch.tensor([[0.1, 0.9]]), labels, valid, 11).item() < 1.0
        True
    """
    masked = scores.masked_fill(~valid, -math.inf)
    order = masked.argsort(-1, descending=True)
    gain = gains(labels, level_count) * valid
    ranked = gain.gather(-1, order)[..., :k]
    discount = 1.0 / torch.log2(torch.arange(2, ranked.shape[-1] + 2, dtype=torch.float32))
    dcg = (ranked * discount).sum(-1)
    ideal = (gain.sort(-1, descending=True).values[..., :k] * discount).sum(-1)
    return torch.where(ideal > 0, dcg / ideal.clamp(min=1e-9), torch.zeros_like(dcg))


def calibration(
    sampled: torch.Tensor, labels: torch.Tensor, valid: torch.Tensor, level_count: int
) -> torch.Tensor:
    """``1 − mean |sampled − label| / (L − 1)`` over valid candidates (``(B, G, K)`` → ``(B, G)``)."""
    error = (sampled - labels.unsqueeze(1)).abs().float() * valid.unsqueeze(1)
    count = valid.sum(-1, keepdim=True).clamp(min=1)
    return 1.0 - error.sum(-1) / count / (level_count - 1)


def rollout_rewards(
    sampled: torch.Tensor,
    labels: torch.Tensor,
    tiebreak: torch.Tensor,
    valid: torch.Tensor,
    level_count: int,
    ndcg_weight: float = 1.0,
    calibration_weight: float = 0.5,
) -> torch.Tensor:
    """Reward of each rollout: ``sampled`` ``(B, G, K)`` levels, ``labels`` ``(B, K)`` → ``(B, G)``.

    ``tiebreak`` ``(B, K)`` in [0, 1) orders candidates with equal sampled levels.
    """
    keys = sampled.float() + tiebreak.unsqueeze(1).clamp(0.0, 0.999)
    expanded_labels = labels.unsqueeze(1).expand_as(sampled)
    expanded_valid = valid.unsqueeze(1).expand_as(sampled)
    reward = ndcg_weight * ndcg_at_k(keys, expanded_labels, expanded_valid, level_count)
    if calibration_weight:
        reward = reward + calibration_weight * calibration(sampled, labels, valid, level_count)
    return reward
