"""Listing, removing and exporting the documents of an index, through the API and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import MODEL, ragkit
from ragkit import Index, RagkitError
from ragkit.store.folder.doctor import diagnose


@pytest.fixture
def built(tmp_path: Path, corpus: Path) -> Path:
    folder = tmp_path / "index"
    with Index.open(folder, create=True, model=MODEL, chunker="sentence") as index:
        index.ingest([corpus])
    return folder


def test_documents_delete_export_api(built: Path, corpus: Path, tmp_path: Path) -> None:
    with Index.open(built) as index:
        keys = [d.key for d in index.documents()]
        assert len(keys) == 5 and keys == sorted(keys)
        assert [d.key for d in index.documents("*.md")] == [str(corpus / "water.md")]
        names = {Path(d.key).name for d in index.documents(f"{corpus.name}/*.txt")}
        assert names == {"prayer.txt"}  # * stays in one folder, as in a source filter
        names = {Path(d.key).name for d in index.documents(f"{corpus.name}/**/*.txt")}
        assert names == {"prayer.txt", "cats.txt"}
        records = [d.key for d in index.documents(str(corpus / "records.jsonl"))]
        assert len(records) == 2  # a source selects all its records
        generation = index.store.generation
        removed = index.delete_matching(["*/sub/*", str(corpus / "records.jsonl")])
        assert sorted(removed) == sorted([str(corpus / "sub" / "cats.txt"), *records])
        assert index.store.generation == generation + 1
        assert len(index.documents()) == 2
        assert all("cats" not in hit.text.lower() for hit in index.search("cats sleep", k=5))
        assert all("cats" not in hit.text.lower() for hit in index.search("cats", mode="sparse"))
        with pytest.raises(RagkitError, match="no document matches 'nothing/\\*'; nothing"):
            index.delete_matching(["*.md", "nothing/*"])
        assert len(index.documents()) == 2  # all or nothing
        out = tmp_path / "chunks.jsonl"
        written = index.export(out, vectors=True)
        rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        assert written == len(rows) == index.info().chunks
        water = next(r for r in rows if r["document"].endswith("water.md"))
        original = (corpus / "water.md").read_text(encoding="utf-8")
        assert original[water["start"] : water["end"]] == water["text"]
        assert water["language"] == "en" and len(water["vector"]) == 384
        with pytest.raises(RagkitError, match="use jsonl"):
            index.export(out, format="parquet")
    found = diagnose(built)
    assert not found.problems, found.problems


def test_ls_rm_export_cli(built: Path, corpus: Path) -> None:
    listed = ragkit("ls", "--index", str(built), "--json", "--glob", "*.txt")
    assert listed.returncode == 0, listed.stderr
    entries = json.loads(listed.stdout)
    assert {Path(e["key"]).name for e in entries} == {"cats.txt", "prayer.txt"}
    assert {e["language"] for e in entries} == {"en", "ar"}

    table = ragkit("ls", "--index", str(built))
    assert table.returncode == 0 and "5 documents" in table.stdout

    removed = ragkit("rm", "--index", str(built), str(corpus / "prayer.txt"))
    assert removed.returncode == 0, removed.stderr
    assert "1 document removed" in removed.stdout

    missing = ragkit("rm", "--index", str(built), "no/such/*")
    assert missing.returncode == 2 and "no document matches 'no/such/*'" in missing.stderr

    exported = ragkit("export", "--index", str(built))
    assert exported.returncode == 0, exported.stderr
    rows = [json.loads(line) for line in exported.stdout.splitlines()]
    assert rows and not any(r["document"].endswith("prayer.txt") for r in rows)
    assert "vector" not in rows[0] and {"start", "end", "metadata", "language"} <= set(rows[0])
