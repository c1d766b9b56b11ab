"""Build the shipped tokenizers: corpus → split → vocabulary sweep → models → manifest.

For each language: the corpus from :mod:`ragkit.corpora` is split by document (a stable hash
of the id, so the split never depends on order); Unigram models of several vocabulary sizes are
trained on the training part and measured on the held-out part; the **smallest size whose
held-out fertility is within** ``tolerance`` **(default 2 %) of the best** is chosen. Then the
shipped model (Unigram, normalized) and its two comparisons (Unigram unnormalized, BPE
normalized, same size) are trained and all are measured with the embedders' tokenizers.
``tokenizers/MANIFEST.json`` records the corpus, settings, sweep and figures.

The multilingual fallback ``mul`` trains on an equal share of every language's training text.

Example:
    >>> choose_vocab_size({8000: 1.40, 16000: 1.31, 32000: 1.30})
    16000
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragkit.corpora import SOURCES, CorpusDocument, corpus_stats, load_corpus, split_documents
from ragkit.normalize.geez import GEEZ_TABLE_VERSION
from ragkit.tokenize import (
    MULTILINGUAL,
    TrainingOptions,
    load_bytes,
    model_hash,
    prepare_texts,
    tokenizers_dir,
    train,
)
from ragkit.tokenize.figures import TokenizerFigures, measure, peer_counters, sentencepiece_counter

log = logging.getLogger(__name__)

SHIPPED_LANGUAGES = ("ar", "am", "fa", "ur", "en")
VOCAB_SIZES = (8_000, 16_000, 32_000, 64_000)
MANIFEST_NAME = "MANIFEST.json"
NORMALIZATION_VERSION = f"ragkit-normalize-1+geez-{GEEZ_TABLE_VERSION}"
MUL_CHARS_PER_LANGUAGE = 4_000_000
MAX_CORPUS_CHARS = 20_000_000  # per language; SentencePiece samples 2M sentences anyway

Progress = Callable[[str], None]


@dataclass
class BuildResult:
    """What building one language's tokenizer produced (one manifest entry)."""

    language: str
    vocab_size: int  # pieces in the model (a small corpus may give fewer than requested)
    vocab_requested: int
    model: bytes
    vocab_hash: str
    corpus: dict[str, Any]
    sweep: dict[int, float] = field(default_factory=dict)
    figures: list[TokenizerFigures] = field(default_factory=list)

    def manifest_entry(self) -> dict[str, Any]:
        return {
            "file": f"{self.language}.model",
            "algorithm": "unigram",
            "normalized": True,
            "normalization_version": NORMALIZATION_VERSION,
            "vocab_size": self.vocab_size,
            "vocab_requested": self.vocab_requested,
            "vocab_hash": self.vocab_hash,
            "seed": 0,
            "corpus": self.corpus,
            "vocab_sweep_fertility": {str(size): round(f, 4) for size, f in self.sweep.items()},
            "held_out": [figures.as_dict() for figures in self.figures],
            "built": datetime.now(UTC).strftime("%Y-%m-%d"),
        }


def choose_vocab_size(sweep: dict[int, float], tolerance: float = 0.02) -> int:
    """The smallest vocabulary whose fertility is within ``tolerance`` of the best one."""
    best = min(sweep.values())
    return min(size for size, fertility in sweep.items() if fertility <= best * (1 + tolerance))


def _fertility(model: bytes, language: str, normalized: bool, held: Sequence[str]) -> float:
    tokenizer = load_bytes(model, language, normalized)
    return measure("sweep", held, sentencepiece_counter(tokenizer)).fertility


def corpus_texts(
    language: str, documents: Sequence[CorpusDocument] | None = None
) -> tuple[list[CorpusDocument], list[CorpusDocument]]:
    """Training and held-out documents for ``language`` (``mul``: a share of every language).

    ``documents`` replaces the packaged corpus (``ragkit tokenizer train --corpus``).
    """
    if documents is not None:
        return split_documents(list(documents))
    if language != MULTILINGUAL:
        return split_documents(load_corpus(language, max_chars=MAX_CORPUS_CHARS))
    training: list[CorpusDocument] = []
    held: list[CorpusDocument] = []
    for member in SHIPPED_LANGUAGES:
        member_train, member_held = corpus_texts(member)
        training += _capped(member_train, MUL_CHARS_PER_LANGUAGE)
        held += _capped(member_held, MUL_CHARS_PER_LANGUAGE // 9)
    return training, held


def running_text(documents: Sequence[CorpusDocument]) -> list[CorpusDocument]:
    """Documents that are not word lists: fertility is a figure of running text."""
    word_lists = {
        source.pin for sources in SOURCES.values() for source in sources
        if source.genre == "wordlist"
    }  # fmt: skip
    # ``source`` is "name==version:path"; Debian versions may hold a colon (an epoch).
    return [d for d in documents if not any(d.source.startswith(f"{pin}:") for pin in word_lists)]


def _capped(documents: list[CorpusDocument], characters: int) -> list[CorpusDocument]:
    kept: list[CorpusDocument] = []
    total = 0
    for document in sorted(documents, key=lambda d: d.id):
        if total >= characters:
            break
        kept.append(document)
        total += len(document.text)
    return kept


def _prepared(documents: Sequence[CorpusDocument], language: str, normalized: bool) -> list[str]:
    if language != MULTILINGUAL:
        return list(prepare_texts((d.text for d in documents), language, normalized))
    from ragkit.normalize.detect import detect_language

    return [next(prepare_texts([d.text], detect_language(d.text), normalized)) for d in documents]


def build_language(
    language: str,
    vocab_size: int | None = None,
    sizes: Sequence[int] = VOCAB_SIZES,
    peers: bool = True,
    documents: Sequence[CorpusDocument] | None = None,
    progress: Progress = log.info,
) -> BuildResult:
    """Build one language's tokenizer; ``vocab_size=None`` chooses it by the sweep."""
    training, held = corpus_texts(language, documents)
    if not held:  # a corpus of a few documents: hold one apart (or measure on training)
        held = [training.pop()] if len(training) > 1 else list(training)
    held = running_text(held) or held
    held_raw = [d.text for d in held]
    train_normalized = _prepared(training, language, True)
    progress(f"{language}: {len(training)} training / {len(held)} held-out documents")
    sweep: dict[int, float] = {}
    models: dict[int, bytes] = {}
    if vocab_size is None:
        for size in sizes:
            models[size] = train(train_normalized, TrainingOptions(size), f"{language}-{size}")
            sweep[size] = _fertility(models[size], language, True, held_raw)
            progress(f"{language}: vocab {size} → held-out fertility {sweep[size]:.3f}")
        vocab_size = choose_vocab_size(sweep)
    shipped = models.get(vocab_size) or train(
        train_normalized, TrainingOptions(vocab_size), label=language
    )
    comparisons = {
        "ragkit Unigram normalized": (shipped, True),
        "ragkit Unigram unnormalized": (
            train(
                _prepared(training, language, False), TrainingOptions(vocab_size, normalized=False)
            ),
            False,
        ),
        "ragkit BPE normalized": (
            train(train_normalized, TrainingOptions(vocab_size, algorithm="bpe")),
            True,
        ),
    }
    figures = [
        measure(name, held_raw, sentencepiece_counter(load_bytes(model, language, normalized)))
        for name, (model, normalized) in comparisons.items()
    ]
    if peers:
        figures += [measure(name, held_raw, counter) for name, counter in peer_counters().items()]
    requested, vocab_size = vocab_size, load_bytes(shipped, language).vocab_size
    progress(f"{language}: vocab {vocab_size}, fertility {figures[0].fertility:.3f}")
    corpus = {
        "train": corpus_stats(training),
        "held_out": corpus_stats(held),
        "sources": sorted({d.source.split(":", 1)[0] for d in training}),
    }
    return BuildResult(
        language, vocab_size, requested, shipped, model_hash(shipped), corpus, sweep, figures
    )


def write_model(result: BuildResult, folder: Path | None = None) -> Path:
    """Write ``<language>.model`` and update the manifest entry (atomic replace of both)."""
    folder = folder or tokenizers_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{result.language}.model"
    scratch = path.with_suffix(".model.tmp")
    scratch.write_bytes(result.model)
    scratch.replace(path)
    manifest_path = folder / MANIFEST_NAME
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    manifest.setdefault("models", {})[result.language] = result.manifest_entry()
    manifest["models"] = dict(sorted(manifest["models"].items()))
    scratch = manifest_path.with_suffix(".json.tmp")
    scratch.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    scratch.replace(manifest_path)
    return path
