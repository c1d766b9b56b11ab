"""Build the shipped tokenizers: corpus → split → vocabulary sweep → models → manifest.

For each language: the corpus from :mod:`ragkit.corpora` is split by document (a stable hash
of the id, so the split never depends on order) into training and held-out documents, and the
held-out ones again, by a second hash, into a **tuning** half and a **report** half. Unigram
models of several vocabulary sizes are trained on the training part and measured on the tuning
half (fertility averaged over the genres, so the largest genre does not decide alone); the
**smallest size whose fertility is within** ``tolerance`` **(default 2 %) of the
best** is chosen. Then the shipped model (Unigram, normalized) and its two comparisons (Unigram
unnormalized, BPE normalized, same size) are trained and all are measured on the report half,
which chose nothing, next to the embedders' tokenizers, overall and per genre of source
(hadith prose, UI strings, documentation…). ``tokenizers/MANIFEST.json`` records the corpus,
settings, sweep and figures.

The Arabic-script, Amharic and multilingual models (:data:`REQUIRED_CHARS`) keep every letter,
numeral and punctuation mark of their scripts as a piece and fall back to UTF-8 bytes for any
other character, so nothing encodes as unknown (without byte fallback a run of characters with
no piece is one unknown piece: a Chinese sentence counted as one token). Where a language's
corpus is mostly one genre, :data:`GENRE_WEIGHTS` repeats the training documents of the others
(the Arabic hadith collections outweigh modern UI and documentation text about 17 to 1 in
characters; the weight was chosen on the tuning half).
Modern web, news and Wikipedia vocabulary comes from ``wordfreq``'s word frequencies (``web``
genre: a document per word type, repeated by frequency), so the split holds out whole word
types and the held-out ``web`` figure is the fertility of words never seen in training.

The multilingual fallback ``mul`` trains on an equal share of every language's training text,
plus the UI strings of eight languages in other scripts (``FALLBACK_SOURCES``: Cyrillic,
Greek, Hebrew, Devanagari, Thai, Hangul, Japanese, Chinese), each text normalized as the
language it is written in (as in use), and is measured the same way.

Example:
    >>> choose_vocab_size({8000: 1.40, 16000: 1.31, 32000: 1.30})
    16000
"""

from __future__ import annotations

import json
import logging
import statistics
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragkit.corpora import (
    FALLBACK_SOURCES,
    SOURCES,
    CorpusDocument,
    CorpusSource,
    cap_documents,
    corpus_stats,
    load_corpus,
    split_documents,
)
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
from ragkit.tokenize.figures import (
    TokenCounter,
    TokenizerFigures,
    measure,
    peer_counters,
    sentencepiece_counter,
)

log = logging.getLogger(__name__)

SHIPPED_LANGUAGES = ("ar", "am", "fa", "ur", "en")
VOCAB_SIZES = (8_000, 16_000, 32_000, 64_000)
MANIFEST_NAME = "MANIFEST.json"
NORMALIZATION_VERSION = f"ragkit-normalize-1+geez-{GEEZ_TABLE_VERSION}"
MUL_CHARS_PER_LANGUAGE = 4_000_000
# Characters of running text per language (SentencePiece samples 2M sentences anyway); ``web``
# word-frequency documents come on top, whole: a cap would drop word types, not repeats.
MAX_CORPUS_CHARS = 20_000_000
REPORT_SEED = 1  # the hash that halves held-out documents into tuning and report parts
_ARABIC_LETTERS = "".join(chr(code) for code in range(0x0621, 0x064B))  # ء … ي, with ـ
_PERSO_ARABIC = "پچژگکیۀۃھہےۓٹڈڑںۂ"
_PUNCTUATION = "؟،؛۔٪٫٬"
_QUOTES_AND_DASHES = "‘’‚“”„«»‹›–—…·"


def script_characters(*blocks: tuple[int, int]) -> str:
    """The letters, marks, digits and punctuation Unicode assigns in the code point ranges.

    Example:
        >>> script_characters((0x1361, 0x1368))
        '፡።፣፤፥፦፧፨'
    """
    return "".join(
        char
        for first, last in blocks
        for char in map(chr, range(first, last + 1))
        if unicodedata.category(char)[0] in "LMNP"
    )


_ETHIOPIC = script_characters((0x1200, 0x137F))  # syllables, ፡ ። ፣ …, numerals ፩ … ፼
# The fallback model reads every other language: the Arabic blocks (Kurdish ڕ ڵ ێ, Pashto ښ ګ,
# Sindhi ڌ ٻ ڪ, vowel marks), Ethiopic (Tigrinya), Latin with diacritics, Greek, Cyrillic and
# Devanagari get a piece per character; bytes carry anything else.
_MULTILINGUAL = (
    script_characters(
        (0x00C0, 0x024F),  # Latin-1 Supplement letters, Latin Extended-A and -B
        (0x0370, 0x03FF),  # Greek
        (0x0400, 0x04FF),  # Cyrillic
        (0x0600, 0x06FF),  # Arabic
        (0x0750, 0x077F),  # Arabic Supplement
        (0x0900, 0x097F),  # Devanagari
    )
    + _ETHIOPIC
    + _QUOTES_AND_DASHES
)
# Characters a model always keeps as pieces, with byte fallback for any other character (after
# the language's normalizer, which folds some of them: they then cost a piece each and never
# appear). English has none: its model predates byte fallback, and retraining it would move the
# chunk budgets behind every English result (held-out unknown rate 0.15 %: accents, emoji).
REQUIRED_CHARS = {
    **{language: _ARABIC_LETTERS + _PERSO_ARABIC + _PUNCTUATION for language in ("ar", "fa", "ur")},
    "am": _ETHIOPIC,
    MULTILINGUAL: _MULTILINGUAL,
}
# Times each training document of a genre is repeated, per language (1 when not listed).
# Arabic, chosen on the tuning half (vocab 64k; fertility hadith / UI / Handbook): weight 1
# 1.157 / 1.503 / 1.522, 4: 1.157 / 1.487 / 1.509, 8: 1.157 / 1.462 / 1.506, 16: 1.158 / 1.447
# / 1.503, 32: 1.159 / 1.448 / 1.505. At 16 modern text is about as many characters as hadith.
GENRE_WEIGHTS: dict[str, dict[str, int]] = {"ar": {"ui": 16, "docs": 16}}

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

    options: TrainingOptions = field(default_factory=lambda: TrainingOptions(0))
    genre_figures: dict[str, TokenizerFigures] = field(default_factory=dict)

    def manifest_entry(self) -> dict[str, Any]:
        return {
            "file": f"{self.language}.model",
            "algorithm": self.options.algorithm,
            "normalized": True,
            "normalization_version": NORMALIZATION_VERSION,
            "vocab_size": self.vocab_size,
            "vocab_requested": self.vocab_requested,
            "vocab_hash": self.vocab_hash,
            "seed": self.options.seed,
            "character_coverage": self.options.character_coverage,
            "byte_fallback": self.options.byte_fallback,
            "required_chars": self.options.required_chars,
            "genre_weights": GENRE_WEIGHTS.get(self.language, {}),
            "corpus": self.corpus,
            "vocab_sweep_fertility": {str(size): round(f, 4) for size, f in self.sweep.items()},
            "held_out": [figures.as_dict() for figures in self.figures],
            "held_out_genres": {g: f.as_dict() for g, f in sorted(self.genre_figures.items())},
            "built": datetime.now(UTC).strftime("%Y-%m-%d"),
        }


def choose_vocab_size(sweep: dict[int, float], tolerance: float = 0.02) -> int:
    """The smallest vocabulary whose fertility is within ``tolerance`` of the best one."""
    best = min(sweep.values())
    return min(size for size, fertility in sweep.items() if fertility <= best * (1 + tolerance))


def training_options(language: str, vocab_size: int, **changes: Any) -> TrainingOptions:
    """The settings ``language``'s models train with (languages in :data:`REQUIRED_CHARS`: byte
    fallback and their scripts' characters required)."""
    required = REQUIRED_CHARS.get(language, "")
    return TrainingOptions(
        vocab_size, byte_fallback=bool(required), required_chars=required, **changes
    )


def packaged_source(document: CorpusDocument) -> tuple[str, CorpusSource] | None:
    """The language whose corpus ``document`` was read for and the package it came from
    (among the sources of ``document.language`` when the document records it: one package
    may serve several languages).

    Example:
        >>> pin = FALLBACK_SOURCES["zh"][0].pin
        >>> packaged_source(CorpusDocument("d", "你好", f"{pin}:/langpack.xpi!a.ftl"))[0]
        'zh'
        >>> pin = SOURCES["fa"][-1].pin
        >>> packaged_source(CorpusDocument("wordfreq/fa/و", "و", f"{pin}:x#و", "fa"))[0]
        'fa'
    """
    # ``source`` is "name==version:path"; Debian versions may hold a colon (an epoch).
    for language, sources in (*SOURCES.items(), *FALLBACK_SOURCES.items()):
        if document.language and language != document.language:
            continue
        for source in sources:
            if document.source.startswith(f"{source.pin}:"):
                return language, source
    return None


def _pin_of(document: CorpusDocument) -> str:
    """The package pin ``document`` was read from (its ``source`` up to the first ``:`` when
    no packaged source matches; a Debian version may hold a colon).

    Example:
        >>> pin = SOURCES["am"][-1].pin
        >>> _pin_of(CorpusDocument("words/0", "ሰላም", f"{pin}:/amh.traineddata#0", "am"))
        'tesseract-ocr-amh==1:4.1.0-2'
    """
    found = packaged_source(document)
    return found[1].pin if found else document.source.split(":", 1)[0]


def genre_of(document: CorpusDocument) -> str:
    """The genre of the packaged source ``document`` was read from (``other`` if none)."""
    found = packaged_source(document)
    return found[1].genre if found else "other"


def by_genre(documents: Sequence[CorpusDocument]) -> dict[str, list[str]]:
    """Texts of ``documents`` grouped by :func:`genre_of`."""
    groups: dict[str, list[str]] = {}
    for document in documents:
        groups.setdefault(genre_of(document), []).append(document.text)
    return groups


def weighted(documents: Sequence[CorpusDocument], language: str) -> list[CorpusDocument]:
    """``documents`` with each repeated by its genre's weight in :data:`GENRE_WEIGHTS`."""
    weights = GENRE_WEIGHTS.get(language, {})
    return [d for d in documents for _ in range(weights.get(genre_of(d), 1))]


def held_out_parts(
    held: Sequence[CorpusDocument],
) -> tuple[list[CorpusDocument], list[CorpusDocument]]:
    """``(tuning, report)`` halves of the held-out documents (a few: both the same list)."""
    report, tuning = split_documents(held, held_out_share=0.5, seed=REPORT_SEED)
    if not report or not tuning:
        return list(held), list(held)
    return tuning, report


def model_counter(model: bytes, language: str, normalized: bool = True) -> TokenCounter:
    """Token counts of ``model`` with each text prepared as in training: for ``mul``, normalized
    as the language it is written in (as a text of that language is in use), else as
    ``language``.

    Example:
        >>> model = (tokenizers_dir() / "ar.model").read_bytes()
        >>> model_counter(model, MULTILINGUAL)("قَالَ"), model_counter(model, "ar")("قال")
        ((1, 0), (1, 0))
    """
    tokenizer = load_bytes(model, language, normalized)
    if language != MULTILINGUAL:
        return sentencepiece_counter(tokenizer)
    from ragkit.normalize.detect import detect_language

    def count(text: str) -> tuple[int, int]:
        as_written = replace(tokenizer, language=detect_language(text))
        return sentencepiece_counter(as_written)(text)

    return count


def _fertility(model: bytes, language: str, normalized: bool, held: Sequence[str]) -> float:
    return measure("sweep", held, model_counter(model, language, normalized)).fertility


def corpus_texts(
    language: str, documents: Sequence[CorpusDocument] | None = None
) -> tuple[list[CorpusDocument], list[CorpusDocument]]:
    """Training and held-out documents for ``language`` (``mul``: a share of every language).

    ``documents`` replaces the packaged corpus (``ragkit tokenizer train --corpus``).
    """
    if documents is not None:
        return split_documents(list(documents))
    if language != MULTILINGUAL:
        text: list[CorpusDocument] = []
        web: list[CorpusDocument] = []
        for document in load_corpus(language):
            (web if genre_of(document) == "web" else text).append(document)
        return split_documents(cap_documents(text, MAX_CORPUS_CHARS) + web)
    training: list[CorpusDocument] = []
    held: list[CorpusDocument] = []
    for member in (*SHIPPED_LANGUAGES, *FALLBACK_SOURCES):
        member_train, member_held = corpus_texts(member)
        training += _capped(member_train, MUL_CHARS_PER_LANGUAGE)
        held += _capped(member_held, MUL_CHARS_PER_LANGUAGE // 9)
    return training, held


def running_text(documents: Sequence[CorpusDocument]) -> list[CorpusDocument]:
    """Documents that are not word lists: fertility is a figure of running text."""
    return [d for d in documents if genre_of(d) != "wordlist"]


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
    tuning, report = held_out_parts(running_text(held) or held)
    tuning_genres, report_genres = by_genre(tuning), by_genre(report)
    report_raw = [d.text for d in report]
    training = weighted(training, language)
    train_normalized = _prepared(training, language, True)
    progress(
        f"{language}: {len(training)} training / {len(tuning)} tuning / {len(report)} report"
        " documents"
    )
    sweep: dict[int, float] = {}
    models: dict[int, bytes] = {}
    if vocab_size is None:
        for size in sizes:
            options = training_options(language, size)
            models[size] = train(train_normalized, options, f"{language}-{size}")
            sweep[size] = statistics.fmean(
                _fertility(models[size], language, True, texts) for texts in tuning_genres.values()
            )
            progress(f"{language}: vocab {size} → tuning fertility {sweep[size]:.3f}")
        vocab_size = choose_vocab_size(sweep)
    options = training_options(language, vocab_size)
    shipped = models.get(vocab_size) or train(train_normalized, options, label=language)
    comparisons = {
        "ragkit Unigram normalized": (shipped, True),
        "ragkit Unigram unnormalized": (
            train(
                _prepared(training, language, False),
                training_options(language, vocab_size, normalized=False),
            ),
            False,
        ),
        "ragkit BPE normalized": (
            train(train_normalized, training_options(language, vocab_size, algorithm="bpe")),
            True,
        ),
    }
    figures = [
        measure(name, report_raw, model_counter(model, language, normalized))
        for name, (model, normalized) in comparisons.items()
    ]
    if peers:
        figures += [measure(name, report_raw, counter) for name, counter in peer_counters().items()]
    shipped_counter = model_counter(shipped, language)
    genre_figures = {
        genre: measure(genre, texts, shipped_counter) for genre, texts in report_genres.items()
    }
    requested, vocab_size = vocab_size, load_bytes(shipped, language).vocab_size
    progress(f"{language}: vocab {vocab_size}, fertility {figures[0].fertility:.3f}")
    corpus = {
        "train": corpus_stats(training),
        "tuning": corpus_stats(tuning),
        "held_out": corpus_stats(report),
        "sources": sorted({_pin_of(d) for d in training}),
    }
    return BuildResult(
        *(language, vocab_size, requested, shipped, model_hash(shipped), corpus, sweep, figures),
        options,
        genre_figures,
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
