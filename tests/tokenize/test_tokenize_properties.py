"""Property tests: shipped tokenizers round-trip any text and count what they encode.

For each model in ``tokenizers/`` and arbitrary text: encoding never raises; the pieces spell
the prepared text back (``▁`` marks a space; byte-fallback pieces such as ``<0xD8>`` spell
bytes, so then only the ids are checked); ids decode to the prepared text whenever no piece
is unknown; ``count`` is the number of pieces (0 for blank text); the sparse-term pieces
(``Tokenizer.pieces``) always spell the text back, byte-fallback characters included. U+2581
itself is left out of the text: SentencePiece reads it as its own space marker.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ragkit.tokenize import tokenizer_for, tokenizers_dir

LANGUAGES = sorted(p.stem for p in tokenizers_dir().glob("*.model"))
_SCRIPTS = st.one_of(
    st.characters(min_codepoint=0x0600, max_codepoint=0x06FF),
    st.characters(min_codepoint=0x1200, max_codepoint=0x137F),
    st.characters(min_codepoint=0x20, max_codepoint=0x7E),
    st.sampled_from(list(" \t\n\r\u00a0\u200b\u200c\u3000")),
)
TEXT = st.text(st.one_of(_SCRIPTS, st.characters()), max_size=80).map(
    lambda t: t.replace("\u2581", "")
)
FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_every_shipped_language_is_fuzzed() -> None:
    assert {"ar", "am", "en", "fa", "ur"} <= set(LANGUAGES)


@pytest.mark.parametrize("language", LANGUAGES)
@FUZZ
@given(text=TEXT)
def test_round_trip(language: str, text: str) -> None:
    tokenizer = tokenizer_for(language)
    prepared = tokenizer.prepare(text)
    pieces = tokenizer.encode(text)
    ids = tokenizer.processor.encode(prepared)
    if not any(map(tokenizer.processor.is_byte, ids)):  # byte pieces spell <0xD8>, not text
        assert "".join(pieces).replace("\u2581", " ").strip() == prepared
    if tokenizer.unk_id in ids:
        event("has unknown pieces")
    else:
        assert tokenizer.processor.decode(ids) == prepared
    assert tokenizer.count(text) == (len(pieces) if text.strip() else 0)


@pytest.mark.parametrize("language", LANGUAGES)
@FUZZ
@given(data=st.data())
def test_text_made_of_vocabulary_pieces_round_trips_by_id(language: str, data) -> None:
    tokenizer = tokenizer_for(language)
    processor = tokenizer.processor
    usable = st.integers(0, processor.get_piece_size() - 1).filter(
        lambda i: not (processor.is_unknown(i) or processor.is_control(i) or processor.is_byte(i))
    )
    ids = data.draw(st.lists(usable, max_size=30))
    text = "".join(processor.id_to_piece(i) for i in ids).replace("\u2581", " ")
    prepared = tokenizer.prepare(text)
    encoded = processor.encode(prepared)
    assert tokenizer.unk_id not in encoded
    assert processor.decode(encoded) == prepared


@pytest.mark.parametrize("language", LANGUAGES)
@FUZZ
@given(text=TEXT)
def test_sparse_pieces_spell_the_text(language: str, text: str) -> None:
    tokenizer = tokenizer_for(language)
    key = tokenizer.prepare(text)  # a matching key, as the index cuts it
    pieces = tokenizer.pieces(key)
    assert not [piece for piece in pieces if piece.startswith("<0x")]
    assert "".join(pieces).replace("\u2581", " ").strip() == key
