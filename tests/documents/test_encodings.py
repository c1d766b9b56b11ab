"""Legacy 8-bit files (:mod:`ragkit.documents.encodings`): Latin-1 and cp1252 text read
through charset-normalizer with the guess in the document's metadata (also inside ``.gz``,
also short texts), other legacy encodings with enough evidence; binary junk, damaged UTF-8 and
texts too short to tell refused with the reason; UTF-8 files unchanged, without metadata."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from ragkit.documents import load_paths
from ragkit.documents.encodings import Decoded, decode_document
from ragkit.errors import RagkitError

CHANGELOG = """\
hello (2.10-3) unstable; urgency=medium

  * Fix the build with GCC 13. Thanks to Jürgen Müller.
  * Translations: Français (café, naïve, façade), Español (año, señal).

 -- Jörg Müller <jm@example.org>  Mon, 01 Jan 2024 12:00:00 +0100
"""


def test_a_latin1_changelog_is_read_and_its_encoding_kept(tmp_path: Path) -> None:
    (tmp_path / "changelog").write_bytes(CHANGELOG.encode("latin-1"))
    (tmp_path / "changelog.Debian.gz").write_bytes(gzip.compress(CHANGELOG.encode("latin-1")))
    (tmp_path / "notes.txt").write_text(CHANGELOG, encoding="utf-8")
    result = load_paths([tmp_path])
    assert not result.skipped
    by_name = {Path(d.source).name: d for d in result.documents}
    for name in ("changelog", "changelog.Debian.gz"):
        assert by_name[name].text == CHANGELOG
        assert by_name[name].metadata == {"encoding": "cp1252"}
    assert by_name["notes.txt"].metadata == {}  # UTF-8: nothing guessed


@pytest.mark.parametrize(
    "text",
    [
        "He said \u201cbonjour\u201d \u2014 5 \u20ac at the café.",  # cp1252's own punctuation
        "café",  # one non-ASCII byte
        "Müller\n",
        "<p>Crème brûlée</p>",
    ],
)
def test_short_cp1252_texts_are_read(text: str) -> None:
    assert decode_document(text.encode("cp1252"), Path("a.txt")).encoding == "cp1252"
    assert decode_document(text.encode("cp1252"), Path("a.txt")).text == text


def test_one_latin1_name_in_an_english_file_is_not_read_as_cjk() -> None:
    """As /usr/share/doc/make/NEWS.gz: charset-normalizer ranks Big5, Shift JIS, GB18030 as
    clean as cp1252 or cleaner with two bytes to go on; the mostly-ASCII text is cp1252."""
    news = (
        "* The VMS port of GNU make was updated; it builds with the DEC C compiler.\n" * 30
        + "  This port was done by Klaus Kämpf <kkaempf@example.de>.\n"
        + "* Fixed a crash when a makefile ends in a backslash.\n" * 40
    )
    assert decode_document(news.encode("latin-1"), Path("NEWS")) == Decoded(news, "cp1252")


def test_latin1_html_is_read(tmp_path: Path) -> None:
    (tmp_path / "page.html").write_bytes("<h1>Café</h1><p>Ouvert à midi.</p>".encode("latin-1"))
    (document,) = load_paths([tmp_path]).documents
    assert document.text == "Café\n\nOuvert à midi." and document.metadata["encoding"] == "cp1252"


def test_other_legacy_encodings_with_enough_text() -> None:
    russian = "Привет, как дела? Это проверка кодировки текста."
    assert decode_document(russian.encode("cp1251"), Path("a.txt")).text == russian
    polish = "Zażółć gęślą jaźń. Pchnąć w tę łódź jeża lub ośm skrzyń fig."
    assert decode_document(polish.encode("cp1250"), Path("a.txt")).encoding == "cp1250"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (bytes(range(1, 256)) * 3, "no 8-bit encoding reads it as text"),
        (b"\x89PNG\r\n\x1a\n" + bytes(range(128, 256)), "no 8-bit encoding reads it as text"),
        (b"\x9d\x81\xfe\xff\x8f", "no 8-bit encoding reads it as text"),  # short junk
        (b"\xe9\xe8\xe0\xf9", "its 4 non-ASCII bytes are too few to tell the encoding"),
        (("Le café ouvre à midi. " * 20 + "\x01").encode("cp1252"), "control character U+0001"),
        ("naïve UTF-8 then ".encode() + "é".encode("latin-1"), "a damaged UTF-8 file"),
        (b"\x00\x01binary", "looks binary (NUL bytes)"),
    ],
)
def test_junk_and_guesses_without_confidence_are_refused(data: bytes, reason: str) -> None:
    with pytest.raises(RagkitError, match="not valid UTF-8|binary") as refused:
        decode_document(data, Path("a.txt"))
    assert reason in str(refused.value)


def test_a_refused_file_is_skipped_with_its_reason(tmp_path: Path) -> None:
    (tmp_path / "junk.txt").write_bytes(bytes(range(1, 256)) * 3)
    result = load_paths([tmp_path])
    assert not result.documents
    (skipped,) = result.skipped
    assert "not valid UTF-8 at byte 127, and no 8-bit encoding reads it as text" in skipped.reason
