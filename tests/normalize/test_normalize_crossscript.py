"""Arabic typed with Persian/Urdu/Kurdish letter forms gets the standard Arabic key, offsets kept."""

from __future__ import annotations

import unicodedata

import pytest

from ragkit.normalize import normalizer_for

AR = normalizer_for("ar")

# (standard Arabic, the same words as typed on a Persian / Urdu / Kurdish keyboard)
PAIRS = [
    ("كتاب", "کتاب"),
    ("في البيت", "فی البیت"),
    ("على", "علی"),
    ("مكتبة", "مکتبۃ"),
    ("قال الله", "قال اللہ"),
    ("هذه", "ھذہ"),
    ("مدرسه", "مدرسە"),  # Kurdish ae
    ("رسالة", "رسالۃ"),
    ("خانه", "خانۂ"),  # Urdu izafat heh: Arabic writes no hamza there
    ("١٢٣ كتاب", "۱۲۳ کتاب"),
    ("شيء سئل", "شیء سی\u0654ل"),
    ("سؤال", "سو\u0654ال"),
    ("أحمد", "ا\u0654حمد"),
    ("إسلام", "ا\u0655سلام"),
    ("كتاب.", "کتاب۔"),
]


@pytest.mark.parametrize(("standard", "typed"), PAIRS)
def test_keyboard_forms_fold_to_the_standard_key(standard, typed):
    assert AR(typed).text == AR(standard).text


@pytest.mark.parametrize(
    ("typed", "key", "offsets"),
    [
        ("فی البیت", "في البيت", [0, 1, 2, 3, 4, 5, 6, 7]),
        ("مکتبۃ الشیخ۔", "مكتبة الشيخ.", list(range(12))),
        # The composed hamza points at its seat; the mark it absorbed has no entry.
        ("سی\u0654ل", "سئل", [0, 1, 3]),
        ("سو\u0654ال", "سؤال", [0, 1, 3, 4]),
        # Harakat between seat and hamza are removed after composition.
        ("سيَ\u0654ل", "سئل", [0, 1, 4]),
        ("ۂ", "ه", [0]),
    ],
)
def test_offsets_point_at_the_original_letters(typed, key, offsets):
    out = AR(typed)
    assert out.text == key
    assert out.offsets.tolist() == offsets
    for index in range(len(out.text)):
        # Each normalized character points at a letter, never at a combining mark.
        assert not unicodedata.combining(typed[out.offsets[index]])


def test_original_spans_cover_each_word():
    typed = "قال النبی علیہ السلام"
    out = AR(typed)
    assert out.text == "قال النبي عليه السلام"
    for word in out.text.split():
        start = out.text.index(word)
        a, b = out.original_span(start, start + len(word))
        assert AR(typed[a:b]).text == word


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("fa", "کتاب‌های یکی"),
        ("ur", "یہ کتاب ہے اور وہ ھاتھ"),
        ("ckb", "ئەمە کتێبە"),
    ],
)
def test_persian_urdu_sorani_keep_their_letters(language, text):
    assert normalizer_for(language)(text).text == text


def test_persian_and_urdu_fold_arabic_letters_to_theirs_as_before():
    assert normalizer_for("fa")("كتاب علي").text == "کتاب علی"
    assert normalizer_for("ur")("گناه").text == "گناہ"
    assert normalizer_for("fa")("ہ").text == "ه"


@pytest.mark.parametrize("query", ["کتاب", "فی البیت", "الصلاۃ علی النبی", "ھذا"])
def test_short_queries_are_idempotent(query):
    once = AR(query)
    assert AR(once.text).text == once.text
