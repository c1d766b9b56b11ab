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
pytest.importorskip("haystack", reason='needs pip install "ragkit[haystack]"')

from haystack import Document, Pipeline
from haystack.components.writers import DocumentWriter
from haystack.document_stores.errors import DuplicateDocumentError
from haystack.document_stores.types import DuplicatePolicy
from haystack.testing.document_store import DocumentStoreBaseTests

from conftest import MODEL
from ragkit import Index
from ragkit.integrations.haystack import RagkitDocumentStore, RagkitRetriever

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


class TestMilvusStore(RagkitStoreTests):
    @pytest.fixture
    def document_store(self, milvus_store: RagkitDocumentStore) -> RagkitDocumentStore:
        """The class's store, emptied (through the store's own delete) for each test."""
        milvus_store.delete_documents([d.id for d in milvus_store.filter_documents()])
        assert milvus_store.count_documents() == 0
        return milvus_store
