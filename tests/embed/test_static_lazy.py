"""Static token vectors made as tokens are met (ragkit.embed.static_tables, token_table), with
the bundled all-MiniLM-L6-v2: equal to model2vec's full distillation, a table that grows on
disk and is shared by processes, whole after a crash, and the unknown-token rule kept.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ragkit.embed import Encoder
from ragkit.embed import static as static_module
from ragkit.embed.static import StaticEncoder, static_folder
from ragkit.embed.static_basis import manifest, sample_rows, shipped_basis
from ragkit.embed.static_vocabulary import StaticVocabulary
from ragkit.embed.token_table import TokenTable

pytest.importorskip("model2vec")

MODEL = "all-minilm-l6-v2"
ONE_STEP = 2**-10  # a float16 step for values in [0.5, 1): the table's own precision
TEXTS = ["Heat transfer in a laminar boundary layer.", "Jet flow", "مرحبا بالعالم"]


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A cache holding only all-MiniLM-L6-v2's checked ONNX copy (exported here, once)."""
    folder = tmp_path_factory.mktemp("onnx-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAGKIT_CACHE", str(folder))
        patch.delenv("RAGKIT_EMBED_RUNTIME", raising=False)
        assert Encoder(MODEL).runtime() is not None
    yield folder / "models" / "onnx"


@pytest.fixture
def cache(tmp_path: Path, onnx_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh cache (no static vectors) sharing the module's ONNX copy; a fresh process's
    loaded encoders."""
    folder = tmp_path / "cache"
    (folder / "models").mkdir(parents=True)
    (folder / "models" / "onnx").symlink_to(onnx_cache)
    monkeypatch.setenv("RAGKIT_CACHE", str(folder))
    monkeypatch.delenv("RAGKIT_EMBED_RUNTIME", raising=False)
    monkeypatch.setattr(static_module, "_loaded", {})
    return folder


def table_rows(folder: Path) -> int:
    import sqlite3

    (path,) = folder.glob("vectors-*.sqlite")
    with sqlite3.connect(path) as connection:
        return int(connection.execute("SELECT count(*) FROM vectors").fetchone()[0])


def test_lazy_vectors_equal_the_full_distillation(cache: Path) -> None:
    """The shipped probe rows (from model2vec's full table) and a sample of 256 rows through
    model2vec's own pass (its ids, its reshaped model) equal the lazily made vectors."""
    from model2vec.distill.inference import compute_weights

    encoder = Encoder(MODEL)
    static = StaticEncoder.for_encoder(encoder)
    shipped = shipped_basis(MODEL)
    assert shipped is not None
    lazy = static.tokens.vectors(shipped.probe_rows).astype(np.float32)
    assert np.abs(lazy - shipped.probe_vectors.astype(np.float32)).max() <= ONE_STEP

    vocabulary = StaticVocabulary.load(static_folder(encoder.spec.name, encoder.spec.location))
    assert vocabulary is not None
    rows = sample_rows(vocabulary.size, 256)
    transformer = encoder.model[0]
    hidden = model2vec_vectors_for(transformer.auto_model, encoder.model.tokenizer, rows)
    weights = compute_weights(vocabulary.size, sif_coefficient=1e-4)[rows]
    expected = shipped.basis.project(hidden, weights).astype(np.float32)
    found = static.tokens.vectors(rows).astype(np.float32)
    difference = np.abs(found - expected)
    assert difference.max() <= ONE_STEP
    assert (difference == 0).mean() > 0.98  # the rest: one float16 step (ONNX vs torch)


def model2vec_vectors_for(backbone, hf_tokenizer, rows: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    """model2vec's pass (``create_embeddings`` over its pruned tokenizer's ids and the
    reshaped model) for ``rows`` of the cleaned vocabulary only."""
    import re

    from model2vec.distill.inference import create_embeddings
    from model2vec.tokenizer import clean_and_create_vocabulary, turn_tokens_into_ids
    from skeletoken import TokenizerModel
    from skeletoken.external.transformers import reshape_embeddings

    original = TokenizerModel.from_transformers_tokenizer(hf_tokenizer).prune_added_tokens()
    cleaned = original.deep_copy()
    if cleaned.adds_prefix_space is not None:
        cleaned.adds_prefix_space = True
    cleaned = clean_and_create_vocabulary(cleaned, [], re.compile(r"\[unused\d+\]"))
    tokens = [cleaned.sorted_vocabulary[row] for row in rows.tolist()]
    ids = turn_tokens_into_ids(tokens, original)
    model = reshape_embeddings(backbone, original)
    return create_embeddings(model, ids, "cpu", original.pad_token_id or 0)


def test_the_bundled_vocabulary_is_derived_without_model2vec(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fast derivation gives model2vec's cleaned vocabulary exactly (the digest recorded
    from model2vec's cleaning when the basis was made); a fresh cache never calls model2vec."""
    from transformers import AutoTokenizer

    location = Path(Encoder(MODEL).spec.location)
    derived = StaticVocabulary.derive(location)
    assert derived is not None
    built = StaticVocabulary.build(AutoTokenizer.from_pretrained(location))
    assert derived.digest() == built.digest() == manifest()[MODEL]["vocabulary_sha256"]

    def refuse(cls, hf_tokenizer):  # type: ignore[no-untyped-def]
        raise AssertionError("model2vec's cleaning was run")

    monkeypatch.setattr(StaticVocabulary, "build", classmethod(refuse))
    assert StaticEncoder.for_encoder(Encoder(MODEL)).encode(TEXTS).shape == (3, 256)


@pytest.mark.parametrize("runtime", ["torch", "int8"])
def test_the_same_vectors_on_torch_and_beside_an_int8_encoder(
    runtime: str, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without ONNX Runtime the tokens go through the torch model; an int8 index's tokens go
    through the fp32 copy (the distillation's model), not the int8 one."""
    if runtime == "torch":
        monkeypatch.setenv("RAGKIT_EMBED_RUNTIME", "torch")
    encoder = Encoder(MODEL, precision="int8" if runtime == "int8" else "fp32")
    static = StaticEncoder.for_encoder(encoder)
    shipped = shipped_basis(MODEL)
    assert shipped is not None
    found = static.tokens.vectors(shipped.probe_rows).astype(np.float32)
    assert np.abs(found - shipped.probe_vectors.astype(np.float32)).max() <= ONE_STEP


def test_the_table_grows_and_a_second_process_reads_it(cache: Path) -> None:
    static = StaticEncoder.for_encoder(Encoder(MODEL))
    first = static.encode(TEXTS[:2])
    folder = static_folder(MODEL, Encoder(MODEL).spec.location)
    written = table_rows(folder)
    assert written > 0 and {p.name for p in folder.iterdir()} >= {"tokenizer.json", "inputs.npz"}
    assert not (folder / "config.json").exists()  # no full table was made

    script = textwrap.dedent(
        """
        import json, sys
        from ragkit.embed import Encoder
        from ragkit.embed.static import StaticEncoder
        static = StaticEncoder.for_encoder(Encoder("all-minilm-l6-v2"))
        vectors = static.encode(json.loads(sys.argv[1]))
        table = static.tokens.table
        print(json.dumps({"made": table.made, "vectors": vectors.tolist()}))
        """
    )
    child = subprocess.run(
        [sys.executable, "-c", script, json.dumps(TEXTS)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    answer = json.loads(child.stdout)
    again = np.asarray(answer["vectors"], dtype=np.float32)
    np.testing.assert_array_equal(again[:2], first)  # read from the table, not made again
    assert answer["made"] > 0  # the Arabic text's tokens, the others read
    assert table_rows(folder) == written + answer["made"]
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]  # no scratch left


def test_unseen_tokens_are_made_on_the_way(cache: Path) -> None:
    static = StaticEncoder.for_encoder(Encoder(MODEL))
    table = static.tokens.table
    assert table is not None
    static.encode(["Heat transfer"])
    before = table.made
    mixed = static.encode(["Heat transfer of hypersonic ablation"])
    assert table.made > before
    static_module._loaded.clear()  # a new process: everything from the file
    fresh = StaticEncoder.for_encoder(Encoder(MODEL))
    np.testing.assert_array_equal(fresh.encode(["Heat transfer of hypersonic ablation"]), mixed)
    assert fresh.tokens.table is not None and fresh.tokens.table.made == 0


def test_empty_text_and_geez_under_minilm_get_the_unknown_vector(cache: Path) -> None:
    static = StaticEncoder.for_encoder(Encoder(MODEL))
    assert static.encode([]).shape == (0, static.dimension)
    vectors = static.encode(["", "ሰላም ለዓለም", "😀", "Heat transfer"])
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(vectors[0], vectors[1])  # unknown tokens only: [UNK]'s vector
    np.testing.assert_array_equal(vectors[1], vectors[2])
    unknown = static.tokens.unknown()
    np.testing.assert_allclose(vectors[1], unknown / np.linalg.norm(unknown), atol=1e-6)
    assert not np.allclose(vectors[3], vectors[1])


def test_a_crash_mid_write_leaves_a_readable_table(tmp_path: Path) -> None:
    """A process killed inside a transaction (SIGKILL from SQLite's progress handler): the
    rows of earlier transactions are read back whole, the rest made again."""
    path = tmp_path / "vectors.sqlite"
    script = textwrap.dedent(
        f"""
        import os, signal
        import numpy as np
        from pathlib import Path
        from ragkit.embed.token_table import TokenTable
        make = lambda rows: np.repeat(rows[:, None], 8, axis=1).astype(np.float16)
        table = TokenTable(Path({str(path)!r}), 1000, 8, make)
        table.vectors(np.arange(100))  # one whole transaction
        calls = []
        def die():
            calls.append(1)
            if len(calls) > 50:
                os.kill(os.getpid(), signal.SIGKILL)
        table._open().set_progress_handler(die, 100)
        table.vectors(np.arange(100, 1000))
        """
    )
    child = subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert child.returncode == -signal.SIGKILL
    made: list[int] = []

    def make(rows: np.ndarray) -> np.ndarray:
        made.extend(rows.tolist())
        return np.repeat(rows[:, None], 8, axis=1).astype(np.float16)

    table = TokenTable(path, 1000, 8, make)
    vectors = table.vectors(np.arange(1000))
    np.testing.assert_array_equal(vectors[:, 0], np.arange(1000).astype(np.float16))
    assert made == list(range(100, 1000))  # the killed transaction left none of its rows


def test_a_damaged_table_file_is_started_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "vectors.sqlite"
    path.write_bytes(b"not a database, " * 100)
    table = TokenTable(path, 10, 4, lambda rows: np.ones((len(rows), 4), dtype=np.float16))
    assert table.vectors(np.array([1, 2])).shape == (2, 4)
    assert "could not be used" in caplog.text
    assert TokenTable(path, 10, 4, lambda rows: 1 / 0).vectors(np.array([2])).shape == (1, 4)
