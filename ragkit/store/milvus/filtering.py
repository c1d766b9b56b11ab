"""Search filters on a Milvus index: a Milvus expression selects candidate document rows on the
server, and each is checked exactly on the client — the folder store's answers, without reading
every document.

:func:`ragkit.store.filters.milvus_expression` writes the expression (its module says which
conditions Milvus says exactly and which wider, and why); the candidates it returns are checked
with :func:`ragkit.store.filters.matches`, their text read from ``C_texts`` only when a
``content`` condition needs it. Values are bound as template parameters (``filter_params``)
where the server evaluates templates — probed once per connection with every construct the
expressions use — and otherwise (Milvus Lite 3) written as escaped literals. When nothing
matched, a positive condition on a metadata key the index's record
(:mod:`ragkit.store.milvus.metadata_kinds`) does not hold is a mistyped key
(:func:`ragkit.store.filters.check_known`); an index whose record does not cover every
document yet reads the keys of every document for that message.

Example:
    >>> from ragkit.store.filters import milvus_expression
    >>> milvus_expression({"language": "ar"}).template()
    ('language == {p0}', {'p0': 'ar'})
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
from pymilvus import MilvusClient

from ragkit.errors import BackendUnavailableError, RagkitError
from ragkit.store.filters import check_known, matches, milvus_expression, parse_filter
from ragkit.store.filters.expression import Expression
from ragkit.store.filters.milvus import Types
from ragkit.store.filters.tree import Filter
from ragkit.store.milvus.address import MilvusAddress
from ragkit.store.milvus.collections import guarded, id_list, names, scan

__all__ = ["DocumentFilter"]

ROW_FIELDS = ["version", "key", "external_id", "source", "language", "metadata"]
TEXT_BATCH = 256  # documents whose texts one query reads
# Every construct an expression may hold, with a template value in each: a server that parses
# this evaluates templates wherever ragkit writes them.
PROBE = (
    'id == {a} and source like {b} and json_contains(metadata["ragkit"], {c}) '
    'and metadata["ragkit"] >= {d} and not (exists metadata["ragkit"] or metadata["ragkit"] is null)'
)


class DocumentFilter:
    """Filters over one index's document rows."""

    def __init__(self, address: MilvusAddress, client: MilvusClient) -> None:
        self.address = address
        self.client = client
        self.collections = names(address.collection)
        self._templates: bool | None = None

    def ids(self, filters: dict[str, Any] | Filter, kinds: Types) -> np.ndarray:
        """The ids of the documents matching ``filters`` (``kinds``: the index's record of
        metadata keys and kinds, None when it does not cover every document).

        Raises:
            InvalidArgumentError: a malformed filter, or a mistyped key when nothing matched.
        """
        tree = parse_filter(filters)
        found = self.matching(tree, kinds)
        if not len(found):  # nothing matched: a mistyped key should say so, not return nothing
            check_known(tree, set(kinds) if kinds is not None else self._all_keys())
        return found

    def matching(self, filters: dict[str, Any] | Filter, kinds: Types) -> np.ndarray:
        """The ids of the documents matching ``filters``, none when nothing matches (a listing's
        answer: no mistyped-key check)."""
        tree = parse_filter(filters)
        expression = milvus_expression(tree, kinds)
        return np.fromiter(self._matching(tree, expression), dtype=np.int64)

    def _matching(self, tree: Filter, expression: Expression) -> Iterator[int]:
        if expression.tokens is False:
            return
        rows = self._candidates(expression)
        if expression.content:
            rows = self._with_texts(rows)
        yield from (int(row["id"]) for row in rows if matches(tree, row))

    def _candidates(self, expression: Expression) -> Iterator[dict[str, Any]]:
        if self.templates():
            text, params = expression.template()
            return scan(self.address, self.client, self.collections["documents"], ROW_FIELDS,
                        text, params)  # fmt: skip
        return scan(self.address, self.client, self.collections["documents"], ROW_FIELDS,
                    expression.inline())  # fmt: skip

    def templates(self) -> bool:
        """Whether the server evaluates expression templates (probed once)."""
        if self._templates is None:
            try:
                guarded(self.address, "probing filter templates", self.client.query,
                        self.collections["documents"], filter=PROBE, output_fields=["id"],
                        limit=1, filter_params={"a": -1, "b": "%", "c": "x", "d": 0})  # fmt: skip
                self._templates = True
            except BackendUnavailableError:
                raise
            except RagkitError:  # the server parsed no template: Milvus Lite 3, Milvus < 2.5
                self._templates = False
        return self._templates

    def _with_texts(self, rows: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """``rows`` with each document's original text (``text``), read a batch at a time."""
        batch: list[dict[str, Any]] = []
        for row in rows:
            batch.append(row)
            if len(batch) == TEXT_BATCH:
                yield from self._texts(batch)
                batch = []
        yield from self._texts(batch)

    def _texts(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if not rows:
            return []
        versions = {int(row["id"]): row["version"] for row in rows}
        parts: dict[int, list[tuple[int, str]]] = {}
        expression = f"document_id in {id_list(versions)}"
        fields = ["document_id", "version", "part", "text"]
        for part in scan(self.address, self.client, self.collections["texts"], fields, expression):
            if versions.get(int(part["document_id"])) == part["version"]:
                parts.setdefault(int(part["document_id"]), []).append((part["part"], part["text"]))
        return [
            row | {"text": "".join(text for _, text in sorted(parts.get(int(row["id"]), [])))}
            for row in rows
        ]

    def _all_keys(self) -> set[str]:
        """The metadata keys of every document (an index whose record does not cover them)."""
        rows = scan(self.address, self.client, self.collections["documents"], ["metadata"])
        return {key for row in rows for key in (row["metadata"] or {})}
