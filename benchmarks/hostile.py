"""Hostile inputs: `ragkit ingest` over the hostile corpus of ``tests/reliability/hostile.py``
(imported as ``tests.reliability.hostile``: run from the repository root).

Runs the CLI in a child process (as root, under ``setpriv`` without CAP_DAC_OVERRIDE so the
mode-000 file is really unreadable) and counts the cases whose outcome matches (ingested, or
skipped with the expected reason), the crashes (a traceback, or an exit code other than the
documented 1) and the peak RSS of the run, next to the same ingest of only the corpus's good
files (the peer: any extra memory would be what the hostile files cost). It also measures the
loader's peak RSS on a real text file just under the size limit (64 MiB), read and decoded,
and the time and peak RSS of ingesting a 50 MB single-line text file (over the document limit).
Writes benchmarks/results/hostile.json and prints a table.

The second part (``benchmarks/hostile_surfaces.py``) tries the newer surfaces — records, deletes by id,
collapse, standard input, filters, Milvus addresses and a real ``milvus-lite server`` — as a
hostile user would, and writes benchmarks/results/hostile_surfaces.json.

    .venv/bin/python -m benchmarks.hostile [--part files|surfaces|all]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import run_child, write_result
from ragkit.documents import max_file_bytes
from ragkit.store import FolderStore
from tests.reliability.hostile import (
    HUGE_BYTES,
    build,
    expected_for,
    mismatches,
    reader_prefix,
    summary_skips,
)
from tests.reliability.killharness import MODEL, ingest_command, new_index

LOAD_SCRIPT = """
import re, sys
from pathlib import Path
from ragkit.documents import load_paths
result = load_paths([Path(sys.argv[1])])
assert len(result.documents) == 1, result.skipped
print(re.search(r"VmHWM:\\s+(\\d+) kB", Path("/proc/self/status").read_text()).group(1))
"""


def loader_peak_mb(path: Path) -> float:
    """Peak RSS (MB) of a fresh process that loads one file (VmHWM: this image's own peak)."""
    command = [sys.executable, "-c", LOAD_SCRIPT, str(path)]
    return int(subprocess.run(command, capture_output=True, text=True, check=True).stdout) / 1024


def surfaces() -> None:
    """The surfaces part: every scenario on the folder store and on a milvus-lite server."""
    from benchmarks import hostile_surfaces
    from ragkit.store.milvus.server import LiteServer

    clock = time.perf_counter()
    data = Path(tempfile.mkdtemp(prefix="rk-surfaces-milvus-"))
    with LiteServer(data) as address:
        outcomes = hostile_surfaces.run(address)
    shutil.rmtree(data, ignore_errors=True)
    held = sum(outcome["held"] for outcome in outcomes)
    result = {
        "model": MODEL,
        "scenarios": len(outcomes),
        "held": held,
        "failed": len(outcomes) - held,
        "seconds": round(time.perf_counter() - clock, 1),
        "outcomes": outcomes,
    }
    write_result("hostile_surfaces", result)
    print(f"{held} of {len(outcomes)} scenarios held ({result['seconds']} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--part", choices=("files", "surfaces", "all"), default="all")
    part = parser.parse_args().part
    if part in ("files", "all"):
        files()
    if part in ("surfaces", "all"):
        surfaces()


def files() -> None:
    """The hostile file corpus ingested, beside the good files alone (the peer)."""
    work = Path(tempfile.mkdtemp(prefix="rk10-hostile-"))
    prefix, reads_unreadable = reader_prefix()
    cases = expected_for(build(work / "corpus"), reads_unreadable)
    good = work / "good"
    good.mkdir()
    for case in cases:
        source = work / "corpus" / case.name
        if not case.expect and "#" not in case.name and source.is_file():
            shutil.copy(source, good / source.name)
    for name in ("hostile", "peer"):
        new_index(work / name, 500)
    code, stdout, stderr, rss = run_child(
        [*prefix, *ingest_command(work / "corpus", work / "hostile")]
    )
    peer_code, _, _, peer_rss = run_child([*prefix, *ingest_command(good, work / "peer")])
    store = FolderStore.open(work / "hostile")
    keys = {k.removeprefix(str(work / "corpus") + "/") for k in store.document_hashes()}
    store.close()
    problems = mismatches(cases, summary_skips(stdout, work / "corpus"), keys)
    crashed = "Traceback" in stderr or code != 1

    line = "The boundary layer thickens downstream of the leading edge.\n"
    at_limit = work / "at-limit.txt"
    with at_limit.open("w") as handle:
        handle.write(line * ((max_file_bytes() - 4096) // len(line)))
    small = work / "small.txt"
    small.write_text(line)
    limit_mb, small_mb = loader_peak_mb(at_limit), loader_peak_mb(small)
    one_line = work / "one-line"
    one_line.mkdir()
    (one_line / "line.txt").write_text("boundary layer " * (50 * 10**6 // 15))
    new_index(work / "one-line-index", 500)
    clock = time.perf_counter()
    line_code, line_out, _, line_rss = run_child(ingest_command(one_line, work / "one-line-index"))
    line_seconds = time.perf_counter() - clock

    result = {
        "model": MODEL,
        "cases": len(cases),
        "files": len({c.name.split(":")[0].split("#")[0] for c in cases}),
        "as_expected": len(cases) - len(problems),
        "crashes": int(crashed),
        "exit_code": code,
        "peer_exit_code": peer_code,
        "unreadable_file_really_unreadable": not reads_unreadable,
        "huge_file_bytes": HUGE_BYTES,
        "peak_rss_mb_hostile_ingest": round(rss, 1),
        "peak_rss_mb_good_files_only": round(peer_rss, 1),
        "peak_rss_ratio": round(rss / peer_rss, 3),
        "loader_peak_rss_mb_file_at_limit": round(limit_mb, 1),
        "loader_peak_rss_mb_small_file": round(small_mb, 1),
        "file_at_limit_mb": round(at_limit.stat().st_size / 2**20, 1),
        "single_line_50mb": {
            "exit_code": line_code,
            "refused": "document limit" in line_out,
            "seconds": round(line_seconds, 1),
            "peak_rss_mb": round(line_rss, 1),
        },
        "problems": problems,
    }
    shutil.rmtree(work, ignore_errors=True)
    write_result("hostile", result)
    rows = [
        ("hostile cases (files + JSONL lines)", f"{result['cases']} ({result['files']} files)"),
        ("outcome as expected", result["as_expected"]),
        ("crashes", result["crashes"]),
        ("exit code (hostile / good files only)", f"{code} / {peer_code}"),
        ("peak RSS MB (hostile / good only)", f"{rss:.0f} / {peer_rss:.0f}"),
        ("peak RSS ratio", f"{rss / peer_rss:.3f}"),
        (
            f"loader peak RSS MB ({result['file_at_limit_mb']} MiB file / small)",
            f"{limit_mb:.0f} / {small_mb:.0f}",
        ),
        (
            "50 MB single-line file (exit, refused, s, peak RSS MB)",
            f"{line_code}, {'document limit' in line_out}, {line_seconds:.1f}, {line_rss:.0f}",
        ),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    for problem in problems:
        print("problem:", re.sub(r"\s+", " ", problem))


if __name__ == "__main__":
    main()
