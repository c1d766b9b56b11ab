"""Settings files: ragkit.toml in the index folder or --config FILE; arguments > file > defaults;
ragkit info shows the effective settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import MODEL, cli, ragkit
from ragkit import Index, RagkitError
from ragkit.config import (
    CONFIG_NAME,
    GROUPS,
    QUERY_SETTINGS,
    Applies,
    Settings,
    read_settings_file,
)


def test_folder_file_then_arguments_win(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    folder.mkdir()
    settings_file = folder / CONFIG_NAME
    settings_file.write_text(
        'chunker = "sentence"\nchunk_tokens = 64\nfusion = "rrf"\n', encoding="utf-8"
    )
    with Index.open(folder, create=True, model=MODEL, chunk_tokens=128) as index:
        chosen = index.settings
    assert (chosen.chunker, chosen.chunk_tokens, chosen.fusion) == ("sentence", 128, "rrf")
    assert chosen.dense_weight == 0.5  # a default

    settings_file.write_text('chunker = "sentence"\nrerank_weight = 0.3\n', encoding="utf-8")
    with Index.open(folder) as index:  # reranking settings of the file apply to queries
        assert index.settings.rerank_weight == 0.3 and index.settings.chunk_tokens == 128
        assert ("chunk context", "title") in index.info().rows()
    settings_file.write_text("chunk_tokens = 99\n", encoding="utf-8")
    with pytest.raises(RagkitError, match=r"not 99 \(set in .*ragkit.toml\); use a new"):
        Index.open(folder)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("chunk_size = 100\n", r"unknown setting\(s\) chunk_size; the settings are embedding_"),
        ("chunker = sentence\n", "not a valid TOML settings file"),
        ('fusion = "max"\n', "ragkit.toml: fusion: Input should be 'weighted', 'rrf' or 'per-query'$"),
    ],
)
def test_bad_settings_files(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / CONFIG_NAME).write_text(text, encoding="utf-8")
    with pytest.raises(RagkitError, match=message):
        Index.open(tmp_path, create=True, model=MODEL)


def test_cli_config_file_and_info(tmp_path: Path, corpus: Path) -> None:
    config = tmp_path / "settings.toml"
    config.write_text('chunker = "sentence"\nchunk_tokens = 64\nfusion = "rrf"\n', encoding="utf-8")
    index = str(tmp_path / "index")
    made = cli("ingest", str(corpus / "water.md"), "--index", index, "--model", MODEL,
               "--config", str(config), "--chunk-tokens", "100")  # fmt: skip
    assert made.returncode == 0, made.stdout + made.stderr
    shown = cli("info", "--index", index)
    assert shown.returncode == 0, shown.stderr
    assert "sentence, 100 tokens per chunk" in shown.stdout and "rrf, k 60" in shown.stdout
    assert "auto, top 50, first-stage weight 0.2" in shown.stdout
    missing = ragkit("info", "--index", index, "--config", str(tmp_path / "none.toml"))
    assert missing.returncode == 2 and "cannot read the settings file" in missing.stderr


def test_settings_are_grouped_and_say_when_they_apply(tmp_path: Path) -> None:
    named = [name for names in GROUPS.values() for name in names]
    assert sorted(named) == sorted(Settings.model_fields)  # each setting in one group
    assert QUERY_SETTINGS == {"collapse", "feedback", "document_evidence", "phrase_evidence"} | {
        "reranker", "rerank_depth", "rerank_weight", "rerank_passes"
    }  # fmt: skip
    assert Applies.CREATION in Settings.model_fields["chunk_tokens"].metadata
    path = tmp_path / CONFIG_NAME
    path.write_text('fusion = "rrf"\n\n[chunking]\nchunk_tokens = 200\n', encoding="utf-8")
    assert read_settings_file(path) == {"fusion": "rrf", "chunk_tokens": 200}
    path.write_text("[chunking]\nfusion_depth = 20\n", encoding="utf-8")
    with pytest.raises(RagkitError, match=r"\[chunking\] has no setting\(s\) fusion_depth"):
        read_settings_file(path)
    path.write_text("chunk_tokens = 100\n[chunking]\nchunk_tokens = 200\n", encoding="utf-8")
    with pytest.raises(RagkitError, match="chunk_tokens set twice"):
        read_settings_file(path)
