"""The inspection page of ``ragkit serve`` and the endpoints it reads.

API tests call the app in process; browser tests drive Debian's Chromium headless through
Playwright against a real uvicorn server on a free port (one index and one server per module).
Browser tests skip, saying why, where Playwright or a Chromium is missing (`make browser`
installs both). Screenshots go to ``test-artifacts/page/`` (``RAGKIT_TEST_ARTIFACTS``).
"""

from __future__ import annotations

import inspect
import json
import os
import re
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from conftest import MODEL
from ragkit import Index
from ragkit.cli import app as cli
from ragkit.cli.serve import serve
from ragkit.paths import REPOSITORY
from ragkit.serve import ServedIndexes, create_app, parse_locations

ARTIFACTS = Path(os.environ.get("RAGKIT_TEST_ARTIFACTS", REPOSITORY / "test-artifacts")) / "page"
NAME = "pages"
ENGLISH = "At what temperature does water boil?"
ARABIC = "إنما الأعمال بالنيات"
XSS_FILE = "<img src=x onerror=alert('file')>.txt"
XSS_TEXT = (
    "<script>alert('script')</script> <img src=x onerror=alert('img')> "
    "<a href=\"javascript:alert('link')\">a javascript link</a> "
    "Volcanic ash from the eruption drifted over the ocean for weeks."
)
XSS_RECORD = {
    "id": "<svg onload=alert(5)>",
    "title": "<script>alert(6)</script>",
    "text": "Glaciers <b onmouseover=alert(7)>carve</b> deep valleys into the mountains.",
    "metadata": {"note": "<img src=x onerror=alert(8)>"},
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    files = tmp_path_factory.mktemp("pages")
    (files / "water.md").write_text(
        "# Water\n\nWater boils at 100 degrees Celsius at sea level. On a high mountain the air "
        "pressure is lower, so water boils at a lower temperature there.\n\n"
        "Ice melts at zero degrees Celsius. Adding salt lowers the melting point, which is why "
        "roads are salted in winter.\n\n"
        "Steam is water vapour. It carries much more heat than boiling water at the same "
        "temperature, so steam burns are severe.\n",
        encoding="utf-8",
    )
    (files / "cats.txt").write_text(
        "Cats are small domesticated carnivores. They sleep most of the day.", encoding="utf-8"
    )
    (files / "hadith.txt").write_text(
        "إِنَّمَا الأَعْمَالُ بِالنِّيَّاتِ، وَإِنَّمَا لِكُلِّ امْرِئٍ مَا نَوَى. فَمَنْ كَانَتْ "
        "هِجْرَتُهُ إِلَى دُنْيَا يُصِيبُهَا أَوْ إِلَى امْرَأَةٍ يَنْكِحُهَا فَهِجْرَتُهُ إِلَى مَا "
        "هَاجَرَ إِلَيْهِ.",
        encoding="utf-8",
    )
    (files / "handbook-contents.txt").write_text(
        "12.1 RAID 12.1.1 Software RAID 12.1.2 LVM 12.1.3 Xen 12.1.4 LXC 12.2 KVM 12.3 FAI",
        encoding="utf-8",
    )
    (files / XSS_FILE).write_text(XSS_TEXT, encoding="utf-8")
    (files / "records.jsonl").write_text(json.dumps(XSS_RECORD) + "\n", encoding="utf-8")
    index = tmp_path_factory.mktemp("served") / "index"
    # phrase evidence on (off by default) so that the page shows a hit's phrase lift
    with Index.open(
        index, create=True, model=MODEL, chunk_tokens=24, phrase_evidence="on"
    ) as opened:
        opened.ingest([files])
    return index


@pytest.fixture(scope="module")
def served(folder: Path) -> Iterator[ServedIndexes]:
    indexes = ServedIndexes(parse_locations([f"{NAME}={folder}"]))
    yield indexes
    indexes.close()


@pytest.fixture(scope="module")
def api(served: ServedIndexes) -> TestClient:
    return TestClient(create_app(served))


def document(api: TestClient, key: str) -> dict[str, Any]:
    response = api.get(f"/indexes/{NAME}/document", params={"key": key})
    assert response.status_code == 200, response.text
    return dict(response.json())


# -- the API the page reads --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "fusion"),
    [("hybrid", "rrf"), ("hybrid", "weighted"), ("dense", None), ("sparse", None)],
)
def test_explain_keeps_the_hits_and_takes_their_scores_apart(
    api: TestClient, folder: Path, mode: str, fusion: str | None
) -> None:
    body = {"query": ENGLISH, "index": NAME, "k": 5, "mode": mode, "fusion": fusion}
    plain = api.post("/search", json=body).json()
    explained = api.post("/search", json=body | {"explain": True}).json()
    assert plain["explanations"] is None
    assert explained["hits"] == plain["hits"] and plain["hits"]
    with Index.open(folder) as index:
        expected = index.search(ENGLISH, k=5, mode=mode, fusion=fusion)  # type: ignore[arg-type]
    assert plain["hits"] == [asdict(hit) for hit in expected]
    for hit, why in zip(explained["hits"], explained["explanations"], strict=True):
        assert why["first_stage"] == hit["score"] and not why["reranked"]
        assert 0.0 <= hit["relevance"] <= 1.0  # with the evidence it was calibrated from
        assert (why["cosine"] is None) == (mode == "sparse")
        assert (why["coverage"] is None) == (mode == "dense")
        if mode == "hybrid":
            assert why["fusion"] == fusion
            assert why["dense"] + why["sparse"] == hit["score"]
            assert why["dense_rank"] or why["sparse_rank"]
        else:
            assert why[mode] == why[f"{mode}_score"] == hit["score"]
            assert why["dense" if mode == "sparse" else "sparse"] is None
        text = document(api, hit["key"])["text"]
        assert text[hit["start"] : hit["end"]] == hit["text"]
        assert text[: hit["start"]].endswith(why["before"])
        assert text[hit["end"] :].startswith(why["after"])


def test_explain_says_which_fusion_a_query_got(api: TestClient, folder: Path) -> None:
    for query in (ENGLISH, ARABIC):
        body = {"query": query, "index": NAME, "k": 3, "explain": True}
        found = api.post("/search", json=body).json()["explanations"]
        with Index.open(folder) as index:
            choice = index.explain(query, k=3)[0].contribution.choice
        assert choice is not None and found
        assert {why["fusion_choice"] for why in found} == {choice.name}
        assert {why["dense_weight"] for why in found} == {choice.dense_weight}
        assert {why["fusion_feedback"] for why in found} == {choice.feedback}
        assert found[0]["fusion_evidence"] == asdict(choice.evidence)


def test_search_takes_mmr_and_returns_relevance(api: TestClient, folder: Path) -> None:
    body = {"query": ENGLISH, "index": NAME, "k": 2, "mmr_lambda": 0.5, "mmr_candidates": 6}
    found = api.post("/search", json=body)
    assert found.status_code == 200, found.text
    with Index.open(folder) as index:
        expected = index.search(ENGLISH, k=2, mmr_lambda=0.5, mmr_candidates=6)
    assert found.json()["hits"] == [asdict(hit) for hit in expected]
    assert all(0.0 <= hit["relevance"] <= 1.0 for hit in found.json()["hits"])
    refused = api.post("/search", json=body | {"mmr_candidates": 1})
    assert refused.status_code == 422 and "mmr_candidates=1 < k=2" in refused.text


def test_index_details_doctor_and_documents(api: TestClient, folder: Path) -> None:
    details = api.get(f"/indexes/{NAME}").json()
    with Index.open(folder) as index:
        info = index.info()
    assert (details["documents"], details["chunks"], details["vectors"]) == (
        info.documents,
        info.chunks,
        info.vectors,
    )
    assert details["embedding_model"] == MODEL and details["generation"] == info.generation
    assert {(each["language"], each["script"]) for each in details["languages"]} >= {
        ("en", "Latn"),
        ("ar", "Arab"),
    }
    assert [(s["name"], s["value"]) for s in details["settings"]] == info.settings
    doctor = api.get(f"/indexes/{NAME}/doctor").json()
    assert doctor["healthy"] and doctor["problems"] == [] and doctor["hint"] == ""
    assert doctor["counts"] == {"documents": info.documents, "chunks": info.chunks}
    listed = api.get(f"/indexes/{NAME}/documents").json()
    assert listed["total"] == info.documents == len(listed["documents"])
    one = api.get(f"/indexes/{NAME}/documents", params={"glob": "*.md", "limit": 1}).json()
    assert one["total"] == 1 and one["documents"][0]["key"].endswith("water.md")
    assert api.get(f"/indexes/{NAME}/documents", params={"limit": 0}).status_code == 422
    assert api.get("/indexes/nope").status_code == 404
    assert api.get("/indexes/nope/doctor").status_code == 404


def test_document_view_has_chunks_choice_key_and_language(api: TestClient, folder: Path) -> None:
    listed = api.get(f"/indexes/{NAME}/documents").json()["documents"]
    hadith = next(each["key"] for each in listed if each["key"].endswith("hadith.txt"))
    shown = document(api, hadith)
    with Index.open(folder) as index:
        stored = index.store.stored_documents([hadith])[0]
    assert shown["text"] == stored.document.text
    assert [(c["start"], c["end"]) for c in shown["chunks"]] == [
        (c.start, c.end) for c in stored.chunks
    ]
    chunking = shown["chunking"]
    assert chunking["chosen"] and chunking["metrics"] == ["SC", "BI", "ICC", "DCC", "RC"]
    if chunking["adaptive"]:
        assert chunking["chosen"] in {each["chunker"] for each in chunking["candidates"]}
        scores = [each["score"] for each in chunking["candidates"]]
        assert scores == sorted(scores, reverse=True)
    language = shown["language"]
    assert (language["language"], language["script"]) == ("ar", "Arab")
    assert language["method"] and language["reason"]
    normalized = shown["normalization"]
    assert normalized["enabled"] and normalized["key"] != shown["text"]
    with Index.open(folder) as index:
        assert normalized["key"] == index.matching_key(shown["text"], "ar")
    for change in normalized["changes"]:
        assert shown["text"][change["start"] : change["end"]] == change["before"]
        assert normalized["key"][change["key_start"] : change["key_end"]] == change["after"]
    missing = api.get(f"/indexes/{NAME}/document", params={"key": "/no/such.txt"})
    assert missing.status_code == 404 and "no document" in missing.json()["detail"]


def test_page_and_endpoints_are_served_and_documented(api: TestClient) -> None:
    page = api.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy
    assets = re.findall(r'(?:src|href)="(page/[^"]+)"', page.text)
    assert {Path(url).suffix for url in assets} == {".js", ".css", ".svg"}
    for url in assets:
        assert api.get(f"/{url}").status_code == 200
    imports = re.findall(r'from "\./([^"]+)"', api.get("/page/main.js").text)
    for module in imports:
        script = api.get(f"/page/{module}")
        assert script.status_code == 200 and "javascript" in script.headers["content-type"]
        assert "innerHTML" not in script.text and "http" not in script.text
    paths = api.get("/openapi.json").json()["paths"]
    for path in ("/indexes/{name}", "/indexes/{name}/doctor", "/indexes/{name}/documents"):
        assert "get" in paths[path], path
    assert "get" in paths["/indexes/{name}/document"] and "get" in paths["/languages"]
    assert "explain" in api.get("/openapi.json").text
    assert {"en", "ar", "am"} <= set(api.get("/languages").json())


def test_the_server_listens_on_this_machine_only_by_default() -> None:
    assert inspect.signature(serve).parameters["host"].default.default == "127.0.0.1"


# -- the page in a browser ---------------------------------------------------------------------


def _chromium() -> str | None:
    """A Chromium to drive: ``RAGKIT_CHROMIUM``, Debian's, or one Playwright downloaded."""
    for candidate in (os.environ.get("RAGKIT_CHROMIUM"), "chromium", "chromium-browser"):
        if candidate and (found := shutil.which(candidate)):
            return found
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright is not installed: `make browser` installs it"
    )
    executable = _chromium()
    with sync_api.sync_playwright() as playwright:
        if executable is None and not Path(playwright.chromium.executable_path).exists():
            pytest.skip(
                "no Chromium to drive: `make browser` installs Debian's chromium (apt-get, as "
                "root); or set RAGKIT_CHROMIUM to a Chromium executable"
            )
        launched = playwright.chromium.launch(executable_path=executable, headless=True)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def base_url(served: ServedIndexes) -> Iterator[str]:
    """The app served by uvicorn on a free port of 127.0.0.1, in a thread of this process."""
    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(create_app(served), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def page(browser: Any, base_url: str, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh page on ``/``; ``page.dialogs`` lists every dialog that opened (dismissed), and
    ``page.requests`` every URL it asked for. A screenshot is kept after the test."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    opened = context.new_page()
    opened.dialogs = []
    opened.requests = []
    opened.errors = []
    opened.on("dialog", lambda dialog: (opened.dialogs.append(dialog.message), dialog.dismiss()))
    opened.on("request", lambda sent: opened.requests.append(sent.url))
    opened.on("pageerror", lambda error: opened.errors.append(str(error)))
    opened.goto(f"{base_url}/")
    opened.wait_for_selector("body[data-ready=true]", timeout=20_000)
    yield opened
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    opened.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
    context.close()
    assert opened.errors == []


def open_document(page: Any, key: str) -> None:
    """Show the document view of ``key``, as a hit's or a list's link does."""
    page.evaluate(
        "key => { location.hash = `#document?index=pages&key=${encodeURIComponent(key)}` }", key
    )
    page.wait_for_function(
        "key => document.querySelector('#document-view .facts dd')?.textContent === key", arg=key
    )


def search(page: Any, query: str) -> list[dict[str, Any]]:
    """Type ``query``, press Enter, and read the hits the page shows."""
    page.fill("#query", query)
    page.press("#query", "Enter")
    page.wait_for_function("q => document.getElementById('hits').dataset.query === q", arg=query)
    return list(
        page.eval_on_selector_all(
            "#hits > li",
            """items => items.map(item => ({
                key: item.dataset.key, start: Number(item.dataset.start),
                end: Number(item.dataset.end), span: item.querySelector('mark.span').textContent,
                direction: getComputedStyle(item.querySelector('.context')).direction,
                dir: item.querySelector('.context').getAttribute('dir'),
                parts: item.querySelector('.parts').textContent,
                relevance: item.querySelector('.relevance').textContent,
                evidence: item.querySelector('.relevance').title}))""",
        )
    )


def test_search_in_english_shows_each_span_inside_its_document(
    page: Any, api: TestClient, base_url: str
) -> None:
    assert page.title() == "ragkit"
    assert page.eval_on_selector("#index-picker", "select => select.value") == NAME
    hits = search(page, ENGLISH)
    expected = api.post("/search", json={"query": ENGLISH, "index": NAME}).json()["hits"]
    assert [hit["key"] for hit in hits] == [hit["key"] for hit in expected]
    assert hits[0]["key"].endswith("water.md")
    for hit in hits:
        text = document(api, hit["key"])["text"]
        assert hit["span"] == text[hit["start"] : hit["end"]]
        assert "dense" in hit["parts"] and "sparse" in hit["parts"]
    shown = [float(hit["relevance"].removeprefix("relevance ")) for hit in hits]
    assert shown == pytest.approx([hit["relevance"] for hit in expected], abs=0.0051)
    assert "cosine" in hits[0]["evidence"] and "coverage" in hits[0]["evidence"]
    assert hits[0]["dir"] == "auto" and hits[0]["direction"] == "ltr"
    assert "#search?" in page.url and "q=" in page.url
    assert all(url.startswith(base_url) for url in page.requests)  # nothing from elsewhere


def test_a_literal_span_shows_its_phrase_lift(page: Any, api: TestClient) -> None:
    span = "Adding salt lowers the melting point"
    hits = search(page, span)
    explained = api.post("/search", json={"query": span, "index": NAME, "explain": True}).json()
    lifted = [why["phrase"] > 0 for why in explained["explanations"]]
    assert hits[0]["key"].endswith("water.md") and lifted[0]
    assert ["phrase +" in hit["parts"] for hit in hits] == lifted


def test_a_table_of_contents_shows_its_demotion(page: Any, api: TestClient) -> None:
    query = "KVM"  # in the contents' chunk of three entries (24-token chunks cut them apart)
    hits = search(page, query)
    explained = api.post("/search", json={"query": query, "index": NAME, "explain": True}).json()
    demoted = [why["listing"] < 0 for why in explained["explanations"]]
    assert any(demoted) and hits[demoted.index(True)]["key"].endswith("handbook-contents.txt")
    assert ["listing -" in hit["parts"] for hit in hits] == demoted


def test_search_in_arabic_renders_right_to_left(page: Any, api: TestClient) -> None:
    hits = search(page, ARABIC)
    first = hits[0]
    assert first["key"].endswith("hadith.txt")
    assert first["span"] == document(api, first["key"])["text"][first["start"] : first["end"]]
    assert first["direction"] == "rtl"
    assert page.eval_on_selector("#hits .key", "link => getComputedStyle(link).direction") in {
        "ltr",
        "rtl",
    }


def test_keys_move_between_hits_and_open_the_document_with_its_bands(
    page: Any, api: TestClient, folder: Path
) -> None:
    hits = search(page, ENGLISH)
    page.focus("#query")
    for key, rank in (("ArrowDown", "1"), ("ArrowDown", "2"), ("ArrowUp", "1")):
        page.keyboard.press(key)
        assert page.evaluate("document.activeElement.dataset.rank") == rank
    assert page.get_attribute("#hits > li:first-child", "aria-selected") == "true"
    page.keyboard.press("Enter")
    page.wait_for_selector("#document-view .band")
    assert page.url.split("#", 1)[1].startswith("document?")
    bands = page.eval_on_selector_all("#document-view .band", "bands => bands.length")
    command = ["info", "--index", str(folder), "--document", hits[0]["key"]]
    printed = CliRunner().invoke(cli, command).output
    counted = re.search(r"(\d+) chunks? · \d+ characters", printed)
    assert counted is not None, printed
    assert bands == int(counted.group(1)) > 1
    marked = page.eval_on_selector_all(
        "#document-view .band.hit-band", "bands => bands.map(band => band.dataset.start)"
    )
    assert marked == [str(hits[0]["start"])]
    chunking = document(api, hits[0]["key"])["chunking"]
    assert chunking["adaptive"]  # the index chunks adaptively: every candidate's scores show
    rows = page.eval_on_selector_all(
        "#document-view .scores tbody tr", "rows => rows.map(row => row.textContent)"
    )
    assert len(rows) == len(chunking["candidates"]) >= 2
    chosen = page.eval_on_selector("#document-view td.chosen", "cell => cell.textContent")
    assert chosen == f"✓ {chunking['chosen']}" and page.is_visible("text=matching key")


def test_document_view_marks_what_normalization_changed(page: Any, api: TestClient) -> None:
    listed = api.get(f"/indexes/{NAME}/documents", params={"glob": "*hadith*"}).json()
    key = listed["documents"][0]["key"]
    open_document(page, key)
    shown = document(api, key)
    marks = page.eval_on_selector_all(
        "#document-view .side-by-side figure:first-child mark.changed",
        "marks => marks.map(mark => mark.textContent)",
    )
    assert marks == [change["before"] for change in shown["normalization"]["changes"]]
    key_side = page.eval_on_selector(
        "#document-view .side-by-side figure:last-child .doc-text", "block => block.textContent"
    )
    assert key_side == shown["normalization"]["key"]
    direction = "block => getComputedStyle(block).direction"
    assert page.eval_on_selector("#document-view .chunks .doc-text", direction) == "rtl"
    assert page.is_visible(f"text={shown['language']['reason']}")


def test_hostile_text_and_keys_show_as_text_and_run_nothing(page: Any, api: TestClient) -> None:
    for query in ("volcanic ash over the ocean", "glaciers carve valleys"):
        hits = search(page, query)
        assert any("<script>" in hit["span"] or "<b onmouseover" in hit["span"] for hit in hits)
    listed = api.get(f"/indexes/{NAME}/documents").json()["documents"]
    hostile = [each["key"] for each in listed if "<" in each["key"]]
    assert len(hostile) == 2
    for key in hostile:
        open_document(page, key)
        heading = page.eval_on_selector("#document-view h2", "h => h.textContent")
        assert heading in (key, XSS_RECORD["title"])
    page.evaluate("location.hash = '#index?index=pages'")
    page.wait_for_selector("#index-view .doctor .ok")
    shown = page.eval_on_selector("#index-view .documents", "table => table.textContent")
    assert XSS_FILE in shown and "<svg onload=alert(5)>" in shown
    injected = "document.querySelectorAll('main img, main script, main svg, main b, [onerror]')"
    assert page.evaluate(f"{injected}.length") == 0
    assert page.evaluate("document.querySelectorAll('a[href^=\"javascript:\"]').length") == 0
    page.wait_for_timeout(300)  # an onerror or onload would have fired by now
    assert page.dialogs == []
