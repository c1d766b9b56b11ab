"""The filter language without an index (issue 53, item 4): its grammar and refusals, the folder
store's SQL agreeing with the Python reference on random filters, and Milvus expressions that
never carry a value in their text (templates) or only escaped (Milvus Lite's literals)."""

from __future__ import annotations

import json
import random
import sqlite3
from typing import Any

import pytest

from ragkit.errors import InvalidArgumentError
from ragkit.store.filters import (
    MAX_DEPTH,
    MAX_VALUES,
    check_known,
    instant_of,
    lower_text,
    matches,
    milvus_expression,
    number_of,
    parse_filter,
    path_match,
    positive_keys,
    where_clause,
)

ROWS: list[dict[str, Any]] = [
    {"key": "/d/a.md", "external_id": "", "source": "/d/a.md", "language": "en",
     "text": "Water boils at 100 C.",
     "metadata": {"year": 2020, "tags": ["x", "y"], "draft": True, "date": "1969-07-21T20:17:40"}},
    {"key": "r1", "external_id": "r1", "source": "<records>", "language": "ar", "text": "Ice melts.",
     "metadata": {"year": "2021", "n": None, "date": "1972-12-11T19:54:58Z", "tags": ["X"]}},
    {"key": "r2", "external_id": "r2", "source": "<records>", "language": "en", "text": "water WATER",
     "metadata": {"year": 2019.5, "tags": "x y", "page": "100", "date": "1989-11-09T17:53:00+05:00"}},
    {"key": "/d/sub/b.txt", "external_id": "", "source": "/d/sub/b.txt", "language": "fa", "text": "",
     "metadata": {"draft": 1, "year": [1999, "2022"], "page": " 90 "}},
    {"key": "r3", "external_id": "r3", "source": "<records>", "language": "en", "text": "abc%_\\",
     "metadata": {"tags": [-2, True, None, [1]], "obj": {"a": 1}, "year": True, "name": 'say "hi"'}},
    {"key": "r4", "external_id": "r4", "source": "<records>", "language": "", "text": "t",
     "metadata": {"tags": [], "name": "", "n": "[]"}},
    {"key": "r5", "external_id": "r5", "source": "<records>", "language": "en", "text": "t",
     "metadata": {}},
]  # fmt: skip
VALUES = [2020, "2020", "2021", 1, True, False, 0, None, "null", "true", "x", "X", "y", 1999,
          2019.5, "100", 90, "", -2, 'say "hi"', '" or 1==1 or "']  # fmt: skip
KEYS = ["year", "tags", "draft", "n", "date", "page", "obj", "name", "missing", "language", "id",
        "content", "source", 'q"]']  # fmt: skip
BOUNDS = [2000, "2020", 1999.5, None, "1970-01-01", "1972-12-11T19:54:58", 0, -3]
OPERATORS = ["$eq", "$ne", "$in", "$nin", "$gt", "$gte", "$lt", "$lte", "$exists", "$empty",
             "$contains", "$icontains", None]  # fmt: skip


def random_filter(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    """A filter of the language, nested at most three deep."""
    draw = rng.random()
    if depth < 3 and draw < 0.2:
        return {"$and": [random_filter(rng, depth + 1) for _ in range(rng.randint(0, 3))]}
    if depth < 3 and draw < 0.4:
        return {"$or": [random_filter(rng, depth + 1) for _ in range(rng.randint(0, 3))]}
    if depth < 3 and draw < 0.5:
        return {"$not": random_filter(rng, depth + 1)}
    key, op = rng.choice(KEYS), rng.choice(OPERATORS)
    value: Any = rng.choice(VALUES)
    if key == "content" and op in ("$gt", "$gte", "$lt", "$lte", "$exists", "$empty"):
        op = "$contains"
    if key == "source":
        op = None if op in ("$gt", "$gte", "$lt", "$lte") else op
        value = rng.choice(["*.md", "<records>", "sub/*.txt", "/d/**", "b.txt", 5])
    if op in ("$in", "$nin"):
        value = rng.sample(VALUES, rng.randint(0, 3))
    elif op in ("$gt", "$gte", "$lt", "$lte"):
        value = rng.choice(BOUNDS)
    elif op in ("$exists", "$empty"):
        value = rng.choice([True, False])
    return {key: value if op is None else {op: value}}


@pytest.fixture(scope="module")
def documents() -> sqlite3.Connection:
    """ROWS in an SQLite ``documents`` table with ragkit's SQL functions."""
    db = sqlite3.connect(":memory:")
    db.create_function("path_match", 2, path_match)
    for name, function in (("number_of", number_of), ("instant_of", instant_of),
                           ("lower_text", lower_text)):  # fmt: skip
        db.create_function(name, 1, function)
    db.execute(
        "CREATE TABLE documents (id INTEGER PRIMARY KEY, key TEXT, external_id TEXT, "
        "source TEXT, language TEXT, text TEXT, metadata TEXT)"
    )
    for position, row in enumerate(ROWS):
        db.execute(
            "INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?)",
            (position, row["key"], row["external_id"], row["source"], row["language"],
             row["text"], json.dumps(row["metadata"])),
        )  # fmt: skip
    return db


def test_sql_agrees_with_the_python_reference_on_random_filters(
    documents: sqlite3.Connection,
) -> None:
    rng = random.Random(53)
    for _ in range(600):
        filters = random_filter(rng)
        expected = {position for position, row in enumerate(ROWS) if matches(filters, row)}
        sql, values = where_clause(filters)
        found = {row[0] for row in documents.execute(f"SELECT d.id FROM documents d WHERE {sql}", values)}  # fmt: skip
        assert found == expected, filters


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"tags": "x"}, {0}),  # a list matches by element
        ({"tags": {"$contains": "x"}}, {0, 2}),  # an element, or a substring of text
        ({"tags": {"$icontains": "x"}}, {0, 1, 2}),
        ({"tags": None}, {3, 4, 6}),  # null: missing, or an element null
        ({"tags": {"$empty": True}}, {3, 5, 6}),
        ({"year": "2020"}, {0}),  # text also matches the number it spells
        ({"year": 2021}, set()),  # a number matches numbers only
        ({"year": {"$gte": 2020}}, {0, 1, 3}),  # "2021" and the element "2022" spell numbers
        ({"year": {"$ne": 2020}}, {1, 2, 3, 4, 5, 6}),  # lacking the key counts
        ({"draft": True}, {0}),  # 1 is no bool
        ({"n": {"$exists": True}}, {1, 5}),  # present, even null
        ({"date": {"$gt": "1972-12-11T19:54:58"}}, {2}),  # +05:00 is 12:53 UTC
        ({"date": {"$gte": "1972-12-11T19:54:58"}}, {1, 2}),  # naive is UTC
        ({"page": {"$lt": 95}}, {3}),  # " 90 " spells a number
        ({"year": {"$gt": None}}, set()),
        ({"id": "/d/a.md"}, {0}),  # no external id: the key
        ({"source": "sub/*.txt"}, {3}),
        ({"content": {"$icontains": "WATER"}}, {0, 2}),
        ({"$not": {"$or": [{"year": {"$exists": True}}, {"draft": {"$exists": True}}]}}, {5, 6}),
        ({}, set(range(7))),
    ],
)
def test_semantics(filters: dict[str, Any], expected: set[int]) -> None:
    assert {i for i, row in enumerate(ROWS) if matches(filters, row)} == expected


@pytest.mark.parametrize(
    ("filters", "said"),
    [
        ({"year": {"$regex": "x"}}, "filter 'year': no operator '\\$regex'"),
        ({"$xor": []}, "filter '\\$xor': no such operator"),
        ({"$and": {"year": 1}}, "\\$and .*give a list of filters"),
        ({"$not": [{"year": 1}]}, "\\$not .*give one filter"),
        ({"year": {}}, "an empty operator dict"),
        ({"year": {"$in": 2020}}, "\\$in: give a list of values, not int"),
        ({"year": {"$eq": [2020]}}, "\\$in takes a list"),
        ({"year": {"$gt": "soon"}}, "compare with a number or an ISO 8601 date"),
        ({"year": {"$gt": True}}, "compare with a number"),
        ({"year": {"$gt": [1]}}, "compare with a number"),
        ({"year": {"$exists": "yes"}}, "\\$exists: give true or false"),
        ({"year": {"$contains": [1]}}, "give text, a number, a bool or null"),
        ({"content": {"$gt": 1}}, "the content field takes"),
        ({"source": {"$lt": "m"}}, "source is matched by globs"),
        ({"year": {1, 2}}, "match a string or a number, not set"),
        ({1: "x"}, "name a field"),
        ({"year": float("nan")}, "NaN and Infinity"),
        ({f"k{i}": "x" for i in range(MAX_VALUES + 1)}, "201 values: at most 200"),
        ({"source": "x" * 5000}, "of 5,000 characters: at most 4,096"),
    ],
)
def test_refusals_name_the_key_and_operator(filters: dict[str, Any], said: str) -> None:
    with pytest.raises(InvalidArgumentError, match=said):
        parse_filter(filters)


def test_nesting_is_limited() -> None:
    deep: dict[str, Any] = {"year": 1}  # the value one level below the top
    for _ in range(MAX_DEPTH - 1):
        deep = {"$not": deep}
    parse_filter(deep)
    with pytest.raises(InvalidArgumentError, match="nested over 32 deep"):
        parse_filter({"$not": deep})


def test_mistyped_keys_are_the_positive_ones() -> None:
    assert positive_keys({"$or": [{"yaer": 1}, {"year": {"$ne": 1}}, {"x": None}]}) == ["yaer"]
    assert positive_keys({"$not": {"yaer": {"$exists": False}}}) == ["yaer"]
    with pytest.raises(InvalidArgumentError, match="'yaer': no document has .* or draft, year"):
        check_known({"$and": [{"yaer": 1}]}, {"year", "draft"})


HOSTILE = ['" or 1==1 or "', '"]', "') or (id > 0", 'x\\" || id >= 0 || \\"', "\n", "{p0}", "%"]


def _hostile(value: str) -> dict[str, Any]:
    return {"$or": [{"name": value}, {"language": {"$ne": value}}, {"tags": {"$contains": value}}]}


@pytest.mark.parametrize("value", HOSTILE)
def test_milvus_expressions_bind_values(value: str) -> None:
    """A value is a template parameter (Milvus) or one escaped literal (Milvus Lite): the
    expression is the same whatever the value holds, and Milvus Lite reads the value back."""
    from milvus_lite.search.filter.tokens import tokenize

    kinds = {"name": {"text"}, "tags": {"list", "text"}}
    hostile, plain = (
        milvus_expression(_hostile(value), kinds),
        milvus_expression(_hostile("v"), kinds),
    )
    assert hostile.template()[0] == plain.template()[0]
    assert value in hostile.template()[1].values()
    read = tokenize(hostile.inline())
    assert [t.kind for t in read] == [t.kind for t in tokenize(plain.inline())]
    assert value in [t.value for t in read]


def test_milvus_expressions_never_write_odd_keys() -> None:
    """A key with a quote, brace, slash, tilde or control character is never written: every
    document is a candidate and the exact check decides."""
    for key in ['q"]', "a/b", "k{p0}", "t~1", "new\nline"]:
        assert milvus_expression({key: "x"}).tokens is True
        assert milvus_expression({key: {"$ne": "x"}}).tokens is True
    assert milvus_expression({"year": 2020}, {}).tokens is False  # no document has the key


def test_milvus_expressions_narrow_under_not() -> None:
    year = {"year": {"number"}}
    narrowed = milvus_expression({"year": {"$nin": [2020, 1999]}}, year).inline()
    assert narrowed.startswith("(not (") and "exists metadata" in narrowed
    assert milvus_expression({"$not": {"year": {"$gt": 2000}}}, year).tokens is not True
    assert milvus_expression({"year": {"$ne": 1}}, {"year": {"number", "bool"}}).tokens is True
    dates = milvus_expression({"date": {"$gt": "1972-12-11T19:54:58"}}, {"date": {"text"}})
    assert dates.template() == ('metadata["date"] >= {p0}', {"p0": "1972-12-10"})
