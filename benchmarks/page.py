"""The inspection page of ``ragkit serve`` in a real browser: page load, search round trip and
the size of the page's assets, on the Cranfield index.

Run::

    .venv/bin/python -m benchmarks.page                  # builds the index once, then measures
    .venv/bin/python -m benchmarks.page --queries 20     # a quicker run

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
import os
import shutil
import time
from pathlib import Path

import ragkit  # noqa: F401  (thread policy before torch/faiss load: ragkit.threads)

# isort: split

import httpx
from rich.console import Console
from rich.table import Table

from benchmarks.common import BEIR, serve, summary, write_result
from ragkit import Index
from ragkit.evaluate import load_queries
from ragkit.paths import cache_dir, package_folder

MODEL = "all-minilm-l6-v2"
WARM_UP = 5


def build_index(folder: Path, rebuild: bool) -> dict[str, float]:
    """The Cranfield index at ``folder``, made when missing (or ``rebuild``); ``seconds``: to
    build it, or to find its documents unchanged (``reused``)."""
    if rebuild:
        shutil.rmtree(folder, ignore_errors=True)
    reused = folder.exists()
    clock = time.perf_counter()
    corpus = BEIR / "cranfield" / "corpus.jsonl"
    with Index.open(folder, create=True, model=MODEL) as index:
        index.ingest([corpus])
        counts = index.store.counts()
    return {**counts, "reused": reused, "seconds": round(time.perf_counter() - clock, 1)}


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
    queries = list(load_queries(BEIR / "cranfield" / "queries.jsonl").values())
    texts = queries[-WARM_UP:] + queries[: args.queries]
    with serve(f"cranfield={folder}") as (url, _):
        measured = in_browser(url, texts, args.loads) | api_alone(url, texts)
    result = {
        "index": {"corpus": "cranfield", "model": MODEL, **index},
        "browser": "Chromium headless (Debian), Playwright for Python",
        **measured,
        "assets": assets(),
    }
    path = write_result("page", result)
    table = Table("measure", "p50 ms", "p95 ms", "n", title="inspection page, Cranfield")
    for name, figures in measured.items():
        table.add_row(name, str(figures["p50_ms"]), str(figures["p95_ms"]), str(figures["n"]))
    console = Console()
    console.print(table)
    sizes = result["assets"]
    console.print(
        f"assets: {sizes['files']} files, {sizes['bytes']:,} bytes ({sizes['gzip_bytes']:,} gzip)"
        f" · index {index['documents']} documents, {index['chunks']} chunks · {path}"
    )


if __name__ == "__main__":
    main()
