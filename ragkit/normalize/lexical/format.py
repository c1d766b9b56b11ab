"""Read and write the MultiLexNorm format: one ``raw<TAB>normalized`` token a line.

Sentences are separated by a blank line. A normalization may contain spaces (a *split*:
``lol`` → ``laughing out loud``) or be empty. An empty normalization right after another token
marks a *merge*: the previous token's normalization covers this raw token too
(``screen → screenshot``, ``shot → ""``). An empty normalization that starts a sentence is a
deletion. The English data (LexNorm 2015) is lower-cased on both sides.

Example:
    >>> sentences = parse_lexnorm("u\\tyou\\nr\\tare\\n\\nscreen\\tscreenshot\\nshot\\t\\n")
    >>> [token.norm for token in sentences[0]]
    ['you', 'are']
    >>> sentences[1][1].merged
    True
    >>> format_lexnorm(sentences) == "u\\tyou\\nr\\tare\\n\\nscreen\\tscreenshot\\nshot\\t\\n"
    True
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ragkit.errors import RagkitError


@dataclass(frozen=True)
class LexToken:
    """One raw token and its gold normalization (``norm`` may be empty or contain spaces).

    Example:
        >>> LexToken("im", "i'm").changed, LexToken("lol", "lol").changed
        (True, False)
    """

    raw: str
    norm: str
    merged: bool = False

    @property
    def changed(self) -> bool:
        """Whether the normalization differs from the raw token."""
        return self.raw != self.norm


Sentence = tuple[LexToken, ...]


def parse_lexnorm(text: str, source: str = "<string>") -> list[Sentence]:
    """Parse MultiLexNorm text; ``source`` names the file in error messages.

    Example:
        >>> parse_lexnorm("u you\\n", source="dev.norm")
        Traceback (most recent call last):
        ...
        ragkit.errors.RagkitError: dev.norm:1: expected 'raw<TAB>normalized', got 'u you'
    """
    sentences: list[Sentence] = []
    current: list[LexToken] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            if current:
                sentences.append(tuple(current))
                current = []
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            raise RagkitError(f"{source}:{number}: expected 'raw<TAB>normalized', got {line!r}")
        raw, norm = fields
        if not raw or raw != raw.strip() or norm != norm.strip():
            raise RagkitError(
                f"{source}:{number}: raw token must be non-empty and neither side may start or "
                f"end with spaces, got {line!r}"
            )
        current.append(LexToken(raw, norm, merged=not norm and bool(current)))
    if current:
        sentences.append(tuple(current))
    return sentences


def read_lexnorm(path: str | Path) -> list[Sentence]:
    """Read a MultiLexNorm file (UTF-8); errors name the file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise RagkitError(f"{path}: cannot read MultiLexNorm file ({error.strerror})") from error
    except UnicodeDecodeError as error:
        raise RagkitError(f"{path}: not UTF-8 text ({error.reason})") from error
    return parse_lexnorm(text, source=str(path))


def format_lexnorm(sentences: Iterable[Sequence[LexToken]]) -> str:
    """MultiLexNorm text of ``sentences``: tokens a line, a blank line after each sentence.

    Example:
        >>> format_lexnorm([[LexToken("u", "you")]])
        'u\\tyou\\n'
    """
    blocks = [
        "".join(f"{token.raw}\t{token.norm}\n" for token in sentence) for sentence in sentences
    ]
    return "\n".join(block for block in blocks if block)


def write_lexnorm(sentences: Iterable[Sequence[LexToken]], path: str | Path) -> None:
    """Write ``sentences`` to ``path`` in MultiLexNorm format."""
    for sentence in sentences:
        for token in sentence:
            if "\t" in token.raw or "\t" in token.norm or "\n" in token.raw + token.norm:
                raise RagkitError(f"{path}: token {token.raw!r} contains a tab or newline")
    Path(path).write_text(format_lexnorm(sentences), encoding="utf-8")


def with_predictions(sentence: Sequence[LexToken], predictions: Sequence[str]) -> Sentence:
    """The sentence with ``predictions`` as normalizations (to write system output).

    Example:
        >>> with_predictions([LexToken("u", "you")], ["u"])[0]
        LexToken(raw='u', norm='u', merged=False)
    """
    if len(predictions) != len(sentence):
        raise RagkitError(
            f"{len(predictions)} predictions for a sentence of {len(sentence)} tokens"
        )
    return tuple(
        LexToken(token.raw, norm, merged=not norm and index > 0)
        for index, (token, norm) in enumerate(zip(sentence, predictions, strict=True))
    )
