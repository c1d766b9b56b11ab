"""Listings: chunks that are tables of contents, scored below the passages they point to.

A manual's chapter opens with its table of contents ("12.1. RAID and LVM 12.1.1. Software
RAID 12.1.2. LVM …"): a short chunk made of the very headings users type as queries. Both
lists rank it first for such a query — it holds the heading's words, in order, and little
else — while the passage the user wants is the section under that heading. A chunk is a
**listing** when it holds at least :data:`MIN_ENTRIES` section numbers (``12.1.``, ``3.2.4``,
in any script's digits) each opening a heading (followed by a capital, or a letter of a script
without case) and at least :data:`MIN_DENSITY` of them per word: the numbered headings of a
contents page, not a passage that cites a section now and then.

With per-query fusion (:mod:`ragkit.search.per_query`) a listing among the fused ranking's
top :data:`HEAD` keeps :data:`WEIGHT` of its fused score, and it does not count as a chunk
holding the query as a phrase (:mod:`ragkit.search.phrase`): a contents page quotes every
heading word for word, which is not the evidence of a lookup. Chosen on the tuning part of
``benchmarks/feedback.py`` (``experiments/fusion/perquery``): the Debian handbook's tuning
headings +0.025 (English) and +0.021 (Arabic) nDCG@10 from the demotion alone, every other
tuning set within 0.001; the figures held over 2–5 entries, densities 0.05–0.12 and weights
0.5–0.7.

Example:
    >>> is_listing("12.1. RAID and LVM 12.1.1. Software RAID 12.1.2. LVM 12.1.3. RAID or LVM?")
    True
    >>> is_listing("As section 4.2 explains, the installer sets up RAID before LVM.")
    False
    >>> demoted([(1, 1.0), (2, 0.8), (3, 0.2)], {1})
    [(2, 0.8), (1, 0.7), (3, 0.2)]
"""

from __future__ import annotations

import re
from collections.abc import Collection

from ragkit.search.fusion import Ranking

__all__ = ["HEAD", "MIN_DENSITY", "MIN_ENTRIES", "WEIGHT", "demoted", "is_listing"]

MIN_ENTRIES = 3
MIN_DENSITY = 0.08  # section numbers per word
WEIGHT = 0.7  # the share of its fused score a listing keeps
HEAD = 20  # the fused ranking's chunks checked (their texts are read)

# "12.1." or "3.2.4" standing alone, then the first letter after it (past a bidi mark): two or
# more numbers joined by dots, not inside a word or a version ("v1.2.3", "BSL-1.0",
# "HTTP/1.1"), and not followed by a label ("10.45  L2:", a table of measurements); at the end
# of the text (a contents page cut mid-entry) it counts as well.
SECTION_NUMBER = re.compile(
    r"(?<![\w./-])\d+(?:\.\d+)+\.?(?:\s+[\u200e\u200f\u061c]?(\w)(?!\w*:)|\s*$)"
)


def _opens_heading(first: str | None) -> bool:
    """A heading starts with a capital or a letter of a script without case; prose cites
    sections mid-sentence ("see 4.2 for"), tables put numbers after numbers ("6.4.1 301")."""
    return first is None or (first.isalpha() and not first.islower())


def is_listing(text: str) -> bool:
    """Whether ``text`` is a table of contents (see the module's description)."""
    entries = sum(_opens_heading(m.group(1)) for m in SECTION_NUMBER.finditer(text))
    return entries >= MIN_ENTRIES and entries >= MIN_DENSITY * max(len(text.split()), 1)


def demoted(scored: Ranking, listings: Collection[int], weight: float = WEIGHT) -> Ranking:
    """``scored`` (best first) with the ``listings`` among it keeping ``weight`` of their
    score, best first again (ties keep their order)."""
    kept = [(i, s * weight if i in listings else s) for i, s in scored]
    return sorted(kept, key=lambda item: -item[1])
