"""Tokenizers: ragkit's SentencePiece models, how they are built and how they measure.

- :mod:`~ragkit.tokenize.models`: train, load and resolve a model per language
  (:func:`tokenizer_for`), the :class:`Tokenizer` that counts chunk budgets and cuts sparse
  terms;
- :mod:`~ragkit.tokenize.build`: the corpus → model recipe behind ``ragkit tokenizers train``;
- :mod:`~ragkit.tokenize.figures`: fertility and coverage against peer tokenizers.

Example:
    >>> text_only("a\\udcff b")
    'a\\ufffd b'
"""

from ragkit.tokenize.models import (
    MULTILINGUAL,
    Tokenizer,
    TrainingOptions,
    load,
    load_bytes,
    model_hash,
    prepare_texts,
    sentences,
    text_only,
    tokenizer_for,
    tokenizers_dir,
    train,
)

__all__ = [
    "MULTILINGUAL",
    "Tokenizer",
    "TrainingOptions",
    "load",
    "load_bytes",
    "model_hash",
    "prepare_texts",
    "sentences",
    "text_only",
    "tokenizer_for",
    "tokenizers_dir",
    "train",
]
