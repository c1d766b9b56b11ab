"""GRPO pieces: rewards, every advantage option, both clipping modes, the KL term."""

from __future__ import annotations

import pytest
import torch

from ragkit.errors import RagkitError
from ragkit.training.grpo import (
    GRPOConfig,
    group_advantages,
    policy_loss,
    rollout_log_probs,
    sample_rollouts,
)
from ragkit.training.rewards import calibration, ndcg_at_k, rollout_rewards

LEVELS = 11


def test_ndcg_orders_by_graded_gain() -> None:
    labels = torch.tensor([[10, 5, 0]])
    valid = torch.ones(1, 3, dtype=torch.bool)
    perfect = ndcg_at_k(torch.tensor([[3.0, 2.0, 1.0]]), labels, valid, LEVELS)
    swapped = ndcg_at_k(torch.tensor([[2.0, 3.0, 1.0]]), labels, valid, LEVELS)
    assert perfect.item() == pytest.approx(1.0)
    assert 0.0 < swapped.item() < perfect.item()


def test_ndcg_ignores_invalid_candidates() -> None:
    labels = torch.tensor([[10, 0, 10]])
    valid = torch.tensor([[True, True, False]])
    score = ndcg_at_k(torch.tensor([[1.0, 0.0, 5.0]]), labels, valid, LEVELS)
    assert score.item() == pytest.approx(1.0)


def test_calibration_term_measures_distance_to_labels() -> None:
    labels = torch.tensor([[10, 0]])
    valid = torch.ones(1, 2, dtype=torch.bool)
    sampled = torch.tensor([[[10, 0], [5, 5]]])
    assert calibration(sampled, labels, valid, LEVELS).tolist() == [[1.0, 0.5]]


def test_calibration_weight_zero_ablates_the_term() -> None:
    labels = torch.tensor([[10, 0]])
    valid = torch.ones(1, 2, dtype=torch.bool)
    sampled = torch.tensor([[[6, 5]]])  # right order, wrong scale
    tie = torch.zeros(1, 2)
    with_term = rollout_rewards(sampled, labels, tie, valid, LEVELS, 1.0, 0.5)
    without = rollout_rewards(sampled, labels, tie, valid, LEVELS, 1.0, 0.0)
    assert without.item() == pytest.approx(1.0)
    assert with_term.item() == pytest.approx(1.0 + 0.5 * (1 - 4.5 / 10))


def test_ties_break_by_the_policy_score() -> None:
    labels = torch.tensor([[0, 10]])
    valid = torch.ones(1, 2, dtype=torch.bool)
    sampled = torch.tensor([[[3, 3]]])
    good = rollout_rewards(sampled, labels, torch.tensor([[0.1, 0.9]]), valid, LEVELS, 1.0, 0.0)
    bad = rollout_rewards(sampled, labels, torch.tensor([[0.9, 0.1]]), valid, LEVELS, 1.0, 0.0)
    assert good.item() == pytest.approx(1.0)
    assert bad.item() < 1.0


def test_mean_baseline_with_and_without_std_scaling() -> None:
    rewards = torch.tensor([[1.0, 0.0, 0.5, 0.5]])
    scaled, _ = group_advantages(rewards, GRPOConfig(rollouts=4))
    raw, _ = group_advantages(rewards, GRPOConfig(rollouts=4, scale="none"))
    assert raw.tolist() == [[0.5, -0.5, 0.0, 0.0]]
    assert scaled[0, 0].item() == pytest.approx(0.5 / rewards.std(unbiased=False).item(), rel=1e-4)


def test_median_baseline_excludes_the_pivot() -> None:
    rewards = torch.tensor([[0.9, 0.1, 0.4]])
    advantages, keep = group_advantages(
        rewards, GRPOConfig(rollouts=3, baseline="median", scale="none")
    )
    assert keep.tolist() == [[True, True, False]]
    assert advantages[0].tolist() == pytest.approx([0.5, -0.3, 0.0])


def test_median_baseline_needs_odd_rollouts() -> None:
    with pytest.raises(RagkitError, match="odd"):
        GRPOConfig(rollouts=4, baseline="median")


def test_zero_variance_groups_drop_only_when_asked() -> None:
    rewards = torch.tensor([[0.3, 0.3], [1.0, 0.0]])
    _, dropped = group_advantages(rewards, GRPOConfig(rollouts=2))
    _, kept = group_advantages(rewards, GRPOConfig(rollouts=2, drop_zero_variance=False))
    assert dropped.tolist() == [[False, False], [True, True]]
    assert kept.all()


def test_difficulty_scaling_weighs_hard_groups_more() -> None:
    rewards = torch.tensor([[0.2, 0.0], [1.0, 0.8]])  # group 0 is hard, group 1 easy
    plain, _ = group_advantages(rewards, GRPOConfig(rollouts=2, scale="none"))
    scaled, _ = group_advantages(
        rewards, GRPOConfig(rollouts=2, scale="none", difficulty_alpha=1.0)
    )
    ratio_hard = scaled[0, 0] / plain[0, 0]
    ratio_easy = scaled[1, 0] / plain[1, 0]
    assert ratio_hard > 1.0 > ratio_easy


def _loss_gradient(clipping: str, ratio: float, advantage: float) -> float:
    log_prob = torch.tensor([[[0.0]]], requires_grad=True)
    old = torch.tensor([[[-torch.log(torch.tensor(ratio)).item()]]])
    config = GRPOConfig(rollouts=2, clipping=clipping, kl_coef=0.0)  # type: ignore[arg-type]
    loss, _ = policy_loss(
        log_prob,
        old,
        log_prob.detach(),
        torch.tensor([[advantage]]),
        torch.tensor([[True]]),
        torch.tensor([[True]]),
        config,
    )
    loss.backward()
    assert log_prob.grad is not None
    return float(log_prob.grad)


def test_conditional_clipping_binds_only_in_the_objective_raising_direction() -> None:
    # ratio above the band with a positive advantage: both modes stop the gradient
    assert _loss_gradient("conditional", 1.5, 1.0) == 0.0
    assert _loss_gradient("unconditional", 1.5, 1.0) == 0.0
    # ratio below the band with a positive advantage: PPO's min keeps pushing it back up,
    # unconditional clipping does not
    assert _loss_gradient("conditional", 0.5, 1.0) < 0.0
    assert _loss_gradient("unconditional", 0.5, 1.0) == 0.0


def test_kl_term_is_zero_at_the_reference_and_positive_away() -> None:
    logits = torch.randn(2, 3, LEVELS)
    sampled = sample_rollouts(logits, 4, generator=torch.Generator().manual_seed(0))
    current = rollout_log_probs(logits, sampled)
    keep = torch.ones(2, 4, dtype=torch.bool)
    valid = torch.ones(2, 3, dtype=torch.bool)
    zero = torch.zeros(2, 4)
    config = GRPOConfig(rollouts=4)
    _, at_reference = policy_loss(current, current, current, zero, keep, valid, config)
    _, away = policy_loss(current, current, current - 0.5, zero, keep, valid, config)
    assert at_reference["kl"] == pytest.approx(0.0, abs=1e-7)
    assert away["kl"] > 0.0


def test_rollouts_sample_each_candidate_from_its_own_distribution() -> None:
    logits = torch.full((1, 2, LEVELS), -1e4)
    logits[0, 0, 9] = 0.0
    logits[0, 1, 2] = 0.0
    sampled = sample_rollouts(logits, 5)
    assert sampled.shape == (1, 5, 2)
    assert sampled[0, :, 0].eq(9).all() and sampled[0, :, 1].eq(2).all()
