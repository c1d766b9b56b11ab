"""An index built with older rules is re-derived in place: languages, keys, terms; vectors kept."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from conftest import MODEL
from ragkit import Index
from ragkit.cli import app
from ragkit.normalize.detect import RULES_VERSION
from ragkit.store import language_rules


def rows(index: Index) -> dict[tuple[str, int], tuple[str, str, bytes]]:
    """``(document key, chunk start) → (match_text, terms, vector)``."""
    return {
        (key, start): (match, terms, vector)
        for key, start, match, terms, vector in index.store.db.execute(
            "SELECT d.key, c.start, c.match_text, c.terms, c.vector FROM chunks c "
            "JOIN documents d ON d.id = c.document_id"
        )
    }


def age(index: Index, key: str) -> None:
    """Make ``key``'s rows look analyzed by an older version: another language, other terms
    (in SQLite, which re-analysis reads; the saved BM25 of this generation stays as it is)."""
    with index.store.db as db:
        db.execute("UPDATE documents SET language = 'it' WHERE key = ?", (key,))
        db.execute(
            "UPDATE chunks SET terms = 'zebr strisc', match_text = 'old key' WHERE "
            "document_id = (SELECT id FROM documents WHERE key = ?)",
            (key,),
        )


def test_reanalysis_restores_what_a_fresh_ingest_derives(tmp_path: Path, corpus: Path) -> None:
    fresh = Index.open(tmp_path / "fresh", create=True, model=MODEL)
    fresh.ingest([corpus])
    index = Index.open(tmp_path / "old", create=True, model=MODEL)
    index.ingest([corpus])
    water = str(corpus / "water.md")
    age(index, water)
    assert ("old key", "zebr strisc") in {row[:2] for row in rows(index).values()}
    vectors = {k: v[2] for k, v in rows(index).items()}

    report = index.reanalyze()
    assert (report.documents, report.changed, report.chunks_reembedded) == (5, 1, 0)
    assert report.languages == {"it → en": 1}
    assert rows(index) == rows(fresh)  # keys, terms and vectors as a fresh ingest
    assert {k: v[2] for k, v in rows(index).items()} == vectors  # nothing re-embedded
    hits = index.search("steam vapour", k=5, mode="sparse")
    assert hits and hits[0].source == water and hits[0].language == "en"
    again = index.reanalyze()
    assert (again.changed, again.generation) == (0, report.generation)


def test_pre_index_reembeds_only_chunks_whose_text_changed(tmp_path: Path, corpus: Path) -> None:
    fresh = Index.open(tmp_path / "fresh", create=True, model=MODEL, normalization="pre-index")
    fresh.ingest([corpus])
    index = Index.open(tmp_path / "old", create=True, model=MODEL, normalization="pre-index")
    index.ingest([corpus])
    age(index, str(corpus / "water.md"))
    report = index.reanalyze()
    chunks = index.store.db.execute(
        "SELECT COUNT(*) FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.key = ?",
        (str(corpus / "water.md"),),
    ).fetchone()[0]
    assert report.changed == 1 and report.chunks_reembedded == chunks
    for key, (match, terms, vector) in rows(index).items():
        expected = rows(fresh)[key]
        assert (match, terms) == expected[:2]
        assert np.allclose(
            np.frombuffer(vector, np.float32), np.frombuffer(expected[2], np.float32), atol=1e-5
        )


def test_doctor_reanalyze_command(tmp_path: Path, corpus: Path) -> None:
    index = Index.open(tmp_path / "index", create=True, model=MODEL)
    index.ingest([corpus])
    age(index, str(corpus / "water.md"))
    result = CliRunner().invoke(app, ["doctor", "--index", str(index.store.folder), "--reanalyze"])
    assert result.exit_code == 0, result.output
    assert "re-analyzed 5 documents · 1 changed · languages changed: it → en 1" in result.output
    assert "ok" in result.output


def test_an_index_built_without_exact_terms_keeps_them_off_until_reanalyzed(
    tmp_path: Path, corpus: Path
) -> None:
    index = Index.open(tmp_path / "index", create=True, model=MODEL, exact_terms="off")
    index.ingest([corpus])
    stored = index.store.db.execute("SELECT value FROM state WHERE key = 'settings'").fetchone()[0]
    older = json.loads(stored)
    del older["exact_terms"]  # settings written before the field existed
    index.store.db.execute(
        "UPDATE state SET value = ? WHERE key = 'settings'", (json.dumps(older),)
    )
    index.store.db.commit()
    index.close()
    reopened = Index.open(tmp_path / "index")
    assert reopened.settings.exact_terms == "off"  # queries analyzed as its chunks were
    arabic = "إنما الأعمال بالنيات"
    assert not any(
        t.startswith("=") for t in reopened.terms(reopened.matching_key(arabic, "ar"), "ar")
    )

    report = reopened.reanalyze()
    assert report.changed == 1  # the Arabic document; English terms stay stems only
    terms = {terms for _, terms, _ in rows(reopened).values()}
    assert any("=" in each for each in terms)
    assert Index.open(tmp_path / "index").settings.exact_terms == "auto"
    assert reopened.search("بالنيات", k=1, mode="sparse")[0].source.endswith("prayer.txt")


def test_quranic_spelling_is_matched_by_standard_spelling(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "fatiha.txt").write_text("ٱلْحَمْدُ لِلَّهِ رَبِّ ٱلْعَٰلَمِينَ ٱلرَّحْمَٰنِ ٱلرَّحِيمِ", encoding="utf-8")
    (folder / "other.txt").write_text("قال رسول الله صلى الله عليه وسلم", encoding="utf-8")
    index = Index.open(tmp_path / "index", create=True, model=MODEL, orthography="standard")
    index.ingest([folder])
    assert not index.search("العالمين", k=1, mode="sparse")  # the dagger alef was dropped
    report = index.reanalyze()  # today's orthography: auto
    assert (report.changed, index.settings.orthography) == (1, "auto")
    assert index.search("العالمين", k=1, mode="sparse")[0].source.endswith("fatiha.txt")


URDU = (
    "پانی سو درجے پر ابلتا ہے اور برف صفر درجے پر پگھلتی ہے۔",
    "بلیاں چھوٹے پالتو جانور ہیں جو دن کا زیادہ حصہ سوتی ہیں۔",
    "بھاپ کے انجن ابتدائی ریل گاڑیاں کھینچتے تھے۔",
)


def test_a_rebuilt_tokenizer_is_noticed_and_reanalysis_recuts_the_pieces(
    tmp_path: Path, monkeypatch, caplog
) -> None:
    from ragkit.pipeline import stages
    from ragkit.store import tokenizers
    from ragkit.tokenize import TrainingOptions, prepare_texts, tokenizer_for, train

    folder = tmp_path / "corpus"
    folder.mkdir()
    for i, text in enumerate(URDU):
        (folder / f"ur{i}.txt").write_text(text, encoding="utf-8")
    (folder / "en.txt").write_text("Steam locomotives pulled early trains.", encoding="utf-8")
    index = Index.open(tmp_path / "idx", create=True, model=MODEL)
    index.ingest([folder])
    shipped = tokenizer_for("ur").fingerprint
    assert tokenizers.read(index.store.db) == {"ur": [shipped]}  # English terms are stems
    assert index.store.stale_tokenizers() == {}

    # An upgrade ships another Urdu model: a small one trained here on the same sentences.
    rebuilt = tmp_path / "tokenizers"
    rebuilt.mkdir()
    texts = list(prepare_texts(URDU * 20, "ur", normalized=True))
    (rebuilt / "ur.model").write_bytes(train(texts, TrainingOptions(vocab_size=120), "ur-new"))
    monkeypatch.setenv("RAGKIT_TOKENIZERS", str(rebuilt))
    tokenizer_for.cache_clear()
    stages._tokenizer.cache_clear()
    try:
        with caplog.at_level("WARNING"):
            reopened = Index.open(tmp_path / "idx")
        assert "sparse pieces of ur were cut by another tokenizer" in caplog.text
        assert reopened.store.stale_tokenizers() == {"ur": [shipped]}
        doctor = CliRunner().invoke(app, ["doctor", "--index", str(tmp_path / "idx")])
        assert doctor.exit_code == 0 and "--reanalyze" in doctor.stdout, doctor.stdout

        report = reopened.reanalyze()
        assert report.changed == len(URDU)  # every Urdu chunk re-cut into the new pieces
        new = tokenizer_for("ur").fingerprint
        assert tokenizers.read(reopened.store.db) == {"ur": [new]}
        assert reopened.store.stale_tokenizers() == {}
        hits = reopened.search("بلیاں سوتی ہیں", k=3, mode="sparse")
        assert hits and hits[0].source.endswith("ur1.txt")
        doctor = CliRunner().invoke(app, ["doctor", "--index", str(tmp_path / "idx")])
        assert "tokenizer" not in doctor.stdout, doctor.stdout
    finally:
        tokenizer_for.cache_clear()
        stages._tokenizer.cache_clear()


def test_an_index_without_a_tokenizer_record_gets_a_doctor_note(tmp_path: Path) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "ur.txt").write_text(URDU[0], encoding="utf-8")
    index = Index.open(tmp_path / "idx", create=True, model=MODEL)
    index.ingest([folder])
    index.store.db.execute("DELETE FROM state WHERE key = 'tokenizers'")  # built before
    doctor = CliRunner().invoke(app, ["doctor", "--index", str(tmp_path / "idx")])
    assert doctor.exit_code == 0
    assert "pieces of ur was not recorded" in " ".join(doctor.stdout.split()), doctor.stdout


PASHTO = "پښتو د افغانستان او پاکستان یوه لویه ژبه ده چې په عربي لیکدود لیکل کېږي."


def test_documents_decided_by_older_language_rules_get_a_note_until_reanalyzed(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "ps.txt").write_text(PASHTO, encoding="utf-8")
    index = Index.open(tmp_path / "idx", create=True, model=MODEL)
    index.ingest([folder])
    assert language_rules.read(index.store.db) == RULES_VERSION
    assert language_rules.notes("idx", index.store.db) == []
    assert index.store.languages() == {("Arab", "ps"): len(PASHTO)}

    with index.store.db as db:  # as an earlier release stored it: Pashto read as Persian
        db.execute("UPDATE documents SET language = 'fa'")
        db.execute("DELETE FROM state WHERE key = 'language_rules'")
    (folder / "more.txt").write_text("ئۇيغۇر تىلى", encoding="utf-8")
    index.ingest([folder])  # a commit on the old index: its old documents stay old
    assert language_rules.read(index.store.db) == 0
    doctor = CliRunner().invoke(app, ["doctor", "--index", str(tmp_path / "idx")])
    assert doctor.exit_code == 0
    said = " ".join(doctor.stdout.split())
    assert "languages of its fa documents were decided by older rules" in said, said
    assert "--reanalyze` once" in said

    report = index.reanalyze()
    assert report.languages == {"fa → ps": 1}
    assert language_rules.read(index.store.db) == RULES_VERSION
    assert language_rules.notes("idx", index.store.db) == []
