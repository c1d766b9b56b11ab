"""Single queries on ONNX Runtime (:mod:`ragkit.embed.onnx_query`): the same vectors as the
torch model for short, long, English and Arabic queries; every single query of an encoder on
it, from a checked copy without the torch model (a new process then imports neither torch nor
sentence-transformers) or from one prepared at the first query; an ingest prepares it; the
exported copy reused, replaced when damaged; ``RAGKIT_QUERY_RUNTIME``."""

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

from ragkit.embed import Encoder, onnx_query
from ragkit.embed.onnx_query import CheckedCopy, OnnxQueryEncoder
from ragkit.errors import RagkitError

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
        patch.delenv("RAGKIT_QUERY_RUNTIME", raising=False)
        yield folder


@pytest.fixture(scope="module")
def prepared(cache: Path) -> Encoder:
    encoder = Encoder("all-minilm-l6-v2")
    assert encoder.onnx_queries() is not None
    return encoder


def copies(cache: Path) -> list[Path]:
    return sorted((cache / "models" / "onnx").glob("all-minilm-l6-v2-*.onnx"))


def test_onnx_vectors_equal_the_torch_models(prepared: Encoder) -> None:
    onnx = prepared.onnx_queries()
    assert onnx is not None
    for query in QUERIES:
        expected = prepared._forward([query])
        found = prepared.encode_queries([query])
        assert found.shape == (1, 384) and found.dtype == np.float32
        np.testing.assert_allclose(found, expected, atol=1e-5)
        np.testing.assert_allclose(onnx([query]), expected, atol=1e-5)


def test_a_copy_is_exported_once_and_reused(
    prepared: Encoder, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (copy,) = copies(cache)
    written = copy.stat().st_mtime_ns
    monkeypatch.setattr(onnx_query, "export", lambda *_: pytest.fail("exported again"))
    assert Encoder("all-minilm-l6-v2").onnx_queries() is not None
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


def test_a_new_process_searches_without_torch(
    prepared: Encoder, cache: Path, tmp_path: Path
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("Heat transfer in hypersonic flow.", "utf-8")
    (tmp_path / "docs" / "b.txt").write_text("Flutter of thin wings.", "utf-8")
    from ragkit import Index

    with Index.open(tmp_path / "index", create=True, model="all-minilm-l6-v2") as index:
        index.ingest([tmp_path / "docs"])
        expected = [(hit.document_id, hit.score) for hit in index.search("heat flow", k=2)]
    script = (
        "import json, sys; from ragkit import Index\n"
        f"with Index.open({str(tmp_path / 'index')!r}) as index:\n"
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
    with caplog.at_level(logging.WARNING, logger="ragkit.embed.onnx_query"):
        encoder = Encoder("all-minilm-l6-v2")
        found = encoder.encode_queries(["ab"])
    assert "could not be loaded" in caplog.text
    assert encoder._onnx is not None and encoder._model is not None  # exported and checked
    assert copy.stat().st_size > 1_000_000 and CheckedCopy.record_of(copy).exists()
    np.testing.assert_allclose(found, prepared._forward(["ab"]), atol=1e-5)


def test_a_damaged_copy_is_exported_again(
    prepared: Encoder, cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (copy,) = copies(cache)
    copy.write_bytes(b"not an onnx graph")
    with caplog.at_level(logging.WARNING, logger="ragkit.embed.onnx_query"):
        encoder = Encoder("all-minilm-l6-v2")
        onnx = encoder.onnx_queries()
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
    onnx_query.session_of(copy)  # still loads
    with caplog.at_level(logging.WARNING, logger="ragkit.embed.onnx_query"):
        encoder = Encoder("all-minilm-l6-v2")
        found = encoder.encode_queries(["heat transfer"])
    assert "checksum differs" in caplog.text
    np.testing.assert_allclose(found, prepared._forward(["heat transfer"]), atol=1e-5)


def test_runtime_torch_keeps_queries_on_torch(
    prepared: Encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGKIT_QUERY_RUNTIME", "torch")
    encoder = Encoder("all-minilm-l6-v2")
    encoder.encode_queries(["a"]), encoder.encode_queries(["b"])
    assert encoder._onnx is None and encoder._model is not None
    assert encoder.onnx_queries() is None


def test_an_unknown_runtime_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGKIT_QUERY_RUNTIME", "tensorrt")
    with pytest.raises(RagkitError, match="RAGKIT_QUERY_RUNTIME='tensorrt'.*auto, onnx, torch"):
        Encoder("all-minilm-l6-v2").onnx_queries()


def test_without_onnxruntime_auto_falls_back_and_onnx_is_an_error(
    prepared: Encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails as if not installed
    assert OnnxQueryEncoder.for_model(prepared.model, "all-minilm-l6-v2") is None
    monkeypatch.setenv("RAGKIT_QUERY_RUNTIME", "onnx")
    with pytest.raises(RagkitError, match="RAGKIT_QUERY_RUNTIME=onnx: all-minilm-l6-v2 cannot"):
        OnnxQueryEncoder.for_model(prepared.model, "all-minilm-l6-v2")


def test_only_transformer_pooling_models_export(prepared: Encoder) -> None:
    assert OnnxQueryEncoder.layout_supported(prepared.model)
    from sentence_transformers import SentenceTransformer

    pooled_only = SentenceTransformer(modules=[prepared.model[0]], device="cpu")
    assert not OnnxQueryEncoder.layout_supported(pooled_only)


@pytest.mark.slow
def test_multilingual_e5_on_onnx_equals_torch(cache: Path) -> None:
    encoder = Encoder("multilingual-e5-small")  # converted into this module's cache first
    onnx = encoder.onnx_queries()
    assert onnx is not None
    cold = Encoder("multilingual-e5-small")  # from the checked copy, its tokenizer.json alone
    for query in QUERIES:
        text = encoder.spec.query_prefix + query
        expected = encoder._forward([text])
        np.testing.assert_allclose(onnx([text]), expected, atol=1e-5)
        np.testing.assert_allclose(cold.encode_queries([query]), expected, atol=1e-5)
    assert cold._model is None


def test_an_ingest_prepares_the_checked_copy(cache: Path, tmp_path: Path) -> None:
    for copy in copies(cache):
        CheckedCopy.record_of(copy).unlink(missing_ok=True)
    (tmp_path / "a.txt").write_text("Heat transfer in hypersonic flow.", "utf-8")
    from ragkit import Index

    with Index.open(tmp_path / "index", create=True, model="all-minilm-l6-v2") as index:
        index.ingest([tmp_path / "a.txt"])
    (copy,) = copies(cache)
    assert CheckedCopy.record_of(copy).exists()
    assert not OnnxQueryEncoder.needs_preparing(
        "all-minilm-l6-v2", Path(Encoder("all-minilm-l6-v2").spec.location)
    )
