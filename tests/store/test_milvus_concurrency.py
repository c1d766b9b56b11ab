"""Why one scales out on Milvus: several writers at once, a writer killed with SIGKILL and run
again, several readers — against a real ``milvus-lite server`` gRPC endpoint.

After every scenario, what searches can see is checked: each document's visible chunks are
exactly those a clean ingest makes (none twice, none missing), and ``doctor`` finds no problem.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from reliability.killharness import CRANFIELD, cranfield_files
from serving import served

from conftest import MODEL, ragkit
from ragkit import Index
from ragkit.store.address import diagnose, repair

pytestmark = pytest.mark.skipif(not CRANFIELD.exists(), reason=f"{CRANFIELD} not found")
RAGKIT = str(Path(sys.executable).parent / "ragkit")


def _ingest(files: Path, where: str) -> list[str]:
    return [RAGKIT, "ingest", str(files), "--index", where]


def _visible(where: str) -> dict[str, list[tuple[int, int, str]]]:
    """Each document's chunks as searches can see them (committed versions only)."""
    with Index.open(where) as index:
        found: dict[str, list[tuple[int, int, str]]] = {}
        for record in index.store.chunk_records():
            found.setdefault(record["document"], []).append(
                (record["start"], record["end"], record["text"])
            )
    return found


def _reference(files: Path, tmp_path: Path) -> dict[str, list[tuple[int, int, str]]]:
    """The chunks a clean ingest of ``files`` into a folder makes."""
    folder = tmp_path / f"reference-{uuid.uuid4().hex[:6]}"
    with Index.open(folder, create=True, model=MODEL, chunker="sentence") as index:
        index.ingest([files])
    return _visible(str(folder))


def _new(server: str) -> str:
    where = f"milvus://{server}/c_{uuid.uuid4().hex[:12]}"
    with Index.open(where, create=True, model=MODEL, chunker="sentence", commit_every_documents=4):
        pass
    return where


def test_two_writers_at_once(tmp_path: Path, milvus_server: str) -> None:
    first = cranfield_files(tmp_path / "first", 24)
    second = tmp_path / "second"
    second.mkdir()
    for path in sorted(first.iterdir())[12:]:
        path.rename(second / path.name)
    where = _new(milvus_server)
    writers = [
        subprocess.Popen(_ingest(folder, where), stderr=subprocess.PIPE, text=True)
        for folder in (first, second)
    ]
    for writer in writers:
        _, errors = writer.communicate(timeout=600)
        assert writer.returncode == 0, errors
    expected = _reference(first, tmp_path) | _reference(second, tmp_path)
    assert _visible(where) == expected
    found = diagnose(where)
    assert found.problems == [] and found.counts["documents"] == 24


def test_a_writer_killed_and_run_again_leaves_no_duplicate(
    tmp_path: Path, milvus_server: str
) -> None:
    files = cranfield_files(tmp_path / "files", 40)
    where = _new(milvus_server)
    writer = subprocess.Popen(_ingest(files, where), stderr=subprocess.DEVNULL)
    with Index.open(where) as index:  # kill once two batches are committed
        deadline = time.monotonic() + 300
        while index.store.committed_generation() < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    expected = _reference(files, tmp_path)
    seen = _visible(where)
    assert seen and all(seen[key] == expected[key] for key in seen)  # whole documents only
    assert diagnose(where).problems == []
    rerun = ragkit("ingest", str(files), "--index", where)
    assert rerun.returncode == 0, rerun.stderr
    assert _visible(where) == expected
    repaired = repair(where)
    assert repaired.problems == [] and repaired.counts["chunks"] == sum(map(len, expected.values()))


@pytest.mark.slow  # two server processes loading the model
def test_two_servers_answer_alike(tmp_path: Path, milvus_server: str) -> None:
    files = cranfield_files(tmp_path / "files", 12)
    where = _new(milvus_server)
    assert ragkit("ingest", str(files), "--index", where).returncode == 0
    body = {"query": "boundary layer transition on a flat plate", "k": 5}
    with served(f"docs={where}") as first, served(f"docs={where}") as second:
        answers = [client.post("/search", json=body).json()["hits"] for client in (first, second)]
    assert answers[0] and answers[0] == answers[1]
    with Index.open(where) as index:
        assert [h["key"] for h in answers[0]] == [h.key for h in index.search(body["query"], k=5)]
