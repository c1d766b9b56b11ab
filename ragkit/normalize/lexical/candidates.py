"""Candidate generation for lexical normalization: lexicon, slang dictionary, elongation, edit
distance, split, merge, dropped-g endings and abbreviations (see
:mod:`ragkit.normalize.lexical.rules`).

Every generator works on lower-cased tokens. The identity candidate is always first.

Example:
    >>> resources = Resources.build(
    ...     pairs=[("u", "you"), ("u", "you"), ("alot", "a lot")],
    ...     vocabulary={"you": 7.0, "good": 6.0, "god": 5.5, "a": 7.5, "lot": 5.5, "tomorrow": 5.0},
    ... )
    >>> [c.text for c in CandidateGenerator(resources).generate(["u"], 0)]
    ['u', 'you']
    >>> [c.text for c in CandidateGenerator(resources).generate(["goooood"], 0)]
    ['goooood', 'god', 'good']
    >>> "tomorrow" in [c.text for c in CandidateGenerator(resources).generate(["tomorow"], 0)]
    True
"""

from __future__ import annotations

import itertools
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ragkit.normalize.lexical.rules import AbbreviationIndex, g_dropping_forms

# Token shapes MultiLexNorm leaves as they are.
SHAPE_WORD, SHAPE_MENTION, SHAPE_HASHTAG, SHAPE_URL, SHAPE_NUMBER, SHAPE_PUNCT = range(6)
_URL = re.compile(r"^(https?://|www\.)\S+$|^\S+\.(com|org|net|ly|co)(/\S*)?$")
_NUMBER = re.compile(r"^[+-]?\d+([.,:/]\d+)*%?$")
_WORDLIKE = re.compile(r"^[a-z0-9']+$")
_RUN = re.compile(r"(.)\1+")

MAX_EDIT_CANDIDATES = 8
MAX_ELONGATION_RUNS = 6


def token_shape(token: str) -> int:
    """The shape class of a lower-cased token (``SHAPE_*``).

    Example:
        >>> [token_shape(t) for t in ["u", "@bob", "#tbt", "http://t.co/x", "2,5", "!!"]]
        [0, 1, 2, 3, 4, 5]
    """
    if token.startswith("@") and len(token) > 1:
        return SHAPE_MENTION
    if token.startswith("#") and len(token) > 1:
        return SHAPE_HASHTAG
    if _URL.match(token):
        return SHAPE_URL
    if _NUMBER.match(token):
        return SHAPE_NUMBER
    if not any(char.isalnum() for char in token):
        return SHAPE_PUNCT
    return SHAPE_WORD


_PRIVATE = (SHAPE_MENTION, SHAPE_HASHTAG, SHAPE_URL)
_PLACEHOLDERS = {SHAPE_MENTION: "<user>", SHAPE_HASHTAG: "<hashtag>", SHAPE_URL: "<url>"}


def context_word(token: str) -> str:
    """``token`` as bigram context: user names, hashtags and URLs become placeholders.

    Keeps user names and links out of the saved model and lets contexts generalize.

    Example:
        >>> [context_word(t) for t in ["@bob", "#tbt", "www.x.org", "you"]]
        ['<user>', '<hashtag>', '<url>', 'you']
    """
    return _PLACEHOLDERS.get(token_shape(token), token)


def max_run(token: str) -> int:
    """Length of the longest run of one repeated character.

    Example:
        >>> max_run("sooooo"), max_run("good"), max_run("a")
        (5, 2, 1)
    """
    return max((len(match.group(0)) for match in _RUN.finditer(token)), default=1)


def elongation_variants(token: str) -> list[str]:
    """Forms of ``token`` with each repeated-character run cut to one or two characters.

    Example:
        >>> elongation_variants("goooood")
        ['god', 'good']
        >>> elongation_variants("yesss")
        ['yes', 'yess']
    """
    runs = [match for match in _RUN.finditer(token)][:MAX_ELONGATION_RUNS]
    if not runs:
        return []
    variants: set[str] = set()
    for lengths in itertools.product((1, 2), repeat=len(runs)):
        parts: list[str] = []
        position = 0
        for match, length in zip(runs, lengths, strict=True):
            parts.append(token[position : match.start()])
            parts.append(match.group(1) * length)
            position = match.end()
        parts.append(token[position:])
        variants.add("".join(parts))
    variants.discard(token)
    return sorted(variants, key=lambda form: (len(form), form))


def edit_distance(a: str, b: str, limit: int = 2) -> int:
    """Optimal-string-alignment distance (transpositions count 1); ``limit + 1`` when above limit.

    Example:
        >>> edit_distance("teh", "the"), edit_distance("dont", "don't"), edit_distance("a", "xyz")
        (1, 1, 3)
    """
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, char_b in enumerate(b, 1):
            cost = 0 if char_a == char_b else 1
            value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and char_a == b[j - 2] and a[i - 2] == char_b:
                value = min(value, previous2[j - 2] + 1)
            current[j] = value
        if min(current) > limit:
            return limit + 1
        previous2, previous = previous, current
    return min(previous[-1], limit + 1)


def _deletes(word: str, depth: int) -> set[str]:
    """All strings made by deleting up to ``depth`` characters of ``word``."""
    found = {word}
    frontier = {word}
    for _ in range(depth):
        frontier = {form[:i] + form[i + 1 :] for form in frontier for i in range(len(form))}
        found |= frontier
    return found


class DeleteIndex:
    """Symmetric-delete lookup of words within edit distance 2.

    Words and queries both expand to every form with up to two characters deleted; words sharing
    a form with the query are verified with :func:`edit_distance`.

    Example:
        >>> DeleteIndex(["tomorrow", "the", "they"]).lookup("tmorow")
        [('tomorrow', 2)]
    """

    def __init__(self, words: Iterable[str], depth: int = 2) -> None:
        self.words = list(dict.fromkeys(words))
        self.depth = depth
        index: dict[str, int | list[int]] = {}
        for number, word in enumerate(self.words):
            for form in _deletes(word, depth):
                held = index.get(form)
                if held is None:
                    index[form] = number
                elif isinstance(held, int):
                    index[form] = [held, number]
                else:
                    held.append(number)
        self._index = index

    def lookup(self, query: str, limit: int = 2) -> list[tuple[str, int]]:
        """Words within ``limit`` (≤ the index depth) edits of ``query``, closest first."""
        limit = min(limit, self.depth)
        hits: dict[str, int] = {}
        for form in _deletes(query, limit):
            held = self._index.get(form)
            if held is None:
                continue
            for number in [held] if isinstance(held, int) else held:
                word = self.words[number]
                if word not in hits and word != query:
                    hits[word] = edit_distance(query, word, limit)
        return sorted(
            ((word, distance) for word, distance in hits.items() if distance <= limit),
            key=lambda item: (item[1], item[0]),
        )


@dataclass
class Resources:
    """What candidate generation and features read: lexicon, word frequencies, bigram counts.

    ``lexicon[raw][norm]`` counts how often ``raw`` was normalized to ``norm`` in training data;
    user names, hashtags and URLs are left out (they are never normalized);
    ``vocabulary`` maps words to Zipf frequency (log10 per billion words); ``bigrams`` counts
    ``"left right"`` pairs of normalized training words; ``corpus_bigrams`` maps ``"left right"``
    pairs of vocabulary words to log10 of their count in a large edited corpus (books);
    ``web_words`` maps the rarer words of a larger web/social-media word list (names, brands,
    rare words: spellings people use) to their Zipf frequency. A token absent from both is more
    likely a typo than a name. ``slang`` maps internet slang to its spelled-out form
    (``hbu`` → ``how about you``), from a general slang dictionary, not from the training data;
    ``american`` maps British spellings to American ones (``colour`` → ``color``).
    """

    lexicon: dict[str, dict[str, int]]
    vocabulary: dict[str, float]
    bigrams: dict[str, int] = field(default_factory=dict)
    targets: dict[str, int] = field(default_factory=dict)
    corpus_bigrams: dict[str, float] = field(default_factory=dict)
    web_words: dict[str, float] = field(default_factory=dict)
    slang: dict[str, str] = field(default_factory=dict)
    american: dict[str, str] = field(default_factory=dict)
    _index: DeleteIndex | None = field(default=None, repr=False)
    _abbreviations: AbbreviationIndex | None = field(default=None, repr=False)

    @classmethod
    def build(
        cls,
        pairs: Iterable[tuple[str, str]],
        vocabulary: Mapping[str, float],
        sentences: Iterable[Sequence[str]] = (),
        corpus_bigrams: Mapping[str, float] | None = None,
        web_words: Mapping[str, float] | None = None,
        slang: Mapping[str, str] | None = None,
        american: Mapping[str, str] | None = None,
    ) -> Resources:
        """Count ``(raw, norm)`` pairs and normalized-side bigrams of ``sentences``."""
        lexicon: dict[str, Counter[str]] = defaultdict(Counter)
        for raw, norm in pairs:
            if token_shape(raw) not in _PRIVATE:
                lexicon[raw][norm] += 1
        bigrams: Counter[str] = Counter()
        for words in sentences:
            flat = ["<s>", *(context_word(w) for w in " ".join(words).split()), "</s>"]
            bigrams.update(f"{a} {b}" for a, b in itertools.pairwise(flat))
        return cls(
            {raw: dict(counts) for raw, counts in lexicon.items()},
            dict(vocabulary),
            dict(bigrams),
            corpus_bigrams=dict(corpus_bigrams or {}),
            web_words=dict(web_words or {}),
            slang=dict(slang or {}),
            american=dict(american or {}),
        )

    def __post_init__(self) -> None:
        if not self.targets:
            self.targets = count_targets(self.lexicon)

    @property
    def index(self) -> DeleteIndex:
        """The edit-distance index over alphabetic vocabulary words (built on first use)."""
        if self._index is None:
            words = {word for word in self.vocabulary if _WORDLIKE.match(word)}
            words |= {
                norm for counts in self.lexicon.values() for norm in counts if _WORDLIKE.match(norm)
            }
            self._index = DeleteIndex(sorted(words))
        return self._index

    @property
    def abbreviations(self) -> AbbreviationIndex:
        """The abbreviation index over alphabetic vocabulary words (built on first use)."""
        if self._abbreviations is None:
            self._abbreviations = AbbreviationIndex(self.vocabulary)
        return self._abbreviations

    def corpus_bigram(self, left: str, right: str) -> float:
        """log10 corpus count of the word pair ``left right``; 0 when unknown."""
        return self.corpus_bigrams.get(f"{left} {right}", 0.0)

    def zipf(self, text: str) -> float:
        """Zipf frequency of a word; a multi-word text gets its rarest word's."""
        return min((self.vocabulary.get(word, 0.0) for word in text.split()), default=0.0)

    def web_zipf(self, text: str) -> float:
        """Zipf frequency of a word in the vocabulary or else the web word list (0 when in
        neither); a multi-word text gets its rarest word's.

        Example:
            >>> res = Resources.build([], {"you": 7.0}, web_words={"avedon": 2.1})
            >>> res.web_zipf("avedon"), res.web_zipf("you avedon"), res.web_zipf("wkeend")
            (2.1, 2.1, 0.0)
        """
        return min(
            (self.vocabulary.get(word) or self.web_words.get(word, 0.0) for word in text.split()),
            default=0.0,
        )

    def bigram(self, left: str, right: str) -> int:
        """Training count of the word pair ``left right`` (see :func:`context_word`)."""
        return self.bigrams.get(f"{context_word(left)} {context_word(right)}", 0)


def count_targets(lexicon: Mapping[str, Mapping[str, int]]) -> dict[str, int]:
    """How often each normalization was the target of a *changed* raw token.

    Example:
        >>> count_targets({"u": {"you": 3, "u": 1}, "ya": {"you": 2}})
        {'you': 5}
    """
    targets: Counter[str] = Counter()
    for raw, counts in lexicon.items():
        for norm, count in counts.items():
            if norm != raw:
                targets[norm] += count
    return dict(targets)


@dataclass(frozen=True)
class Candidate:
    """One normalization candidate and where it came from."""

    text: str
    identity: bool = False
    lexicon: bool = False
    elongation: bool = False
    distance: int = 0
    split: bool = False
    merge: bool = False
    g_dropping: bool = False
    abbreviation: bool = False
    slang: bool = False
    american: bool = False


class CandidateGenerator:
    """Generate candidates for a token in context (``tokens`` lower-cased, one sentence)."""

    def __init__(self, resources: Resources, min_split_zipf: float = 3.0) -> None:
        self.resources = resources
        self.min_split_zipf = min_split_zipf
        self._cache: dict[str, tuple[Candidate, ...]] = {}

    def generate(self, tokens: Sequence[str], position: int) -> list[Candidate]:
        """Candidates for ``tokens[position]``; identity first.

        No text comes twice among the one-token candidates; a merge with the next token may
        repeat one's text (``u r``: ``you`` for ``u`` alone, or ``you`` for ``ur`` merged).
        """
        raw = tokens[position]
        if raw not in self._cache:
            self._cache[raw] = tuple(self._token_candidates(raw))
        found = list(self._cache[raw])
        if position + 1 < len(tokens):
            found.extend(
                Candidate(text, merge=True)
                for text in self.merges(raw, tokens[position + 1])
                if text != raw
            )
        return found

    def merges(self, left: str, right: str) -> list[str]:
        """Words that ``left right`` written as one token could be: itself, if a frequent word,
        and its lexicon normalizations (``fu k`` → ``fuck``); none unless both are words.

        Example:
            >>> res = Resources.build([("fuk", "fuck")], {"preorder": 3.2, "fuck": 5.0})
            >>> gen = CandidateGenerator(res)
            >>> gen.merges("pre", "order"), gen.merges("fu", "k"), gen.merges("pre", "!")
            (['preorder'], ['fuck'], [])
        """
        if token_shape(left) != SHAPE_WORD or token_shape(right) != SHAPE_WORD:
            return []
        joined = left + right
        found = [joined] if self.resources.zipf(joined) >= self.min_split_zipf else []
        found += [
            norm
            for norm in self.resources.lexicon.get(joined, {})
            if norm not in found and norm and " " not in norm
        ]
        return found

    def _token_candidates(self, raw: str) -> list[Candidate]:
        resources = self.resources
        found: dict[str, dict[str, object]] = {raw: {"identity": True}}
        shape = token_shape(raw)
        if shape in _PRIVATE:
            return [Candidate(raw, identity=True)]

        def add(text: str, **flags: object) -> None:
            entry = found.setdefault(text, {})
            for key, value in flags.items():
                if key == "distance":
                    entry[key] = min(int(value), int(entry.get(key, 99)))  # type: ignore[call-overload]
                else:
                    entry[key] = True

        for norm in resources.lexicon.get(raw, {}):
            add(norm, lexicon=True)
        if raw in resources.slang:
            add(resources.slang[raw], slang=True)
        if raw in resources.american:
            add(resources.american[raw], american=True)
        if shape != SHAPE_WORD:
            return [_candidate(text, flags) for text, flags in found.items()]
        for form in elongation_variants(raw) if max_run(raw) >= 2 else []:
            if resources.zipf(form) > 0:
                add(form, elongation=True)
            for norm in resources.lexicon.get(form, {}):
                add(norm, elongation=True, lexicon=True)
        if _WORDLIKE.match(raw) and len(raw) >= 2:
            limit = 1 if len(raw) <= 3 else 2
            hits = resources.index.lookup(raw, limit)
            hits.sort(key=lambda hit: (hit[1], -resources.zipf(hit[0])))
            for word, distance in hits[:MAX_EDIT_CANDIDATES]:
                add(word, distance=distance)
        for form in g_dropping_forms(raw):
            if raw.endswith(("in", "in'")) or raw not in resources.vocabulary:
                add(form, g_dropping=True)
        if raw not in resources.vocabulary and raw not in resources.lexicon:
            for word in resources.abbreviations.expansions(raw):
                add(word, abbreviation=True)
        for cut in range(1, len(raw)):
            left, right = raw[:cut], raw[cut:]
            if min(resources.zipf(left), resources.zipf(right)) >= self.min_split_zipf and (
                len(left) > 1 or left in {"a", "i"}
            ):
                add(f"{left} {right}", split=True)
        return [_candidate(text, flags) for text, flags in found.items()]


def _candidate(text: str, flags: Mapping[str, object]) -> Candidate:
    """The :class:`Candidate` of ``text`` with the sources gathered in ``flags``."""
    return Candidate(
        text,
        identity=bool(flags.get("identity", False)),
        lexicon=bool(flags.get("lexicon", False)),
        elongation=bool(flags.get("elongation", False)),
        distance=int(flags.get("distance", 0)),  # type: ignore[call-overload]
        split=bool(flags.get("split", False)),
        g_dropping=bool(flags.get("g_dropping", False)),
        abbreviation=bool(flags.get("abbreviation", False)),
        slang=bool(flags.get("slang", False)),
        american=bool(flags.get("american", False)),
    )
