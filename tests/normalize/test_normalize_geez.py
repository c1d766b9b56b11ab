"""Ge'ez homophone folding: table layout, language differences, idempotence, offsets, errors."""

from __future__ import annotations

import random
import re
import unicodedata

import pytest

from ragkit.errors import RagkitError
from ragkit.normalize.base import CharMap
from ragkit.normalize.geez import (
    BLOCK_END,
    BLOCK_START,
    GEEZ_TABLE_VERSION,
    LANGUAGES,
    MODES,
    GeezHomophones,
    geez_table,
    homophone_key,
    syllable,
)
from ragkit.normalize.pipeline import Pipeline

CASES = [(language, mode) for language in LANGUAGES for mode in MODES]
# Unicode name endings, longest first. Eighth-cell forms are named "-WA" though they are ʷa.
NAME_ENDINGS = (
    ("WAA", "ʷa"), ("WEE", "ʷe"), ("WA", "ʷä"), ("WI", "ʷi"), ("WE", "ʷə"),
    ("AA", "a"), ("EE", "e"), ("A", "ä"), ("U", "u"), ("I", "i"), ("E", "ə"), ("O", "o"),
)  # fmt: skip


def _order_from_name(char: str) -> str:
    token = unicodedata.name(char).split()[-1]  # "ETHIOPIC SYLLABLE GLOTTAL A" -> "A"
    for ending, order in NAME_ENDINGS:
        if token.endswith(ending) and not (order.startswith("ʷ") and token == ending):
            if order == "ʷä" and ord(char) % 8 == 7:
                return "ʷa"
            return order
    raise AssertionError(token)


def test_syllable_orders_agree_with_unicode_names() -> None:
    checked = 0
    for code in range(BLOCK_START, BLOCK_END):
        char = chr(code)
        found = syllable(char)
        if found is None:
            continue
        row, order = found
        assert _order_from_name(char) == order, (char, unicodedata.name(char), order)
        assert unicodedata.name(chr(row)).startswith("ETHIOPIC SYLLABLE")
        checked += 1
    assert checked > 240
    assert syllable("ሇ") is None and syllable("ኧ") is None and syllable("።") is None
    assert syllable("ab") is None and syllable("") is None


@pytest.mark.parametrize("language", LANGUAGES)
def test_homophone_entries_keep_the_vowel_order(language: str) -> None:
    a_fold = {"ሃ": "ሀ", "ኣ": "አ", "ሓ": "ሀ", "ኃ": "ሀ", "ዓ": "አ"} if language == "am" else {}
    for char, out in geez_table(language).items():
        assert len(out) == 1, (char, out)
        if char in a_fold:
            assert out == a_fold[char]
            assert syllable(char)[1] == "a" and syllable(out)[1] == "ä"
            continue
        assert syllable(char)[1] == syllable(out)[1], (char, out)


def _rows(table: dict[str, str]) -> set[tuple[int, int]]:
    return {(syllable(k)[0], syllable(v)[0]) for k, v in table.items()}


def test_amharic_classes() -> None:
    rows = _rows(geez_table("am"))
    assert rows == {
        (0x1210, 0x1200),  # ሐ → ሀ
        (0x1280, 0x1200),  # ኀ → ሀ
        (0x1210, 0x1280),  # ሗ → ኋ (labialized hʷa is written with ኋ)
        (0x1200, 0x1200),  # ሃ → ሀ
        (0x1220, 0x1230),  # ሠ → ሰ
        (0x12D0, 0x12A0),  # ዐ → አ
        (0x12A0, 0x12A0),  # ኣ → አ
        (0x1340, 0x1338),  # ፀ → ጸ
    }
    table = geez_table("am")
    assert table["ሗ"] == "ኋ"
    for kept in "ኸኹኺኻኼኽኾሀአሰጸኋ":
        assert kept not in table


def test_tigrinya_keeps_pharyngeals_and_glottals_apart() -> None:
    table = geez_table("ti")
    for kept in "ሀሃሐሓዐዓአኣኸኻ":
        assert kept not in table
    assert homophone_key("ሐ", "ti") != homophone_key("ሀ", "ti")
    assert homophone_key("ዐ", "ti") != homophone_key("አ", "ti")
    assert table["ሠ"] == "ሰ" and table["ፀ"] == "ጸ" and table["ኀ"] == "ሐ" and table["ኋ"] == "ሗ"
    assert _rows(table) == {(0x1220, 0x1230), (0x1280, 0x1210), (0x1340, 0x1338)}


@pytest.mark.parametrize(
    ("variant", "standard"),
    [("ሠላም", "ሰላም"), ("ፀሐይ", "ጸሀይ"), ("ዓለም", "አለም"), ("ኃይል", "ሀይል"), ("ሥራ", "ስራ")],
)
def test_real_amharic_spellings_share_a_key(variant: str, standard: str) -> None:
    assert homophone_key(variant) == homophone_key(standard)
    assert GeezHomophones("am")(variant).text == homophone_key(standard)


@pytest.mark.parametrize(
    ("variant", "standard"),
    [("ጐበዝ", "ጎበዝ"), ("ቃሏ", "ቃልዋ"), ("ቍጥር", "ቁጥር"), ("ቋንቋ", "ቅዋንቅዋ"), ("ጓደኛ", "ጉዋደኛ")]
    + [("ጓደኛ", "ግዋደኛ"), ("ሟች", "ሙዋች"), ("ቬኔዙዌላ", "ቬኔዝዌላ"), ("ተቀባዩዋ", "ተቀባይዋ")],
)
def test_labialized_spellings_share_a_key(variant: str, standard: str) -> None:
    mode = "homophones+labialized"
    assert homophone_key(variant, mode=mode) == homophone_key(standard, mode=mode)
    assert homophone_key(variant) != homophone_key(standard)


@pytest.mark.parametrize(("language", "mode"), CASES)
def test_tables_are_idempotent(language: str, mode: str) -> None:
    table = geez_table(language, mode)
    for out in table.values():
        assert all(char not in table for char in out), out
    step = GeezHomophones(language, mode)
    rng = random.Random(7)
    alphabet = [chr(c) for c in range(BLOCK_START, 0x1380)] + list("ab ።\u200d😀")
    for _ in range(200):
        text = "".join(rng.choices(alphabet, k=rng.randint(0, 30)))
        once = step(text)
        assert step(once.text).text == once.text
        assert homophone_key(once.text, language, mode) == once.text
        assert len(once.offsets) == len(once.text)


def test_labialized_expansion_offsets_repeat_the_origin() -> None:
    step = GeezHomophones("am", "homophones+labialized")
    out = step("ሠ ቋ")
    assert out.text == "ሰ ቅዋ"
    assert out.offsets.tolist() == [0, 1, 2, 2]
    assert out.original_span(2, 4) == (2, 3)
    rewritten = step("ሡዋ")  # ሡ → ሱ, then ሱ before ዋ → ስ, in place
    assert rewritten.text == "ስዋ" and rewritten.offsets.tolist() == [0, 1]
    piped = Pipeline([CharMap({"x": ""}), step])("xሏx")
    assert piped.text == "ልዋ" and piped.offsets.tolist() == [1, 1]


def test_punctuation_digits_and_other_scripts_are_kept() -> None:
    text = "ሰላም። ሀገር፣ ፩፪ abc العربية 😀 \ud800"
    for language, mode in CASES:
        assert GeezHomophones(language, mode)(text).text == text


def test_step_metadata_and_fresh_tables() -> None:
    step = GeezHomophones("ti", "homophones+labialized")
    assert isinstance(step, CharMap)
    assert step.language == "ti" and step.mode == "homophones+labialized"
    assert GEEZ_TABLE_VERSION in step.name and "ti" in step.name
    table = geez_table("am")
    table["ሰ"] = "x"
    assert "ሰ" not in geez_table("am")


@pytest.mark.parametrize(
    ("language", "mode", "named"),
    [("amh", "homophones", "am, ti"), ("am", "labialized", "homophones, homophones+labialized")],
)
def test_unknown_language_or_mode(language: str, mode: str, named: str) -> None:
    for call in (
        lambda: GeezHomophones(language, mode),
        lambda: geez_table(language, mode),
        lambda: homophone_key("ሰ", language, mode),
    ):
        with pytest.raises(RagkitError, match=re.escape(named)):
            call()
