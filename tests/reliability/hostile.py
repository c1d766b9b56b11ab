"""A corpus of hostile inputs for the loaders, each with the outcome ingest must report.

``build(folder)`` writes files that break naive loaders — binary data, broken and mixed
encodings, empty files, a 200 MB file (sparse: no disk or memory spent), deeply nested and
malformed HTML, truncated and encrypted PDFs (real ones, made with pypdf), a PDF
decompression bomb, JSONL with bad lines, symbolic-link loops, odd and non-UTF-8 names, a FIFO
and an unreadable file — next to a few good files with odd shapes, and returns one :class:`Case` per file or JSONL line: either it
must be ingested (``expect == ""``) or skipped with a reason containing ``expect``.

Used by ``test_hostile.py`` and ``benchmarks/hostile.py`` (which imports it as
``tests.reliability.hostile``: keep it free of test-only imports such as ``conftest``).
"""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from pypdf import PdfWriter
from pypdf.generic import DictionaryObject, NameObject, StreamObject

from ragkit.documents.discovery import display_path

HUGE_BYTES = 200 * 2**20
UNREADABLE = "unreadable.txt"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Case:
    """One hostile input; names are relative to the corpus folder, as ragkit reports them."""

    name: str  # a skipped path, or the key of an ingested document (``file.jsonl#id``)
    expect: str  # "" = ingested; otherwise a substring of the reported skip reason
    what: str


def text_pdf(text: str) -> bytes:
    """A one-page PDF whose page shows ``text`` in Helvetica (real text, extractable)."""
    writer = PdfWriter()
    page = writer.add_blank_page(width=400, height=200)
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    fonts = DictionaryObject({NameObject("/F1"): writer._add_object(font)})
    page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): fonts})
    content = StreamObject()
    content.set_data(f"BT /F1 12 Tf 20 100 Td ({text}) Tj ET".encode("latin-1"))
    page[NameObject("/Contents")] = writer._add_object(content)
    return _write(writer)


def encrypted_pdf(text: str, user_password: str) -> bytes:
    """``text_pdf(text)`` encrypted with AES-256; ``user_password=""`` needs only an owner one."""
    from pypdf import PdfReader

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(text_pdf(text))))
    writer.encrypt(user_password=user_password, owner_password="owner-pw", algorithm="AES-256")
    return _write(writer)


def bomb_pdf(mebibytes: int, pages: int) -> bytes:
    """A small PDF whose ``pages`` share one Flate stream unpacking to ``mebibytes`` MiB of
    text operators (a decompression bomb: ~60 KB for 40 MiB)."""
    writer = PdfWriter()
    line = b"BT /F1 12 Tf 20 100 Td (boom boom boom boom) Tj ET\n"
    stream = StreamObject()
    stream._data = zlib.compress(line * (mebibytes * 2**20 // len(line)), 9)
    stream[NameObject("/Filter")] = NameObject("/FlateDecode")
    shared = writer._add_object(stream)
    for _ in range(pages):
        writer.add_blank_page(width=400, height=200)[NameObject("/Contents")] = shared
    return _write(writer)


def _write(writer: PdfWriter) -> bytes:
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def _jsonl(folder: Path) -> list[Case]:
    lines = [
        (json.dumps({"id": "ok1", "text": "Rivers carry sediment to the sea."}), "", "good"),
        ('{"id": "cut", "text": "truncated', "invalid JSON", "truncated line"),
        ("[1, 2, 3]", "not a JSON object", "array line"),
        (json.dumps({"text": "no id here"}), "needs an 'id'", "record without id"),
        (json.dumps({"id": "n", "text": 5}), "string 'text'", "non-string text"),
        ('{"id": "big", "text": "x", "n": ' + "9" * 5000 + "}", "invalid JSON", "5000 digits"),
        ("[" * 100_000 + "]" * 100_000, "nested deeper", "nesting 100k deep"),
        ('{"id": "s", "text": "lone \\ud800 surrogate"}', "surrogate", "unpaired surrogate"),
        (json.dumps({"id": "ok1", "text": "Same id again."}), "already used on line 1", "dup id"),
        (
            json.dumps({"id": "ls", "text": "Line\u2028separator inside"}, ensure_ascii=False),
            "",
            "U+2028 inside a string",
        ),
        (json.dumps({"id": "blank", "text": "   "}), "empty text", "blank text"),
        ("\x0c", "", "form feed only (a blank line)"),
    ]
    (folder / "records.jsonl").write_text("\n".join(line for line, _, _ in lines) + "\n")
    cases = [Case("records.jsonl#ok1", "", "JSONL: good record")]
    cases.append(Case("records.jsonl#ls", "", "JSONL: U+2028 inside a string"))
    for number, (_, expect, what) in enumerate(lines, start=1):
        if expect:
            cases.append(Case(f"records.jsonl:{number}", expect, f"JSONL: {what}"))
    return cases


def build(folder: Path, huge_bytes: int = HUGE_BYTES) -> list[Case]:
    """Write the hostile corpus into ``folder`` (created) and return its cases."""
    folder.mkdir(parents=True, exist_ok=True)
    cases: list[Case] = []

    def put(name: str, data: bytes | str, expect: str, what: str) -> None:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        cases.append(Case(name, expect, what))

    put("good.txt", "Glaciers carve deep valleys in mountains.\n", "", "plain good file")
    put("binary.txt", bytes(range(256)) * 64, "binary", "all byte values")
    put("image.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 64, "binary", "PNG as .md")
    put("late-nul.txt", "text " * 4000 + "\x00tail", "binary", "NUL after 20 kB of text")
    put("latin1.txt", "café au lait".encode("latin-1"), "", "Latin-1 (read as cp1252)")
    put("junk.txt", bytes(range(1, 256)) * 4, "no 8-bit encoding reads it", "8-bit junk")
    mixed = "naïve UTF-8 then ".encode() + "Latin-1 é".encode("latin-1")
    put("mixed.md", mixed, "not valid UTF-8 at byte 26", "UTF-8 then Latin-1 (damaged UTF-8)")
    put("utf16-odd.txt", b"\xff\xfe" + "odd".encode("utf-16-le") + b"\x41", "UTF-16", "odd UTF-16")
    put("utf16.txt", "\ufeffUTF-16 text about tides.".encode("utf-16-le"), "", "UTF-16 with BOM")
    put("empty.txt", b"", "empty", "zero bytes")
    put("blank.md", " \t\n\u3000\n\u00a0\n", "empty", "whitespace only")
    put("bom-only.txt", b"\xef\xbb\xbf", "empty", "UTF-8 BOM only")
    put("control.txt", "Bells \x07 and \x1b[31m escapes rang.\n", "", "control characters")
    with (folder / "huge.txt").open("wb") as handle:  # sparse: 200 MB long, nothing stored
        handle.write(b"Huge file begins with text.\n")
        handle.truncate(huge_bytes)
    cases.append(Case("huge.txt", "over the", f"{huge_bytes // 2**20} MB sparse file"))
    depth = 50_000
    put("nested.html", "<div>" * depth + "Deep text survives." + "</div>" * depth, "", "nested")
    malformed = (
        '<html><body><p class="x>unclosed attribute<p>Para <b><i>crossed</b></i> tags'
        "</table></td>&#xffffffff; &bogus; &#0; <![CDATA[ x ]]> <!-- never closed <p>tail"
    )
    put("malformed.html", malformed, "", "malformed HTML")
    put("script-only.html", "<script>var a = 1;</script><style>p{}</style>", "empty", "no text")
    put("latin1.html", "<p>café</p>".encode("latin-1"), "", "Latin-1 HTML (read as cp1252)")
    pdf = text_pdf("Pressure waves travel through the gas.")
    put("good.pdf", pdf, "", "real PDF")
    put("truncated.pdf", pdf[: len(pdf) // 3], "unreadable PDF", "PDF cut to a third")
    put("header-only.pdf", b"%PDF-1.7\n", "unreadable PDF", "PDF header only")
    put("not-a.pdf", "just text, no PDF", "unreadable PDF", "text named .pdf")
    put("locked.pdf", encrypted_pdf("Secret text.", "user-pw"), "encrypted", "user password")
    put("owner-only.pdf", encrypted_pdf("Open text.", ""), "", "owner password only")
    put("bomb.pdf", bomb_pdf(40, 20), "decompression bomb", "20 pages share a 40 MiB stream")
    cases.extend(_jsonl(folder))
    put("blank.jsonl", "\n \n\n", "empty", "JSONL with blank lines only")
    (folder / "loop-a.txt").symlink_to("loop-b.txt")
    (folder / "loop-b.txt").symlink_to("loop-a.txt")
    (folder / "self.md").symlink_to("self.md")
    (folder / "dangling.txt").symlink_to("missing-target.txt")
    (folder / "sub").mkdir()
    (folder / "sub" / "up").symlink_to("..")
    cases += [
        Case("loop-a.txt", "symbolic link loop", "two links pointing at each other"),
        Case("loop-b.txt", "symbolic link loop", "two links pointing at each other"),
        Case("self.md", "symbolic link loop", "link to itself"),
        Case("dangling.txt", "broken symbolic link", "link to a missing file"),
        Case("sub/up", "symbolic link to a folder", "folder link loop (sub/up -> ..)"),
    ]
    put("with space.txt", "Spaces in names are fine.\n", "", "space in name")
    put("new\nline.txt", "A newline in a file name.\n", "", "newline in name")
    put("مرحبا بالعالم.txt", "Right-to-left names work.\n", "", "Arabic (RTL) name")
    put("\u202etxt.exe.txt", "A bidi override in a name.\n", "", "RLO in name")
    raw_name = os.fsdecode(b"caf\xe9-latin1-name.txt")
    (folder / raw_name).write_text("Name bytes are Latin-1.\n")
    cases.append(Case(display_path(raw_name), "not valid UTF-8", "non-UTF-8 bytes in name"))
    put("image.png", b"\x89PNG", "unsupported file type", "unsupported suffix")
    os.mkfifo(folder / "pipe.txt")
    cases.append(Case("pipe.txt", "not a regular file", "FIFO named .txt"))
    put(UNREADABLE, "Nobody may read this.\n", "cannot read (Permission denied)", "chmod 000")
    (folder / UNREADABLE).chmod(0)
    put(".hidden.txt", "Hidden files are ignored.\n", "", "hidden (not listed)")
    cases.pop()  # hidden files are passed over silently, by design
    return cases


def mismatches(cases: list[Case], skipped: dict[str, str], keys: set[str]) -> list[str]:
    """Where an outcome differs from the cases: ``skipped`` maps each reported name (relative)
    to its reason, ``keys`` holds the relative keys of the ingested documents."""
    problems = []
    left = dict(skipped)
    for case in cases:
        if not case.expect and case.name not in keys:
            problems.append(f"{case.what}: {case.name!r} not ingested")
        elif case.expect and case.expect not in left.pop(case.name, ""):
            problems.append(f"{case.what}: {case.name!r} not reported with {case.expect!r}")
    problems += [f"{name!r} reported but not a case: {reason}" for name, reason in left.items()]
    expected = {c.name for c in cases if not c.expect}
    problems += [f"{key!r} ingested but not a case" for key in sorted(keys - expected)]
    return problems


def expected_for(cases: list[Case], reads_unreadable: bool) -> list[Case]:
    """The cases, with the mode-000 file expected to load when the reader bypasses permissions."""
    if not reads_unreadable:
        return cases
    return [Case(c.name, "", c.what) if c.name == UNREADABLE else c for c in cases]


def relative(path: str, folder: Path) -> str:
    """A reported path (display form) relative to the corpus folder."""
    return path.removeprefix(display_path(folder) + "/")


def summary_skips(stdout: str, folder: Path) -> dict[str, str]:
    """The skipped entries ``ragkit ingest`` printed (``  PATH: REASON`` lines), by name."""
    entries = (line.strip().partition(": ") for line in stdout.splitlines() if line[:2] == "  ")
    return {relative(path, folder): reason for path, _, reason in entries}


def reader_prefix() -> tuple[list[str], bool]:
    """A command prefix under which mode 000 means unreadable, and whether the command will
    still read such files (root where ``setpriv`` cannot drop CAP_DAC_OVERRIDE)."""
    if not root_reads_everything():
        return [], False
    prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]
    probe = subprocess.run([*prefix, "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        log.warning("setpriv cannot drop CAP_DAC_OVERRIDE here: %s", probe.stderr.decode())
        return [], True
    return prefix, False


def root_reads_everything() -> bool:
    """True when this process bypasses file permissions (root with CAP_DAC_OVERRIDE)."""
    if os.geteuid() != 0:
        return False
    with tempfile.NamedTemporaryFile() as probe:
        os.chmod(probe.name, 0)
        return os.access(probe.name, os.R_OK)
