"""benchmarks/ and experiments/ keep their shape (issue 52): packages run with ``python -m``,
no import path surgery, one shared helper writing every result with its provenance, and a
README per study naming its question, verdict, command and result file."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
EXPERIMENTS = ROOT / "experiments"
SCRIPTS = sorted(
    p
    for folder in (BENCHMARKS, EXPERIMENTS)
    for p in folder.rglob("*.py")
    if p.name != "__init__.py"
)
STUDIES = sorted(p.parent for p in EXPERIMENTS.glob("*/*/README.md"))


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", [*SCRIPTS, ROOT / "docs" / "plots.py"], ids=_name)
def test_no_import_path_surgery(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            assert (node.value.id, node.attr) != ("sys", "path"), f"{_name(path)}: sys.path"
        if isinstance(node, ast.Attribute):
            assert node.attr != "spec_from_file_location", f"{_name(path)}: import by file path"


@pytest.mark.parametrize("path", SCRIPTS, ids=_name)
def test_results_go_through_write_result(path: Path) -> None:
    """A result JSON is written by benchmarks.common.write_result (provenance first), never
    by hand; commands in docstrings are ``python -m`` ones."""
    text = path.read_text(encoding="utf-8")
    # static_bases.py writes ragkit/embed/bases/MANIFEST.json: shipped data, not a result
    if path.name not in ("common.py", "ingest_worker.py", "static_bases.py"):
        assert not re.search(r"write_text\(\s*json\.dumps", text), _name(path)
    doc = ast.get_docstring(ast.parse(text)) or ""
    assert not re.search(r"python \S*benchmarks/\w+\.py", doc), _name(path)
    assert not re.search(r"python \S*experiments/", doc), _name(path)


def test_packages_and_no_studies_left_among_the_benchmarks() -> None:
    assert (BENCHMARKS / "__init__.py").is_file() and (EXPERIMENTS / "__init__.py").is_file()
    assert not list(BENCHMARKS.glob("rerank*")), "reranking studies live in experiments/rerank"
    for folder in {p.parent for p in EXPERIMENTS.rglob("*.py")}:
        assert (folder / "__init__.py").is_file(), f"{_name(folder)} is not a package"


@pytest.mark.parametrize("study", STUDIES, ids=_name)
def test_each_study_states_its_question_verdict_command_and_result(study: Path) -> None:
    readme = (study / "README.md").read_text(encoding="utf-8")
    assert "**Question.**" in readme and "**Verdict.**" in readme, _name(study)
    module = ".".join(study.relative_to(ROOT).parts)
    assert f"python -m {module}." in readme, f"{_name(study)}: no command"
    results = re.findall(r"\[`([\w\-]+\.json)`\]", readme)
    assert results, f"{_name(study)}: no result file named"
    for name in results:
        assert (study / name).is_file(), f"{_name(study)}/{name} is missing"


def test_the_index_lists_every_study() -> None:
    index = (EXPERIMENTS / "README.md").read_text(encoding="utf-8")
    assert STUDIES
    for study in STUDIES:
        link = "/".join(study.relative_to(EXPERIMENTS).parts)
        assert f"]({link})" in index, f"experiments/README.md does not list {link}"
