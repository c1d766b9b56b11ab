"""The index folder's own files: leftovers of dead writes are removed, an index inside the
folder it indexes is passed over, and MANIFEST.json may only name files inside the index
(issue 24, items 17, 18 and 19)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import MODEL
from ragkit import Index
from ragkit.store.folder.doctor import diagnose


def _index(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Glaciers carve deep valleys in mountains.\n")
    with Index.open(tmp_path / "index", create=True, model=MODEL) as index:
        index.ingest([docs])
    return tmp_path / "index"


def test_ingest_removes_scratch_files_of_dead_writes(tmp_path: Path) -> None:
    folder = _index(tmp_path)
    dead = folder / ".bm25-1.999999.1.tmp"  # a BM25 copy a killed process was saving
    dead.mkdir()
    (dead / "data.csc.index.npy").write_bytes(b"x" * 1000)
    (folder / ".MANIFEST.json.999999.1.tmp").write_text("{}")
    assert any("leftover" in note for note in diagnose(folder).notes)
    with Index.open(folder) as index:
        index.ingest([tmp_path / "docs"])  # nothing changed: the run still tidies up
    assert not dead.exists() and not (folder / ".MANIFEST.json.999999.1.tmp").exists()
    assert not any("leftover" in note for note in diagnose(folder).notes)


def test_an_index_inside_the_folder_it_indexes_is_passed_over(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Glaciers carve deep valleys in mountains.\n")
    command = [str(Path(sys.executable).with_name("ragkit")), "ingest", str(docs)]
    command += ["--index", str(docs / "index"), "--model", MODEL]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    for added, unchanged in ((1, 0), (0, 1)):  # the second run finds FAISS, BM25, manifest
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"files seen 1 · documents added {added} · unchanged {unchanged}" in done.stdout
        assert "index/" not in done.stdout


def test_a_manifest_naming_files_outside_the_index_is_not_followed(tmp_path: Path) -> None:
    folder = _index(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("not the index's")
    (folder / "link.faiss").symlink_to(secret)
    manifest = json.loads((folder / "MANIFEST.json").read_text())
    outside = ["../secret.txt", str(secret), "link.faiss", "bm25-1/../../secret.txt"]
    manifest["files"].update(dict.fromkeys(outside, "0" * 64))
    (folder / "MANIFEST.json").write_text(json.dumps(manifest))
    problems = diagnose(folder).problems
    for name in outside:
        assert (
            f"{name!r}: MANIFEST.json names a file outside the index folder (not read); "
            "`ragkit doctor --repair` rewrites it"
        ) in problems
    assert not any("checksum differs" in p for p in problems)
