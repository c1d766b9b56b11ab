"""Index handles that live across other writers' commits (issue 24, items 7, 8 and 14)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import MODEL
from ragkit import Index
from ragkit.store.folder.doctor import diagnose


def test_a_handle_opened_before_the_first_ingest_follows_it(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Glaciers carve deep valleys in mountains.\n")
    early = Index.open(tmp_path / "index", create=True)  # model auto: chosen at first ingest
    assert early.search("glaciers valleys") == []
    command = [str(Path(sys.executable).with_name("ragkit")), "ingest", str(docs)]
    command += ["--index", str(tmp_path / "index")]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    subprocess.run(command, capture_output=True, text=True, env=env, check=True)

    hits = early.search("glaciers valleys", k=3)  # hybrid: needs the chosen model
    assert [Path(h.source).name for h in hits] == ["a.txt"]
    (docs / "b.txt").write_text("Rivers carry sediment to the sea.\n")
    report = early.ingest([docs])
    assert (report.documents_added, report.documents_unchanged) == (1, 1)
    assert early.settings.embedding_model == early.store.settings.embedding_model != "auto"
    early.close()


def test_handles_in_one_process_search_while_another_ingests(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for number in range(20):
        (docs / f"d{number}.txt").write_text(f"Note {number}: glaciers carve valleys.\n")
    writer = Index.open(tmp_path / "index", create=True, model=MODEL)
    writer.ingest([docs])
    readers = [Index.open(tmp_path / "index") for _ in range(3)]
    done = threading.Event()
    failures: list[BaseException] = []
    searches = [0]

    def search(index: Index) -> None:
        while not done.is_set():
            try:
                assert index.search("glaciers valleys", k=5, mode="sparse")
                searches[0] += 1
            except BaseException as error:  # noqa: BLE001 - every failure is counted
                failures.append(error)

    threads = [threading.Thread(target=search, args=(r,)) for r in readers]
    for thread in threads:
        thread.start()
    try:
        for round_ in range(6):  # each commit is a new generation and a new BM25 folder
            (docs / f"d{round_}.txt").write_text(f"Round {round_}: glaciers carve valleys.\n")
            writer.ingest([docs])
    finally:
        done.set()
        for thread in threads:
            thread.join()
    assert failures == [] and searches[0] > 0
    for index in (writer, *readers):
        index.close()
    assert not list((tmp_path / "index").glob(".bm25-*"))  # no scratch copy left behind
    assert diagnose(tmp_path / "index").problems == []


def test_a_commit_between_vector_search_and_row_fetch_loses_no_hit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for number in range(10):  # d0-d4 match best: they are the 5 hits before the commit
        words = "glaciers glaciers valleys" if number < 5 else "glaciers and rivers"
        (docs / f"d{number}.txt").write_text(f"Note {number}: {words}.\n")
    writer = Index.open(tmp_path / "index", create=True, model=MODEL)
    writer.ingest([docs])
    reader = Index.open(tmp_path / "index")
    fetch = reader.store.chunks_by_id
    commits = []

    def commit_then_fetch(ids: object) -> object:
        """A real commit by another handle lands after the ranking, before the rows are read:
        the five best documents are removed and five others added."""
        if not commits:
            for number in range(5):
                (docs / f"d{number}.txt").unlink()
                (docs / f"e{number}.txt").write_text(f"Entry {number}: glaciers in valleys.\n")
            commits.append(writer.ingest([docs], prune=True).generation)
        return fetch(ids)

    monkeypatch.setattr(reader.store, "chunks_by_id", commit_then_fetch)
    hits = reader.search("glaciers valleys", k=5, mode="sparse")
    assert commits and len(hits) == 5  # was 0 of 5: the ranked rows were gone
    assert not any(Path(hit.source).name < "d5" for hit in hits)
    for index in (writer, reader):
        index.close()
