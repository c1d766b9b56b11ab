"""The vocabulary of an encoder's static token vectors, as model2vec's distillation builds it.

model2vec (0.10) gives a static model its own tokenizer: the encoder's, cleaned
(post-processor and added tokens dropped, ``[unusedN]`` pieces removed, a prefix space
added where the tokenizer has that switch); its rows, in that tokenizer's id order, are the
encoder's vocabulary. Row ``r`` holds the vector of one token seen alone, the encoder's input
``[*prefix, inputs[r], *suffix]`` (``[CLS] token [SEP]``, ``<s> token </s>``), weighted by
the row's rank alone (:meth:`StaticVocabulary.weights`: Zipf's law with a SIF coefficient).

:meth:`StaticVocabulary.build` runs model2vec's own cleaning (model2vec, skeletoken and
transformers, once per model: 0.5 s for all-minilm-l6-v2's 29,525 rows, 10-15 s for
multilingual-e5-small's 249,999); for the bundled models :meth:`StaticVocabulary.derive`
gives the same result from the model's ``tokenizer.json`` alone in about a second (checked
against a digest of :meth:`~StaticVocabulary.build`'s). :meth:`~StaticVocabulary.save` keeps it
beside the vectors (``tokenizer.json``, the same file a full distillation writes, and
``inputs.npz``) so later processes need only the ``tokenizers`` library.

Example:
    >>> weights = StaticVocabulary.weights_for(30_000, [0, 100, 29_999])  # common → rare
    >>> [round(float(w), 4) for w in weights]
    [0.002, 0.0916, 0.9674]
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragkit.errors import RagkitError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

SIF_COEFFICIENT = 1e-4  # model2vec's default
REMOVED_TOKENS = r"\[unused\d+\]"  # model2vec's default token_remove_pattern
INSTALL_HINT = "pip install 'model2vec>=0.10' 'skeletoken>=0.6,<0.7'"
TOKENIZER_FILE = "tokenizer.json"
INPUTS_FILE = "inputs.npz"


@dataclass(frozen=True)
class StaticVocabulary:
    """model2vec's cleaned tokenizer of an encoder, and what the encoder sees for each row.

    ``unknown`` is the row model2vec's ``StaticModel`` takes for the unknown token (its
    tokenizer's unknown id, whatever token that row holds): it is dropped from every text,
    and a text left with no rows gets its vector.
    """

    tokenizer: Tokenizer
    inputs: np.ndarray  # row → the encoder's input id of that row's token (int64)
    prefix: tuple[int, ...]  # encoder input ids before the token
    suffix: tuple[int, ...]  # and after it

    @property
    def size(self) -> int:
        return len(self.inputs)

    @functools.cached_property
    def unknown(self) -> int | None:
        return unknown_row(self.tokenizer)

    @staticmethod
    def weights_for(size: int, rows: Sequence[int] | np.ndarray) -> np.ndarray:
        """The SIF weights (float64) of ``rows`` in a vocabulary of ``size`` rows:
        ``a / (a + p(r))`` with ``p`` Zipf's law over the ranks (model2vec's
        ``compute_weights``)."""
        inverse_rank = 1 / np.arange(2, size + 2)
        probability = inverse_rank / np.sum(inverse_rank)
        return (SIF_COEFFICIENT / (SIF_COEFFICIENT + probability))[np.asarray(rows, dtype=int)]

    def weights(self, rows: Sequence[int] | np.ndarray) -> np.ndarray:
        return self.weights_for(self.size, rows)

    def sequences(self, rows: Sequence[int] | np.ndarray) -> np.ndarray:
        """The encoder's input ids for ``rows``, one token alone per line (int64)."""
        middle = self.inputs[np.asarray(rows, dtype=int)][:, None]
        count = len(middle)
        prefix = np.broadcast_to(np.asarray(self.prefix, dtype=np.int64), (count, len(self.prefix)))
        suffix = np.broadcast_to(np.asarray(self.suffix, dtype=np.int64), (count, len(self.suffix)))
        return np.concatenate([prefix, middle, suffix], axis=1)

    def rows(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's rows, as model2vec's ``StaticModel.tokenize`` gives them (no special
        tokens, the unknown row dropped)."""
        return text_rows(self.tokenizer, self.unknown, texts)

    @classmethod
    def build(cls, hf_tokenizer: Any) -> StaticVocabulary:
        """The vocabulary model2vec's ``distill_from_model`` makes from ``hf_tokenizer`` (a
        transformers fast tokenizer) with its defaults (no added vocabulary)."""
        try:
            from model2vec.tokenizer import clean_and_create_vocabulary
            from skeletoken import TokenizerModel
        except ImportError as error:
            raise RagkitError(f"static vectors need model2vec: {INSTALL_HINT}") from error
        with quiet("skeletoken", "model2vec"):  # notes on pad tokens and removed pieces
            original = TokenizerModel.from_transformers_tokenizer(hf_tokenizer)
            before, after = original.bos or [], original.eos or []
            # model2vec deep-copies the pruned tokenizer before cleaning it; pruning already
            # returns a copy, and nothing here reads the pruned one again
            cleaned = original.prune_added_tokens()
            if cleaned.adds_prefix_space is not None:
                cleaned.adds_prefix_space = True
            cleaned = clean_and_create_vocabulary(cleaned, [], re.compile(REMOVED_TOKENS))
        # model2vec feeds each token through the encoder under the pruned tokenizer's ids and
        # an embedding matrix reshaped to them: the same rows as the encoder's own ids of the
        # token (its tokenizer's vocabulary), which the encoder here is given directly.
        ids = hf_tokenizer.get_vocab()
        try:
            inputs = np.array([ids[token] for token in cleaned.sorted_vocabulary], dtype=np.int64)
            prefix = tuple(ids[token] for token in before)
            suffix = tuple(ids[token] for token in after)
        except KeyError as error:
            raise RagkitError(f"static vectors: token {error} is not in the encoder's vocabulary")
        return cls(plain_tokenizer(cleaned.to_tokenizer()), inputs, prefix, suffix)

    @classmethod
    def derive(cls, folder: Path) -> StaticVocabulary | None:
        """model2vec's cleaning redone directly on the model folder's ``tokenizer.json``, for
        tokenizers laid out as the bundled models' are (a WordPiece or Unigram vocabulary, a
        template post-processor, the padding token named in ``tokenizer_config.json``): every
        added token but the unknown and padding ones dropped, ``[unusedN]`` pieces removed,
        the rest renumbered in order. About 1 s for multilingual-e5-small (:meth:`build`:
        10-15 s), without transformers or model2vec; trusted only where its :meth:`digest`
        is the one :meth:`build` gave for that model (the shipped bases' ``MANIFEST.json``).
        None where the files are not so laid out."""
        from tokenizers import Tokenizer

        try:
            spec = json.loads((folder / TOKENIZER_FILE).read_text(encoding="utf-8"))
            config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
            template = spec["post_processor"]["single"]
            specials = spec["post_processor"]["special_tokens"]
            position = next(i for i, part in enumerate(template) if "Sequence" in part)
            prefix, suffix = (
                tuple(i for part in parts for i in specials[part["SpecialToken"]["id"]]["ids"])
                for parts in (template[:position], template[position + 1 :])
            )
            model = spec["model"]
            vocab = model["vocab"]
        except (OSError, ValueError, KeyError, TypeError, StopIteration):
            return None
        if isinstance(vocab, list):  # Unigram: [piece, score] in id order
            pieces, ids = [entry[0] for entry in vocab], list(range(len(vocab)))
        else:  # piece → id
            pieces = sorted(vocab, key=vocab.get)
            ids = [vocab[piece] for piece in pieces]
        pad = config.get("pad_token")
        pad = pad.get("content") if isinstance(pad, dict) else pad
        unk = model.get("unk_token")
        if unk is None and model.get("unk_id") is not None:
            unk = pieces[model["unk_id"]]
        dropped = {token["content"] for token in spec["added_tokens"]} - {pad, unk}
        removed = re.compile(REMOVED_TOKENS)
        kept = [
            i for i, piece in enumerate(pieces) if piece not in dropped and not removed.match(piece)
        ]
        renumbered = {pieces[i]: row for row, i in enumerate(kept)}
        model["vocab"] = [vocab[i] for i in kept] if isinstance(vocab, list) else renumbered
        added = [t for t in spec["added_tokens"] if t["content"] in (pad, unk)]
        spec["added_tokens"] = sorted(
            ({**token, "id": renumbered[token["content"]]} for token in added),
            key=lambda token: token["id"],
        )
        spec.update(post_processor=None, padding=None, truncation=None)
        tokenizer = plain_tokenizer(Tokenizer.from_str(json.dumps(spec)))
        return cls(tokenizer, np.array([ids[i] for i in kept], dtype=np.int64), prefix, suffix)

    def digest(self) -> str:
        """A hash of the tokenizer (as the ``tokenizers`` library writes it) and the inputs."""
        digest = hashlib.sha256(self.tokenizer.to_str().encode())
        digest.update(self.inputs.astype("<i8").tobytes())
        digest.update(repr((self.prefix, self.suffix)).encode())
        return digest.hexdigest()

    def save(self, folder: Path) -> None:
        """Write ``tokenizer.json`` and ``inputs.npz`` into ``folder``, each through a
        temporary file renamed into place (a crash leaves the files whole or absent)."""
        folder.mkdir(parents=True, exist_ok=True)
        with replacing(folder / INPUTS_FILE) as scratch, scratch.open("wb") as handle:
            np.savez(
                handle,
                inputs=self.inputs,
                prefix=np.asarray(self.prefix, dtype=np.int64),
                suffix=np.asarray(self.suffix, dtype=np.int64),
            )
        with replacing(folder / TOKENIZER_FILE) as scratch:
            self.tokenizer.save(str(scratch))

    @classmethod
    def load(cls, folder: Path) -> StaticVocabulary | None:
        """The vocabulary saved in ``folder``, or None where it is not (whole) there."""
        from tokenizers import Tokenizer

        if not ((folder / INPUTS_FILE).is_file() and (folder / TOKENIZER_FILE).is_file()):
            return None
        with np.load(folder / INPUTS_FILE) as saved:
            inputs, prefix, suffix = saved["inputs"], saved["prefix"], saved["suffix"]
        tokenizer = plain_tokenizer(Tokenizer.from_file(str(folder / TOKENIZER_FILE)))
        if tokenizer.get_vocab_size(with_added_tokens=True) < len(inputs):
            raise RagkitError(f"{folder}: {TOKENIZER_FILE} has fewer tokens than {INPUTS_FILE}")
        return cls(tokenizer, inputs, tuple(prefix.tolist()), tuple(suffix.tolist()))


def text_rows(tokenizer: Tokenizer, unknown: int | None, texts: Sequence[str]) -> list[list[int]]:
    """Each text's ids under ``tokenizer`` without special tokens, ``unknown`` dropped."""
    encodings = tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)
    return [[i for i in encoding.ids if i != unknown] for encoding in encodings]


@contextlib.contextmanager
def quiet(*names: str) -> Iterator[None]:
    """The loggers ``names`` at ERROR inside the block, as they were after it."""
    loggers = [logging.getLogger(name) for name in names]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def plain_tokenizer(tokenizer: Tokenizer) -> Tokenizer:
    """``tokenizer`` without padding or truncation, as model2vec encodes (no length limit)."""
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def unknown_row(tokenizer: Tokenizer) -> int | None:
    """The unknown token's id as model2vec reads it: the model's ``unk_token`` (WordPiece, BPE,
    word level) or the ``unk_id`` of a Unigram model."""
    model = tokenizer.model
    if hasattr(model, "unk_token"):
        token = model.unk_token
        return None if token is None else tokenizer.token_to_id(token)
    found = json.loads(tokenizer.to_str())["model"].get("unk_id")
    return None if found is None else int(found)


class replacing:
    """A temporary path beside ``path`` that replaces it when the block ends without error
    (and is removed otherwise): ``path`` is whole or absent, whoever writes it at once.

    Example:
        >>> import tempfile
        >>> target = Path(tempfile.mkdtemp()) / "a.txt"
        >>> with replacing(target) as scratch:
        ...     _ = scratch.write_text("whole")
        >>> target.read_text(), [p.name for p in target.parent.iterdir()]
        ('whole', ['a.txt'])
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.scratch = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")

    def __enter__(self) -> Path:
        return self.scratch

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        if kind is None:
            os.replace(self.scratch, self.path)
        else:
            self.scratch.unlink(missing_ok=True)
