"""Unicode hygiene, Arabic orthography, detection, the per-language registry and the CLI."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from typer.testing import CliRunner

from ragkit.cli import app
from ragkit.normalize import normalize, normalize_document, normalizer_for
from ragkit.normalize.arabic import ArabicOptions, ArabicOrthography
from ragkit.normalize.base import CharMap, Normalized, RegexSub, changes
from ragkit.normalize.detect import detect_language, detect_script, detect_spans
from ragkit.normalize.pipeline import Pipeline
from ragkit.normalize.unicode import InvisibleCharacters, UnicodeForm, Whitespace


def assert_offsets_valid(original: str, out: Normalized) -> None:
    assert len(out.offsets) == len(out.text)
    assert out.source_length == len(original)
    if len(out.offsets):
        assert np.all(np.diff(out.offsets) >= 0), "offsets must be monotone"
        assert out.offsets.min() >= 0 and out.offsets.max() < len(original)


def test_composition_points_into_the_original():
    pipeline = Pipeline([CharMap({"ـ": ""}), CharMap({"ﻻ": "لا"}), RegexSub(r"ا+", "ا")])
    original = "عـﻻا"
    out = pipeline(original)
    assert out.text == "علا"
    assert out.offsets.tolist() == [0, 2, 2]
    assert out.original_span(1, 3) == (2, 4)  # the trailing alif merged into the lam-alif
    assert_offsets_valid(original, out)


def test_nfkc_folds_presentation_forms_and_ligatures_with_exact_offsets():
    original = "ﺍﻟﺴﻼﻡ ﬁle"
    out = UnicodeForm("NFKC")(original)
    assert out.text == "السلام file"
    assert original[out.original_span(7, 11)[0]] == "ﬁ"
    assert_offsets_valid(original, out)


def test_invisible_characters_and_zwnj_policy():
    text = "\ufeffمی\u200cخواهم\u200f\u202b"
    assert InvisibleCharacters(keep_zwnj=True)(text).text == "می\u200cخواهم"
    assert InvisibleCharacters(keep_zwnj=False)(text).text == "میخواهم"
    assert "\u200c" in normalizer_for("fa")(text).text
    assert "\u200c" not in normalizer_for("ar")(text).text


def test_whitespace_collapses_but_keeps_paragraphs():
    out = Whitespace()("a\u3000\t b  \n  \n\n\nc\r\n")
    assert out.text == "a b\n\nc\r\n"


@pytest.mark.parametrize(
    ("raw", "plain"),
    [
        ("إِنَّمَا ٱلْأَعْمَالُ بِٱلنِّيَّاتِ", "انما الاعمال بالنيات"),
        ("آمَنَ", "امن"),
        ("مُوسَىٰ", "موسي"),
        ("عَلَيۡهِمۡ", "عليهم"),  # Quranic sukun U+06E1
        ("٢٠٢٦ و ۱۴۰۵", "2026 و 1405"),
        ("جميـــــل", "جميل"),  # tatweel
    ],
)
def test_arabic_pipeline(raw, plain):
    assert normalize(raw, language="ar").text == plain


def test_arabic_options_are_honoured():
    keep = ArabicOrthography(ArabicOptions(alif=False, alef_maksura=False, digits=False))
    assert keep("أَعْلَى ٣").text == "أعلى ٣"
    assert ArabicOrthography(ArabicOptions(teh_marbuta=True))("مدرسة").text == "مدرسه"
    assert ArabicOrthography(ArabicOptions(dagger_alef="alef"))("ٱلۡعَٰلَمِينَ").text == "العالمين"


def test_persian_keeps_alef_madda_and_uses_persian_yeh_kaf():
    assert normalize("آب كتابي", language="fa").text == "آب کتابی"


def test_geez_pipeline_folds_homophones():
    assert normalize("ሠላም ዓለም", language="am").text == normalize("ሰላም አለም", language="am").text


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("The boiling point of water is one hundred degrees.", "en"),
        ("قال رسول الله صلى الله عليه وسلم إنما الأعمال بالنيات", "ar"),
        ("این کتاب را دیروز از کتابخانه گرفتم و خواندم", "fa"),
        ("یہ کتاب میں نے کل لائبریری سے لی تھی", "ur"),
        ("ئەم کتێبەم دوێنێ لە کتێبخانە وەرگرت", "ckb"),
        ("ሰላም ነው? እንዴት ነህ ዛሬ", "am"),
        ("ኣብ ትግራይ ዝርከብ ከተማ እዩ", "ti"),
    ],
)
def test_language_detection(text, language):
    assert detect_language(text) == language


def test_detection_edge_cases():
    assert detect_script("1234 !!") == "Zyyy"
    assert detect_language("") == "und"
    spans = detect_spans("see: كتاب جديد and ሰላም ነው")
    assert [span.script for span in spans] == ["Latn", "Arab", "Latn", "Ethi"]
    assert spans[0].start == 0 and spans[-1].end == len("see: كتاب جديد and ሰላም ነው")
    assert all(a.end == b.start for a, b in itertools.pairwise(spans))


def test_mixed_document_normalizes_each_span_with_its_language():
    original = "Report: الأعمال بالنيات — ሠላም"
    out = normalize_document(original, "en")
    assert out.text == "Report: الاعمال بالنيات — ሰላም"
    assert_offsets_valid(original, out)


def test_changes_lists_edits_with_offsets():
    original = "أَهْلًا"
    found = changes(original, normalize(original, "ar"))
    assert [(c.start, c.end, c.after) for c in found] == [(0, 2, "ا"), (3, 4, ""), (5, 6, "")]


def test_cli_normalize_prints_and_explains(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("أَهْلًا ሠላም\n", encoding="utf-8")
    runner = CliRunner()
    plain = runner.invoke(app, ["normalize", str(source), "--lang", "ar"])
    assert plain.exit_code == 0 and plain.stdout == "اهلا ሰላም\n"
    explained = runner.invoke(app, ["normalize", "-", "--explain"], input="ሠላም")
    assert explained.exit_code == 0 and "U+1220 → U+1230" in explained.stdout
    unchanged = runner.invoke(app, ["normalize", "-", "--explain", "--lang", "fa"], input="سلام")
    assert unchanged.exit_code == 0 and "no changes" in unchanged.stdout
    bad = runner.invoke(app, ["normalize", str(tmp_path / "missing.txt")])
    assert bad.exit_code == 2 and "missing.txt" in bad.output
    bad_mode = runner.invoke(app, ["normalize", str(source), "--mode", "nope"])
    assert bad_mode.exit_code == 2 and "homophones" in bad_mode.output


def test_cli_normalize_shows_the_sparse_terms_and_the_tokenizer():
    runner = CliRunner()
    english = runner.invoke(app, ["normalize", "-", "--terms"], input="The wings\n")
    assert english.exit_code == 0
    from ragkit.tokenize import tokenizer_for

    assert f"en.model: {tokenizer_for('en').count('The wings')} tokens" in english.stdout
    assert "sparse terms (Snowball stems, 1): wing" in english.stdout
    # A 2-word Sorani query: no model of its own, no stemmer, so the fallback model's pieces.
    kurdish = runner.invoke(app, ["normalize", "-", "--terms", "--explain"], input="ڕۆژی باش")
    assert kurdish.exit_code == 0
    assert "mul.model, ckb has no model of its own" in kurdish.stdout
    assert "sparse terms (tokenizer pieces" in kurdish.stdout and "▁باش" in kurdish.stdout
    assert "no changes" in kurdish.stdout  # --explain still explains
