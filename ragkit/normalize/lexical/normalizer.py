"""The lexical normalizer: candidates, ranked by the shipped model, as a ragkit ``Step``.

MultiLexNorm's normalized side is lower-cased, so the model works on lower-cased tokens and
writes replacements in lower case. ``keep_case=True`` (the Step's default) copies the original
token's capitalization (``U`` → ``You``, ``LOL`` → ``LAUGHING OUT LOUD``); tokens the model leaves
alone are always returned exactly as given.

Example:
    >>> res = Resources.build([("u", "you")] * 3 + [("r", "are")] * 2, {"you": 7.0, "are": 7.0})
    >>> rows = 2 * [[0.0] * len(FEATURE_NAMES)]
    >>> always = TreeEnsemble(0.0, 1.0, FEATURE_NAMES, [Tree(
    ...     feature=[1, -1, -1], threshold=[0.5, 0, 0], left=[1, -1, -1], right=[2, -1, -1],
    ...     value=[0.0, -1.0, 1.0])])
    >>> normalizer = LexicalNormalizer(res, always, language="en")
    >>> normalizer.normalize_tokens(["U", "r", "here"])
    ['you', 'are', 'here']
    >>> out = LexicalNormalization(normalizer)("U r here!")
    >>> out.text
    'You are here!'
    >>> out.original_span(0, 3), out.original_span(4, 7)
    ((0, 1), (2, 3))
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragkit.errors import RagkitError
from ragkit.normalize.base import Normalized, Step
from ragkit.normalize.lexical.candidates import Candidate, CandidateGenerator, Resources
from ragkit.normalize.lexical.ranker import FEATURE_NAMES, Tree, TreeEnsemble, candidate_rows
from ragkit.paths import package_folder

MODEL_FORMAT = "ragkit-lexnorm"
MODEL_VERSION = 4
DATA_DIR = package_folder("ragkit.normalize", "data")
_TOKEN = re.compile(r"\S+")
_EDGES = re.compile(r"^([^\w@#]*)(.*?)([^\w']*)$", re.DOTALL)


def model_path(language: str) -> Path:
    """Where the shipped model of ``language`` lives (``ragkit/normalize/data``)."""
    return DATA_DIR / f"lexnorm-{language}.json.gz"


@dataclass(frozen=True)
class TokenDecision:
    """Candidates of one token with their scores (identity first); ``known``: a vocabulary word."""

    candidates: tuple[Candidate, ...]
    scores: tuple[float, ...]
    known: bool = False


@dataclass
class LexicalNormalizer:
    """Normalize tokens with lexicon/elongation/edit/split/merge candidates and a tree ranker.

    The best-scoring non-identity candidate replaces the token when its score beats the
    identity's by more than ``margin``, plus ``multiword_bias`` for a split or merge, plus
    ``keep_bias`` when the token is itself a vocabulary
    word (``ya``, ``rt``, ``d``); both in log-odds, tuned at training time on a part of the
    training data the ranker did not see.
    """

    resources: Resources
    ranker: TreeEnsemble
    language: str = "en"
    margin: float = 0.0
    keep_bias: float = 0.0
    multiword_bias: float = 0.0
    report: dict[str, Any] = field(default_factory=dict)
    _generator: CandidateGenerator | None = field(default=None, repr=False)

    @property
    def generator(self) -> CandidateGenerator:
        """The candidate generator over this model's resources."""
        if self._generator is None:
            self._generator = CandidateGenerator(self.resources)
        return self._generator

    @classmethod
    def load(cls, language: str = "en", path: str | Path | None = None) -> LexicalNormalizer:
        """Load the shipped model of ``language``, or the model file at ``path``.

        Example:
            >>> LexicalNormalizer.load("xx")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            ragkit.errors.RagkitError: no lexical normalization model for language 'xx' (looked...
        """
        file = Path(path) if path is not None else model_path(language)
        if not file.is_file():
            shipped = sorted(
                p.name.split("-", 1)[1].split(".")[0] for p in DATA_DIR.glob("lexnorm-*")
            )
            raise RagkitError(
                f"no lexical normalization model for language {language!r} (looked for "
                f"{file}; shipped: {', '.join(shipped) or 'none'}); train one with "
                "ragkit.normalize.lexical.train_lexical(train, dev, out) and pass path="
            )
        try:
            with gzip.open(file, "rt", encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError) as error:
            raise RagkitError(f"{file}: not a gzip-compressed JSON model ({error})") from error
        if data.get("format") != MODEL_FORMAT or data.get("version") != MODEL_VERSION:
            raise RagkitError(
                f"{file}: not a {MODEL_FORMAT} v{MODEL_VERSION} model; retrain with train_lexical"
            )
        resources = Resources(
            lexicon=data["lexicon"],
            vocabulary=data["vocabulary"],
            bigrams=data["bigrams"],
            corpus_bigrams=data.get("corpus_bigrams", {}),
            web_words=data["web_words"],
            slang=data["slang"],
            american=data["american"],
        )
        return cls(
            resources,
            TreeEnsemble.from_dict(data["ranker"]),
            language=data["language"],
            margin=float(data["margin"]),
            keep_bias=float(data.get("keep_bias", 0.0)),
            multiword_bias=float(data.get("multiword_bias", 0.0)),
            report=data.get("report", {}),
        )

    def save(self, path: str | Path) -> Path:
        """Write the model as gzip-compressed JSON; returns the path."""
        path = Path(path)
        data = {
            "format": MODEL_FORMAT,
            "version": MODEL_VERSION,
            "language": self.language,
            "margin": self.margin,
            "keep_bias": self.keep_bias,
            "multiword_bias": self.multiword_bias,
            "ranker": self.ranker.to_dict(),
            "lexicon": self.resources.lexicon,
            "vocabulary": self.resources.vocabulary,
            "bigrams": self.resources.bigrams,
            "corpus_bigrams": self.resources.corpus_bigrams,
            "web_words": self.resources.web_words,
            "slang": self.resources.slang,
            "american": self.resources.american,
            "report": self.report,
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        with gzip.GzipFile(path, "wb", mtime=0) as handle:
            handle.write(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode())
        return path

    def decisions(self, tokens: Sequence[str]) -> list[TokenDecision]:
        """Scored candidates of every token of one sentence (tokens lower-cased here)."""
        lowered = [token.lower() for token in tokens]
        candidates = [self.generator.generate(lowered, i) for i in range(len(lowered))]
        ranked = [i for i, found in enumerate(candidates) if len(found) > 1]
        scores: dict[int, tuple[float, ...]] = {}
        if ranked:
            blocks = [candidate_rows(lowered, i, candidates[i], self.resources) for i in ranked]
            flat = self.ranker.score(np.vstack(blocks)).tolist()
            start = 0
            for i in ranked:
                scores[i] = tuple(flat[start : start + len(candidates[i])])
                start += len(candidates[i])
        vocabulary = self.resources.vocabulary
        return [
            TokenDecision(tuple(found), scores.get(i, (0.0,)), lowered[i] in vocabulary)
            for i, found in enumerate(candidates)
        ]

    def normalize_tokens(self, tokens: Sequence[str], keep_case: bool = False) -> list[str]:
        """Normalized form of each token; a token merged into its left neighbour becomes ``""``."""
        return decode(
            tokens,
            self.decisions(tokens),
            self.margin,
            keep_case,
            self.keep_bias,
            self.multiword_bias,
        )


def decode(
    tokens: Sequence[str],
    decisions: Sequence[TokenDecision],
    margin: float,
    keep_case: bool,
    keep_bias: float = 0.0,
    multiword_bias: float = 0.0,
) -> list[str]:
    """Pick each token's normalization from its scored candidates, left to right.

    A candidate replaces the token when its score beats the identity's by more than
    ``margin``, plus ``keep_bias`` for a vocabulary word and ``multiword_bias`` for a split
    (a text with a space) or a merge; the candidate that beats its bar by most is chosen.

    Example:
        >>> ya = (Candidate("ya", identity=True), Candidate("you"))
        >>> decode(["ya"], [TokenDecision(ya, (0.0, 1.0))], 0.5, False)
        ['you']
        >>> decode(["ya"], [TokenDecision(ya, (0.0, 1.0), known=True)], 0.5, False, keep_bias=1.0)
        ['ya']
    """
    output: list[str] = []
    merged = False
    for token, decision in zip(tokens, decisions, strict=True):
        if merged:
            output.append("")
            merged = False
            continue
        if len(decision.candidates) == 1:
            output.append(token)
            continue
        bias = margin + (keep_bias if decision.known else 0.0)
        bars = [
            bias + (multiword_bias if c.merge or " " in c.text else 0.0)
            for c in decision.candidates
        ]
        best = max(range(1, len(decision.scores)), key=lambda i: decision.scores[i] - bars[i])
        chosen = decision.candidates[best]
        if decision.scores[best] - decision.scores[0] <= bars[best]:
            output.append(token)
            continue
        merged = chosen.merge
        if keep_case:
            starts = not any(output) or output[-1].endswith((".", "!", "?"))
            output.append(transfer_case(token, chosen.text, starts))
        else:
            output.append(chosen.text)
    return output


def transfer_case(original: str, replacement: str, sentence_start: bool = True) -> str:
    """Give ``replacement`` the capitalization pattern of ``original`` (upper, title or lower).

    A one-letter capital (``U``, ``R``) is shorthand written like ``I``: its replacement is
    capitalized only where a sentence starts (``I love U`` → ``I love you``).

    Example:
        >>> transfer_case("LOL", "laughing out loud"), transfer_case("U", "you")
        ('LAUGHING OUT LOUD', 'You')
        >>> transfer_case("U", "you", sentence_start=False), transfer_case("Pls", "please", False)
        ('you', 'Please')
    """
    if len(original) > 1 and original.isupper():
        return replacement.upper()
    if original[:1].isupper() and (len(original) > 1 or sentence_start):
        return replacement[:1].upper() + replacement[1:]
    return replacement


class LexicalNormalization(Step):
    """Lexical normalization of a whitespace-tokenized text, offsets into the original.

    Punctuation glued to a word (``u!``) is split off as its own token first, as in MultiLexNorm.
    A replacement's characters point at the original token (one-to-one while both last, then
    at its last character); a token merged into its left neighbour is deleted along with the
    whitespace before it. The model is loaded on first use.
    """

    name = "lexical"

    def __init__(
        self,
        normalizer: LexicalNormalizer | None = None,
        language: str = "en",
        keep_case: bool = True,
    ) -> None:
        self._normalizer = normalizer
        self.language = language
        self.keep_case = keep_case

    @property
    def normalizer(self) -> LexicalNormalizer:
        """The underlying normalizer (the shipped model of ``language`` unless one was given)."""
        if self._normalizer is None:
            self._normalizer = LexicalNormalizer.load(self.language)
        return self._normalizer

    def apply(self, text: str) -> Normalized:
        spans = list(_token_spans(text))
        if not spans:
            return Normalized.identity(text)
        tokens = [text[start:end] for start, end in spans]
        outputs = self.normalizer.normalize_tokens(tokens, keep_case=self.keep_case)
        if outputs == tokens:
            return Normalized.identity(text)
        pieces: list[tuple[str, int]] = []
        position = 0
        for number, ((start, end), token, output) in enumerate(zip(spans, tokens, outputs)):
            if output or token == output:
                pieces.extend((char, i) for i, char in enumerate(text[position:start], position))
            if output == token:
                pieces.extend((char, i) for i, char in enumerate(token, start))
            else:
                # a merge's text points over both tokens it replaces
                merges = number + 1 < len(spans) and output and not outputs[number + 1]
                last = (spans[number + 1][1] if merges else end) - 1
                pieces.extend((char, min(start + i, last)) for i, char in enumerate(output))
            position = end
        pieces.extend((char, i) for i, char in enumerate(text[position:], position))
        return Normalized.from_pieces(pieces, len(text))


def _token_spans(text: str) -> list[tuple[int, int]]:
    """Whitespace tokens with leading/trailing punctuation split off, as ``(start, end)``."""
    spans: list[tuple[int, int]] = []
    for match in _TOKEN.finditer(text):
        edges = _EDGES.match(match.group(0))
        assert edges is not None  # the pattern matches any string
        position = match.start()
        for part in edges.groups():
            if part:
                spans.append((position, position + len(part)))
                position += len(part)
    return spans


__all__ = [
    "FEATURE_NAMES",
    "LexicalNormalization",
    "LexicalNormalizer",
    "TokenDecision",
    "Tree",
    "decode",
    "model_path",
    "transfer_case",
]
