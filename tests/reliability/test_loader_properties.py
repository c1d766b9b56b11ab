"""Property tests: any bytes under any supported name load as documents or a per-file skip.

Arbitrary bytes, tag soup, JSON-ish lines and mutated real PDFs go through
:func:`ragkit.documents.load_paths`: nothing escapes it, every file is accounted for (documents
or a skip entry naming it, or both for JSONL), and every document has text and valid blocks.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile import text_pdf
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ragkit.documents import load_paths

SUFFIXES = [".txt", ".md", ".html", ".jsonl", ".pdf"]
FUZZ = settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
PDF = text_pdf("Pressure waves travel through the gas.")


def load_one(folder: Path, suffix: str, data: bytes) -> None:
    path = folder / f"fuzz{suffix}"
    path.write_bytes(data)
    result = load_paths([path])
    reported = [s for s in result.skipped if s.path.split(":")[0] == str(path)]
    assert len(reported) == len(result.skipped)  # nothing about other files
    assert result.documents or reported, "file neither loaded nor reported"
    for document in result.documents:
        assert document.source == str(path) and document.text.strip()
        for block in document.blocks:
            assert 0 <= block.start < block.end <= len(document.text)
    event("loaded" if result.documents else "skipped")


@pytest.mark.parametrize("suffix", SUFFIXES)
@FUZZ
@given(data=st.binary(max_size=400))
def test_arbitrary_bytes(tmp_path: Path, suffix: str, data: bytes) -> None:
    load_one(tmp_path, suffix, data)


_TAG = st.sampled_from(
    [
        "p",
        "div",
        "h1",
        "li",
        "ul",
        "table",
        "tr",
        "td",
        "script",
        "style",
        "pre",
        "br",
        "head",
        "x-y",
        "!--",
        "![CDATA[",
        "?php",
        "!DOCTYPE",
    ]
)
_HTML_PIECE = st.one_of(
    _TAG.map(lambda t: f"<{t}>"),
    _TAG.map(lambda t: f"</{t}>"),
    _TAG.map(lambda t: f"<{t} a=\"1\" b='2' c=3 d>"),
    st.sampled_from(["&amp;", "&#x10FFFF;", "&#xD800;", "&#0;", "&bogus;", "<", ">", "-->", "]]>"]),
    st.text(max_size=10),
)


@FUZZ
@given(pieces=st.lists(_HTML_PIECE, max_size=60))
def test_tag_soup(tmp_path: Path, pieces: list[str]) -> None:
    load_one(tmp_path, ".html", "".join(pieces).encode("utf-8", "surrogatepass"))


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
_RECORD = st.fixed_dictionaries(
    {
        "id": st.one_of(st.text(max_size=4), st.integers(), st.none()),
        "text": st.one_of(st.text(max_size=20), _JSON),
    },
    optional={"title": _JSON, "metadata": _JSON, "_id": _JSON},
)
_LINE = st.one_of(_RECORD.map(json.dumps), _JSON.map(json.dumps), st.text(max_size=30))


@FUZZ
@given(lines=st.lists(_LINE, max_size=12), separator=st.sampled_from(["\n", "\r\n"]))
def test_jsonl_lines(tmp_path: Path, lines: list[str], separator: str) -> None:
    load_one(tmp_path, ".jsonl", separator.join(lines).encode("utf-8", "surrogatepass"))


@FUZZ
@given(
    edits=st.lists(
        st.tuples(st.integers(0, len(PDF) - 1), st.binary(min_size=0, max_size=4)), max_size=6
    ),
    cut=st.one_of(st.just(len(PDF)), st.integers(1, len(PDF))),
)
def test_mutated_pdf(tmp_path: Path, edits: list[tuple[int, bytes]], cut: int) -> None:
    data = bytearray(PDF[:cut])
    for position, replacement in edits:
        data[position : position + len(replacement)] = replacement
    load_one(tmp_path, ".pdf", bytes(data))
