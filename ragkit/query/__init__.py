"""The query side: every per-query option declared once (:class:`SearchOptions`), the hits a
search returns (:class:`Hit`, :class:`ExplainedHit`), and the one query sequence
(:class:`Search`).

Example:
    >>> SearchOptions(k=5, feedback="dense").feedback
    'dense'
"""

from ragkit.query.hits import ExplainedHit, Hit
from ragkit.query.options import SearchOptions
from ragkit.query.sequence import Search

__all__ = ["ExplainedHit", "Hit", "Search", "SearchOptions"]
