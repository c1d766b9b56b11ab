"""Quranic (Uthmani) spelling to standard: the issue's cases, detection, MSA left alone."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ragkit.cli import app
from ragkit.config import Settings
from ragkit.normalize import normalize, normalizer_for
from ragkit.normalize.uthmani import UthmaniSpelling, is_uthmani

AR = normalizer_for("ar")
UTHMANI = normalizer_for("ar", orthography="uthmani")
STANDARD = normalizer_for("ar", orthography="standard")

# (Uthmani as printed, standard spelling): KFGQPC Hafs encoding unless marked Tanzil.
CASES = [
    ("ٱلۡعَٰلَمِينَ", "العالمين"),  # dagger alef written out
    ("ٱلصَّلَوٰةَ", "الصلاة"),  # waw seat of the dagger alef
    ("فَسَوَّىٰهُنَّ", "فسواهن"),  # medial alef maksura + dagger
    ("ءَامَنُواْ", "آمنوا"),  # madda written ءا
    ("ٱلۡقُرۡءَانَ", "القرآن"),
    ("شَيۡـًٔا", "شيئا"),  # seatless hamza
    ("تَسۡـَٔلُواْ", "تسألوا"),
    ("يَسۡتَهۡزِءُونَ", "يستهزئون"),  # hamza on the line, seated by its vowels
    ("إِسۡرَٰٓءِيلَ", "إسرائيل"),
    ("ءَايَٰتِهِۦ", "آياته"),  # small yeh lengthening the pronoun
    ("لَهُۥ", "له"),  # small waw lengthening the pronoun
    ("ٱلنَّبِيِّـۧنَ", "النبيين"),  # small high yeh written out
    ("ٱلَّيۡلِ", "الليل"),
    ("هَٰذَا", "هذا"),  # words standard spelling writes without the alef too
    ("ذَٰلِكَ", "ذلك"),
    ("ٱلرَّحۡمَٰنِ", "الرحمن"),
    ("أُو۟لَـٰٓئِكَ", "أولئك"),  # Tanzil: silent-letter zero U+06DF, dagger on tatweel
    ("ٱلْعَـٰلَمِينَ", "العالمين"),  # Tanzil
    ("شَيْـًۭٔا", "شيئا"),  # Tanzil: U+06ED between tatweel and hamza
]


@pytest.mark.parametrize(("uthmani", "standard"), CASES)
def test_uthmani_spelling_gets_the_standard_key(uthmani, standard):
    assert UTHMANI(uthmani).text == AR(standard).text
    if is_uthmani(uthmani):  # a word with a Quranic mark is converted in auto mode too
        assert AR(uthmani).text == AR(standard).text


def test_a_verse_is_detected_and_converted():
    verse = "ٱلۡحَمۡدُ لِلَّهِ رَبِّ ٱلۡعَٰلَمِينَ ٱلرَّحۡمَٰنِ ٱلرَّحِيمِ"
    assert is_uthmani(verse)
    assert AR(verse).text == "الحمد لله رب العالمين الرحمن الرحيم"


MSA = [
    "يفتح حوار منظّم الماكروهات، حيث يمكنك إضافة أو تحرير أو حذف",
    "أَعلِمني عندما تتوفر نسخة جديدة من البرنامج.",
    "هٰذا الكتاب مفيد، وذٰلك لأن الكاتب عالِمٌ بالموضوع.",
    "سأل الطالب عن المسألة، ثم قرأ الجزء الأول من الكتاب.",
]


@pytest.mark.parametrize("sentence", MSA)
def test_msa_is_never_converted_in_auto_mode(sentence):
    assert not is_uthmani(sentence)
    assert UthmaniSpelling("auto")(sentence).text == sentence
    assert AR(sentence).text == STANDARD(sentence).text


@pytest.mark.parametrize(
    ("msa", "key"), [("هٰذا", "هذا"), ("ذٰلك", "ذلك"), ("لٰكن", "لكن"), ("إلٰه", "اله")]
)
def test_msa_dagger_alef_gives_the_same_key_in_every_mode(msa, key):
    assert {AR(msa).text, UTHMANI(msa).text, STANDARD(msa).text} == {key}


@pytest.mark.parametrize("word", ["جزءًا", "بدءًا", "فجاءا", "ء", "شيء", "سماء", "قرأ"])
def test_forced_conversion_keeps_standard_hamza_spellings(word):
    assert UTHMANI(word).text == STANDARD(word).text


def test_auto_decides_line_by_line():
    text = "قال تعالى:\nٱلۡعَٰلَمِينَ ٱلصَّلَوٰةَ\nوهٰذا الكلام"
    assert AR(text).text == "قال تعالي:\nالعالمين الصلاة\nوهذا الكلام"


def test_standard_turns_the_conversion_off():
    assert STANDARD("ٱلصَّلَوٰةَ").text == "الصلوة"
    assert normalize("ٱلصَّلَوٰةَ", "ar", orthography="standard").text == "الصلوة"


def test_offsets_point_at_the_uthmani_letters():
    text = "ٱلصَّلَوٰةَ"
    out = AR(text)
    assert out.text == "الصلاة"
    assert out.offsets.tolist() == [0, 1, 2, 5, 8, 9]  # the alef points at the dagger alef


def test_orthography_is_a_setting_and_a_cli_option():
    assert Settings().orthography == "auto"
    assert Settings(orthography="uthmani").orthography == "uthmani"
    assert Settings.from_index("{}").orthography == "standard"  # indexes built before it
    runner = CliRunner()
    result = runner.invoke(app, ["normalize", "-", "--orthography", "standard"], input="ٱلصَّلَوٰةَ")
    assert result.exit_code == 0 and result.output.strip() == "الصلوة"
    result = runner.invoke(app, ["normalize", "-", "--orthography", "imlai"], input="x")
    assert result.exit_code != 0 and "--orthography" in result.output


_QURANIC = st.text(
    st.one_of(
        st.characters(min_codepoint=0x0621, max_codepoint=0x0671),
        st.characters(min_codepoint=0x06D6, max_codepoint=0x06ED),
        st.sampled_from(list("\u08f0\u08f1\u08f2\u0640 ٰءـٔ")),
    ),
    max_size=40,
)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_QURANIC)
def test_uthmani_pipeline_is_idempotent_with_valid_offsets(text):
    once = UTHMANI(text)
    assert UTHMANI(once.text).text == once.text
    assert len(once.offsets) == len(once.text)
    if len(once.offsets):
        assert 0 <= once.offsets.min() and once.offsets.max() < len(text)
        assert (once.offsets[1:] >= once.offsets[:-1]).all()
