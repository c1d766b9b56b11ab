"""Records given from Python (:meth:`ragkit.Index.add`) or as JSONL on standard input
(``ragkit ingest -``): text held in memory — rows of a database, pages of a crawl — indexed
without a file.

A record is a :class:`Record` or a mapping with the same fields: ``id`` (text, or a whole
number) and ``text`` are required; ``metadata`` (a JSON object), ``title`` and ``language``
(an ISO 639 code that overrides detection) are optional. The id is the document's key; every
record of one call shares one ``source``, written ``<name>`` (default ``<records>``) so it can
never be taken for a file path. A record that cannot be a document is reported in
:attr:`~ragkit.documents.types.LoadResult.skipped` with its place and id; the others go on.

Example:
    >>> result = record_documents([{"id": "q1", "text": "Water boils at 100 C."}, {"id": 2}])
    >>> [(d.key, d.source) for d in result.documents]
    [('q1', '<records>')]
    >>> [(s.path, s.reason) for s in result.skipped]
    [("record 2 (id '2')", "no 'text' field")]
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ragkit.documents.checks import record_problem, surrogate_problem
from ragkit.documents.discovery import SkippedFile
from ragkit.documents.formats import text_blocks
from ragkit.documents.jsonl import check_value, parse_line
from ragkit.documents.stream import Pause
from ragkit.documents.types import Document, LoadResult, content_hash
from ragkit.errors import RagkitError
from ragkit.normalize.detect import LanguageGuess, check_language, detect_script

DEFAULT_SOURCE = "<records>"
FIELDS = ("id", "text", "metadata", "title", "language")


@dataclass(frozen=True)
class Record:
    """One text to index, with its id (the document's key) and optional metadata, title and
    language (an ISO 639 code; detected when None).

    Example:
        >>> Record("faq-1", "Water boils at 100 C.", {"year": 2021}).metadata
        {'year': 2021}
    """

    id: str
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    title: str = ""
    language: str | None = None


def is_record_source(source: str) -> bool:
    """Whether ``source`` names given records (``<name>``) rather than a file.

    Example:
        >>> is_record_source("<records>"), is_record_source("/docs/a.txt")
        (True, False)
    """
    return len(source) > 2 and source.startswith("<") and source.endswith(">")


def check_source(source: str) -> str:
    """``source`` when it names given records, else a :class:`RagkitError`.

    Example:
        >>> check_source("crawl")
        Traceback (most recent call last):
        ...
        ragkit.errors.RagkitError: source 'crawl': write a records source in angle brackets, e.g. '<crawl>' (it can never be taken for a file path)
    """
    if not isinstance(source, str) or not is_record_source(source):
        raise RagkitError(
            f"source {source!r}: write a records source in angle brackets, e.g. '<crawl>' (it "
            "can never be taken for a file path)"
        )
    if problem := surrogate_problem(source, f"source {source!r}"):
        raise RagkitError(problem)
    return source


@dataclass(frozen=True)
class Unreadable:
    """An entry a reader could not turn into a record (a JSONL line that does not parse):
    where it was (``line 3``) and why."""

    place: str
    reason: str


@dataclass(frozen=True)
class Placed:
    """A record with the place a reader found it (``line 3``), named in its problems."""

    place: str
    record: Any


class RecordReader:
    """Turns records into documents, one window of them at a time (:meth:`read`), and keeps
    across windows what an id check and a prune need: the ids given, those of skipped records
    (their stored versions are not gone), and whether every entry had an id (``complete``:
    an entry without one may have been any record, so a prune removes nothing).

    Example:
        >>> reader = RecordReader()
        >>> first = reader.read([{"id": "a", "text": "A."}, {"text": "no id"}])
        >>> second = reader.read([{"id": "a", "text": "A again."}])
        >>> [d.key for d in first.documents], [s.reason for s in second.skipped]
        (['a'], ["id 'a' already given by record 1"])
        >>> reader.records_seen, reader.complete, sorted(reader.present())
        (3, False, ['a'])
    """

    def __init__(self, source: str = DEFAULT_SOURCE) -> None:
        self.source = source
        self.records_seen = 0
        self.complete = True
        self.skipped_ids: set[str] = set()
        self._seen: dict[str, int] = {}  # valid ids → the record that gave them

    def read(self, records: Iterable[Any]) -> LoadResult:
        """One document per valid record, in order; each invalid record (not a record, no id
        or text, unknown fields, metadata that is not a JSON object, an unknown language, an
        id given twice, an :class:`Unreadable` entry) is a skipped entry ``record N (id 'ID')``
        (N counts from the first record this reader read)."""
        result = LoadResult()
        for entry in records:
            self.records_seen += 1
            position = self.records_seen
            where = entry.place if isinstance(entry, Placed | Unreadable) else f"record {position}"
            given = entry.record if isinstance(entry, Placed) else entry
            record_id = _id_of(given)
            where += f" (id {record_id!r})" if record_id else ""
            if record_id:
                self.skipped_ids.add(record_id)  # until the record turns out valid
            else:
                self.complete = False
            try:
                record = _checked(given)
            except RagkitError as problem:
                result.skipped.append(SkippedFile(where, str(problem)))
                continue
            if record.id in self._seen:
                reason = f"id {record.id!r} already given by record {self._seen[record.id]}"
                result.skipped.append(SkippedFile(where, reason))
                continue
            self.skipped_ids.discard(record.id)
            self._seen[record.id] = position
            result.documents.append(_document(record, self.source))
        return result

    def present(self) -> set[str]:
        """The ids a prune keeps: every id given, valid or not."""
        return set(self._seen) | self.skipped_ids


def record_documents(records: Iterable[Any], source: str = DEFAULT_SOURCE) -> LoadResult:
    """One document per valid record of ``records``, all read at once
    (:meth:`RecordReader.read`)."""
    return RecordReader(source).read(records)


def jsonl_records(lines: Iterable[bytes | Pause]) -> Iterator[Any]:
    """The records of JSONL ``lines`` (``ragkit ingest -``: one JSON object per line; blank
    lines are passed over), each :class:`Placed` at its line; a line refused as a ``.jsonl``
    file's line is (:func:`ragkit.documents.jsonl.parse_line`: not JSON, nested too deep, a
    lone surrogate) is an :class:`Unreadable`; a byte order mark opening line 1 is dropped. A
    :class:`~ragkit.documents.stream.Pause` among the lines is passed on.

    Example:
        >>> records = jsonl_records([b'{"id": "a", "text": "A."}\\n', b"\\n", b"{oops\\n"])
        >>> [(r.place, getattr(r, "reason", "")) for r in records]
        [('line 1', ''), ('line 3', 'invalid JSON (Expecting property name enclosed in double quotes)')]
    """
    number = 0
    for raw in lines:
        if isinstance(raw, Pause):  # a producer gone quiet (ragkit.documents.stream)
            yield raw
            continue
        number += 1
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            reason = f"not UTF-8 text ({error.reason} at byte {error.start})"
            yield Unreadable(f"line {number}", reason)
            continue
        if not line.strip():
            continue
        try:
            yield Placed(f"line {number}", parse_line(line, first=number == 1))
        except RagkitError as problem:
            yield Unreadable(f"line {number}", str(problem))


def _id_of(given: Any) -> str:
    """The record's id as text when it has a usable one (for naming it in reports)."""
    value = given.id if isinstance(given, Record) else _get(given, "id")
    if isinstance(value, bool) or not isinstance(value, str | int):
        return ""
    return str(value)


def _get(given: Any, name: str) -> Any:
    return given.get(name) if isinstance(given, Mapping) else None


def _checked(given: Any) -> Record:
    """``given`` as a valid :class:`Record`, or a :class:`RagkitError` saying what is wrong."""
    if isinstance(given, Unreadable):
        raise RagkitError(given.reason)
    if isinstance(given, Record):
        fields = asdict(given)
    elif isinstance(given, Mapping):
        unknown = sorted(str(name) for name in given if name not in FIELDS)
        if unknown:
            raise RagkitError(
                f"unknown field(s) {', '.join(map(repr, unknown))} (a record has "
                f"{', '.join(FIELDS)}; put other values in 'metadata')"
            )
        fields = dict(given)
    else:
        raise RagkitError(
            f"a {type(given).__name__}, not a record (a ragkit.Record or a dict with 'id' "
            "and 'text')"
        )
    record_id = fields.get("id")
    if isinstance(record_id, bool) or not isinstance(record_id, str | int):
        raise RagkitError(
            "no 'id' (text or a whole number)"
            if record_id is None
            else f"'id' is a {type(record_id).__name__}, not text or a whole number"
        )
    if not str(record_id).strip():
        raise RagkitError("empty 'id'")
    text = fields.get("text")
    if not isinstance(text, str):
        raise RagkitError(
            "no 'text' field" if text is None else f"'text' is a {type(text).__name__}, not text"
        )
    if not text.strip():
        raise RagkitError("empty text")
    title = fields.get("title") or ""
    if not isinstance(title, str):
        raise RagkitError(f"'title' is a {type(title).__name__}, not text")
    if problem := record_problem({"id": record_id, "text": text, "title": title}):
        raise RagkitError(problem)
    metadata = fields.get("metadata") or {}
    _check_metadata(metadata)
    language = fields.get("language")
    if language is not None:
        if not isinstance(language, str):
            raise RagkitError(f"'language' is a {type(language).__name__}, not an ISO 639 code")
        language = check_language(language, "'language'")
    return Record(str(record_id), text, dict(metadata), title, language)


def _check_metadata(metadata: Any) -> None:
    """A JSON object with text keys and finite numbers, whose strings are text (no unpaired
    surrogates), or a :class:`RagkitError`."""
    if not isinstance(metadata, Mapping):
        raise RagkitError(f"'metadata' is a {type(metadata).__name__}, not a JSON object (dict)")
    bad_keys = [key for key in metadata if not isinstance(key, str)]
    if bad_keys:
        raise RagkitError(f"'metadata' key {bad_keys[0]!r} is not text")
    check_value(metadata)  # nested too deep for Python to copy or write it
    try:
        json.dumps(metadata)
    except (TypeError, ValueError) as error:  # a value of another type, a circular reference
        raise RagkitError(f"'metadata' is not JSON ({error})") from error
    if problem := record_problem({"metadata": metadata}):
        raise RagkitError(problem)


def _document(record: Record, source: str) -> Document:
    """The document of a valid record; its content hash covers every field, so a record
    given again unchanged is skipped and any change re-indexes it."""
    fields = asdict(record)
    raw = json.dumps(fields, ensure_ascii=False, sort_keys=True).encode("utf-8")
    document = Document(
        key=record.id,
        source=source,
        text=record.text,
        content_hash=content_hash(raw),
        blocks=text_blocks(record.text),
        title=record.title if record.title != record.text else "",
        external_id=record.id,
        metadata=dict(record.metadata),
        language=record.language or "",
    )
    if record.language:
        script = detect_script(record.text)
        document.decide_language(LanguageGuess(record.language, script, 1.0, "given"))
    return document
