"""The command line and the Python API behave as their users expect: readable help, a
version, clear one-line errors, no index made by mistake, a context manager."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ragkit as package
from conftest import MODEL, ragkit
from ragkit import Index, RagkitError
from ragkit.cli.output import read_text_file


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of one English and one Arabic file."""
    root = tmp_path_factory.mktemp("polish")
    (root / "water.txt").write_text("Water boils at 100 degrees Celsius.", encoding="utf-8")
    (root / "prayer.txt").write_text("إنما الأعمال بالنيات وإنما لكل امرئ ما نوى", encoding="utf-8")
    with Index.open(root / "index", create=True, model=MODEL) as index:
        index.ingest([root / "water.txt", root / "prayer.txt"])
    return root


def test_help_shows_words_not_python_types() -> None:
    for args in ([], ["ingest"], ["flows", "run", "ingest"]):
        page = ragkit(*args, "--help")
        assert page.returncode == 0, page.stderr
        assert not re.search(r"<(bool|str|path|int|float|list\[\w+\])>", page.stdout), page.stdout
    ingest = ragkit("ingest", "--help").stdout
    assert re.search(r"paths\.\.\.\s+PATH", ingest) and re.search(r"--index\s+INDEX", ingest)
    assert re.search(r"--prune\s+Remove", ingest)  # a flag takes no value
    listing = ragkit("--help").stdout
    # a wrapped docstring's summary is one line in the command list
    assert re.search(
        r"ingest\s+Load, chunk, embed and commit files \(or JSONL records from standard "
        r"input\) into an index\. Exit 1 when some files or records failed to load",
        listing,
    ), listing


def test_version() -> None:
    shown = ragkit("--version")
    assert shown.returncode == 0 and shown.stdout.strip() == f"ragkit {package.__version__}"


def test_one_line_errors(tmp_path: Path) -> None:
    empty = ragkit("query", "  ", "--index", str(tmp_path))
    assert empty.returncode == 2 and "empty query" in empty.stderr
    typed = ragkit("normalize", "u r here")  # text where a file belongs
    assert typed.returncode == 2 and "u r here: no such file" in typed.stderr
    assert "- to read standard input" in typed.stderr and "Errno" not in typed.stderr
    folder = ragkit("normalize", str(tmp_path))
    assert folder.returncode == 2 and "a folder, not a text file" in folder.stderr
    unknown = ragkit("normalize", "-", "--lang", "xx")
    assert unknown.returncode == 2 and "--lang 'xx': not a language" in unknown.stderr
    cron = ragkit("flows", "serve", "--index", str(tmp_path), "--watch", ".", "--cron", "bad")
    assert cron.returncode == 2 and "--cron 'bad':" in cron.stderr
    assert len(cron.stderr.strip().splitlines()) == 1 and "pydantic" not in cron.stderr


def _piped(*args: str) -> subprocess.CompletedProcess[str]:
    """``ragkit`` with its standard output a pipe and no ``COLUMNS`` (as in a log or a script)."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | {"HF_HUB_OFFLINE": "1"}
    command = [str(Path(sys.executable).parent / "ragkit"), *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, check=False)


def test_pipes_get_whole_keys_and_errors_name_their_option(built: Path, tmp_path: Path) -> None:
    index = str(built / "index")
    deep = tmp_path / ("a-folder-name-long-enough-that-80-columns-cut-it" * 2)
    deep.mkdir()
    (deep / "steam.txt").write_text("Steam rises from boiling water.", encoding="utf-8")
    copy = str(tmp_path / "index")
    ingested = _piped("ingest", str(deep), "--index", copy)
    assert ingested.returncode == 0 and "" not in ingested.stderr.splitlines(), ingested.stderr
    key = str(deep / "steam.txt")
    listed = _piped("ls", "--index", copy)
    assert listed.returncode == 0 and key in listed.stdout, listed.stdout
    found = _piped("query", "steam", "--index", copy, "-k", "1")
    assert found.returncode == 0 and key in found.stdout and "document" in found.stdout
    weights = ragkit(
        "ingest", str(built / "water.txt"), "--index", index, "--chunk-weights", "SC=a"
    )
    assert weights.returncode == 2 and "--chunk-weights 'SC=a'" in weights.stderr
    with Index.open(index) as opened, pytest.raises(RagkitError, match="language 'xx': not a"):
        opened.search("water", language="xx")
    with Index.open(index) as opened:
        assert opened.search("water", language="EN")  # a code in capitals is the same code
    upper = ragkit("normalize", str(built / "prayer.txt"), "--lang", "AR")
    assert upper.returncode == 0 and upper.stdout.startswith("انما"), upper.stderr


def test_files_given_to_commands_read_as_ingest_reads_them(tmp_path: Path) -> None:
    crlf = tmp_path / "crlf.txt"
    crlf.write_bytes("\ufeffHello\r\nالسَّلام\r\n".encode())
    assert read_text_file(crlf) == "Hello\r\nالسَّلام\r\n"  # BOM dropped, line ends kept
    wide = tmp_path / "wide.txt"
    wide.write_bytes("Hi".encode("utf-16"))
    assert read_text_file(wide) == "Hi"
    explained = ragkit("normalize", str(crlf), "--explain", "--lang", "ar")
    assert explained.returncode == 0 and re.search(
        r"10-12 .*U\+06.*→ \(deleted\)", explained.stdout
    )


def test_lexical_reads_latin_text_as_english(tmp_path: Path) -> None:
    tweets = tmp_path / "tweets.txt"  # slang that language detection reads as Dutch
    tweets.write_text(
        "u r gr8 m8\nidk wat 2 do lol\nc u l8r\ngonna b l8 2 wrk 2moro\nikr dat was da best\n"
    )
    done = ragkit("normalize", str(tweets), "--lexical")
    assert done.returncode == 0 and done.stdout.startswith("you are great m8\n"), done.stdout
    assert "is read as 'en'" in done.stderr
    explained = ragkit("normalize", str(tweets), "--lexical", "--explain")
    assert re.search(r"4-7\s+│ gr8\s+│ great\s+│", explained.stdout), (
        explained.stdout
    )  # a word a row


def test_no_index_made_by_mistake(tmp_path: Path) -> None:
    typo = ragkit("ingest", str(tmp_path / "no-such-docs"), "--index", str(tmp_path / "new"))
    assert typo.returncode == 2 and "no index created" in typo.stderr
    query = ragkit("query", "water", "--index", str(tmp_path / "typo"))
    assert query.returncode == 2 and "no ragkit index here" in query.stderr
    assert not (tmp_path / "new").exists() and not (tmp_path / "typo").exists()


@pytest.mark.slow  # three searches, one with the reranker, in their own processes
def test_query_messages_and_rerank_languages(built: Path) -> None:
    index = str(built / "index")
    none = ragkit("query", "water", "--index", index, "--filter", "language=fa")
    assert none.returncode == 0 and "no hits for 'water' matching the filters" in none.stdout
    arabic = ragkit("query", "الأعمال", "--index", index, "--lang", "ar", "--rerank")
    assert arabic.returncode == 2 and "reads English only" in arabic.stderr
    script = ragkit("query", "الأعمال", "--index", index, "--rerank")
    assert script.returncode == 2 and "written in Arab script, not English" in script.stderr
    mixed = ragkit("query", "water", "--index", index, "--rerank", "-k", "1")
    assert mixed.returncode == 0 and "hits in ar are reranked as if English" in mixed.stderr
    assert mixed.stderr.count("reranked as if English") == 1  # said once


def test_api_habits(built: Path, caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(RagkitError, match=r"unknown setting\(s\) chunk_size; the settings .*"):
        Index.open(built / "index", chunk_size=100)
    with pytest.raises(RagkitError, match=r"create=True\)"):
        Index.open(built / "missing")
    with Index.open(built / "index", rerank_weight=0.5) as index:
        assert index.info().documents == 2
        with caplog.at_level(logging.WARNING, logger="ragkit.index"):
            assert index.reranker is not None
        assert "reads English only" in caplog.text
    with pytest.raises(RagkitError, match="rerank_weight: Input should be less than"):
        Index.open(built / "index", rerank_weight=2)


def test_chunk_of_a_folder_is_one_line(tmp_path: Path) -> None:
    from ragkit.documents.load import read_bounded

    ran = ragkit("chunk", str(tmp_path))
    assert ran.returncode == 2 and "a folder; `ragkit chunk` takes one file" in ran.stderr
    assert "Traceback" not in ran.stderr + ran.stdout
    with pytest.raises(RagkitError, match="a folder, not a file"):
        read_bounded(tmp_path, 1000)
