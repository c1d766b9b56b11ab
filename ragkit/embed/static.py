"""Static token vectors from an index's own encoder, for choosing chunks cheaply.

Adaptive chunk selection (ICC/DCC) and the ``semantic`` chunker compare sentence vectors
within one document; they need the encoder's sense of similarity, not its full accuracy. A
:class:`StaticEncoder` gives each token of the encoder's vocabulary one fixed vector — the
encoder's output for that token alone, reduced by PCA and weighted by the token's rank
(``model2vec``'s distillation recipe) — and embeds a sentence as the normalized mean of its
token vectors: no transformer pass, tens of times faster than the encoder on CPU.

The vectors are made only for the tokens a run meets, each once per machine
(:mod:`ragkit.embed.static_tables`): a batch of new tokens goes through the encoder's ONNX
copy (about a thousand tokens a second on two cores) and is kept in a table in
``<cache>/models/static/<model>-<digest>`` (:func:`static_folder`) that later runs read. The
bundled models' PCA bases ship with ragkit, fitted on the whole vocabulary, so their vectors
are those of a full model2vec distillation (``benchmarks/static_vectors.py`` compares them);
any other model's basis is fitted once on a sample of its vocabulary. A full distillation an
earlier ragkit left in that folder (model2vec's files) is read as it is.

First run on a fresh machine: the static vocabulary (model2vec's cleaned tokenizer, derived
from the model's files in about a second for the bundled models), then a few seconds of
vectors for a typical collection's few thousand distinct tokens (Cranfield's 1,398 abstracts:
5,949 tokens, about 4 s) — where the earlier full distillation took 30-75 s for
all-minilm-l6-v2 and 9-19 minutes for multilingual-e5-small.

A text none of whose tokens has a vector gets the unknown token's vector
(:meth:`StaticEncoder.encode`).

Example:
    >>> from ragkit.embed import Encoder  # doctest: +SKIP
    >>> static = StaticEncoder.for_encoder(Encoder("all-minilm-l6-v2"))  # doctest: +SKIP
    >>> static.encode(["Heat transfer.", "مرحبا"]).shape  # doctest: +SKIP
    (2, 256)
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ragkit.embed.static_tables import TokenVectors, full_vectors, has_full_table, lazy_vectors
from ragkit.normalize.unicode import text_only
from ragkit.paths import cache_dir

if TYPE_CHECKING:
    from ragkit.embed.encoder import Encoder

# Part of the folder's name. The recipe is model2vec 0.10's distillation (PCA to 256, SIF
# 1e-4, float16) in both the full tables of earlier releases and the lazy tables: folders
# made before stay in use.
STATIC_FORMAT = 1

_loaded: dict[Path, StaticEncoder] = {}
_loading = threading.Lock()


def static_folder(name: str, location: str) -> Path:
    """Where the static vectors of the model ``name`` (weights at ``location``) are cached.

    Example:
        >>> folder = static_folder("all-minilm-l6-v2", "/models/minilm")
        >>> folder.parent == cache_dir() / "models" / "static", folder.name.startswith("all-minilm")
        (True, True)
    """
    digest = hashlib.sha256(f"{STATIC_FORMAT}\0{name}\0{location}".encode()).hexdigest()[:12]
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-")[-60:] or "model"
    return cache_dir() / "models" / "static" / f"{safe}-{digest}"


class StaticEncoder:
    """Sentence vectors from static token vectors (:mod:`ragkit.embed.static`), computed as
    model2vec's ``StaticModel.encode`` computes them (float16 means, normalized).

    A text none of whose tokens has a vector (a script the vocabulary lacks, say Ge'ez under
    all-MiniLM-L6-v2) gets the unknown token's vector: the encoder, too, sees such texts as
    unknown tokens, and they then compare alike instead of dropping out of every cosine.
    """

    def __init__(self, tokens: TokenVectors) -> None:
        self.tokens = tokens

    @property
    def dimension(self) -> int:
        return self.tokens.dimension

    @classmethod
    def for_encoder(cls, encoder: Encoder) -> StaticEncoder:
        """The static vectors of ``encoder``'s model (once per process): a full table an
        earlier release distilled, else the table made as tokens are met."""
        folder = static_folder(encoder.spec.name, encoder.spec.location)
        with _loading:
            if folder not in _loaded:
                tokens = (
                    full_vectors(folder)
                    if has_full_table(folder)
                    else lazy_vectors(encoder, folder)
                )
                _loaded[folder] = cls(tokens)
        return _loaded[folder]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalized float32 vectors, one row per text (``(0, d)`` for no texts)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        rows = self.tokens.rows([text_only(t) for t in texts])
        means = np.zeros((len(rows), self.dimension), dtype=np.float16)
        by_length: dict[int, list[int]] = defaultdict(list)
        for index, ids in enumerate(rows):
            if ids:
                by_length[len(ids)].append(index)
        for indices in by_length.values():  # as model2vec: float16 means of equal-length texts
            means[indices] = self.tokens.vectors(np.array([rows[i] for i in indices])).mean(axis=1)
        wide = means.astype(np.float32)
        vectors = (wide / (np.linalg.norm(wide, axis=1, keepdims=True) + 1e-32)).astype(np.float16)
        vectors = np.nan_to_num(vectors.astype(np.float32))
        norms = np.linalg.norm(vectors, axis=1)
        empty = norms < 1e-9
        if empty.any():
            vectors[empty] = self.tokens.unknown()
            norms[empty] = float(np.linalg.norm(vectors[empty][0]))
        return vectors / np.maximum(norms, 1e-12)[:, None]
