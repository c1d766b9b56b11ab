"""The default embedding model ``auto``: chosen once per index from its first documents' languages
(real bundled models, real SQLite and FAISS)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import MODEL
from ragkit import Index, RagkitError
from ragkit.cli import app
from ragkit.embed.models import AUTO_MODEL, ENGLISH_MODEL, MULTILINGUAL_MODEL


@pytest.fixture
def english(tmp_path: Path) -> Path:
    folder = tmp_path / "english"
    folder.mkdir()
    (folder / "wings.txt").write_text(
        "Swept wings delay the drag rise of aircraft near the speed of sound.", encoding="utf-8"
    )
    (folder / "boilers.txt").write_text(
        "Steam locomotives burned coal to boil the water in their boilers.", encoding="utf-8"
    )
    return folder


def test_english_documents_choose_the_english_model(tmp_path: Path, english: Path) -> None:
    index = Index.open(tmp_path / "index", create=True)
    assert index.settings.embedding_model == AUTO_MODEL
    assert index.search("wings") == []  # nothing ingested, nothing to embed the query with
    with pytest.raises(RagkitError, match="chosen from the documents of the first ingest"):
        index.encoder  # noqa: B018
    report = index.ingest([english])
    assert index.settings.embedding_model == ENGLISH_MODEL
    assert report.model_choice.startswith(f"{ENGLISH_MODEL} (100.0 % of the text is English")
    assert not index.ingest([english]).model_choice  # chosen once, at the first ingest
    assert index.search("aircraft wing drag", k=1)[0].source.endswith("wings.txt")
    index.close()
    reopened = Index.open(tmp_path / "index")
    assert reopened.settings.embedding_model == ENGLISH_MODEL
    manifest = json.loads((tmp_path / "index" / "MANIFEST.json").read_text())
    assert manifest["embedding_model"] == ENGLISH_MODEL
    reopened.close()


def test_other_languages_choose_the_multilingual_model(tmp_path: Path, corpus: Path) -> None:
    result = CliRunner().invoke(app, ["ingest", str(corpus), "--index", str(tmp_path / "i")])
    assert result.exit_code == 0, result.output
    assert f"embedding model: {MULTILINGUAL_MODEL} (share of the text by language: en" in (
        result.output
    )
    assert "ar " in result.output.split("share of the text by language:")[1].splitlines()[0]
    index = Index.open(tmp_path / "i")
    assert index.settings.embedding_model == MULTILINGUAL_MODEL  # the corpus holds Arabic
    assert index.search("الأعمال بالنيات", k=1)[0].source.endswith("prayer.txt")
    index.close()


def test_english_model_warns_about_other_languages(
    tmp_path: Path, corpus: Path, caplog: pytest.LogCaptureFixture
) -> None:
    index = Index.open(tmp_path / "i", create=True, model=MODEL)
    with caplog.at_level(logging.WARNING, logger="ragkit.index"):
        index.ingest([corpus])
    (warning,) = [r.getMessage() for r in caplog.records if "not English" in r.getMessage()]
    assert "(ar)" in warning and MULTILINGUAL_MODEL in warning
    index.close()


def test_an_explicit_model_is_kept(tmp_path: Path, english: Path) -> None:
    index = Index.open(tmp_path / "i", create=True, model=MULTILINGUAL_MODEL)
    index.ingest([english])
    assert index.settings.embedding_model == MULTILINGUAL_MODEL
    index.close()
    assert Index.open(tmp_path / "i", model=AUTO_MODEL).settings.embedding_model == (
        MULTILINGUAL_MODEL
    )
