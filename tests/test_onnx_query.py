"""Single queries on ONNX Runtime (:mod:`ragkit.embed.onnx_query`): the same vectors as the
torch model for short, long, English and Arabic queries; prepared at an encoder's second
single query; the exported copy reused, replaced when damaged; ``RAGKIT_QUERY_RUNTIME``."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ragkit.embed import Encoder, onnx_query
from ragkit.embed.onnx_query import OnnxQueryEncoder
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
    return sorted((cache / "models" / "onnx").glob("*.onnx"))


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


def test_the_first_single_query_runs_on_torch_and_the_second_prepares(prepared: Encoder) -> None:
    encoder = Encoder("all-minilm-l6-v2")  # the model is loaded once per process
    first = encoder.encode_queries(["wing flutter"])
    assert encoder._onnx is None and not encoder._onnx_tried
    second = encoder.encode_queries(["wing flutter"])
    assert encoder._onnx is not None
    np.testing.assert_allclose(second, first, atol=1e-5)


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


def test_runtime_torch_keeps_queries_on_torch(
    prepared: Encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGKIT_QUERY_RUNTIME", "torch")
    encoder = Encoder("all-minilm-l6-v2")
    assert encoder.onnx_queries() is None
    encoder.encode_queries(["a"]), encoder.encode_queries(["b"])
    assert encoder._onnx is None


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
    for query in QUERIES:
        text = encoder.spec.query_prefix + query
        np.testing.assert_allclose(onnx([text]), encoder._forward([text]), atol=1e-5)
