"""Exact duplicates cost nothing twice (stored as copies, distinct texts embedded once) and
search shows distinct passages (``collapse``), through the API, the CLI and HTTP."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragkit import Index
from ragkit.cli import app

MODEL = "all-minilm-l6-v2"
LICENCE = (
    "Permission is hereby granted, free of charge, to any person obtaining a copy of this "
    "software.\n\nThe above copyright notice shall be included in all copies.\n"
)


@pytest.fixture
def messy(tmp_path: Path) -> Path:
    """Three copies of one licence, a copy under another name, and one other document."""
    folder = tmp_path / "docs"
    for name in ("a/LICENSE", "b/LICENSE", "c/COPYING.txt"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(LICENCE, encoding="utf-8")
    (folder / "water.md").write_text("# Water\n\nWater boils at 100 degrees.\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def encoder_index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    """An index whose loaded encoder the tests share (one model load per module)."""
    index = Index.open(tmp_path_factory.mktemp("shared") / "index", create=True, model=MODEL)
    _ = index.encoder.dimension
    return index


@pytest.fixture
def index(tmp_path: Path, encoder_index: Index) -> Index:
    fresh = Index.open(tmp_path / "index", create=True, model=MODEL)
    fresh._encoder = encoder_index.encoder
    return fresh


def _suffix(keys: list[str]) -> list[str]:
    return sorted(key.split("/docs/", 1)[1] for key in keys)


def test_copies_are_stored_without_chunking_or_embedding(index: Index, messy: Path) -> None:
    first = index.ingest([messy])
    assert (first.documents_added, first.documents_copied) == (4, 2)
    assert first.chunks_embedded == 2  # the licence once, the water page once
    (messy / "d").mkdir()
    shutil.copy(messy / "a" / "LICENSE", messy / "d" / "LICENSE")
    second = index.ingest([messy])
    assert (second.documents_added, second.documents_copied, second.chunks_embedded) == (1, 1, 0)
    copy = index.search("free of charge", k=1, filters={"source": "*/d/LICENSE"})[0]
    assert copy.key.endswith("/d/LICENSE") and copy.text == LICENCE[copy.start : copy.end]
    assert index.info().documents == 5 and index.info().chunks == 5


def test_removing_one_copy_keeps_the_others(index: Index, messy: Path) -> None:
    index.ingest([messy])
    original = next(d.key for d in index.documents() if d.key.endswith("/a/LICENSE"))
    index.delete([original])
    (messy / "a" / "LICENSE").unlink()
    copies = [hit.key for hit in index.search("free of charge", k=3, collapse=False)]
    assert _suffix([key for key in copies if "LICENSE" in key or "COPYING" in key]) == [
        "b/LICENSE",
        "c/COPYING.txt",
    ]
    (messy / "b" / "LICENSE").unlink()
    assert index.ingest([messy], prune=True).documents_removed == 1
    left = index.search("free of charge", k=5)
    assert _suffix([hit.key for hit in left if "free of charge" in hit.text]) == ["c/COPYING.txt"]


def test_a_copy_of_a_changed_original_is_chunked_anew(index: Index, messy: Path) -> None:
    index.ingest([messy])
    (messy / "a" / "LICENSE").write_text("Another licence entirely.", encoding="utf-8")
    shutil.copy(messy / "a" / "LICENSE", messy / "e.txt")
    report = index.ingest([messy])
    assert report.documents_added == 2 and report.documents_copied == 1
    assert index.search("another licence", k=1)[0].text == "Another licence entirely."


def test_collapse_folds_copies_into_one_hit(index: Index, messy: Path) -> None:
    index.ingest([messy])
    folded = index.search("free of charge copyright", k=2)
    assert len({hit.text for hit in folded}) == 2
    licence = next(hit for hit in folded if "free of charge" in hit.text)
    assert _suffix([licence.key, *licence.duplicates]) == [
        "a/LICENSE",
        "b/LICENSE",
        "c/COPYING.txt",
    ]
    unfolded = index.search("free of charge copyright", k=3, collapse=False)
    assert [hit.text for hit in unfolded] == [licence.text] * 3
    assert all(hit.duplicates == [] for hit in unfolded)
    handle = Index.open(index.store.location, collapse=False)
    assert len(handle.search("free of charge copyright", k=3)) == 3
    assert handle.search("free of charge", k=1, collapse=True)[0].duplicates


def test_collapse_through_the_cli(index: Index, messy: Path) -> None:
    index.ingest([messy])
    where = str(index.store.location)
    runner = CliRunner()
    folded = runner.invoke(app, ["query", "free of charge", "--index", where, "-k", "2", "--json"])
    assert folded.exit_code == 0, folded.output
    hits = json.loads(folded.output)
    assert len(hits[0]["duplicates"]) == 2 and hits[1]["text"] != hits[0]["text"]
    table = runner.invoke(app, ["query", "free of charge", "--index", where, "-k", "1"])
    assert "(+2 copies)" in table.output
    plain = runner.invoke(
        app, ["query", "free of charge", "--index", where, "-k", "2", "--no-collapse", "--json"]
    )
    assert [hit["text"] for hit in json.loads(plain.output)] == [hits[0]["text"]] * 2


def test_collapse_over_http(index: Index, messy: Path) -> None:
    from fastapi.testclient import TestClient

    from ragkit.serve.app import create_app
    from ragkit.serve.indexes import IndexLocation, ServedIndexes

    index.ingest([messy])
    served = ServedIndexes([IndexLocation("docs", Path(index.store.location))], warm=False)
    client = TestClient(create_app(served))
    body = {"query": "free of charge", "k": 2}
    folded = client.post("/search", json=body).json()["hits"]
    assert len(folded[0]["duplicates"]) == 2
    plain = client.post("/search", json=body | {"collapse": False}).json()["hits"]
    assert plain[0]["text"] == plain[1]["text"] and plain[0]["duplicates"] == []


@pytest.mark.parametrize("mode", ["hybrid", "sparse", "dense"])
def test_copies_filling_the_candidates_still_give_k_passages(
    tmp_path: Path, encoder_index: Index, mode: str
) -> None:
    """200 records of one text beside 12 others, with a candidate pool of 10 per list: ``-k 5``
    returns 5 distinct passages (the pool widens), and the licence lists all 199 copies."""
    index = Index.open(tmp_path / "index", create=True, model=MODEL, fusion_depth=10)
    index._encoder = encoder_index.encoder
    copies = [{"id": f"copy-{n:03d}", "text": LICENCE} for n in range(200)]
    others = [
        {"id": f"other-{n}", "text": f"Licence note {n}: charge number {n} applies to copy {n}."}
        for n in range(12)
    ]
    assert index.add(copies + others).skipped == []
    hits = index.search("permission hereby granted free of charge", k=5, mode=mode)
    assert len({hit.text for hit in hits}) == 5
    licence = next(hit for hit in hits if hit.text.startswith("Permission"))
    assert len({licence.key, *licence.duplicates}) == 200
    result = CliRunner().invoke(
        app, ["query", "permission hereby granted", "--index", str(tmp_path / "index"), "-k", "1"]
    )
    assert "(+199 copies)" in result.output, result.output
