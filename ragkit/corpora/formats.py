"""Readers for the file formats text is found in inside packages.

Gettext catalogues (``.mo``), Mozilla Fluent (``.ftl``) and ``.properties`` files, HTML
fragments, and the word DAWG of a Tesseract language model.
"""

from __future__ import annotations

import html
import re
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ragkit.errors import RagkitError

SCRIPTS: dict[str, str] = {
    "ethiopic": "\u1200-\u139f\u2d80-\u2ddf\uab00-\uab2f",
    "arabic": "\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufeff",
    "latin": "A-Za-z",
    "cyrillic": "\u0400-\u04ff",
    "greek": "\u0370-\u03ff",
    "hebrew": "\u05d0-\u05ea",
    "devanagari": "\u0900-\u097f",
    "thai": "\u0e00-\u0e7f",
    "hangul": "\u1100-\u11ff\uac00-\ud7af",
    "kana": "\u3040-\u30ff",
    "han": "\u3400-\u4dbf\u4e00-\u9fff",
}


@dataclass(frozen=True)
class CatalogEntry:
    """One message of a gettext catalogue: context (may be empty), source and translation."""

    context: str
    msgid: str
    msgstr: str


def read_mo(data: bytes) -> list[CatalogEntry]:
    """Messages of a compiled gettext catalogue, header entry left out.

    Plural translations are joined with a newline. Both byte orders are read.

    Example:
        >>> mo = build_mo({"hello": "ሰላም"})
        >>> read_mo(mo)
        [CatalogEntry(context='', msgid='hello', msgstr='ሰላም')]
    """
    if len(data) < 28:
        raise RagkitError("not a .mo file: shorter than its 28-byte header")
    for order in ("<", ">"):
        if struct.unpack(f"{order}I", data[:4])[0] == 0x950412DE:
            break
    else:
        raise RagkitError("not a .mo file: bad magic number")
    _, count, ids_at, strs_at = struct.unpack(f"{order}4I", data[4:20])
    entries: list[CatalogEntry] = []
    for i in range(count):
        id_len, id_off = struct.unpack_from(f"{order}2I", data, ids_at + 8 * i)
        str_len, str_off = struct.unpack_from(f"{order}2I", data, strs_at + 8 * i)
        raw_id = data[id_off : id_off + id_len].decode("utf-8", errors="replace")
        raw_str = data[str_off : str_off + str_len].decode("utf-8", errors="replace")
        context, _, msgid = raw_id.rpartition("\x04")
        if not msgid and not context:
            continue  # the header
        entries.append(CatalogEntry(context, msgid.split("\x00")[0], raw_str.replace("\x00", "\n")))
    return entries


def build_mo(messages: dict[str, str]) -> bytes:
    """A little-endian ``.mo`` holding ``messages`` (``"ctx\\x04id"`` keys carry a context).

    For tests and examples; the header entry declares UTF-8.

    Example:
        >>> build_mo({})[:4] == (0x950412DE).to_bytes(4, "little")
        True
    """
    header = "Content-Type: text/plain; charset=UTF-8\n"
    items = sorted({"": header, **messages}.items())
    ids = [key.encode() for key, _ in items]
    strs = [value.encode() for _, value in items]
    count = len(items)
    ids_at = 28
    strs_at = ids_at + 8 * count
    offset = strs_at + 8 * count
    id_table, str_table, blob = b"", b"", b""
    for raw in ids:
        id_table += struct.pack("<2I", len(raw), offset + len(blob))
        blob += raw + b"\x00"
    for raw in strs:
        str_table += struct.pack("<2I", len(raw), offset + len(blob))
        blob += raw + b"\x00"
    start = struct.pack("<7I", 0x950412DE, 0, count, ids_at, strs_at, 0, offset)
    return start + id_table + str_table + blob


_PLACEABLE = re.compile(r"\{[^{}]*\}")
_FTL_KEY = re.compile(r"^-?[A-Za-z][\w-]*\s*=\s?(.*)$")
_FTL_ATTRIBUTE = re.compile(r"^\.[A-Za-z][\w-]*\s*=\s?(.*)$")
_FTL_VARIANT = re.compile(r"^\*?\[[^\]]+\]\s*(.*)$")


def fluent_values(text: str) -> list[str]:
    """The text of each message, attribute and select variant of a Fluent (``.ftl``) file.

    Placeables (``{ $name }``, ``{ -brand-short-name }``) are dropped; multi-line values are
    joined with spaces.

    Example:
        >>> fluent_values("# c\\nhi = Hello { $user }\\n    .title = Greeting\\n")
        ['Hello', 'Greeting']
    """
    values: list[str] = []
    current: list[str] = []

    def flush() -> None:
        value = " ".join(" ".join(current).split())
        if value:
            values.append(value)
        current.clear()

    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            if not line.startswith(" "):
                flush()
            continue
        if not line[0].isspace():
            flush()
            match = _FTL_KEY.match(stripped)
            if match:
                current.append(_text_of(match.group(1)))
            continue
        for pattern in (_FTL_ATTRIBUTE, _FTL_VARIANT):
            match = pattern.match(stripped)
            if match:
                flush()
                current.append(_text_of(match.group(1)))
                break
        else:
            current.append(_text_of(stripped))
    flush()
    return values


def _text_of(fragment: str) -> str:
    while _PLACEABLE.search(fragment):
        fragment = _PLACEABLE.sub(" ", fragment)
    # An unclosed brace opens a select expression whose variants follow on their own lines.
    return fragment.split("{", 1)[0].replace("}", " ")


def properties_values(text: str) -> list[str]:
    """Values of a Java-style ``.properties`` file (``key = value``, ``#`` comments).

    Example:
        >>> properties_values("# note\\nok=Done\\nbad\\n")
        ['Done']
    """
    values = []
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() and not line.lstrip().startswith(("#", "!")):
            value = value.strip().replace("\\n", "\n")
            if value:
                values.append(value)
    return values


_TAG = re.compile(r"<[^>]+>")


def strip_html(fragment: str) -> str:
    """Plain text of an HTML fragment: tags become spaces, entities are decoded.

    Example:
        >>> strip_html("<p>a &amp; b</p><p>c</p>")
        'a & b\\nc'
    """
    fragment = re.sub(r"</p>|<br\s*/?>", "\n", fragment, flags=re.IGNORECASE)
    lines = (" ".join(line.split()) for line in html.unescape(_TAG.sub(" ", fragment)).split("\n"))
    return "\n".join(line for line in lines if line)


def in_script(text: str, script: str) -> bool:
    """Whether ``text`` has at least one letter of ``script`` (a key of :data:`SCRIPTS`).

    Example:
        >>> in_script("ሰላም world", "ethiopic"), in_script("hello", "arabic")
        (True, False)
    """
    return re.search(f"[{SCRIPTS[script]}]", text) is not None


def drop_accelerators(text: str, script: str) -> str:
    """``text`` without the keyboard-accelerator marks of UI strings: every ``~``, and an ``_``
    directly before a letter of ``script`` (``أ_ضف`` shows as ``أضف``; ``FILE_NAME`` keeps
    its underscore).

    Example:
        >>> drop_accelerators("أ_ضف ~ملف FILE_NAME", "arabic")
        'أضف ملف FILE_NAME'
    """
    return re.sub(f"_(?=[{SCRIPTS[script]}])", "", text.replace("~", ""))


def tesseract_words(traineddata: Path) -> list[str]:
    """Word forms of a Tesseract model's LSTM word DAWG, in the order ``dawg2wordlist`` lists
    them.

    Needs ``combine_tessdata`` and ``dawg2wordlist`` from Debian's ``tesseract-ocr``.
    """
    for tool in ("combine_tessdata", "dawg2wordlist"):
        if shutil.which(tool) is None:
            raise RagkitError(
                f"{tool} not found, needed to read {traineddata.name}'s word list; on Debian"
                " run `apt-get install tesseract-ocr`"
            )
    with tempfile.TemporaryDirectory() as scratch:
        prefix = Path(scratch) / "model."
        subprocess.run(
            ["combine_tessdata", "-u", str(traineddata), str(prefix)],
            check=True,
            capture_output=True,
        )
        out = Path(scratch) / "words.txt"
        subprocess.run(
            ["dawg2wordlist", f"{prefix}lstm-unicharset", f"{prefix}lstm-word-dawg", str(out)],
            check=True,
            capture_output=True,
        )
        return [w for w in out.read_text(encoding="utf-8").splitlines() if w.strip()]
