from __future__ import annotations

import math
from pathlib import Path

import pytest
from conftest import MODEL

from ragkit.evaluate import evaluate, mrr_at_k, ndcg_at_k, recall_at_k

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "beir"


def test_metrics_by_hand() -> None:
    relevant = {"a": 2, "b": 1}
    ranked = ["x", "a", "b"]
    dcg = 3 / math.log2(3) + 1 / math.log2(4)
    idcg = 3 / math.log2(2) + 1 / math.log2(3)
    assert ndcg_at_k(ranked, relevant) == pytest.approx(dcg / idcg)
    assert mrr_at_k(ranked, relevant) == 0.5
    assert recall_at_k(ranked, relevant, k=2) == 0.5
    assert ndcg_at_k(["a", "b"], relevant) == pytest.approx(1.0)


def test_evaluate_tiny_beir_folder(tiny_beir: Path) -> None:
    reports = evaluate(tiny_beir, MODEL, modes=("dense", "sparse", "hybrid"))
    assert [r.mode for r in reports] == ["dense", "sparse", "hybrid"]
    for report in reports:
        assert report.queries == 2
        assert report.ndcg_at_10 == pytest.approx(1.0), report.mode
        assert report.mrr_at_10 == 1.0 and report.recall_at_100 == 1.0


@pytest.mark.slow
@pytest.mark.skipif(not (SHARED / "cranfield").exists(), reason="shared data not present")
def test_cranfield_minilm_matches_reference() -> None:
    dense, hybrid = evaluate(SHARED / "cranfield", MODEL, modes=("dense", "hybrid"))
    assert dense.queries == 225
    assert abs(dense.ndcg_at_10 - 0.368) <= 0.01
    assert hybrid.ndcg_at_10 > dense.ndcg_at_10 + 0.02  # fusion adds over dense alone
