"""Property tests: every chunker (and adaptive selection) tiles any text with exact offsets.

For every registered chunker and :class:`AdaptiveChunker`, on arbitrary text (structure
markers, several scripts, odd whitespace, any code point) and budgets down to one token: nothing
but :class:`RagkitError` escapes, ``text[c.start:c.end] == c.text``, and the chunks tile the
text exactly (no gap, no overlap, first at 0, last at ``len(text)``).
"""

from __future__ import annotations

import hashlib
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ragkit.chunking import (
    AdaptiveChunker,
    Chunk,
    available_chunkers,
    counter_for,
    get_chunker,
)
from ragkit.chunking.structure import infer_markers
from ragkit.documents import text_blocks
from ragkit.errors import RagkitError

_PIECES = st.sampled_from(
    [
        "Word",
        " ",
        "  ",
        "\n",
        "\n\n",
        "\t",
        ". ",
        "? ",
        "# ",
        "- ",
        "1. ",
        "| a | b |",
        "```",
        "    code",
        "إِنَّمَا الأعمال",
        "؟ ",
        "ሰላም ነው።",
        "See Table 2.",
        "It was it.",
        "\u200b",
        "\u00a0",
        "\r\n",
    ]
)
TEXT = st.lists(st.one_of(_PIECES, st.text(max_size=12)), max_size=40).map("".join)
BUDGET = st.integers(min_value=1, max_value=48)
LANGUAGES = ["en", "ar", "am"]
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def embed(texts: list[str]) -> np.ndarray:
    """A deterministic text → vector map (character-trigram hashing), enough for semantic
    chunking and the ICC/DCC metrics to run on arbitrary text."""
    vectors = np.zeros((len(texts), 16), dtype=np.float32)
    for row, text in enumerate(texts):
        for k in range(max(1, len(text) - 2)):
            digest = hashlib.blake2b(text[k : k + 3].encode(), digest_size=2).digest()
            vectors[row, digest[0] % 16] += 1.0 if digest[1] % 2 else -1.0
    return vectors


def assert_tiles(text: str, chunks: list[Chunk]) -> None:
    for chunk in chunks:
        assert 0 <= chunk.start < chunk.end <= len(text)
        assert text[chunk.start : chunk.end] == chunk.text
    if not text.strip():
        assert chunks == []
        return
    assert chunks[0].start == 0 and chunks[-1].end == len(text)
    assert all(a.end == b.start for a, b in itertools.pairwise(chunks))


def _chunk_or_ragkit_error(call):  # type: ignore[no-untyped-def]
    try:
        return call()
    except RagkitError as error:
        event(f"RagkitError: {error}")
        return None


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("name", sorted(available_chunkers()))
@FUZZ
@given(text=TEXT, budget=BUDGET, markdown=st.booleans())
def test_every_chunker_tiles_the_text(
    name: str, language: str, text: str, budget: int, markdown: bool
) -> None:
    options = {"embed": embed} if name == "semantic" else {}
    chunker = get_chunker(name, max_tokens=budget, counter=counter_for(language), **options)
    blocks = text_blocks(text, markdown=markdown)
    chunks = _chunk_or_ragkit_error(lambda: chunker.chunk(text, blocks, language))
    if chunks is not None:
        assert_tiles(text, chunks)
        assert all(b < len(blocks) for c in chunks for b in c.block_ids)


@pytest.mark.parametrize("language", LANGUAGES)
@FUZZ
@given(text=TEXT, budget=BUDGET)
def test_adaptive_selection_tiles_the_text(language: str, text: str, budget: int) -> None:
    chunker = AdaptiveChunker(embed=embed, max_tokens=budget)
    selection = _chunk_or_ragkit_error(lambda: chunker.chunk(text, None, language))
    if selection is not None:
        assert_tiles(text, selection.chunks)
        assert selection.chosen in selection.scores
        assert all(0.0 <= s["score"] <= 1.0 for s in selection.scores.values())


def test_marker_inference_on_a_1_mb_line_without_newlines() -> None:
    # Regression: the setext pattern backtracked quadratically here (about half an hour).
    assert infer_markers("word " * 200_000) == []
