"""Perso-Arabic script normalization: one standard letter per confusable, per target language.

Persian (``fa``), Central Kurdish / Sorani (``ckb``) and Urdu (``ur``) share the Arabic script
but not its letters. Text in these languages is often typed on an Arabic (or a neighbouring
language's) keyboard, so the same word reaches an index with different code points that look
alike: Arabic yeh ``ي`` (U+064A) or alef maksura ``ى`` (U+0649) for Persian yeh ``ی`` (U+06CC),
Arabic kaf ``ك`` (U+0643) for keheh ``ک`` (U+06A9), and four heh-like letters whose roles differ
by language. :func:`perso_arabic_table` gives the single-character part of each language's
convention; :class:`PersoArabicScript` adds the few context rules (Sorani heh, ZWNJ) and keeps
offsets into the original text.

The tables only merge code points that the target orthography does not distinguish. Letters
the language needs are kept: Urdu ``ہ`` (goal heh) and ``ھ`` (do-chashmi heh) stay distinct,
Sorani ``ە`` (the vowel ae) stays distinct from the consonant ``ه``, and the Sorani letters
``ڕ ڵ ۆ ێ ۊ`` are never touched. Choosing between *words* (Sorani ``ر`` or ``ڕ``?) is the
learned corrector's job (:mod:`ragkit.normalize.orthography`), not a table's.

:class:`SpellingVariants` then gives the matching key one spelling per word where writers use
several for the same thing: the ezafe (دورۀ, دورهٔ, دوره‌ی → دوره; Urdu سورۂ → سورہ), Urdu ۓ
(→ ئے) and Urdu ة (→ ۃ).

Example:
    >>> PersoArabicScript("fa")("كتاب علي ٣").text
    'کتاب علی 3'
    >>> PersoArabicScript("ur")("ہاتھ").text
    'ہاتھ'
    >>> perso_arabic_table("ckb")["ي"]
    'ی'
"""

from __future__ import annotations

import re

from ragkit.errors import RagkitError
from ragkit.normalize.base import CharMap, Normalized, RegexSub, Step
from ragkit.normalize.pipeline import Pipeline

LANGUAGES = ("fa", "ckb", "ur")

ZWNJ = "\u200c"
TATWEEL = "\u0640"

ARABIC_INDIC_DIGITS = "٠١٢٣٤٥٦٧٨٩"  # U+0660..0669, used in Arabic and in Sorani print
EXTENDED_DIGITS = "۰۱۲۳۴۵۶۷۸۹"  # U+06F0..06F9, used in Persian and Urdu

# Letters that every target treats as the same letter as its own yeh / keheh. ``ي`` and ``ى``
# come from Arabic keyboards and Arabic encodings (Windows-1256 has no U+06CC); ``ڪ`` (swash
# kaf, Sindhi) appears in text converted from old fonts.
_YEH_KAF = {
    "\u064a": "\u06cc",  # ي ARABIC YEH → ی FARSI YEH
    "\u0649": "\u06cc",  # ى ALEF MAKSURA → ی (no final-only yeh in these orthographies)
    "\u0643": "\u06a9",  # ك ARABIC KAF → ک KEHEH
    "\u06aa": "\u06a9",  # ڪ SWASH KAF → ک
}

_TABLES: dict[str, dict[str, str]] = {
    # Persian: one heh (U+0647) and one yeh (U+06CC). The Urdu and Kurdish hehs are rendering
    # variants of it in Persian text, so they merge (hazm's normalizer does the same). Teh
    # marbuta ة is kept: Persian writes it in Arabic phrases (دائرة‌المعارف, حجةالاسلام) and
    # whether a loan ends in ه or ت is a lexical choice the corrector makes from a word list.
    # ۀ (heh with yeh above, the ezafe heh) is a Persian letter and is kept; its Urdu twin ۂ
    # maps to it.
    "fa": {
        **_YEH_KAF,
        "\u06be": "\u0647",  # ھ DO-CHASHMI HEH → ه
        "\u06c1": "\u0647",  # ہ GOAL HEH → ه
        "\u06d5": "\u0647",  # ە AE → ه
        "\u06c2": "\u06c0",  # ۂ GOAL HEH WITH HAMZA → ۀ
        "\u06c3": "\u0629",  # ۃ TEH MARBUTA GOAL → ة
        "\u06d2": "\u06cc",  # ے YEH BARREE (Urdu) → ی
        "\u06d3": "\u06cc",  # ۓ YEH BARREE WITH HAMZA → ی
    },
    # Sorani (klpt's conventions): ی and ێ are both letters, ە is the vowel /a/ and ه the
    # consonant /h/; ھ is written only where a final consonant h would otherwise look like ە
    # (see the context rules below). Teh marbuta of Arabic loans is read and written as ە.
    # ؤ is what a Persian keyboard gives for the Sorani o-letter ۆ (both look like a waw with
    # a mark above).
    "ckb": {
        **_YEH_KAF,
        "\u06d2": "\u06cc",  # ے YEH BARREE → ی
        "\u0629": "\u06d5",  # ة TEH MARBUTA → ە
        "\u06c0": "\u06d5",  # ۀ HEH WITH YEH ABOVE (Persian keyboard) → ە
        "\u06c1": "\u0647",  # ہ GOAL HEH (Urdu fonts) → ه
        "\u0624": "\u06c6",  # ؤ WAW WITH HAMZA → ۆ
    },
    # Urdu: ہ (goal heh, U+06C1) is the letter h and ھ (U+06BE) the aspiration mark of
    # bh/ph/th…; both are kept. Arabic ه is the Arabic-keyboard spelling of ہ (گناه → گناہ,
    # as other Urdu texts spell it). ے (bari yeh) is a letter of its own and is kept. Teh
    # marbuta ة is kept: Urdu prints it in quoted Arabic (السجدة, لاقوة), like Persian.
    "ur": {
        **_YEH_KAF,
        "\u0647": "\u06c1",  # ه ARABIC HEH → ہ GOAL HEH
        "\u06d5": "\u06c1",  # ە AE → ہ
        "\u06c0": "\u06c2",  # ۀ (Persian ezafe heh) → ۂ (Urdu izafat heh)
    },
}

# With ``digits=False`` each language still gets one digit set: its own.
_NATIVE_DIGITS = {"fa": EXTENDED_DIGITS, "ckb": ARABIC_INDIC_DIGITS, "ur": EXTENDED_DIGITS}

_LETTER = rf"[^\W\d_{TATWEEL}]"  # tatweel is category Lm, but no letter
# A ZWNJ after a diacritized letter (کتابِ‌ها) follows the mark, not the letter.
_MARKS = "\u064b-\u065f\u0670\u06d6-\u06ed"
_JOINING = rf"(?:{_LETTER}|[{_MARKS}])"
# Persian ZWNJ is orthographic between two letters (می‌شود, کتاب‌ها); anywhere else (next to a
# space, a digit, punctuation, the text edge) it has no effect and only breaks matching.
_STRAY_ZWNJ = re.compile(rf"{ZWNJ}+(?!{_JOINING})|(?<!{_LETTER})(?<![{_MARKS}]){ZWNJ}+")
_ZWNJ_RUN = re.compile(f"{ZWNJ}{{2,}}")
# Sorani typed on a Persian keyboard writes the vowel ە as heh + ZWNJ (so it does not join the
# next letter); ZWNJ has no other use in Sorani orthography.
_CKB_HEH_ZWNJ = re.compile(f"\u0647{ZWNJ}+")
_CKB_ZWNJ = re.compile(f"{ZWNJ}+")
# Sorani consonant h: ه inside a word, ھ at the end (klpt's rule); a tatweel after a final heh
# (هـ) is the old way of writing that final ھ.
_CKB_MEDIAL_DO_CHASHMI = re.compile(rf"\u06be(?={_LETTER})")
_CKB_HEH_TATWEEL = re.compile(rf"\u0647{TATWEEL}+(?!{_LETTER})")


# Spellings of one word that differ only in how the ezafe (izafat) or a letter form is written;
# the matching key keeps one (after the table, which has brought every letter to the language's
# own form). The ezafe is dropped: دوره, دورهٔ (its hamza a mark, removed), دورۀ and دوره‌ی are
# one word to a reader, and most text leaves the ezafe unwritten.
_VARIANTS: dict[str, dict[str, str]] = {
    "fa": {"\u06c0": "\u0647"},  # ۀ → ه (ۂ became ۀ in the table)
    "ur": {
        "\u06c2": "\u06c1",  # ۂ → ہ: سورۂ = سورہ (ۀ became ۂ in the table)
        "\u06d3": "\u0626\u06d2",  # ۓ → ئے: ہوۓ = ہوئے, the spelling Urdu text mostly uses
        "\u0629": "\u06c3",  # ة → ۃ: سورة = سورۃ (Urdu writes Arabic names with both)
    },
    "ckb": {},  # ۀ became ە in the table; Sorani writes its ezafe as a plain ی
}
# Pashto, Sindhi and Uyghur keep their own letters (ragkit.normalize.normalizer_for); only the
# letter another keyboard gives for one of theirs is folded to it. In Tesseract's word lists
# of these languages most words so spelled are listed in both spellings (Pashto 779 of 843,
# Sindhi 241 of 298, Uyghur 511 of 1,333). Ambiguous ones stay: Pashto ی / ي are two letters,
# and Uyghur ی or ه may stand for ي or ى, ھ or ە.
KEYBOARD_LETTERS: dict[str, dict[str, str]] = {
    # Arabic kaf ك and Persian gaf گ for the Pashto ک and ګ
    "ps": {"\u0643": "\u06a9", "\u06af": "\u06ab"},
    # Arabic kaf ك for the Sindhi ڪ (ک is kh), Persian/Urdu yeh ی and Urdu heh ہ for ي and ه
    "sd": {"\u0643": "\u06aa", "\u06cc": "\u064a", "\u06c1": "\u0647"},
    # Persian keheh ک for the Uyghur ك
    "ug": {"\u06a9": "\u0643"},
}
# Persian ezafe written as a yeh after ZWNJ (دوره‌ی) at the end of a word; ه‌ای (an indefinite
# or relational suffix: هسته‌ای) is another word and stays.
_FA_EZAFE_YEH = re.compile(rf"(?<=\u0647){ZWNJ}\u06cc(?!{_JOINING})")


def _check_language(language: str) -> str:
    if language not in _TABLES:
        raise RagkitError(
            f"Perso-Arabic normalization: unknown language {language!r}; "
            f"choose one of {', '.join(LANGUAGES)}"
        )
    return language


def perso_arabic_table(language: str, digits: bool = True) -> dict[str, str]:
    """Single-character replacements for ``language`` (``"fa"``, ``"ckb"`` or ``"ur"``).

    ``digits=True`` maps both Arabic-Indic digit sets to ASCII (best for matching); with
    ``digits=False`` the other set maps to the language's own digits.

    Example:
        >>> table = perso_arabic_table("fa")
        >>> table["ك"], table["ي"], table["۵"]
        ('ک', 'ی', '5')
        >>> "ہ" in perso_arabic_table("ur"), "ە" in perso_arabic_table("ckb")
        (False, False)
        >>> perso_arabic_table("fa", digits=False)["٤"]
        '۴'
    """
    table = dict(_TABLES[_check_language(language)])
    if digits:
        for digit_set in (ARABIC_INDIC_DIGITS, EXTENDED_DIGITS):
            table.update({char: str(value) for value, char in enumerate(digit_set)})
    else:
        native = _NATIVE_DIGITS[language]
        other = EXTENDED_DIGITS if native == ARABIC_INDIC_DIGITS else ARABIC_INDIC_DIGITS
        table.update(dict(zip(other, native, strict=True)))
    return table


def _context_steps(language: str) -> list[Step]:
    """The rules a character table cannot express, in the order they must run."""
    if language == "fa":
        return [
            RegexSub(_ZWNJ_RUN, ZWNJ, name="fa-zwnj-run"),
            RegexSub(_STRAY_ZWNJ, "", name="fa-stray-zwnj"),
        ]
    if language == "ckb":
        return [
            RegexSub(_CKB_HEH_ZWNJ, "\u06d5", name="ckb-heh-zwnj"),
            RegexSub(_CKB_ZWNJ, "", name="ckb-zwnj"),
            RegexSub(_CKB_HEH_TATWEEL, "\u06be", name="ckb-final-heh"),
            RegexSub(_CKB_MEDIAL_DO_CHASHMI, "\u0647", name="ckb-medial-heh"),
        ]
    # Urdu uses ZWNJ sparingly (abbreviations, some compounds); only runs collapse.
    return [RegexSub(_ZWNJ_RUN, ZWNJ, name="ur-zwnj-run")]


class PersoArabicScript(Step):
    """Normalize Perso-Arabic letters, digits and ZWNJ to ``language``'s standard.

    Idempotent, never raises on text, and offsets point into the original text (a ``ه‌`` pair
    that becomes Sorani ``ە`` points at the heh).

    Example:
        >>> step = PersoArabicScript("ckb")
        >>> step.name
        'perso-arabic-ckb'
        >>> out = step("ره‌زبه‌ر")
        >>> out.text, out.offsets.tolist()
        ('رەزبەر', [0, 1, 3, 4, 5, 7])
        >>> PersoArabicScript("fa")("‌می‌شود‌ ۱۲").text == "می‌شود 12"
        True
        >>> PersoArabicScript("fa", digits=False)("٤").text
        '۴'
    """

    def __init__(self, language: str, digits: bool = True) -> None:
        self.language = _check_language(language)
        self.digits = digits
        self.name = f"perso-arabic-{language}"
        table = CharMap(perso_arabic_table(language, digits), name=f"{self.name}-letters")
        self._pipeline = Pipeline([table, *_context_steps(language)], name=self.name)

    def apply(self, text: str) -> Normalized:
        return self._pipeline.apply(text)

    def __repr__(self) -> str:
        return f"PersoArabicScript({self.language!r}, digits={self.digits})"


class SpellingVariants(Pipeline):
    """One matching key for the ezafe and letter-form spellings ``language`` writes alike.

    Runs after :class:`PersoArabicScript` (whose letters it expects) and the diacritics step.

    Example:
        >>> [SpellingVariants("fa")(word).text for word in ("دورۀ", "دوره\u200cی", "هسته\u200cای")]
        ['دوره', 'دوره', 'هسته\u200cای']
        >>> SpellingVariants("ur")("ہوۓ سورۂ سورة").text
        'ہوئے سورہ سورۃ'
    """

    def __init__(self, language: str) -> None:
        name = f"variants-{_check_language(language)}"
        steps: list[Step] = [CharMap(_VARIANTS[language], name=name)]
        if language == "fa":
            steps.append(RegexSub(_FA_EZAFE_YEH, "", name="fa-ezafe-yeh"))
        super().__init__(steps, name=name)
