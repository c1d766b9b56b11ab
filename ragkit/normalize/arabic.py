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
=================  =======  ==========================================================

Presentation forms (ﻻ ﷲ ﺃ) are folded by NFKC in :mod:`ragkit.normalize.unicode`, which the
language pipeline runs first; tatweel is removed there too.

Example:
    >>> ArabicOrthography()("إِنَّ ٱللَّهَ عَلَىٰ كُلِّ شَيۡءٖ قَدِيرٞ ١٢").text
    'ان الله علي كل شيء قدير 12'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ragkit.normalize.base import CharMap

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


@dataclass(frozen=True)
class ArabicOptions:
    """Which Arabic foldings to apply (see the module table for defaults and reasons)."""

    alif: bool = True
    alef_maksura: bool = True
    teh_marbuta: bool = False
    diacritics: bool = True
    dagger_alef: Literal["remove", "alef"] = "remove"
    digits: bool = True


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
    return table


class ArabicOrthography(CharMap):
    """Arabic orthographic folding as one numpy-speed character map.

    Example:
        >>> ArabicOrthography(ArabicOptions(alef_maksura=False))("مُصْطَفَى").text
        'مصطفى'
    """

    def __init__(self, options: ArabicOptions = ArabicOptions()) -> None:
        super().__init__(arabic_table(options), name="arabic")
        self.options = options
