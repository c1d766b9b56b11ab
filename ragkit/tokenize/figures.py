"""Held-out figures for tokenizers: fertility, characters per token, UNK rate — and the peers.

* **fertility** = tokens / words, words being whitespace-separated tokens of the raw text;
* **chars/token** = non-space characters / tokens;
* **UNK rate** = unknown-token share of all tokens.

Peers measured the same way: the XLM-R Unigram tokenizer of multilingual-e5-small (the
default embedder; from ragkit's converted folder) and MiniLM's WordPiece (from its package).
Special tokens (``<s>``, ``[CLS]``…) are not counted.

Example:
    >>> figures = measure("words", ["a b", "c"], lambda text: (len(text.split()), 0))
    >>> figures.fertility, figures.chars_per_token
    (1.0, 1.0)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ragkit.tokenize import Tokenizer

# A function returning (tokens, unknown tokens) for one text.
TokenCounter = Callable[[str], tuple[int, int]]


@dataclass(frozen=True)
class TokenizerFigures:
    """One tokenizer's figures on one language's held-out text."""

    tokenizer: str
    tokens: int
    words: int
    characters: int
    unknown: int

    @property
    def fertility(self) -> float:
        return self.tokens / self.words if self.words else 0.0

    @property
    def chars_per_token(self) -> float:
        return self.characters / self.tokens if self.tokens else 0.0

    @property
    def unk_rate(self) -> float:
        return self.unknown / self.tokens if self.tokens else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "fertility": round(self.fertility, 4),
            "chars_per_token": round(self.chars_per_token, 4),
            "unk_rate": round(self.unk_rate, 6),
        }


def measure(name: str, texts: Iterable[str], counter: TokenCounter) -> TokenizerFigures:
    tokens = words = characters = unknown = 0
    for text in texts:
        counted, unknowns = counter(text)
        tokens += counted
        unknown += unknowns
        words += len(text.split())
        characters += sum(1 for char in text if not char.isspace())
    return TokenizerFigures(name, tokens, words, characters, unknown)


def sentencepiece_counter(tokenizer: Tokenizer) -> TokenCounter:
    """Counts for a ragkit model (its own normalization applied, as in use)."""
    unk = tokenizer.unk_id

    def count(text: str) -> tuple[int, int]:
        ids = tokenizer.processor.encode(tokenizer.prepare(text))
        return len(ids), sum(1 for i in ids if i == unk)

    return count


def huggingface_counter(tokenizer_json: Path) -> TokenCounter:
    """Counts for a ``tokenizer.json`` (Hugging Face tokenizers), special tokens excluded."""
    from tokenizers import Tokenizer as HFTokenizer

    tokenizer = HFTokenizer.from_file(str(tokenizer_json))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    unk = tokenizer.token_to_id("<unk>")
    if unk is None:
        unk = tokenizer.token_to_id("[UNK]")

    def count(text: str) -> tuple[int, int]:
        ids = tokenizer.encode(text, add_special_tokens=False).ids
        return len(ids), sum(1 for i in ids if i == unk)

    return count


def peer_counters() -> dict[str, TokenCounter]:
    """The embedders' tokenizers: XLM-R (multilingual-e5-small) and MiniLM WordPiece."""
    from ragkit.embed.models import model_spec

    return {
        "XLM-R (multilingual-e5-small)": huggingface_counter(
            Path(model_spec("multilingual-e5-small").location) / "tokenizer.json"
        ),
        "WordPiece (all-MiniLM-L6-v2)": huggingface_counter(
            Path(model_spec("all-minilm-l6-v2").location) / "tokenizer.json"
        ),
    }
