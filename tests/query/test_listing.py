"""Listings (tables of contents) under per-query fusion: detected in any script's digits, kept
below the section a heading query means, shown by explain, never counted as a phrase match;
on a real index (the folder and an embedded Milvus Lite file, the bundled MiniLM encoder)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import MODEL
from ragkit import Index
from ragkit.search.listing import WEIGHT, demoted, is_listing

CONTENTS = (
    "12.1. RAID and LVM 12.1.1. Software RAID 12.1.2. Logical volume management "
    "12.1.3. RAID or LVM? 12.2. Virtualization 12.2.1. Xen 12.2.2. Containers"
)
SECTION = (  # the section under the heading; like a manual's, it does not repeat the heading
    "The md driver mirrors or stripes disks in the kernel: it assembles the member disks into "
    "one block device, and mdadm creates, checks and repairs the array when a disk fails."
)
OTHER = "The package manager downloads archives, checks their signatures and unpacks them."
HEADING = "Software RAID"


@pytest.mark.parametrize(
    "text",
    [
        CONTENTS,
        "12.1. \u200fRAID وLVM 12.1.1. \u200fSoftware RAID 12.1.3. \u200fRAID أو LVM؟ 12.2. الحوسبة",  # RLM marks
        "١٢.١. مقدمة ١٢.١.١. التثبيت ١٢.١.٢. الإعداد",  # Arabic-Indic digits
        "1.1 Scope 1.2 Terms 1.3 Layout",
    ],
)
def test_contents_pages_are_listings(text: str) -> None:
    assert is_listing(text)


@pytest.mark.parametrize(
    "text",
    [
        SECTION,
        "",
        "12.1. RAID",  # a heading alone, a short title
        "Software RAID",
        (
            "As sections 4.2 and 4.3 explain, see 7.1 for details on the installer's RAID setup "
            "and the volumes it creates before the first boot of the new system."
        ),
        "Python 3.11.2, 3.12.1 and 3.13.0 are supported; 0.5% of runs used 2.7.",
        "pi is 3.14159 and e is 2.71828, both to five places",
        # a table of numbers, a changelog and a versions list are not contents pages
        (
            "301 MOVED_PERMANENTLY HTTP/1.1 7231, Section 6.4.2 302 FOUND HTTP/1.1 7231, Section "
            "6.4.3 303 SEE_OTHER HTTP/1.1 7231, Section 6.4.4 304 NOT_MODIFIED"
        ),
        "9.0.0046  reading past end of completion 9.0.0047  using freed memory 9.0.0048  cursor",
        "1.2.1 (released) 1.2.2 (released) 1.2.3 (released)",
        "License: BSL-1.0\nFiles: a.hpp\nLicense: BSL-1.0\nFiles: b.hpp\nLicense: BSL-1.0\nFiles:",
        "over_n_8 =  L1:  10.40  L2:   9.79  M:  8.47  HT:  7.64  VT:  7.59  R:  7.48  RT:  5.30",
    ],
)
def test_passages_and_short_texts_are_not(text: str) -> None:
    assert not is_listing(text)


def test_demotion_keeps_the_order_of_the_rest() -> None:
    scored = [(1, 1.0), (2, 0.9), (3, 0.5), (4, 0.1)]
    assert demoted(scored, set()) == scored
    after = demoted(scored, {1, 3})
    assert [i for i, _ in after] == [2, 1, 3, 4]
    assert dict(after)[1] == pytest.approx(WEIGHT) and dict(after)[2] == 0.9


@pytest.fixture(scope="module", params=["folder", "milvus-lite"])
def index(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    folder = tmp_path_factory.mktemp(f"listing-{request.param}")
    where = (
        str(folder / "index")
        if request.param == "folder"
        else f"milvus-lite://{folder / 'lite.db'}?collection=listing"
    )
    with Index.open(where, create=True, model=MODEL) as ix:
        ix.add(
            [
                {"id": "chapter", "text": CONTENTS},
                {"id": "raid", "text": SECTION},
                {"id": "packages", "text": OTHER},
            ]
        )
        yield ix


def test_a_heading_finds_its_section_above_the_contents(index: Index) -> None:
    weighted = index.explain(HEADING, k=3, fusion="weighted")
    assert weighted[0].hit.document_id == "chapter"  # without the demotion, the contents win
    explained = index.explain(HEADING, k=3, fusion="per-query")
    assert explained[0].hit.document_id == "raid"
    ranks = {each.hit.document_id: each for each in explained}
    contents = ranks["chapter"].contribution
    assert contents.listing < 0 and ranks["raid"].contribution.listing == 0
    for each in explained:
        part = each.contribution
        assert part.dense is not None and part.sparse is not None
        assert part.dense + part.sparse + part.listing + part.evidence + part.phrase == (
            pytest.approx(part.score)
        )
        assert each.hit.score == pytest.approx(part.score)


def test_contents_are_no_phrase_match(index: Index) -> None:
    query = "Logical volume management RAID or LVM"  # the contents hold it word for word
    explained = index.explain(query, k=3, fusion="per-query")
    choice = explained[0].contribution.choice
    assert choice is not None and choice.evidence.phrase == 0.0
    assert all(each.contribution.phrase == 0 for each in explained)


def test_other_fusions_and_one_list_modes_leave_listings_alone(index: Index) -> None:
    for options in ({"fusion": "weighted"}, {"fusion": "rrf"}, {"mode": "dense"}, {"mode": "sparse"}):
        found = index.explain(HEADING, k=3, **options)  # type: ignore[arg-type]
        assert all(each.contribution.listing == 0 for each in found)


def test_the_page_and_http_show_the_demotion(tmp_path: Path) -> None:
    from ragkit.serve.views import HitExplanation

    assert "listing" in HitExplanation.model_fields
    page = Path(__file__).parents[2] / "ragkit" / "serve" / "page" / "search.js"
    assert "why.listing" in page.read_text(encoding="utf-8")
