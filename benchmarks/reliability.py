"""Crash safety: SIGKILL `ragkit ingest` at random points, check and resume the index.

Writes benchmarks/results/reliability.json and prints a table. Also measures the peak RSS of
an ingest that meets a 200 MB text file (refused by size before it is read) next to an ingest
of one small file.

    .venv/bin/python -m benchmarks.reliability --trials 50

The kill harness is ``tests/reliability/killharness.py`` (imported as
``tests.reliability.killharness``: run from the repository root), which ``test_crash.py`` runs
with fewer trials.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from benchmarks.common import run_child, write_result
from tests.reliability.killharness import (
    CRANFIELD,
    cranfield_files,
    ingest_command,
    new_index,
    run_trials,
)


def peak_rss_mb(corpus: Path, index: Path) -> tuple[float, int]:
    """Peak resident memory (MB) and exit code of one `ragkit ingest` in a child process."""
    code, _, _, peak = run_child(ingest_command(corpus, index))
    return peak, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--documents", type=int, default=200)
    parser.add_argument("--commit-every", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if not CRANFIELD.is_file():
        raise SystemExit(f"{CRANFIELD}: missing (shared data); nothing to measure")
    work = Path(tempfile.mkdtemp(prefix="rk10-bench-"))
    corpus = cranfield_files(work / "corpus", args.documents)
    clock = time.perf_counter()
    figures = run_trials(corpus, work, args.trials, args.commit_every, args.seed)
    seconds = time.perf_counter() - clock

    small, big = work / "small", work / "big"
    small.mkdir(), big.mkdir()
    (small / "a.txt").write_text("Water boils at 100 degrees.\n")
    (big / "a.txt").write_text("Water boils at 100 degrees.\n")
    line = "The boundary layer thickens downstream of the leading edge.\n" * 1000
    with (big / "huge.txt").open("w") as handle:
        while handle.tell() < 200 * 1024 * 1024:
            handle.write(line)
    new_index(work / "rss-small", 500), new_index(work / "rss-big", 500)
    rss_small, rc_small = peak_rss_mb(small, work / "rss-small")
    rss_big, rc_big = peak_rss_mb(big, work / "rss-big")
    (big / "huge.txt").unlink()

    result = {
        **figures.as_dict(),
        "documents": args.documents,
        "commit_every_documents": args.commit_every,
        "seed": args.seed,
        "seconds": round(seconds, 1),
        "peak_rss_mb_small_ingest": round(rss_small, 1),
        "peak_rss_mb_with_200mb_file": round(rss_big, 1),
        "exit_codes": {"small": rc_small, "with_200mb_file": rc_big},
    }
    write_result("reliability", result)
    rows = [
        ("kill trials", figures.trials),
        ("killed mid-run / mid-ingest", f"{figures.killed} / {figures.mid_ingest}"),
        ("corrupt", figures.corrupt),
        ("lost documents", figures.lost),
        ("duplicated chunks", figures.duplicated),
        ("half documents", figures.half_documents),
        ("BM25 absent after kill (rebuilt)", figures.bm25_absent_after_kill),
        ("resume completed", figures.resume_completed),
        ("peak RSS small / with 200 MB file (MB)", f"{rss_small:.0f} / {rss_big:.0f}"),
        ("seconds", f"{seconds:.0f}"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    for problem in figures.problems[:20]:
        print("problem:", problem)


if __name__ == "__main__":
    main()
