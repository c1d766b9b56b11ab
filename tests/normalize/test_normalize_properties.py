"""Property tests: every pipeline is idempotent, never raises, and keeps valid offsets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragkit.normalize import normalize_document, normalizer_for
from ragkit.normalize.base import changes

LANGUAGES = ["ar", "fa", "ckb", "ur", "am", "ti", "en", "ru", "xx"]

# Characters from the scripts ragkit normalizes, the controls it deletes, and anything else.
_FOCUSED = st.one_of(
    st.characters(min_codepoint=0x0600, max_codepoint=0x06FF),
    st.characters(min_codepoint=0x1200, max_codepoint=0x139F),
    st.characters(min_codepoint=0xFB50, max_codepoint=0xFEFF),
    st.sampled_from(list("\u200b\u200c\u200d\u200e\u200f\u202b\u2066\ufeff\u00a0 \t\n\r")),
    st.characters(min_codepoint=0x20, max_codepoint=0x7E),
)
TEXT = st.text(st.one_of(_FOCUSED, st.characters()), max_size=60)
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check(original: str, out) -> None:
    assert len(out.offsets) == len(out.text)
    assert out.source_length == len(original)
    if len(out.offsets):
        assert np.all(np.diff(out.offsets) >= 0)
        assert 0 <= out.offsets.min() and out.offsets.max() < len(original)
    changes(original, out)  # the --explain view works on every result


@pytest.mark.parametrize("language", LANGUAGES)
@FUZZ
@given(text=TEXT)
def test_pipeline_is_idempotent_with_valid_offsets(language, text):
    pipeline = normalizer_for(language)
    once = pipeline(text)
    _check(text, once)
    assert pipeline(once.text).text == once.text


@FUZZ
@given(text=TEXT)
def test_mixed_document_normalization(text):
    once = normalize_document(text)
    _check(text, once)


@FUZZ
@given(text=TEXT)
def test_labialized_geez_mode_is_idempotent(text):
    pipeline = normalizer_for("am", geez_mode="homophones+labialized")
    once = pipeline(text)
    _check(text, once)
    assert pipeline(once.text).text == once.text
