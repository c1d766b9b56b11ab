from __future__ import annotations

from ragkit.chunking import RecursiveTokenChunker, count_tokens
from ragkit.documents import text_blocks

TEXT = (
    "# Heading\n\n"
    + " ".join(f"Sentence number {i} has several words in it." for i in range(40))
    + "\n\nما هو الوقت؟ الوقت الآن متأخر. "
    + "ሰላም ነው። እንዴት ነህ፧\n\n"
    + "word " * 700
)


def test_offsets_slice_original_text_and_budget_holds() -> None:
    chunker = RecursiveTokenChunker(budget=32)
    chunks = chunker.chunk(TEXT, text_blocks(TEXT, markdown=True))
    assert chunks
    for chunk in chunks:
        assert TEXT[chunk.start : chunk.end] == chunk.text
        assert chunk.token_count == count_tokens(chunk.text) <= 32
        assert chunk.chunker == "recursive-token"
    starts = [c.start for c in chunks]
    assert starts == sorted(starts)
    # every word of the text lands in some chunk
    assert sum(c.token_count for c in chunks) == count_tokens(TEXT)


def test_small_document_is_one_chunk() -> None:
    chunks = RecursiveTokenChunker(budget=256).chunk("A short note.\n\nTwo paragraphs.")
    assert [(c.start, c.end) for c in chunks] == [(0, 30)]


def test_multilingual_sentence_ends_split() -> None:
    text = "ما هو الوقت؟ الوقت الآن متأخر جدا. ሰላም ነው። እንዴት ነህ፧"
    pieces = [c.text for c in RecursiveTokenChunker(budget=5).chunk(text)]
    assert pieces[0] == "ما هو الوقت؟"
    assert "ሰላም ነው።" in pieces
