"""Document text, ids and file names cannot drive the terminal or forge report lines: human
output shows control characters as escapes, JSON keeps them exact (issue 24, item 11)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

# What a terminal acts on: C0 (tab and newline aside), DEL, C1, bidi overrides and isolates.
RAW_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
EVIL_ID = "id\x1b]52;c;ZXZpbA==\x07[/]"  # OSC 52 sets the clipboard; [/] is rich markup
EVIL_TEXT = "Glaciers \x1b[2J carve\x00 deep \u202evalleys\x9b31m in mountains."


def _ragkit(*args: str) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).with_name("ragkit")), *args]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "400"}
    return subprocess.run(command, capture_output=True, text=True, env=env, check=False)


def test_control_characters_are_escaped_in_human_output_only(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    record = {"id": EVIL_ID, "title": "T\x1b[31m", "text": EVIL_TEXT}
    (docs / "r.jsonl").write_text(json.dumps(record) + "\n")
    (docs / "x\x1b[2J\n  forged.txt: all good.png").write_text("not read")
    index = str(tmp_path / "index")

    ingest = _ragkit("ingest", str(docs), "--index", index, "--model", "all-minilm-l6-v2")
    assert ingest.returncode == 0, ingest.stderr
    assert "x\\x1b[2J\\n  forged.txt: all good.png: unsupported file type" in ingest.stdout
    query = _ragkit("query", "glaciers valleys", "--index", index, "--mode", "sparse")
    info = _ragkit("info", "--index", index)
    listing = _ragkit("ls", "--index", index)
    for done in (ingest, query, info, listing):
        assert done.returncode == 0, done.stderr
        assert not RAW_CONTROLS.search(done.stdout + done.stderr), repr(done.stdout)
        assert "forged.txt" not in [line.strip() for line in done.stdout.splitlines()]
    assert "id\\x1b]52;c;ZXZpbA==\\x07[/]" in query.stdout
    assert "\\x1b[2J" in query.stdout and "\\u202evalleys\\x9b31m" in query.stdout

    exact = _ragkit("query", "glaciers valleys", "--index", index, "--mode", "sparse", "--json")
    (hit,) = json.loads(exact.stdout)
    assert hit["document_id"] == EVIL_ID and hit["text"] == "T\x1b[31m\n\n" + EVIL_TEXT

    missing = _ragkit("info", "--index", str(tmp_path / "no\x1b[2Jindex"))
    assert missing.returncode == 2 and "no\\x1b[2Jindex" in missing.stderr
    assert not RAW_CONTROLS.search(missing.stderr)
