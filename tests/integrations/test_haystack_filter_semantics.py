"""Haystack's own filter tests (``haystack.testing.document_store.FilterDocumentsTest``) over a
document store that filters with ragkit's language alone — :func:`haystack_filters` then
:func:`ragkit.store.filters.matches` — so ragkit's semantics are Haystack's wherever Haystack's
tests say what they must be (``== None``, ``!=`` on a missing field, ISO dates, refusals raised
as ``FilterError``). The backends agree with ``matches`` (``tests/store/test_filter_backends.py``)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("haystack")

from haystack import Document
from haystack.testing.document_store import FilterDocumentsTest

from ragkit.integrations.haystack import haystack_filters
from ragkit.store.filters import matches


class FilteringStore:
    """Just enough of a Haystack DocumentStore to run its filter tests: documents in a list,
    filtered by ragkit's evaluator."""

    def __init__(self) -> None:
        self.documents: list[Document] = []

    def write_documents(self, documents: list[Document], policy: Any = None) -> int:
        self.documents.extend(documents)
        return len(documents)

    def count_documents(self) -> int:
        return len(self.documents)

    def filter_documents(self, filters: dict[str, Any] | None = None) -> list[Document]:
        native = haystack_filters(filters) or {}
        return [d for d in self.documents if matches(native, _row(d))]


def _row(document: Document) -> dict[str, Any]:
    return {"key": document.id, "external_id": document.id, "source": "<haystack>",
            "language": "en", "metadata": document.meta, "text": document.content or ""}  # fmt: skip


class TestHaystackFilterSemantics(FilterDocumentsTest):
    @pytest.fixture
    def document_store(self) -> FilteringStore:
        return FilteringStore()
