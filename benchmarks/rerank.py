"""Reranking benchmark: first stage vs pointwise vs groupwise SFT vs groupwise SFT + GRPO.

Training data: synthetic groups from the Cranfield and CISI **corpora only** (no real query
or judgment is seen in training; :mod:`ragkit.rerank.synthetic`). All models share the frozen
backbone (all-MiniLM-L6-v2), the same groups and the same interaction architecture; the
pointwise peer scores each candidate alone (groups of one) and is trained with BCE.

Evaluation: each collection's real queries and judgments; the first stage is ragkit's hybrid
search (BM25 + MiniLM, RRF) over an index of the corpus, its top-50 documents reranked.
``w`` mixes in the first-stage score: reported at ``w = 0`` (model alone) and at the ``w``
chosen on the *other* collection (grid 0.0–0.9), never on the reported one.

Latency: ``Reranker.rank`` on 20 and 50 candidates per query, backbone encoding included.

Usage:
    .venv/bin/python benchmarks/rerank.py [--documents 700] [--group-size 8] [--grpo-steps 30]
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import statistics
import time
from pathlib import Path

import numpy as np
import torch
from rich.console import Console
from rich.table import Table

from ragkit.evaluate import load_qrels, load_queries, mrr_at_k, ndcg_at_k
from ragkit.index import Index
from ragkit.rerank.backbone import StateBank
from ragkit.rerank.config import RerankerConfig
from ragkit.rerank.features import overlaps
from ragkit.rerank.grpo import GRPOConfig
from ragkit.rerank.model import GroupwiseReranker
from ragkit.rerank.reranker import Reranker, load_model, minmax, save_model
from ragkit.rerank.train import TrainConfig, Trainer, TrainResult

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "beir"
RESULTS = Path(__file__).parent / "results"
DATASETS = ("cranfield", "cisi")
DEPTH = 50
GRID = [round(0.1 * i, 1) for i in range(10)]
log = logging.getLogger("benchmarks.rerank")


def train_variants(args: argparse.Namespace, out: Path) -> dict[str, dict]:
    """Train every variant on one shared set of synthetic groups; return their curves."""
    config = TrainConfig(
        corpora=[DATA / name for name in DATASETS],
        output=out / "groupwise-grpo",
        max_groups=args.sft_groups,
        max_documents=args.documents,
        reranker=RerankerConfig(group_size=args.group_size),
        grpo_steps=args.grpo_steps,
        seed=args.seed,
    )
    trainer = Trainer(
        config, progress=lambda stage, i, n: i % 20 == 0 and log.info("%s %d/%d", stage, i, n)
    )
    clock = time.perf_counter()
    train, validation = trainer.build_data()
    log.info(
        "synthetic groups: %d train, %d validation (%.0f s)",
        len(train),
        len(validation),
        time.perf_counter() - clock,
    )
    curves: dict[str, dict] = {}

    def run(
        name: str, objective: str, start: GroupwiseReranker | None, grpo: GRPOConfig | None
    ) -> None:
        if args.resume and (out / name / "model.safetensors").exists():
            log.info("%s: kept from an earlier run (--resume)", name)
            return
        trainer.objective = objective
        trainer.model = (
            copy.deepcopy(start) if start is not None else GroupwiseReranker(config.reranker)
        )
        result = TrainResult(out / name, len(train), len(validation))
        clock = time.perf_counter()
        if grpo is None:
            trainer.supervised(train, result)
        else:
            trainer.reinforce(train, validation, result, grpo)
        result.seconds["train"] = time.perf_counter() - clock
        result.validation.append(("final", 0, trainer.validate(validation)))
        save_model(trainer.model, out / name)
        curves[name] = result.as_dict()
        log.info(
            "%s: %.0f s, synthetic validation nDCG@10 %.4f",
            name,
            result.seconds["train"],
            result.validation[-1][2],
        )

    torch.manual_seed(args.seed)
    run("pointwise", "pointwise", None, None)
    torch.manual_seed(args.seed)
    run("groupwise-sft", "groupwise", None, None)
    sft = load_model(out / "groupwise-sft")
    run("groupwise-grpo", "groupwise", sft, config.grpo)
    run("groupwise-grpo-no-calibration", "groupwise", sft, GRPOConfig(calibration_weight=0.0))
    if args.all_variants:
        run(
            "groupwise-drgrpo-median",
            "groupwise",
            sft,
            GRPOConfig(rollouts=7, baseline="median", scale="none"),
        )
    return curves


def first_stage(
    name: str, index_root: Path
) -> tuple[dict[str, list[tuple[str, str, float]]], dict]:
    """Hybrid top-50 documents per judged query: (doc id, text, first-stage score)."""
    dataset = DATA / name
    qrels = load_qrels(dataset / "qrels" / "test.tsv")
    queries = load_queries(dataset / "queries.jsonl")
    folder = index_root / name
    index = Index.open(folder, create=True, model="all-minilm-l6-v2")
    if index.info()["documents"] == 0:
        index.ingest([dataset / "corpus.jsonl"])
    runs = {}
    for query_id in (q for q in queries if q in qrels):
        seen: dict[str, tuple[str, str, float]] = {}
        for hit in index.search(queries[query_id], k=DEPTH * 3, mode="hybrid"):
            seen.setdefault(hit.document_id, (hit.document_id, hit.text, hit.score))
        runs[query_id] = list(seen.values())[:DEPTH]
    return runs, {"queries": queries, "qrels": qrels}


def metrics(ranked: dict[str, list[str]], qrels: dict) -> dict[str, float]:
    return {
        "ndcg_at_10": float(np.mean([ndcg_at_k(r, qrels[q]) for q, r in ranked.items()])),
        "mrr_at_10": float(np.mean([mrr_at_k(r, qrels[q]) for q, r in ranked.items()])),
    }


def rerank_scores(
    model: GroupwiseReranker, runs: dict, queries: dict, banks: tuple[StateBank, StateBank]
) -> dict[str, np.ndarray]:
    reranker = Reranker(model, backbone=banks[0].backbone)
    passages, query_bank = banks
    scores = {}
    for query_id, candidates in runs.items():
        texts = [text for _, text, _ in candidates]
        scores[query_id] = reranker.score_states(
            query_bank.get([queries[query_id]]),
            passages.get(texts),
            overlaps(queries[query_id], texts, "en"),
        )
    return scores


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
        texts = [text for _, text, _ in runs[query_id][:size]]
        clock = time.perf_counter()
        reranker.rank(queries[query_id], texts)
        times.append(time.perf_counter() - clock)
    return statistics.median(times[1:])


def main() -> None:
    global DATA
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sft-groups", type=int, default=None)
    parser.add_argument("--documents", type=int, default=700, help="per corpus, for training")
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--grpo-steps", type=int, default=30)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--work", type=Path, default=Path("/tmp/ragkit-rerank-bench"))
    parser.add_argument("--data", type=Path, default=DATA, help="folder with cranfield/ and cisi/")
    parser.add_argument("--all-variants", action="store_true")
    parser.add_argument("--resume", action="store_true", help="keep variants already trained")
    parser.add_argument("--skip-training", action="store_true", help="reuse models in --work")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    DATA = args.data
    torch.set_num_threads(2)
    models_dir = args.work / "models"
    curves = {} if args.skip_training else train_variants(args, models_dir)
    variants = sorted(p.name for p in models_dir.iterdir() if (p / "model.safetensors").exists())
    models = {name: load_model(models_dir / name) for name in variants}
    backbone_owner = Trainer(TrainConfig(corpora=[], output=args.work))
    banks = (backbone_owner.passages, backbone_owner.queries)
    per_set: dict[str, dict] = {}
    for name in DATASETS:
        runs, data = first_stage(name, args.work / "indexes")
        ranked_first = {q: [d for d, _, _ in c] for q, c in runs.items()}
        scores = {v: rerank_scores(m, runs, data["queries"], banks) for v, m in models.items()}
        grid = {
            v: {w: metrics(mixed(runs, s, w), data["qrels"])["ndcg_at_10"] for w in GRID}
            for v, s in scores.items()
        }
        per_set[name] = {
            "runs": runs,
            "data": data,
            "scores": scores,
            "grid": grid,
            "first": metrics(ranked_first, data["qrels"]),
        }
    report: dict[str, object] = {
        "settings": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "training": curves,
        "datasets": {},
    }
    table = Table(title="Reranking hybrid top-50 (nDCG@10 / MRR@10)")
    table.add_column("system")
    for name in DATASETS:
        table.add_column(f"{name} w=0")
        table.add_column(f"{name} w*")
    rows: dict[str, list[str]] = {"first stage (hybrid RRF)": []}
    for name in DATASETS:
        other = next(n for n in DATASETS if n != name)
        entry = per_set[name]
        result = {"first_stage": entry["first"], "models": {}}
        first = entry["first"]
        rows["first stage (hybrid RRF)"] += [
            f"{first['ndcg_at_10']:.3f} / {first['mrr_at_10']:.3f}",
            "—",
        ]
        for variant in models:
            chosen = max(GRID, key=lambda w, v=variant: per_set[other]["grid"][v][w])
            alone = metrics(
                mixed(entry["runs"], entry["scores"][variant], 0.0), entry["data"]["qrels"]
            )
            tuned = metrics(
                mixed(entry["runs"], entry["scores"][variant], chosen), entry["data"]["qrels"]
            )
            result["models"][variant] = {
                "w0": alone,
                "w_other": chosen,
                "tuned": tuned,
                "grid": entry["grid"][variant],
            }
            rows.setdefault(variant, []).extend(
                [
                    f"{alone['ndcg_at_10']:.3f} / {alone['mrr_at_10']:.3f}",
                    f"{tuned['ndcg_at_10']:.3f} / {tuned['mrr_at_10']:.3f} (w={chosen})",
                ]
            )
        report["datasets"][name] = result
    for system, cells in rows.items():
        table.add_row(system, *cells)
    runs = per_set["cranfield"]["runs"]
    queries = per_set["cranfield"]["data"]["queries"]
    shipped = models.get("groupwise-grpo") or next(iter(models.values()))
    report["latency_seconds"] = {f"rank_{n}": latency(shipped, runs, queries, n) for n in (20, 50)}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "rerank.json").write_text(json.dumps(report, indent=1) + "\n")
    console = Console()
    console.print(table)
    console.print(f"latency (median, encoding included): {report['latency_seconds']}")


if __name__ == "__main__":
    main()
