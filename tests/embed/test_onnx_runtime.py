"""Passages and queries on ONNX Runtime (:mod:`ragkit.embed.onnx_runtime`): the same vectors
as the torch model for short, long, English and Arabic texts, one at a time and in padded
batches; every text of an encoder on it, from a checked copy without the torch model (a new
process then ingests and searches importing neither torch nor sentence-transformers) or from
one prepared at the first use; the exported copy reused, replaced when damaged;
``RAGKIT_EMBED_RUNTIME``."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ragkit.embed import Encoder, onnx_runtime
from ragkit.embed.onnx_runtime import CheckedCopy, OnnxEncoder
from ragkit.errors import RagkitError

SUITE_CACHE = os.environ.get("RAGKIT_CACHE")  # the suite's, before this module's own
QUERIES = [
    "ab",
    "heat transfer",
    "boundary layer transition on a flat plate at high mach numbers",
    "الماء",
    "صلاة الجمعة في السفر",
    " ".join(["supersonic flow over slender bodies"] * 80),  # past the 256-token limit
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A cache folder of this module's own, so the export really runs here."""
    folder = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAGKIT_CACHE", str(folder))
        patch.delenv("RAGKIT_EMBED_RUNTIME", raising=False)
        yield folder


@pytest.fixture(scope="module")
def prepared(cache: Path) -> Encoder:
    encoder = Encoder("all-minilm-l6-v2")
    assert encoder.runtime() is not None
    return encoder


def copies(cache: Path) -> list[Path]:
    """The fp32 copies in ``cache`` (an index made with the defaults adds an int8 one)."""
    found = (cache / "models" / "onnx").glob("all-minilm-l6-v2-*.onnx")
    return sorted(p for p in found if not p.name.endswith(".int8.onnx"))


def test_onnx_vectors_equal_the_torch_models(prepared: Encoder) -> None:
    onnx = prepared.runtime()
    assert onnx is not None
    for query in QUERIES:
        expected = prepared._forward([query])
        found = prepared.encode_queries([query])
        assert found.shape == (1, 384) and found.dtype == np.float32
        np.testing.assert_allclose(found, expected, atol=1e-5)
        np.testing.assert_allclose(onnx([query]), expected, atol=1e-5)


def test_passages_run_on_onnx_equal_to_torch_and_alone(prepared: Encoder) -> None:
    passages = [*QUERIES, "Shock waves.", "الماء يغلي عند مئة درجة"] * 3
    found = prepared.encode_passages(passages)
    assert found.shape == (len(passages), 384) and found.dtype == np.float32
    np.testing.assert_allclose(found, prepared._encode(passages), atol=1e-5)
    alone = prepared.encode_passages(passages[1:2])  # the same numbers whatever runs beside it
    np.testing.assert_array_equal(alone[0], found[1])
    assert prepared.encode_passages([]).shape == (0, 384)


def test_a_copy_is_exported_once_and_reused(
    prepared: Encoder, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (copy,) = copies(cache)
    written = copy.stat().st_mtime_ns
    monkeypatch.setattr(onnx_runtime, "export", lambda *_: pytest.fail("exported again"))
    assert Encoder("all-minilm-l6-v2").runtime() is not None
    assert copy.stat().st_mtime_ns == written
    assert not [p for p in copy.parent.iterdir() if p.suffix == ".tmp"]


def test_a_checked_copy_serves_the_first_query_without_the_torch_model(
    prepared: Encoder, cache: Path
) -> None:
    (copy,) = copies(cache)
    assert CheckedCopy.record_of(copy).exists()
    encoder = Encoder("all-minilm-l6-v2")
    for query in QUERIES:
        found = encoder.encode_queries([query])
        np.testing.assert_allclose(found, prepared._forward([query]), atol=1e-5)
    assert encoder._model is None and encoder._onnx is not None


def test_without_a_checked_copy_the_first_query_prepares_one(
    prepared: Encoder, cache: Path
) -> None:
    (copy,) = copies(cache)
    CheckedCopy.record_of(copy).unlink()
    encoder = Encoder("all-minilm-l6-v2")  # the model is loaded once per process
    first = encoder.encode_queries(["wing flutter"])
    assert encoder._model is not None and encoder._onnx is not None
    assert CheckedCopy.record_of(copy).exists()  # written again after the check
    np.testing.assert_allclose(first, prepared._forward(["wing flutter"]), atol=1e-5)


def test_a_new_process_ingests_and_searches_without_torch(
    prepared: Encoder, cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("Heat transfer in hypersonic flow.", "utf-8")
    (tmp_path / "docs" / "b.txt").write_text("Flutter of thin wings.", "utf-8")
    from ragkit import Index

    settings = {"model": "all-minilm-l6-v2", "chunker": "sentence"}
    monkeypatch.setenv("RAGKIT_EMBED_RUNTIME", "torch")  # the vectors to compare with
    with Index.open(tmp_path / "torch-index", create=True, **settings) as index:
        index.ingest([tmp_path / "docs"])
        expected = [(hit.document_id, hit.score) for hit in index.search("heat flow", k=2)]
    monkeypatch.delenv("RAGKIT_EMBED_RUNTIME")
    script = (
        "import json, sys; from ragkit import Index\n"
        f"with Index.open({str(tmp_path / 'index')!r}, create=True, model='all-minilm-l6-v2', "
        "chunker='sentence') as index:\n"
        f"    index.ingest([{str(tmp_path / 'docs')!r}])\n"
        "    hits = index.search('heat flow', k=2)\n"
        "print(json.dumps([(h.document_id, h.score) for h in hits]))\n"
        "print('torch' in sys.modules, 'sentence_transformers' in sys.modules)\n"
    )
    env = {**os.environ, "RAGKIT_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    )
    hits, loaded = run.stdout.strip().splitlines()
    assert loaded == "False False"
    found = json.loads(hits)
    assert [d for d, _ in found] == [d for d, _ in expected]
    np.testing.assert_allclose([s for _, s in found], [s for _, s in expected], atol=1e-5)


def test_a_damaged_checked_copy_is_exported_again(
    prepared: Encoder, cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (copy,) = copies(cache)
    assert CheckedCopy.record_of(copy).exists()
    copy.write_bytes(b"not an onnx graph")
    with caplog.at_level(logging.WARNING, logger="ragkit.embed.onnx_runtime"):
        encoder = Encoder("all-minilm-l6-v2")
        found = encoder.encode_queries(["ab"])
    assert "could not be loaded" in caplog.text
    assert encoder._onnx is not None and encoder._model is not None  # exported and checked
    assert copy.stat().st_size > 1_000_000 and CheckedCopy.record_of(copy).exists()
    np.testing.assert_allclose(found, prepared._forward(["ab"]), atol=1e-5)


def test_a_damaged_copy_is_exported_again(
    prepared: Encoder, cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Damaged before it was checked (no record): found when the session beside the torch
    model cannot load it."""
    (copy,) = copies(cache)
    CheckedCopy.record_of(copy).unlink(missing_ok=True)
    copy.write_bytes(b"not an onnx graph")
    with caplog.at_level(logging.WARNING, logger="ragkit.embed.onnx_runtime"):
        encoder = Encoder("all-minilm-l6-v2")
        onnx = encoder.runtime()
    assert onnx is not None
    assert str(copy) in caplog.text and "exporting it again" in caplog.text
    assert copy.stat().st_size > 1_000_000
    np.testing.assert_allclose(onnx(["ab"]), encoder._forward(["ab"]), atol=1e-5)


def test_a_copy_damaged_but_loadable_is_not_trusted(
    prepared: Encoder, cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Weights overwritten in place still parse; the checksum recorded when the copy was
    checked catches them before the copy answers a query."""
    prepared.encode_queries(["ab"])  # a checked copy with its record
    (copy,) = copies(cache)
    data = bytearray(copy.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 4096] = bytes(4096)  # zeroed weights: the graph still loads
    copy.write_bytes(bytes(data))
    onnx_runtime.session_of(copy)  # still loads
    with caplog.at_level(logging.WARNING, logger="ragkit.embed.onnx_runtime"):
        encoder = Encoder("all-minilm-l6-v2")
        found = encoder.encode_queries(["heat transfer"])
    assert "checksum differs" in caplog.text
    np.testing.assert_allclose(found, prepared._forward(["heat transfer"]), atol=1e-5)


def test_runtime_torch_keeps_queries_on_torch(
    prepared: Encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGKIT_EMBED_RUNTIME", "torch")
    encoder = Encoder("all-minilm-l6-v2")
    encoder.encode_queries(["a"]), encoder.encode_queries(["b"])
    assert encoder._onnx is None and encoder._model is not None
    assert encoder.runtime() is None


def test_an_unknown_runtime_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGKIT_EMBED_RUNTIME", "tensorrt")
    with pytest.raises(RagkitError, match="RAGKIT_EMBED_RUNTIME='tensorrt'.*auto, onnx, torch"):
        Encoder("all-minilm-l6-v2").runtime()


def test_without_onnxruntime_auto_falls_back_and_onnx_is_an_error(
    prepared: Encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails as if not installed
    assert OnnxEncoder.for_model(prepared.model, "all-minilm-l6-v2") is None
    monkeypatch.setenv("RAGKIT_EMBED_RUNTIME", "onnx")
    with pytest.raises(RagkitError, match="RAGKIT_EMBED_RUNTIME=onnx: all-minilm-l6-v2 cannot"):
        OnnxEncoder.for_model(prepared.model, "all-minilm-l6-v2")


def test_only_transformer_pooling_models_export(prepared: Encoder) -> None:
    assert OnnxEncoder.layout_supported(prepared.model)
    from sentence_transformers import SentenceTransformer

    pooled_only = SentenceTransformer(modules=[prepared.model[0]], device="cpu")
    assert not OnnxEncoder.layout_supported(pooled_only)


@pytest.mark.slow
def test_multilingual_e5_on_onnx_equals_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    """In the suite's cache (e5 converted there once, its copy exported there once)."""
    if SUITE_CACHE:
        monkeypatch.setenv("RAGKIT_CACHE", SUITE_CACHE)
    else:
        monkeypatch.delenv("RAGKIT_CACHE", raising=False)
    encoder = Encoder("multilingual-e5-small")
    onnx = encoder.runtime()
    assert onnx is not None
    cold = Encoder("multilingual-e5-small")  # from the checked copy, its tokenizer.json alone
    for query in QUERIES:
        text = encoder.spec.query_prefix + query
        expected = encoder._forward([text])
        np.testing.assert_allclose(onnx([text]), expected, atol=1e-5)
        np.testing.assert_allclose(cold.encode_queries([query]), expected, atol=1e-5)
    passages = [*QUERIES, "Shock waves."]
    expected = encoder._encode([encoder.spec.passage_prefix + p for p in passages])
    np.testing.assert_allclose(cold.encode_passages(passages), expected, atol=1e-5)
    assert cold._model is None


def test_the_first_ingest_makes_the_checked_copy_and_embeds_on_it(
    cache: Path, tmp_path: Path
) -> None:
    for copy in copies(cache):
        CheckedCopy.record_of(copy).unlink(missing_ok=True)
    (tmp_path / "a.txt").write_text("Heat transfer in hypersonic flow.", "utf-8")
    from ragkit import Index

    fp32 = {"model": "all-minilm-l6-v2", "embedding_precision": "fp32"}
    with Index.open(tmp_path / "index", create=True, **fp32) as index:
        index.ingest([tmp_path / "a.txt"])
        assert index.encoder._onnx is not None and index.encoder._onnx.path in copies(cache)
    (copy,) = copies(cache)
    assert CheckedCopy.record_of(copy).exists()
