"""Which version of the language rules decided an index's document languages.

A document's language (:func:`ragkit.normalize.detect.identify`) picks its normalizer, its
sparse terms and its tokenizer, and is stored with it. When a ragkit release decides some text
differently (Pashto used to be read as Persian), the stored languages stay those of the
release that ingested the document until the index is re-analyzed. Each commit therefore
records, in the ``state`` table, the oldest :data:`~ragkit.normalize.detect.RULES_VERSION` its
documents were decided by (``0``: an index with documents from before the version was
recorded), and :func:`outdated` names the stored languages that a later version may decide
differently.

Example:
    >>> outdated(1, {"fa", "en"}, now=3)
    ['fa']
    >>> outdated(3, {"fa", "en"}, now=3)
    []
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection

from ragkit.normalize.detect import RULES_CHANGES, RULES_VERSION

STATE_KEY = "language_rules"


def read(db: sqlite3.Connection) -> int | None:
    """The recorded version (``None`` when nothing was recorded)."""
    row = db.execute("SELECT value FROM state WHERE key = ?", (STATE_KEY,)).fetchone()
    return int(row[0]) if row else None


def after_commit(recorded: int | None, had_documents: bool, now: int = RULES_VERSION) -> int:
    """The version to record after a commit that decided its new documents by ``now``.

    Example:
        >>> after_commit(None, False, now=3), after_commit(None, True, now=3)
        (3, 0)
        >>> after_commit(2, had_documents=True)
        2
    """
    if recorded is None:
        return 0 if had_documents else now
    return min(recorded, now)


def write(db: sqlite3.Connection, version: int) -> None:
    """Store ``version`` (inside the caller's transaction)."""
    db.execute("INSERT OR REPLACE INTO state(key, value) VALUES (?, ?)", (STATE_KEY, str(version)))


def outdated(recorded: int, held: Collection[str], now: int = RULES_VERSION) -> list[str]:
    """Languages in ``held`` whose documents the rule versions after ``recorded`` (up to
    ``now``) may decide differently (:data:`~ragkit.normalize.detect.RULES_CHANGES`)."""
    changed: set[str] = set()
    for version in range(recorded + 1, now + 1):
        changed |= RULES_CHANGES.get(version, frozenset())
    return sorted(changed & set(held))


def notes(folder: object, db: sqlite3.Connection) -> list[str]:
    """``ragkit doctor`` notes on the index in ``db`` (empty: its languages are current, or
    it holds no language a newer version decides differently)."""
    recorded = read(db)
    held = [language for (language,) in db.execute("SELECT DISTINCT language FROM documents")]
    languages = outdated(0 if recorded is None else recorded, held)
    if not languages:
        return []
    note = (
        f"{folder}: the languages of its {', '.join(languages)} documents were decided by"
        " older rules than this ragkit's, which tell some of them apart better (Pashto,"
        " Sindhi and Uyghur used to read as Persian, Arabic or Sorani; Korean and Thai as"
        f" undetermined; Japanese as Chinese); run `ragkit doctor --index {folder}"
        " --reanalyze` once to decide them again"
    )
    return [note]
