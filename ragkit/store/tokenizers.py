"""Which tokenizer cut an index's sparse pieces, and whether today's tokenizers still cut them.

Languages without a stemmer (Urdu, Amharic…; every language with ``sparse_terms = "pieces"``)
index SentencePiece pieces of the language's shipped model (:func:`ragkit.search.sparse.
uses_pieces`). A rebuilt model cuts other pieces, so queries stop matching the stored ones
until the index is re-analyzed. Each commit therefore records, in the ``state`` table, the
fingerprint of every model that cut its documents' pieces, and :func:`stale` names each
language whose stored pieces some other model cut.

Example:
    >>> stale({"ur": ["a1"], "am": ["b2"]}, {"ur": "a1", "am": "c3"})
    {'am': ['b2']}
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping

from ragkit.config import Settings
from ragkit.errors import RagkitError
from ragkit.search.sparse import uses_pieces
from ragkit.tokenize import tokenizer_for

STATE_KEY = "tokenizers"
Record = dict[str, list[str]]  # language → fingerprints of the models that cut its pieces


def current(languages: Iterable[str], settings: Settings) -> dict[str, str]:
    """Fingerprint of the model that cuts each language's sparse pieces now (languages whose
    terms are stems, or that have no model installed, are left out)."""
    found: dict[str, str] = {}
    for language in sorted(set(languages)):
        if uses_pieces(language, settings.sparse_terms):
            try:
                found[language] = tokenizer_for(language).fingerprint
            except RagkitError:  # no models installed: regex word tokens, nothing to record
                continue
    return found


def read(db: sqlite3.Connection) -> Record:
    """The recorded fingerprints (empty for an index built before they were recorded)."""
    row = db.execute("SELECT value FROM state WHERE key = ?", (STATE_KEY,)).fetchone()
    return (
        {language: list(prints) for language, prints in json.loads(row[0]).items()} if row else {}
    )


def merged(record: Record, used: Mapping[str, str]) -> Record:
    """``record`` with the fingerprints of one commit's models added.

    Example:
        >>> merged({"ur": ["a1"]}, {"ur": "c3", "am": "b2"})
        {'am': ['b2'], 'ur': ['a1', 'c3']}
    """
    result = {language: list(prints) for language, prints in record.items()}
    for language, fingerprint in used.items():
        prints = result.setdefault(language, [])
        if fingerprint not in prints:
            prints.append(fingerprint)
    return dict(sorted(result.items()))


def write(db: sqlite3.Connection, record: Record) -> None:
    """Store ``record`` (inside the caller's transaction)."""
    db.execute(
        "INSERT OR REPLACE INTO state(key, value) VALUES (?, ?)", (STATE_KEY, json.dumps(record))
    )


def stale(record: Record, now: Mapping[str, str]) -> Record:
    """Languages of ``record`` whose pieces a model other than today's (``now``) cut, with
    those models' fingerprints."""
    return {
        language: [p for p in prints if p != now.get(language)]
        for language, prints in record.items()
        if any(p != now.get(language) for p in prints)
    }


def stale_in(db: sqlite3.Connection, settings: Settings) -> Record:
    """:func:`stale` for the index in ``db``: its recorded fingerprints against today's."""
    recorded = read(db)
    return stale(recorded, current(recorded, settings))


def stale_message(folder: object, found: Record) -> str:
    """What to tell the user about ``found`` (from :func:`stale`).

    Example:
        >>> print(stale_message("idx", {"ur": ["a1"]}))  # doctest: +ELLIPSIS
        idx: sparse pieces of ur were cut by another tokenizer (a1) than ... --reanalyze` once
    """
    prints = sorted({p for found_prints in found.values() for p in found_prints})
    return (
        f"{folder}: sparse pieces of {', '.join(found)} were cut by another tokenizer"
        f" ({', '.join(prints)}) than this ragkit's, so sparse search misses them; run"
        f" `ragkit doctor --index {folder} --reanalyze` once"
    )


def unrecorded(db: sqlite3.Connection, settings: Settings) -> list[str]:
    """Languages of an index built before fingerprints were recorded whose sparse terms are
    pieces (their tokenizer is unknown)."""
    if read(db):
        return []
    held = [language for (language,) in db.execute("SELECT DISTINCT language FROM documents")]
    return sorted(language for language in held if uses_pieces(language, settings.sparse_terms))


def notes(folder: object, db: sqlite3.Connection, settings: Settings) -> list[str]:
    """``ragkit doctor`` notes on the tokenizers of the index in ``db`` (empty: all current)."""
    found = stale_in(db, settings)
    if found:
        return [stale_message(folder, found)]
    unknown = unrecorded(db, settings)
    if not unknown:
        return []
    note = (
        f"{folder}: the tokenizer that cut the sparse pieces of {', '.join(unknown)} was not"
        " recorded (an index built before ragkit recorded it); if ragkit was upgraded since,"
        f" run `ragkit doctor --index {folder} --reanalyze` once"
    )
    return [note]
