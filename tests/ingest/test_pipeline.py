"""Ingest chunking: adaptive by default, one fixed chunker by setting, the choice recorded in
the index (real SQLite, FAISS and the bundled encoder)."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import MODEL
from ragkit import Index, RagkitError, Settings
from ragkit.chunking import ChunkingRecord
from ragkit.cli import app
from ragkit.documents import Document, text_blocks
from ragkit.pipeline import DocumentChunker, embedding_texts, prepare, sparse_terms
from ragkit.store import DB_NAME
from ragkit.store.folder.schema import connect

SECTIONS = {
    "Boiling": "Water boils at one hundred degrees Celsius at sea level. "
    "At altitude the boiling point drops because the air pressure is lower. ",
    "Freezing": "Ice forms when water cools below zero degrees Celsius. "
    "Salt water freezes at a lower temperature than fresh water. ",
    "Trains": "Steam locomotives burned coal to boil water in their boilers. "
    "Diesel engines replaced them on most railways after the war. ",
}


@pytest.fixture
def long_doc(tmp_path: Path) -> Path:
    """A markdown file over several 64-token budgets, with headings: candidates disagree."""
    folder = tmp_path / "docs"
    folder.mkdir()
    body = "".join(f"# {title}\n\n{text * 4}\n\n" for title, text in SECTIONS.items())
    (folder / "long.md").write_text(body, encoding="utf-8")
    (folder / "short.txt").write_text("Cats sleep most of the day.", encoding="utf-8")
    return folder


def test_ingest_is_adaptive_by_default_and_records_scores(tmp_path: Path, long_doc: Path) -> None:
    index = Index.open(tmp_path / "index", create=True, model=MODEL, chunk_tokens=64)
    assert index.settings.chunker == "adaptive"
    index.ingest([long_doc])
    record = index.chunking(str(long_doc / "long.md"))
    candidates = {"fixed-64", "sentence", "recursive", "structure", "semantic"}
    assert set(record.scores) == candidates
    assert record.chosen in candidates and record.skipped == ()
    for scores in record.scores.values():
        assert set(scores) == {"SC", "BI", "ICC", "DCC", "RC", "score"}
        assert all(0.0 <= v <= 1.0 for v in scores.values())
    best = max(record.scores.values(), key=lambda s: s["score"])
    assert record.scores[record.chosen]["score"] == best["score"]
    rows = index.store.db.execute(
        "SELECT DISTINCT c.chunker FROM chunks c JOIN documents d ON d.id = c.document_id "
        "WHERE d.key = ?",
        (str(long_doc / "long.md"),),
    ).fetchall()
    assert rows == [(record.chosen,)]
    # A document within one budget: every candidate agrees, so nothing is embedded to score it.
    short = index.chunking(str(long_doc / "short.txt"))
    assert short.skipped == ("DCC", "ICC")
    counts = index.info().chunkers_chosen
    assert sum(counts.values()) == 2 and counts[record.chosen] >= 1
    with pytest.raises(RagkitError, match="no document"):
        index.chunking("missing.txt")


def test_fixed_chunker_setting(tmp_path: Path, long_doc: Path) -> None:
    index = Index.open(tmp_path / "index", create=True, model=MODEL, chunker="fixed")
    index.ingest([long_doc])
    chunkers = {row[0] for row in index.store.db.execute("SELECT chunker FROM chunks")}
    assert chunkers == {"fixed-256"}
    assert index.chunking(str(long_doc / "long.md")) == ChunkingRecord("fixed-256")
    assert index.info().chunkers_chosen == {"fixed-256": 2}
    with pytest.raises(RagkitError, match="chunker='fixed'"):
        Index.open(tmp_path / "index", chunker="sentence")


def test_settings_reject_unknown_chunker_and_metric() -> None:
    with pytest.raises(ValueError, match="recursive-token"):
        Settings(chunker="recursive-token")
    with pytest.raises(ValueError, match="XYZ"):
        Settings(chunk_weights={"XYZ": 1.0})


def test_index_without_chunking_column_still_opens(tmp_path: Path, long_doc: Path) -> None:
    """An index written before the selection was recorded: no column, no chunker setting."""
    folder = tmp_path / "old"
    index = Index.open(folder, create=True, model=MODEL, chunker="sentence")
    index.ingest([long_doc / "short.txt"])
    index.close()
    db = connect(folder)
    db.execute("ALTER TABLE documents DROP COLUMN chunking")
    settings = json.loads(db.execute("SELECT value FROM state WHERE key='settings'").fetchone()[0])
    for key in ("chunker", "chunk_min_tokens", "chunk_weights"):
        settings.pop(key)
    db.execute("UPDATE state SET value = ? WHERE key = 'settings'", (json.dumps(settings),))
    db.close()

    reopened = Index.open(folder)
    assert reopened.info().chunkers_chosen == {"unrecorded": 1}
    assert not reopened.chunking(str(long_doc / "short.txt")).recorded
    assert reopened.search("cats", k=1)[0].source.endswith("short.txt")
    reopened.ingest([long_doc / "long.md"])
    counts = reopened.info().chunkers_chosen
    assert counts.pop("unrecorded") == 1 and sum(counts.values()) == 1


def test_cli_chunker_options_and_info(tmp_path: Path, long_doc: Path) -> None:
    runner = CliRunner()
    folder = str(tmp_path / "cli-index")
    args = ["ingest", str(long_doc), "--index", folder, "--model", MODEL, "--chunk-tokens", "64"]
    result = runner.invoke(app, [*args, "--chunk-weights", "SC=1,BI=2,RC=1"])
    assert result.exit_code == 0, result.output
    assert Index.open(folder).settings.chunk_weights == {"SC": 1.0, "BI": 2.0, "RC": 1.0}
    result = runner.invoke(app, ["info", "--index", folder])
    assert result.exit_code == 0 and "chunkers chosen" in result.output
    key = str(long_doc / "long.md")
    result = runner.invoke(app, ["info", "--index", folder, "--document", key])
    assert result.exit_code == 0, result.output
    assert "structure" in result.output and "chosen" in result.output
    relative = os.path.relpath(key)  # the path as typed from here finds the same document
    result = runner.invoke(app, ["info", "--index", folder, "--document", relative])
    assert result.exit_code == 0 and "structure" in result.output, result.output
    result = runner.invoke(app, ["info", "--index", folder, "--document", "nope"])
    assert result.exit_code == 2 and "ragkit ls" in result.output
    bad = ["ingest", str(long_doc), "--index", str(tmp_path / "x"), "--chunker", "nope"]
    result = runner.invoke(app, bad)
    assert result.exit_code == 2 and "--chunker" in result.output
    assert not (tmp_path / "x" / DB_NAME).exists()


@pytest.fixture
def titled_corpus(tmp_path: Path) -> Path:
    """One JSONL record whose title word ("kestrel") never occurs in its body."""
    folder = tmp_path / "titled"
    folder.mkdir()
    body = " ".join(
        f"Sentence {n} says the small falcon hovers over fields while hunting voles."
        for n in range(12)
    )
    record = {"_id": "d1", "title": "Kestrel", "text": body}
    (folder / "corpus.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    return folder


def titled_index(folder: Path, corpus: Path, context: str) -> Index:
    """``corpus`` ingested with small fixed chunks and ``chunk_context=context``."""
    index = Index.open(
        folder, create=True, model=MODEL, chunker="fixed", chunk_tokens=32, chunk_context=context
    )
    index.ingest([corpus])
    return index


@pytest.mark.parametrize("context", ["title", "none"])
def test_chunks_carry_their_document_title(
    tmp_path: Path, titled_corpus: Path, context: str
) -> None:
    index = titled_index(tmp_path / context, titled_corpus, context)
    rows = index.store.db.execute("SELECT text, terms FROM chunks ORDER BY id").fetchall()
    assert len(rows) > 2 and rows[0][0].startswith("Kestrel")
    assert rows[0][1].split().count("kestrel") == (2 if context == "title" else 1)  # boost
    body_rows = rows[1:]
    assert all("kestrel" not in text.lower() for text, _ in body_rows)  # stored text: its own
    carried = ["kestrel" in terms.split() for _, terms in body_rows]
    assert all(carried) if context == "title" else not any(carried)
    hits = index.search("kestrel", k=50, mode="sparse")
    assert len(hits) == (len(rows) if context == "title" else 1)
    index.close()


def test_title_context_changes_body_vectors_only(tmp_path: Path, titled_corpus: Path) -> None:
    vectors = {}
    for context in ("title", "none"):
        index = titled_index(tmp_path / context, titled_corpus, context)
        blobs = index.store.db.execute("SELECT vector FROM chunks ORDER BY id").fetchall()
        vectors[context] = np.stack([np.frombuffer(b, dtype=np.float32) for (b,) in blobs])
        index.close()
    first_same = float(vectors["title"][0] @ vectors["none"][0])
    body_same = [float(a @ b) for a, b in zip(vectors["title"][1:], vectors["none"][1:])]
    assert first_same > 0.9999  # the first chunk opens with the title: embedded as is
    assert max(body_same) < 0.999


def test_index_built_before_chunk_context_keeps_embedding_chunks_alone(
    tmp_path: Path, titled_corpus: Path
) -> None:
    folder = tmp_path / "old"
    Index.open(folder, create=True, model=MODEL).close()
    db = sqlite3.connect(folder / DB_NAME)
    stored = json.loads(db.execute("SELECT value FROM state WHERE key='settings'").fetchone()[0])
    del stored["chunk_context"]
    db.execute("UPDATE state SET value=? WHERE key='settings'", (json.dumps(stored),))
    db.commit()
    db.close()
    index = Index.open(folder)
    assert index.settings.chunk_context == "none"
    index.ingest([titled_corpus])
    rows = index.store.db.execute("SELECT text, vector FROM chunks ORDER BY id").fetchall()
    texts = [text for text, _ in rows]
    stored = np.stack([np.frombuffer(blob, dtype=np.float32) for _, blob in rows])
    body = [i for i, text in enumerate(texts) if not text.startswith("Kestrel")]
    assert body  # chunks cut away from the title: the ones a title context would change
    alone = index.encoder.encode_passages(texts)
    with_title = index.encoder.encode_passages([f"Kestrel\n\n{texts[i]}" for i in body])
    assert np.allclose(stored, alone, atol=1e-5)  # each chunk embedded as its own text
    assert not np.allclose(stored[body], with_title, atol=1e-3)
    index.close()


def test_pre_index_embeds_the_normalized_title() -> None:
    text = "ذهب الولد الى المدرسة صباحا."
    document = Document("a.txt", "a.txt", text, "h", text_blocks(text), title="إِلَى")
    settings = Settings(chunker="sentence", normalization="pre-index")
    (prepared,) = prepare([document], DocumentChunker(settings), settings)
    (embedded,) = embedding_texts([prepared], settings)
    assert embedded == f"الي\n\n{prepared.match_texts[0]}"
    title_terms = " ".join(sparse_terms("الي", "ar", settings))
    assert title_terms and prepared.terms[0].startswith(title_terms + " ")
