"""Records in one file: a ``.json`` document or array, a ``.csv`` / ``.tsv`` table.

The text of a record is one field (``.json``) or column (``.csv``, ``.tsv``): ``text`` unless
:attr:`~ragkit.documents.options.LoadOptions.text_field` names another. ``title`` and ``id``
are used when present; a JSON object's ``metadata`` object is its metadata, otherwise its other
non-empty plain fields (strings, numbers, booleans) are, as a table's other cells are.

A JSON object is one document keyed by the file's absolute path; a JSON array and a table give
one document per record, keyed ``path#id`` (``id`` or ``_id``, else the record's position from 1).
Records without text, with a repeated id, that are not objects, or that hold a value no index
can store (``NaN``, ``Infinity``, an unpaired surrogate: :mod:`ragkit.documents.checks`) are
skipped with their place.

Example:
    >>> import tempfile
    >>> from ragkit.documents.types import LoadResult
    >>> path = Path(tempfile.mkdtemp()) / "faq.csv"
    >>> data = "id,question,answer\\nq1,Boiling?,Water boils at 100 C.\\n".encode()
    >>> result = LoadResult()
    >>> table_documents(data, path, result, "answer")
    >>> document = result.documents[0]
    >>> document.key.endswith("faq.csv#q1"), document.text, document.metadata
    (True, 'Water boils at 100 C.', {'question': 'Boiling?'})
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ragkit.documents.checks import record_problem
from ragkit.documents.compressed import reader_suffix
from ragkit.documents.discovery import SkippedFile, display_path, document_key
from ragkit.documents.encodings import decode_text
from ragkit.documents.formats import text_blocks
from ragkit.documents.types import Document, LoadResult, content_hash
from ragkit.errors import InputRefusedError

_PLAIN = (str, int, float, bool)


def json_documents(data: bytes, path: Path, result: LoadResult, text_field: str) -> None:
    """A JSON object as one document, or a JSON array as one document per object."""
    try:
        parsed = json.loads(decode_text(data, path))
    except (ValueError, RecursionError) as error:  # JSONDecodeError is a ValueError
        raise InputRefusedError(f"{path}: invalid JSON ({error})") from error
    if isinstance(parsed, dict):
        problem = _text_problem(parsed, text_field)
        if problem:
            raise InputRefusedError(f"{path}: {problem}")
        result.documents.append(_document(path, parsed, text_field, None, data))
    elif isinstance(parsed, list):
        _add_records(path, enumerate(parsed, start=1), result, text_field, "[{}]")
    else:
        raise InputRefusedError(
            f"{path}: holds a JSON {type(parsed).__name__}, not an object or array"
        )


def table_documents(data: bytes, path: Path, result: LoadResult, text_field: str) -> None:
    """One document per row of a ``.csv`` (comma) or ``.tsv`` (tab) table with a header row."""
    delimiter = "\t" if reader_suffix(path) == ".tsv" else ","
    reader = csv.DictReader(io.StringIO(decode_text(data, path), newline=""), delimiter=delimiter)
    columns = reader.fieldnames or []
    if text_field not in columns:
        raise InputRefusedError(
            f"{path}: no {text_field!r} column (columns: {', '.join(columns) or 'none'}); "
            "choose the text column with --text-field"
        )
    _add_records(path, _rows(reader, path), result, text_field, ":{}")


def _rows(reader: csv.DictReader[str], path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line number, row)`` of each data row (cells missing at its end left out)."""
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise InputRefusedError(f"{path}: line {reader.line_num}: {error}") from error
        yield (
            reader.line_num,
            {str(k): v for k, v in row.items() if k is not None and v is not None},
        )


def _add_records(
    path: Path,
    records: Iterator[tuple[int, Any]],
    result: LoadResult,
    text_field: str,
    place: str,
) -> None:
    """One document per record; ``place`` formats a record's position for skip reports."""
    seen: dict[str, int] = {}
    for position, record in records:
        where = display_path(path) + place.format(position)
        problem = _text_problem(record, text_field)
        record_id = _record_id(record, position) if not problem else ""
        if not problem and record_id in seen:
            problem = f"id {record_id!r} already used at {place.format(seen[record_id])}"
        if problem:
            result.skipped.append(SkippedFile(where, problem))
            continue
        seen[record_id] = position
        raw = json.dumps(record, ensure_ascii=False, sort_keys=True).encode("utf-8")
        result.documents.append(_document(path, record, text_field, record_id, raw))


def _record_id(record: Mapping[str, Any], position: int) -> str:
    """The record's ``id`` (or ``_id``); its position (a table's line number) when it has
    none or an empty one.

    Example:
        >>> _record_id({"id": " "}, 7), _record_id({"_id": 3}, 7), _record_id({}, 2)
        ('7', '3', '2')
    """
    for name in ("id", "_id"):
        value = record.get(name)
        if value is not None and str(value).strip():
            return str(value)
    return str(position)


def _text_problem(record: Any, text_field: str) -> str | None:
    """Why ``record`` cannot be a document (no text, or a value no index can store:
    :mod:`ragkit.documents.checks`), or None."""
    if not isinstance(record, Mapping):
        return "not a JSON object"
    text = record.get(text_field)
    if not isinstance(text, str):
        return f"no string {text_field!r} field (choose another with --text-field)"
    if not text.strip():
        return "empty text"
    return record_problem(record)


def _document(
    path: Path, record: Mapping[str, Any], text_field: str, record_id: str | None, raw: bytes
) -> Document:
    text = record[text_field]
    title = record.get("title")
    title = title if isinstance(title, str) and title != text else ""
    given = record.get("metadata")
    reserved = {text_field, "title", "id", "_id", "metadata"}
    metadata = (
        dict(given)
        if isinstance(given, Mapping)
        else {
            k: v
            for k, v in record.items()
            if k not in reserved and isinstance(v, _PLAIN) and v != ""
        }
    )
    external_id = record_id if record_id is not None else str(record.get("id", ""))
    return Document(
        key=document_key(path) if record_id is None else f"{document_key(path)}#{record_id}",
        source=document_key(path),
        text=text,
        content_hash=content_hash(raw),
        blocks=text_blocks(text),
        title=title,
        external_id=external_id,
        metadata=metadata,
    )
