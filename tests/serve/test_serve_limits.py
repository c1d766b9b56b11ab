"""``ragkit serve`` at its edges (issue 43, items 4-6): non-finite numbers are 422 (never a
500), bodies and queries have limits stated in the OpenAPI schema, and an index folder deleted
and built again is reopened."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ragkit import Index
from ragkit.serve.app import create_app
from ragkit.serve.indexes import IndexLocation, ServedIndexes
from ragkit.serve.limits import Limits

MODEL = "all-minilm-l6-v2"
NON_FINITE = [
    '{"query": "water", "k": NaN}',
    '{"query": "water", "k": Infinity}',
    '{"query": "water", "k": -Infinity}',
    '{"query": Infinity}',
    '{"query": "water", "filters": {"year": NaN}}',
    '{"query": "water", "filters": {"year": {">=": Infinity}}}',
    '{"query": "water", "filters": {"year": [1, NaN]}}',
]


def _build(folder: Path, text: str) -> Path:
    docs = folder / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    (docs / "a.txt").write_text(text, encoding="utf-8")
    with Index.open(folder / "index", create=True, model=MODEL) as index:
        index.ingest([docs])
    return folder / "index"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    index = _build(tmp_path_factory.mktemp("limits"), "Water boils at 100 degrees Celsius.")
    served = ServedIndexes([IndexLocation("docs", index)], warm=False)
    with TestClient(create_app(served, limits=Limits(4096, 50))) as client:
        yield client
    served.close()


@pytest.mark.parametrize("body", NON_FINITE)
def test_non_finite_numbers_are_422(client: TestClient, body: str) -> None:
    answer = client.post("/search", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == 422, answer.text
    problems = answer.json()["detail"]
    assert problems and all(problem["loc"] and "input" not in problem for problem in problems)


def test_a_validation_error_never_echoes_its_input(client: TestClient) -> None:
    answer = client.post("/search", json={"query": "water", "k": "many", "mode": "fuzzy"})
    assert answer.status_code == 422
    assert all("input" not in problem for problem in answer.json()["detail"])


def test_body_and_query_limits(client: TestClient) -> None:
    big = client.post("/search", json={"query": "water " * 2000})
    assert big.status_code == 413 and "--max-body-bytes" in big.json()["detail"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield b'{"query": "'
        for _ in range(100):
            yield b"water " * 10
        yield b'"}'

    streamed = client.post(
        "/search", content=chunks(), headers={"content-type": "application/json"}
    )
    assert streamed.status_code == 413
    long = client.post("/search", json={"query": "water " * 20})
    assert long.status_code == 422 and "--max-query-chars" in long.json()["detail"]
    assert client.post("/search", json={"query": "water"}).status_code == 200
    schema = client.get("/openapi.json").json()
    assert (
        schema["components"]["schemas"]["SearchRequest"]["properties"]["query"]["maxLength"] == 50
    )
    assert "4,096 bytes" in schema["info"]["description"]


def test_a_rebuilt_index_folder_is_reopened(tmp_path: Path) -> None:
    index = _build(tmp_path / "first", "Water boils at 100 degrees Celsius.")
    served = ServedIndexes([IndexLocation("docs", index)], warm=False)
    client = TestClient(create_app(served))
    assert "Water" in client.post("/search", json={"query": "water"}).json()["hits"][0]["text"]
    shutil.rmtree(index)
    answer = client.post("/search", json={"query": "water"})
    assert answer.status_code == 404 and "no ragkit index there any more" in answer.text
    rebuilt = _build(tmp_path / "second", "Glaciers carve deep valleys in mountains.")
    shutil.move(rebuilt, index)
    hits = client.post("/search", json={"query": "glaciers"}).json()["hits"]
    assert [hit["text"] for hit in hits] == ["Glaciers carve deep valleys in mountains."]
    served.close()
