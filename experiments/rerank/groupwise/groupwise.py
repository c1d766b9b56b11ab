"""Reranking study: first stage vs pointwise vs groupwise SFT vs groupwise SFT + GRPO.

Protocol — **5 query-disjoint folds**: Cranfield and CISI have no training split, so each
collection's judged queries are split into 5 seeded folds; the models for fold ``f`` train on
the synthetic groups of both corpora (:mod:`ragkit.training.synthetic`, no judgment) plus the
judged groups (:mod:`ragkit.training.judged`) of every query *outside* fold ``f`` of both
collections, and score only fold ``f``'s queries. Every query is thus reranked by models that
never saw it or its judgments.

All variants share the frozen backbone (all-MiniLM-L6-v2), the data, the signals and the
interaction architecture; the pointwise peer scores each candidate alone (groups of one, no
z-scores within a group) and is trained with BCE. Reranked: the first stage's top 50 documents
(ragkit's hybrid search over an index of the corpus, each document as its best chunk).
``w`` mixes in the first stage's min-max score: reported at ``w = 0`` (model alone) and at the
``w`` chosen on the *other* collection (grid 0.0–0.9), each with the p-value of a paired t-test
of per-query nDCG@10 against the first stage (two-sided). Also: GRPO reward curves, the ablation
of GRPO's calibration term, and latency of ``Reranker.rank`` on 20 and 50 candidates (backbone
encoding included).

Usage:
    .venv/bin/python -m experiments.rerank.groupwise.groupwise [--index cranfield=DIR --index cisi=DIR] [--folds 5]
"""

from __future__ import annotations

import argparse
import copy
import logging
import random
import statistics
import time
from dataclasses import replace
from pathlib import Path

import ragkit  # noqa: F401  (thread policy before torch/faiss load: ragkit.threads)

# isort: split

import numpy as np
import torch
from rich.console import Console
from rich.table import Table

from benchmarks.common import BEIR, load_beir, paired_p, per_query, write_result
from benchmarks.common import metrics as common_metrics
from ragkit.index import Index
from ragkit.rerank.config import RerankerConfig
from ragkit.rerank.features import first_stage_prior, overlaps
from ragkit.rerank.model import GroupwiseReranker
from ragkit.rerank.reranker import Reranker
from ragkit.search.fusion import minmax
from ragkit.training.judged import candidate_list
from ragkit.training.synthetic import TrainingGroup
from ragkit.training.train import TrainConfig, Trainer, TrainResult

DATA = BEIR
HERE = Path(__file__).resolve().parent
DATASETS = ("cranfield", "cisi")
DEPTH = 50
GRID = [round(0.1 * i, 1) for i in range(10)]
VARIANTS = ("pointwise", "groupwise-sft", "groupwise-grpo", "groupwise-grpo-no-calibration")
log = logging.getLogger(__name__)


def fold_of(args: argparse.Namespace, judged: dict[str, list[str]]) -> dict[str, int]:
    """``dataset/query id`` → fold, seeded, folds balanced within each collection."""
    folds = {}
    for name, queries in judged.items():
        order = list(queries)
        random.Random(args.seed).shuffle(order)
        for position, query in enumerate(order):
            folds[f"{name}/{query}"] = position % args.folds
    return folds


def train_fold(
    trainer: Trainer, train: list[TrainingGroup], fold: int, grpo_steps: int
) -> tuple[dict[str, GroupwiseReranker], dict[str, list[float]]]:
    """Every variant for one fold (``train`` already excludes the fold's queries)."""
    config = trainer.config
    models, rewards = {}, {}
    for objective in ("pointwise", "groupwise"):
        torch.manual_seed(config.seed + fold)
        trainer.objective = objective
        trainer.model = GroupwiseReranker(config.reranker)
        trainer.supervised(train, TrainResult(config.output, len(train), 0))
        models["pointwise" if objective == "pointwise" else "groupwise-sft"] = trainer.model
    sft = models["groupwise-sft"]
    for name, grpo in (
        ("groupwise-grpo", config.grpo),
        ("groupwise-grpo-no-calibration", replace(config.grpo, calibration_weight=0.0)),
    ):
        trainer.model = copy.deepcopy(sft)
        result = TrainResult(config.output, len(train), 0)
        trainer.config = config.model_copy(update={"grpo_steps": grpo_steps})
        trainer.reinforce(train, [], result, grpo)
        models[name], rewards[name] = trainer.model, result.rewards
    trainer.config = config
    return models, rewards


def per_query_ndcg(ranked: dict[str, list[str]], qrels: dict) -> np.ndarray:
    """nDCG@10 of each query, in query-id order (paired across systems)."""
    return np.array(per_query(ranked, qrels)["ndcg_at_10"])


def metrics(ranked: dict[str, list[str]], qrels: dict, digits: int | None = None) -> dict:
    """Mean nDCG@10 and MRR@10 (``ragkit eval``'s, :func:`benchmarks.common.metrics`)."""
    means = common_metrics(ranked, qrels)
    return {
        name: means[name] if digits is None else round(means[name], digits)
        for name in ("ndcg_at_10", "mrr_at_10")
    }


def mixed(runs: dict, scores: dict, weight: float) -> dict[str, list[str]]:
    ranked = {}
    for query_id, candidates in runs.items():
        prior = minmax(np.array([s for _, _, s in candidates]))
        final = (1 - weight) * scores[query_id] + weight * prior
        ranked[query_id] = [candidates[i][0] for i in np.argsort(-final, kind="stable")]
    return ranked


def latency(model: GroupwiseReranker, runs: dict, queries: dict, size: int) -> float:
    reranker = Reranker(model)
    times = []
    for query_id in list(runs)[:15]:
        candidates = runs[query_id][:size]
        clock = time.perf_counter()
        reranker.rank(queries[query_id], [t for _, t, _ in candidates], [s for *_, s in candidates])
        times.append(time.perf_counter() - clock)
    return statistics.median(times[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--documents", type=int, default=700, help="per corpus, synthetic data")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--grpo-steps", type=int, default=100)
    parser.add_argument("--sft-epochs", type=int, default=1)
    parser.add_argument("--train-groups", type=int, default=None, help="cap per fold (checks)")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--work", type=Path, default=Path("/tmp/ragkit-rerank-bench"))
    parser.add_argument("--data", type=Path, default=DATA, help="folder with cranfield/ and cisi/")
    parser.add_argument(
        "--index", action="append", default=[], help="NAME=DIR: a kept first-stage index"
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    torch.set_num_threads(2)
    indexes = dict(pair.partition("=")[::2] for pair in args.index)
    root = args.work / "indexes"
    for name in DATASETS:  # the trainer builds missing first-stage indexes under its root
        if name in indexes:
            root.mkdir(parents=True, exist_ok=True)
            link = root / name
            if not link.exists():
                link.symlink_to(Path(indexes[name]).resolve())
    config = TrainConfig(
        corpora=[args.data / name for name in DATASETS] if args.documents else [],
        judged=[args.data / name for name in DATASETS],
        output=args.work / "models",
        index_root=root,
        max_documents=args.documents or None,
        validation_share=0.0,
        sft_epochs=args.sft_epochs,
        grpo_steps=args.grpo_steps,
        seed=args.seed,
        reranker=RerankerConfig(),
    )
    trainer = Trainer(
        config, progress=lambda stage, i, n: i % 100 == 0 and log.info("%s %d/%d", stage, i, n)
    )
    clock = time.perf_counter()
    groups, _ = trainer.build_data()
    log.info("%d groups (%.0f s)", len(groups), time.perf_counter() - clock)
    judgments = {name: load_beir(args.data / name) for name in DATASETS}
    folds = fold_of(args, {name: j.judged for name, j in judgments.items()})
    runs: dict[str, dict] = {}
    for name, judged in judgments.items():
        index = Index.open(root / name)
        runs[name] = {q: candidate_list(index, judged.queries[q], DEPTH) for q in judged.judged}
        index.close()
    scores: dict[str, dict[str, dict[str, np.ndarray]]] = {
        v: {n: {} for n in DATASETS} for v in VARIANTS
    }
    curves: dict[str, list[list[float]]] = {v: [] for v in VARIANTS[2:]}
    for fold in range(args.folds):
        train = [g for g in groups if g.kind != "judged" or folds[g.source] != fold]
        train = train[: args.train_groups]
        clock = time.perf_counter()
        models, rewards = train_fold(trainer, train, fold, args.grpo_steps)
        log.info("fold %d: %d groups, %.0f s", fold, len(train), time.perf_counter() - clock)
        for variant, reward in rewards.items():
            curves[variant].append(reward)
        for name, judged in judgments.items():
            for query_id, candidates in runs[name].items():
                if folds[f"{name}/{query_id}"] != fold:
                    continue
                query, texts = judged.queries[query_id], [t for _, t, _ in candidates]
                prior = first_stage_prior([s for *_, s in candidates], len(candidates))
                for variant, model in models.items():
                    scores[variant][name][query_id] = Reranker(
                        model, backbone=trainer.backbone
                    ).score_states(
                        trainer.queries.get([query]),
                        trainer.passages.get(texts),
                        overlaps(query, texts, "en"),
                        prior,
                    )
        final_models = models
    report: dict[str, object] = {
        "settings": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "protocol": f"{args.folds} query-disjoint folds per collection",
        "reward_curves": {
            v: [round(float(np.mean(s)), 4) for s in zip(*c, strict=False)]
            for v, c in curves.items()
        },
        "datasets": {},
    }
    grid = {
        v: {
            n: {w: metrics(mixed(runs[n], scores[v][n], w), judgments[n].qrels) for w in GRID}
            for n in DATASETS
        }
        for v in VARIANTS
    }
    table = Table(
        title=f"Reranking hybrid top-50, {args.folds} query-disjoint folds (nDCG@10 / MRR@10)"
    )
    table.add_column("system")
    for name in DATASETS:
        table.add_column(f"{name} alone")
        table.add_column(f"{name} mixed")
    first_row, first_ndcg = [], {}
    for name in DATASETS:
        first_ranked = {q: [d for d, _, _ in c] for q, c in runs[name].items()}
        first = metrics(first_ranked, judgments[name].qrels)
        first_ndcg[name] = per_query_ndcg(first_ranked, judgments[name].qrels)
        report["datasets"][name] = {"first_stage": first, "models": {}}
        first_row += [f"{first['ndcg_at_10']:.4f} / {first['mrr_at_10']:.4f}", "—"]
    table.add_row("first stage (hybrid)", *first_row)
    for variant in VARIANTS:
        cells = []
        for name in DATASETS:
            other = next(n for n in DATASETS if n != name)
            chosen = max(GRID, key=lambda w, v=variant: grid[v][other][w]["ndcg_at_10"])
            alone, tuned = grid[variant][name][0.0], grid[variant][name][chosen]
            qrels = judgments[name].qrels
            p_values = {
                f"p_{label}": paired_p(
                    per_query_ndcg(mixed(runs[name], scores[variant][name], w), qrels),
                    first_ndcg[name],
                )
                for label, w in (("w0", 0.0), ("tuned", chosen))
            }
            report["datasets"][name]["models"][variant] = {
                "w0": alone,
                "w_other": chosen,
                "tuned": tuned,
                **p_values,
            }
            alone_cell = f"{alone['ndcg_at_10']:.4f} / {alone['mrr_at_10']:.4f}"
            tuned_cell = f"{tuned['ndcg_at_10']:.4f} / {tuned['mrr_at_10']:.4f}"
            cells += [
                f"{alone_cell} (p={p_values['p_w0']:.2f})",
                f"{tuned_cell} (w={chosen}, p={p_values['p_tuned']:.2f})",
            ]
        table.add_row(variant, *cells)
    queries = judgments["cranfield"].queries
    shipped = final_models["groupwise-grpo"]
    report["latency_seconds"] = {
        f"rank_{n}": latency(shipped, runs["cranfield"], queries, n) for n in (20, 50)
    }
    write_result("groupwise", report, HERE, indent=1)
    console = Console(width=180)
    console.print(table)
    console.print(f"GRPO mean reward per step (over folds): {report['reward_curves']}")
    console.print(f"latency (median, encoding included): {report['latency_seconds']}")


if __name__ == "__main__":
    main()
