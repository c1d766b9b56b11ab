"""GRPO for the groupwise reranker: rollouts, group-relative advantages, clipped update.

Per training group the policy (per-candidate categorical over levels) samples ``G`` rollouts
— one level per candidate — each rewarded by :func:`ragkit.training.rewards.rollout_rewards`.
Advantages are relative to the group's rollouts:

* baseline ``mean``, or ``median`` (G odd; the pivot rollout that *is* the median gets no
  update, as its advantage is 0 by construction);
* scaled by the rollouts' standard deviation (``scale="std"``, GRPO) or not (``"none"``,
  Dr. GRPO);
* groups whose rollouts all earn the same reward carry no signal and are dropped
  (``drop_zero_variance``, DAPO); otherwise they only add KL noise;
* ``difficulty_alpha > 0`` scales a group's advantages by ``1 + α · (1 − mean reward)``
  (renormalized to mean 1 over the batch): groups the policy finds hard weigh more.

The update maximizes the PPO-style objective per candidate log-probability
``ρ = exp(log π − log π_old)`` with clipping ε:

* ``conditional`` (PPO): ``min(ρ·A, clip(ρ, 1−ε, 1+ε)·A)`` — the clip binds only when moving
  further would raise the objective;
* ``unconditional``: ``clip(ρ, 1−ε, 1+ε)·A`` — no gradient at all once ρ leaves the band,
  in either direction (the stricter trust region);

minus ``β · k3`` with ``k3 = exp(log π_ref − log π) − (log π_ref − log π) − 1`` against the
frozen warm-start policy.

Example:
    >>> import torch
    >>> rewards = torch.tensor([[1.0, 0.0, 0.5], [0.3, 0.3, 0.3]])
    >>> advantages, keep = group_advantages(rewards, GRPOConfig(rollouts=3))
    >>> keep.tolist()
    [[True, True, True], [False, False, False]]
    >>> [round(a, 3) for a in advantages[0].tolist()]
    [1.225, -1.225, 0.0]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

from ragkit.errors import RagkitError


@dataclass(frozen=True)
class GRPOConfig:
    """GRPO options (each exercised by the tests); defaults are the shipped model's."""

    rollouts: int = 8
    baseline: Literal["mean", "median"] = "mean"
    scale: Literal["std", "none"] = "std"
    drop_zero_variance: bool = True
    clipping: Literal["conditional", "unconditional"] = "conditional"
    clip_epsilon: float = 0.2
    kl_coef: float = 0.05
    difficulty_alpha: float = 0.0
    inner_epochs: int = 2
    ndcg_weight: float = 1.0
    calibration_weight: float = 0.5
    temperature: float = 1.0

    def __post_init__(self) -> None:
        if self.baseline == "median" and self.rollouts % 2 == 0:
            raise RagkitError(
                f"GRPO median baseline needs an odd number of rollouts, got {self.rollouts}"
            )
        if self.rollouts < 2:
            raise RagkitError(f"GRPO needs at least 2 rollouts per group, got {self.rollouts}")


def group_advantages(
    rewards: torch.Tensor, config: GRPOConfig
) -> tuple[torch.Tensor, torch.Tensor]:
    """Advantages ``(B, G)`` and which rollouts take part in the update."""
    keep = torch.ones_like(rewards, dtype=torch.bool)
    if config.baseline == "median":
        baseline, pivot = rewards.median(dim=1, keepdim=True)
        keep.scatter_(1, pivot, False)
    else:
        baseline = rewards.mean(dim=1, keepdim=True)
    advantages = rewards - baseline
    spread = rewards.std(dim=1, keepdim=True, unbiased=False)
    if config.scale == "std":
        advantages = advantages / (spread + 1e-6)
    if config.drop_zero_variance:
        keep &= spread > 1e-6
    if config.difficulty_alpha > 0:
        weight = 1.0 + config.difficulty_alpha * (1.0 - rewards.mean(dim=1, keepdim=True))
        kept_groups = keep.any(dim=1, keepdim=True)
        mean_weight = (weight * kept_groups).sum() / kept_groups.sum().clamp(min=1)
        advantages = advantages * weight / mean_weight.clamp(min=1e-6)
    return advantages * keep, keep


def policy_loss(
    log_probs: torch.Tensor,
    old_log_probs: torch.Tensor,
    ref_log_probs: torch.Tensor,
    advantages: torch.Tensor,
    keep: torch.Tensor,
    valid: torch.Tensor,
    config: GRPOConfig,
) -> tuple[torch.Tensor, dict[str, float]]:
    """Clipped surrogate + k3 KL over kept rollouts' valid candidates (all ``(B, G, K)``).

    Returns the loss to minimize and diagnostics (clip fraction, KL).
    """
    ratio = torch.exp(log_probs - old_log_probs)
    advantage = advantages.unsqueeze(-1)
    clipped = ratio.clamp(1.0 - config.clip_epsilon, 1.0 + config.clip_epsilon)
    if config.clipping == "conditional":
        objective = torch.minimum(ratio * advantage, clipped * advantage)
    else:
        objective = clipped * advantage
    delta = ref_log_probs - log_probs
    kl = torch.exp(delta) - delta - 1.0
    weight = (keep.unsqueeze(-1) & valid.unsqueeze(1)).to(log_probs.dtype)
    total = weight.sum().clamp(min=1.0)
    loss = -((objective - config.kl_coef * kl) * weight).sum() / total
    outside = ((ratio - 1.0).abs() > config.clip_epsilon).to(log_probs.dtype)
    stats = {
        "clip_fraction": float((outside * weight).sum() / total),
        "kl": float((kl.detach() * weight).sum() / total),
    }
    return loss, stats


def sample_rollouts(
    logits: torch.Tensor,
    rollouts: int,
    temperature: float = 1.0,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """``G`` sampled levels per candidate: logits ``(B, K, L)`` → levels ``(B, G, K)``."""
    probs = (logits.detach() / temperature).softmax(-1)
    batch, slots, levels = probs.shape
    flat = torch.multinomial(
        probs.reshape(-1, levels), rollouts, replacement=True, generator=generator
    )
    return flat.view(batch, slots, rollouts).permute(0, 2, 1)


def rollout_log_probs(logits: torch.Tensor, sampled: torch.Tensor) -> torch.Tensor:
    """Log-probabilities ``(B, G, K)`` of the sampled levels under ``logits`` ``(B, K, L)``."""
    log_softmax = logits.log_softmax(-1)  # (B, K, L)
    expanded = log_softmax.unsqueeze(1).expand(-1, sampled.shape[1], -1, -1)
    return expanded.gather(-1, sampled.unsqueeze(-1)).squeeze(-1)
