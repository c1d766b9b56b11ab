"""Reranking wired into search: Index.search(rerank=True) and `ragkit query --rerank`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from conftest import MODEL
from ragkit import Index, RagkitError
from ragkit.cli import app
from ragkit.rerank.config import RerankerConfig
from ragkit.rerank.model import GroupwiseReranker
from ragkit.rerank.reranker import save_model

TINY = RerankerConfig(hidden=32, heads=4, ffn=64, layers=1, group_size=3, doc_tokens=32)


@pytest.fixture
def model_folder(tmp_path: Path) -> Path:
    torch.manual_seed(0)
    save_model(GroupwiseReranker(TINY), tmp_path / "tiny-reranker")
    return tmp_path / "tiny-reranker"


def test_rerank_reorders_the_first_stage_candidates(
    tmp_path: Path, corpus: Path, model_folder: Path
) -> None:
    index = Index.open(
        tmp_path / "index", create=True, model=MODEL, reranker=str(model_folder), rerank_weight=0.0
    )
    index.ingest([corpus])
    first = index.search("water boils", k=10)
    reranked = index.search("water boils", k=3, rerank=True)
    assert len(reranked) == 3
    assert {h.text for h in reranked} <= {h.text for h in first}
    assert [h.score for h in reranked] == sorted((h.score for h in reranked), reverse=True)
    assert all(0.0 <= h.score <= 1.0 for h in reranked)
    expected = index.reranker.score("water boils", [h.text for h in first])
    best = max(range(len(first)), key=lambda i: expected[i])
    assert reranked[0].text == first[best].text


def test_query_rerank_flag_and_missing_model(
    tmp_path: Path, corpus: Path, model_folder: Path
) -> None:
    runner = CliRunner()
    folder = tmp_path / "index"
    Index.open(folder, create=True, model=MODEL, reranker=str(model_folder)).ingest([corpus])
    result = runner.invoke(app, ["query", "water", "--index", str(folder), "--rerank", "--json"])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)  # the English-only note goes to stderr
    expected = Index.open(folder).search("water", k=10, rerank=True)
    assert [(h["text"], h["start"], h["end"]) for h in printed] == [
        (h.text, h.start, h.end) for h in expected
    ]
    assert [h["score"] for h in printed] == pytest.approx([h.score for h in expected])
    broken = tmp_path / "broken"
    Index.open(broken, create=True, model=MODEL, reranker=str(tmp_path / "none")).ingest([corpus])
    result = runner.invoke(app, ["query", "water", "--index", str(broken), "--rerank"])
    assert result.exit_code == 2 and "rerank train" in result.output
    with pytest.raises(RagkitError, match="no config.json"):
        Index.open(broken).search("water", rerank=True)


def test_reranking_settings_apply_to_one_handle(
    tmp_path: Path, corpus: Path, model_folder: Path
) -> None:
    folder = tmp_path / "index"
    Index.open(folder, create=True, model=MODEL, reranker=str(model_folder)).ingest([corpus])
    first = Index.open(folder).search("water boils", k=5)
    mixed_only = Index.open(folder, rerank_weight=1.0).search("water boils", k=5, rerank=True)
    assert [h.text for h in mixed_only] == [h.text for h in first]  # all first stage
    assert Index.open(folder).settings.rerank_weight == 0.2  # nothing stored
    with pytest.raises(RagkitError, match="rerank_weight"):
        Index.open(folder, rerank_weight=1.5)
    with pytest.raises(RagkitError, match="built with chunk_tokens"):
        Index.open(folder, chunk_tokens=64)
    runner = CliRunner()
    result = runner.invoke(
        app,
        ["query", "water", "--index", str(folder), "--rerank", "--rerank-weight", "1", "--json"],
    )
    assert result.exit_code == 0, result.output
    top = json.loads(result.stdout)[0]
    assert top["text"] == Index.open(folder).search("water", k=1)[0].text
    assert top["score"] == pytest.approx(1.0)


def test_override_is_not_stored_when_first_ingest_chooses_the_model(
    tmp_path: Path, corpus: Path
) -> None:
    folder = tmp_path / "auto"
    Index.open(folder, create=True)  # model "auto": the first ingest chooses and stores it
    Index.open(folder, rerank_weight=0.9).ingest([corpus])
    reopened = Index.open(folder)
    assert reopened.settings.embedding_model != "auto"
    assert reopened.settings.rerank_weight == 0.2
