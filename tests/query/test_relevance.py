"""``Hit.relevance``: a score in [0, 1] a threshold can use. A nonsense or off-topic query's
hits fall below 0.5 and a sentence copied from a document finds it above 0.5, in every mode,
on the folder store and on Milvus Lite; the shipped calibrations rise with the evidence; the
store's IDF, the coverage's weights, is the same on both backends."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

import numpy as np
import pytest

from conftest import records_index
from ragkit import Index
from ragkit.query.relevance import FEATURES, Evidence, bundled_name, calibrations, shipped

RECORDS = [
    {"id": "kettle", "text": "A kettle of water boils at 100 degrees Celsius at sea level."},
    {
        "id": "mountain",
        "text": "High on a mountain the air pressure is lower and water boils sooner.",
    },
    {"id": "bread", "text": "Bread dough rises because yeast ferments sugars into carbon dioxide."},
    {
        "id": "rail",
        "text": "Railway companies adopted one standard time along their lines in 1847.",
    },
    {"id": "owl", "text": "Owls hunt small mammals at night, guided by their sharp hearing."},
]
MODES = ("hybrid", "dense", "sparse")
MODELS = ("all-minilm-l6-v2", "multilingual-e5-small")


@pytest.fixture(scope="module", params=["folder", "milvus-lite"])
def index(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Index]:
    folder = tmp_path_factory.mktemp(f"relevance-{request.param}")
    with records_index(request.param, folder, RECORDS, "relevance") as opened:
        yield opened


@pytest.mark.parametrize("mode", MODES)
def test_nonsense_and_off_topic_queries_fall_below_one_half(index: Index, mode: str) -> None:
    for query in ("zzzz qqqq", "xkqvbw plortz frimble", "how to knit a scarf for beginners"):
        hits = index.search(query, k=5, mode=mode)  # type: ignore[arg-type]
        assert all(0.0 <= hit.relevance < 0.5 for hit in hits), (query, hits)
    if mode == "hybrid":  # the rank score is rescaled per query: nonsense's best hit scores 1
        assert index.search("zzzz qqqq", k=3)[0].score == pytest.approx(1.0)


@pytest.mark.parametrize("mode", MODES)
def test_a_sentence_of_a_document_finds_it_above_one_half(index: Index, mode: str) -> None:
    for record in RECORDS:
        top = index.search(record["text"], k=3, mode=mode)[0]  # type: ignore[arg-type]
        assert top.document_id == record["id"] and top.relevance > 0.5, (mode, top)
    answer = index.search("boiling point of water at sea level", k=2, mode=mode)  # type: ignore[arg-type]
    assert answer[0].document_id in ("kettle", "mountain") and answer[0].relevance > 0.5


def test_relevance_is_the_same_hit_s_whatever_ranks_it(index: Index) -> None:
    """Feedback, evidence and the fusion method move hits, not their relevance: it reads the
    query as written."""
    query = "why does water boil sooner on a mountain"
    plain = {h.document_id: h.relevance for h in index.search(query, k=5)}
    for options in ({"fusion": "rrf"}, {"feedback": "both"}, {"document_evidence": "on"}):
        moved = {h.document_id: h.relevance for h in index.search(query, k=5, **options)}
        assert {key: pytest.approx(plain[key], abs=1e-6) for key in moved} == moved


def test_explain_shows_the_evidence(index: Index) -> None:
    top = index.explain("water boils at sea level", k=1, mode="hybrid")[0]
    evidence = top.evidence
    assert evidence.cosine is not None and 0.0 < evidence.coverage <= 1.0  # type: ignore[operator]
    assert evidence.matched == pytest.approx(  # the IDF held, of which coverage is the share
        sum(index.store.term_idf(["water", "boil", "sea", "level"]))
    )
    assert top.hit.relevance == calibrations(index.settings.embedding_model).relevance(evidence)
    assert index.explain("water boils", k=1, mode="dense")[0].evidence.coverage is None
    assert index.explain("water boils", k=1, mode="sparse")[0].evidence.cosine is None


def test_the_store_s_idf_is_bm25_s_on_both_backends(index: Index) -> None:
    chunks = index.store.counts()["chunks"]
    water, absent = index.store.term_idf(["water", "zzzzq"])
    held = sum("water" in record["text"].lower() for record in RECORDS)
    assert water == pytest.approx(math.log(1 + (chunks - held + 0.5) / (held + 0.5)), rel=1e-6)
    assert absent == pytest.approx(math.log(1 + (chunks + 0.5) / 0.5), rel=1e-6)


@pytest.mark.parametrize("model", [*MODELS, "someone/else"])
def test_calibrations_rise_with_the_evidence(model: str) -> None:
    chosen = calibrations(model)
    cosines = [float(c) for c in np.linspace(-0.2, 1.0, 13)]
    shares = [float(v) for v in np.linspace(0.0, 1.0, 11)]
    masses = [0.0, 1.0, 3.0, 10.0, 30.0, 100.0]
    for c, v, m in itertools.product(cosines[::3], shares[::3], masses[::2]):
        for along in (
            [Evidence(x, v, m) for x in cosines],  # hybrid, along each piece of evidence
            [Evidence(c, x, m) for x in shares],
            [Evidence(c, v, x) for x in masses],
            [Evidence(cosine=x) for x in cosines],  # dense
            [Evidence(coverage=x, matched=m) for x in shares],  # sparse
            [Evidence(coverage=v, matched=x) for x in masses],
        ):
            scores = [chosen.relevance(each) for each in along]
            assert all(0.0 <= s <= 1.0 for s in scores)
            assert scores == sorted(scores), (model, along[0].kind)
    assert chosen.relevance(Evidence()) == 0.0


def test_the_shipped_calibrations_say_how_they_were_fitted() -> None:
    data = shipped()
    assert "benchmarks.thresholds --fit" in data["provenance"]["command"]
    for model in (*MODELS, "fallback"):
        kinds = data["models"][model]
        assert set(kinds) == {"hybrid", "dense", "sparse"}
        for each in kinds.values():
            assert set(each["weights"]) <= set(FEATURES)
            assert all(weight > 0 for weight in each["weights"].values())
    fallback = calibrations("bge-m3")  # a model without its own: coverage, or the cosine
    assert fallback.relevance(Evidence(cosine=0.7)) == pytest.approx(0.7)
    assert fallback.relevance(Evidence(cosine=-0.3)) == 0.0
    assert fallback.relevance(Evidence(0.9, 0.2, 3.0)) == fallback.relevance(
        Evidence(0.1, 0.2, 3.0)
    )
    assert bundled_name("intfloat/multilingual-e5-small") == "multilingual-e5-small"
