"""Phrase evidence: the chunk holding a query's words side by side and in order comes first,
on real indexes of both backends (the folder and an embedded Milvus Lite file) with the bundled
MiniLM encoder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import MODEL, cli, records_index
from ragkit import Index, RagkitError
from ragkit.config import QUERY_SETTINGS, Settings
from ragkit.query.analyze import query_terms
from ragkit.search.phrase import holds_phrase, phrase_first, phrase_words, uses_phrase

# "notes" holds the words of the span more often (BM25 prefers it) and means the same (the
# dense list likes it too), but only "report" holds them as written.
SPAN = "pressure distribution on the swept wing was measured"
RECORDS = [
    {"id": "report", "text": "In the tunnel tests the pressure distribution on the swept wing "
     "was measured at three Mach numbers, and the results agree with theory."},
    {"id": "notes", "text": "Swept wing: measured pressure. Wing distribution of swept "
     "pressure, measured wing pressure on a swept wing."},
    {"id": "plate", "text": "Boundary layer transition on a flat plate depends on the Reynolds "
     "number."},
]  # fmt: skip


@pytest.fixture(scope="module", params=["folder", "milvus-lite"])
def index(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Index]:
    folder = tmp_path_factory.mktemp("phrase")
    with records_index(request.param, folder, RECORDS, "phrase") as ix:
        yield ix


@pytest.mark.parametrize("mode", ["hybrid", "sparse"])
def test_the_chunk_holding_the_span_comes_first(index: Index, mode: str) -> None:
    off = index.search(SPAN, k=3, mode=mode, phrase_evidence="off")  # type: ignore[arg-type]
    on = index.search(SPAN, k=3, mode=mode, phrase_evidence="on")  # type: ignore[arg-type]
    assert off[0].document_id == "notes"  # without it, the span's own passage is not first
    assert on[0].document_id == "report"
    assert on[0].text[on[0].text.index("pressure") :].startswith("pressure distribution")
    assert [h.document_id for h in on[1:]] == [
        h.document_id for h in off if h.document_id != "report"
    ][:2]


def test_no_lift_by_default_and_explained_when_on(index: Index) -> None:
    assert index.settings.phrase_evidence == "auto"  # per-query fusion's choice: no lift here
    assert index.search(SPAN, k=1)[0].document_id == "notes"
    assert index.search(SPAN, k=1, phrase_evidence="auto")[0].document_id == "notes"
    explained = index.explain(SPAN, k=3, collapse=False, phrase_evidence="on")
    top = explained[0].contribution
    assert top.phrase > 0
    assert top.dense + top.sparse + top.evidence + top.phrase == pytest.approx(top.score)
    assert all(each.contribution.phrase == 0 for each in explained[1:])


def test_short_queries_and_dense_mode_are_left_alone(index: Index) -> None:
    """Two words are too common a phrase to say "this passage"; dense mode has no terms."""
    for query, mode in (("swept wing", "hybrid"), (SPAN, "dense")):
        off = index.search(query, k=3, mode=mode, phrase_evidence="off")  # type: ignore[arg-type]
        on = index.search(query, k=3, mode=mode, phrase_evidence="on")  # type: ignore[arg-type]
        assert [(h.key, h.start, h.score) for h in on] == [(h.key, h.start, h.score) for h in off]


def test_words_out_of_order_are_no_phrase(index: Index) -> None:
    shuffled = "measured was wing swept the on distribution pressure"
    off = index.search(shuffled, k=3, phrase_evidence="off")
    on = index.search(shuffled, k=3, phrase_evidence="on")
    assert [h.document_id for h in on] == [h.document_id for h in off]


def test_setting_choices_and_overrides(tmp_path: Path) -> None:
    assert "phrase_evidence" in QUERY_SETTINGS
    assert Settings.from_index('{"embedding_model": "m"}').phrase_evidence == "auto"
    folder = tmp_path / "index"
    with Index.open(folder, create=True, model=MODEL, chunker="sentence") as built:
        built.add(RECORDS)
        with pytest.raises(RagkitError, match="phrase_evidence='yes'"):
            built.search(SPAN, phrase_evidence="yes")  # type: ignore[arg-type]
    with Index.open(folder, phrase_evidence="on") as handle:
        assert handle.search(SPAN, k=1)[0].document_id == "report"
    found = cli("query", SPAN, "--index", str(folder), "--phrase-evidence", "on", "--json",
                "-k", "1")  # fmt: skip
    assert found.returncode == 0, found.stderr
    assert '"document_id": "report"' in found.stdout


def test_http_search_takes_phrase_evidence_and_explains_it(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from ragkit.serve.app import create_app
    from ragkit.serve.indexes import IndexLocation, ServedIndexes

    with Index.open(tmp_path / "index", create=True, model=MODEL, chunker="sentence") as built:
        built.add(RECORDS)
    served = ServedIndexes([IndexLocation("docs", tmp_path / "index")], warm=False)
    with TestClient(create_app(served)) as client:
        found = {}
        for setting in ("on", "off"):
            body = {"query": SPAN, "k": 2, "phrase_evidence": setting, "explain": True}
            answer = client.post("/search", json=body)
            assert answer.status_code == 200, answer.text
            found[setting] = answer.json()
        assert (
            client.post("/search", json={"query": SPAN, "phrase_evidence": "always"}).status_code
            == 422
        )
    served.close()
    assert found["on"]["hits"][0]["document_id"] == "report"
    assert found["on"]["explanations"][0]["phrase"] > 0
    assert found["off"]["hits"][0]["document_id"] == "notes"
    assert all(each["phrase"] == 0 for each in found["off"]["explanations"])


def test_phrase_rules() -> None:
    assert holds_phrase(["a", "b", "c"], ["x", "a", "b", "c"])
    assert not holds_phrase(["a", "b", "c"], ["a", "b", "x", "c"])  # side by side
    assert not holds_phrase(["a", "b", "c"], ["a", "b"])  # longer than the chunk
    assert not holds_phrase([], ["a"])
    assert phrase_words(["wing", "=wing", "flutter"]) == 2  # a stem and its exact form: one word
    assert phrase_first([(1, 0.5), (2, 0.4)], set()) == [(1, 0.5), (2, 0.4)]
    assert phrase_first([(1, 0.5), (2, 0.4), (3, 0.1)], {2, 3}) == [(2, 0.9), (3, 0.6), (1, 0.5)]
    assert not uses_phrase("auto", ["en", "ar"]) and not uses_phrase("auto", [])
    assert uses_phrase("on", ["am"]) and not uses_phrase("off", ["en"])


def test_arabic_words_count_once(tmp_path: Path) -> None:
    """An Arabic word is two sparse terms (its stem and its exact form): a two-word query is no
    phrase, a three-word span of a hadith is, and its hadith comes first."""
    hadiths = [
        {"id": "intentions", "text": "إنما الأعمال بالنيات وإنما لكل امرئ ما نوى فمن كانت "
         "هجرته إلى الله ورسوله فهجرته إلى الله ورسوله"},
        {"id": "deeds", "text": "الأعمال بالنيات والنيات في الأعمال، ولكل امرئ عمله ونيته "
         "وأعماله بنيته"},
    ]  # fmt: skip
    with Index.open(tmp_path / "index", create=True, model=MODEL, chunker="sentence") as ix:
        ix.add(hadiths)
        terms = query_terms([ix.matching_key("الأعمال بالنيات", "ar")], ["ar"], ix.settings)
        assert len(terms) == 4 and phrase_words(terms) == 2
        two = ix.explain("الأعمال بالنيات", k=2, phrase_evidence="on", collapse=False)
        assert [each.contribution.phrase for each in two] == [0.0, 0.0]
        span = ix.explain("لكل امرئ ما نوى", k=2, phrase_evidence="on", collapse=False)
        assert span[0].hit.document_id == "intentions" and span[0].contribution.phrase > 0
        assert span[1].contribution.phrase == 0.0
