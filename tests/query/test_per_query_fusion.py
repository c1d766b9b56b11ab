"""Per-query fusion: each query's dense weight and phrase lift chosen from its own first pass,
on a real index (the folder, the bundled MiniLM encoder) with the shipped model."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from conftest import records_index
from ragkit import Index
from ragkit.search.per_query import (
    FEATURES,
    MODEL_FILE,
    FusionModel,
    QueryEvidence,
    default_model,
    query_evidence,
)

# A literal span of "report" (8 words once stopwords are left out); "notes" holds most of its
# words more often.
SPAN = "the pressure distribution on the swept wing was measured at three Mach numbers"
# A short heading: its words are in no passage side by side; its meaning is in "plate".
HEADING = "laminar flow onset"
RECORDS = [
    {"id": "report", "text": "In the tunnel tests the pressure distribution on the swept wing "
     "was measured at three Mach numbers, and the results agree with theory."},
    {"id": "notes", "text": "Swept wing: measured pressure. Wing distribution of swept "
     "pressure, measured wing pressure on a swept wing."},
    {"id": "plate", "text": "Boundary layer transition on a flat plate depends on the Reynolds "
     "number: the laminar layer becomes turbulent downstream."},
    {"id": "engine", "text": "The engine inlet was tested for flow distortion at the onset of "
     "stall; onset flow onset flow."},
]  # fmt: skip


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    with records_index("folder", tmp_path_factory.mktemp("perquery"), RECORDS, "pq") as ix:
        yield ix


def test_the_choice_is_a_function_of_the_evidence() -> None:
    model = default_model()
    used = {c.feature for rule in model.rules for c in rule.conditions}
    assert used <= set(FEATURES)
    assert FusionModel.read(MODEL_FILE) == model
    evidence = query_evidence([(1, 0.9), (2, 0.5)], [(2, 8.0), (1, 2.0)], 8, {2}, False)
    again = query_evidence([(1, 0.9), (2, 0.5)], [(2, 8.0), (1, 2.0)], 8, {2}, False)
    assert evidence == again
    assert model.choose(evidence) == model.choose(again)
    assert model.choose(evidence).phrase  # a phrase of 8 words: a lookup
    short = dataclasses.replace(evidence, phrase=0.0, phrase_top=0.0, words=2.0, dense_gap=0.01)
    assert model.choose(short).dense_weight > 0.5
    assert model.choose(dataclasses.replace(short, arabic=1.0)).dense_weight == 0.5


def test_a_phrase_the_dense_list_missed_leans_sparse() -> None:
    """A query held side by side by a chunk of the sparse head — too short for the lift, or
    ranked low by the dense list — leans towards the sparse list; not when the dense list
    already ranks that chunk among its first few, nor for Arabic."""
    model = default_model()
    two_words = QueryEvidence(words=2, phrase=1, phrase_top=1, overlap=0.3, agreement=0.0,
                              dense_gap=0.1, sparse_gap=0.5, sparse_per_word=2.0,
                              phrase_dense_rank=8, arabic=0)  # fmt: skip
    assert model.choose(two_words).dense_weight == 0.3
    assert model.choose(dataclasses.replace(two_words, phrase_dense_rank=2)).dense_weight > 0.5
    assert model.choose(dataclasses.replace(two_words, arabic=1.0)).dense_weight != 0.3
    lifted = dataclasses.replace(two_words, words=4, phrase_dense_rank=30)
    assert model.choose(lifted).phrase  # long enough and missed by the dense list: the lift


def test_a_peaked_dense_list_weighs_more() -> None:
    """A question with no phrase match leans towards the dense list when its top stands well
    above its 10th (a confident list), not when the list is flat; for Arabic, whose encoder's
    cosines lie closer together, at a smaller gap and less far."""
    model = default_model()
    question = QueryEvidence(words=7, phrase=0, phrase_top=0, overlap=0.3, agreement=0.0,
                             dense_gap=0.3, sparse_gap=0.5, sparse_per_word=2.0,
                             phrase_dense_rank=0, arabic=0)  # fmt: skip
    assert model.choose(question).dense_weight == 0.7
    assert model.choose(dataclasses.replace(question, dense_gap=0.02)).dense_weight == 0.5
    arabic = dataclasses.replace(question, arabic=1.0, dense_gap=0.05)
    assert model.choose(arabic).dense_weight == 0.6
    assert model.choose(dataclasses.replace(arabic, dense_gap=0.01)).dense_weight == 0.5


def test_a_literal_span_gets_the_phrase_first_fusion(index: Index) -> None:
    explained = index.explain(SPAN, k=3, collapse=False, fusion="per-query")
    choice = explained[0].contribution.choice
    assert choice is not None and choice.phrase and choice.name == "phrase first"
    assert choice.evidence.phrase == 1.0 and choice.evidence.words == 8
    assert explained[0].hit.document_id == "report"
    assert explained[0].contribution.phrase > 0


def test_a_short_heading_gets_the_dense_leaning_fusion(index: Index) -> None:
    explained = index.explain(HEADING, k=3, collapse=False, fusion="per-query")
    choice = explained[0].contribution.choice
    assert choice is not None and not choice.phrase and choice.dense_weight > 0.5
    assert choice.name.startswith("dense-leaning")
    assert choice.evidence.phrase == 0.0 and choice.evidence.words == 3


def test_per_query_fusion_is_the_default(index: Index) -> None:
    assert index.settings.fusion == "per-query"
    default = index.explain(HEADING, k=2)
    assert default[0].contribution.choice is not None
    assert [e.hit.key for e in default] == [
        e.hit.key for e in index.explain(HEADING, k=2, fusion="per-query")
    ]


def test_explain_shows_the_fusion_and_its_evidence(index: Index) -> None:
    explained = index.explain(SPAN, k=3, collapse=False, fusion="per-query")
    for each in explained:
        part = each.contribution
        assert part.fusion == "per-query" and part.choice == explained[0].contribution.choice
        assert part.dense + part.sparse + part.listing + part.evidence + part.phrase == (
            pytest.approx(part.score)
        )
    top = explained[0].contribution
    assert top.phrase > 0  # the chosen lift, shown as in phrase evidence
    assert set(dataclasses.asdict(top.choice.evidence)) == set(FEATURES)  # type: ignore[union-attr]
    weighted = index.explain(SPAN, k=3, collapse=False, fusion="weighted")
    assert all(each.contribution.choice is None for each in weighted)


def test_phrase_evidence_off_turns_the_chosen_lift_off(index: Index) -> None:
    off = index.explain(SPAN, k=3, collapse=False, fusion="per-query", phrase_evidence="off")
    assert all(each.contribution.phrase == 0 for each in off)


def test_one_list_modes_make_no_choice(index: Index) -> None:
    for mode in ("dense", "sparse"):
        found = index.explain(SPAN, k=2, mode=mode, fusion="per-query")  # type: ignore[arg-type]
        assert all(each.contribution.choice is None for each in found)


def test_evidence_fields(index: Index) -> None:
    evidence = index.explain(HEADING, k=1, fusion="per-query")[0].contribution.choice
    assert evidence is not None
    values = evidence.evidence
    assert isinstance(values, QueryEvidence)
    assert 0.0 <= values.overlap <= 1.0 and -1.0 <= values.agreement <= 1.0
    assert values.arabic == 0.0
