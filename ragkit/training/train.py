"""Training the groupwise reranker: synthetic + judged groups → SFT → GRPO; a pointwise peer.

``train_reranker(TrainConfig(corpora=[...], judged=[...]))`` builds synthetic groups from the
corpora (:mod:`ragkit.training.synthetic`, no labels) and groups from the judged queries of BEIR
folders (:mod:`ragkit.training.judged`, over a hybrid index of each folder's corpus), holds out
``validation_share`` of them (judged ones by query), warm-starts the policy by supervised
fine-tuning on the levels (soft-label cross-entropy per candidate plus a ListNet term over each
group), then runs GRPO (:mod:`ragkit.training.grpo`) against the frozen warm-start policy, its
rewards from the judged groups when there are any. It saves ``model.safetensors`` +
``config.json`` + ``training.json`` (reward and validation curves) + ``samples.json`` into
``output``. The backbone stays frozen,
so its states are computed once per text. Seeded and single-process (2 threads by default).

Example:
    >>> config = TrainConfig(corpora=[Path("corpus.jsonl")], output=Path("out"))
    >>> config.grpo.rollouts, config.sft_epochs
    (8, 1)
"""

from __future__ import annotations

import copy
import json
import logging
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict, Field

from ragkit.errors import RagkitError
from ragkit.evaluate import Judgments, load_judgments
from ragkit.index import Index
from ragkit.rerank.backbone import Backbone, StateBank
from ragkit.rerank.config import RerankerConfig
from ragkit.rerank.model import GroupwiseReranker, expected_score
from ragkit.rerank.reranker import save_model
from ragkit.training.batches import GroupBatch, make_batch, soft_targets
from ragkit.training.grpo import (
    GRPOConfig,
    group_advantages,
    policy_loss,
    rollout_log_probs,
    sample_rollouts,
)
from ragkit.training.headings import heading_splits
from ragkit.training.judged import first_stage_index, judged_groups
from ragkit.training.rewards import ndcg_at_k, rollout_rewards
from ragkit.training.synthetic import TrainingGroup, build_groups, read_beir_corpus

log = logging.getLogger(__name__)
Progress = Callable[[str, int, int], None]


class TrainConfig(BaseModel):
    """What to train on and for how long (``objective``: ``groupwise`` or ``pointwise``)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    corpora: list[Path] = Field(default_factory=list)
    judged: list[Path] = Field(default_factory=list)  # BEIR folders with queries + qrels
    headings: list[str] = Field(default_factory=list)  # languages of heading→passage groups
    output: Path
    reranker: RerankerConfig = Field(default_factory=RerankerConfig)
    objective: str = Field(default="groupwise", pattern="^(groupwise|pointwise)$")
    language: str = "en"
    seed: int = 13
    validation_share: float = Field(default=0.1, ge=0.0, lt=1.0)
    max_groups: int | None = Field(default=None, ge=1)
    max_documents: int | None = Field(default=None, ge=2)  # per corpus, a seeded sample
    judged_depth: int = Field(default=50, ge=2)
    judged_passes: int = Field(default=2, ge=1)
    index_root: Path | None = None  # first-stage indexes of judged sets (default output/…)
    batch_groups: int = Field(default=8, ge=1)
    learning_rate: float = Field(default=3e-4, gt=0)
    backbone_learning_rate: float = Field(default=3e-5, gt=0)  # tuned backbone layers
    sft_epochs: int = Field(default=1, ge=0)
    listnet_weight: float = Field(default=1.0, ge=0)
    grpo_steps: int = Field(default=100, ge=0)
    grpo_learning_rate: float = Field(default=5e-5, gt=0)
    grpo: GRPOConfig = Field(default_factory=GRPOConfig)
    threads: int = Field(default=2, ge=1)
    evaluate_every: int = Field(default=20, ge=1)


@dataclass
class TrainResult:
    """Where the model went and what training measured."""

    output: Path
    groups: int
    validation_groups: int
    seconds: dict[str, float] = field(default_factory=dict)
    sft_loss: list[float] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    validation: list[tuple[str, int, float]] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["output"] = str(self.output)
        return data


class Trainer:
    """State banks, data and the policy being trained (one instance per run)."""

    def __init__(self, config: TrainConfig, progress: Progress | None = None) -> None:
        self.config = config
        self.progress = progress
        torch.manual_seed(config.seed)
        torch.set_num_threads(config.threads)
        self.backbone = Backbone(config.reranker.backbone)
        if self.backbone.dimension != config.reranker.backbone_dim:  # e.g. a 768-d backbone
            reranker = config.reranker.model_copy(update={"backbone_dim": self.backbone.dimension})
            config = self.config = config.model_copy(update={"reranker": reranker})
        shape = config.reranker
        tuned = shape.tuned_layers
        self.passages = StateBank(self.backbone, shape.doc_tokens, "passage", tuned)
        self.queries = StateBank(self.backbone, shape.query_tokens, "query", tuned)
        upper = self.backbone.upper_layers(tuned) if tuned else None
        self.model = GroupwiseReranker(shape, upper)
        self.objective = config.objective

    def build_data(self) -> tuple[list[TrainingGroup], list[TrainingGroup]]:
        """Synthetic, heading and judged groups, shuffled and split into train / validation.

        Synthetic groups are held out by group, heading groups by corpus (the held-out corpora
        of :mod:`ragkit.training.headings`), judged ones by query (a held-out query's groups
        are all held out).
        """
        if not (self.config.corpora or self.config.judged or self.config.headings):
            raise RagkitError("reranker training needs --corpus, --headings or --judged data")
        groups = self.synthetic_groups()
        held = round(len(groups) * self.config.validation_share)
        train, validation = groups[held:], groups[:held]
        if self.config.headings:
            headed, held_out = self.heading_groups()
            train += headed
            validation += held_out
        for dataset in self.config.judged:
            judgments = load_judgments(dataset)
            queries = list(judgments.judged)
            random.Random(self.config.seed).shuffle(queries)
            held = round(len(queries) * self.config.validation_share)
            index = self.first_stage_index(judgments)
            for part, chosen in ((validation, queries[:held]), (train, queries[held:])):
                part += judged_groups(
                    index,
                    judgments,
                    chosen,
                    self.config.reranker.group_size,
                    self.config.judged_depth,
                    self.config.judged_passes,
                    self.config.seed,
                )
            index.close()
            log.info("%s: %d judged queries → groups", dataset, len(queries))
        if not train:
            raise RagkitError(
                "no training groups could be built from the given data (too few documents or "
                "passages for groups of their size; see the warnings above)"
            )
        random.Random(self.config.seed).shuffle(train)
        self.passages.add([p for g in (*train, *validation) for p in (*g.passages, *g.anchors)])
        return train, validation

    def heading_groups(self) -> tuple[list[TrainingGroup], list[TrainingGroup]]:
        """Heading groups of the configured languages (seeded sample of ``max_groups``), and
        held-out ones: ``validation_share`` as many as there are training groups."""
        size = self.config.reranker.group_size
        train, held_out = heading_splits(self.config.headings, self.backbone, size)
        rng = random.Random(self.config.seed)
        rng.shuffle(train)
        rng.shuffle(held_out)
        train = train[: self.config.max_groups]
        log.info("heading groups: %d to train, %d held out", len(train), len(held_out))
        return train, held_out[: max(1, round(len(train) * self.config.validation_share))]

    def first_stage_index(self, judgments: Judgments) -> Index:
        """A hybrid index of the judged collection's corpus (built on first use, then kept)."""
        root = self.config.index_root or self.config.output / "first-stage"
        return first_stage_index(root / judgments.dataset, judgments, self.config.reranker.backbone)

    def synthetic_groups(self) -> list[TrainingGroup]:
        """Synthetic groups from every corpus (seeded, shuffled, cut to ``max_groups``)."""
        groups: list[TrainingGroup] = []
        for number, corpus in enumerate(self.config.corpora):
            documents = read_beir_corpus(corpus)
            if self.config.max_documents and len(documents) > self.config.max_documents:
                sample = random.Random(self.config.seed + number)
                documents = sample.sample(documents, self.config.max_documents)
            log.info("%s: %d documents → synthetic groups", corpus, len(documents))
            groups += build_groups(
                documents,
                self.passages,
                self.queries,
                self.config.reranker.group_size,
                seed=self.config.seed + number,
                language=self.config.language,
            )
        random.Random(self.config.seed).shuffle(groups)
        return groups[: self.config.max_groups]

    def optimizer(self, learning_rate: float) -> torch.optim.AdamW:
        """AdamW over the model; tuned backbone layers learn at the backbone's rate, scaled
        like ``learning_rate`` is to the run's SFT rate."""
        upper = self.model.upper
        tuned = {id(p) for p in upper.parameters()} if upper is not None else set()
        own = [p for p in self.model.parameters() if id(p) not in tuned]
        groups: list[dict[str, Any]] = [{"params": own, "lr": learning_rate}]
        if upper is not None:
            scale = learning_rate / self.config.learning_rate
            rate = self.config.backbone_learning_rate * scale
            groups.append({"params": list(upper.parameters()), "lr": rate})
        return torch.optim.AdamW(groups)

    def batch(self, groups: Sequence[TrainingGroup]) -> GroupBatch:
        batch = make_batch(
            groups, self.queries, self.passages, self.config.language, self.model.upper is not None
        )
        return batch.singles() if self.objective == "pointwise" else batch

    def batches(self, groups: Sequence[TrainingGroup], seed: int) -> list[Sequence[TrainingGroup]]:
        order = list(groups)
        random.Random(seed).shuffle(order)
        size = self.config.batch_groups
        return [order[i : i + size] for i in range(0, len(order), size)]

    @torch.no_grad()
    def validate(self, groups: Sequence[TrainingGroup]) -> float:
        """Mean nDCG@10 of ranking held-out groups by expected score against teacher levels."""
        if not groups:
            return 0.0
        self.model.eval()
        total = 0.0
        for part in self.batches(groups, 0):
            batch = make_batch(
                part,
                self.queries,
                self.passages,
                self.config.language,
                self.model.upper is not None,
            )
            if self.objective == "pointwise":
                scores = expected_score(self.model(*batch.singles().inputs())).view_as(batch.labels)
            else:
                scores = expected_score(self.model(*batch.inputs()))
            ndcg = ndcg_at_k(scores, batch.labels, batch.valid, self.config.reranker.levels)
            total += float(ndcg.sum())
        return total / len(groups)

    def supervised(self, train: Sequence[TrainingGroup], result: TrainResult) -> None:
        """Warm start: soft-label CE per candidate + ListNet per group (BCE for pointwise)."""
        levels = self.config.reranker.levels
        optimizer = self.optimizer(self.config.learning_rate)
        plan = [b for e in range(self.config.sft_epochs) for b in self.batches(train, e + 1)]
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda step: 1.0 - step / max(len(plan), 1)
        )
        for step, part in enumerate(plan, start=1):
            self.model.train()
            batch = self.batch(part)
            logits = self.model(*batch.inputs())
            if self.objective == "pointwise":
                target = batch.labels.float() / (levels - 1)
                loss = torch.nn.functional.binary_cross_entropy(
                    expected_score(logits).clamp(1e-6, 1 - 1e-6), target
                )
            else:
                targets = soft_targets(batch.labels, levels)
                loss = -(targets * logits.log_softmax(-1)).sum(-1).mean()
                listnet = torch.softmax(batch.labels.float() / 2.0, -1)
                predicted = torch.log_softmax(expected_score(logits) * 20.0, -1)
                loss = loss + self.config.listnet_weight * -(listnet * predicted).sum(-1).mean()
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            result.sft_loss.append(round(loss.item(), 5))
            if self.progress:
                self.progress("sft", step, len(plan))

    def reinforce(
        self,
        train: Sequence[TrainingGroup],
        validation: Sequence[TrainingGroup],
        result: TrainResult,
        grpo: GRPOConfig | None = None,
    ) -> None:
        """GRPO against the frozen warm-start policy (dropout off: ratios compare like with like).

        Rewards come from the judged groups when there are any (real labels), else from the
        synthetic ones. ``grpo`` overrides the run's :class:`GRPOConfig` (the benchmark trains
        variants).
        """
        train = [g for g in train if g.kind == "judged"] or train
        grpo = grpo or self.config.grpo
        levels = self.config.reranker.levels
        reference = copy.deepcopy(self.model).eval()
        optimizer = self.optimizer(self.config.grpo_learning_rate)
        generator = torch.Generator().manual_seed(self.config.seed)
        plan = [b for e in range(100) for b in self.batches(train, 100 + e)]
        for step in range(1, self.config.grpo_steps + 1):
            self.model.eval()
            batch = self.batch(plan[(step - 1) % len(plan)])
            with torch.no_grad():
                logits = self.model(*batch.inputs())
                reference_logits = reference(*batch.inputs())
                sampled = sample_rollouts(logits, grpo.rollouts, grpo.temperature, generator)
                rewards = rollout_rewards(
                    sampled,
                    batch.labels,
                    expected_score(logits),
                    batch.valid,
                    levels,
                    grpo.ndcg_weight,
                    grpo.calibration_weight,
                )
                advantages, keep = group_advantages(rewards, grpo)
                old = rollout_log_probs(logits, sampled)
                ref = rollout_log_probs(reference_logits, sampled)
            result.rewards.append(round(float(rewards.mean()), 5))
            if keep.any():
                for _ in range(grpo.inner_epochs):
                    current = rollout_log_probs(self.model(*batch.inputs()), sampled)
                    loss, _ = policy_loss(current, old, ref, advantages, keep, batch.valid, grpo)
                    optimizer.zero_grad()
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                    optimizer.step()
            if step % self.config.evaluate_every == 0:
                result.validation.append(("grpo", step, round(self.validate(validation), 5)))
            if self.progress:
                self.progress("grpo", step, self.config.grpo_steps)


def train_reranker(config: TrainConfig, progress: Progress | None = None) -> TrainResult:
    """Run the whole recipe and save the model, its card and its curves into ``config.output``."""
    clock = time.perf_counter()
    trainer = Trainer(config, progress)
    train, validation = trainer.build_data()
    result = TrainResult(config.output, len(train), len(validation))
    result.seconds["data"] = time.perf_counter() - clock
    result.validation.append(("init", 0, round(trainer.validate(validation), 5)))
    clock = time.perf_counter()
    trainer.supervised(train, result)
    result.seconds["sft"] = time.perf_counter() - clock
    result.validation.append(("sft", 0, round(trainer.validate(validation), 5)))
    if config.objective == "groupwise" and config.grpo_steps:
        clock = time.perf_counter()
        trainer.reinforce(train, validation, result)
        result.seconds["grpo"] = time.perf_counter() - clock
    save_model(trainer.model, config.output)
    kinds = Counter(g.kind for g in train)
    levels = Counter(level for g in train for level in g.labels)
    record = {
        "config": json.loads(config.model_dump_json()),
        "data": {"kinds": dict(kinds), "levels": dict(sorted(levels.items()))},
        **result.as_dict(),
    }
    (config.output / "training.json").write_text(json.dumps(record, indent=1) + "\n")
    (config.output / "samples.json").write_text(
        json.dumps([g.as_dict() for g in validation[:20]], indent=1, ensure_ascii=False) + "\n"
    )
    return result
