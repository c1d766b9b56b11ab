"""Near-duplicate documents (MinHash signatures, LSH groups): found at ingest, kept in the store
(folder and Milvus), dropped with their documents, listed by ``ls --duplicates`` and ``info``,
and folded by ``collapse``."""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragkit import Index
from ragkit.cli import app
from ragkit.pipeline.near_duplicates import THRESHOLD, groups, signature, similarity

MODEL = "all-minilm-l6-v2"
SETTINGS = {"chunker": "sentence", "chunk_tokens": 512}  # each test document is one chunk
LICENCE = """Plain Permissive Licence, second edition.

Whoever receives a copy of this program and the files that come with it may run the program for
any purpose, read its source to learn how it works, change it to suit their own needs, and give
copies of it to others, either as it is or with their changes, for a fee or for nothing.

Every copy that is given away, changed or not, must carry this notice in full, so that the people
who receive it know what they may do with it, and a changed copy must say that it was changed and
when.

The program is offered as it is, without any promise that it works or that it suits any purpose.
The people who wrote it are not responsible for any loss or damage that comes from running it,
from changing it or from passing it on, however that loss or damage came about.

{holder}
"""
FIRST = LICENCE.format(holder="Copyright 2019 the Lantern project and its contributors.")
SECOND = LICENCE.format(holder="Copyright 2024 Harbour Tools Limited, all rights reserved.")
WATER = (
    "Water moves between the sea, the air and the land in a cycle that never stops. The sun warms "
    "the surface of the ocean and lakes, some of the water turns into vapour and rises, cools high "
    "above the ground and forms clouds, and the clouds let it fall again as rain or snow that "
    "feeds rivers flowing back to the sea."
)


@pytest.fixture(scope="module")
def encoder_index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    """An index whose loaded encoder the tests share (one model load per module)."""
    index = Index.open(tmp_path_factory.mktemp("shared") / "index", create=True, model=MODEL)
    _ = index.encoder.dimension
    return index


@pytest.fixture
def index(tmp_path: Path, encoder_index: Index) -> Index:
    fresh = Index.open(tmp_path / "index", create=True, model=MODEL, **SETTINGS)
    fresh._encoder = encoder_index.encoder
    return fresh


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """Two licences differing in their last line, an unrelated text, two short notes that
    differ in one word."""
    folder = tmp_path / "docs"
    for name, text in {
        "lantern/COPYING": FIRST,
        "harbour/LICENSE": SECOND,
        "water.txt": WATER,
        "note-a.txt": "Released in 2020 by Ann.",
        "note-b.txt": "Released in 2021 by Ann.",
    }.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _names(keys: list[str]) -> list[str]:
    return sorted(key.split("/docs/", 1)[1] for key in keys)


def test_signatures_compare_shingles() -> None:
    assert similarity(signature(FIRST), signature(SECOND)) >= THRESHOLD
    assert similarity(signature(FIRST), signature(WATER)) < 0.1
    assert signature("Released in 2020 by Ann.") == b""  # too short to compare
    found = groups(
        {"a": signature(FIRST), "b": signature(SECOND), "c": signature(WATER)},
        {"a": "1", "b": "2", "c": "3"},
    )
    assert found == {"a": "a", "b": "a"}
    # copies alone are exact duplicates, not a near-duplicate group
    assert groups({"a": signature(FIRST), "b": signature(FIRST)}, {"a": "1", "b": "1"}) == {}


def test_licences_differing_in_one_line_are_grouped(index: Index, docs: Path) -> None:
    report = index.ingest([docs])
    assert (report.near_duplicate_documents, report.near_duplicate_groups) == (2, 1)
    (group,) = index.duplicates()
    assert group.kind == "near" and _names(group.members) == ["harbour/LICENSE", "lantern/COPYING"]
    assert group.key == min(group.members)
    (docs / "copy").mkdir()
    (docs / "copy" / "COPYING").write_text(FIRST, encoding="utf-8")
    (docs / "note-c.txt").write_text(WATER, encoding="utf-8")
    index.ingest([docs])
    near, exact = sorted(index.duplicates(), key=lambda g: g.kind, reverse=True)
    assert _names(near.members) == ["copy/COPYING", "harbour/LICENSE", "lantern/COPYING"]
    assert (exact.kind, _names(exact.members)) == ("exact", ["note-c.txt", "water.txt"])
    info = index.info()
    assert (info.near_duplicate_documents, info.near_duplicate_groups) == (3, 1)
    assert (info.duplicate_documents, info.duplicate_groups) == (2, 1)
    assert ("near_duplicate_groups", "1") in info.rows()


def test_delete_and_prune_drop_entries(index: Index, docs: Path) -> None:
    index.ingest([docs])
    assert len(index.store.signatures()) == 5
    index.delete_matching(["*/harbour/LICENSE"])
    assert index.duplicates() == [] and len(index.store.signatures()) == 4
    (docs / "harbour").mkdir(exist_ok=True)
    (docs / "harbour" / "LICENSE").write_text(SECOND, encoding="utf-8")
    index.ingest([docs])
    assert len(index.duplicates()) == 1
    (docs / "lantern" / "COPYING").unlink()
    report = index.ingest([docs], prune=True)
    assert report.documents_removed == 1 and report.near_duplicate_groups == 0
    assert not any(key.endswith("/lantern/COPYING") for key in index.store.signatures())
    assert index.duplicates() == []


def test_an_index_without_the_table_migrates_on_its_next_ingest(index: Index, docs: Path) -> None:
    index.ingest([docs])
    location = Path(index.store.location)
    index.close()
    with sqlite3.connect(location / "ragkit.sqlite") as db:  # as an index built before it
        db.execute("DROP TABLE near_duplicates")
    old = Index.open(location)
    assert old.duplicates() == [] and old.info().near_duplicate_groups == 0
    assert old.search("warranty for the program", k=2)  # collapse reads no table
    report = old.ingest([docs])  # nothing changed: the signatures come from stored text
    assert report.documents_added == 0 and report.near_duplicate_groups == 1
    assert len(old.store.signatures()) == 5
    assert [g.kind for g in old.duplicates()] == ["near"]


def test_collapse_folds_a_near_duplicate_hit(index: Index, docs: Path) -> None:
    index.ingest([docs])
    query = "may I give away changed copies of the program"
    unfolded = index.search(query, k=2, collapse=False)
    assert _names([hit.key for hit in unfolded]) == ["harbour/LICENSE", "lantern/COPYING"]
    folded = index.search(query, k=2)
    assert [_names([hit.key, *hit.duplicates]) for hit in folded[:1]] == [
        ["harbour/LICENSE", "lantern/COPYING"]
    ]
    assert not any(name in folded[1].key for name in ("LICENSE", "COPYING"))
    # the notes share a group with nothing: near-identical text alone folds nothing
    notes = index.search("released by Ann", k=2, mode="sparse")
    assert _names([hit.key for hit in notes]) == ["note-a.txt", "note-b.txt"]


def test_ls_duplicates_and_info_through_the_cli(index: Index, docs: Path) -> None:
    index.ingest([docs])
    (docs / "again.txt").write_text(WATER, encoding="utf-8")
    index.ingest([docs])
    where = str(index.store.location)
    runner = CliRunner()
    listed = runner.invoke(app, ["ls", "--index", where, "--duplicates", "--json"])
    assert listed.exit_code == 0, listed.output
    found = {group["kind"]: _names(group["members"]) for group in json.loads(listed.output)}
    assert found == {
        "near": ["harbour/LICENSE", "lantern/COPYING"],
        "exact": ["again.txt", "water.txt"],
    }
    table = runner.invoke(app, ["ls", "--index", where, "--duplicates"], env={"COLUMNS": "200"})
    assert table.exit_code == 0, table.output
    assert "near" in table.output and "1 group of exact copies" in table.output
    only = runner.invoke(app, ["ls", "--index", where, "--duplicates", "--glob", "*/water.txt"])
    assert "1 near-duplicate group" not in only.output and "0 near-duplicate groups" in only.output
    info = runner.invoke(app, ["info", "--index", where], env={"COLUMNS": "200"})
    assert info.exit_code == 0, info.output
    assert "near_duplicate_documents" in info.output and "near_duplicate_groups" in info.output


def test_near_duplicates_on_a_milvus_server(
    tmp_path: Path, docs: Path, milvus_server: str, encoder_index: Index
) -> None:
    where = f"milvus://{milvus_server}/t_{uuid.uuid4().hex[:12]}"
    with Index.open(where, create=True, model=MODEL, **SETTINGS) as index:
        index._encoder = encoder_index.encoder
        report = index.ingest([docs])
        assert report.near_duplicate_groups == 1
        (group,) = index.duplicates()
        assert _names(group.members) == ["harbour/LICENSE", "lantern/COPYING"]
        assert len(index.store.signatures()) == 5
        folded = index.search("may I give away changed copies of the program", k=2)
        assert _names([folded[0].key, *folded[0].duplicates]) == [
            "harbour/LICENSE",
            "lantern/COPYING",
        ]
        index.delete_matching(["*/lantern/COPYING"])
        assert index.duplicates() == [] and len(index.store.signatures()) == 4
