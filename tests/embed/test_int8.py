"""The int8 copy (:mod:`ragkit.embed.int8`) and the ``embedding_precision`` setting: int8
vectors close to fp32's, passages and queries of an int8 index both on it, the quantized copy
made once and loaded later without torch, an index's precision fixed (the other refused, by
``Index.open`` and ``ragkit ingest --precision``), int8 refused where it cannot run, and
``auto`` resolved per model and stored resolved."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import MODEL, cli
from ragkit import Index
from ragkit.config import Settings
from ragkit.embed import Encoder, int8
from ragkit.embed.int8 import AGREEMENT, int8_path
from ragkit.errors import RagkitError, SettingsMismatchError

TEXTS = [
    "Heat transfer in hypersonic flow over a blunt body.",
    "Flutter of thin wings at transonic speeds.",
    "الماء يغلي عند مئة درجة",
    "ab",
]


@pytest.fixture(scope="module")
def quantized() -> Encoder:
    encoder = Encoder(MODEL, precision="int8")
    encoder.encode_queries(["heat"])  # the int8 copy, made here if the cache has none
    return encoder


def test_int8_vectors_are_close_to_fp32(quantized: Encoder) -> None:
    found = quantized.encode_passages(TEXTS)
    assert found.shape == (len(TEXTS), 384) and found.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(found, axis=1), 1.0, atol=1e-5)
    fp32 = Encoder(MODEL).encode_passages(TEXTS)
    assert (found * fp32).sum(axis=1).min() >= AGREEMENT
    assert not np.allclose(found, fp32, atol=1e-5)  # another precision, other numbers
    alone = quantized.encode_queries([TEXTS[0]])  # each text's activations quantized alone
    np.testing.assert_array_equal(alone[0], found[0])


def test_the_int8_copy_is_made_once_and_loaded_without_torch(
    quantized: Encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    onnx = quantized.runtime()
    assert onnx is not None and onnx.path == int8_path(onnx.path.with_name("x.onnx")).with_name(
        onnx.path.name
    )
    assert onnx.path.name.endswith(".int8.onnx") and onnx.path.stat().st_size < 40_000_000
    monkeypatch.setattr(int8, "quantize", lambda *_: pytest.fail("quantized again"))
    cold = Encoder(MODEL, precision="int8")
    np.testing.assert_allclose(
        cold.encode_passages(TEXTS), quantized.encode_passages(TEXTS), atol=1e-6
    )
    assert cold._model is None and cold._onnx is not None and cold._onnx.path == onnx.path


def test_an_index_keeps_its_precision(quantized: Encoder, tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text(TEXTS[0], "utf-8")
    (tmp_path / "docs" / "b.txt").write_text(TEXTS[1], "utf-8")
    folder = tmp_path / "index"
    settings = {"model": MODEL, "chunker": "sentence", "embedding_precision": "int8"}
    with Index.open(folder, create=True, **settings) as index:
        index.ingest([tmp_path / "docs"])
        hits = index.search("heat transfer", k=1, mode="dense")
        assert hits[0].document_id.endswith("a.txt")
        onnx = index.encoder.runtime()
        assert onnx is not None and onnx.path.name.endswith(".int8.onnx")  # queries too
    with Index.open(folder) as index:
        assert index.settings.embedding_precision == "int8"
        assert ("embedding precision", "int8") in index.info().rows()
    with pytest.raises(SettingsMismatchError, match="its vectors are int8, not fp32; one index"):
        Index.open(folder, embedding_precision="fp32")
    refused = cli("ingest", str(tmp_path / "docs"), "--index", str(folder), "--precision", "fp32")
    assert refused.returncode == 2
    assert "its vectors are int8, not fp32" in refused.stderr
    unknown = cli("ingest", str(tmp_path / "docs"), "--index", str(tmp_path / "new"),
                  "--precision", "int4")  # fmt: skip
    assert unknown.returncode == 2 and "--precision: Input should be 'auto', 'fp32' or 'int8'" in (
        unknown.stderr
    )


def test_int8_has_no_torch_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGKIT_EMBED_RUNTIME", "torch")
    with pytest.raises(RagkitError, match="int8: all-minilm-l6-v2 cannot run on ONNX Runtime"):
        Encoder(MODEL, precision="int8").encode_queries(["heat"])
    with pytest.raises(
        RagkitError, match="embedding_precision 'int4': give one of auto, fp32, int8"
    ):
        Encoder(MODEL, precision="int4")


def test_eval_takes_the_precision(quantized: Encoder, tiny_beir: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    done = cli("eval", str(tiny_beir), "--model", MODEL, "--precision", "int8", "--keep-index",
               str(index))  # fmt: skip
    assert done.returncode == 0, done.stderr
    with Index.open(index) as kept:
        assert kept.settings.embedding_precision == "int8"
    refused = cli("eval", str(tiny_beir), "--model", MODEL, "--precision", "int4")
    assert refused.returncode == 2
    assert "--precision: Input should be 'auto', 'fp32' or 'int8'" in refused.stderr


def test_auto_precision_is_resolved_per_model_and_stored(
    quantized: Encoder, tmp_path: Path
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text(TEXTS[0], "utf-8")
    with Index.open(tmp_path / "named", create=True, model=MODEL, chunker="sentence") as index:
        assert index.settings.embedding_precision == "int8"  # MiniLM's measured default
    chosen = tmp_path / "chosen"
    with Index.open(chosen, create=True, chunker="sentence") as index:  # model and precision auto
        assert index.settings.embedding_precision == "auto"
        index.ingest([tmp_path / "docs"])
        assert index.settings.embedding_precision == "int8"  # the handle takes the choice
    with Index.open(chosen, embedding_precision="auto") as index:  # "auto" keeps the index's
        assert (index.settings.embedding_model, index.settings.embedding_precision) == (
            "all-minilm-l6-v2",
            "int8",
        )
        onnx = index.encoder.runtime()
        assert onnx is not None and onnx.path.name.endswith(".int8.onnx")
    given = tmp_path / "given"
    with Index.open(given, create=True, chunker="sentence", embedding_precision="fp32") as index:
        index.ingest([tmp_path / "docs"])  # an explicit precision wins over the model's default
    with Index.open(given) as index:
        assert index.settings.embedding_precision == "fp32"
    assert Settings.from_index('{"embedding_model": "all-minilm-l6-v2"}').embedding_precision == (
        "fp32"  # indexes from before int8 existed keep their fp32 vectors
    )


def test_auto_precision_is_fp32_where_int8_cannot_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("RAGKIT_EMBED_RUNTIME", "torch")
    with Index.open(tmp_path / "index", create=True, model=MODEL) as index:
        assert index.settings.embedding_precision == "fp32"
