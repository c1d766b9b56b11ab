"""Query feedback (RM3 on stored terms, Rocchio on stored vectors) and document evidence,
on real indexes of both backends (the folder and an embedded Milvus Lite file) with the bundled
MiniLM encoder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from conftest import MODEL, ragkit, records_index
from ragkit import Index, RagkitError
from ragkit.config import QUERY_SETTINGS, Settings
from ragkit.search.evidence import document_evidence, uses_evidence
from ragkit.search.feedback import levers, looks_up, repeated, rm3, rocchio

RECORDS = [
    {"id": "flutter", "text": "Wing flutter appears when aerodynamic forces couple with the "
     "elastic bending of the wing. Flutter speed rises with torsional stiffness."},
    {"id": "panel", "text": "Panel flutter of thin plates at supersonic speed. The plates "
     "vibrate when the flow over them couples with their bending modes."},
    {"id": "boundary", "text": "The boundary layer on a flat plate thickens downstream. "
     "Transition to turbulence depends on the Reynolds number."},
    {"id": "heat", "text": "Heat transfer to a blunt body in hypersonic flow is highest at "
     "the stagnation point."},
    {"id": "short", "text": "Shock waves."},
    {"id": "long", "text": " ".join(
        f"Section {n}. Stagnation point heating of blunt bodies was measured in run {n}."
        for n in range(40)
    )},
]  # fmt: skip
QUERIES = ["wing flutter", "stagnation heating", "boundary layer transition", "shock"]


@pytest.fixture(scope="module", params=["folder", "milvus-lite"])
def index(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Index]:
    folder = tmp_path_factory.mktemp("feedback")
    with records_index(request.param, folder, RECORDS, "feedback") as ix:
        yield ix


def test_stores_give_terms_and_vectors_by_id(index: Index) -> None:
    ids = [i for i, _ in index.store.search_terms(["flutter"], 5)]
    terms = index.store.terms_by_id(ids)
    vectors = index.store.vectors_by_id(ids)
    assert set(terms) == set(vectors) == set(ids)
    assert all("flutter" in each for each in terms.values())
    assert all(v.shape == (index.store.dimension,) for v in vectors.values())
    assert index.store.terms_by_id([10**9]) == {}


@pytest.mark.parametrize("feedback", ["off", "sparse", "dense", "both", "auto"])
def test_every_feedback_finds_the_topic_and_keeps_offsets(index: Index, feedback: str) -> None:
    texts = {r["id"]: r["text"] for r in RECORDS}
    for query in QUERIES:
        for mode in ("hybrid", "dense", "sparse"):
            hits = index.search(query, k=3, mode=mode, feedback=feedback)  # type: ignore[arg-type]
            assert hits, (query, mode)
            for hit in hits:
                assert texts[hit.document_id][hit.start : hit.end] == hit.text
    top = index.search("wing flutter", k=1, feedback=feedback)[0]  # type: ignore[arg-type]
    assert top.document_id == "flutter"


def test_sparse_feedback_adds_terms_of_the_top_chunks(index: Index) -> None:
    """A term only the feedback chunks hold ("torsional") brings its chunk in: with sparse
    feedback, the query 'wing flutter' reaches every chunk of the flutter document."""
    off = index.search("wing flutter", k=10, mode="sparse", feedback="off")
    on = index.search("wing flutter", k=10, mode="sparse", feedback="sparse")
    assert {h.text for h in off} <= {h.text for h in on}
    assert any("torsional" in h.text for h in on)


def test_a_literal_span_is_looked_up_not_expanded(index: Index) -> None:
    """A query the top chunk holds whole (a known item) keeps its terms under sparse
    feedback: the same hits as without it."""
    span = "aerodynamic forces couple with the elastic bending"
    off = index.search(span, k=5, mode="sparse", feedback="off")
    on = index.search(span, k=5, mode="sparse", feedback="sparse")
    assert [(h.key, h.start) for h in on] == [(h.key, h.start) for h in off]
    assert on[0].document_id == "flutter"


def test_document_evidence_lifts_a_document_matching_in_many_places(index: Index) -> None:
    plain = index.search("stagnation point", k=5, document_evidence="off", collapse=False)
    lifted = index.search("stagnation point", k=5, document_evidence="on", collapse=False)
    assert lifted[0].document_id == "long"
    assert lifted[0].score >= plain[0].score
    explained = index.explain("stagnation point", k=3, document_evidence="on")
    for each in explained:
        assert each.contribution.score == pytest.approx(each.hit.score)
        part = each.contribution
        assert part.dense + part.sparse + part.evidence == pytest.approx(part.score)


def test_settings_and_overrides(index: Index, tmp_path: Path) -> None:
    assert {"feedback", "document_evidence"} <= QUERY_SETTINGS
    assert Settings.from_index('{"embedding_model": "m"}').feedback == Settings().feedback
    with pytest.raises(RagkitError, match="feedback='more'"):
        index.search("wing", feedback="more")  # type: ignore[arg-type]
    with pytest.raises(RagkitError, match="document_evidence"):
        index.search("wing", document_evidence="yes")  # type: ignore[arg-type]


def test_a_handle_may_override_feedback(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    with Index.open(folder, create=True, model=MODEL) as built:
        built.add(RECORDS[:3])
    with Index.open(folder, feedback="both", document_evidence="on") as handle:
        assert (handle.settings.feedback, handle.settings.document_evidence) == ("both", "on")
        assert handle.search("wing flutter", k=1)[0].document_id == "flutter"
    with Index.open(folder) as again:
        assert again.settings.feedback == Settings().feedback


def test_rm3_keeps_original_weight_and_ten_terms() -> None:
    docs = [[f"t{i}" for i in range(30)], ["a", "b"]]
    weights = rm3(["a", "b"], docs, [2.0, 1.0], terms=10, original_weight=0.5)
    assert sum(weights.values()) == pytest.approx(1.0)
    assert weights["a"] >= 0.25 and weights["b"] >= 0.25
    assert len(set(weights) - {"a", "b"}) <= 10
    assert rm3(["a"], [["x"]], [0.0]) == {"a": 1.0}  # no positive score: the query alone
    assert repeated({}) == []


def test_rocchio_and_levers() -> None:
    q = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    moved = rocchio(q, [np.array([0.0, 1.0, 0.0], dtype=np.float32)] * 3, 0.75)
    assert np.linalg.norm(moved) == pytest.approx(1.0)
    assert moved[0] > moved[1] > 0
    assert rocchio(q, []) is q
    assert looks_up(["a", "b", "c"], ["c", "b", "a"]) and not looks_up(["a", "b"], ["a", "b"])
    assert levers("off", ["en"]) == (False, False)
    assert levers("dense", ["en"]) == (False, True)
    assert uses_evidence("off", ["en"]) is False


def test_document_evidence_keeps_a_documents_order() -> None:
    ranking = [(1, 0.5), (2, 0.4), (3, 0.45), (4, -0.1)]
    owner = {1: "a", 2: "a", 3: "b"}
    rescored = dict(document_evidence(ranking, owner))
    assert rescored[1] == pytest.approx(0.7) and rescored[2] == pytest.approx(0.4)
    assert rescored[3] == pytest.approx(0.45) and rescored[4] == pytest.approx(-0.1)


def test_query_command_and_http_request_take_feedback(tmp_path: Path) -> None:
    from ragkit.serve.schemas import SearchRequest

    folder = tmp_path / "index"
    with Index.open(folder, create=True, model=MODEL) as built:
        built.add(RECORDS[:3])
    found = ragkit("query", "wing flutter", "--index", str(folder), "--feedback", "both",
                   "--document-evidence", "on", "--json", "-k", "1")  # fmt: skip
    assert found.returncode == 0, found.stderr
    assert '"document_id": "flutter"' in found.stdout
    refused = ragkit("query", "wing", "--index", str(folder), "--feedback", "more")
    assert refused.returncode == 2 and "'more' is not one of 'auto'" in refused.stderr
    assert SearchRequest(query="wing flutter", feedback="dense").feedback == "dense"
    with pytest.raises(ValueError):
        SearchRequest(query="wing flutter", feedback="more")  # type: ignore[arg-type]


# Hadiths on prayer: a topic many passages share, so a query for it finds a flat dense list.
PRAYER = [
    "الصلاة في أول وقتها أحب الأعمال إلى الله",
    "من صلى الفجر في جماعة فهو في ذمة الله",
    "صلاة الجماعة تفضل صلاة الفذ بسبع وعشرين درجة",
    "الصلوات الخمس كفارة لما بينهن ما اجتنبت الكبائر",
    "من حافظ على الصلاة كانت له نورا وبرهانا يوم القيامة",
    "أول ما يحاسب عليه العبد يوم القيامة الصلاة",
    "بين الرجل وبين الكفر ترك الصلاة",
    "صلوا كما رأيتموني أصلي",
    "إذا قام أحدكم إلى الصلاة فليتوضأ ثم ليستقبل القبلة",
    "لا تقبل صلاة بغير طهور",
    "مفتاح الصلاة الطهور وتحريمها التكبير وتحليلها التسليم",
    "من نسي صلاة فليصلها إذا ذكرها",
    "من صام رمضان إيمانا واحتسابا غفر له ما تقدم من ذنبه",
    "الصدقة تطفئ الخطيئة كما يطفئ الماء النار",
]


@pytest.mark.parametrize("backend", ["folder", "milvus-lite"])
def test_per_query_fusion_chooses_feedback_for_a_broad_arabic_topic(
    tmp_path: Path, backend: str
) -> None:
    """Under ``feedback="auto"`` (the default) per-query fusion decides: a broad Arabic topic
    (a flat dense list) gets dense feedback and keeps its first pass's choice through the
    second pass; a lookup (the phrase lift) gets none; weighted fusion keeps the language
    lever (dense feedback for Arabic)."""
    records = [{"id": f"h{n}", "text": text} for n, text in enumerate(PRAYER)]
    where = (
        str(tmp_path / "index")
        if backend == "folder"
        else f"milvus-lite://{tmp_path / 'lite.db'}?collection=prayer"
    )
    with Index.open(where, create=True, model="multilingual-e5-small", chunker="sentence") as ix:
        ix.add(records)

        def found(query: str, **options: str) -> list[tuple[str, float]]:
            explained = ix.explain(query, k=5, collapse=False, **options)  # type: ignore[arg-type]
            return [(e.hit.key, e.contribution.dense) for e in explained]

        assert ix.settings.feedback == "auto"
        topic = ix.explain("الصلاة", k=5, collapse=False)
        choice = topic[0].contribution.choice
        assert choice is not None and choice.feedback and not choice.phrase
        assert choice.name == "balanced 0.5 + feedback" and choice.evidence.arabic == 1.0
        assert all(each.contribution.choice == choice for each in topic)
        assert found("الصلاة") != found("الصلاة", feedback="off")

        span = "إذا قام أحدكم إلى الصلاة فليتوضأ ثم ليستقبل القبلة"
        lookup = ix.explain(span, k=1, collapse=False)[0]
        assert lookup.contribution.choice is not None and lookup.contribution.choice.phrase
        assert not lookup.contribution.choice.feedback and lookup.hit.document_id == "h8"
        assert found(span) == found(span, feedback="off")
        assert found(span, feedback="dense") != found(span)  # asked for by name: applied

        weighted = found("الصلاة", fusion="weighted")
        assert weighted == found("الصلاة", fusion="weighted", feedback="dense")
        assert weighted != found("الصلاة", fusion="weighted", feedback="off")
