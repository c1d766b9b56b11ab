"""Hostile inputs: every bad file is reported on its own, the batch completes, memory stays bounded."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hostile import (
    UNREADABLE,
    Case,
    build,
    expected_for,
    mismatches,
    reader_prefix,
    relative,
    root_reads_everything,
    summary_skips,
)
from killharness import ingest_command
from typer.testing import CliRunner

from conftest import MODEL
from ragkit import Index, RagkitError
from ragkit.cli import app
from ragkit.documents import load_paths
from ragkit.store.folder.doctor import diagnose

log = logging.getLogger(__name__)


def _expected(cases: list[Case], reads_unreadable: bool) -> list[Case]:
    if reads_unreadable:
        log.warning("running as root with CAP_DAC_OVERRIDE: %s (mode 000) is readable", UNREADABLE)
    return expected_for(cases, reads_unreadable)


def test_loaders_report_every_hostile_file(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    cases = _expected(build(corpus), root_reads_everything())
    result = load_paths([corpus])
    skipped = {relative(s.path, corpus): s.reason for s in result.skipped}
    assert mismatches(cases, skipped, {relative(d.key, corpus) for d in result.documents}) == []
    nested = next(d for d in result.documents if d.key.endswith("nested.html"))
    assert nested.text == "Deep text survives."
    lines = {d.external_id: d.text for d in result.documents if d.key.endswith(("#ok1", "#ls"))}
    assert lines["ls"] == "Line\u2028separator inside"


def _run(command: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=600, check=False
    )
    return done.returncode, done.stdout, done.stderr


def test_cli_ingest_of_hostile_corpus_keeps_committed_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = tmp_path / "committed"
    good.mkdir()
    (good / "tides.txt").write_text("Tides rise twice a day.\n", encoding="utf-8")
    index = Index.open(tmp_path / "index", create=True, model=MODEL)
    index.ingest([good])
    index.close()
    corpus = tmp_path / "corpus"
    prefix, reads_unreadable = reader_prefix()
    cases = _expected(build(corpus), reads_unreadable)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}

    code, stdout, stderr = _run([*prefix, *ingest_command(corpus, tmp_path / "index")], env)
    assert code == 1, stderr  # some files skipped, the rest committed
    assert "Traceback" not in stderr
    assert "EOF marker" not in stderr  # pypdf's own lines, without a file name, stay quiet
    reopened = Index.open(tmp_path / "index")
    keys = {relative(k, corpus) for k in reopened.store.document_hashes()}
    assert str(good / "tides.txt") in keys  # committed before the hostile run: still there
    keys.discard(str(good / "tides.txt"))
    assert mismatches(cases, summary_skips(stdout, corpus), keys) == []
    assert diagnose(tmp_path / "index").problems == []
    hits = reopened.search("deep text survives", k=3, mode="sparse")
    assert hits and hits[0].source.endswith("nested.html")
    for mode in ("dense", "sparse", "hybrid"):  # undecodable argv bytes arrive as surrogates
        assert reopened.search(os.fsdecode(b"deep text \xff"), k=3, mode=mode)
    odd_filter = {os.fsdecode(b"k\xff"): os.fsdecode(b"\xff"), "source": os.fsdecode(b"\xff*")}
    # the key as matched: an undecodable byte is U+FFFD
    with pytest.raises(RagkitError, match="'k\ufffd': no document has that metadata field"):
        reopened.search("deep text", k=3, filters=odd_filter)  # a clear error, not a crash
    assert reopened.search("deep text", k=3, filters={"source": odd_filter["source"]}) == []
    with pytest.raises(RagkitError, match="filter 'k': no operator 'nested'"):
        reopened.search("deep text", k=3, filters={"k": {"nested": 1}})
    reopened.close()

    runner = CliRunner()
    again = runner.invoke(app, ["ingest", str(good), "--index", str(tmp_path / "index")])
    assert again.exit_code == 0, again.output  # nothing skipped: exit 0
    monkeypatch.setenv("RAGKIT_MAX_FILE_MB", "lots")
    failed = runner.invoke(app, ["ingest", str(good), "--index", str(tmp_path / "index")])
    assert failed.exit_code == 2 and "RAGKIT_MAX_FILE_MB='lots'" in failed.output  # failure


# VmHWM (peak RSS of this process image): ru_maxrss would carry the parent's peak over exec.
LOAD_SCRIPT = """
import re, sys
from pathlib import Path
from ragkit.documents import load_paths
result = load_paths([Path(sys.argv[1])])
peak = re.search(r"VmHWM:\\s+(\\d+) kB", Path("/proc/self/status").read_text()).group(1)
print(len(result.documents), len(result.skipped), peak)
"""


def test_a_200_mb_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    small = tmp_path / "small.txt"
    small.write_text("A small file.\n", encoding="utf-8")
    huge = tmp_path / "huge.txt"
    with huge.open("wb") as handle:
        handle.write(b"text\n")
        handle.truncate(200 * 2**20)  # sparse: no disk blocks behind the zeros
    peaks = {}
    for path in (small, huge):
        command = [sys.executable, "-c", LOAD_SCRIPT, str(path)]
        output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        documents, skipped, peaks[path.name] = (int(x) for x in output.split())
        assert (documents, skipped) == ((1, 0) if path is small else (0, 1))
    log.info("peak RSS KiB: %s", peaks)
    assert peaks["huge.txt"] - peaks["small.txt"] < 16 * 1024  # far below the file's 200 MiB


def test_an_unexpected_error_exits_2_not_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("simulated bug in a stage")  # what no input can trigger on purpose

    (tmp_path / "a.txt").write_text("Some text.", encoding="utf-8")
    Index.open(tmp_path / "index", create=True, model=MODEL).close()
    monkeypatch.setattr(Index, "ingest", broken)
    result = CliRunner().invoke(app, ["ingest", str(tmp_path), "--index", str(tmp_path / "index")])
    assert result.exit_code == 2 and "simulated bug" in result.output
