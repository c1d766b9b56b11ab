"""Script-first language identification on short texts, restricted routing and profiles."""

from __future__ import annotations

import pytest

from ragkit.normalize import detect_language
from ragkit.normalize.detect import LanguageGuess, identify, script_candidates
from ragkit.normalize.language_rules import (
    ARABIC_SCRIPT_LANGUAGES,
    PASHTO_WORDS,
    UYGHUR_WORDS,
    arabic_script_evidence,
)
from ragkit.normalize.profile import LanguageProfile, resolve_language

SHORT_ENGLISH = [
    "zebra stripes",
    "router prefix",
    "quokka tuesday",
    "Bisection Routine (Algorithm 4)",
    "FIND (Algorithm 65)",
]
ENGLISH_TITLES = [
    "Boundary layer transition on a flat plate at supersonic speeds",
    "Use Made of Technical Libraries",
    "The heat transfer to a blunt body in hypersonic flow",
]


@pytest.mark.parametrize("text", SHORT_ENGLISH)
def test_short_english_is_english_when_the_collection_is(text):
    assert identify(text, allowed={"en"}) == LanguageGuess("en", "Latn", 1.0, "script")


@pytest.mark.parametrize("text", SHORT_ENGLISH)
def test_short_latin_text_defaults_to_english(text):
    guess = identify(text)
    assert (guess.language, guess.method) == ("en", "default")
    assert guess.confidence < 0.5
    assert detect_language(text) == "en"


@pytest.mark.parametrize("text", SHORT_ENGLISH)
def test_english_profile_decides_weak_latin_documents(text):
    profile = LanguageProfile.from_texts(ENGLISH_TITLES)
    assert profile.allowed() == ["en"]
    guess = resolve_language(text, profile)
    assert (guess.language, guess.method) == ("en", "profile")


def test_long_latin_text_is_identified_statistically():
    guess = identify("Der Hund schläft im Garten, und die Katze liegt auf dem Dach.")
    assert (guess.language, guess.method) == ("de", "statistical")
    assert identify("Der Hund schläft im Garten, und die Katze liegt.", ["en"]).language == "en"


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("في البیت", "ar"),  # Arabic typed on a Persian keyboard (ی)
        ("قال رسول اللہ", "ar"),  # Urdu heh
        ("الصلاۃ علی النبی", "ar"),  # ۃ and ی
        ("هذا الكتاب", "ar"),
        ("این کتاب را", "fa"),
        ("پدر من آمد و کتاب‌ها را برد", "fa"),
        ("سال ۱۴۰۲", "fa"),  # the digits ۰–۹: Arabic writes ٠–٩
        ("خانهٔ من", "fa"),  # the ezafe as heh + hamza above
        ("سنة ٢٠٢٣", "ar"),
        ("یہ کتاب ہے", "ur"),
        ("میں نے کہا", "ur"),
        ("ئەمە کتێبە", "ckb"),
        ("لە شار", "ckb"),
        ("پښتو ژبه", "ps"),  # ښ
        ("په کابل کې", "ps"),  # words only, no Pashto letter
        ("ګډ", "ps"),
        ("سنڌي ٻولي", "sd"),
        ("ڪتاب ۽ قلم", "sd"),  # the Sindhi "and"
        ("ئۇيغۇر تىلى", "ug"),
        ("بىلەن", "ug"),  # ى inside a word
        ("ياردەم", "ug"),  # ە with Arabic yeh: Uyghur, not Sorani
        ("یارمەتی", "ckb"),  # ە with Persian yeh: Sorani
        ("ሰላም ነው", "am"),
        ("ኣብ ትግራይ", "ti"),
        ("ቐዳማይ", "ti"),
    ],
)
def test_short_texts_by_letters_and_words(text, language):
    guess = identify(text)
    assert guess.language == language
    assert guess.method in ("letters", "words", "default")


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("保存します", "ja"),  # kana and kanji
        ("日本語のテキスト", "ja"),
        ("カタカナ", "ja"),
        ("你好世界", "zh"),  # Han alone
        ("저장", "ko"),
        ("บันทึก", "th"),
        ("Tokyo (東京) is the capital", "en"),  # a quoted name does not move the text
    ],
)
def test_scripts_of_one_language_answer_outright(text, language):
    assert identify(text).language == language


def test_arabic_function_words_outweigh_persian_letter_forms():
    # ک ی ہ are what the keyboard gave; the words are Arabic.
    guess = identify("قال النبی علیہ السلام فی الکتاب الذی")
    assert (guess.language, guess.method) == ("ar", "words")
    assert guess.confidence > 0.9


@pytest.mark.parametrize(
    "text",
    ["د", "ن إ د ر يس", "على", "مستشفى", "پدر ژاله", "بیمارستان", "یہ ہے", "ئەم"],
)
def test_other_arabic_script_languages_need_their_own_signs(text):
    # A lone letter, final ى, Persian, Urdu and Sorani letters are not Pashto, Sindhi or Uyghur.
    assert identify(text).language not in ("ps", "sd", "ug")


@pytest.mark.parametrize("words", [PASHTO_WORDS, UYGHUR_WORDS], ids=["ps", "ug"])
def test_pashto_and_uyghur_function_words_are_rare_in_persian_urdu_arabic(words):
    wordfreq = pytest.importorskip("wordfreq")
    for word in words:  # already folded as tokens are (ي ى → ی, ك → ک)
        for language in ("fa", "ur", "ar"):
            assert wordfreq.zipf_frequency(word, language) < 3, (word, language)
        arabic_letters = word.translate(str.maketrans("یک", "يك"))
        assert wordfreq.zipf_frequency(arabic_letters, "ar") < 3, word


def test_arabic_script_evidence_scores_every_language():
    scores = arabic_script_evidence("ئۆزگەرتەلمىدى")  # Uyghur: ە ۆ shared with Sorani, ى not
    assert set(scores) == set(ARABIC_SCRIPT_LANGUAGES)
    assert max(scores, key=scores.__getitem__) == "ug"
    assert script_candidates("Arab") == ARABIC_SCRIPT_LANGUAGES


def test_allowed_is_never_left():
    for text in ("zebra stripes", "في البيت", "ሰላም", "1234", "این کتاب را"):
        assert identify(text, allowed=["ar", "am"]).language in {"ar", "am"}
    assert identify("ሰላም", allowed={"en"}) == LanguageGuess("en", "Ethi", 0.0, "default")
    assert identify("").language == "und"


def test_allowed_order_sets_the_default():
    # No evidence either way (no Persian or Arabic-only letter, no function word).
    assert identify("سلام", allowed=["fa", "ar"]) == LanguageGuess("fa", "Arab", 0.5, "default")
    assert identify("سلام", allowed=["ar", "fa"]).language == "ar"


def test_profile_accumulates_and_round_trips():
    profile = LanguageProfile.from_texts(
        [*ENGLISH_TITLES, "قال رسول الله صلى الله عليه وسلم إنما الأعمال بالنيات"]
    )
    assert profile.texts == 4
    assert profile.dominant("Latn") == "en" and profile.dominant("Arab") == "ar"
    assert profile.dominant("Ethi") is None
    assert set(profile.allowed()) == {"en", "ar"}
    assert LanguageProfile.from_dict(profile.to_dict()) == profile
    # Strong own evidence is kept whatever the profile says.
    assert resolve_language("یہ کتاب ہے اور وہ", profile).language == "ur"
    assert resolve_language("کتاب", profile).language == "ar"
