"""Per-language normalization pipelines, and where they apply (pre-index or post-inference).

``normalizer_for(language)`` returns the :class:`~ragkit.normalize.pipeline.Pipeline` ragkit uses
for a language; ``normalize(text)`` detects the language and applies it. Every pipeline starts
with Unicode hygiene (:mod:`.unicode`) and adds the language's own folding:

========  ===============================================================================
language  steps after hygiene
========  ===============================================================================
ar        Quranic (Uthmani) spelling rewritten to standard where a line carries Quranic
          marks (:mod:`.uthmani`); Arabic orthography (:mod:`.arabic`): alif variants, alef
          maksura, diacritics, Quranic marks, Arabic-Indic digits; Persian/Urdu letter
          forms and decomposed hamza folded to the standard Arabic letter
fa ckb ur Perso-Arabic letters for the language (:mod:`.perso_arabic`), then diacritics
          and digits (alif variants kept: Persian آ is its own letter), then one key for
          each word's ezafe and letter-form spellings (دورۀ دورهٔ دوره‌ی → دوره)
ps sd ug  diacritics, tatweel and digits; every letter kept (Pashto and Sindhi آ, Sindhi
          ڪ and ک, Uyghur ى and ي are letters of their own), a separately typed hamza
          composed with its letter, and the letter another keyboard gives for one of
          theirs folded to it (:data:`.perso_arabic.KEYBOARD_LETTERS`: Pashto ك گ → ک ګ,
          Sindhi ك ی ہ → ڪ ي ه, Uyghur ک → ك)
am ti     Ge'ez homophones (:mod:`.geez`), per-language tables
en        nothing more by default; social-media lexical normalization (:mod:`.lexical`)
          when ``lexical=True``
other     hygiene only (NFKC for Latin/Arabic script, NFC otherwise)
========  ===============================================================================

Where it applies (:data:`NormalizationMode`): ``post-inference`` (the default) stores and
embeds the original text and uses the normalized text only as a *matching key* (sparse
terms, dedup keys, query matching); ``pre-index`` also embeds the normalized text;
``off`` disables it. Offsets always point into the original text.

Example:
    >>> normalize("أَهْلًا بِكُمْ", language="ar").text
    'اهلا بكم'
    >>> normalizer_for("am")("ሠላም").text
    'ሰላም'
"""

from __future__ import annotations

import functools
from typing import Literal

import numpy as np

from ragkit.normalize.arabic import ArabicOptions, ArabicOrthography, HamzaComposition
from ragkit.normalize.base import CharMap, Normalized, RegexSub, Step
from ragkit.normalize.detect import detect_language, detect_script, detect_spans
from ragkit.normalize.geez import GeezHomophones
from ragkit.normalize.perso_arabic import KEYBOARD_LETTERS, PersoArabicScript, SpellingVariants
from ragkit.normalize.pipeline import Pipeline
from ragkit.normalize.unicode import (
    TATWEEL,
    ZWNJ_LANGUAGES,
    InvisibleCharacters,
    SpaceCharacters,
    UnicodeForm,
    Whitespace,
    unicode_form_for,
)
from ragkit.normalize.uthmani import ORTHOGRAPHIES, Orthography, UthmaniSpelling

NormalizationMode = Literal["post-inference", "pre-index", "off"]
GeezMode = Literal["homophones", "homophones+labialized"]
NORMALIZATION_MODES: tuple[str, ...] = ("post-inference", "pre-index", "off")
GEEZ_MODES: tuple[str, ...] = ("homophones", "homophones+labialized")

LANGUAGE_SCRIPT: dict[str, str] = {
    "ar": "Arab", "fa": "Arab", "ckb": "Arab", "ur": "Arab", "ps": "Arab", "sd": "Arab",
    "ug": "Arab",
    "am": "Ethi", "ti": "Ethi",
    "ru": "Cyrl", "uk": "Cyrl", "bg": "Cyrl", "el": "Grek", "he": "Hebr", "hi": "Deva",
    "zh": "Hani", "ja": "Kana",
}  # fmt: skip
# Characters that get a byte of their own in a pipeline's translation table, next to ASCII: a
# text written in them alone takes bytes.translate (speed only; any other text is exact too).
ALPHABETS: dict[str, str] = {
    "Arab": "".join(map(chr, range(0x060C, 0x0671)))
    + "پچژکگیہھےۃ۔۰۱۲۳۴۵۶۷۸۹\u00a0\u200b\u200c\u200d\u200e\u200f«»–—‘’“”…",
    "Latn": "".join(map(chr, range(0x00A0, 0x0100))) + "\u200b\u200c\u200d\u200e\u200f–—‘’“”…€",
}
PERSO_ARABIC_LANGUAGES = frozenset({"fa", "ckb", "ur"})
GEEZ_LANGUAGES = frozenset({"am", "ti"})
# Arabic-script languages other than Arabic keep alif variants (Persian, Pashto and Sindhi آ)
# and their own yeh and kaf letters; only marks, tatweel and digits are folded.
_OWN_LETTERS = ArabicOptions(alif=False, alef_maksura=False, perso_arabic=False)


@functools.cache
def normalizer_for(
    language: str,
    *,
    arabic: ArabicOptions = ArabicOptions(),
    geez_mode: GeezMode = "homophones",
    lexical: bool = False,
    orthography: Orthography = "auto",
) -> Pipeline:
    """The normalization pipeline for ``language`` (ISO 639 code; unknown codes get hygiene).

    ``orthography`` decides where Arabic text in Quranic (Uthmani) spelling is rewritten to
    standard spelling (:mod:`.uthmani`): ``"auto"`` (lines with Quranic marks), ``"uthmani"``
    (all text) or ``"standard"`` (never).

    Example:
        >>> normalizer_for("fa")
        Pipeline('fa', steps=['invisible', 'spaces', 'hamza', 'arabic', 'nfkc', 'perso-arabic-fa', 'tatweel', 'arabic', 'variants-fa', 'whitespace'])
    """
    script = LANGUAGE_SCRIPT.get(language, "Latn")
    steps: list[Step] = [
        InvisibleCharacters(keep_zwnj=language in ZWNJ_LANGUAGES),
        SpaceCharacters(),  # before NFKC, which would otherwise see every NBSP
    ]
    options = _OWN_LETTERS
    if language == "ar":
        # Arabic typed on a Persian / Urdu keyboard (ک ی ہ ۃ, decomposed hamza) gets the
        # standard Arabic key.
        options = arabic
        steps += [UthmaniSpelling(orthography), HamzaComposition()]
    elif script == "Arab":
        steps.append(HamzaComposition())  # یٔ ۓ ۂ: the hamza is part of the letter
    if script == "Arab":
        # Folding before NFKC too: undiacritized text is usually already NFKC, which lets the
        # form check take its fast path; the second pass catches what NFKC decomposes.
        steps.append(ArabicOrthography(options))
    steps.append(UnicodeForm(unicode_form_for(script)))
    if language in PERSO_ARABIC_LANGUAGES:
        steps.append(PersoArabicScript(language))
    if language in KEYBOARD_LETTERS:
        steps.append(CharMap(KEYBOARD_LETTERS[language], name=f"letters-{language}"))
    if script == "Arab":
        steps += [CharMap({TATWEEL: ""}, name="tatweel"), ArabicOrthography(options)]
    if language in PERSO_ARABIC_LANGUAGES:
        steps.append(SpellingVariants(language))
    if language in GEEZ_LANGUAGES:
        steps.append(GeezHomophones(language, geez_mode))
    if lexical and language == "en":
        from ragkit.normalize.lexical import LexicalNormalization

        steps.append(LexicalNormalization(language="en"))
    steps.append(Whitespace())
    return Pipeline(steps, name=language, alphabet=ALPHABETS.get(script, ""))


def normalize(
    text: str,
    language: str | None = None,
    *,
    geez_mode: GeezMode = "homophones",
    lexical: bool = False,
    orthography: Orthography = "auto",
) -> Normalized:
    """Normalize ``text`` with its language's pipeline (detected when ``language`` is None).

    Example:
        >>> normalize("ٱلصَّلَوٰةَ", language="ar").text, normalize("الصلاة", language="ar").text
        ('الصلاة', 'الصلاة')
    """
    language = language or detect_language(text)
    pipeline = normalizer_for(
        language, geez_mode=geez_mode, lexical=lexical, orthography=orthography
    )
    return pipeline(text)


def normalize_document(
    text: str,
    language: str | None = None,
    *,
    geez_mode: GeezMode = "homophones",
    lexical: bool = False,
    orthography: Orthography = "auto",
) -> Normalized:
    """Normalize mixed-script text span by span, each span with its own language's pipeline.

    Spans in the script of ``language`` use it (the document-level guess is more reliable
    than a short span's); spans in other scripts use their detected language.

    Example:
        >>> out = normalize_document("Price: ٣٠ دينارًا, ሠላም", "en")
        >>> out.text
        'Price: 30 دينارا, ሰላም'
        >>> out.original_span(7, 9)
        (7, 9)
    """
    pipeline_for = functools.partial(
        normalizer_for, geez_mode=geez_mode, lexical=lexical, orthography=orthography
    )
    spans = detect_spans(text)
    if len(spans) <= 1:
        return pipeline_for(language or (spans[0].language if spans else "und"))(text)
    main_script = LANGUAGE_SCRIPT.get(language, "Latn") if language else None
    parts: list[str] = []
    offsets: list[np.ndarray] = []
    for span in spans:
        span_language = language if language and span.script == main_script else span.language
        piece = pipeline_for(span_language)(text[span.start : span.end])
        parts.append(piece.text)
        offsets.append(piece.offsets + span.start)
    return Normalized("".join(parts), np.concatenate(offsets), len(text))


__all__ = [
    "GEEZ_MODES",
    "NORMALIZATION_MODES",
    "ORTHOGRAPHIES",
    "ArabicOptions",
    "GeezMode",
    "NormalizationMode",
    "Normalized",
    "Orthography",
    "Pipeline",
    "RegexSub",
    "Step",
    "detect_language",
    "detect_script",
    "detect_spans",
    "normalize",
    "normalize_document",
    "normalizer_for",
]
