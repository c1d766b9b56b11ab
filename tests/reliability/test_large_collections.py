"""Past ``hnsw_threshold`` a commit adds its vectors to the HNSW graph instead of rebuilding it
from SQLite; it rebuilds only when the kind changes or chunks leave the graph (issue 24,
item 15). A small threshold keeps the collection tiny."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import MODEL
from ragkit import Index
from ragkit.search import dense
from ragkit.store.folder.doctor import diagnose

WORDS = [
    "amber",
    "basalt",
    "cedar",
    "delta",
    "ember",
    "fjord",
    "granite",
    "harbor",
    "iris",
    "juniper",
    "kelp",
    "lagoon",
]


def _text(n: int) -> str:
    return f"Record {n} is about {WORDS[n % len(WORDS)]} and {WORDS[n // len(WORDS) % 12]}."


def _records(path: Path, count: int, first: int = 0) -> None:
    lines = [json.dumps({"id": f"r{n}", "text": _text(n)}) for n in range(first, first + count)]
    path.write_text("\n".join(lines) + "\n")


def test_commits_past_the_hnsw_threshold_add_without_rebuilding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds: list[int] = []
    build = dense.build_index
    monkeypatch.setattr(
        dense, "build_index", lambda d, total, *rest: builds.append(total) or build(d, total, *rest)
    )
    docs, folder = tmp_path / "docs", tmp_path / "index"
    docs.mkdir()
    _records(docs / "a.jsonl", 120)
    settings = {"hnsw_threshold": 50, "commit_every_documents": 20, "chunker": "fixed"}
    with Index.open(folder, create=True, model=MODEL, **settings) as index:
        assert index.ingest([docs]).documents_added == 120
        assert dense.kind_of(index.store.vectors) == "hnsw"
        assert builds == [60]  # once, where the third commit crossed the threshold
    with Index.open(folder) as index:  # a new handle checks the file it carries, then adds
        _records(docs / "b.jsonl", 30, first=120)
        index.ingest([docs])
        assert builds == [60] and index.store.vectors.ntotal == 150
        assert index.search(_text(137), k=1, mode="dense")[0].document_id == "r137"

        _records(docs / "b.jsonl", 30, first=200)  # replaces b's records: chunks leave HNSW
        index.ingest([docs], prune=True)
        assert builds == [60, 150] and index.store.vectors.ntotal == 150
        assert index.search(_text(205), k=1, mode="dense")[0].document_id == "r205"
    assert diagnose(folder).healthy
