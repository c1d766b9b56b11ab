"""Benchmark: what the Prefect ingest flow costs over the direct ingest (``ragkit ingest``).

Corpus: the first ``--files`` Cranfield abstracts (``../shared/data/beir/cranfield``), one
``.txt`` file each, so the flow runs one ``load`` and one ``chunk`` task per file — the
per-file case where task overhead shows most. Both paths use ``all-minilm-l6-v2``, adaptive
chunking, the same index settings and one process with the model already loaded:

- ``direct``: ``Index.open(create=True).ingest([folder])`` (what ``ragkit ingest`` calls);
- ``flow (first)``: ``flows.ingest.ingest_flow`` into a new index, including the start of
  Prefect's temporary local server;
- ``flow``: again into another new index with ``refresh_cache=True`` (all work redone, server
  already up);
- ``rerun unchanged``: a second run on each index (direct: hashes match, nothing embedded;
  flow: ``load``/``chunk`` results come from the cache, nothing embedded).

Direct and flow runs alternate (``--repeats`` each) so load changes hit both; each row keeps
the fastest. Reported: wall seconds and CPU seconds of this process (all threads; the
temporary Prefect server is a separate process and not counted), each with its ratio to the
direct row of the same kind. Command (from the repository root)::

    .venv/bin/python -m benchmarks.flows [--files 200] [--repeats 2]

Writes ``benchmarks/results/flows.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from rich.console import Console
from rich.table import Table

import ragkit.flows  # noqa: F401  (ragkit's Prefect settings before Prefect loads)
from benchmarks.common import BEIR, write_result
from ragkit import Index

CRANFIELD = BEIR / "cranfield" / "corpus.jsonl"
MODEL = "all-minilm-l6-v2"


def write_corpus(folder: Path, count: int) -> int:
    """One ``.txt`` file per Cranfield abstract (title line, blank line, text)."""
    folder.mkdir(parents=True)
    written = 0
    with CRANFIELD.open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            body = f"{record.get('title', '').strip()}\n\n{record['text'].strip()}".strip()
            if not body:
                continue
            (folder / f"{record['_id']}.txt").write_text(body + "\n", encoding="utf-8")
            written += 1
            if written == count:
                break
    return written


def measure(run: Callable[[], object]) -> tuple[float, float]:
    """Wall seconds and CPU seconds of this process (all its threads) for one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    from ragkit.flows.ingest import ingest_flow

    runs: dict[str, list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="ragkit-bench-flows-") as scratch:
        root = Path(scratch)
        files = write_corpus(root / "corpus", args.files)
        paths = [str(root / "corpus")]
        Index.open(root / "warm", create=True, model=MODEL).encoder.encode_passages(["warm"])

        def direct(folder: str) -> None:
            Index.open(root / folder, create=True, model=MODEL).ingest(paths)

        def flow(folder: str, refresh: bool = True) -> None:
            ingest_flow(paths=paths, index=str(root / folder), model=MODEL, refresh_cache=refresh)

        runs["flow (first, with server start)"] = [measure(lambda: flow("first"))]
        for n in range(args.repeats):  # interleaved, so load drift hits both alike
            runs.setdefault("direct", []).append(measure(lambda n=n: direct(f"direct-{n}")))
            runs.setdefault("flow", []).append(measure(lambda n=n: flow(f"flow-{n}")))
        for _ in range(args.repeats):
            runs.setdefault("direct rerun unchanged", []).append(
                measure(lambda: direct("direct-0"))
            )
            runs.setdefault("flow rerun unchanged", []).append(
                measure(lambda: flow("flow-0", refresh=False))
            )
    best = {name: min(values) for name, values in runs.items()}  # fastest wall time
    peers = {  # each row's ratio is to the direct run of the same kind
        "direct": "direct",
        "flow (first, with server start)": "direct",
        "flow": "direct",
        "direct rerun unchanged": "direct rerun unchanged",
        "flow rerun unchanged": "direct rerun unchanged",
    }
    rows = [
        {
            "run": name,
            "seconds": round(best[name][0], 2),
            "cpu_seconds": round(best[name][1], 2),
            "ratio": round(best[name][0] / best[peer][0], 2),
            "cpu_ratio": round(best[name][1] / best[peer][1], 2),
        }
        for name, peer in peers.items()
    ]
    result = {
        "corpus": f"first {files} Cranfield abstracts, one .txt file each",
        "model": MODEL,
        "repeats": args.repeats,
        "rows": rows,
    }
    write_result("flows", result)
    table = Table(
        "run", "seconds", "× direct", "CPU s", "CPU × direct", title=f"ingest of {files} files"
    )
    for row in rows:
        table.add_row(
            row["run"],
            f"{row['seconds']:.2f}",
            f"{row['ratio']:.2f}",
            f"{row['cpu_seconds']:.2f}",
            f"{row['cpu_ratio']:.2f}",
        )
    Console().print(table)


if __name__ == "__main__":
    main()
