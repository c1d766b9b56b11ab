"""Warm hybrid query latency of an index on each embedding precision, in the same run.

Two Cranfield indexes (``../shared/data/beir/cranfield``, every default but
``embedding_precision``; all-MiniLM-L6-v2 is what ``auto`` picks for it): ``fp32`` (every
index made before ``auto`` precision) and ``auto`` (int8 for MiniLM). Warm ``Index.search(query,
k=10)``, hybrid, query encoding included, over the Cranfield and CISI queries alternating (224:
as many of each as CISI has), asked of the two
indexes in turn query by query (the order swapped every query), so both see the same machine.
Reported: p50/p95 ms per index, the p50 ratio, and the query encoding alone.

Run::

    .venv/bin/python -m benchmarks.precision_latency            # every query (224)
    .venv/bin/python -m benchmarks.precision_latency --queries 100

Writes ``benchmarks/results/precision_latency.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks.common import BEIR, p50_p95, write_result
from benchmarks.latency import queries
from ragkit import Index

PRECISIONS = ("fp32", "auto")


def build(folder: Path, precision: str) -> dict[str, Any]:
    """A Cranfield index at ``folder`` on ``precision``: its resolved precision, build time."""
    clock = time.perf_counter()
    with Index.open(folder, create=True, embedding_precision=precision) as index:
        index.ingest([BEIR / "cranfield" / "corpus.jsonl"])
        resolved = index.settings.embedding_precision
    return {"precision": resolved, "build_s": round(time.perf_counter() - clock, 1)}


def timed_ms(call: Callable[[str], object], text: str) -> float:
    """Milliseconds ``call(text)`` took."""
    clock = time.perf_counter()
    call(text)
    return (time.perf_counter() - clock) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--queries", type=int, default=1000, help="at most this many queries per index"
    )
    args = parser.parse_args()
    texts = queries(args.queries)
    with tempfile.TemporaryDirectory(prefix="ragkit-precision-") as scratch:
        built = {p: build(Path(scratch) / p, p) for p in PRECISIONS}
        indexes = {p: Index.open(Path(scratch) / p) for p in PRECISIONS}
        search = {p: indexes[p].search for p in PRECISIONS}
        encode = {p: (lambda q, e=indexes[p].encoder: e.encode_queries([q])) for p in PRECISIONS}
        for p in PRECISIONS:  # warm: encoder loaded, pages cached
            for text in texts[:10]:
                search[p](text)
        times: dict[str, dict[str, list[float]]] = {
            p: {"search": [], "encode": []} for p in PRECISIONS
        }
        for number, text in enumerate(texts):
            for p in PRECISIONS if number % 2 == 0 else PRECISIONS[::-1]:
                times[p]["search"].append(timed_ms(search[p], text))
                times[p]["encode"].append(timed_ms(encode[p], text))
        for index in indexes.values():
            index.close()
    rows: dict[str, dict[str, Any]] = {
        p: {
            "built": built[p],
            "search": p50_p95(times[p]["search"]),
            "encode": p50_p95(times[p]["encode"], digits=2),
        }
        for p in PRECISIONS
    }
    ratio = rows["auto"]["search"]["p50_ms"] / rows["fp32"]["search"]["p50_ms"]
    path = write_result("precision_latency", {"queries": len(texts), "rows": rows,
                                               "p50_ratio_auto_to_fp32": round(ratio, 3)})  # fmt: skip
    table = Table(title=f"warm hybrid search, {len(texts)} queries per index (same run)")
    for column in ("index", "precision", "search p50 ms", "p95 ms", "encode p50 ms", "p95 ms"):
        table.add_column(column)
    for p, row in rows.items():
        table.add_row(p, str(row["built"]["precision"]), f"{row['search']['p50_ms']:.1f}",
                      f"{row['search']['p95_ms']:.1f}", f"{row['encode']['p50_ms']:.1f}",
                      f"{row['encode']['p95_ms']:.1f}")  # fmt: skip
    Console().print(table)
    Console().print(f"p50 auto / fp32: {ratio:.2f}×  (wrote {path})")


if __name__ == "__main__":
    main()
