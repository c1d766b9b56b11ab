"""The examples of docs/frameworks.md run as written (one per framework, each in an empty
folder), so the page cannot drift from the components; a component whose framework is missing
says which extra installs it."""

from __future__ import annotations

import importlib
import os
import re
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # before haystack loads

PAGE = Path(__file__).resolve().parents[2] / "docs" / "frameworks.md"
SECTION = re.compile(r"^## (.+)$", re.MULTILINE)
EXAMPLE = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
FRAMEWORK_MODULES = {
    "LangChain": "langchain_text_splitters",
    "LlamaIndex": "llama_index.core",
    "Haystack": "haystack",
}


def _examples() -> dict[str, str]:
    """Each section's Python example, by section title."""
    text = PAGE.read_text(encoding="utf-8")
    titles = list(SECTION.finditer(text))
    examples = {}
    for title, following in zip(titles, [*titles[1:], None], strict=True):
        body = text[title.end() : following.start() if following else len(text)]
        found = EXAMPLE.findall(body)
        if found:
            assert len(found) == 1, f"{title.group(1)}: one runnable example per framework"
            examples[title.group(1)] = found[0]
    return examples


def test_every_framework_has_an_example() -> None:
    assert set(_examples()) == set(FRAMEWORK_MODULES)


@pytest.mark.parametrize("framework", sorted(FRAMEWORK_MODULES))
def test_example_runs(
    framework: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip(FRAMEWORK_MODULES[framework], reason=f"{framework} is not installed")
    monkeypatch.chdir(tmp_path)
    code = compile(_examples()[framework], f"{PAGE.name} ({framework})", "exec")
    exec(code, {"__name__": f"frameworks_{framework.lower()}"})  # noqa: S102 - the page's code
    assert capsys.readouterr().out.strip(), "the example prints what it found"


@pytest.mark.parametrize(
    ("module", "framework", "extra"),
    [
        ("langchain", "langchain_core", "langchain"),
        ("llama_index", "llama_index", "llama-index"),
        ("haystack", "haystack", "haystack"),
    ],
)
def test_a_missing_framework_names_its_extra(
    module: str, framework: str, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragkit import RagkitError

    for name in [framework, *(m for m in sys.modules if m.startswith(f"{framework}."))]:
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed
    monkeypatch.delitem(sys.modules, f"ragkit.integrations.{module}", raising=False)
    with pytest.raises(ImportError, match=re.escape(f'pip install "ragkit-pipeline[{extra}]"')) as error:
        importlib.import_module(f"ragkit.integrations.{module}")
    assert isinstance(error.value, RagkitError)
