"""Peak memory of ``ingest`` against corpus size (issue 44, item 6): does it grow with the
corpus, or stay bounded by one group of files?

Builds messy folders of N files from this machine's ``/usr/share/doc``: ``DISTINCT`` real
texts (changelogs, READMEs, licences of 8–64 KB, decompressed) each written many times under
package-like names, with a one-line variation in half the copies (so half are exact copies,
stored without embedding, and half new documents of a known text). Each ingest runs in a fresh
process (``benchmarks/ingest_worker.py``: all-minilm-l6-v2, default settings) and
reports its peak RSS (``ru_maxrss``). The tree before streaming (:data:`BEFORE`) runs from a
``git archive`` copy; the current tree from the checkout.

Run: ``.venv/bin/python -m benchmarks.ingest_memory [--sizes 2000 8000]``; writes
``benchmarks/results/ingest_memory.json``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import tempfile
import time
from pathlib import Path

from benchmarks.common import write_result
from benchmarks.duplicates import DOCS, MODEL
from benchmarks.ingest_worker import before_tree, run_ingest

BEFORE = "52285b8"  # the loader gap fixed, ingest not yet streaming
DISTINCT = 24


def texts(count: int) -> list[str]:
    """``count`` distinct texts of 8–64 KB from ``DOCS``, in path order."""
    found: list[str] = []
    for path in sorted(DOCS.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        try:
            data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError, gzip.BadGzipFile, EOFError):
            continue
        if 8_000 <= len(text) <= 64_000 and text not in found:
            found.append(text)
        if len(found) == count:
            break
    return found


def build(target: Path, size: int, sources: list[str], vary: bool = True) -> int:
    """``size`` files under ``target`` cycling through ``sources`` (with ``vary``, every
    second one with a line of its own); returns their bytes."""
    written = 0
    for n in range(size):
        text = sources[n % len(sources)]
        if vary and n % 2:
            text = f"Packaged for build {n}.\n\n{text}"
        folder = target / f"pkg{n // 50:04}"
        folder.mkdir(parents=True, exist_ok=True)
        written += (folder / f"doc{n:05}.txt").write_text(text, encoding="utf-8")
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 8000])
    parser.add_argument(
        "--exact-copies",
        action="store_true",
        help="every file an exact copy of one of the distinct texts (text grows with the "
        "corpus, embedding does not: isolates what ingest holds in memory)",
    )
    args = parser.parse_args()
    sources = texts(DISTINCT)
    runs = []
    with tempfile.TemporaryDirectory(prefix="ragkit-memory-") as scratch:
        old = before_tree(Path(scratch) / "before", BEFORE)
        for size in args.sizes:
            folder = Path(scratch) / f"corpus{size}"
            written = build(folder, size, sources, vary=not args.exact_copies)
            for label, tree in (("before", old), ("after", None)):
                clock = time.perf_counter()
                result = run_ingest(folder, Path(scratch) / f"index-{label}-{size}", tree, MODEL)
                report = result["report"]
                runs.append(
                    {
                        "files": size,
                        "text_mb": round(written / 1e6, 1),
                        "tree": label,
                        "peak_rss_mb": round(result["peak_rss_mb"]),
                        "rss_after_model_mb": round(result["rss_after_model_mb"]),
                        "wall_seconds": round(time.perf_counter() - clock, 1),
                        "documents_added": report["documents_added"],
                        "documents_copied": report["documents_copied"],
                        "chunks_embedded": report["chunks_embedded"],
                        # the index's own dense vectors (float32, 384-d), which grow with it
                        "vectors_mb": round(report["chunks_added"] * 384 * 4 / 1e6, 1),
                    }
                )
                print(json.dumps(runs[-1]), flush=True)
    result = {
        "what": "peak RSS of one ingest (fresh process) against corpus size",
        "model": MODEL,
        "before": BEFORE,
        "distinct_texts": DISTINCT,
        "runs": runs,
    }
    write_result("ingest_memory", result)


if __name__ == "__main__":
    main()
