"""Maximal marginal relevance and search by vector, on the folder store and on Milvus Lite:
MMR trades near-paraphrases for other passages (and with lambda 1 is the plain ranking),
a search by vector finds what the same query's dense search finds, with filters and collapse
as usual, and a vector that cannot be the index's is refused naming its dimension."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from conftest import cli, records_index
from ragkit import Index, InvalidArgumentError, RagkitError
from ragkit.store import FolderStore

# Four ways of saying one thing, and passages on other things (two near the same topic).
PARAPHRASES = {
    "boil-1": "Water boils at one hundred degrees Celsius at sea level.",
    "boil-2": "At sea level the boiling point of water is 100 degrees Celsius.",
    "boil-3": "Pure water starts to boil at 100 °C under normal atmospheric pressure.",
    "boil-4": "The temperature at which water boils at sea level is one hundred degrees.",
}
OTHERS = {
    "mountain": "High on a mountain the air pressure is lower, so tea water boils sooner.",
    "salt": "Salt dissolved in pasta water changes its taste more than its temperature.",
    "ice": "Ice melts at zero degrees and floats, being less dense than liquid water.",
    "bread": "Bread dough rises because yeast ferments sugars into carbon dioxide gas.",
    "rail": "Railway companies adopted one standard time along their lines in 1847.",
}
RECORDS = [
    {"id": key, "text": text, "metadata": {"topic": "boil" if key.startswith("boil") else key}}
    for key, text in (PARAPHRASES | OTHERS).items()
]
QUERY = "what is the boiling point of water"


@pytest.fixture(scope="module", params=["folder", "milvus-lite"])
def index(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Index]:
    folder = tmp_path_factory.mktemp(f"mmr-{request.param}")
    with records_index(request.param, folder, RECORDS, "mmr") as opened:
        yield opened


def likeness(index: Index, ids: list[str]) -> float:
    """The mean cosine between the passages ``ids`` (as the index embeds them)."""
    vectors = np.array(index.encoder.encode_passages([dict(PARAPHRASES | OTHERS)[i] for i in ids]))
    pairs = vectors @ vectors.T
    return float(pairs[np.triu_indices(len(ids), 1)].mean())


def test_mmr_picks_other_passages_than_the_paraphrases(index: Index) -> None:
    plain = [hit.document_id for hit in index.search(QUERY, k=3)]
    assert set(plain) <= set(PARAPHRASES)  # the plain ranking: three ways of saying one thing
    diverse = [hit.document_id for hit in index.search(QUERY, k=3, mmr_lambda=0.3)]
    assert diverse[0] == plain[0]  # the best hit first either way
    assert set(diverse) - set(PARAPHRASES)  # then passages that say something else
    assert likeness(index, diverse) < likeness(index, plain)
    for mode in ("dense", "sparse"):  # every mode: MMR reads the stored vectors
        picked = index.search(QUERY, k=3, mode=mode, mmr_lambda=0.3)
        assert len({hit.document_id for hit in picked}) == 3


def test_mmr_with_lambda_one_is_the_plain_ranking(index: Index) -> None:
    for mode in ("hybrid", "dense", "sparse"):
        plain = index.search(QUERY, k=4, mode=mode)
        assert index.search(QUERY, k=4, mode=mode, mmr_lambda=1.0, mmr_candidates=9) == plain


def test_mmr_keeps_filters_and_relevance(index: Index) -> None:
    hits = index.search(QUERY, k=2, mmr_lambda=0.0, filters={"topic": "boil"})
    assert {hit.document_id for hit in hits} <= set(PARAPHRASES) and len(hits) == 2
    assert all(0.0 <= hit.relevance <= 1.0 for hit in hits)


def test_search_by_vector_finds_what_the_dense_search_finds(index: Index) -> None:
    vector = index.embed_query(QUERY)
    assert vector.shape == (index.store.dimension,)
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)
    dense = index.search(QUERY, k=4, mode="dense")
    by_vector = index.search_by_vector(vector, k=4)
    assert [h.document_id for h in by_vector] == [h.document_id for h in dense]
    assert [h.score for h in by_vector] == pytest.approx([h.score for h in dense], abs=1e-5)
    assert [h.relevance for h in by_vector] == pytest.approx([h.relevance for h in dense], abs=1e-5)
    scaled = index.search_by_vector((3.0 * vector).tolist(), k=4)  # any length, as a list
    assert [h.document_id for h in scaled] == [h.document_id for h in dense]
    only = index.search_by_vector(vector, k=3, filters={"topic": ["ice", "rail"]})
    assert {h.document_id for h in only} == {"ice", "rail"}
    diverse = index.search_by_vector(vector, k=3, mmr_lambda=0.3)
    assert {h.document_id for h in diverse} - set(PARAPHRASES)


def test_a_vector_that_cannot_be_the_index_s_is_refused(index: Index) -> None:
    dimension = index.store.dimension
    for bad, words in (
        (
            [0.1] * (dimension + 1),
            f"vector of {dimension + 1} numbers: this index's vectors have {dimension}",
        ),
        (np.full(dimension, np.nan), "NaN"),
        ([float("inf")] + [0.0] * (dimension - 1), "infinity"),
        (["a"] * dimension, f"give {dimension} numbers, not text"),
        ("water", f"give {dimension} numbers"),
        (np.zeros((2, dimension)), f"this index's vectors have {dimension}"),
        ([0.0] * dimension, "all .* numbers are 0"),
    ):
        with pytest.raises(InvalidArgumentError, match=words):
            index.search_by_vector(bad)
    vector = index.embed_query(QUERY)
    with pytest.raises(RagkitError, match="reranker reads query text"):
        index.search_by_vector(vector, rerank=True)
    with pytest.raises(RagkitError, match="a search by vector is dense"):
        index.search_by_vector(vector, mode="sparse")
    with pytest.raises(RagkitError, match="mmr_candidates=2 < k=3"):
        index.search_by_vector(vector, k=3, mmr_lambda=0.5, mmr_candidates=2)
    with pytest.raises(RagkitError, match="mmr_lambda=1.5: give a number from 0"):
        index.search(QUERY, mmr_lambda=1.5)
    with pytest.raises(RagkitError, match="give mmr_lambda too"):
        index.search(QUERY, mmr_candidates=20)


def test_the_cli_takes_mmr_and_prints_relevance(index: Index) -> None:
    if not isinstance(index.store, FolderStore):
        pytest.skip("the CLI's options are the same on every backend: checked on the folder")
    where = str(index.store.location)
    found = cli("query", QUERY, "--index", where, "-k", "3", "--mmr", "0.3", "--json")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    expected = index.search(QUERY, k=3, mmr_lambda=0.3)
    assert [h["document_id"] for h in hits] == [h.document_id for h in expected]
    assert [h["relevance"] for h in hits] == pytest.approx([h.relevance for h in expected])
    table = cli("query", QUERY, "--index", where, "-k", "2", "--mmr-candidates", "5")
    assert table.returncode == 2 and "give mmr_lambda too" in table.stderr
    shown = cli("query", QUERY, "--index", where, "-k", "2").stdout
    assert "relevance" in shown


def test_an_index_before_its_first_ingest(tmp_path: Path) -> None:
    empty = Index.open(tmp_path / "auto", create=True)  # model auto: chosen at the first ingest
    assert empty.search_by_vector([0.5] * 384) == []
    with pytest.raises(RagkitError, match="no embedding model yet"):
        empty.embed_query("water")
