"""Sparse (BM25), dense (Flat/HNSW/IVF) and hybrid retrieval, filters and the BM25 lifecycle."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import MODEL
from ragkit import Index, RagkitError
from ragkit.config import Settings
from ragkit.search import dense as dense_index
from ragkit.search.fusion import fuse, minmax
from ragkit.search.sparse import SparseIndex, analyze


def _unit(count: int, seed: int = 0) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((count, 32)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_sparse_index_save_load_and_filter(tmp_path):
    rows = [(10, "▁wing ▁lift"), (11, "▁wing ▁drag"), (12, "▁heat ▁transfer")]
    index = SparseIndex.build(rows)
    assert [c for c, _ in index.search(["▁lift"], 5)] == [10]
    index.save(tmp_path / "bm25")
    loaded = SparseIndex.load(tmp_path / "bm25")
    assert [c for c, _ in loaded.search(["▁wing"], 5)] == [c for c, _ in index.search(["▁wing"], 5)]
    assert [c for c, _ in loaded.search(["▁wing"], 5, allowed=np.array([11]))] == [11]
    assert SparseIndex.build([]).search(["▁wing"], 5) == []
    shutil.rmtree(tmp_path / "bm25")
    (tmp_path / "bm25").mkdir()
    with pytest.raises(RagkitError, match="doctor --repair"):
        SparseIndex.load(tmp_path / "bm25")


def test_analyze_stems_and_drops_stopwords():
    assert analyze("The aerodynamic heating of wings", "en") == ["aerodynam", "heat", "wing"]
    assert analyze("", "en") == []
    assert analyze("ሰላም ነው", "am") == ["ሰላም", "ነው"]  # no stemmer: words as they are


@pytest.mark.parametrize("kind", ["flat", "hnsw", "ivf"])
def test_dense_kinds_find_the_exact_neighbour(kind):
    vectors = _unit(3000)
    ids = np.arange(100, 3100, dtype=np.int64)
    settings = {
        "flat": Settings(),
        "hnsw": Settings(hnsw_threshold=1),
        "ivf": Settings(hnsw_threshold=1, ivf_threshold=1, ivf_pq_m=8, ivf_nprobe=64),
    }[kind]
    index = dense_index.build_index(32, len(ids), settings, lambda: iter([(ids, vectors)]))
    assert dense_index.kind_of(index) == kind
    fetch = lambda wanted: {i: vectors[i - 100] for i in wanted}
    hits = dense_index.search(index, vectors[7], 5, settings, fetch=fetch)
    assert hits[0][0] == 107
    if kind == "ivf":  # re-scored with the exact vectors: the score is the true inner product
        assert hits[0][1] == pytest.approx(1.0, abs=1e-5)
    allowed = np.array([2000, 2001], dtype=np.int64)
    filtered = dense_index.search(index, vectors[7], 5, settings, allowed=allowed, fetch=fetch)
    assert {i for i, _ in filtered} <= {2000, 2001}


@pytest.mark.parametrize(
    ("kind", "low", "high"),
    [
        ("hnsw", {"hnsw_ef_search": 10}, {"hnsw_ef_search": 400}),
        ("ivf", {"ivf_nprobe": 1}, {"ivf_nprobe": 256, "rescore_factor": 20}),
    ],
)
def test_search_settings_apply_at_query_time(kind, low, high):
    """One index built once: the search-time setting, not the build-time one, sets recall."""
    vectors, queries = _unit(3000), _unit(50, seed=1)
    ids = np.arange(3000, dtype=np.int64)
    built = Settings(hnsw_threshold=1, ivf_threshold=1 if kind == "ivf" else 10**9, ivf_pq_m=8)
    index = dense_index.build_index(32, len(ids), built, lambda: iter([(ids, vectors)]))
    exact = np.argsort(-(queries @ vectors.T), axis=1)[:, :10]
    fetch = lambda wanted: {i: vectors[i] for i in wanted}

    def recall(overrides: dict) -> float:
        settings = built.model_copy(update=overrides)
        found = [
            [i for i, _ in dense_index.search(index, q, 10, settings, fetch=fetch)] for q in queries
        ]
        return float(
            np.mean([len(set(f) & set(e)) / 10 for f, e in zip(found, exact, strict=True)])
        )

    assert recall(high) >= 0.95
    assert recall(low) < recall(high) - 0.1


def test_fusion_methods_agree_on_a_clear_winner():
    dense = [(1, 0.9), (2, 0.5)]
    sparse = [(1, 8.0), (3, 2.0)]
    assert fuse([dense, sparse], "rrf")[0][0] == 1
    assert fuse([dense, sparse], "weighted", weights=(0.3, 0.7))[0][0] == 1


@pytest.fixture
def index(tmp_path: Path, corpus: Path) -> Index:
    opened = Index.open(tmp_path / "index", create=True, model=MODEL)
    opened.ingest([corpus])
    return opened


def test_modes_and_filters(index: Index):
    for mode in ("dense", "sparse", "hybrid"):
        hits = index.search("water boils at 100 degrees", k=2, mode=mode)
        assert Path(hits[0].source).name == "water.md", mode
    arabic = index.search("الأعمال بالنيات", k=3, mode="sparse")
    assert Path(arabic[0].source).name == "prayer.txt"
    only_sub = index.search("water", k=5, filters={"source": "*/sub/*"})
    assert only_sub and all("/sub/" in hit.source for hit in only_sub)
    by_metadata = index.search("wheels", k=5, filters={"lang": "en"})
    assert [hit.document_id for hit in by_metadata] == ["r2"]
    assert index.search("water", k=5, filters={"language": "xx"}) == []
    with pytest.raises(RagkitError, match="search mode"):
        index.search("water", mode="fuzzy")  # type: ignore[arg-type]
    for empty in ("", "  ?! "):  # no words: refused, not ten arbitrary neighbours
        with pytest.raises(RagkitError, match="empty query"):
            index.search(empty)


def test_hybrid_fusion_follows_the_fusion_setting(index: Index) -> None:
    query = "water boils at 100 degrees"  # held as written by one chunk: no phrase lift here
    options = {"k": 5, "phrase_evidence": "off"}
    default = [(h.document_id, h.score) for h in index.search(query, **options)]
    weighted = [(h.document_id, h.score) for h in index.search(query, fusion="weighted", **options)]
    rrf = [(h.document_id, h.score) for h in index.search(query, fusion="rrf", **options)]
    # per-query fusion (the default) gives this 4-word query without a lift the weighted
    # fusion at the dense weight it chose
    choice = index.explain(query, k=1, phrase_evidence="off")[0].contribution.choice
    assert choice is not None and not choice.phrase and not choice.feedback
    chosen = index.search(query, dense_weight=choice.dense_weight, **options)
    assert index.settings.fusion == "per-query" and rrf != weighted
    assert default == [(h.document_id, h.score) for h in chosen]
    assert all(s <= 2 / 61 for _, s in rrf)  # reciprocal ranks, k = 60
    index.settings.fusion = "rrf"
    assert [(h.document_id, h.score) for h in index.search(query, **options)] == rrf


def test_bm25_is_rebuilt_when_missing_and_old_generations_are_removed(index: Index, corpus):
    folder = index.store.folder
    generation = index.store.generation
    assert (folder / f"bm25-{generation}").is_dir()
    expected = [h.document_id for h in index.search("cats sleep", k=3, mode="sparse")]
    index.close()
    shutil.rmtree(folder / f"bm25-{generation}")  # as after a crash before the rebuild
    reopened = Index.open(folder)
    assert [h.document_id for h in reopened.search("cats sleep", k=3, mode="sparse")] == expected
    assert (folder / f"bm25-{generation}").is_dir()
    (corpus / "sub" / "cats.txt").write_text("Cats hunt mice at night.", encoding="utf-8")
    reopened.ingest([corpus])
    assert sorted(p.name for p in folder.glob("bm25-*")) == [f"bm25-{reopened.store.generation}"]
    hits = reopened.search("mice", k=1, mode="sparse")
    assert Path(hits[0].source).name == "cats.txt"


def test_query_cli_modes_and_filters(index: Index):
    from typer.testing import CliRunner

    from ragkit.cli import app

    folder = str(index.store.folder)
    index.close()
    runner = CliRunner()
    result = runner.invoke(
        app, ["query", "wheels", "--index", folder, "--mode", "sparse", "--filter", "lang=en"]
    )
    assert result.exit_code == 0, result.output
    assert "r2" in result.stdout
    bad = runner.invoke(app, ["query", "wheels", "--index", folder, "--filter", "lang"])
    assert bad.exit_code == 2 and "KEY=VALUE" in bad.output
    bad_mode = runner.invoke(app, ["query", "wheels", "--index", folder, "--mode", "fuzzy"])
    assert bad_mode.exit_code == 2 and "'fuzzy' is not one of 'hybrid'" in bad_mode.output


def test_exact_words_outrank_words_that_only_share_the_stem() -> None:
    texts = {1: "Connection.", 2: "Connected sensors report readings every minute."}
    for exact, first in ((False, 1), (True, 2)):
        rows = [(i, " ".join(analyze(text, "en", exact=exact))) for i, text in texts.items()]
        hits = SparseIndex.build(rows).search(analyze("connected", "en", exact=exact), 2)
        assert hits[0][0] == first, exact  # stems alone: the shorter text wins
    assert analyze("Connected sensors", "en", exact=True) == [
        "connect", "=connected", "sensor", "=sensors",
    ]  # fmt: skip


def test_sparse_search_scores_included_ids_even_at_zero() -> None:
    index = SparseIndex.build([(10, "wing lift"), (11, "wing drag"), (12, "heat")])
    assert index.search(["lift"], 1, include=[12, 11]) == [
        (10, pytest.approx(index.search(["lift"], 1)[0][1])),
        (11, 0.0),
        (12, 0.0),
    ]
    assert [c for c, _ in index.search(["lift"], 1, np.array([10, 11]), include=[12])] == [10]


def test_weighted_hybrid_scores_every_candidate_in_both_lists(index: Index) -> None:
    """A candidate below one list's depth is scored there with its real score, not 0."""
    index.settings.fusion_depth = 2
    checked = 0
    for query in ("steam water", "small wheels", "steam trains", "sleeping cats melt ice"):
        hits = index.search(query, k=2, mode="hybrid", fusion="weighted")
        vector = index.encoder.encode_queries([query])[0]
        terms = index.terms(index.matching_key(query, "en"), "en")
        union = sorted(
            {i for i, _ in index.store.search_vectors(vector, 2)}
            | {i for i, _ in index.store.search_terms(terms, 2)}
        )
        if len(union) == 2:
            continue  # both lists found the same two chunks: nothing to complete
        dense = [score for _, score in index.store.score_vectors(vector, union)]
        sparse = dict(index.store.search_terms(terms, 2, include=union))
        expected = 0.5 * minmax(dense) + 0.5 * minmax([sparse[i] for i in union])
        assert [h.score for h in hits] == pytest.approx(sorted(expected.tolist())[::-1][:2])
        checked += 1
    assert checked
