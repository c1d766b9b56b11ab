"""Arabic orthographic normalization: alif variants, alef maksura, teh marbuta, diacritics, digits.

Every option is named and each default is what retrieval wants: spelling variation that
writers use interchangeably is folded, distinctions that change the word are kept unless asked.

=================  =======  ==========================================================
option             default  effect
=================  =======  ==========================================================
``alif``           on       آ أ إ ٱ (U+0622, U+0623, U+0625, U+0671) → ا
``alef_maksura``   on       ى (U+0649) → ي: final yeh is written dotless in Egypt and
                            carelessly elsewhere, so both spellings occur for one word
``teh_marbuta``    off      ة (U+0629) → ه: merges real pairs (e.g. feminine ending vs
                            pronoun suffix), so only on when a corpus is known to mix them
``diacritics``     on       harakat and tanwin U+064B–U+0652, extended marks
                            U+0653–U+065F, honorific marks U+0610–U+061A, Quranic
                            marks U+06D6–U+06ED and Extended-A marks U+08D3–U+08FF
                            (open tanwin of Uthmani text) removed
``dagger_alef``    remove   U+0670 superscript alef: ``"remove"`` (a diacritic, as in
                            the plain spelling of most words: الرحمٰن → الرحمن) or
                            ``"alef"`` (written out: العٰلمين → العالمين)
``digits``         on       Arabic-Indic ٠–٩ and Eastern ۰–۹ → ASCII 0–9
``perso_arabic``   on       Arabic typed on a Persian, Urdu or Kurdish keyboard: ک ڪ → ك,
                            ی → ي (one yeh on those keyboards, final or not), ہ ھ ە → ه,
                            ۃ → ة, ۂ ۀ (heh + hamza, an ezafe mark Arabic does not write)
                            → ه, ۓ → ي, the Urdu full stop ۔ → ``.``. Only for ``ar``:
                            fa / ur / ckb keep their letters (their pipelines turn it off)
=================  =======  ==========================================================

A hamza written as a separate mark after its seat (ي + U+0654 instead of ئ, as some
keyboards and converters produce) is composed first (:class:`HamzaComposition`), so the
diacritics step does not strip it: decomposed and precomposed spellings get the same key.

Presentation forms (ﻻ ﷲ ﺃ) are folded by NFKC in :mod:`ragkit.normalize.unicode`, which the
language pipeline runs first; tatweel is removed there too.

Example:
    >>> ArabicOrthography()("إِنَّ ٱللَّهَ عَلَىٰ كُلِّ شَيۡءٖ قَدِيرٞ ١٢").text
    'ان الله علي كل شيء قدير 12'
    >>> ArabicOrthography()("مکتبۃ الشیخ۔ ۱۲").text
    'مكتبة الشيخ. 12'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ragkit.normalize.base import CharMap, RegexSub

ALIF_VARIANTS = "\u0622\u0623\u0625\u0671"
ALEF = "\u0627"
ALEF_MAKSURA = "\u0649"
YEH = "\u064a"
TEH_MARBUTA = "\u0629"
HEH = "\u0647"
DAGGER_ALEF = "\u0670"
HARAKAT = "".join(chr(c) for c in range(0x064B, 0x0653))
EXTENDED_MARKS = "".join(chr(c) for c in range(0x0653, 0x0660))
HONORIFIC_MARKS = "".join(chr(c) for c in range(0x0610, 0x061B))
QURANIC_MARKS = "".join(chr(c) for c in range(0x06D6, 0x06EE))
# Arabic Extended-A marks: Quranic annotation signs and the open tanwin (U+08F0–U+08F2) that
# Uthmani fonts use instead of U+064B–U+064D.
EXTENDED_A_MARKS = "".join(chr(c) for c in range(0x08D3, 0x0900))
ARABIC_INDIC_DIGITS = "٠١٢٣٤٥٦٧٨٩"
EASTERN_ARABIC_DIGITS = "۰۱۲۳۴۵۶۷۸۹"
# Letter forms of Persian / Urdu / Kurdish keyboards and the Arabic letter an Arabic writer
# means by them (ragkit.normalize.perso_arabic maps the other way for fa / ur / ckb).
PERSO_ARABIC_FORMS: dict[str, str] = {
    "\u06a9": "\u0643",  # ک KEHEH → ك
    "\u06aa": "\u0643",  # ڪ SWASH KAF → ك
    "\u06cc": YEH,  # ی FARSI YEH → ي (the only yeh on a Persian keyboard)
    "\u06d2": YEH,  # ے YEH BARREE → ي
    "\u06d3": YEH,  # ۓ YEH BARREE WITH HAMZA → ي
    "\u06c1": HEH,  # ہ HEH GOAL → ه
    "\u06be": HEH,  # ھ HEH DOACHASHMEE → ه
    "\u06d5": HEH,  # ە AE → ه
    "\u06c2": HEH,  # ۂ HEH GOAL WITH HAMZA ABOVE → ه
    "\u06c0": HEH,  # ۀ HEH WITH YEH ABOVE → ه
    "\u06c3": TEH_MARBUTA,  # ۃ TEH MARBUTA GOAL → ة
    "\u06d4": ".",  # ۔ ARABIC FULL STOP (Urdu) → .
}
HAMZA_ABOVE = "\u0654"
HAMZA_BELOW = "\u0655"
# Seat + combining hamza → the precomposed letter (NFC composes only some of these pairs, and
# the Persian yeh ی + hamza not at all).
_HAMZA_SEATS: dict[tuple[str, str], str] = {
    (YEH, HAMZA_ABOVE): "\u0626",
    ("\u06cc", HAMZA_ABOVE): "\u0626",
    (ALEF_MAKSURA, HAMZA_ABOVE): "\u0626",
    ("\u0648", HAMZA_ABOVE): "\u0624",
    (ALEF, HAMZA_ABOVE): "\u0623",
    (ALEF, HAMZA_BELOW): "\u0625",
    # Persian / Urdu ezafe and yeh forms (NFC composes these, but only after marks are gone).
    ("\u06c1", HAMZA_ABOVE): "\u06c2",  # ہ + hamza → ۂ
    ("\u06d5", HAMZA_ABOVE): "\u06c0",  # ە + hamza → ۀ
    ("\u06d2", HAMZA_ABOVE): "\u06d3",  # ے + hamza → ۓ
}


@dataclass(frozen=True)
class ArabicOptions:
    """Which Arabic foldings to apply (see the module table for defaults and reasons)."""

    alif: bool = True
    alef_maksura: bool = True
    teh_marbuta: bool = False
    diacritics: bool = True
    dagger_alef: Literal["remove", "alef"] = "remove"
    digits: bool = True
    perso_arabic: bool = True


def arabic_table(options: ArabicOptions = ArabicOptions()) -> dict[str, str]:
    """The character table for ``options``.

    Example:
        >>> arabic_table(ArabicOptions(teh_marbuta=True))["ة"]
        'ه'
    """
    table: dict[str, str] = {}
    if options.alif:
        table.update(dict.fromkeys(ALIF_VARIANTS, ALEF))
    if options.alef_maksura:
        table[ALEF_MAKSURA] = YEH
    if options.teh_marbuta:
        table[TEH_MARBUTA] = HEH
    if options.diacritics:
        marks = HARAKAT + EXTENDED_MARKS + HONORIFIC_MARKS + QURANIC_MARKS + EXTENDED_A_MARKS
        table.update(dict.fromkeys(marks, ""))
        table[DAGGER_ALEF] = "" if options.dagger_alef == "remove" else ALEF
    if options.digits:
        for digits in (ARABIC_INDIC_DIGITS, EASTERN_ARABIC_DIGITS):
            table.update({digit: str(value) for value, digit in enumerate(digits)})
    if options.perso_arabic:
        table.update(PERSO_ARABIC_FORMS)
    return table


class HamzaComposition(RegexSub):
    """Compose a seat letter and a following combining hamza into the precomposed letter.

    Harakat typed between the seat and the hamza stay, after the composed letter. The composed
    letter points at the seat, so offsets still cover the original characters.

    Example:
        >>> out = HamzaComposition()("شي\u0654")
        >>> out.text == "شئ", out.offsets.tolist()
        (True, [0, 1])
        >>> HamzaComposition()("سا\u0655لة").text
        'سإلة'
    """

    def __init__(self) -> None:
        seats = "".join(sorted({seat for seat, _ in _HAMZA_SEATS}))
        pattern = re.compile(f"([{seats}])([\u064b-\u0652]*)([{HAMZA_ABOVE}{HAMZA_BELOW}])")
        super().__init__(pattern, self._compose, name="hamza", triggers=HAMZA_ABOVE + HAMZA_BELOW)

    @staticmethod
    def _compose(match: re.Match[str]) -> str:
        key = (match.group(1), match.group(3))
        if key not in _HAMZA_SEATS:  # e.g. waw + hamza below: no such letter, leave it
            return match.group()
        return _HAMZA_SEATS[key] + match.group(2)


class ArabicOrthography(CharMap):
    """Arabic orthographic folding as one numpy-speed character map.

    Example:
        >>> ArabicOrthography(ArabicOptions(alef_maksura=False))("مُصْطَفَى").text
        'مصطفى'
    """

    def __init__(self, options: ArabicOptions = ArabicOptions()) -> None:
        super().__init__(arabic_table(options), name="arabic")
        self.options = options
