"""Each document records its language decision; short ones take the collection's language."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from conftest import MODEL
from ragkit import Index
from ragkit.cli import app

TITLES = [
    "Bisection Routine (Algorithm 4)",
    "Fresnel Integrals (Algorithm 213)",
    "FIND (Algorithm 65)",
    "Zebra stripes",
    "Quokka tuesday",
]
ABSTRACTS = [
    (
        "The procedure finds a root of a continuous function by halving the interval that "
        "brackets the sign change until it is shorter than the requested tolerance."
    ),
    (
        "Numerical evaluation of the Fresnel integrals for large arguments uses asymptotic "
        "expansions, while small arguments are handled with a rapidly converging power series."
    ),
]


def test_short_titles_take_the_collections_language(tmp_path: Path) -> None:
    records = [{"id": f"t{i}", "text": title} for i, title in enumerate(TITLES)]
    records += [{"id": f"a{i}", "text": text} for i, text in enumerate(ABSTRACTS)]
    corpus = tmp_path / "cacm.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    index = Index.open(tmp_path / "index", create=True)
    report = index.ingest([corpus])
    assert index.settings.embedding_model == MODEL  # auto: the collection is English
    decisions = {key: index.store.language_decision(key) for key in index.store.document_hashes()}
    assert {d.language for d in decisions.values() if d} == {"en"}
    methods = {key.rsplit("#", 1)[1]: d.method for key, d in decisions.items() if d}
    assert methods["a0"] == "statistical" and decisions[f"{corpus}#a0"].confidence > 0.9
    assert report.languages_from_collection == 0  # short Latin text defaults to English anyway
    assert {methods[f"t{i}"] for i in range(len(TITLES))} <= {"profile", "default"}
    hits = index.search("zebra stripes", k=1, mode="sparse")
    assert hits and hits[0].document_id == "t3"

    key = f"{corpus}#t2"
    result = CliRunner().invoke(
        app, ["info", "--index", str(index.store.folder), "--document", key]
    )
    assert result.exit_code == 0, result.output
    assert "language en (Latn)" in result.output and "decided by" in result.output


def test_a_short_document_in_a_french_collection_is_french(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "long.txt").write_text(
        "Le routeur choisit pour chaque paquet le préfixe le plus long de sa table de routage, "
        "puis il transmet le paquet à l'interface correspondante sans attendre.",
        encoding="utf-8",
    )
    (folder / "short.txt").write_text("Routine 4", encoding="utf-8")
    index = Index.open(tmp_path / "index", create=True, model=MODEL)
    report = index.ingest([folder])
    short = index.store.language_decision(str(folder / "short.txt"))
    assert short is not None and (short.language, short.method) == ("fr", "profile")
    assert report.languages_from_collection == 1


def test_mixed_collection_records_each_documents_language(tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parents[2] / "examples"
    index = Index.open(tmp_path / "index", create=True)
    report = index.ingest([examples])
    assert report.model_choice.startswith("multilingual-e5-small (share of the text by language:")
    for key in index.store.document_hashes():
        decision = index.store.language_decision(key)
        assert decision is not None
        folder = Path(key.split("#")[0]).parent.name
        expected = key.split("#")[1][:2] if "#" in key else folder
        if expected in {"en", "ar", "fa", "am"}:
            assert decision.language == expected, key
            assert decision.method in {"statistical", "letters", "words"}, key
    # "يحيى بن سعيد الأنصاري" typed on a Persian keyboard, without diacritics
    hits = index.search("یحیی بن سعید الانصاری", k=1, mode="sparse")
    assert hits and hits[0].source.endswith("ar/bukhari-intentions-revelation.txt")
