"""Where an encoder's static token vectors come from: a table made lazily, or a full one.

:func:`lazy_vectors` assembles the table a fresh machine uses: the static vocabulary
(:mod:`ragkit.embed.static_vocabulary`, built once), the encoder's pass over single tokens
(:mod:`ragkit.embed.token_pass`), the projection (:mod:`ragkit.embed.static_basis`: shipped
for the bundled models, else fitted once on a sample of the vocabulary) and the table that
keeps what was made (:mod:`ragkit.embed.token_table`). :func:`full_vectors` reads a full
model2vec distillation that an earlier ragkit left in the cache folder (``config.json``,
``model.safetensors``, ``tokenizer.json``): every row is there already, the same vectors.

Each one-time step logs a line (a warning, as the ONNX export does) with its time.

Example:
    >>> from ragkit.embed import Encoder
    >>> vectors = lazy_vectors(Encoder("all-minilm-l6-v2"), Path("/tmp/static"))  # doctest: +SKIP
    >>> vectors.vectors(vectors.rows(["heat transfer"])[0]).shape  # doctest: +SKIP
    (2, 256)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragkit.embed.static_basis import (
    BASIS_FILE,
    PCA_DIMENSIONS,
    Basis,
    manifest,
    sample_rows,
    shipped_basis,
)
from ragkit.embed.static_vocabulary import (
    StaticVocabulary,
    plain_tokenizer,
    text_rows,
    unknown_row,
)
from ragkit.embed.token_pass import TokenPass, token_pass_for
from ragkit.embed.token_table import TokenTable
from ragkit.errors import RagkitError

if TYPE_CHECKING:
    from ragkit.embed.encoder import Encoder

log = logging.getLogger(__name__)

FULL_TABLE_FILES = ("config.json", "model.safetensors", "tokenizer.json")


@dataclass(frozen=True)
class TokenVectors:
    """What a :class:`ragkit.embed.static.StaticEncoder` embeds with: texts → rows, rows →
    float16 vectors, and the vector of a text left with no rows."""

    rows: Callable[[Sequence[str]], list[list[int]]]
    vectors: Callable[[np.ndarray], np.ndarray]
    dimension: int
    unknown: Callable[[], np.ndarray]
    table: TokenTable | None = None  # the lazily grown table (None: a full table in memory)


def has_full_table(folder: Path) -> bool:
    return all((folder / name).is_file() for name in FULL_TABLE_FILES)


def full_vectors(folder: Path) -> TokenVectors:
    """The vectors of a full distillation saved by model2vec in ``folder``."""
    from safetensors.numpy import load_file

    from tokenizers import Tokenizer

    table = load_file(str(folder / "model.safetensors"))["embeddings"]
    tokenizer = plain_tokenizer(Tokenizer.from_file(str(folder / "tokenizer.json")))
    unknown = unknown_row(tokenizer)
    fallback = (
        table[unknown] if unknown is not None and unknown < len(table) else table.mean(axis=0)
    ).astype(np.float32)
    return TokenVectors(
        lambda texts: text_rows(tokenizer, unknown, texts),
        lambda rows: table[rows],
        int(table.shape[1]),
        lambda: fallback,
    )


def lazy_vectors(encoder: Encoder, folder: Path) -> TokenVectors:
    """Vectors of ``encoder``'s tokens made as they are met, kept in ``folder``."""
    vocabulary = StaticVocabulary.load(folder) or _build_vocabulary(encoder, folder)
    token_pass = token_pass_for(encoder)
    basis, sampled = _basis(encoder.spec.name, vocabulary, token_pass, folder)

    def project(rows: np.ndarray, hidden: np.ndarray) -> np.ndarray:
        return basis.project(hidden, vocabulary.weights(rows))

    def make(rows: np.ndarray) -> np.ndarray:
        if table.made == 0 and new_table:  # once, where the machine has none of them yet
            log.warning(
                "making the static token vectors of %s as chunk selection meets new tokens "
                "(once per token and machine, about a thousand a second), kept in %s",
                encoder.spec.name,
                table.path,
            )
        clock = time.perf_counter()
        vectors = project(rows, token_pass(vocabulary.sequences(rows)))
        log.info("%d static token vectors made in %.2f s", len(rows), time.perf_counter() - clock)
        return vectors

    path = folder / f"vectors-{basis.key}.sqlite"
    new_table = not path.exists()
    table = TokenTable(path, vocabulary.size, basis.dimension, make)
    if sampled is not None:  # the sample's vectors are paid for: keep them
        rows, hidden = sampled
        table.add(rows, project(rows, hidden))
    unknown = vocabulary.unknown
    unknown = unknown if unknown is not None and unknown < vocabulary.size else 0
    return TokenVectors(
        vocabulary.rows,
        table.vectors,
        basis.dimension,
        lambda: table.vectors(np.array([unknown]))[0].astype(np.float32),
        table,
    )


def _build_vocabulary(encoder: Encoder, folder: Path) -> StaticVocabulary:
    """model2vec's cleaned vocabulary of the encoder, saved in ``folder``: derived from the
    model's files where that gives the digest recorded for a bundled model, else built by
    model2vec."""
    log.warning(
        "preparing the static vocabulary of %s for chunk selection, once per machine, into %s "
        "(a second for the bundled models; model2vec's cleaning, up to a minute, for others)",
        encoder.spec.name,
        folder,
    )
    clock = time.perf_counter()
    recorded = manifest().get(encoder.spec.name, {}).get("vocabulary_sha256")
    vocabulary = StaticVocabulary.derive(Path(encoder.spec.location)) if recorded else None
    if vocabulary is None or vocabulary.digest() != recorded:
        vocabulary = StaticVocabulary.build(_hf_tokenizer(encoder))
    vocabulary.save(folder)
    log.warning("static vocabulary ready in %.0f s", time.perf_counter() - clock)
    return vocabulary


def _hf_tokenizer(encoder: Encoder) -> Any:
    """The transformers tokenizer in the model's folder, without loading the model (torch);
    the loaded model's own where the folder has none."""
    try:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(encoder.spec.location)
    except (OSError, ValueError):
        return encoder.model.tokenizer


def _basis(
    model: str, vocabulary: StaticVocabulary, token_pass: TokenPass, folder: Path
) -> tuple[Basis, tuple[np.ndarray, np.ndarray] | None]:
    """The shipped basis where it fits the model, else the one fitted here before, else one
    fitted now on a sample of the vocabulary (with the sample's rows and vectors)."""
    shipped = shipped_basis(model)
    if shipped is not None:
        probes = shipped.probe_rows
        hidden = (
            token_pass(vocabulary.sequences(probes)) if vocabulary.size == shipped.rows else None
        )
        if hidden is not None and hidden.shape[1] == shipped.basis.mean.shape[0]:
            found = shipped.basis.project(hidden, vocabulary.weights(probes))
            if shipped.matches(vocabulary.size, found):
                return shipped.basis, None
        log.warning("%s: the shipped static basis was made from other weights; not used", model)
    saved = folder / BASIS_FILE
    if saved.is_file():
        try:
            return Basis.load(saved), None
        except (OSError, ValueError, KeyError) as error:
            log.warning("%s could not be read (%s); fitting it again", saved, error)
    rows = sample_rows(vocabulary.size)
    log.warning(
        "fitting the projection of %s's static token vectors on %d of its %d tokens, once per "
        "machine, into %s",
        model,
        len(rows),
        vocabulary.size,
        saved,
    )
    clock = time.perf_counter()
    hidden = token_pass(vocabulary.sequences(rows))
    dimensions = min(PCA_DIMENSIONS, hidden.shape[1])
    if len(rows) <= dimensions:
        raise RagkitError(f"{model}: {len(rows)} tokens are too few for static vectors")
    basis = Basis.fit(hidden, dimensions)
    basis.save(saved)
    log.warning("static projection ready in %.0f s", time.perf_counter() - clock)
    return basis, (rows, hidden)
