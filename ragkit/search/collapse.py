"""Distinct passages: hits whose text a better hit already shows are folded into it.

The same licence, boilerplate paragraph or copied page stored under several documents scores
the same for every copy, so an unfolded top k can be one passage k times. :func:`distinct`
walks the ranked candidates best first and keeps a hit only when its text (whitespace runs
folded) differs from every kept hit's; a folded candidate adds its document key to the kept
hit's ``duplicates``. With ``groups`` (document key → near-duplicate group key, read once per
window of candidates: :mod:`ragkit.pipeline.near_duplicates`), a candidate is folded too when
its document is in the same group as a kept hit's document and the two texts are near-identical
(:func:`word_jaccard` at least ``threshold``): the same passage of two versions of a licence.
Candidates are read in windows, so folding costs nothing when the top k are distinct; once
``k`` passages are kept, reading goes on only while a window ends on a folded copy (the copies
of one passage score alike and follow each other), so a hit lists all of its copies among the
candidates. When the candidates run out on a folded copy, :attr:`Distinct.runs_on` says so:
the caller widens its candidate pool (more copies, or more passages, may lie past it).

Example:
    >>> rows = {1: ("Same text.", "a"), 2: ("Same  text.", "b"), 3: ("Other.", "c")}
    >>> found = distinct([(1, 0.9), (2, 0.9), (3, 0.5)], 2, lambda ids: {i: rows[i] for i in ids},
    ...                  lambda row: row[0], lambda row: row[1])
    >>> found.passages, found.runs_on
    ([(('Same text.', 'a'), 0.9, ['b']), (('Other.', 'c'), 0.5, [])], False)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

Row = TypeVar("Row")
Groups = Callable[[Iterable[str]], Mapping[str, str]]
_WORD = re.compile(r"\w+")
# The most candidates per list a search widens its pool to when copies of a few passages fill
# it (fusion_depth 100 widened four times, x4 each): past it, fewer than k passages may come back.
MAX_COLLAPSE_DEPTH = 25_600


def passage_key(text: str) -> str:
    """What two hits must share to be one passage: the text with whitespace runs folded.

    Example:
        >>> passage_key(" Water\\n\\nboils. ") == passage_key("Water boils.")
        True
    """
    return " ".join(text.split())


def word_jaccard(a: str, b: str) -> float:
    """The Jaccard similarity of two texts' sets of lowercased words (``\\w+`` runs).

    Example:
        >>> word_jaccard("The licence, version 2.", "the licence version 3")
        0.6
    """
    first, second = set(_WORD.findall(a.lower())), set(_WORD.findall(b.lower()))
    union = first | second
    return len(first & second) / len(union) if union else 1.0


@dataclass
class Distinct(Generic[Row]):
    """What :func:`distinct` found: up to ``k`` passages, each (row, score, keys of the other
    documents showing it), and whether the candidates ended on a folded copy (``runs_on``)."""

    passages: list[tuple[Row, float, list[str]]] = field(default_factory=list)
    runs_on: bool = False


def distinct(
    ranked: Sequence[tuple[int, float]],
    k: int,
    fetch: Callable[[Iterable[int]], Mapping[int, Row]],
    text_of: Callable[[Row], str],
    document_of: Callable[[Row], str],
    groups: Groups | None = None,
    threshold: float = 1.0,
) -> Distinct[Row]:
    """The first ``k`` distinct passages among ``ranked`` (chunk id, score), best first, each
    with its row (``fetch`` reads rows by id; ids it does not return are passed over) and the
    keys of the other documents whose candidates held the same text — or, with ``groups``, a
    near-identical text in a document of the same near-duplicate group."""
    found: Distinct[Row] = Distinct()
    kept = found.passages
    where: dict[str, int] = {}
    group_of: dict[str, str] = {}  # document → near-duplicate group, of the documents seen
    window = max(2 * k, 16)
    for start in range(0, len(ranked), window):
        part = ranked[start : start + window]
        rows = fetch(i for i, _ in part)
        if groups is not None:
            group_of.update(groups({document_of(row) for row in rows.values()}))
        folded = False  # whether this window's last candidate was a copy of a kept passage
        for chunk_id, score in part:
            row = rows.get(chunk_id)
            if row is None:
                continue
            key = passage_key(text_of(row))
            shown_at = where.get(key)
            if shown_at is None and group_of:
                shown_at = _near(row, kept, group_of, text_of, document_of, threshold)
            folded = shown_at is not None
            if shown_at is not None:
                shown = kept[shown_at]
                document = document_of(row)
                if document != document_of(shown[0]) and document not in shown[2]:
                    shown[2].append(document)
            elif len(kept) < k:
                where[key] = len(kept)
                kept.append((row, score, []))
        found.runs_on = folded and start + window >= len(ranked)
        if len(kept) == k and not folded:
            break  # k passages, and no run of copies reaches into the next window
    return found


def _near(
    row: Row,
    kept: Sequence[tuple[Row, float, list[str]]],
    group_of: Mapping[str, str],
    text_of: Callable[[Row], str],
    document_of: Callable[[Row], str],
    threshold: float,
) -> int | None:
    """The place of the first kept hit of another document in ``row``'s document's group
    whose text is near-identical to ``row``'s, if any."""
    document = document_of(row)
    group = group_of.get(document)
    if group is None:
        return None
    for place, (shown, _, _) in enumerate(kept):
        other = document_of(shown)
        same_group = other != document and group_of.get(other) == group
        if same_group and word_jaccard(text_of(row), text_of(shown)) >= threshold:
            return place
    return None
