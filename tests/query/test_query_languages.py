"""Queries are analyzed with the languages the index holds, never with one it does not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import MODEL
from ragkit import Index
from ragkit.cli import app
from ragkit.normalize import detect_language
from ragkit.pipeline.languages import query_languages

ENGLISH = {("Latn", "en"): 50_000}
SHORT_QUERIES = ["zebra stripes", "router prefix", "quokka tuesday", "doc attribute", "FIND"]


@pytest.mark.parametrize("query", SHORT_QUERIES)
def test_an_english_index_analyzes_every_latin_query_as_english(query: str) -> None:
    assert query_languages(query, ENGLISH) == ["en"]


def test_other_scripts_and_mixed_indexes() -> None:
    mixed = {("Latn", "en"): 900, ("Latn", "fr"): 500, ("Arab", "ar"): 700, ("Zyyy", "und"): 9}
    assert query_languages("router prefix", mixed) == ["en", "fr"]  # too short to tell apart
    long_french = "le routeur choisit le préfixe le plus long pour chaque paquet reçu ici"
    assert query_languages(long_french, mixed) == ["fr"]
    assert query_languages("مرحبا بكم", mixed) == ["ar"]
    assert query_languages("ሰላም", mixed) == ["en"]  # a script the index lacks: its main language
    assert query_languages("2024", {}) == [detect_language("2024")]  # empty index: the query


@pytest.fixture
def english_index(tmp_path: Path) -> Index:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "zebra.txt").write_text(
        "Zebra stripes confuse biting flies, which fail to land on striped hides.",
        encoding="utf-8",
    )
    (folder / "router.txt").write_text(
        "A router forwards each packet by the longest matching prefix in its table.",
        encoding="utf-8",
    )
    (folder / "attributes.md").write_text(
        "# Attributes\n\nThe doc attribute of a function holds its documentation string.",
        encoding="utf-8",
    )
    index = Index.open(tmp_path / "index", create=True, model=MODEL)
    index.ingest([folder])
    return index


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("zebra stripes", "zebra.txt"),
        ("router prefix", "router.txt"),
        ("doc attribute", "attributes.md"),
    ],
)
def test_two_word_queries_match_in_sparse_mode(
    english_index: Index, query: str, expected: str
) -> None:
    hits = english_index.search(query, k=3, mode="sparse")
    assert hits and Path(hits[0].source).name == expected


def test_language_argument_and_cli_flag(english_index: Index) -> None:
    assert english_index.search("zebra stripes", k=1, mode="sparse", language="en")
    folder = str(english_index.store.folder)
    args = ["query", "zebra stripes", "--index", folder, "--mode", "sparse", "--lang", "en"]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert (
        result.exit_code == 0 and Path(json.loads(result.output)[0]["source"]).name == "zebra.txt"
    )
    result = CliRunner().invoke(app, ["query", "zebra", "--index", folder, "--lang", "fr"])
    assert result.exit_code == 0 and "holds no 'fr' documents (en)" in result.output
