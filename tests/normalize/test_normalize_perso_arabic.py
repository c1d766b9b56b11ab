"""Perso-Arabic script tables and the learned orthography corrector."""

from __future__ import annotations

import random

import pytest

from ragkit.errors import RagkitError
from ragkit.normalize import normalizer_for
from ragkit.normalize.orthography import (
    KEYBOARD_NOISE,
    OrthographyCorrection,
    OrthographyCorrector,
    align,
    corrupt,
)
from ragkit.normalize.perso_arabic import LANGUAGES, PersoArabicScript, perso_arabic_table

SORANI_LEXICON = {
    "بەڵام": 40, "کوڕ": 12, "ماڵ": 25, "مال": 20, "ڕۆژ": 30, "ڕێگا": 9, "هەڵە": 7,
    "کۆمار": 5, "وڵات": 11, "زۆر": 50, "دەرگا": 4, "ئەو": 80, "لە": 120, "بۆ": 60,
}  # fmt: skip


@pytest.fixture(scope="module")
def corrector() -> OrthographyCorrector:
    return OrthographyCorrector.train(
        SORANI_LEXICON, KEYBOARD_NOISE["ckb"], language="ckb", copies=40
    )


def test_persian_table_maps_arabic_yeh_and_kaf() -> None:
    table = perso_arabic_table("fa")
    assert table["ي"] == "ی" and table["ى"] == "ی" and table["ك"] == "ک"
    assert PersoArabicScript("fa")("كيف علي").text == "کیف علی"
    # Persian keeps its ezafe heh and teh marbuta (a lexical choice, left to the corrector).
    assert PersoArabicScript("fa")("خانۀ دائرة").text == "خانۀ دائرة"


def test_urdu_keeps_goal_and_do_chashmi_heh_distinct() -> None:
    table = perso_arabic_table("ur")
    assert "ہ" not in table and "ھ" not in table and "ے" not in table
    assert table["ه"] == "ہ"
    assert PersoArabicScript("ur")("ہاتھ بھائی").text == "ہاتھ بھائی"
    assert PersoArabicScript("ur")("كه").text == "کہ"
    assert PersoArabicScript("ur")("السجدة").text == "السجدة"  # quoted Arabic keeps ة


def test_sorani_keeps_ae_and_its_own_letters() -> None:
    step = PersoArabicScript("ckb")
    kept = "ە ڕ ڵ ۆ ێ ۊ"
    assert step(kept).text == kept
    assert step("كوردي").text == "کوردی"
    assert step("ره\u200cزبه\u200cر").text == "رەزبەر"  # heh + ZWNJ is the typed ae
    assert step("ھەر").text == "هەر" and step("بەهـ").text == "بەھ"


def test_persian_zwnj_kept_inside_words_and_dropped_at_edges() -> None:
    step = PersoArabicScript("fa")
    assert step("می\u200cشود").text == "می\u200cشود"
    assert step("\u200cمی\u200c\u200cشود\u200c ").text == "می\u200cشود "
    assert step("کتابِ\u200cها").text == "کتابِ\u200cها"  # after a diacritic it still joins


@pytest.mark.parametrize("language", LANGUAGES)
def test_idempotent_and_total(language: str) -> None:
    step = PersoArabicScript(language)
    rng = random.Random(language)
    alphabet = "يىكڪهەھہۀۂةۃےۓؤ\u200c\u0640\u0650 ڕڵۆێی٠١٩۰۹abc"
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        once = step(text)
        assert step(once.text).text == once.text
        assert len(once.offsets) == len(once.text)
        assert all(0 <= o < len(text) for o in once.offsets.tolist())


@pytest.mark.parametrize(
    ("language", "text", "key"),
    [
        ("ps", "پښتو ژبه آسانه ده ۱۲", "پښتو ژبه آسانه ده 12"),  # آ and ښ kept, digits folded
        ("ps", "ګډوَډـي", "ګډوډي"),  # a diacritic and tatweel dropped, ي kept
        ("sd", "ڪتاب ۽ کير", "ڪتاب ۽ کير"),  # Sindhi kaf ڪ and kheh ک stay two letters
        ("ug", "يىل بىلەن", "يىل بىلەن"),  # Uyghur y ي and i ى stay two letters
        ("ug", "ى\u0654ش", "ئش"),  # a separately typed hamza composed with its seat
        ("ps", "گاونډي كه", "ګاونډي که"),  # Persian gaf and Arabic kaf: the Pashto letters
        ("sd", "كجھ ڪتاب کير ی ہ", "ڪجھ ڪتاب کير ي ه"),  # ك is Sindhi ڪ; ک (kh) stays
        ("ug", "کىتاب", "كىتاب"),  # the Persian keheh: the Uyghur kaf
    ],
)
def test_pashto_sindhi_uyghur_keep_their_letters(language: str, text: str, key: str) -> None:
    out = normalizer_for(language)(text)
    assert out.text == key
    assert normalizer_for(language)(key).text == key


def test_offsets_point_into_the_original() -> None:
    out = PersoArabicScript("ckb")("ك ره\u200cز")
    assert out.text == "ک رەز"
    assert out.offsets.tolist() == [0, 1, 2, 3, 5]
    assert out.original_span(2, 5) == (2, 6)


def test_digits_option() -> None:
    assert PersoArabicScript("fa")("۱۲٣").text == "123"
    assert PersoArabicScript("fa", digits=False)("۱۲٣").text == "۱۲۳"
    assert PersoArabicScript("ckb", digits=False)("۱٢").text == "١٢"
    assert PersoArabicScript("ur", digits=False)("٤").text == "۴"


def test_unknown_language_names_the_options() -> None:
    with pytest.raises(RagkitError, match="fa, ckb, ur"):
        PersoArabicScript("xx")
    with pytest.raises(RagkitError, match="fa, ckb, ur"):
        perso_arabic_table("ar")


def test_noise_and_alignment() -> None:
    assert corrupt("ڕەش", {"ڕ": {"ر": 1.0}, "ە": {"ه": 1.0}}, random.Random(1)) == "رهش"
    assert align("وڵات", "وولات") == [("و", "وو"), ("ڵ", "ل"), ("ا", "ا"), ("ت", "ت")]


def test_channel_is_learned_from_synthetic_noise(corrector: OrthographyCorrector) -> None:
    assert 0.4 < corrector.channel["ە"]["ه"] < 0.8
    assert "ک" not in corrector.channel  # never corrupted, so copied with probability 1


def test_corrector_fixes_keyboard_errors(corrector: OrthographyCorrector) -> None:
    assert corrector.correct_word("بهلام") == "بەڵام"
    assert corrector.correct_word("روژ") == "ڕۆژ"
    assert corrector.correct_word("كومار") == "کۆمار"  # table (ك) and model (ۆ) together
    assert corrector.correct_word("مال") == "مال"  # a lexicon word stays
    assert corrector.correct_word("نەناسراو") == "نەناسراو"  # unknown word kept
    assert corrector.correct_word("رێبوار") == "ڕێبوار"  # Sorani word-initial trill rule
    for odd in ("", " ", "12", "a b", "ه" * 500, "\U0001f600", "\u200c"):
        assert isinstance(corrector.correct_word(odd), str)


@pytest.fixture(scope="module")
def doubled() -> OrthographyCorrector:
    noise = {"و": {"وو": 0.3}, "ڵ": {"ل": 0.5}}
    return OrthographyCorrector.train(SORANI_LEXICON, noise, language="ckb", copies=40)


def test_multi_character_channel_event(doubled: OrthographyCorrector) -> None:
    assert 0.2 < doubled.channel["و"]["وو"] < 0.4
    assert doubled.correct_word("ووڵات") == "وڵات"


def test_correction_step_keeps_offsets(
    corrector: OrthographyCorrector, doubled: OrthographyCorrector
) -> None:
    out = OrthographyCorrection(corrector)("لە زور، ١٢")
    assert out.text == "لە زۆر، 12"
    assert out.offsets.tolist() == list(range(10))  # same-length words map one to one
    out = OrthographyCorrection(doubled)("لە ووڵات ١٢")
    assert out.text == "لە وڵات 12"
    # "ووڵات" (5 chars) became "وڵات" (4): the new word spans the whole original word.
    assert out.original_span(3, 7) == (3, 8)
    assert out.original_span(8, 10) == (9, 11)


def test_save_load_round_trip(corrector: OrthographyCorrector, tmp_path) -> None:
    for name in ("model.json", "model.json.gz"):
        path = corrector.save(tmp_path / name)
        loaded = OrthographyCorrector.load(path)
        assert loaded.channel == corrector.channel and loaded.lexicon == corrector.lexicon
        assert loaded.language == "ckb"
        assert loaded.correct_word("بهلام") == "بەڵام"
    (tmp_path / "bad.json").write_text('{"format": "other"}', encoding="utf-8")
    with pytest.raises(RagkitError, match="retrain"):
        OrthographyCorrector.load(tmp_path / "bad.json")


@pytest.mark.slow
@pytest.mark.parametrize("language", ["ckb", "fa"])
def test_corrector_built_from_package_word_list(language: str, tmp_path, monkeypatch) -> None:
    """Builds the real model from klpt / hazm (fetched with pip when not installed)."""
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path))
    try:
        corrector = OrthographyCorrector.for_language(language)
    except RagkitError as error:
        pytest.skip(f"word list package not available (no PyPI access?): {error}")
    if language == "ckb":
        assert corrector.correct_word("بەلێن") in {"بەلێن", "بەڵێن"}
        assert corrector.correct_word("هیلكە") == "هێلکە"
    else:
        assert corrector.correct_word("ادامة") == "ادامه"
        assert corrector.correct_word("كتاب") == "کتاب"
    assert OrthographyCorrector.for_language(language).lexicon == corrector.lexicon
