"""Distinct passages: hits whose text a better hit already shows are folded into it.

The same licence, boilerplate paragraph or copied page stored under several documents scores
the same for every copy, so an unfolded top k can be one passage k times. :func:`distinct`
walks the ranked candidates best first and keeps a hit only when its text (whitespace runs
folded) differs from every kept hit's; a folded candidate adds its document key to the kept
hit's ``duplicates``. Candidates are read in windows, so folding costs nothing when the top
k are distinct.

Example:
    >>> rows = {1: ("Same text.", "a"), 2: ("Same  text.", "b"), 3: ("Other.", "c")}
    >>> distinct([(1, 0.9), (2, 0.9), (3, 0.5)], 2, lambda ids: {i: rows[i] for i in ids},
    ...          lambda row: row[0], lambda row: row[1])
    [(('Same text.', 'a'), 0.9, ['b']), (('Other.', 'c'), 0.5, [])]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeVar

Row = TypeVar("Row")


def passage_key(text: str) -> str:
    """What two hits must share to be one passage: the text with whitespace runs folded.

    Example:
        >>> passage_key(" Water\\n\\nboils. ") == passage_key("Water boils.")
        True
    """
    return " ".join(text.split())


def distinct(
    ranked: Sequence[tuple[int, float]],
    k: int,
    fetch: Callable[[Iterable[int]], Mapping[int, Row]],
    text_of: Callable[[Row], str],
    document_of: Callable[[Row], str],
) -> list[tuple[Row, float, list[str]]]:
    """The first ``k`` distinct passages among ``ranked`` (chunk id, score), best first, each
    with its row (``fetch`` reads rows by id; ids it does not return are passed over) and the
    keys of the other documents whose candidates held the same text."""
    kept: list[tuple[Row, float, list[str]]] = []
    where: dict[str, int] = {}
    window = max(2 * k, 16)
    for start in range(0, len(ranked), window):
        part = ranked[start : start + window]
        rows = fetch(i for i, _ in part)
        for chunk_id, score in part:
            row = rows.get(chunk_id)
            if row is None:
                continue
            key = passage_key(text_of(row))
            if key in where:
                shown = kept[where[key]]
                document = document_of(row)
                if document != document_of(shown[0]) and document not in shown[2]:
                    shown[2].append(document)
            elif len(kept) < k:
                where[key] = len(kept)
                kept.append((row, score, []))
        if len(kept) == k:
            break  # this window's copies of the kept hits are listed; later ones are not
    return kept
