"""Creating an index: two first ingests into one new folder both succeed, and a creation
that died part-way leaves nothing a later one trips on (issue 24, items 6 and 13)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from hostile import reader_prefix
from killharness import ingest_command

from ragkit import Index
from ragkit.config import Settings
from ragkit.store import DB_NAME, FolderStore
from ragkit.store.folder.doctor import diagnose
from ragkit.store.folder.lock import WriteLock


def test_two_first_ingests_into_a_new_folder(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for number in range(6):
        (docs / f"d{number}.txt").write_text(f"Note {number}: glaciers carve valleys.\n")
    prefix, _ = reader_prefix()
    command = [*prefix, *ingest_command(docs, tmp_path / "index")]  # default model: auto
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    logs = [tmp_path / f"stderr-{n}" for n in range(2)]
    # Both pass the "no index yet" check and meet at the writer lock, which this test holds.
    with WriteLock(tmp_path / "index", wait=False):
        runs = [
            subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=log.open("w"), text=True, env=env
            )
            for log in logs
        ]
        deadline = time.monotonic() + 120
        while not all("waiting for another writer" in log.read_text() for log in logs):
            assert time.monotonic() < deadline, [log.read_text() for log in logs]
            time.sleep(0.1)
    outputs = [run.communicate(timeout=300)[0] for run in runs]
    for run, log in zip(runs, logs, strict=True):
        assert run.returncode == 0, log.read_text()
        assert "Traceback" not in log.read_text()
    added = sorted(int(out.split("documents added ")[1].split()[0]) for out in outputs)
    assert added == [0, 6]  # one created and ingested; the other waited and found it done
    with Index.open(tmp_path / "index") as index:
        assert len(index.store.document_hashes()) == 6
    assert diagnose(tmp_path / "index").problems == []


def test_a_creation_that_died_part_way_is_not_an_index(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    folder.mkdir()
    # What a kill during creation leaves: a half-built database under its temporary name.
    half = folder / f".{DB_NAME}.999999.tmp"
    half.write_bytes(b"SQLite format 3\x00half")
    (folder / f"{DB_NAME}-wal").write_bytes(b"not ours")
    store = FolderStore.create(folder, Settings(embedding_model="m"), dimension=4)
    assert store.counts() == {"documents": 0, "chunks": 0, "vectors": 0}
    store.close()
    assert not half.exists()
    assert diagnose(folder).problems == []
