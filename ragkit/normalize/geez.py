"""Ge'ez-script (Ethiopic) homophone folding for Amharic (``am``) and Tigrinya (``ti``).

Ethiopic writes a consonant and its vowel as one syllable character. The Unicode block lays the
syllables out in rows of eight code points: cells 0–6 hold the seven vowel orders
(ä u i a e ə o) and cell 7 holds, for most rows, the labialized ``ʷa`` form (ሏ = lʷa). A few
consonants have a separate labialized row (ቈ ኈ ኰ ዀ ጐ ቘ) with ``ʷä ʷi ʷa ʷe ʷə`` in cells
0, 2, 3, 4, 5.

Several letters kept from Ge'ez spelling are pronounced alike in the modern languages, so one
word is written several ways (ሰላም/ሠላም, ጸሀይ/ፀሐይ). Folding them gives one spelling per word.
The classes differ by language:

* ``am``: ሀ ሐ ኀ → ሀ, ሰ ሠ → ሰ, አ ዐ → አ, ጸ ፀ → ጸ. In Amharic the vowel after h and ʔ is
  always ``a``, so ሀ/ሃ and አ/ኣ are homophones as well: the ``a`` order of the ሀ and አ rows
  folds to the first order (ዓለም → አለም). ኸ stays apart: it is the spirant /x/ of Tigrinya,
  Gurage and loanwords, and ``h`` only in older Amharic spellings. On the Amharic word list
  (the study ``experiments/normalize/geez``) folding it into ሀ joins real variants (ሆነ/ኾነ,
  -ሁ/-ኹ) but also distinct words (ዝሆን/ዝኾን, ህብር/ኽብር), so it is left out.
* ``ti``: ሀ ሐ ዐ አ ኸ are all distinct phonemes and stay; ሠ → ሰ, ፀ → ጸ, and ኀ → ሐ (Ge'ez ḫ
  became ḥ in Tigrinya: Ge'ez ኀይል, Tigrinya ሓይሊ).

Each variant row maps to its canonical row at the same vowel order. A labialized form maps to
the canonical class's form with the same order when it has one (Amharic ሗ → ኋ, the spelling
ኋላ uses); otherwise it is kept.

Mode ``homophones+labialized`` also spells labialized syllables out with plain ones, the way
they are commonly written: ``Cʷa``/``Cʷi``/``Cʷe`` → sixth-order C + ዋ/ዊ/ዌ (ቋንቋ → ቅዋንቅዋ,
ቃሏ → ቃልዋ); ``Cʷä`` → seventh order (ጐበዝ → ጎበዝ); ``Cʷə`` → second order (ቍጥር → ቁጥር). The
other common spelling, second-order C + ዋ/ዊ/ዌ (ጉዋደኛ), gets the same sixth-order form, so
ጓደኛ, ጉዋደኛ and ግዋደኛ share one key. The output holds no labialized or variant letter and no
second order before ዋ/ዊ/ዌ, so folding twice changes nothing.

Rows not listed (ሇ ኇ "oa" forms, the Ethiopic Supplement and Extended blocks) are kept, as are
punctuation (። ፣ ፡) and numerals. Tables are versioned by :data:`GEEZ_TABLE_VERSION`; an index
built with one version should be rebuilt when it changes.

Example:
    >>> GeezHomophones("am")("ፀሐይ ሠላም").text
    'ጸሀይ ሰላም'
    >>> GeezHomophones("ti")("ፀሐይ").text
    'ጸሐይ'
    >>> homophone_key("ዓለም") == homophone_key("አለም")
    True
"""

from __future__ import annotations

import re
from functools import cache

from ragkit.errors import RagkitError
from ragkit.normalize.base import CharMap, Normalized, RegexSub

GEEZ_TABLE_VERSION = "1"
"""Bump whenever a table below changes, so indexes built with the old one can be detected."""

LANGUAGES = ("am", "ti")
MODES = ("homophones", "homophones+labialized")

BLOCK_START, BLOCK_END = 0x1200, 0x1358  # syllables of the main Ethiopic block
ORDERS = ("ä", "u", "i", "a", "e", "ə", "o")
LABIALIZED_ORDERS = ("ʷä", "ʷi", "ʷa", "ʷe", "ʷə")

# Separate labialized rows → their plain row; cells 0, 2, 3, 4, 5 hold ʷä ʷi ʷa ʷe ʷə.
_LABIALIZED_ROWS = {
    0x1248: 0x1240,  # ቈ ← ቀ
    0x1258: 0x1250,  # ቘ ← ቐ
    0x1288: 0x1280,  # ኈ ← ኀ
    0x12B0: 0x12A8,  # ኰ ← ከ
    0x12C0: 0x12B8,  # ዀ ← ኸ
    0x1310: 0x1308,  # ጐ ← ገ
}
_LABIALIZED_CELLS = {0: "ʷä", 2: "ʷi", 3: "ʷa", 4: "ʷe", 5: "ʷə"}
# Plain rows whose cell 7 is ʷa. The others hold an "oa" form (ሇ ቇ ኇ ኯ ዏ ዯ ጏ ፇ), ኧ (used for
# the vowel ä in Amharic) or nothing.
_WA_CELL_ROWS = frozenset(
    (0x1208, 0x1210, 0x1218, 0x1220, 0x1228, 0x1230, 0x1238, 0x1260, 0x1268, 0x1270, 0x1278)
    + (0x1290, 0x1298, 0x12D8, 0x12E0, 0x12F0, 0x12F8, 0x1300, 0x1318, 0x1320, 0x1328, 0x1330)
    + (0x1338, 0x1348, 0x1350)
)
_WA_ROW = 0x12C8  # ወ ዉ ዊ ዋ ዌ ው ዎ

# Homophone classes as plain rows, preferred spelling first. For each vowel order the first
# row that has a cell at that order is canonical.
_CLASSES: dict[str, tuple[tuple[int, ...], ...]] = {
    "am": (
        (0x1200, 0x1280, 0x1210),  # ሀ ኀ ሐ  (ኀ before ሐ: its ኋ is the usual Amharic hʷa)
        (0x1230, 0x1220),  # ሰ ሠ
        (0x12A0, 0x12D0),  # አ ዐ
        (0x1338, 0x1340),  # ጸ ፀ
    ),
    "ti": (
        (0x1210, 0x1280),  # ሐ ኀ
        (0x1230, 0x1220),  # ሰ ሠ
        (0x1338, 0x1340),  # ጸ ፀ
    ),
}
# Rows whose a-order is pronounced like the first order (Amharic laryngeals after folding).
_A_FOLD_ROWS: dict[str, tuple[int, ...]] = {"am": (0x1200, 0x12A0), "ti": ()}


def syllable(char: str) -> tuple[int, str] | None:
    """``(plain row start, vowel order)`` of an Ethiopic syllable, or None for anything else.

    Labialized forms report the plain row they belong to and an order starting with ``ʷ``.

    Example:
        >>> syllable("ሏ") == (0x1208, "ʷa"), syllable("ጐ") == (0x1308, "ʷä"), syllable("a")
        (True, True, None)
    """
    if len(char) != 1 or not BLOCK_START <= ord(char) < BLOCK_END:
        return None
    start, cell = divmod(ord(char), 8)
    start *= 8
    if start in _LABIALIZED_ROWS:
        order = _LABIALIZED_CELLS.get(cell)
        return (_LABIALIZED_ROWS[start], order) if order else None
    if cell < 7:
        return start, ORDERS[cell]
    return (start, "ʷa") if start in _WA_CELL_ROWS else None


def _cells(row: int) -> dict[str, str]:
    """Every syllable of a plain row and its labialized forms, keyed by vowel order."""
    cells = {order: chr(row + i) for i, order in enumerate(ORDERS)}
    if row in _WA_CELL_ROWS:
        cells["ʷa"] = chr(row + 7)
    for lab_row, plain in _LABIALIZED_ROWS.items():
        if plain == row:
            cells.update({order: chr(lab_row + i) for i, order in _LABIALIZED_CELLS.items()})
    return cells


@cache
def _homophone_map(language: str) -> dict[str, str]:
    """Single-character homophone folding (classes, then the a-order fold)."""
    mapping: dict[str, str] = {}
    for rows in _CLASSES[language]:
        members = [_cells(row) for row in rows]
        for order in ORDERS + LABIALIZED_ORDERS:
            present = [cells[order] for cells in members if order in cells]
            mapping.update({char: present[0] for char in present[1:]})
    for row in _A_FOLD_ROWS[language]:
        folded = {chr(row + 3): chr(row)}
        mapping.update({char: folded.get(value, value) for char, value in mapping.items()})
        mapping.update(folded)
    return mapping


def _spell_out(char: str) -> str:
    """A labialized syllable written with plain ones (see the module docstring); else ``char``."""
    found = syllable(char)
    if found is None or not found[1].startswith("ʷ"):
        return char
    row, order = found
    if order == "ʷä":
        return chr(row + ORDERS.index("o"))
    if order == "ʷə":
        return chr(row + ORDERS.index("u"))
    return chr(row + ORDERS.index("ə")) + chr(_WA_ROW + ORDERS.index(order[1:]))


# Second-order syllables of every plain row before ዋ ዊ ዌ: "Cuwa" spellings of Cʷa (ጉዋደኛ,
# ተቀባዩዋ), folded to the sixth order like the spelled-out forms.
_U_ORDERS = "".join(
    chr(row + 1) for row in range(BLOCK_START, BLOCK_END, 8) if row not in _LABIALIZED_ROWS
)
_U_BEFORE_W = re.compile(f"[{_U_ORDERS}](?=[ዊዋዌ])")


def _sixth_order(match: re.Match[str]) -> str:
    return chr(ord(match.group()) + ORDERS.index("ə") - ORDERS.index("u"))


def _check(language: str, mode: str) -> None:
    if language not in LANGUAGES:
        raise RagkitError(
            f"Ge'ez homophone folding: unknown language {language!r}; "
            f"use one of {', '.join(LANGUAGES)}"
        )
    if mode not in MODES:
        raise RagkitError(
            f"Ge'ez homophone folding: unknown mode {mode!r}; use one of {', '.join(MODES)}"
        )


@cache
def _table(language: str, mode: str) -> tuple[tuple[str, str], ...]:
    fold = _homophone_map(language)
    entries = []
    for code in range(BLOCK_START, BLOCK_END):
        char = chr(code)
        out = fold.get(char, char)
        if mode == "homophones+labialized":
            out = "".join(fold.get(piece, piece) for piece in _spell_out(out))
        if out != char:
            entries.append((char, out))
    return tuple(entries)


def geez_table(language: str, mode: str = "homophones") -> dict[str, str]:
    """The folding table for ``language`` (``am``/``ti``) and ``mode``, as a fresh dict.

    Example:
        >>> table = geez_table("am")
        >>> table["ሠ"], table["ዓ"], "ሐ" in geez_table("ti")
        ('ሰ', 'አ', False)
        >>> geez_table("am", "homophones+labialized")["ቋ"]
        'ቅዋ'
    """
    _check(language, mode)
    return dict(_table(language, mode))


class GeezHomophones(CharMap):
    """Fold Ethiopic homophone letters (and optionally labialized forms) for one language.

    Offsets follow :class:`CharMap`: a syllable spelled out as two characters points both at
    its origin. In ``homophones+labialized`` mode a second-order syllable before ዋ/ዊ/ዌ is
    then rewritten to the sixth order in place (ጉዋ → ግዋ).

    Example:
        >>> out = GeezHomophones("am", "homophones+labialized")("ቋንቋ")
        >>> out.text, out.offsets.tolist()
        ('ቅዋንቅዋ', [0, 0, 1, 2, 2])
    """

    def __init__(self, language: str = "am", mode: str = "homophones") -> None:
        _check(language, mode)
        super().__init__(
            dict(_table(language, mode)),
            name=f"geez-{mode}-{language}-v{GEEZ_TABLE_VERSION}",
        )
        self.language = language
        self.mode = mode
        self.version = GEEZ_TABLE_VERSION
        self._spelled_out = (
            RegexSub(_U_BEFORE_W, _sixth_order, name="geez-cuwa")
            if mode == "homophones+labialized"
            else None
        )

    def apply(self, text: str) -> Normalized:
        folded = super().apply(text)
        if self._spelled_out is None:
            return folded
        return self._spelled_out(folded)


def homophone_key(word: str, language: str = "am", mode: str = "homophones") -> str:
    """A matching/dedup key: ``word`` with homophone letters folded (no offsets).

    Example:
        >>> homophone_key("ሠላም") == homophone_key("ሰላም") == "ሰላም"
        True
        >>> homophone_key("ጐበዝ", mode="homophones+labialized")
        'ጎበዝ'
        >>> {homophone_key(w, "am", "homophones+labialized") for w in ("ጓደኛ", "ጉዋደኛ")}
        {'ግዋደኛ'}
    """
    _check(language, mode)
    key = word.translate(_translation(language, mode))
    return _U_BEFORE_W.sub(_sixth_order, key) if mode == "homophones+labialized" else key


@cache
def _translation(language: str, mode: str) -> dict[int, str]:
    return {ord(char): out for char, out in _table(language, mode)}
