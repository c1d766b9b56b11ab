"""RC, references completeness: do references stay in the chunk of what they refer to?

``RC = |{(a, r) ∈ P : some chunk contains both a and r}| / |P|`` (1 when ``P`` is empty), where
``P`` are reference → antecedent pairs of character offsets found without a coreference model:

- **anaphora**: words from per-language pronoun and demonstrative lists (English, French,
  German, Spanish, Arabic, Persian, Urdu, Amharic); the antecedent is the nearest preceding
  noun-phrase stand-in within ``lookback`` words — a capitalized (entity-like) word inside the
  current or previous sentence when there is one, otherwise the nearest content word (not a
  function word, pronoun or number);
- **explicit cross-references**: ``see Section 3``, ``Table 2``, ``Figure 4``, ``Eq. 5``,
  ``Article 7``, ``المادة 3``, ``ክፍል 2`` resolve to the heading or caption line that starts with
  the same label and number; ``as mentioned above``, ``كما ذكر أعلاه``, ``ከላይ እንደተጠቀሰው`` point
  to the start of the previous sentence, and ``below`` / ``أدناه`` / ``ከዚህ በታች`` to the start
  of the next one.

A real coreference model can replace the anaphora heuristic through ``resolver(text) ->
[(antecedent, reference), …]`` (explicit cross-references are still added).

Example:
    >>> from ragkit.chunking.types import Chunk
    >>> text = "Marie Curie won twice. She was the first."
    >>> pairs = reference_pairs(text, "en")
    >>> [(text[a:a + 5], text[r:r + 3]) for a, r in pairs]
    [('Curie', 'She')]
    >>> together = [Chunk(text, 0, len(text), 9, "x")]
    >>> apart = [Chunk(text[:23], 0, 23, 5, "x"), Chunk(text[23:], 23, len(text), 4, "x")]
    >>> references_completeness(together, pairs), references_completeness(apart, pairs)
    (1.0, 0.0)
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Callable, Sequence

from ragkit.chunking.sentences import _words, sentence_spans
from ragkit.chunking.types import Chunk

Pair = tuple[int, int]
Resolver = Callable[[str], list[Pair]]

PRONOUNS: dict[str, frozenset[str]] = {
    "en": _words(
        "he she it they him her them his hers its their theirs this that these those "
        "such former latter itself themselves himself herself"
    ),
    "fr": _words("il elle ils elles lui leur leurs ce cet cette ces celui celle ceux"),
    "de": _words("er sie es ihm ihn ihr ihre dies diese dieser dieses jener jene"),
    "es": _words("él ella ellos ellas esto este esta estos estas ese esa aquel su sus"),
    "ar": _words("هو هي هم هن هما هذا هذه ذلك تلك هؤلاء أولئك ذاك"),
    "fa": _words("او آنها این آن ایشان اینها آنان"),
    "ur": _words("وہ یہ ان اس انہوں انہیں اسے"),
    "am": _words("እሱ እሷ እነሱ ይህ ያ እነዚህ እነዚያ ይህም እርሱ እርሷ"),
}
FUNCTION_WORDS: dict[str, frozenset[str]] = {
    "en": _words(
        "the a an and or but of in on at to for from by with as is are was were be been "
        "being has have had do does did not no so if then than there here which who "
        "whom what when where why how all any some each more most also into over under "
        "between about after before can could may might must shall should will would "
        "very only"
    ),
    "fr": _words("le la les un une des de du et ou en à au aux par pour dans sur est sont"),
    "de": _words("der die das ein eine und oder in im an auf zu von mit ist sind war"),
    "es": _words("el la los las un una unos y o de del en a por para con es son"),
    "ar": _words("في من على إلى عن أن إن ما لا لم لن قد ثم أو و كان كانت الذي التي"),
    "fa": _words("در از به با که را و یا است بود برای تا"),
    "ur": _words("کے کی کا میں سے کو اور یا ہے تھا نے پر"),
    "am": _words("እና ወይም ነው ናቸው ላይ ውስጥ ግን"),
}
_ALL_PRONOUNS = frozenset().union(*PRONOUNS.values())
_ALL_FUNCTION = frozenset().union(*FUNCTION_WORDS.values()) | _ALL_PRONOUNS
_WORD = re.compile(r"\w+")
_LABELS = (
    r"Section|Sect\.|Sec\.|Chapter|Table|Figure|Fig\.|Eq\.|Equation|Appendix|Article|Part"
    r"|المادة|الفصل|الباب|الجدول|الشكل|ክፍል|አንቀጽ|ሠንጠረዥ|ምዕራፍ"
)
_CROSS_REF = re.compile(rf"(?<!^)(?<!\n)\b({_LABELS})[ \t]*\(?(\d+(?:\.\d+)*)\)?")
_ABOVE = re.compile(
    r"\b(?:as (?:mentioned|noted|stated|shown|described|discussed) (?:above|earlier|before)"
    r"|(?:the )?(?:above|aforementioned|previously mentioned))\b"
    r"|كما (?:ذكر|ذكرنا|سبق|تقدم)(?: أعلاه)?|المذكورة? أعلاه|السالفة? الذكر"
    r"|ከላይ (?:እንደተጠቀሰው|የተጠቀሰው|እንደተገለጸው)",
    re.IGNORECASE,
)
_BELOW = re.compile(
    r"\b(?:as (?:shown|described|follows) below|the following|see below)\b|أدناه|كما يلي|ከዚህ በታች",
    re.IGNORECASE,
)


def _language(language: str) -> str:
    return language.split("-")[0].lower()


def _anaphora(text: str, language: str, lookback: int) -> list[Pair]:
    pronouns = PRONOUNS.get(_language(language), _ALL_PRONOUNS)
    function = FUNCTION_WORDS.get(_language(language), frozenset()) | _ALL_FUNCTION
    sentences = sentence_spans(text, language=language)
    sentence_starts = [s for s, _ in sentences]
    words = list(_WORD.finditer(text))
    pairs: list[Pair] = []
    for index, word in enumerate(words):
        if word.group().lower() not in pronouns:
            continue
        here = bisect.bisect_right(sentence_starts, word.start()) - 1
        window_start = sentence_starts[max(0, here - 1)] if here >= 0 else 0
        nearest_content: int | None = None
        entity: int | None = None
        for back in range(index - 1, max(-1, index - 1 - lookback), -1):
            candidate = words[back]
            token = candidate.group()
            if token.lower() in function or token.isdigit() or len(token) < 3:
                continue
            if nearest_content is None:
                nearest_content = candidate.start()
            if candidate.start() < window_start:
                break
            at_sentence_start = candidate.start() in sentence_starts
            if token[0].isupper() and not at_sentence_start:
                entity = candidate.start()
                break
        antecedent = entity if entity is not None else nearest_content
        if antecedent is not None:
            pairs.append((antecedent, word.start()))
    return pairs


def _label_targets(text: str) -> dict[tuple[str, str], int]:
    """Heading/caption lines that start with a label and number (``Table 2``, ``## 3``)."""
    targets: dict[tuple[str, str], int] = {}
    line_start = re.compile(
        rf"^[ \t#]*(?:({_LABELS})[ \t]*)?(\d+(?:\.\d+)*)\b", re.MULTILINE | re.IGNORECASE
    )
    for match in line_start.finditer(text):
        label = (match.group(1) or "").lower().rstrip(".")
        targets.setdefault((label, match.group(2)), match.start())
    return targets


def _explicit(text: str, language: str) -> list[Pair]:
    sentences = sentence_spans(text, language=language)
    starts = [s for s, _ in sentences]
    targets = _label_targets(text)
    pairs: list[Pair] = []
    for match in _CROSS_REF.finditer(text):
        label = match.group(1).lower().rstrip(".")
        target = targets.get((label, match.group(2)))
        if target is None and label in ("section", "sect", "sec", "chapter", "ክፍል", "الفصل"):
            target = targets.get(("", match.group(2)))
        if target is not None and abs(target - match.start()) > len(match.group()):
            pairs.append((target, match.start()))
    for match in _ABOVE.finditer(text):
        here = bisect.bisect_right(starts, match.start()) - 1
        if here >= 1:
            pairs.append((starts[here - 1], match.start()))
    for match in _BELOW.finditer(text):
        here = bisect.bisect_right(starts, match.start())
        if here < len(starts):
            pairs.append((match.start(), starts[here]))
    return pairs


def reference_pairs(
    text: str, language: str = "", resolver: Resolver | None = None, lookback: int = 40
) -> list[Pair]:
    """(antecedent, reference) offset pairs, sorted; see the module docstring.

    Matching ignores combining marks (Arabic harakat, tatweel), so diacritized text such as
    ``هُوَ`` finds the list entry ``هو``; offsets point into the original ``text``.
    """
    bare, where = _without_marks(text)
    found = set(_explicit(bare, language))
    if resolver is None:
        found.update(_anaphora(bare, language, lookback))
    if where is not None:
        found = {(where[a], where[r]) for a, r in found}
    if resolver is not None:
        found.update(resolver(text))
    return sorted(found)


def _without_marks(text: str) -> tuple[str, list[int] | None]:
    """``text`` without combining marks and tatweel, and each kept character's offset."""
    keep = [i for i, ch in enumerate(text) if not unicodedata.combining(ch) and ch != "\u0640"]
    if len(keep) == len(text):
        return text, None
    return "".join(text[i] for i in keep), keep


def references_completeness(chunks: Sequence[Chunk], pairs: Sequence[Pair]) -> float:
    """RC: share of pairs whose two offsets fall in one chunk."""
    if not pairs or not chunks:
        return 1.0
    starts = [c.start for c in chunks]
    kept = 0
    for a, r in pairs:
        lo, hi = min(a, r), max(a, r)
        k = bisect.bisect_right(starts, lo) - 1
        # overlapping chunkings: any chunk starting at or before lo may contain both
        while k >= 0 and chunks[k].end > lo:
            if chunks[k].start <= lo and hi < chunks[k].end:
                kept += 1
                break
            k -= 1
    return kept / len(pairs)
