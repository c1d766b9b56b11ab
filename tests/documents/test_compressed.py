"""Compressed single files (.gz, .bz2, .xz) read as the file they hold: the inner name picks the
reader, a bomb is refused within the file limit and bounded memory, a damaged archive gives
one line, and hits point into the decompressed text (issue 44, item 4)."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import MODEL
from ragkit import Index
from ragkit.documents import load_paths, max_file_bytes
from ragkit.pipeline.stages import load

COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    ".gz": lambda data: gzip.compress(data, mtime=0),
    ".bz2": bz2.compress,
    ".xz": lzma.compress,
}
MARKDOWN = b"# Boiling\n\nWater boils at 100 degrees Celsius.\n\n- Ice melts at zero.\n"


@pytest.mark.parametrize("suffix", sorted(COMPRESS))
def test_each_format_reads_as_the_file_it_holds(tmp_path: Path, suffix: str) -> None:
    pack = COMPRESS[suffix]
    (tmp_path / f"README.md{suffix}").write_bytes(pack(MARKDOWN))
    (tmp_path / f"changelog{suffix}").write_bytes(pack(b"Version 2\n\n * fixed the parser\n"))
    (tmp_path / f"faq.tsv{suffix}").write_bytes(pack(b"id\ttext\nq1\tCats sleep a lot.\n"))
    (tmp_path / f"r.jsonl{suffix}").write_bytes(pack(b'{"id": "a", "text": "Trains run."}\n'))
    result = load_paths([tmp_path])
    assert result.skipped == []
    by_key = {Path(d.key).name: d for d in result.documents}
    assert sorted(by_key) == [f"README.md{suffix}", f"changelog{suffix}", f"faq.tsv{suffix}#q1",
                              f"r.jsonl{suffix}#a"]  # fmt: skip
    readme = by_key[f"README.md{suffix}"]
    assert readme.source == str(tmp_path / f"README.md{suffix}")
    assert readme.text == MARKDOWN.decode() and readme.title == "Boiling"
    assert [b.kind for b in readme.blocks] == ["heading", "paragraph", "list"]
    # The content hash is the decompressed bytes' (as the same file uncompressed would have).
    assert readme.content_hash == hashlib.sha256(MARKDOWN).hexdigest()
    assert by_key[f"changelog{suffix}"].text.startswith("Version 2")
    assert by_key[f"faq.tsv{suffix}#q1"].text == "Cats sleep a lot."  # tab-separated, as .tsv


def test_concatenated_streams_are_read_whole(tmp_path: Path) -> None:
    for suffix, pack in COMPRESS.items():
        (tmp_path / f"log-{suffix[1:]}.txt{suffix}").write_bytes(
            pack(b"first part, ") + pack(b"second.")
        )
    texts = {d.text for d in load_paths([tmp_path]).documents}
    assert texts == {"first part, second."}


def test_a_bomb_is_refused_within_the_limit_and_bounded_memory(tmp_path: Path) -> None:
    zeros = bytes(8 * 2**20)
    limit = max_file_bytes()
    for suffix, pack in COMPRESS.items():
        bomb = tmp_path / f"zeros.txt{suffix}"
        bomb.write_bytes(pack(zeros) * 128)  # 1 GiB of zeros in 6 KB (bz2) to 1 MB (gzip)
        tracemalloc.start()
        try:
            result = load_paths([bomb])
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert result.documents == []
        (skipped,) = result.skipped
        assert "decompresses past the 67,108,864-byte file limit" in skipped.reason
        assert "decompression bomb" in skipped.reason and "\n" not in skipped.reason
        assert not skipped.unsupported
        assert peak < limit + 32 * 2**20, f"{suffix}: {peak:,} bytes at peak"


def test_the_limit_is_the_file_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGKIT_MAX_FILE_MB", "1")
    text = b"All work and no play. " * 50_000  # 1.1 MB of text, 3 KB gzipped
    (tmp_path / "long.txt.gz").write_bytes(gzip.compress(text))
    (tmp_path / "fits.txt.gz").write_bytes(gzip.compress(text[: 2**20]))
    result = load_paths([tmp_path])
    assert [Path(d.key).name for d in result.documents] == ["fits.txt.gz"]
    assert [Path(s.path).name for s in result.skipped] == ["long.txt.gz"]


def test_damaged_archives_give_one_line_each(tmp_path: Path) -> None:
    good = gzip.compress(b"Some text to index.", mtime=0)
    (tmp_path / "crc.txt.gz").write_bytes(good[:-8] + b"\0\0\0\0" + good[-4:])  # CRC zeroed
    (tmp_path / "cut.txt.gz").write_bytes(good[:-6])
    (tmp_path / "noise.txt.bz2").write_bytes(b"BZh9 certainly not bzip2 data")
    (tmp_path / "noise.txt.xz").write_bytes(b"\xfd7zXZ\x00 not xz either")
    (tmp_path / "cut.md.xz").write_bytes(lzma.compress(MARKDOWN)[:40])
    result = load_paths([tmp_path])
    assert result.documents == []
    reasons = {Path(s.path).name: s.reason for s in result.skipped}
    assert reasons["crc.txt.gz"].startswith("damaged gzip file (CRC check failed")
    assert reasons["cut.txt.gz"].startswith("truncated gzip file")
    assert reasons["noise.txt.bz2"].startswith("damaged bzip2 file (")
    assert reasons["noise.txt.xz"].startswith("damaged xz file (")
    assert reasons["cut.md.xz"].startswith("truncated xz file")
    assert all("\n" not in reason for reason in reasons.values())
    assert not any(s.unsupported for s in result.skipped)
    # Damaged content is not a read failure: a scheduler must not retry it (gzip's and bz2's
    # errors are OSErrors).
    assert load(tmp_path / "crc.txt.gz", raise_io_errors=True).skipped


def test_unsupported_inner_types_are_reported(tmp_path: Path) -> None:
    (tmp_path / "photo.png.gz").write_bytes(gzip.compress(b"\x89PNG\r\n"))
    (tmp_path / "site.tar.xz").write_bytes(lzma.compress(b"tar"))
    (tmp_path / "blob.bz2").write_bytes(bz2.compress(bytes(range(256))))
    result = load_paths([tmp_path])
    assert result.documents == []
    reasons = {Path(s.path).name: s.reason for s in result.skipped}
    assert reasons == {
        "photo.png.gz": "unsupported file type '.png.gz'",
        "site.tar.xz": "unsupported file type '.tar.xz'",
        "blob.bz2": "bzip2 file of 'blob': no extension and not text",
    }
    assert all(s.unsupported for s in result.skipped)


def test_hits_point_into_the_decompressed_text(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    filler = "".join(f"Paragraph {n} is about the weather in town {n}.\n\n" for n in range(40))
    text = filler + "The lighthouse keeper logs every passing ship at dawn.\n"
    notes = folder / "notes.txt"
    notes.write_text(text, encoding="utf-8")
    with Index.open(tmp_path / "index", create=True, model=MODEL, chunker="sentence") as index:
        index.ingest([folder])
        # gzip the file in place: the same content under a new name is a rename, not new work.
        packed = folder / "notes.txt.gz"
        packed.write_bytes(gzip.compress(notes.read_bytes()))
        notes.unlink()
        report = index.ingest([folder], prune=True)
        assert (report.documents_renamed, report.chunks_added) == (1, 0)
        (hit, *_) = index.search("lighthouse keeper ships", k=3)
    assert hit.source == str(packed)
    assert text[hit.start : hit.end] == hit.text
    assert hit.start > 0 and hit.start <= text.index("lighthouse") < hit.end


def test_suffixes_that_name_no_type_are_read_as_text(tmp_path: Path) -> None:
    """``README.Debian``, ``changelog.Debian.gz`` and ``changelog.Debian.amd64.gz``: a suffix
    the standard library knows no type for is read like no extension when it holds text;
    known non-text types and binary bytes stay unsupported."""
    (tmp_path / "README.Debian").write_text("Built with the default options.\n")
    (tmp_path / "changelog.Debian.gz").write_bytes(gzip.compress(b"pkg (1.0) unstable\n"))
    (tmp_path / "changelog.Debian.amd64.gz").write_bytes(gzip.compress(b"pkg (1.0) amd64\n"))
    (tmp_path / "libx.so.1").write_bytes(bytes(range(256)))
    (tmp_path / "script.py").write_text("print('hi')\n")
    result = load_paths([tmp_path])
    names = sorted(Path(d.key).name for d in result.documents)
    assert names == ["README.Debian", "changelog.Debian.amd64.gz", "changelog.Debian.gz"]
    reasons = {Path(s.path).name: s.reason for s in result.skipped}
    assert reasons == {
        "libx.so.1": "unsupported file type '.1': not text",
        "script.py": "unsupported file type '.py'",
    }
