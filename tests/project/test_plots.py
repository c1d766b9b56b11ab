"""docs/plots.py draws every results figure from the committed JSON, the same bytes each
run, and the SVGs committed under docs/assets/plots are the ones it draws today."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "docs" / "plots.py"
RESULTS = ROOT / "benchmarks" / "results"
COMMITTED = ROOT / "docs" / "assets" / "plots"
FIGURES = (
    "retrieval_quality.svg",
    "ingest_time.svg",
    "query_latency.svg",
    "fertility.svg",
    "chunker_choice.svg",
)
SVG = "{http://www.w3.org/2000/svg}"
FIX = "run `make plots` (or .venv/bin/python docs/plots.py) and commit docs/assets/plots"


def _draw(out: Path) -> Path:
    """One run of the script, in its own process, as `make plots` runs it."""
    command = [sys.executable, str(SCRIPT), "--results", str(RESULTS), "--out", str(out)]
    subprocess.run(command, check=True, capture_output=True, cwd=ROOT, timeout=120)
    return out


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two separate runs into two folders."""
    return _draw(tmp_path_factory.mktemp("first")), _draw(tmp_path_factory.mktemp("second"))


def _texts(svg: Path) -> list[str]:
    """The SVG's text labels, in document order (the figures keep text as text)."""
    root = ET.parse(svg).getroot()
    return ["".join(t.itertext()).strip() for t in root.iter(f"{SVG}text")]


def _creator(svg: Path) -> str:
    """The "Matplotlib vX.Y.Z" that wrote the file."""
    found = re.search(r"Matplotlib v[\w.]+", svg.read_text(encoding="utf-8"))
    return found.group(0) if found else ""


@pytest.mark.parametrize("name", FIGURES)
def test_each_figure_is_an_svg_with_labels(drawn: tuple[Path, Path], name: str) -> None:
    path = drawn[0] / name
    assert path.is_file(), f"docs/plots.py wrote no {name}"
    assert ET.parse(path).getroot().tag == f"{SVG}svg"
    texts = [t for t in _texts(path) if t]
    assert len(texts) >= 10, f"{name} has {len(texts)} text labels"


def test_a_second_run_writes_the_same_bytes(drawn: tuple[Path, Path]) -> None:
    first, second = drawn
    assert sorted(p.name for p in first.iterdir()) == sorted(FIGURES)
    for name in FIGURES:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_figures_show_the_numbers_in_the_json(drawn: tuple[Path, Path]) -> None:
    """Spot checks that labels come from the result files, not from elsewhere."""
    backends = json.loads((RESULTS / "backends.json").read_text(encoding="utf-8"))
    hybrid = backends["quality"]["cranfield"]["folder"]["modes"]["hybrid"]["ndcg_at_10"]
    assert f"{hybrid:.3f}" in _texts(drawn[0] / "retrieval_quality.svg")
    peers = json.loads((RESULTS / "peers-all-minilm-l6-v2.json").read_text(encoding="utf-8"))
    rrf = peers["collections"]["cisi"]["systems"]["rrf"]["ndcg_at_10"]
    assert f"{rrf:.3f}" in _texts(drawn[0] / "retrieval_quality.svg")
    ingest = json.loads((RESULTS / "ingest.json").read_text(encoding="utf-8"))
    seconds = ingest["collections"]["cranfield"]["ingest_seconds"]
    assert any(t.startswith(f"{seconds:.1f} s") for t in _texts(drawn[0] / "ingest_time.svg"))
    latency = json.loads((RESULTS / "latency.json").read_text(encoding="utf-8"))
    idle = latency["rows"]["in-process, idle"]
    label = f"{idle['p50_ms']:g} / {idle['p95_ms']:g}"
    assert label in _texts(drawn[0] / "query_latency.svg")
    assert "XLM-R (multilingual-e5-small)" in _texts(drawn[0] / "fertility.svg")
    assert "adaptive (default)" in _texts(drawn[0] / "chunker_choice.svg")


@pytest.mark.parametrize("name", FIGURES)
def test_committed_figures_are_up_to_date(drawn: tuple[Path, Path], name: str) -> None:
    """Byte for byte with the Matplotlib that drew them; label for label with any other."""
    committed, fresh = COMMITTED / name, drawn[0] / name
    assert committed.is_file(), f"docs/assets/plots/{name} is missing: {FIX}"
    if _creator(committed) == _creator(fresh):
        assert committed.read_bytes() == fresh.read_bytes(), f"{name} is stale: {FIX}"
    else:  # another Matplotlib lays out and writes differently; the labels still must agree
        assert _texts(committed) == _texts(fresh), f"{name} is stale: {FIX}"
