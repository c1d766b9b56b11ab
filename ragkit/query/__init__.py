"""The query side: every per-query option declared once (:class:`SearchOptions`), the hits a
search returns, and the one query sequence (:class:`Search`).
"""

from ragkit.query.options import SearchOptions

__all__ = ["SearchOptions"]
