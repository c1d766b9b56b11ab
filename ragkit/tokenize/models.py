"""SentencePiece tokenizers trained by ragkit: train, load, encode, and resolve per language.

ragkit counts chunk budgets and builds sparse terms in these tokens. Models live in the
``tokenizers/`` folder at the top of the repository (``RAGKIT_TOKENIZERS`` overrides): one
Unigram model per language (``ar.model``, ``am.model``…) trained on the language's
*normalized* text, plus ``mul.model`` for every other language. ``MANIFEST.json`` there
records each model's corpus, settings and held-out figures.

Example:
    >>> tokenizer = tokenizer_for("ar")  # doctest: +SKIP
    >>> tokenizer.encode("قال رسول الله")  # doctest: +SKIP
    ['▁قال', '▁رسول', '▁الله']
"""

from __future__ import annotations

import functools
import hashlib
import io
import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import sentencepiece as spm

from ragkit.environment import read
from ragkit.errors import RagkitError
from ragkit.normalize import normalizer_for
from ragkit.normalize.unicode import text_only
from ragkit.paths import package_folder

log = logging.getLogger(__name__)

Algorithm = Literal["unigram", "bpe"]
MULTILINGUAL = "mul"
MAX_SENTENCE_CHARS = 2_000
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?؟۔።፧])\s+|\n+")
_BYTE_PIECE = re.compile(r"<0x([0-9A-F]{2})>")
# Bumped when :meth:`Tokenizer.pieces` cuts the same model's text differently, so indexes whose
# sparse pieces the old rule cut are re-analyzed (it is part of the fingerprint).
PIECES_VERSION = 2  # 2: byte-fallback pieces read back as the characters they encode
# Counts of single words kept per tokenizer: chunking counts a long sentence word by word
# (ragkit.chunking.context.word_windows), and the same words recur across a collection.
WORD_COUNTS_KEPT = 1 << 16
_WHITESPACE = re.compile(r"\s")


def tokenizers_dir() -> Path:
    """Where the models live: ``RAGKIT_TOKENIZERS``, or the ones shipped inside the package
    (``ragkit/tokenize/trained``, which the checkout's top-level ``tokenizers/`` links to).

    Example:
        >>> import os
        >>> "RAGKIT_TOKENIZERS" in os.environ or (tokenizers_dir() / "MANIFEST.json").is_file()
        True
    """
    return read("tokenizers") or package_folder("ragkit.tokenize", "trained")


@dataclass(frozen=True)
class TrainingOptions:
    """SentencePiece settings ragkit trains with (recorded in the manifest)."""

    vocab_size: int
    algorithm: Algorithm = "unigram"
    normalized: bool = True
    character_coverage: float = 0.9995
    seed: int = 0
    max_sentences: int = 2_000_000
    # Characters outside the vocabulary become their UTF-8 bytes instead of one unknown piece.
    byte_fallback: bool = False
    required_chars: str = ""  # always single pieces, however rare in the corpus


@dataclass(frozen=True)
class Tokenizer:
    """A loaded model; ``normalized`` models normalize their input with ragkit first."""

    language: str
    processor: spm.SentencePieceProcessor
    normalized: bool
    name: str
    word_counts: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    def prepare(self, text: str) -> str:
        """Text as the model was trained on it: normalized (if so) with whitespace runs as one
        space (training sentences never hold a line break, so one would encode as unknown)."""
        text = normalizer_for(self.language).apply(text).text if self.normalized else text
        return " ".join(text_only(text).split())

    def encode(self, text: str) -> list[str]:
        """Pieces of ``text`` (normalized first when the model was trained normalized)."""
        return self.processor.encode(self.prepare(text), out_type=str)

    def count(self, text: str) -> int:
        """Number of tokens in ``text``.

        Example:
            >>> tokenizer_for("en").count("") # doctest: +SKIP
            0
        """
        if not text.strip():
            return 0
        if len(text) > 64 or _WHITESPACE.search(text):
            return len(self.processor.encode(self.prepare(text)))
        found = self.word_counts.get(text)  # one word: counted once per run (dicts are
        if found is None:  # safe to share between threads for single gets and sets)
            found = len(self.processor.encode(self.prepare(text)))
            if len(self.word_counts) >= WORD_COUNTS_KEPT:
                self.word_counts.clear()
            self.word_counts[text] = found
        return found

    def pieces(self, text: str) -> list[str]:
        """Pieces of ``text`` as given (no normalization: ``text`` is already a matching key),
        as sparse terms: a character the model has no piece for, which it encodes as UTF-8 byte
        pieces, is one piece of its own (a byte such as ``<0xE7>`` starts thousands of Chinese
        characters, so as a term it would match them all).

        Example:
            >>> tokenizer_for("mul").encode("ᚠ")  # a rune: no piece, three bytes
            ['▁', '<0xE1>', '<0x9A>', '<0xA0>']
            >>> tokenizer_for("mul").pieces("ᚠ")
            ['▁', 'ᚠ']
        """
        encoded: list[str] = self.processor.encode(text_only(text), out_type=str)
        if "<0x" not in "".join(encoded):  # the common case: nothing to read back
            return encoded
        found: list[str] = []
        run = bytearray()
        for piece in encoded:
            byte = _BYTE_PIECE.fullmatch(piece)
            if byte and self.processor.is_byte(self.processor.piece_to_id(piece)):
                run.append(int(byte.group(1), 16))
                continue
            found += run.decode("utf-8", "replace")
            run.clear()
            found.append(piece)
        return found + list(run.decode("utf-8", "replace"))

    @property
    def vocab_size(self) -> int:
        return self.processor.get_piece_size()

    @functools.cached_property
    def fingerprint(self) -> str:
        """First 16 hex digits of the SHA-256 of the serialized model and
        :data:`PIECES_VERSION`: equal fingerprints, equal pieces (an index records it to notice
        a rebuilt model or a changed piece rule)."""
        digest = hashlib.sha256(self.processor.serialized_model_proto())
        digest.update(f"pieces-{PIECES_VERSION}".encode())
        return digest.hexdigest()[:16]

    @property
    def unk_id(self) -> int:
        return self.processor.unk_id()


def sentences(texts: Iterable[str]) -> Iterator[str]:
    """Training sentences: texts split at sentence ends and newlines, long ones cut.

    Example:
        >>> list(sentences(["One. Two!\\nThree"]))
        ['One.', 'Two!', 'Three']
    """
    for text in texts:
        for sentence in _SENTENCE_SPLIT.split(text):
            sentence = sentence.strip()
            while sentence:
                yield sentence[:MAX_SENTENCE_CHARS]
                sentence = sentence[MAX_SENTENCE_CHARS:].strip()


def prepare_texts(texts: Iterable[str], language: str, normalized: bool) -> Iterator[str]:
    """``texts`` as a model for ``language`` sees them: normalized, or as they are."""
    normalizer = normalizer_for(language)
    for text in texts:
        yield normalizer.apply(text).text if normalized else text


def train(texts: Iterable[str], options: TrainingOptions, label: str = "model") -> bytes:
    """Train a SentencePiece model on ``texts`` (already prepared: see :func:`prepare_texts`).

    Deterministic for a fixed corpus, options and seed: one thread, seeded sampling.
    Returns the serialized model; :func:`load_bytes` turns it into a :class:`Tokenizer`.
    """
    corpus = sentences(texts)
    model = io.BytesIO()
    spm.set_random_generator_seed(options.seed)
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=corpus,
            model_writer=model,
            model_type=options.algorithm,
            vocab_size=options.vocab_size,
            character_coverage=options.character_coverage,
            input_sentence_size=options.max_sentences,
            shuffle_input_sentence=True,
            normalization_rule_name="identity",  # ragkit normalizes; offsets stay exact
            split_digits=True,
            byte_fallback=options.byte_fallback,
            required_chars=options.required_chars,
            num_threads=1,
            max_sentence_length=MAX_SENTENCE_CHARS * 4,
            hard_vocab_limit=False,  # a small corpus yields fewer pieces, not an error
            minloglevel=2,
        )
    except RuntimeError as error:
        raise RagkitError(
            f"tokenizer training for {label} failed: {error}; a smaller --vocab-size "
            "or a larger corpus fixes 'Vocabulary size too high'"
        ) from error
    return model.getvalue()


def load_bytes(model: bytes, language: str, normalized: bool = True, name: str = "") -> Tokenizer:
    processor = spm.SentencePieceProcessor(model_proto=model)
    return Tokenizer(language, processor, normalized, name or f"{language} model")


def load(path: Path, language: str, normalized: bool = True) -> Tokenizer:
    """Load a model file; a missing or damaged file is a :class:`RagkitError` naming it."""
    try:
        return load_bytes(path.read_bytes(), language, normalized, name=path.name)
    except (OSError, RuntimeError) as error:
        raise RagkitError(f"{path}: cannot load SentencePiece model ({error})") from error


def model_hash(model: bytes) -> str:
    """SHA-256 of the vocabulary (pieces and scores): equal for reproducible trainings."""
    processor = spm.SentencePieceProcessor(model_proto=model)
    digest = hashlib.sha256()
    for index in range(processor.get_piece_size()):
        digest.update(f"{processor.id_to_piece(index)}\t{processor.get_score(index)}\n".encode())
    return digest.hexdigest()


@functools.cache
def tokenizer_for(language: str) -> Tokenizer:
    """The shipped tokenizer for ``language``, else the multilingual one.

    Raises :class:`RagkitError` when ``tokenizers/`` holds neither.
    """
    folder = tokenizers_dir()
    for name in (language, MULTILINGUAL):
        path = folder / f"{name}.model"
        if path.is_file():
            return load(path, language)
    raise RagkitError(
        f"no tokenizer for {language!r} nor {MULTILINGUAL!r} in {folder}; train one with "
        f"`ragkit tokenizer train --lang {language}` or set RAGKIT_TOKENIZERS"
    )
