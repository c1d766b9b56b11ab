"""Exact offsets: the original span behind every normalized run normalizes to that run."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragkit.normalize import normalizer_for
from ragkit.normalize.base import Normalized, Step, changes
from ragkit.normalize.unicode import UnicodeForm

# Ligatures and presentation forms (ﬁ ﬀ ﻻ ﷲ ﺃ), combining marks (Latin, Arabic harakat, Hebrew
# points), precomposed letters, Hangul jamo, full-width forms and a little of everything else.
_CHARS = st.one_of(
    st.sampled_from(list("ﬁﬂﬀﬃﬅﻻﻷﷲﷺﺃﺎﻟ㎏½ＡＢ①ǅ\u1100\u1161\u11a8각\u0958")),
    st.characters(min_codepoint=0xFB00, max_codepoint=0xFB4F),  # Latin, Armenian, Hebrew
    st.characters(min_codepoint=0xFB50, max_codepoint=0xFEFF),  # Arabic presentation forms
    st.characters(min_codepoint=0x0300, max_codepoint=0x036F),  # combining diacritics
    st.characters(min_codepoint=0x0610, max_codepoint=0x06FF),  # Arabic letters and marks
    st.characters(min_codepoint=0x0591, max_codepoint=0x05F4),  # Hebrew points
    st.sampled_from(list("aeouAEcnsyzé Ü\n\u00a0\u0654\u0655")),
    st.characters(),
)
# Expansions and contractions, so that some lines keep their length with both inside.
_PIECES = st.sampled_from(
    [
        "ﬁ",
        "ﬃ",
        "ﻻ",
        "ﷲ",
        "e\u0301",
        "a\u0308\u0301",
        "ا\u0653",
        "و\u0654",
        "\u1100\u1161",
        " ",
        "ab",
    ]
)
TEXT = st.lists(st.one_of(_PIECES, _CHARS), max_size=30).map("".join)
PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def runs(out: Normalized) -> list[tuple[str, int, int]]:
    """``(normalized run, original start, original end)`` for each run of equal offsets."""
    found: list[tuple[str, int, int]] = []
    start = 0
    for index in range(1, len(out.text) + 1):
        if index == len(out.text) or out.offsets[index] != out.offsets[start]:
            end = out.original_index(index)
            found.append((out.text[start:index], int(out.offsets[start]), end))
            start = index
    return found


def assert_exact(step: Step, text: str) -> None:
    out = step(text)
    for run, start, end in runs(out):
        assert step(text[start:end]).text == run, (run, text[start:end])


@pytest.mark.parametrize("form", ["NFC", "NFKC"])
@PROPERTY
@given(text=TEXT)
def test_unicode_form_maps_every_run_to_its_own_original(form, text):
    assert_exact(UnicodeForm(form), text)


@pytest.mark.parametrize("language", ["en", "ar"])
@PROPERTY
@given(text=TEXT.filter(lambda text: text.isprintable() and not any(c.isspace() for c in text)))
def test_context_free_pipelines_map_every_run_to_its_own_original(language, text):
    assert_exact(normalizer_for(language), text)


@pytest.mark.parametrize(
    ("text", "normalized", "spans"),
    [
        # An expansion and a contraction on one line (its length unchanged).
        (
            "the ﬁnal cafe\u0301 menu",
            "the final café menu",
            {(4, 9): "ﬁnal", (10, 14): "cafe\u0301"},
        ),
        ("ﻻ cafe\u0301 ﻻ", "لا café لا", {(3, 7): "cafe\u0301", (8, 10): "ﻻ"}),
    ],
)
def test_expansions_and_contractions_keep_their_words(text, normalized, spans):
    out = normalizer_for("en")(text)
    assert out.text == normalized
    for (start, end), original in spans.items():
        assert text[slice(*out.original_span(start, end))] == original


def test_explain_lists_each_change_apart():
    text = "the ﬁnal cafe\u0301 menu"
    found = changes(text, normalizer_for("en")(text))
    assert [(c.start, c.before, c.after) for c in found] == [(4, "ﬁ", "fi"), (12, "e\u0301", "é")]


def test_reordered_marks_leave_their_letter_in_place():
    out = UnicodeForm("NFC")("بّ\u064e")  # shadda before fatha: NFC puts fatha first
    assert out.text == "ب\u064e\u0651"
    assert out.offsets.tolist() == [0, 1, 1]


@pytest.mark.parametrize("language", ["ar", "fa", "ur", "am", "en"])
@PROPERTY
@given(text=TEXT)
def test_translated_fast_path_equals_the_steps_one_by_one(language, text):
    pipeline = normalizer_for(language)
    expected = Normalized.identity(text)
    for step in pipeline._plan:
        expected = step(expected)
    assert pipeline(text) == expected
