"""The inspection page of ``ragkit serve`` in a real browser: page load, search round trip and
the size of the page's assets, on the Cranfield index.

Run::

    .venv/bin/python benchmarks/page.py                  # builds the index once, then measures
    .venv/bin/python benchmarks/page.py --queries 20     # a quicker run

The index: the Cranfield corpus (``../shared/data/beir/cranfield``, 1,400 abstracts) ingested
with all-MiniLM-L6-v2 and the default settings (adaptive chunking), kept under
``~/.cache/ragkit/benchmarks/page-cranfield`` and reused by later runs (``--rebuild`` makes it
again). The server: ``ragkit serve`` in its own process, as a user starts it. The browser:
Debian's Chromium headless, driven by Playwright for Python (``make browser``).

- **page load**: ``--loads`` fresh browser contexts (empty cache) open ``/``; the page's own
  clock (``performance.now()`` since navigation started) when it has listed the indexes and is
  ready, and the wall clock the driver saw from ``goto`` to ready.
- **search round trip**: the first ``--queries`` Cranfield queries typed into the page and
  sent with Enter, after 5 warm-up queries; the page's clock from Enter to the hits drawn
  (request, JSON, explanations and contexts, DOM), and the driver's wall clock.
- **the API alone**: the same queries as ``POST /search`` from Python, without and with
  ``explain`` (what explaining costs the server).
- **assets**: bytes of every file under ``ragkit/serve/page`` (what the page loads), raw and
  gzip-compressed.

Writes ``benchmarks/results/page.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import ragkit  # noqa: F401  (thread policy before torch/faiss load: ragkit.threads)

# isort: split

import httpx
from rich.console import Console
from rich.table import Table

from ragkit import Index
from ragkit.evaluate import load_queries
from ragkit.paths import cache_dir, package_folder, shared_data_dir

ROOT = Path(__file__).resolve().parent.parent
RESULT = ROOT / "benchmarks" / "results" / "page.json"
MODEL = "all-minilm-l6-v2"
RAGKIT = str(Path(sys.executable).parent / "ragkit")
WARM_UP = 5


def build_index(folder: Path, rebuild: bool) -> dict[str, float]:
    """The Cranfield index at ``folder``, made when missing (or ``rebuild``); ``seconds``: to
    build it, or to find its documents unchanged (``reused``)."""
    if rebuild:
        shutil.rmtree(folder, ignore_errors=True)
    reused = folder.exists()
    clock = time.perf_counter()
    corpus = shared_data_dir() / "beir" / "cranfield" / "corpus.jsonl"
    with Index.open(folder, create=True, model=MODEL) as index:
        index.ingest([corpus])
        counts = index.store.counts()
    return {**counts, "reused": reused, "seconds": round(time.perf_counter() - clock, 1)}


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def server(folder: Path) -> Iterator[str]:
    """``ragkit serve`` over ``folder`` (named ``cranfield``): its base URL once it answers."""
    port = free_port()
    command = [
        RAGKIT,
        "serve",
        f"cranfield={folder}",
        "--port",
        str(port),
        "--log-level",
        "warning",
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            try:
                if httpx.get(f"{url}/health").status_code == 200:
                    break
            except httpx.TransportError:
                if process.poll() is not None:
                    raise SystemExit("ragkit serve exited before answering") from None
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def summary(milliseconds: list[float]) -> dict[str, float]:
    cut = statistics.quantiles(milliseconds, n=20)
    return {
        "p50_ms": round(statistics.median(milliseconds), 1),
        "p95_ms": round(cut[18], 1),
        "n": len(milliseconds),
    }


def chromium() -> str:
    for name in (os.environ.get("RAGKIT_CHROMIUM"), "chromium", "chromium-browser"):
        if name and (found := shutil.which(name)):
            return found
    raise SystemExit("no Chromium: `make browser` installs Debian's chromium")


def in_browser(url: str, texts: list[str], loads: int) -> dict[str, dict[str, float]]:
    """Page loads and search round trips measured in Chromium headless."""
    from playwright.sync_api import sync_playwright

    page_ms, load_wall, search_ms, search_wall = [], [], [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), headless=True)
        for _ in range(loads):
            context = browser.new_context()
            page = context.new_page()
            clock = time.perf_counter()
            page.goto(f"{url}/")
            page.wait_for_selector("body[data-ready=true]")
            load_wall.append((time.perf_counter() - clock) * 1000)
            page_ms.append(float(page.get_attribute("body", "data-ready-ms") or "nan"))
            context.close()
        page = browser.new_page()
        page.goto(f"{url}/")
        page.wait_for_selector("body[data-ready=true]")
        for number, text in enumerate(texts):
            page.fill("#query", text)
            clock = time.perf_counter()
            page.press("#query", "Enter")
            page.wait_for_function(
                "q => document.getElementById('hits').dataset.query === q", arg=text
            )
            wall = (time.perf_counter() - clock) * 1000
            if number >= WARM_UP:
                search_wall.append(wall)
                search_ms.append(float(page.get_attribute("#hits", "data-ms") or "nan"))
        browser.close()
    return {
        "page_load_in_page": summary(page_ms),
        "page_load_driver_wall": summary(load_wall),
        "search_round_trip_in_page": summary(search_ms),
        "search_round_trip_driver_wall": summary(search_wall),
    }


def api_alone(url: str, texts: list[str]) -> dict[str, dict[str, float]]:
    """``POST /search`` from Python, without and with ``explain``."""
    found: dict[str, dict[str, float]] = {}
    with httpx.Client(base_url=url, timeout=120) as client:
        for explain in (False, True):
            spent = []
            for number, text in enumerate(texts):
                body = {"query": text, "k": 10, "explain": explain}
                clock = time.perf_counter()
                client.post("/search", json=body).raise_for_status()
                if number >= WARM_UP:
                    spent.append((time.perf_counter() - clock) * 1000)
            found["api_search_explain" if explain else "api_search"] = summary(spent)
    return found


def assets() -> dict[str, int]:
    """Bytes of the page's files, raw and gzip-compressed (level 6, as servers send them)."""
    files = sorted(p for p in package_folder("ragkit.serve", "page").iterdir() if p.is_file())
    sizes = {p.name: p.stat().st_size for p in files}
    compressed = sum(len(gzip.compress(p.read_bytes(), 6)) for p in files)
    return {"files": len(files), "bytes": sum(sizes.values()), "gzip_bytes": compressed, **sizes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=50, help="Measured queries (p50 over).")
    parser.add_argument("--loads", type=int, default=20, help="Fresh page loads.")
    parser.add_argument("--rebuild", action="store_true", help="Build the index again.")
    args = parser.parse_args()
    folder = cache_dir() / "benchmarks" / "page-cranfield"
    index = build_index(folder, args.rebuild)
    queries = list(
        load_queries(shared_data_dir() / "beir" / "cranfield" / "queries.jsonl").values()
    )
    texts = queries[-WARM_UP:] + queries[: args.queries]
    with server(folder) as url:
        measured = in_browser(url, texts, args.loads) | api_alone(url, texts)
    result = {
        "index": {"corpus": "cranfield", "model": MODEL, **index},
        "browser": "Chromium headless (Debian), Playwright for Python",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "load_average": round(os.getloadavg()[0], 2),
        **measured,
        "assets": assets(),
    }
    RESULT.parent.mkdir(parents=True, exist_ok=True)
    RESULT.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    table = Table("measure", "p50 ms", "p95 ms", "n", title="inspection page, Cranfield")
    for name, figures in measured.items():
        table.add_row(name, str(figures["p50_ms"]), str(figures["p95_ms"]), str(figures["n"]))
    console = Console()
    console.print(table)
    sizes = result["assets"]
    console.print(
        f"assets: {sizes['files']} files, {sizes['bytes']:,} bytes ({sizes['gzip_bytes']:,} gzip)"
        f" · index {index['documents']} documents, {index['chunks']} chunks · {RESULT}"
    )


if __name__ == "__main__":
    main()
