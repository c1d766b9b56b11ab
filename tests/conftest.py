"""Shared fixtures: offline model loading and a small real corpus on disk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

MODEL = "all-minilm-l6-v2"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    (folder / "sub").mkdir(parents=True)
    (folder / "water.md").write_text(
        "# Water\n\nWater boils at 100 degrees Celsius at sea level.\n\n"
        "- Ice melts at zero degrees.\n- Steam is water vapour.\n",
        encoding="utf-8",
    )
    (folder / "sub" / "cats.txt").write_text(
        "Cats are small domesticated carnivores.\n\nThey sleep most of the day.", encoding="utf-8"
    )
    (folder / "prayer.txt").write_text(
        "إنما الأعمال بالنيات وإنما لكل امرئ ما نوى", encoding="utf-8"
    )
    (folder / "records.jsonl").write_text(
        '{"id": "r1", "title": "Trains", "text": "Steam locomotives pulled early trains."}\n'
        '{"id": "r2", "text": "Bicycles have two wheels.", "metadata": {"lang": "en"}}\n',
        encoding="utf-8",
    )
    return folder
