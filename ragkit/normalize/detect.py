"""Script and language identification, per text and per span: script first, then language.

:func:`identify` decides in this order and says which step decided (``method``):

1. **script** — the Unicode blocks of the letters. A script that only one allowed language
   writes (Greek; Latin when the collection is English) answers outright.
2. **letters** / **words** — inside a script several languages share, rules that work on a
   two-word query (:mod:`.language_rules`): Tigrinya ኣ and the ቐ row against Amharic; Sorani,
   Pashto, Sindhi, Uyghur, Urdu, Persian and Arabic letters and function words in Arabic
   script.
3. **statistical** — the bundled py3langid model (a naive Bayes model shipped in the wheel as
   an npz file, no download), restricted to the candidate languages, only for texts of at
   least :data:`STATISTICAL_MIN_LETTERS` letters: below that it guesses Italian for
   "zebra stripes" and Hausa for "quokka tuesday".
4. **default** — the script's first candidate (``en`` for Latin, ``ar`` for Arabic).

``allowed`` (the languages a collection holds, e.g. from a
:class:`~ragkit.normalize.profile.LanguageProfile`) restricts every step: the answer is
always one of them.

Example:
    >>> detect_script("ሰላም ነው")
    'Ethi'
    >>> detect_language("کتاب خوب است و پدر من آمد")
    'fa'
    >>> identify("zebra stripes")
    LanguageGuess(language='en', script='Latn', confidence=0.077, method='default')
    >>> identify("router prefix", allowed={"en", "fa"}).method
    'script'
    >>> identify("في البیت").language
    'ar'
    >>> [(s.script, s.language) for s in detect_spans("Hello world. مرحبا بكم في البيت")]
    [('Latn', 'en'), ('Arab', 'ar')]
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ragkit.errors import RagkitError
from ragkit.normalize.language_rules import (
    AMHARIC_A,
    TIGRINYA_A,
    best_of,
    evidence_parts,
)

if TYPE_CHECKING:
    from py3langid.langid import LanguageIdentifier

_BLOCKS: tuple[tuple[int, int, str], ...] = (
    (0x0041, 0x024F, "Latn"),
    (0x0370, 0x03FF, "Grek"),
    (0x0400, 0x04FF, "Cyrl"),
    (0x0590, 0x05FF, "Hebr"),
    (0x0600, 0x06FF, "Arab"),
    (0x0750, 0x077F, "Arab"),
    (0x08A0, 0x08FF, "Arab"),
    (0xFB50, 0xFDFF, "Arab"),
    (0xFE70, 0xFEFF, "Arab"),
    (0x0900, 0x097F, "Deva"),
    (0x0E00, 0x0E7F, "Thai"),
    (0x1100, 0x11FF, "Hang"),
    (0x1200, 0x139F, "Ethi"),
    (0x2D80, 0x2DDF, "Ethi"),
    (0x3040, 0x30FF, "Kana"),  # hiragana and katakana
    (0x3130, 0x318F, "Hang"),
    (0x3400, 0x4DBF, "Hani"),
    (0x4E00, 0x9FFF, "Hani"),
    (0xAB00, 0xAB2F, "Ethi"),
    (0xAC00, 0xD7AF, "Hang"),
)

# Languages written in each script (py3langid's labels; Sindhi, which it lacks, is found by
# letters only); the first is the default for short text.
SCRIPT_LANGUAGES: dict[str, tuple[str, ...]] = {
    "Arab": ("ar", "fa", "ur", "ku", "sdh", "ps", "sd", "ug", "arz", "ary"),
    "Latn": ("en", "fr", "de", "es", "it", "pt", "nl", "id", "tr", "sw", "so", "ha", "om"),
    "Ethi": ("am",),
    "Cyrl": ("ru", "uk", "bg", "sr", "kk", "mk", "be"),
    "Grek": ("el",),
    "Hebr": ("he",),
    "Deva": ("hi", "mr", "ne"),
    "Hani": ("zh",),
    "Kana": ("ja",),
    "Hang": ("ko",),
    "Thai": ("th",),
}
_LANGUAGE_ALIASES = {"ku": "ckb", "sdh": "ckb", "arz": "ar", "ary": "ar"}
_ETHIOPIC = ("am", "ti")
# Letters from which py3langid (restricted to the script's languages) is right often enough
# to overrule the default: measured on the tuning split of benchmarks/language.py (the
# smallest length from which ≥ 99.5 % of tuning texts are identified right). In Arabic script
# it never gets there (≈ 82 % at any length: Arabic typed with Persian letters reads as
# Persian to it), so there the rules and the default decide alone (``None``). Scripts not
# measured use the Latin figure.
STATISTICAL_MIN_LETTERS: dict[str, int | None] = {"Latn": 40, "Arab": None}
Method = Literal["script", "letters", "words", "statistical", "default", "profile", "given"]
# The rules' version, recorded by each index (ragkit.store.language_rules), and the stored
# languages each version may decide differently: 2 reads Korean and Thai by script (they were
# "und") and Han text with kana as Japanese (it was "zh"); 3 reads Pashto (was "fa"), Sindhi
# (was "ar") and Uyghur (was "ar" or "ckb") by their letters; 4 reads the digits ۰–۹ and the
# ezafe written as heh + hamza as Persian-script evidence (short Persian was "ar").
RULES_VERSION = 4
RULES_CHANGES: dict[int, frozenset[str]] = {
    2: frozenset({"und", "zh"}),
    3: frozenset({"ar", "fa", "ckb"}),
    4: frozenset({"ar"}),
}


@dataclass(frozen=True)
class Span:
    """A run of text in one script: ``text[start:end]``, with its guessed language."""

    start: int
    end: int
    script: str
    language: str


@dataclass(frozen=True)
class LanguageGuess:
    """A language decision: the language, its script, a confidence in [0, 1] and what decided.

    ``method`` is ``script`` (one allowed language writes the script), ``letters`` or
    ``words`` (the rules of :mod:`.language_rules`), ``statistical`` (py3langid),
    ``default`` (too little evidence: the script's first candidate) or ``profile`` (weak own
    evidence, the collection's dominant language taken: :func:`.profile.resolve_language`)
    or ``given`` (by the record itself: :mod:`ragkit.documents.given`).
    """

    language: str
    script: str
    confidence: float
    method: Method


@functools.lru_cache(maxsize=8192)
def script_of(char: str) -> str | None:
    """The script of one character, or ``None`` for digits, punctuation and spaces (cached:
    text repeats the same few hundred characters, and every query goes through here).

    Example:
        >>> script_of("ب"), script_of("7")
        ('Arab', None)
    """
    code = ord(char)
    for low, high, name in _BLOCKS:
        if low <= code <= high:
            return name if char.isalpha() or name != "Latn" else None
    return None


def detect_script(text: str, sample_chars: int = 20_000) -> str:
    """The ISO 15924 code of the script most letters of ``text`` use, or ``"Zyyy"`` if none.

    Japanese writes kanji (``Hani``) between its kana and Chinese writes no kana, so Han text
    with any kana is ``Kana``.

    Example:
        >>> detect_script("日本語のテキスト"), detect_script("中文文本"), detect_script("한국어")
        ('Kana', 'Hani', 'Hang')
    """
    counts = Counter(s for s in map(script_of, text[:sample_chars]) if s)
    if not counts:
        return "Zyyy"
    script = counts.most_common(1)[0][0]
    return "Kana" if script == "Hani" and counts["Kana"] else script


def script_candidates(script: str) -> tuple[str, ...]:
    """The ragkit language codes that write ``script``, the default first.

    Example:
        >>> script_candidates("Arab")[:4], script_candidates("Ethi")
        (('ar', 'fa', 'ur', 'ckb'), ('am', 'ti'))
    """
    if script == "Ethi":
        return _ETHIOPIC
    codes = (_LANGUAGE_ALIASES.get(code, code) for code in SCRIPT_LANGUAGES.get(script, ()))
    return tuple(dict.fromkeys(codes))


@functools.cache
def _identifier(labels: frozenset[str]) -> LanguageIdentifier:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages(sorted(labels))
    return identifier


def statistical_guess(text: str, candidates: Sequence[str]) -> tuple[str, float]:
    """py3langid's best language among ``candidates`` and its probability among them.

    Example:
        >>> statistical_guess("Der Hund schläft im Garten und die Katze auch", ("en", "de"))[0]
        'de'
    """
    labels = {
        label
        for script in SCRIPT_LANGUAGES.values()
        for label in script
        if _LANGUAGE_ALIASES.get(label, label) in candidates and label in _py3langid_labels()
    } | {code for code in candidates if code in _py3langid_labels()}
    if not labels:
        return candidates[0], 1.0 / len(candidates)
    best: dict[str, float] = {}
    for label, probability in _identifier(frozenset(labels)).rank(text):
        code = _LANGUAGE_ALIASES.get(label, label)
        best[code] = best.get(code, 0.0) + probability
    language = max(best, key=best.__getitem__)
    return language, best[language]


@functools.cache
def _py3langid_labels() -> frozenset[str]:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return frozenset(LanguageIdentifier.from_model_file(MODEL_FILE).nb_classes)


# Languages ragkit treats on their own besides what py3langid identifies.
_OWN_LANGUAGES = frozenset({"ar", "fa", "ur", "ckb", "ps", "sd", "ug", "am", "ti", "en"})


@functools.cache
def known_languages() -> frozenset[str]:
    """ISO 639 codes ragkit can analyze: its own languages, every script's candidates and
    every language py3langid identifies."""
    candidates = {code for codes in SCRIPT_LANGUAGES.values() for code in codes}
    return _OWN_LANGUAGES | candidates | _py3langid_labels()


def check_language(code: str, option: str = "--lang") -> str:
    """``code`` in lower case (``AR`` is ``ar``), or a :class:`RagkitError` for a language
    ragkit does not know (:func:`known_languages`); ``option`` names where it came from (a CLI
    option, a request field) in the message.

    Example:
        >>> check_language("ar"), check_language("CKB")
        ('ar', 'ckb')
        >>> check_language("xx")
        Traceback (most recent call last):
        ...
        ragkit.errors.RagkitError: --lang 'xx': not a language ragkit knows; use an ISO 639 code such as en, ar, fa, ur, ckb, am, ti
    """
    if code.strip().lower() not in known_languages():
        raise RagkitError(
            f"{option} {code!r}: not a language ragkit knows; use an ISO 639 code such as "
            "en, ar, fa, ur, ckb, am, ti"
        )
    return code.strip().lower()


def _ordered(allowed: Collection[str]) -> list[str]:
    return list(allowed) if isinstance(allowed, Sequence) else sorted(allowed)


def identify(
    text: str, allowed: Collection[str] | None = None, sample_chars: int = 4_000
) -> LanguageGuess:
    """The language of ``text``, decided script first (see the module text for the steps).

    With ``allowed`` the answer is always one of those languages, even for text in a script
    none of them writes (then the first allowed language, method ``default``, confidence 0).
    Without it, text without letters is ``und``.

    Example:
        >>> identify("FIND (Algorithm 65)", allowed={"en"})
        LanguageGuess(language='en', script='Latn', confidence=1.0, method='script')
        >>> identify("یہ کتاب ہے").language, identify("ئەمە کتێبە").method
        ('ur', 'letters')
        >>> identify("ሰላም", allowed=["ar"])
        LanguageGuess(language='ar', script='Ethi', confidence=0.0, method='default')
    """
    sample = text[:sample_chars]
    script = detect_script(sample)
    candidates = script_candidates(script)
    if allowed is not None:
        # In the caller's order when it gives one (a profile's, most frequent first).
        candidates = tuple(code for code in _ordered(allowed) if code in candidates)
        if not candidates:
            fallback = next(iter(_ordered(allowed)), "und")
            return LanguageGuess(fallback, script, 0.0, "default")
    if not candidates:
        return LanguageGuess("und", script, 0.0, "default")
    if len(candidates) == 1:
        return LanguageGuess(candidates[0], script, 1.0, "script")
    letters = sum(char.isalpha() for char in sample)
    if script == "Ethi":
        return _ethiopic(sample, script, candidates, letters)
    if script == "Arab":
        guess = _arabic_script(sample, candidates)
        if guess is not None:
            return guess
    threshold = STATISTICAL_MIN_LETTERS.get(script, STATISTICAL_MIN_LETTERS["Latn"])
    if threshold is not None and letters >= threshold:
        language, probability = statistical_guess(sample, candidates)
        return LanguageGuess(language, script, round(probability, 3), "statistical")
    return LanguageGuess(candidates[0], script, round(1.0 / len(candidates), 3), "default")


def _confidence(margin: float) -> float:
    """Evidence margin → confidence: one clear point ≈ 0.63, three ≈ 0.95."""
    return round(1.0 - math.exp(-margin), 3)


def _ethiopic(sample: str, script: str, candidates: tuple[str, ...], letters: int) -> LanguageGuess:
    tigrinya = sample.count(TIGRINYA_A) > sample.count(AMHARIC_A) or any(
        "\u1250" <= char <= "\u125d" for char in sample
    )
    language = "ti" if tigrinya else "am"
    if tigrinya or sample.count(AMHARIC_A):
        return LanguageGuess(language, script, 0.95, "letters")
    # No marker either way: Amharic, more sure the longer the text without a Tigrinya sign.
    return LanguageGuess("am", script, round(min(0.9, 0.5 + letters / 100), 3), "default")


def _arabic_script(sample: str, candidates: tuple[str, ...]) -> LanguageGuess | None:
    words, letters = evidence_parts(sample)
    totals = {code: words[code] + letters[code] for code in words}
    evidence = best_of(totals, candidates, words=False)
    if evidence.score <= 0:
        return None
    method: Method = (
        "words" if words[evidence.language] >= letters[evidence.language] else "letters"
    )
    return LanguageGuess(evidence.language, "Arab", _confidence(evidence.margin), method)


def detect_language(text: str, script: str | None = None, sample_chars: int = 4_000) -> str:
    """ISO 639 code of the language of ``text`` (``"und"`` when there are no letters).

    ``script`` restricts the answer to that script's languages (for a span whose script is
    known). See :func:`identify` for the confidence and the method.

    Example:
        >>> detect_language("ئەمە کتێبێکی باشە")
        'ckb'
        >>> detect_language("ኣብ ትግራይ ዝርከብ")
        'ti'
    """
    if script is not None and script != detect_script(text[:sample_chars]):
        allowed = script_candidates(script)
        if not allowed:
            return "und"
        return identify(text, allowed, sample_chars).language
    return identify(text, sample_chars=sample_chars).language


def detect_spans(text: str, min_letters: int = 3) -> list[Span]:
    """Split ``text`` into runs of one script (neutral characters join the run before them).

    Runs with fewer than ``min_letters`` letters merge into their left neighbour, so a stray
    foreign word does not split a sentence.
    """
    runs: list[list[int | str]] = []  # [start, end, script, letters]
    for index, char in enumerate(text):
        script = script_of(char)
        if script is None or (runs and runs[-1][2] == script):
            if runs:
                runs[-1][1] = index + 1
                runs[-1][3] = int(runs[-1][3]) + (script is not None)
            continue
        runs.append([index, index + 1, script, 1])
    merged: list[list[int | str]] = []
    for run in runs:
        if merged and (int(run[3]) < min_letters or merged[-1][2] == run[2]):
            merged[-1][1] = run[1]
        else:
            merged.append(run)
    if not merged:
        return [Span(0, len(text), "Zyyy", "und")] if text else []
    merged[0][0] = 0
    return [
        Span(int(s), int(e), str(script), detect_language(text[int(s) : int(e)], str(script)))
        for s, e, script, _ in merged
    ]
