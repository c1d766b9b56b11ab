"""Post-processing shared by every chunker: gap repair, oversize split, small merge.

1. Gap repair: spans are sorted and stretched so that the chunks cover ``[0, len(text))``
   exactly — the first starts at 0, the last ends at the end, and text between two spans
   (whitespace, usually) joins the span before it. Intentional overlaps (``fixed`` with
   ``overlap``) are kept.
2. Oversize split: a chunk over ``max_tokens`` is cut at its sentence units (word windows for a
   unit that alone is too long) and the pieces are packed greedily back up to the budget.
3. Small merge: a chunk under ``min_tokens`` joins its smaller neighbour when the result fits.

Example:
    >>> from ragkit.chunking.context import DocumentContext
    >>> ctx = DocumentContext.build("Aa bb. Cc dd ee. Ff.", None, "en", len)
    >>> [c.text for c in finalize(ctx, [(0, 6), (7, 16)], "demo", 3, 20)]
    ['Aa bb. ', 'Cc dd ee. Ff.']
"""

from __future__ import annotations

import bisect
import itertools

from ragkit.chunking.context import DocumentContext, word_windows
from ragkit.chunking.types import Chunk, Span


def repair_gaps(spans: list[Span], length: int) -> list[Span]:
    """Sorted spans stretched to tile ``[0, length)``; overlaps are kept, gaps absorbed.

    Example:
        >>> repair_gaps([(5, 8), (2, 4), (9, 9)], 12)
        [(0, 5), (5, 12)]
    """
    ordered = sorted((max(0, s), min(length, e)) for s, e in spans if e > s)
    ordered = [(s, e) for s, e in ordered if e > s]
    if not ordered:
        return [(0, length)] if length else []
    repaired: list[Span] = []
    for s, e in ordered:
        if repaired and e <= repaired[-1][1]:
            continue  # contained in the previous span
        if not repaired:
            s = 0
        elif s > repaired[-1][1]:
            repaired[-1] = (repaired[-1][0], s)
        repaired.append((s, e))
    repaired[-1] = (repaired[-1][0], length)
    return repaired


def split_oversize(context: DocumentContext, start: int, end: int, max_tokens: int) -> list[Span]:
    """``[start, end)`` cut at unit boundaries (then words) and packed up to ``max_tokens``."""
    text, counter = context.text, context.counter
    i, j = context.unit_range(start, end)
    cuts = sorted({start, *(context.units[k][0] for k in range(i, j)), end})
    cuts = [c for c in cuts if start <= c <= end]
    pieces: list[tuple[int, int, int]] = []
    for s, e in itertools.pairwise(cuts):
        size = counter(text[s:e])
        if size > max_tokens:
            windows = word_windows(text, s, e, max_tokens, counter)
            if windows:
                windows[0] = (s, windows[0][1])
                bounds = [w[0] for w in windows] + [e]
                for ws, we in itertools.pairwise(bounds):
                    pieces.append((ws, we, counter(text[ws:we])))
                continue
        pieces.append((s, e, size))
    packed: list[Span] = []
    current_start, current_size = start, 0
    for s, e, size in pieces:
        if current_size and current_size + size > max_tokens:
            packed.append((current_start, s))
            current_start, current_size = s, 0
        current_size += size
    packed.append((current_start, end))
    return packed


def merge_small(
    sizes: list[int], spans: list[Span], min_tokens: int, max_tokens: int
) -> list[Span]:
    """Merge each span under ``min_tokens`` into its smaller neighbour when the sum fits.

    Example:
        >>> merge_small([10, 1, 4], [(0, 10), (10, 11), (11, 15)], 3, 20)
        [(0, 10), (10, 15)]
    """
    spans, sizes = list(spans), list(sizes)
    k = 0
    while k < len(spans) and len(spans) > 1:
        if sizes[k] >= min_tokens:
            k += 1
            continue
        options = [n for n in (k - 1, k + 1) if 0 <= n < len(spans)]
        options = [n for n in options if sizes[n] + sizes[k] <= max_tokens]
        if not options:
            k += 1
            continue
        n = min(options, key=lambda o: sizes[o])
        a, b = min(k, n), max(k, n)
        spans[a : b + 1] = [(min(spans[a][0], spans[b][0]), max(spans[a][1], spans[b][1]))]
        sizes[a : b + 1] = [sizes[a] + sizes[b]]
        k = a
    return spans


def finalize(
    context: DocumentContext, spans: list[Span], label: str, min_tokens: int, max_tokens: int
) -> list[Chunk]:
    """Chunks that tile the document, within the budget wherever the text allows."""
    text = context.text
    if not text.strip():
        return []
    counts: dict[Span, int] = {}

    def count(span: Span) -> int:
        if span not in counts:
            counts[span] = context.counter(text[span[0] : span[1]])
        return counts[span]

    sized: list[Span] = []
    for span in repair_gaps(spans, len(text)):
        if count(span) > max_tokens:
            sized.extend(split_oversize(context, span[0], span[1], max_tokens))
        else:
            sized.append(span)
    merged = merge_small([count(s) for s in sized], sized, min_tokens, max_tokens)
    block_starts = [b.start for b in context.blocks]
    chunks: list[Chunk] = []
    for s, e in merged:
        first = max(0, bisect.bisect_right(block_starts, s) - 1)
        ids = tuple(
            b
            for b in range(first, bisect.bisect_left(block_starts, e))
            if context.blocks[b].end > s
        )
        chunks.append(Chunk(text[s:e], s, e, count((s, e)), label, ids))
    return chunks
