"""RagkitDocumentStore against Haystack's own conformance suite
(``haystack.testing.document_store.DocumentStoreBaseTests``) on the index folder and on a real
Milvus server (``milvus_server``), then as Haystack's docs use a document store: a
DocumentWriter in an indexing pipeline, ragkit's retriever over the store, serialization,
async, and what ragkit does with what it does not store (embeddings, blobs, empty texts, long
ids)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # before haystack loads
pytest.importorskip("haystack", reason='needs pip install "ragkit-pipeline[haystack]"')

from haystack import Document, Pipeline
from haystack.components.writers import DocumentWriter
from haystack.core.errors import PipelineRuntimeError
from haystack.dataclasses import ByteStream
from haystack.document_stores.errors import DuplicateDocumentError
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.document_stores.types import DuplicatePolicy
from haystack.errors import FilterError
from haystack.testing.document_store import DocumentStoreBaseTests
from integration_texts import BREAD, KETTLE, RAIL

from conftest import MODEL
from ragkit import RagkitError
from ragkit.integrations.haystack import (
    RagkitDocumentSplitter,
    RagkitDocumentStore,
    RagkitRetriever,
)

SETTINGS = {"model": MODEL, "chunker": "sentence"}  # one chunker: tiny documents, quick tests


def _comparable(document: Document) -> tuple:
    return (document.id, document.content, document.meta, document.blob)


class RagkitStoreTests(DocumentStoreBaseTests):
    """The suite with ragkit's documented differences from Haystack's in-memory store."""

    @staticmethod
    def assert_documents_are_equal(received: list[Document], expected: list[Document]) -> None:
        # The contract (RagkitDocumentStore's docstring): documents come back ordered by id,
        # with the id, text and metadata written, and without the caller's embedding (ragkit
        # embeds with its index's model) or a score. Haystack's suite invites this override
        # for stores that differ so ("if a Document Store implementation has a different
        # behaviour it should override this method").
        assert [d.embedding for d in received] == [None] * len(received)
        assert [d.score for d in received] == [None] * len(received)
        ordered = sorted(expected, key=lambda d: d.id)
        assert [_comparable(d) for d in received] == [_comparable(d) for d in ordered]

    def test_write_documents(self, document_store: RagkitDocumentStore) -> None:
        """DuplicatePolicy.NONE (DocumentWriter's default) is FAIL, as in the in-memory
        store."""
        document = Document(content="test doc")
        assert document_store.write_documents([document]) == 1
        with pytest.raises(DuplicateDocumentError):
            document_store.write_documents([document])
        self.assert_documents_are_equal(document_store.filter_documents(), [document])


class TestFolderStore(RagkitStoreTests):
    @pytest.fixture
    def document_store(self, tmp_path: Path) -> Iterator[RagkitDocumentStore]:
        store = RagkitDocumentStore(tmp_path / "index", **SETTINGS)
        yield store
        store.index.close()


@pytest.fixture(scope="class")
def milvus_store(milvus_server: str) -> Iterator[RagkitDocumentStore]:
    """One collection for a test class, dropped after it: creating one costs ~2.5 s on a
    milvus-lite server (pymilvus polls each new index every 0.5 s), 2 minutes a suite."""
    store = RagkitDocumentStore(f"milvus://{milvus_server}/t_{uuid.uuid4().hex[:12]}", **SETTINGS)
    yield store
    milvus = store.index.store
    for name in milvus.collections.values():
        milvus.client.drop_collection(name)
    store.index.close()


@pytest.fixture
def empty_milvus_store(milvus_store: RagkitDocumentStore) -> RagkitDocumentStore:
    """The class's Milvus store, emptied (through the store's own delete) for each test."""
    milvus_store.delete_documents([d.id for d in milvus_store.filter_documents()])
    assert milvus_store.count_documents() == 0
    return milvus_store


class TestMilvusStore(RagkitStoreTests):
    @pytest.fixture
    def document_store(self, empty_milvus_store: RagkitDocumentStore) -> RagkitDocumentStore:
        return empty_milvus_store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[RagkitDocumentStore]:
    opened = RagkitDocumentStore(tmp_path / "index", **SETTINGS)
    yield opened
    opened.index.close()


def _pipelines(store: RagkitDocumentStore) -> tuple[Pipeline, Pipeline]:
    """Haystack's two pipelines over one store: indexing (splitter → writer) and querying."""
    indexing = Pipeline()
    indexing.add_component("splitter", RagkitDocumentSplitter(split_length=48, chunker="sentence"))
    indexing.add_component("writer", DocumentWriter(document_store=store))
    indexing.connect("splitter", "writer")
    querying = Pipeline()
    querying.add_component("retriever", RagkitRetriever(document_store=store, top_k=2))
    return indexing, querying


@pytest.mark.parametrize("backend", ["folder", "milvus"])
def test_document_writer_and_retriever_pipelines(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if backend == "folder":
        store = RagkitDocumentStore(tmp_path / "index", **SETTINGS)
    else:
        store = request.getfixturevalue("empty_milvus_store")
    indexing, querying = _pipelines(store)
    sources = [Document(content=RAIL, meta={"topic": "rail"}), Document(content=KETTLE)]
    written = indexing.run({"splitter": {"documents": sources}})["writer"]["documents_written"]
    assert written == store.count_documents() > 2
    found = querying.run({"retriever": {"query": "How did the telegraph keep trains apart?"}})
    best = found["retriever"]["documents"][0]
    assert "trains apart" in (best.content or "") and best.meta["topic"] == "rail"
    # the splitter's meta, stored as written: the passage points into the document before
    # splitting, and a passage that is a whole split has that split's id
    assert best.meta["source_id"] == sources[0].id
    assert RAIL[best.meta["split_idx_start"] : best.meta["split_idx_end"]] == best.content
    stored = {d.id: d for d in store.filter_documents()}
    assert stored[best.id].content == best.content
    with pytest.raises(PipelineRuntimeError, match="already stored") as failed:  # NONE: FAIL
        indexing.run({"splitter": {"documents": sources}})
    assert isinstance(failed.value.__cause__, DuplicateDocumentError)
    again = indexing.run(
        {"splitter": {"documents": sources}, "writer": {"policy": DuplicatePolicy.OVERWRITE}}
    )
    assert again["writer"]["documents_written"] == written == store.count_documents()


def test_duplicate_policies_within_one_call(store: RagkitDocumentStore) -> None:
    first, second = Document(id="x", content="First text."), Document(id="x", content="Second.")
    with pytest.raises(DuplicateDocumentError, match="given twice"):
        store.write_documents([Document(content="Kept out."), first, second])
    assert store.count_documents() == 0  # refused before anything was written
    assert store.write_documents([first, second], DuplicatePolicy.SKIP) == 1
    assert [d.content for d in store.filter_documents()] == ["First text."]
    assert store.write_documents([first, second], DuplicatePolicy.OVERWRITE) == 2
    assert [d.content for d in store.filter_documents()] == ["Second."]
    changed = Document(id="x", content="Second.", meta={"year": 2024})
    assert store.write_documents([changed], DuplicatePolicy.OVERWRITE) == 1
    assert [d.meta for d in store.filter_documents()] == [{"year": 2024}]


def test_odd_and_long_ids_round_trip(store: RagkitDocumentStore) -> None:
    ids = ["*", "docs/a.md", " spaced ", "ماء", "a" * 65_535, "x:0-12", "[1]"]
    documents = [Document(id=i, content=f"Text number {n}.") for n, i in enumerate(ids)]
    assert store.write_documents(documents) == len(ids)
    assert store.filter_documents() == sorted(documents, key=lambda d: d.id)
    store.delete_documents(["*", "[1]", "docs/*"])  # ids, never patterns
    assert sorted(d.id for d in store.filter_documents()) == sorted(set(ids) - {"*", "[1]"})
    too_long = Document(id="é" * 40_000, content="Two bytes a character.")
    with pytest.raises(ValueError, match="80,000 bytes.*65,535"):
        store.write_documents([Document(content="Not written either."), too_long])
    assert store.count_documents() == len(ids) - 2


def test_what_ragkit_does_not_store(
    store: RagkitDocumentStore, caplog: pytest.LogCaptureFixture
) -> None:
    blob = ByteStream(b"%PDF-1.7", mime_type="application/pdf")
    given = Document(content="Ice floats on water.", embedding=[0.5] * 768, blob=blob, score=0.9)
    assert store.write_documents([given]) == 1
    assert "not their embedding and blob" in caplog.text
    assert "all-minilm-l6-v2" in caplog.text
    [stored] = store.filter_documents()
    assert (stored.id, stored.content, stored.embedding, stored.blob, stored.score) == (
        given.id,
        given.content,
        None,
        None,
        None,
    )
    for empty in (Document(content=None, blob=blob), Document(content=" \n")):
        with pytest.raises(ValueError, match="no text content"):
            store.write_documents([empty])
    for wrong in ("not a list", [{"content": "a dict"}], None):
        with pytest.raises(ValueError, match="list of Haystack Documents"):
            store.write_documents(wrong)  # type: ignore[arg-type]


def test_documents_the_index_holds_otherwise(store: RagkitDocumentStore, tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "kettle.md").write_text(KETTLE, encoding="utf-8")
    store.index.ingest([tmp_path / "docs"])
    store.index.add([{"id": "bread", "text": BREAD, "title": "Bread"}], source="<notes>")
    listed = {d.id: d for d in store.filter_documents()}
    kettle = listed[str(tmp_path / "docs" / "kettle.md")]
    assert (kettle.content, kettle.meta["file_path"]) == (KETTLE, kettle.id)
    assert listed["bread"].meta == {"title": "Bread"}
    with pytest.raises(RagkitError, match="already taken by <notes>"):
        store.write_documents(
            [Document(id="bread", content="Mine now.")], DuplicatePolicy.OVERWRITE
        )
    assert store.write_documents([Document(id="bread", content="?")], DuplicatePolicy.SKIP) == 0


def test_serialization(store: RagkitDocumentStore) -> None:
    data = store.to_dict()
    assert data["init_parameters"] == {
        "index": str(store.index.store.location),
        "source": "<haystack>",
        **SETTINGS,
    }
    again = RagkitDocumentStore.from_dict(data)
    assert again.index.store.location == store.index.store.location
    store.write_documents([Document(id="rail", content=RAIL)])
    indexing, querying = _pipelines(store)
    for pipeline in (indexing, querying):
        loaded = Pipeline.loads(pipeline.dumps())
        component = loaded.get_component("writer" if pipeline is indexing else "retriever")
        assert isinstance(component.document_store, RagkitDocumentStore)
        assert component.document_store.count_documents() == 1
    retriever = RagkitRetriever.from_dict(RagkitRetriever(store, top_k=1).to_dict())
    assert retriever.run(query="standard railway time")["documents"][0].meta["source_id"] == "rail"


def test_clear_errors(store: RagkitDocumentStore) -> None:
    with pytest.raises(RagkitError, match="angle brackets"):
        RagkitDocumentStore(store.index, source="haystack")
    with pytest.raises(RagkitError, match="one of them"):
        RagkitRetriever(store.index, document_store=store)
    with pytest.raises(RagkitError, match="searches a RagkitDocumentStore"):
        RagkitRetriever(document_store=InMemoryDocumentStore())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="list of document ids"):
        store.delete_documents("abc")  # type: ignore[arg-type]
    with pytest.raises(FilterError):
        store.filter_documents({"operator": "AND"})


@pytest.mark.anyio
async def test_async(store: RagkitDocumentStore) -> None:
    writer = DocumentWriter(document_store=store)
    written = await writer.run_async([Document(id="kettle", content=KETTLE)])
    assert written == {"documents_written": 1}
    assert await store.count_documents_async() == 1
    assert [d.id for d in await store.filter_documents_async()] == ["kettle"]
    await store.delete_documents_async(["kettle"])
    assert await store.count_documents_async() == 0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
