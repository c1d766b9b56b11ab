"""``ragkit serve`` over real HTTP: a started server process on a free port (one per module)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import httpx
import pytest
from serving import served
from typer.testing import CliRunner

from conftest import MODEL
from ragkit import Index
from ragkit.cli import app
from ragkit.errors import RagkitError
from ragkit.serve import parse_locations


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    files = tmp_path_factory.mktemp("corpus")
    (files / "water.md").write_text("# Water\n\nWater boils at 100 degrees Celsius at sea level.")
    (files / "cats.txt").write_text("Cats are small domesticated carnivores. They sleep a lot.")
    (files / "prayer.txt").write_text("إنما الأعمال بالنيات وإنما لكل امرئ ما نوى")
    folder = tmp_path_factory.mktemp("served") / "index"
    with Index.open(folder, create=True, model=MODEL, chunker="sentence") as index:
        index.ingest([files])
    return folder


@pytest.fixture(scope="module")
def server(folder: Path) -> Iterator[httpx.Client]:
    """``ragkit serve`` over the index twice (named ``main`` and ``again``)."""
    with served(f"main={folder}", f"again={folder}") as client:
        yield client


@pytest.mark.slow  # a server process loading the model: ~30 s on a busy 2-core machine
def test_search_over_http_matches_the_python_api(server: httpx.Client, folder: Path) -> None:
    body = {"query": "At what temperature does water boil?", "index": "main", "k": 3}
    response = server.post("/search", json=body)
    assert response.status_code == 200
    with Index.open(folder) as index:
        expected = [asdict(hit) for hit in index.search(body["query"], k=3)]
        sparse = [asdict(hit) for hit in index.search("cats", k=2, mode="sparse")]
    assert response.json()["hits"] == expected
    body = {"query": "cats", "index": "again", "k": 2, "mode": "sparse"}
    assert server.post("/search", json=body).json()["hits"] == sparse
    filtered = {"query": "water", "index": "main", "filters": {"language": "ar"}}
    assert {hit["language"] for hit in server.post("/search", json=filtered).json()["hits"]} == {
        "ar"
    }


@pytest.mark.slow  # a server process loading the model: ~30 s on a busy 2-core machine
def test_indexes_health_docs_and_errors(server: httpx.Client, folder: Path) -> None:
    states = [{"name": name, "state": "ok", "detail": ""} for name in ("main", "again")]
    assert server.get("/health").json() == {"status": "ok", "indexes": 2, "states": states}
    listed = server.get("/indexes").json()
    assert [(each["name"], each["path"], each["embedding_model"]) for each in listed] == [
        ("main", str(folder), MODEL),
        ("again", str(folder), MODEL),
    ]
    assert server.get("/docs").status_code == 200
    assert "/search" in server.get("/openapi.json").json()["paths"]
    unknown = server.post("/search", json={"query": "water", "index": "nope"})
    assert unknown.status_code == 404 and "main, again" in unknown.json()["detail"]
    unnamed = server.post("/search", json={"query": "water"})
    assert unnamed.status_code == 404 and "name one of" in unnamed.json()["detail"]
    bad_mode = server.post("/search", json={"query": "water", "index": "main", "mode": "fuzzy"})
    assert bad_mode.status_code == 422
    empty = server.post("/search", json={"query": " ?", "index": "main"})
    assert empty.status_code == 422 and "empty query" in empty.text
    body = {"query": "water", "index": "main", "language": "xx"}
    unknown_language = server.post("/search", json=body)
    assert unknown_language.status_code == 422
    assert "language 'xx': not a language ragkit knows" in unknown_language.text
    body["language"] = "ar"
    assert server.post("/search", json=body).status_code == 200


@pytest.mark.slow  # a server process loading the model: ~30 s on a busy 2-core machine
def test_docs_pages_load_their_assets_from_the_server(server: httpx.Client) -> None:
    """/docs (Swagger UI) and /redoc work offline: no URL on another host, and every script,
    stylesheet and icon they name is a path on this server answering with its content."""
    kinds = {".js": "javascript", ".css": "text/css", ".png": "image/png"}
    pages = {"/docs": ("SwaggerUIBundle", {".js", ".css"}), "/redoc": ("Redoc", {".js"})}
    for page, (library, needed) in pages.items():
        response = server.get(page)
        assert response.status_code == 200 and "http" not in response.text
        assets = re.findall(r'(?:src|href)="([^"]+)"', response.text)
        assert needed <= {Path(url).suffix for url in assets}
        for url in assets:
            assert url.startswith("/") and not url.startswith("//"), url
            asset = server.get(url)
            assert asset.status_code == 200, url
            assert kinds[Path(url).suffix] in asset.headers["content-type"], url
            if url.endswith(".js"):
                assert library in asset.text, url


@pytest.mark.slow  # a server process loading the model: ~30 s on a busy 2-core machine
def test_a_generation_committed_after_start_is_served(
    server: httpx.Client, folder: Path, tmp_path: Path
) -> None:  # the last test of the module: it adds a document
    body = {"query": "penguins huddle together in Antarctic winter", "index": "main", "k": 1}
    assert "penguins" not in server.post("/search", json=body).text
    extra = tmp_path / "more" / "penguins.txt"
    extra.parent.mkdir()
    extra.write_text("Emperor penguins huddle together through the Antarctic winter.")
    before = server.get("/indexes").json()[1]
    with Index.open(folder) as index:
        index.ingest([extra])
    found = server.post("/search", json=body).json()
    assert found["generation"] == before["generation"] + 1
    assert "penguins" in found["hits"][0]["text"]
    assert server.get("/indexes").json()[1]["documents"] == before["documents"] + 1


def test_names_and_missing_folders_are_one_line_errors(tmp_path: Path) -> None:
    assert [each.name for each in parse_locations([str(tmp_path / "docs"), "w=x"])] == [
        "docs",
        "w",
    ]
    with pytest.raises(RagkitError, match="two indexes named 'docs'"):
        parse_locations(["a/docs", "b/docs"])
    with pytest.raises(RagkitError, match="index name"):
        parse_locations(["bad name=x"])
    result = CliRunner().invoke(app, ["serve", str(tmp_path / "missing")])
    assert result.exit_code == 2 and "no ragkit index here" in result.output
