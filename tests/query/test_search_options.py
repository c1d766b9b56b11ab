"""Every per-query option is declared once, in :class:`ragkit.query.SearchOptions`: the CLI's
options, the HTTP schema's fields, the Python keywords and the framework components all come
from it, and a bad value is refused the same way everywhere."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import typer.main

from conftest import MODEL, cli
from ragkit import Index, RagkitError
from ragkit.cli import app
from ragkit.cli.search_options import FLAGS
from ragkit.integrations.langchain import SEARCH_OPTIONS
from ragkit.query import SearchOptions
from ragkit.query.options import choices
from ragkit.serve.schemas import SearchRequest

FIELDS = set(SearchOptions.model_fields)


def command_options(name: str) -> dict[str, list[str]]:
    """The parameters of ``ragkit NAME`` by name, with their flags."""
    group = typer.main.get_command(app)
    command = group.commands[name]  # type: ignore[attr-defined]
    return {param.name: list(param.opts) for param in command.params}


def test_cli_http_python_and_frameworks_take_every_option_from_the_model() -> None:
    query = command_options("query")
    assert FIELDS <= set(query)
    assert all(FLAGS[name][-1].split("/")[0] in query[name] for name in FIELDS)
    assert {"fusion", "feedback", "document_evidence", "phrase_evidence"} <= set(
        command_options("eval")
    )
    assert issubclass(SearchRequest, SearchOptions) and FIELDS <= set(SearchRequest.model_fields)
    schema = SearchRequest.model_json_schema()["properties"]
    assert schema["mode"]["enum"] == list(choices("mode"))
    keywords = set(inspect.signature(Index.search).parameters)
    assert keywords == {"self", "query", "options", "given"}  # the options, by SearchOptions
    assert set(SEARCH_OPTIONS) == {"filter"} | FIELDS - {"k", "filters"}


def test_a_bad_value_is_refused_alike(tmp_path: Path) -> None:
    index = Index.open(tmp_path / "index", create=True, model=MODEL)
    index.add([{"id": "a", "text": "Water boils at 100 degrees."}])
    for given, message in (
        ({"mode": "fuzzy"}, "search mode 'fuzzy': use one of hybrid, dense, sparse"),
        ({"feedback": "always"}, "feedback='always': use one of auto, off, sparse, dense, both"),
        ({"k": 0}, "k=0: ask for at least one hit"),
        ({"colapse": False}, "unknown search option(s) colapse; the options are k, mode"),
    ):
        with pytest.raises(RagkitError, match=message.replace("(", r"\(").replace(")", r"\)")):
            index.search("water", **given)
    result = cli("query", "water", "--index", str(tmp_path / "index"), "--mode", "fuzzy")
    assert result.returncode == 2 and "'fuzzy' is not one of 'hybrid', 'dense', 'sparse'" in (
        " ".join(result.stderr.split())
    )
    with pytest.raises(ValueError, match="Input should be 'hybrid', 'dense' or 'sparse'"):
        SearchRequest.model_validate({"query": "water", "mode": "fuzzy"})


def test_options_object_and_keywords_agree(tmp_path: Path) -> None:
    index = Index.open(tmp_path / "index", create=True, model=MODEL)
    index.add([{"id": str(n), "text": f"Water note {n}."} for n in range(5)])
    options = SearchOptions(k=2, mode="sparse")
    assert index.search("water", options) == index.search("water", k=2, mode="sparse")
    assert len(index.search("water", options, k=3)) == 3  # keywords win over the object


def test_dense_weight_weighs_the_two_lists_for_one_query(tmp_path: Path) -> None:
    index = Index.open(tmp_path / "index", create=True, model=MODEL, fusion="rrf")
    index.add(
        [
            {"id": "boil", "text": "Water boils at 100 degrees."},
            {"id": "kettle", "text": "Kettles heat a liquid until it bubbles."},
            {"id": "bread", "text": "Bread dough rises."},
        ]
    )
    dense = [h.key for h in index.search("water boiling", mode="dense")]
    assert [h.key for h in index.search("water boiling", dense_weight=1.0)] == dense
    only_bm25 = index.search("water boiling", dense_weight=0.0)
    assert only_bm25[0].key == "boil" and {h.score for h in only_bm25[1:]} == {0.0}
    with pytest.raises(RagkitError, match="dense_weight weighs weighted fusion"):
        index.search("water", dense_weight=0.5, fusion="rrf")
    with pytest.raises(RagkitError, match=r"dense_weight=1.5: give a number from 0"):
        index.search("water", dense_weight=1.5)
    result = cli("query", "water", "--index", str(tmp_path / "index"), "--dense-weight", "0")
    assert result.returncode == 0 and "boil" in result.stdout
