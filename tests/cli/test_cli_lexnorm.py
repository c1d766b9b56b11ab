"""``ragkit lexnorm train`` (the lexical normalizer's build recipe) reads its options and
refuses a bad folder or output path in one line, before any training starts."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import cli
from ragkit.normalize.lexical import model_path


def test_help_lists_the_recipe_options() -> None:
    page = cli("lexnorm", "train", "--help")
    assert page.returncode == 0, page.stderr
    for option in ("--data", "--out", "--report", "--trees", "--folds", "--no-dev-in-model"):
        assert option in page.stdout
    assert "lexnorm" in cli("--help").stdout


def test_a_folder_without_the_splits_is_one_line_naming_them(tmp_path: Path) -> None:
    shipped = model_path("en").read_bytes()
    (tmp_path / "train.norm").write_text("u\tyou\n", encoding="utf-8")
    done = cli("lexnorm", "train", "--data", str(tmp_path), "--out", str(tmp_path / "m.json.gz"))
    assert done.returncode == 2
    message = " ".join(done.stderr.split())
    assert re.search(r"--data \S+: no dev\.norm", message), done.stderr
    assert "Traceback" not in done.stderr
    assert model_path("en").read_bytes() == shipped  # nothing trained, nothing written
    assert not (tmp_path / "m.json.gz").exists()


def test_an_output_in_a_missing_folder_is_refused_first(tmp_path: Path) -> None:
    for name in ("train.norm", "dev.norm"):
        (tmp_path / name).write_text("u\tyou\n", encoding="utf-8")
    report = tmp_path / "no such folder" / "report.json"
    done = cli("lexnorm", "train", "--data", str(tmp_path), "--report", str(report))
    assert done.returncode == 2
    assert "--report" in done.stderr and "does not exist" in " ".join(done.stderr.split())
