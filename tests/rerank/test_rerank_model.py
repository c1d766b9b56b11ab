"""Groupwise model, Reranker inference and synthetic data with the real bundled backbone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from ragkit.errors import RagkitError
from ragkit.paths import shared_data_dir
from ragkit.rerank.attention import AttentionConfig, attend
from ragkit.rerank.backbone import Backbone, StateBank
from ragkit.rerank.config import RerankerConfig
from ragkit.rerank.features import (
    anchor_vectors,
    candidate_signals,
    first_stage_prior,
    overlaps,
)
from ragkit.rerank.model import FEATURES, GroupwiseReranker
from ragkit.rerank.reranker import (
    MULTILINGUAL_RERANKER,
    WEIGHTS_DIR,
    Reranker,
    balanced_groups,
    choose_reranker,
    load_model,
    resolve_model_folder,
    save_model,
)
from ragkit.training.synthetic import CorpusDocument, build_groups, read_beir_corpus

CRANFIELD = shared_data_dir() / "beir" / "cranfield"
TINY = RerankerConfig(hidden=32, heads=4, ffn=64, layers=1, group_size=4, doc_tokens=32)


@pytest.fixture(scope="module")
def backbone() -> Backbone:
    return Backbone("all-minilm-l6-v2")


def test_dense_attention_ignores_padding_keys() -> None:
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 5, 8) for _ in range(3))
    segments = torch.tensor([[0, 0, 1, 1, -1]])
    padded = attend(q, k, v, segments, AttentionConfig())
    trimmed = attend(
        q[..., :4, :], k[..., :4, :], v[..., :4, :], segments[:, :4], AttentionConfig()
    )
    assert torch.allclose(padded[..., :4, :], trimmed, atol=1e-6)
    assert padded[..., 4, :].abs().sum() == 0


def test_unknown_attention_kind_is_a_clear_error() -> None:
    x = torch.randn(1, 1, 2, 4)
    with pytest.raises(RagkitError, match="attention"):
        attend(x, x, x, torch.zeros(1, 2, dtype=torch.long), AttentionConfig(kind="sparse"))  # type: ignore[arg-type]


def test_scores_follow_the_candidates_when_they_are_reordered() -> None:
    torch.manual_seed(0)
    config = RerankerConfig(hidden=32, heads=4, ffn=64, layers=2, backbone_dim=16)
    model = GroupwiseReranker(config).eval()
    query, query_mask = torch.randn(1, 6, 16), torch.ones(1, 6, dtype=torch.bool)
    docs, doc_mask = torch.randn(1, 5, 8, 16), torch.ones(1, 5, 8, dtype=torch.bool)
    doc_mask[0, 2, 5:] = False
    features = torch.randn(1, 5, FEATURES)
    order = torch.tensor([3, 0, 4, 2, 1])
    with torch.no_grad():
        logits = model(query, query_mask, docs, doc_mask, features)
        permuted = model(query, query_mask, docs[:, order], doc_mask[:, order], features[:, order])
    assert torch.allclose(logits[:, order], permuted, atol=1e-5)


def test_a_candidates_score_depends_on_its_rivals() -> None:
    torch.manual_seed(1)
    config = RerankerConfig(hidden=32, heads=4, ffn=64, layers=2, backbone_dim=16)
    model = GroupwiseReranker(config).eval()
    query, query_mask = torch.randn(1, 6, 16), torch.ones(1, 6, dtype=torch.bool)
    docs, doc_mask = torch.randn(1, 3, 8, 16), torch.ones(1, 3, 8, dtype=torch.bool)
    features = torch.zeros(1, 3, FEATURES)
    with torch.no_grad():
        first = model(query, query_mask, docs, doc_mask, features)[0, 0]
        docs[0, 1] = torch.randn(8, 16)  # change a rival only
        second = model(query, query_mask, docs, doc_mask, features)[0, 0]
    assert not torch.allclose(first, second)


def test_balanced_groups_cover_every_candidate_once() -> None:
    for count, size in [(1, 4), (16, 16), (17, 16), (50, 16)]:
        groups = balanced_groups(count, size)
        covered = [i for g in groups for i in range(count)[g]]
        assert covered == list(range(count))
        assert max(g.stop - g.start for g in groups) <= size


def test_save_load_round_trip_and_ranking(tmp_path: Path, backbone: Backbone) -> None:
    torch.manual_seed(0)
    model = GroupwiseReranker(TINY.model_copy(update={"backbone_dim": backbone.dimension}))
    save_model(model, tmp_path / "m")
    loaded = load_model(tmp_path / "m")
    docs = [f"Document {i} about wings and flutter at speed {i}." for i in range(9)]
    first = Reranker(model, backbone).score("wing flutter", docs)
    again = Reranker(loaded, backbone).score("wing flutter", docs)
    assert first.shape == (9,) and np.allclose(first, again, atol=1e-6)
    assert ((0 <= first) & (first <= 1)).all()
    ranked = Reranker(loaded, backbone, first_stage_weight=1.0).rank(
        "wing flutter", docs, first_stage=list(range(9))
    )
    assert [c.index for c in ranked] == list(range(8, -1, -1))
    with pytest.raises(RagkitError, match="first-stage scores"):
        Reranker(loaded, backbone, first_stage_weight=0.5).rank("q", docs, first_stage=[1.0])


def test_missing_model_folder_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(RagkitError, match="rerank train"):
        resolve_model_folder(tmp_path / "nothing")


def test_corrupt_weights_are_a_clear_error(tmp_path: Path) -> None:
    model = GroupwiseReranker(TINY)
    save_model(model, tmp_path)
    (tmp_path / "config.json").write_text(TINY.model_copy(update={"hidden": 64}).model_dump_json())
    with pytest.raises(RagkitError, match="not weights for this config"):
        load_model(tmp_path)


@pytest.mark.skipif(
    not CRANFIELD.exists(),
    reason=f"shared data not found under {shared_data_dir()} (set RAGKIT_SHARED_DATA)",
)
def test_synthetic_groups_from_a_real_corpus(backbone: Backbone) -> None:
    documents = read_beir_corpus(CRANFIELD)[:40]
    passages = StateBank(backbone, 32, "passage")
    queries = StateBank(backbone, 16, "query")
    groups = build_groups(documents, passages, queries, group_size=6, seed=3)
    again = build_groups(documents, passages, queries, group_size=6, seed=3)
    assert [g.as_dict() for g in groups] == [g.as_dict() for g in again]
    by_id = {d.doc_id: d for d in documents}
    for group in groups:
        assert len(group.doc_ids) == 6 and len(set(group.doc_ids)) == 6
        assert group.labels.count(10) == 1
        assert group.doc_ids[group.labels.index(10)] == group.source
        assert all(0 <= level <= 7 for level in group.labels if level != 10)
        assert len(group.prior) == 6 and all(0.0 <= p <= 1.0 for p in group.prior)
        assert len(group.anchors) == 3
        source_text = group.passages[group.doc_ids.index(group.source)]
        if group.kind == "title":
            assert all(
                not p.startswith(by_id[d].title)
                for d, p in zip(group.doc_ids, group.passages, strict=True)
                if by_id[d].title
            )
        if group.kind == "sentence":
            assert group.query not in source_text
    assert {g.kind for g in groups} >= {"title", "sentence"}


def test_too_small_corpus_is_refused(backbone: Backbone) -> None:
    documents = [CorpusDocument(str(i), "", f"text {i}") for i in range(3)]
    bank = StateBank(backbone, 16, "passage")
    with pytest.raises(RagkitError, match="at least group_size"):
        build_groups(documents, bank, bank, group_size=6)


def test_first_stage_scores_are_an_input_and_order_stands_in_for_them(backbone: Backbone) -> None:
    torch.manual_seed(2)
    model = GroupwiseReranker(TINY.model_copy(update={"backbone_dim": backbone.dimension}))
    reranker = Reranker(model, backbone)
    docs = [f"Report {i} on wing flutter and heating at Mach {i}." for i in range(6)]
    by_order = reranker.score("wing flutter", docs)
    descending = reranker.score("wing flutter", docs, first_stage=[6, 5, 4, 3, 2, 1])
    reversed_scores = reranker.score("wing flutter", docs, first_stage=[1, 2, 3, 4, 5, 6])
    assert np.allclose(by_order, descending, atol=1e-6)
    assert not np.allclose(by_order, reversed_scores, atol=1e-4)


def test_candidate_signals_from_real_states(backbone: Backbone) -> None:
    query = "swept wing flutter"
    docs = [query, "bread rises with yeast", "flutter of a swept wing at transonic speed"]
    query_states = backbone.encode([query], 16, "query")
    doc_states = backbone.encode(docs, 32, "passage")
    prior = first_stage_prior([0.2, 0.1, 0.9], 3)
    signals = candidate_signals(
        query_states, doc_states, overlaps(query, docs), prior, anchor_vectors(doc_states, prior)
    )
    cosine, overlap, prior_signal, maxsim, centroid = signals.T.tolist()
    assert maxsim[0] == pytest.approx(1.0, abs=1e-4) and maxsim[2] > maxsim[1]
    assert overlap == [1.0, 0.0, 1.0] and prior_signal == [pytest.approx(1 / 8), 0.0, 1.0]
    assert cosine[0] > cosine[2] > cosine[1] and centroid[1] < min(centroid[0], centroid[2])


def test_auto_reranker_reads_the_index_languages(tmp_path: Path) -> None:
    assert choose_reranker({"en"}) == choose_reranker({"en", "und"}) == "groupwise-minilm"
    assert resolve_model_folder("auto", {"en"}).name == "groupwise-minilm"
    if (WEIGHTS_DIR / MULTILINGUAL_RERANKER).is_dir():
        assert choose_reranker({"ar"}) == choose_reranker({"en", "ar"}) == MULTILINGUAL_RERANKER
    else:
        assert choose_reranker({"en", "ar"}) == "groupwise-minilm"
        with pytest.raises(RagkitError, match=r"no shipped reranker reads am, ar"):
            choose_reranker({"ar", "am"})
