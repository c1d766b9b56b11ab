"""Long documents: the Python manual's pages whole, with literal spans and subsection headings
as queries — the query sets of ``benchmarks/feedback.py`` where a document is many chunks.

The other judged collections hold short documents (abstracts, hadiths, sections of at most 200
words: 1.0–1.7 chunks each); a page of the manual is 20 chunks on average, so a lever that
mixes a chunk with the rest of its document, or a table of contents inside a page, shows here.

Collections (split as :mod:`ragkit.corpora.heading_sources` splits the manual, whole folders):

- ``python-pages-tune``: the pages of ``library/`` (317 pages, 788k words);
- ``python-pages``: the held-out folders ``howto/``, ``faq/`` and ``reference/`` (40 pages).

Query sets, seeded:

- ``known-item``: :data:`SPANS` literal 6–10-word spans, each cut at a random place of a random
  page (several may come from one page), judging the page;
- ``headings``: up to :data:`HEADINGS` subsection headings (a page's sections after its title,
  of two words or more, found in one page only), each judging the page that holds it.

Example:
    >>> [h for _, h in subsection_headings({"a.txt": "Title\\n=====\\n\\nText.\\n\\nTwo words\\n---------\\n"})]
    ['Two words']
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from benchmarks.feedback_sets import json_line, literal_span, write_beir
from ragkit.corpora.heading_sources import (
    HELD_OUT_PYTHON_FOLDERS,
    PYTHON_DOCS,
    PYTHON_SOURCES,
)
from ragkit.corpora.headings import rest_sections
from ragkit.corpora.packages import fetch_deb
from ragkit.paths import cache_dir

PAGES = {"python-pages-tune": frozenset({"library"}), "python-pages": HELD_OUT_PYTHON_FOLDERS}
SPANS = 150
HEADINGS = 300
SEED = 13


def read_pages(name: str) -> dict[str, str]:
    """The collection's pages, relative path → reST source."""
    folder = fetch_deb(*PYTHON_DOCS, cache_dir() / "corpora" / "deb") / PYTHON_SOURCES
    return {
        path.relative_to(folder).as_posix(): path.read_text(encoding="utf-8", errors="replace")
        for path in sorted(folder.rglob("*.txt"))
        if path.relative_to(folder).parts[0] in PAGES[name]
    }


def subsection_headings(pages: dict[str, str]) -> list[tuple[str, str]]:
    """(page, heading) for each heading of a page after its first (its title) of two words or
    more, as :func:`~ragkit.corpora.headings.rest_sections` reads them (roles such as
    ``:mod:`x``` as their text)."""
    return [
        (page, section.heading)
        for page, text in pages.items()
        for section in rest_sections(text, min_words=0)[1:]
        if len(section.heading.split()) >= 2
    ]


def page_sets(name: str, out: Path) -> dict[str, Path]:
    """The collection's two BEIR folders under ``out`` (built once), sharing one corpus."""
    targets = {s: out / f"{name}-{s}" for s in ("known-item", "headings")}
    if all((t / "qrels" / "test.tsv").exists() for t in targets.values()):
        return targets
    pages = read_pages(name)
    corpus = "".join(json_line(page, text) for page, text in pages.items())
    rng = random.Random(f"{SEED}-{name}")
    spans: dict[str, tuple[str, str]] = {}
    usable = [page for page, text in pages.items() if len(text.split()) >= 20]
    while len(spans) < SPANS:
        page = rng.choice(usable)
        spans[f"k{len(spans)}"] = (literal_span(pages[page], rng), page)
    headings = subsection_headings(pages)
    pages_of = Counter(heading for _, heading in set(headings))
    unique = sorted({(p, h) for p, h in headings if pages_of[h] == 1})
    chosen = rng.sample(unique, min(HEADINGS, len(unique)))
    for set_name, rows in (
        ("known-item", [(q, t, p) for q, (t, p) in spans.items()]),
        ("headings", [(f"h{i}", h, p) for i, (p, h) in enumerate(chosen)]),
    ):
        write_beir(
            targets[set_name], corpus, {q: t for q, t, _ in rows}, [(q, p) for q, _, p in rows]
        )
    return targets
