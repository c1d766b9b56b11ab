"""Every filter operator on both backends — the folder store (SQL) and a Milvus server (an
expression, then the exact check) — giving the same documents (issue 53, item 4): one record set
with list-valued metadata, missing keys, nulls, text numbers and ISO dates; injection attempts
that stay values; limits refused as input; a random agreement of the Python reference, the
folder and Milvus; an index written before Milvus recorded its metadata kinds."""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_filter_language import random_filter

from conftest import MODEL, cli
from ragkit import Index, RagkitError
from ragkit.store.filters import matches

RECORDS: dict[str, tuple[str, dict[str, Any]]] = {
    "a": ("The river a floods the valley.",
          {"year": 2020, "tags": ["x", "y"], "draft": True, "date": "1969-07-21T20:17:40"}),
    "b": ("The river b floods the meadow.",
          {"year": "2021", "tags": ["X"], "n": None, "date": "1972-12-11T19:54:58Z"}),
    "c": ("The river c floods the town.",
          {"year": 2019.5, "tags": "x y", "page": "100", "date": "1989-11-09T17:53:00+05:00"}),
    "d": ("The river d floods the fields.", {"year": [1999, "2022"], "draft": 1, "page": " 90 "}),
    "e": ("The river e floods the road.",
          {"number": -2, "name": 'say "hi"', "obj": {"a": 1}, "draft": 0, "tags": [-2, None],
           'q"]': "or 1==1"}),
    "f": ("The river f floods the mill.", {}),
    "h": ("The river h floods the bridge.", {"tags": [], "name": "", "year": None}),
}  # fmt: skip
ALL = {*RECORDS, "g.md"}
BACKENDS = ["folder", "milvus"]


@pytest.fixture(scope="module", params=BACKENDS)
def index(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, milvus_server: str
) -> Iterator[Index]:
    """RECORDS (c in Persian, the others in English) and one file, ``sub/g.md``."""
    folder = tmp_path_factory.mktemp(request.param)
    (folder / "docs" / "sub").mkdir(parents=True)
    (folder / "docs" / "sub" / "g.md").write_text("The river g floods the harbour.\n")
    where = folder / "index" if request.param == "folder" else (
        f"milvus://{milvus_server}/f_{uuid.uuid4().hex[:12]}"
    )  # fmt: skip
    with Index.open(where, create=True, model=MODEL) as opened:
        records = [{"id": key, "text": text, "metadata": metadata,
                    "language": "fa" if key == "c" else "en"}
                   for key, (text, metadata) in RECORDS.items()]  # fmt: skip
        assert not opened.add(records).skipped
        opened.ingest([folder / "docs"])
        yield opened


def found(index: Index, filters: dict[str, Any]) -> set[str]:
    """The documents a filtered search finds (a file by its name)."""
    hits = index.search("river floods", k=20, mode="sparse", filters=filters, collapse=False)
    return {Path(hit.document_id).name for hit in hits}


TABLE: list[tuple[dict[str, Any], set[str]]] = [
    ({}, ALL),
    ({"year": 2020}, {"a"}),
    ({"year": "2021"}, {"b"}),  # text
    ({"year": 2021}, set()),  # a number matches numbers only
    ({"year": "2022"}, {"d"}),  # an element of a list
    ({"year": {"$eq": 1999}}, {"d"}),
    ({"year": {"$ne": 2020}}, ALL - {"a"}),
    ({"year": None}, {"e", "f", "h", "g.md"}),  # null or missing
    ({"year": {"$ne": None}}, {"a", "b", "c", "d"}),
    ({"year": {"$in": [2020, "2021"]}}, {"a", "b"}),
    ({"year": {"$nin": [2020, "2021"]}}, ALL - {"a", "b"}),
    ({"year": {"$in": []}}, set()),
    ({"year": {"$nin": []}}, ALL),
    ({"year": {"$gte": 2000}}, {"a", "b", "c", "d"}),  # "2021", "2022" spell numbers
    ({"year": {"$gt": 2019.5, "$lt": 2021}}, {"a", "d"}),  # each condition: any element
    ({"year": {"<": 2000}}, {"d"}),
    ({"page": {">": 95}}, {"c"}),
    ({"page": {"$lte": "95"}}, {"d"}),  # " 90 " spells a number
    ({"date": {"$gt": "1972-12-11T19:54:58"}}, {"c"}),  # naive is UTC; +05:00 is 12:53 UTC
    ({"date": {"$gte": "1972-12-11T19:54:58"}}, {"b", "c"}),
    ({"date": {"$lt": "1970-01-01"}}, {"a"}),
    ({"date": {"$gt": None}}, set()),
    ({"draft": {"$exists": True}}, {"a", "d", "e"}),
    ({"draft": {"$exists": False}}, ALL - {"a", "d", "e"}),
    ({"n": {"$exists": True}}, {"b"}),  # present, though null
    ({"draft": True}, {"a"}),  # 1 is no bool
    ({"draft": 1}, {"d"}),
    ({"draft": "true"}, {"a"}),
    ({"draft": 0}, {"e"}),
    ({"tags": "x"}, {"a"}),
    ({"tags": ["X", -2]}, {"b", "e"}),
    ({"tags": {"$contains": "x"}}, {"a", "c"}),  # an element, or a substring
    ({"tags": {"$icontains": "x"}}, {"a", "b", "c"}),
    ({"tags": None}, {"d", "e", "f", "g.md"}),  # an element null counts
    ({"tags": {"$empty": True}}, {"d", "f", "h", "g.md"}),
    ({"name": {"$empty": False}}, {"e"}),
    ({"name": 'say "hi"'}, {"e"}),
    ({'q"]': "or 1==1"}, {"e"}),  # a key Milvus is never given: checked on the client
    ({"language": "fa"}, {"c"}),
    ({"language": {"$ne": "fa"}}, ALL - {"c"}),
    ({"id": {"$in": ["a", "b"]}}, {"a", "b"}),
    ({"id": {"$contains": "g.md"}}, {"g.md"}),  # a file's id is its key
    ({"source": "sub/*.md"}, {"g.md"}),
    ({"source": {"$ne": "*.md"}}, set(RECORDS)),
    ({"source": "<records>"}, set(RECORDS)),
    ({"content": "The river a floods the valley."}, {"a"}),
    ({"content": {"$contains": "the town"}}, {"c"}),
    ({"content": {"$icontains": "THE MILL"}}, {"f"}),
    ({"content": {"$nin": ["The river a floods the valley."]}}, ALL - {"a"}),
    ({"$or": [{"year": 2020}, {"draft": 1}]}, {"a", "d"}),
    ({"$and": [{"tags": {"$contains": "x"}}, {"$not": {"year": 2020}}]}, {"c"}),
    ({"$not": {"$or": [{"year": {"$exists": True}}, {"draft": {"$exists": True}}]}}, {"f", "g.md"}),
    ({"yaer": {"$ne": 1}}, ALL),  # a negative condition on an unknown key is no mistake
]


@pytest.mark.parametrize(("filters", "expected"), TABLE, ids=[json.dumps(f) for f, _ in TABLE])
def test_every_operator(index: Index, filters: dict[str, Any], expected: set[str]) -> None:
    assert found(index, filters) == expected


HOSTILE = ['" or 1==1 or "', '"]', "') or (id > 0", 'x\\" || id >= 0 || \\"', "\n", "{p0}", "*"]


@pytest.mark.parametrize("value", HOSTILE)
def test_injection_attempts_stay_values(index: Index, value: str) -> None:
    assert found(index, {"name": value}) == set()
    assert found(index, {"language": value, "source": value}) == set()
    assert found(index, {"name": {"$ne": value}}) == ALL
    assert found(index, {"tags": {"$contains": value}}) == set()
    assert found(index, {value: {"$exists": False}}) == ALL
    with pytest.raises(RagkitError, match="no document has that metadata field"):
        found(index, {value: "x"})


def test_limits_are_input_errors(index: Index) -> None:
    for filters, said in [
        ({"language": ["en"] * 201}, "filters with 201 values: at most 200"),
        ({"source": "x" * 5000}, "at most 4,096"),
        ({"year": {"$gt": "soon"}}, "compare with a number or an ISO 8601 date"),
        ({"yaer": 2020}, "'yaer': no document has that metadata field; .*draft.*year"),
        ({"$or": [{"yaer": 1}, {"year": 1000}]}, "'yaer': no document has"),
    ]:
        with pytest.raises(RagkitError, match=said) as refused:
            found(index, filters)
        assert refused.value.exit_code == 2 and refused.value.http_status == 422
    assert found(index, {"language": "x" * 60_000}) == set()


def test_the_reference_the_folder_and_milvus_agree(index: Index) -> None:
    """Random filters: the Python reference over the stored rows, and the backend under test;
    both backends run it, so each agrees with the reference."""
    rows = _stored_rows(index)
    rng = random.Random(4)
    for _ in range(40):
        filters = random_filter(rng)
        try:
            expected = {name for name, row in rows.items() if matches(filters, row)}
        except RagkitError:
            continue  # refused: the table above covers refusals
        try:
            assert found(index, filters) == expected, filters
        except RagkitError as error:  # nothing matched and a key is mistyped
            assert not expected and "no document has" in str(error), filters


def _stored_rows(index: Index) -> dict[str, dict[str, Any]]:
    """Each document as the filters see it, read back whole."""
    documents = index.store.stored_documents(entry.key for entry in index.documents())
    return {
        Path(item.document.external_id or item.document.key).name: {
            "key": item.document.key,
            "external_id": item.document.external_id,
            "source": item.document.source,
            "language": item.document.language,
            "metadata": item.document.metadata,
            "text": item.document.text,
        }
        for item in documents
    }


def test_the_cli_takes_every_form(index: Index) -> None:
    where = str(getattr(index.store, "folder", index.store.location))
    command = ["query", "river floods", "--index", where, "--mode", "sparse", "--json", "-k", "20",
               "--no-collapse"]  # fmt: skip
    for filters, expected in [
        (["year=2020", "year=2022"], {"a", "d"}),
        (["year!=2020,2021"], ALL - {"a", "b"}),
        (["tags~=x", "language!=fa"], {"a"}),
        (["exists:draft", "missing:n"], {"a", "d", "e"}),
        (["year>=2000", "date<1970-01-01"], {"a"}),  # different keys: all of them
        (["year>=2021", "year<2000"], {"b", "d"}),  # one key: any of them
        (['{"$or": [{"draft": 1}, {"tags": {"$icontains": "X"}}]}'], {"a", "b", "c", "d"}),
    ]:
        flags = [part for each in filters for part in ("--filter", each)]
        done = cli(*command, *flags)
        assert done.returncode == 0, done.stderr
        assert {Path(hit["document_id"]).name for hit in json.loads(done.stdout)} == expected
    for item, said in [
        ('{"year": ', "not JSON"),
        ('{"year": {"$regex": 1}}', "no operator '$regex'"),
        ("year", "KEY=VALUE"),
        ("yaer=1", "no document has"),
    ]:
        done = cli(*command, "--filter", item)
        assert done.returncode == 2 and said in done.stderr, done.stderr


def test_http_takes_the_language(index: Index) -> None:
    from fastapi.testclient import TestClient

    from ragkit.serve.app import create_app
    from ragkit.serve.indexes import ServedIndexes, parse_locations

    where = str(getattr(index.store, "folder", index.store.location))
    served = ServedIndexes(parse_locations([where]), warm=False)
    try:
        client = TestClient(create_app(served), raise_server_exceptions=False)
        body = {"query": "river floods", "mode": "sparse", "k": 20, "collapse": False}
        filters = {"$or": [{"tags": {"$contains": "x"}}, {"draft": {"$exists": True}}]}
        answer = client.post("/search", json=body | {"filters": filters})
        assert answer.status_code == 200, answer.text
        assert {hit["document_id"] for hit in answer.json()["hits"]} == {"a", "c", "d", "e"}
        bad = client.post("/search", json=body | {"filters": {"year": {"$gt": "soon"}}})
        assert bad.status_code == 422 and "ISO 8601" in bad.json()["detail"]
    finally:
        served.close()


def test_milvus_before_its_metadata_record(index: Index) -> None:
    """An index Milvus wrote before it recorded metadata kinds: every filter still gives the
    folder's answer (conservative expressions, keys read for the mistyped-key message), and
    its next commit records the kinds of every document."""
    store = index.store
    if not hasattr(store, "metadata_kinds"):
        pytest.skip("the folder store keeps no record")
    state = store.collections["state"]
    store.client.delete(state, filter='name like "metadata%"')
    store.commit([])  # a new generation: readers read the record again
    assert store._kinds_now() is None
    for filters, expected in TABLE[:25]:
        assert found(index, filters) == expected, filters
    with pytest.raises(RagkitError, match="'yaer': no document has .*draft"):
        found(index, {"yaer": 1})
    index.add([{"id": "i", "text": "The river i floods the quay.", "metadata": {"new": [1]}}])
    kinds = store._kinds_now()
    assert kinds is not None and kinds["tags"] == {"list", "text"} and kinds["new"] == {"list"}
    index.delete(["i"])
