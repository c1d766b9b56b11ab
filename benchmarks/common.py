"""What every benchmark and study shares: the judged collections, results with provenance,
timing and percentiles, peak memory, the retrieval metrics and a ``ragkit serve`` to query.

Run a benchmark from the repository root as a module (``python -m benchmarks.latency``): the
root is then on the import path, so the benchmarks, the studies (``experiments``) and the
corpus generators of ``tests/reliability`` import one another as packages.

Example:
    >>> summary([1.0, 2.0, 3.0, 4.0], seconds=2.0)["requests_per_s"]
    2.0
    >>> metrics({"q1": ["d2", "d1"]}, {"q1": {"d1": 1}})["mrr_at_10"]
    0.5
"""

from __future__ import annotations

import json
import os
import resource
import shlex
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ragkit.evaluate import Judgments, load_judgments, mrr_at_k, ndcg_at_k, recall_at_k
from ragkit.paths import shared_data_dir
from ragkit.provenance import provenance

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
BEIR = shared_data_dir() / "beir"
RAGKIT = str(Path(sys.executable).parent / "ragkit")  # the CLI of this virtualenv

T = TypeVar("T")
Runs = Mapping[str, Sequence[str]]  # query id → document ids, best first
Qrels = Mapping[str, Mapping[str, int]]  # query id → document id → grade


# --- results -------------------------------------------------------------------------------


def result_path(name: str, folder: Path = RESULTS) -> Path:
    """``folder/<name>.json`` (``name`` given without the suffix)."""
    return folder / f"{name.removesuffix('.json')}.json"


def read_result(name: str, folder: Path = RESULTS) -> dict[str, Any]:
    """The result file ``name`` as written before, or ``{}`` (for runs that keep the parts
    they did not measure)."""
    path = result_path(name, folder)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def write_result(
    name: str,
    data: Mapping[str, Any],
    folder: Path = RESULTS,
    parts: Sequence[str] | None = None,
    earlier: Mapping[str, Any] | None = None,
    indent: int | None = 2,
) -> Path:
    """Write ``data`` to ``folder/<name>.json`` with this run's provenance (command, commit,
    CPUs, thread settings, 1-minute load average, date: :func:`ragkit.provenance.provenance`)
    first, under ``"provenance"``; returns the path.

    A run that measures only some parts and keeps the others from the file passes the
    ``parts`` it measured and the file as it read it before measuring (``earlier``,
    :func:`read_result`): that file's provenance is kept under ``"earlier_provenance"``.
    """
    record = provenance()
    if parts is not None:
        record["parts"] = list(parts)
    history: list[Any] = []
    if earlier:
        history = [*earlier.get("earlier_provenance", []), earlier.get("provenance")]
    body = {k: v for k, v in data.items() if k not in ("provenance", "earlier_provenance")}
    out = {"provenance": record, **body}
    if any(history):
        out["earlier_provenance"] = [entry for entry in history if entry]
    path = result_path(name, folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


# --- judged collections --------------------------------------------------------------------


def beir_folder(name: str) -> Path:
    """A shared BEIR collection's folder (``../shared/data/beir/<name>``); exits naming the
    folder when it is absent."""
    folder = BEIR / name
    if not (folder / "corpus.jsonl").is_file():
        raise SystemExit(f"{folder}: missing (shared data, RAGKIT_SHARED_DATA); nothing to run")
    return folder


def load_beir(name_or_folder: str | Path) -> Judgments:
    """Corpus, queries and judgments of a BEIR folder: a shared collection by name
    (``"cranfield"``, :func:`beir_folder`) or a folder by path
    (:func:`ragkit.evaluate.load_judgments`)."""
    if isinstance(name_or_folder, Path):
        return load_judgments(name_or_folder)
    return load_judgments(beir_folder(name_or_folder))


# --- retrieval metrics (ragkit eval's: ragkit.evaluate) ------------------------------------


def per_query(runs: Runs, qrels: Qrels, judged: Iterable[str] | None = None) -> dict[str, list]:
    """nDCG@10, Recall@100 and MRR@10 of each judged query (``judged``: default every query
    of ``runs``, in sorted order, so two systems' lists pair up), as ``ragkit eval`` scores."""
    order = sorted(runs) if judged is None else list(judged)
    return {
        "ndcg_at_10": [ndcg_at_k(list(runs[q]), dict(qrels[q])) for q in order],
        "recall_at_100": [recall_at_k(list(runs[q]), dict(qrels[q])) for q in order],
        "mrr_at_10": [mrr_at_k(list(runs[q]), dict(qrels[q])) for q in order],
    }


def metrics(runs: Runs, qrels: Qrels, judged: Iterable[str] | None = None) -> dict[str, float]:
    """Mean nDCG@10, Recall@100 and MRR@10 over the judged queries (:func:`per_query`)."""
    scores = per_query(runs, qrels, judged)
    return {name: float(np.mean(values)) if values else 0.0 for name, values in scores.items()}


def paired_p(system: Sequence[float], baseline: Sequence[float]) -> float:
    """Two-sided paired t-test p-value of per-query scores against a baseline (1.0 when the
    two are the same everywhere)."""
    from scipy.stats import ttest_rel

    a, b = np.asarray(system, dtype=float), np.asarray(baseline, dtype=float)
    return 1.0 if np.allclose(a, b) else float(ttest_rel(a, b).pvalue)


# --- timing --------------------------------------------------------------------------------


def per_call_ms(call: Callable[[T], object], items: Iterable[T]) -> list[float]:
    """Wall milliseconds of ``call(item)`` for each item, in order."""
    spent = []
    for item in items:
        clock = time.perf_counter()
        call(item)
        spent.append((time.perf_counter() - clock) * 1000)
    return spent


def percentile(values: Sequence[float], point: float) -> float:
    """The ``point``-th percentile (0–100), linear between order statistics (numpy's default,
    one method for every benchmark)."""
    return float(np.percentile(np.asarray(values, dtype=float), point))


def p50_p95(milliseconds: Sequence[float], digits: int = 1) -> dict[str, float]:
    """``{"p50_ms", "p95_ms"}`` of the timings, rounded to ``digits``."""
    return {
        "p50_ms": round(percentile(milliseconds, 50), digits),
        "p95_ms": round(percentile(milliseconds, 95), digits),
    }


def summary(milliseconds: Sequence[float], seconds: float | None = None) -> dict[str, float]:
    """p50 and p95 (ms), the count and the 1-minute load average now; with ``seconds`` (the
    wall of all requests together), requests per second."""
    figures: dict[str, float] = {
        **p50_p95(milliseconds),
        "n": len(milliseconds),
        "load_average": round(os.getloadavg()[0], 2),
    }
    if seconds:
        figures["requests_per_s"] = round(len(milliseconds) / seconds, 1)
    return figures


# --- memory --------------------------------------------------------------------------------


def peak_rss_mb(children: bool = False) -> float:
    """Peak resident memory (MB) of this process so far, or of its waited-for children
    (Linux reports KiB)."""
    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    return resource.getrusage(who).ru_maxrss / 1024


# A small Python between this process and the measured one: a child's peak counts the memory
# it shares with its parent at fork, so the measured command is forked from a process that has
# imported nothing, as a user's shell would start it.
_MEASURE = (
    "import resource, subprocess, sys; "
    "code = subprocess.run(sys.argv[2:]).returncode; "
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss; "
    "open(sys.argv[1], 'w').write(f'{code} {peak}')"
)


def run_child(command: Sequence[str]) -> tuple[int, str, str, float]:
    """Exit code, stdout, stderr and peak resident memory (MB) of ``command`` in a child
    process (forked from a bare Python, not from this one: see ``_MEASURE``)."""
    with (
        tempfile.TemporaryDirectory(prefix="ragkit-bench-") as scratch,
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
    ):
        figures = Path(scratch) / "rusage"
        measure = [sys.executable, "-c", _MEASURE, str(figures), *command]
        subprocess.run(measure, stdout=out, stderr=err, check=False)
        out.seek(0), err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
        if not figures.is_file():
            raise SystemExit(f"{shlex.join(command)}: not run\n{stderr[-3000:]}")
        code, peak_kb = figures.read_text().split()
        return int(code), stdout, stderr, int(peak_kb) / 1024


# --- a server to query ---------------------------------------------------------------------


def free_port() -> int:
    """A TCP port nothing listens on now (the OS picks it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serve(*indexes: str, timeout: float = 600.0) -> Iterator[tuple[str, float]]:
    """``ragkit serve INDEX…`` in its own process on a free port (as a user starts it): its
    base URL and start-up seconds (until ``/health`` answers); stopped on exit."""
    import httpx

    port = free_port()
    command = [RAGKIT, "serve", *indexes, "--port", str(port), "--log-level", "warning"]
    clock = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            try:
                if httpx.get(f"{url}/health").status_code == 200:
                    break
            except httpx.TransportError:
                if process.poll() is not None:
                    raise SystemExit(f"{shlex.join(command)}: exited before answering") from None
                if time.perf_counter() - clock > timeout:
                    raise SystemExit(f"{shlex.join(command)}: no answer in {timeout:.0f} s")
                time.sleep(0.1)
        yield url, time.perf_counter() - clock
    finally:
        process.terminate()
        process.wait(timeout=30)
