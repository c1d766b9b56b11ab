"""Does fine-tuning the whole backbone on the judged queries make a reranker worth turning on?

The groupwise reranker trains layers over a frozen (or top-two-layer tuned) all-MiniLM-L6-v2.
This study asks the blunter question: with every layer of the backbone trained on the
judged queries themselves, in the two shapes rerankers take elsewhere, how far above the first
stage does a reranker get on Cranfield and CISI?

* ``bi-encoder, bundled``: cosine of the mean-pooled backbone vectors of the query and of each
  candidate's best chunk (no training; the starting point of the next row);
* ``bi-encoder, fine-tuned``: all six layers trained with a listwise softmax over groups of one
  judged-relevant and seven judged-irrelevant candidates (cosine / 0.05);
* ``cross-encoder, fine-tuned``: the backbone reads query and chunk together (one sequence)
  and a new linear head scores it; same groups and loss, the head and pooler at a higher
  learning rate (they start from random weights);
* ``bi-encoder, LoRA``: the bi-encoder with the backbone frozen and rank-8 LoRA adapters
  (``peft``, installed by ``make bench-install``) on every attention and feed-forward
  projection of all six layers, at LoRA's customary learning rate 2e-4; same groups and loss.

Candidates: every judged query's hybrid top 50 documents (each as its best chunk), from an index
kept by ``ragkit eval DATASET --mode hybrid --keep-index INDEX``. Queries are split into
``--folds`` query-disjoint folds per collection; the model for fold *f* trains on the judged
queries outside fold *f* of **both** collections and scores only fold *f*'s lists. Each
collection's "mixed" row adds ``w · minmax(first stage)`` to ``(1 − w) · minmax(model)`` with
``w`` chosen on the *other* collection (grid 0–0.9). ``p``: two-sided paired t-test of per-query
nDCG@10 against the first stage.

Run (from the repository root; about 45 minutes on 2 cores for two folds, plus 15 for LoRA)::

    .venv/bin/python -m experiments.rerank.finetune.finetune cranfield=IDX1 cisi=IDX2
    .venv/bin/python -m experiments.rerank.finetune.finetune cranfield=IDX1 cisi=IDX2 \
        --variants lora --out experiments/rerank/finetune/finetune_lora.json

Writes ``experiments/rerank/finetune/finetune.json`` (or ``--out``) and prints a table.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import ragkit  # noqa: F401  (thread policy before torch/faiss load: ragkit.threads)

# isort: split

import numpy as np
import torch
from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer

from benchmarks.common import load_beir, write_result
from experiments.rerank.headroom.headroom import evaluate, print_rows  # metrics, p and table
from ragkit.embed.models import model_spec, quiet_loading
from ragkit.index import Index
from ragkit.search.fusion import minmax
from ragkit.training.judged import candidate_list

RESULT = Path(__file__).resolve().parent / "finetune.json"
DEPTH = 50
GROUP = 8  # one judged-relevant candidate and seven judged-irrelevant ones
GRID = [round(0.1 * i, 1) for i in range(10)]
Scorer = Callable[[str, list[str]], list[float]]


@dataclass
class QueryList:
    """One judged query's first-stage top ``DEPTH``: document ids, best chunks, scores."""

    collection: str
    query_id: str
    query: str
    doc_ids: list[str]
    texts: list[str]
    first_stage: np.ndarray
    grades: dict[str, int]


def query_lists(name: str, folder: Path) -> list[QueryList]:
    judgments = load_beir(name)
    index = Index.open(folder)
    lists = []
    for query_id in judgments.judged:
        query = judgments.queries[query_id]
        candidates = candidate_list(index, query, DEPTH)
        lists.append(
            QueryList(
                name,
                query_id,
                query,
                [d for d, _, _ in candidates],
                [t for _, t, _ in candidates],
                np.array([s for _, _, s in candidates]),
                judgments.qrels[query_id],
            )
        )
    index.close()
    return lists


def training_groups(lists: list[QueryList], per_query: int, seed: int) -> list[QueryList]:
    """Up to ``per_query`` groups per query: a judged-relevant candidate first, then four
    judged-irrelevant ones from the first stage's top 15 and three from the rest."""
    rng = random.Random(seed)
    groups = []
    for item in lists:
        relevant = [i for i, d in enumerate(item.doc_ids) if item.grades.get(d, 0) > 0]
        others = [i for i, d in enumerate(item.doc_ids) if item.grades.get(d, 0) <= 0]
        if not relevant or len(others) < GROUP - 1:
            continue
        rng.shuffle(relevant)
        for positive in relevant[:per_query]:
            top = [i for i in others if i < 15]
            negatives = rng.sample(top, min(4, len(top)))
            rest = [i for i in others if i not in negatives]
            negatives += rng.sample(rest, GROUP - 1 - len(negatives))
            members = [positive, *negatives]
            groups.append(
                QueryList(
                    item.collection,
                    item.query_id,
                    item.query,
                    [item.doc_ids[i] for i in members],
                    [item.texts[i] for i in members],
                    item.first_stage[members],
                    item.grades,
                )
            )
    rng.shuffle(groups)
    return groups


class Encoder:
    """A backbone read as a bi-encoder (``cross=False``) or a cross-encoder."""

    def __init__(self, path: str, cross: bool, max_length: int, lora_rank: int = 0) -> None:
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.cross = cross
        self.max_length = max_length
        with quiet_loading():
            self.model = (
                AutoModelForSequenceClassification.from_pretrained(path, num_labels=1)
                if cross
                else AutoModel.from_pretrained(path)
            )
        if lora_rank:
            from peft import LoraConfig, get_peft_model

            adapters = LoraConfig(
                r=lora_rank,
                lora_alpha=2 * lora_rank,
                lora_dropout=0.1,
                target_modules=["query", "key", "value", "dense"],
            )
            self.model = get_peft_model(self.model, adapters)

    def _pooled(self, texts: list[str], max_length: int) -> torch.Tensor:
        batch = self.tokenizer(
            texts, truncation=True, max_length=max_length, padding=True, return_tensors="pt"
        )
        hidden = self.model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        return torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1)

    def logits(self, query: str, texts: list[str]) -> torch.Tensor:
        if self.cross:
            batch = self.tokenizer(
                [query] * len(texts),
                texts,
                truncation="longest_first",
                max_length=self.max_length,
                padding=True,
                return_tensors="pt",
            )
            return self.model(**batch).logits.view(-1)
        return (self._pooled(texts, self.max_length) @ self._pooled([query], 64)[0]) / 0.05

    def train(self, groups: list[QueryList], epochs: int, rate: float, head_rate: float) -> None:
        """Listwise softmax cross-entropy (the relevant candidate first), two groups a step,
        linear warm-up over a tenth of the steps then linear decay."""
        named = [(n, p) for n, p in self.model.named_parameters() if p.requires_grad]
        head = [p for n, p in named if n.startswith(("classifier", "bert.pooler"))]
        body = [p for n, p in named if not n.startswith(("classifier", "bert.pooler"))]
        optimizer = torch.optim.AdamW(
            [{"params": body, "lr": rate}, {"params": head, "lr": head_rate}], weight_decay=0.01
        )
        steps = max(1, epochs * len(groups) // 2)
        warmup = 0.1 * steps + 1
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, 1 - s / steps)
        )
        self.model.train()
        started, losses = time.perf_counter(), []
        for _ in range(epochs):
            for start in range(0, len(groups) - 1, 2):
                logits = torch.stack(
                    [self.logits(g.query, g.texts) for g in groups[start : start + 2]]
                )
                loss = torch.nn.functional.cross_entropy(logits, torch.zeros(2, dtype=torch.long))
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                optimizer.step()
                schedule.step()
                optimizer.zero_grad()
                losses.append(loss.item())
                if len(losses) % 100 == 0:
                    print(
                        f"  step {len(losses)}/{steps}: loss {np.mean(losses[-100:]):.3f}"
                        f" ({time.perf_counter() - started:.0f} s)",
                        flush=True,
                    )
        self.model.eval()

    @torch.no_grad()
    def scores(self, item: QueryList) -> np.ndarray:
        return np.concatenate(
            [self.logits(item.query, item.texts[s : s + 25]).numpy() for s in range(0, DEPTH, 25)]
        )


def fold_scores(
    lists: list[QueryList], folds: int, make: Callable[[], Encoder], train: Callable[..., None]
) -> dict[tuple[str, str], np.ndarray]:
    """Each list's scores from the model trained on the other folds (of every collection)."""
    rng = np.random.default_rng(0)
    fold_of: dict[tuple[str, str], int] = {}
    for name in dict.fromkeys(item.collection for item in lists):
        members = [item for item in lists if item.collection == name]
        for position, index in enumerate(rng.permutation(len(members))):
            fold_of[(name, members[index].query_id)] = position % folds
    scores = {}
    for fold in range(folds):
        encoder = make()
        outside = [item for item in lists if fold_of[(item.collection, item.query_id)] != fold]
        train(encoder, training_groups(outside, 4, fold))
        started = time.perf_counter()
        inside = [item for item in lists if fold_of[(item.collection, item.query_id)] == fold]
        for item in inside:
            scores[(item.collection, item.query_id)] = encoder.scores(item)
        print(f"fold {fold}: scored {len(inside)} lists in {time.perf_counter() - started:.0f} s")
    return scores


def mix(scores: dict[tuple[str, str], np.ndarray], w: float) -> Callable[[QueryList], np.ndarray]:
    return lambda item: (
        (1 - w) * minmax(scores[(item.collection, item.query_id)]) + w * minmax(item.first_stage)
    )


def alone_and_mixed(
    lists: list[QueryList], name: str, scores: dict[tuple[str, str], np.ndarray]
) -> tuple[dict, dict]:
    """``name``'s figures for ``scores`` alone, and mixed with the first stage at the weight
    that does best on the *other* collections (the mixed cell records it as ``weight``)."""
    own = [i for i in lists if i.collection == name]
    other = [i for i in lists if i.collection != name]
    weight = max(GRID, key=lambda w: evaluate(other, mix(scores, w))["ndcg_at_10"])
    return evaluate(own, mix(scores, 0.0)), evaluate(own, mix(scores, weight)) | {"weight": weight}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("collections", nargs=2, help="NAME=INDEX, e.g. cisi=/tmp/cisi-index")
    parser.add_argument("--folds", type=int, default=2)
    parser.add_argument("--max-length", type=int, default=128, help="tokens per pair / chunk")
    parser.add_argument(
        "--variants",
        default="bundled,full,cross",
        help="comma-separated: bundled, full (bi-encoder), cross, lora",
    )
    parser.add_argument("--out", type=Path, default=RESULT, help="result JSON")
    args = parser.parse_args()
    chosen = set(args.variants.split(","))
    torch.set_num_threads(2)
    torch.manual_seed(0)
    path = model_spec("all-minilm-l6-v2").location
    lists: list[QueryList] = []
    for pair in args.collections:
        name, _, folder = pair.partition("=")
        lists += query_lists(name, Path(folder))
    names = list(dict.fromkeys(item.collection for item in lists))
    # key: (label, cross-encoder, LoRA rank, training)
    variants: dict[str, tuple[str, bool, int, Callable[[Encoder, list[QueryList]], None]]] = {
        "bundled": ("bi-encoder, bundled", False, 0, lambda encoder, groups: None),
        "full": (
            "bi-encoder, fine-tuned (1 epoch, lr 2e-5)",
            False,
            0,
            lambda encoder, groups: encoder.train(groups, 1, 2e-5, 2e-5),
        ),
        "cross": (
            "cross-encoder, fine-tuned (2 epochs, lr 5e-5, head 1e-3)",
            True,
            0,
            lambda encoder, groups: encoder.train(groups, 2, 5e-5, 1e-3),
        ),
        "lora": (
            "bi-encoder, LoRA rank 8 on all layers (1 epoch, lr 2e-4)",
            False,
            8,
            lambda encoder, groups: encoder.train(groups, 1, 2e-4, 2e-4),
        ),
    }
    unknown = chosen - variants.keys()
    if unknown:
        parser.error(f"--variants: unknown {', '.join(sorted(unknown))}; use {', '.join(variants)}")
    rows: dict[str, dict[str, dict]] = {"first stage (hybrid)": {}}
    for name in names:
        own = [i for i in lists if i.collection == name]
        rows["first stage (hybrid)"][name] = evaluate(own, lambda i: i.first_stage)
    for key, (label, cross, rank, train) in variants.items():
        if key not in chosen:
            continue
        print(label, flush=True)
        started = time.perf_counter()
        scores = fold_scores(
            lists,
            args.folds,
            lambda cross=cross, rank=rank: Encoder(path, cross, args.max_length, rank),
            train,
        )
        seconds = time.perf_counter() - started
        for name in names:
            alone, mixed = alone_and_mixed(lists, name, scores)
            rows.setdefault(label, {})[name] = alone | {"seconds": seconds}
            rows.setdefault(f"{label}, mixed", {})[name] = mixed
    result = {"folds": args.folds, "max_length": args.max_length, "rows": rows}
    write_result(args.out.stem, result, args.out.parent)
    print_rows("reranking the hybrid top 50", rows, names, width=160)


if __name__ == "__main__":
    main()
