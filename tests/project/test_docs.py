"""The README and the documentation site: short README, links that resolve, every page in the
nav, and a strict mkdocs build (a broken link or a missing API reference fails it)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README_MAX_LINES = 200

FENCE = re.compile(r"^(```|~~~).*?^\1", re.DOTALL | re.MULTILINE)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$", re.MULTILINE)
SNIPPET = re.compile(r'^--8<--\s+"([^"]+)"', re.MULTILINE)


def _pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def _prose(text: str) -> str:
    """Markdown without fenced code blocks and inline code, where `[x](y)` is not a link."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub and mkdocs' toc both write it for ragkit's headings.

    Example:
        >>> _slug("Query latency a user feels (warm, hybrid, busy machine, HTTP)")
        'query-latency-a-user-feels-warm-hybrid-busy-machine-http'
    """
    text = re.sub(r"[^\w\- ]", "", INLINE_CODE.sub(lambda m: m.group()[1:-1], heading).lower())
    return re.sub(r"[\s-]+", "-", text.strip())


def _anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    for included in SNIPPET.findall(text):
        text += "\n" + FENCE.sub("", (ROOT / included).read_text(encoding="utf-8"))
    return {_slug(h) for h in HEADING.findall(text)}


def _relative_links(page: Path) -> list[str]:
    links = LINK.findall(_prose(page.read_text(encoding="utf-8")))
    return [link for link in links if not re.match(r"[a-z][a-z0-9+.-]*:", link)]


def _nav_files(nav: object) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [f for item in nav for f in _nav_files(item)]
    if isinstance(nav, dict):
        return [f for value in nav.values() for f in _nav_files(value)]
    return []


def test_readme_is_short() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, (
        f"README.md has {lines} lines (at most {README_MAX_LINES}): move detail to a page in docs/"
    )


@pytest.mark.parametrize(
    "page", [ROOT / "README.md", *_pages()], ids=lambda p: str(p.relative_to(ROOT))
)
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for link in _relative_links(page):
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(f"{link}: no file {target.relative_to(ROOT)}")
        elif anchor and target.suffix == ".md" and anchor not in _anchors(target):
            broken.append(f"{link}: no heading with anchor #{anchor} in {target.name}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_snippets_exist() -> None:
    for page in _pages():
        for included in SNIPPET.findall(page.read_text(encoding="utf-8")):
            assert (ROOT / included).is_file(), f"{page.name} includes missing {included}"


def test_every_page_is_in_the_nav() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = set(_nav_files(config["nav"]))
    pages = {page.relative_to(DOCS).as_posix() for page in _pages()}
    assert not pages - nav, f"pages missing from mkdocs.yml's nav: {sorted(pages - nav)}"
    assert not nav - pages, f"nav entries without a page in docs/: {sorted(nav - pages)}"


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # its parent package is missing
        return False


def test_mkdocs_build_strict(tmp_path: Path) -> None:
    modules = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python")
    missing = [module for module in modules if not _installed(module)]
    if missing:
        pytest.skip(
            f"{', '.join(missing)} not installed: `make docs` installs the docs extra "
            "(pip install -e '.[docs]')"
        )
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        check=False,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert (tmp_path / "reference" / "index.html").is_file()
