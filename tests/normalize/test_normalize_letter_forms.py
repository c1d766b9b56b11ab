"""Persian / Urdu / Kurdish letter forms: one key per word, whichever way its ezafe is written."""

from __future__ import annotations

import pytest

from ragkit.errors import RagkitError
from ragkit.normalize import normalizer_for

FA, UR, CKB = normalizer_for("fa"), normalizer_for("ur"), normalizer_for("ckb")
HAMZA = "\u0654"
ZWNJ = "\u200c"

# Persian words ending in heh that take the ezafe (hazm's counts put all of them in its top 20k).
PERSIAN_HEH_WORDS = [
    "خانه", "دوره", "نامه", "مدرسه", "همه", "کوچه", "میوه", "بچه", "پرده", "جامعه",
    "شیشه", "درباره", "زمینه", "برنامه", "نتیجه", "مقاله", "چهره", "هفته", "سایه", "نقشه",
]  # fmt: skip
# Urdu words written with the izafat heh in the kaeshur-quran translations (both ۂ and ہ + ٔ).
URDU_HEH_WORDS = ["سورہ", "غزوہ", "بندہ", "سلسلہ", "زمانہ", "سجدہ", "فلسفہ", "زوجہ", "صدقہ", "چہرہ"]
# Urdu words with ئے that old fonts and converters write with ۓ (ہوۓ, گۓ, لاۓ in the same text).
URDU_YEH_WORDS = ["ہوئے", "گئے", "لائے", "جائے", "آئے", "رائے", "کرائے", "علمائے"]


def persian_ezafe_spellings(word: str) -> list[str]:
    stem = word[:-1]
    return [
        word,
        word + HAMZA,  # hazm's and most keyboards' spelling: heh + combining hamza
        stem + "\u06c0",  # precomposed ۀ
        stem + "\u06d5" + HAMZA,  # ae + hamza (composes to ۀ)
        stem + "\u06c2",  # the Urdu izafat heh
        word + ZWNJ + "ی",  # ezafe as a yeh after ZWNJ
        word + ZWNJ + "ي",  # the same typed on an Arabic keyboard
    ]


@pytest.mark.parametrize("word", PERSIAN_HEH_WORDS)
def test_persian_ezafe_spellings_share_one_key(word):
    keys = {FA(spelling).text for spelling in persian_ezafe_spellings(word)}
    assert keys == {word}
    assert FA(f"{word} کتاب").text == FA(f"{word}{HAMZA} کتاب").text == f"{word} کتاب"


@pytest.mark.parametrize("word", URDU_HEH_WORDS)
def test_urdu_izafat_spellings_share_one_key(word):
    stem = word[:-1]
    spellings = [word, word + HAMZA, stem + "\u06c2", stem + "\u06c0", stem + "ه" + HAMZA]
    assert {UR(spelling).text for spelling in spellings} == {word}


@pytest.mark.parametrize("word", URDU_YEH_WORDS)
def test_urdu_yeh_barree_with_hamza_is_written_out(word):
    typed = word.replace("ئے", "\u06d3")
    decomposed = word.replace("ئے", "\u06d2" + HAMZA)
    assert UR(typed).text == UR(decomposed).text == word


def test_urdu_teh_marbuta_forms_share_one_key():
    assert UR("سورة البقرة").text == UR("سورۃ البقرۃ").text == "سورۃ البقرۃ"


def test_sorani_ezafe_heh_and_hamza_forms():
    assert CKB("\u06c0").text == CKB("\u06d5" + HAMZA).text == "\u06d5"
    assert CKB("و" + HAMZA).text == CKB("ؤ").text == "ۆ"


@pytest.mark.parametrize(
    ("pipeline", "decomposed", "composed"),
    [(FA, "مسی" + HAMZA + "له", "مسئله"), (FA, "را" + HAMZA + "ی", "رأی"), (UR, "ی" + HAMZA, "ئ")],
)
def test_decomposed_hamza_gets_the_precomposed_key(pipeline, decomposed, composed):
    assert pipeline(decomposed).text == pipeline(composed).text == composed


@pytest.mark.parametrize(
    ("pipeline", "words"),
    [
        (FA, "کتاب یکی می\u200cشود کوچک ایران هسته\u200cای خانه\u200cها راهی"),
        (UR, "یہ کتاب ہے اور وہ ہاتھ بھائی کے لیے گئی"),
        (CKB, "ئەمە کتێبە ڕۆژ بەڵام هەر"),
    ],
)
def test_own_letters_stay_distinct_from_arabic(pipeline, words):
    assert pipeline(words).text == words


def test_offsets_point_at_the_heh():
    out = FA("دوره\u200cی خوب")
    assert out.text == "دوره خوب"
    assert out.offsets.tolist() == [0, 1, 2, 3, 6, 7, 8, 9]
    out = UR("ہوۓ")
    assert out.text == "ہوئے" and out.offsets.tolist() == [0, 1, 2, 2]


@pytest.mark.slow
def test_every_hazm_word_keeps_one_key_per_ezafe_spelling():
    from ragkit.normalize.lexicons import PACKAGES, package_dir, persian_words

    try:
        words = persian_words(package_dir(PACKAGES["fa"], download=False))
    except RagkitError as error:
        pytest.skip(f"hazm word list not available: {error}")
    arabic_only = set("يكى")
    for word in words:
        key = FA(word).text
        assert arabic_only.isdisjoint(key), word
        if word.endswith("ه") and " " not in word:
            assert {FA(s).text for s in persian_ezafe_spellings(word)} == {key}, word
