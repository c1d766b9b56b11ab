"""Concurrent use: one writer at a time, readers on the committed generation, threaded search."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from killharness import ingest_command

from conftest import MODEL
from ragkit import Index, RagkitError
from ragkit.store.folder.doctor import diagnose
from ragkit.store.folder.lock import WriteLock


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("conc")
    corpus = folder / "corpus"
    corpus.mkdir()
    for number, text in enumerate(
        [
            "Water boils at 100 degrees Celsius at sea level.",
            "Cats are small domesticated carnivores that sleep a lot.",
            "Steam locomotives pulled early trains across the plains.",
            "The boundary layer thickens downstream of the leading edge.",
        ]
    ):
        (corpus / f"d{number}.txt").write_text(text, encoding="utf-8")
    index = Index.open(folder / "index", create=True, model=MODEL)
    index.ingest([corpus])
    index.close()
    return folder


def test_second_writer_fails_fast_or_waits(built: Path) -> None:
    index = Index.open(built / "index")
    with WriteLock(built / "index", wait=False):  # another writer holds the index
        with pytest.raises(RagkitError, match="another writer .* is writing to this index"):
            index.ingest([built / "corpus"], wait=False)
        with pytest.raises(RagkitError, match="still locked by another writer after 0.2 s"):
            index.ingest([built / "corpus"], wait=0.2)
    messages: list[str] = []
    holder = WriteLock(built / "index", wait=False)
    holder.acquire()
    timer = threading.Timer(0.3, holder.release)
    timer.start()
    waiter = WriteLock(built / "index", wait=True, on_wait=messages.append)
    waiter.acquire()
    waiter.release()
    assert messages and "waiting for another writer" in messages[0]


def test_reader_follows_committed_generation(built: Path) -> None:
    reader = Index.open(built / "index")
    before = reader.store.generation
    writer = Index.open(built / "index")
    extra = built / "extra"
    extra.mkdir(exist_ok=True)
    (extra / "new.txt").write_text("Glaciers carve deep valleys in the mountains.")
    writer.ingest([extra])
    assert reader.store.generation == before  # nothing changes until the next search
    hits = reader.search("glaciers carve valleys", k=1)
    assert reader.store.generation == writer.store.generation > before
    assert Path(hits[0].source).name == "new.txt"


def test_many_threads_search_at_once(built: Path) -> None:
    index = Index.open(built / "index")
    for path in (built / "index").glob("bm25-*"):  # force the lazy BM25 rebuild to race
        shutil.rmtree(path)
    index.store._sparse = None
    failures: list[BaseException] = []
    results: list[str] = []

    def work() -> None:
        try:
            for mode in ("sparse", "hybrid", "dense"):
                hit = index.search("water boils", k=1, mode=mode)[0]  # type: ignore[arg-type]
                results.append(Path(hit.source).name)
        except BaseException as error:  # noqa: BLE001 - collected and asserted below
            failures.append(error)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert results == ["d0.txt"] * 24


def test_second_cli_writer_fails_fast_or_waits_its_turn(built: Path, tmp_path: Path) -> None:
    """Another process holds the writer lock: `ragkit ingest --no-wait` exits 2 naming it, and
    `ragkit ingest` says it waits, then commits once the lock is released."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "late.txt").write_text("Volcanoes erupt molten rock and ash.")
    index = built / "index"
    holder = WriteLock(index, wait=False)
    holder.acquire()
    try:
        fast = subprocess.run(
            [*ingest_command(other, index), "--no-wait"],
            capture_output=True,
            text=True,
            check=False,
        )
        waiting = subprocess.Popen(ingest_command(other, index), stderr=subprocess.PIPE, text=True)
        assert waiting.stderr is not None
        said = next(line for line in waiting.stderr if "waiting for another writer" in line)
        assert waiting.poll() is None  # still waiting while the lock is held
    finally:
        holder.release()
    assert fast.returncode == 2 and "another writer" in fast.stderr, fast.stderr
    assert f"pid {os.getpid()}" in said
    assert waiting.wait(timeout=300) == 0
    assert diagnose(index).problems == []
    assert str(other / "late.txt") in Index.open(index).store.document_hashes()
