"""Bytes to text: UTF-8 or UTF-16 as written, else a legacy 8-bit encoding guessed and checked.

Text files are UTF-8 (with or without a byte-order mark) or UTF-16 with one
(:func:`decode_text`, what JSON, JSONL, CSV and the command line's text arguments take). A
text file or web page that is not valid UTF-8 is often older than UTF-8 — a Debian changelog
in Latin-1, notes saved by Windows in cp1252 — and is read through ``charset-normalizer``
(:func:`decode_document`), whose guess must hold:

- some 8-bit encoding reads every byte with little mess (charset-normalizer's own measure of
  out-of-place symbols and letters, at most :data:`MAX_MESS`);
- cp1252 wins when it is one of the cleanest readings, or one with little mess while the
  text has too few non-ASCII bytes (:data:`MIN_EVIDENCE`) to tell encodings apart: it is the
  commonest legacy encoding of Western text (Latin-1's printable characters and more), and a
  mostly-ASCII changelog with one "Kämpf" reads as Big5 or Shift JIS just as cleanly to a
  detector that has two bytes to go on;
- otherwise the other Windows code pages among the cleanest readings (far commoner than the
  Mac and DOS ones that read the same bytes almost alike), then charset-normalizer's first,
  if there are enough non-ASCII bytes;
- the text has no control characters besides tabs, line and page breaks (binary data);
- the bytes are not mostly valid UTF-8 sequences with a few bad ones (a damaged UTF-8 file
  read as cp1252 would turn every accented letter into two wrong ones).

Anything else is refused with the reason. The encoding a guess found is kept in the
document's metadata (``encoding``).

Example:
    >>> decode_document("Müller, café".encode("latin-1"), Path("a.txt"))
    Decoded(text='Müller, café', encoding='cp1252')
    >>> decode_document("Müller".encode(), Path("a.txt")).encoding is None
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragkit.errors import RagkitError

MAX_MESS = 0.2  # charset-normalizer's "chaos" of a reading, 0 (clean) to 1
MIN_EVIDENCE = 16  # non-ASCII bytes below which only a cp1252 reading is trusted
# After cp1252, among equally clean readings, the first of these that is one of them.
WINDOWS = ("cp1250", "cp1251", "cp1253", "cp1254", "cp1255", "cp1256", "cp1257", "cp1258")
# Control characters no text file holds: C0 but tab, line feed, vertical tab, form feed,
# carriage return and escape; DEL; C1 (what Latin-1 makes of cp1252's punctuation bytes).
_CONTROLS = re.compile("[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f-\x9f]")
_UTF8_SEQUENCE = re.compile(
    rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}"
)
_NON_ASCII = re.compile(rb"[\x80-\xff]")
_C1_BYTES = re.compile(rb"[\x80-\x9f]")


@dataclass(frozen=True)
class Decoded:
    """A file's text and, when it was not UTF-8 or UTF-16, the legacy encoding it was read in."""

    text: str
    encoding: str | None = None


def decode_text(data: bytes, path: Path) -> str:
    """UTF-8 (with or without BOM) or UTF-16 with BOM; anything else is refused.

    Example:
        >>> decode_text("café".encode("latin-1"), Path("a.txt"))
        Traceback (most recent call last):
        ...
        ragkit.errors.RagkitError: a.txt: not valid UTF-8 at byte 3; re-encode the file as UTF-8
    """
    try:
        return _unicode(data, path)
    except UnicodeDecodeError as error:
        encoding = "UTF-16" if _utf16(data) else "UTF-8"
        raise RagkitError(
            f"{path}: not valid {encoding} at byte {error.start}; re-encode the file as UTF-8"
        ) from error


def decode_document(data: bytes, path: Path) -> Decoded:
    """A text file's text: UTF-8 or UTF-16 as :func:`decode_text`, else the legacy 8-bit
    encoding :mod:`ragkit.documents.encodings` guesses and checks.

    Raises:
        RagkitError: no encoding reads it as text with confidence (the reason is named).

    Example:
        >>> decode_document(bytes(range(128, 256)) * 4, Path("a.bin"))
        Traceback (most recent call last):
        ...
        ragkit.errors.RagkitError: a.bin: not valid UTF-8 at byte 0, and no 8-bit encoding reads it as text (binary?)
    """
    try:
        return Decoded(_unicode(data, path))
    except UnicodeDecodeError as error:
        if _utf16(data):
            raise RagkitError(
                f"{path}: not valid UTF-16 at byte {error.start}; re-encode the file as UTF-8"
            ) from error
        where = f"{path}: not valid UTF-8 at byte {error.start}"
        return _legacy(data, where)


def _utf16(data: bytes) -> bool:
    return data.startswith((b"\xff\xfe", b"\xfe\xff"))


def _unicode(data: bytes, path: Path) -> str:
    """``data`` as UTF-16 (with its BOM) or UTF-8; NUL bytes outside UTF-16 are refused."""
    if _utf16(data):
        return data.decode("utf-16")
    if b"\x00" in data:
        raise RagkitError(f"{path}: looks binary (NUL bytes), not text")
    return data.decode("utf-8-sig")


def _legacy(data: bytes, where: str) -> Decoded:
    """The legacy 8-bit reading of ``data`` that holds, or the refusal naming ``where``."""
    from charset_normalizer import from_bytes

    non_ascii = len(_NON_ASCII.findall(data))
    in_sequences = sum(len(m) for m in _UTF8_SEQUENCE.findall(data))
    if in_sequences * 2 >= non_ascii:
        raise RagkitError(
            f"{where}, though most of its other non-ASCII bytes are UTF-8: a damaged UTF-8 "
            "file; repair or re-encode it"
        )
    readings = [
        match
        for match in from_bytes(data, threshold=MAX_MESS)
        if not match.encoding.startswith("utf")  # UTF-16 and UTF-32 need their byte-order mark
    ]
    if not readings:
        raise RagkitError(f"{where}, and no 8-bit encoding reads it as text (binary?)")
    cleanest = min(match.chaos for match in readings)
    western = [match.chaos for match in readings if _reads_as_cp1252(match, data)]
    if western and (min(western) <= cleanest or non_ascii < MIN_EVIDENCE):
        encoding = "cp1252"
    else:
        tied = [
            name
            for match in readings
            if match.chaos <= cleanest
            for name in match.could_be_from_charset
        ]
        encoding = next((name for name in tied if name in WINDOWS), tied[0])
        if non_ascii < MIN_EVIDENCE:
            raise RagkitError(
                f"{where}, and its {non_ascii} non-ASCII bytes are too few to tell the "
                f"encoding (best guess {encoding}); re-encode the file as UTF-8"
            )
    text = data.decode(encoding)
    control = _CONTROLS.search(text)
    if control:
        raise RagkitError(
            f"{where}; read as {encoding} it holds control character "
            f"U+{ord(control.group()):04X} (binary?); re-encode the file as UTF-8"
        )
    return Decoded(text, encoding)


def _reads_as_cp1252(match: Any, data: bytes) -> bool:
    """Whether charset-normalizer's reading ``match`` is cp1252's: cp1252 among the encodings
    that read the bytes alike, or Latin-1 with no byte in 0x80–0x9F (where the two differ)."""
    alike = match.could_be_from_charset
    return "cp1252" in alike or ("latin_1" in alike and not _C1_BYTES.search(data))
