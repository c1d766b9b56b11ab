"""What :class:`~ragkit.integrations.llama_index.RagkitVectorStore` does apart from being a
LlamaIndex class: the nodes it stores in a ragkit index (:class:`StoredNodes`: stable ids,
older versions removed, nodes named by id) and LlamaIndex queries as ragkit search options
(:func:`search_options`; filters arrive already translated to ragkit's language).

Example:
    >>> from llama_index.core.vector_stores.types import VectorStoreQuery
    >>> query = VectorStoreQuery(query_str="water", similarity_top_k=3, mode="hybrid", alpha=0.8)
    >>> options = search_options(query, {}, SearchOptions(), None, DocumentIds())
    >>> options.k, options.mode, options.dense_weight
    (3, 'hybrid', 0.8)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ragkit.embed.models import E5_NAMES, MINILM_NAMES
from ragkit.errors import InvalidArgumentError
from ragkit.index import Index
from ragkit.integrations.common import (
    FrameworkNotInstalled,
    check_k,
    delete_records,
    refuse_skipped,
)
from ragkit.integrations.llama_index_nodes import (
    DOCUMENT_FIELD,
    STORED_FIELD,
    DocumentIds,
    NodeRecord,
    node_record,
)
from ragkit.query import SearchOptions
from ragkit.search.fusion import SearchMode
from ragkit.store import DocumentEntry
from ragkit.store.catalog import is_glob

try:
    from llama_index.core.schema import BaseNode
    from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryMode
except ImportError as error:
    raise FrameworkNotInstalled.of("llama-index-core", "llama-index", error) from error

# LlamaIndex query modes as ragkit's: the search mode (None: the store's own), and reranking.
QUERY_MODES: dict[VectorStoreQueryMode, tuple[SearchMode | None, bool]] = {
    VectorStoreQueryMode.DEFAULT: (None, False),
    VectorStoreQueryMode.MMR: (None, False),
    VectorStoreQueryMode.HYBRID: ("hybrid", False),
    VectorStoreQueryMode.SPARSE: ("sparse", False),
    VectorStoreQueryMode.TEXT_SEARCH: ("sparse", False),
    VectorStoreQueryMode.SEMANTIC_HYBRID: ("hybrid", True),
}
MMR_THRESHOLD = 0.5  # LlamaIndex's own default (get_top_k_mmr_embeddings)
MMR_KEYWORDS = ("mmr_threshold", "mmr_prefetch_k", "mmr_prefetch_factor")
# Search options a query may pass as vector_store_kwargs (k, mode and filters come from it).
QUERY_OPTIONS = tuple(n for n in SearchOptions.model_fields if n not in ("k", "mode", "filters"))
_PASSAGE = re.compile(r"(.+):(\d+)-(\d+)", re.DOTALL)


class StoredNodes:
    """The nodes a vector store keeps in ``index`` as records of ``source``.

    Example:
        >>> nodes = StoredNodes(Index.open("my-index"), "<llama-index>")  # doctest: +SKIP
        >>> nodes.add([TextNode(id_="faq-1", text="Water boils at 100 C.")])  # doctest: +SKIP
        ['faq-1']
    """

    def __init__(self, index: Index, source: str) -> None:
        self.index = index
        self.source = source
        self.ids = DocumentIds()

    def add(self, nodes: Sequence[BaseNode]) -> list[str]:
        """Store ``nodes`` and return their keys (see ``RagkitVectorStore.add``)."""
        if not nodes:
            return []
        self.ids.assign(nodes)
        chosen = [node_record(node, self.ids) for node in nodes]
        records: dict[str, NodeRecord] = {}
        for record in chosen:
            records.pop(record.key, None)  # a key given twice: the last node counts
            records[record.key] = record
        report = self.index.add([r.fields for r in records.values()], source=self.source)
        self._remove_older_versions(records)
        refuse_skipped(report)
        return [record.key for record in chosen]

    def _remove_older_versions(self, added: dict[str, NodeRecord]) -> None:
        """Remove the stored nodes of the documents in ``added`` whose version is not the one
        added (a document whose version is not known keeps its other nodes)."""
        versions: dict[str, str | None] = {}
        for record in added.values():
            held = versions.setdefault(record.document, record.version)
            if held != record.version:
                versions[record.document] = None  # two versions given at once: keep both
        older = []
        for entry in self.entries():
            document = entry.metadata.get(DOCUMENT_FIELD)
            if entry.key in added or not isinstance(document, str):
                continue
            version = versions.get(document)
            if version is not None and _version(entry) != version:
                older.append(entry.key)
        if older:
            delete_records(self.index, older)

    def entries(self) -> list[DocumentEntry]:
        """The records of the source."""
        pattern = None if is_glob(self.source) else self.source
        return [d for d in self.index.documents(pattern) if d.source == self.source]

    def delete_document(self, ref_doc_id: str) -> None:
        """Remove the nodes of a document: its stable id or the id LlamaIndex gave it (a
        document ragkit ingested itself: by its key)."""
        document = self.ids.of(str(ref_doc_id))
        keys = [e.key for e in self.entries() if e.metadata.get(DOCUMENT_FIELD) == document]
        delete_records(self.index, [*keys, document])

    def selected(self, node_ids: Sequence[str] | None, filters: dict[str, Any] | None) -> list[str]:
        """The stored keys ``node_ids`` names (None: every record of the source) whose
        document matches the ragkit filter ``filters`` (None: any), in the order given."""
        store = self.index.store
        store.refresh()
        if node_ids is None:
            keys = [entry.key for entry in self.entries()]
        else:
            keys = list(dict.fromkeys(k for k in map(self._key_of, node_ids) if k is not None))
        if filters is None:
            return keys
        rows = store.chunks_by_id(store.filtered_chunk_ids(filters).tolist())
        matching = {row.document_key for row in rows.values()}
        return [key for key in keys if key in matching]

    def _key_of(self, node_id: str) -> str | None:
        """The stored key a node id names (a passage's ``ID:START-END`` its node's)."""
        store = self.index.store
        node_id = str(node_id)
        if store.language_decision(node_id) is not None:
            return node_id
        passage = _PASSAGE.fullmatch(node_id)
        if passage and store.language_decision(passage[1]) is not None:
            return passage[1]
        return None

    def check_model(self, model: Any) -> None:
        """Nothing when ``model`` is None or names the index's model, else an error."""
        held = self.index.settings.embedding_model
        if model is None or _model_name(str(model)) == _model_name(held):
            return
        raise InvalidArgumentError(
            f"model={model!r}: the index at {self.index.store.location} embeds with {held}; "
            "a model is chosen when the index is created: RagkitVectorStore(index, model=…)"
        )


def search_options(
    query: VectorStoreQuery,
    kwargs: dict[str, Any],
    defaults: SearchOptions,
    filters: dict[str, Any] | None,
    ids: DocumentIds,
) -> SearchOptions | None:
    """The ragkit search options of a LlamaIndex ``query``, its ``vector_store_kwargs``
    (``kwargs``: search options and MMR's), the store's ``defaults`` and its ``filters``
    translated (None: the query asks for no result)."""
    kwargs = dict(kwargs)
    mmr = {name: kwargs.pop(name) for name in MMR_KEYWORDS if name in kwargs}
    unknown = sorted(set(kwargs) - set(QUERY_OPTIONS))
    if unknown:
        raise InvalidArgumentError(
            f"RagkitVectorStore query: unknown option(s) {', '.join(unknown)}; the options "
            f"are {', '.join([*QUERY_OPTIONS, *MMR_KEYWORDS])}"
        )
    chosen = query_mode(query)
    mode, rerank = QUERY_MODES[chosen]
    hybrid_k = chosen == VectorStoreQueryMode.HYBRID and query.hybrid_top_k is not None
    k = check_k(query.hybrid_top_k if hybrid_k else query.similarity_top_k, "similarity_top_k")
    if k == 0:
        return None
    given: dict[str, Any] = {"k": k, "filters": _joined(filters, query, ids)}
    if mode is not None:
        given["mode"] = mode
    if rerank:
        given["rerank"] = True
    if query.alpha is not None and (mode or defaults.mode) == "hybrid":
        given["dense_weight"] = _alpha(query.alpha)
    if chosen == VectorStoreQueryMode.MMR:
        given |= _mmr(query.mmr_threshold, mmr, k)
    return SearchOptions.of(defaults, **(kwargs | given))


def query_mode(query: VectorStoreQuery) -> VectorStoreQueryMode:
    """The query's mode, when the store offers it (else an :class:`InvalidArgumentError`)."""
    offered = ", ".join(m.value for m in QUERY_MODES)
    try:
        mode = VectorStoreQueryMode(query.mode)
    except ValueError:
        mode = None
    if mode is None or mode not in QUERY_MODES:
        shown = getattr(query.mode, "value", query.mode)
        raise InvalidArgumentError(f"query mode {shown!r}: RagkitVectorStore offers {offered}")
    return mode


def _joined(
    filters: dict[str, Any] | None, query: VectorStoreQuery, ids: DocumentIds
) -> dict[str, Any] | None:
    """``filters``, the query's ``doc_ids`` and ``node_ids`` as one ragkit filter."""
    parts = [filters] if filters else []
    if query.doc_ids:
        parts.append({DOCUMENT_FIELD: [ids.of(str(d)) for d in query.doc_ids]})
    if query.node_ids:  # VectorStoreIndex passes [] when it holds no node of its own
        parts.append({"id": [str(n) for n in query.node_ids]})
    if len(parts) < 2:
        return parts[0] if parts else None
    if all(a.keys().isdisjoint(b) for n, a in enumerate(parts) for b in parts[n + 1 :]):
        return {key: value for part in parts for key, value in part.items()}
    return {"$and": parts}


def _model_name(name: str) -> str:
    """One name for the bundled models' aliases."""
    if name in MINILM_NAMES:
        return "all-minilm-l6-v2"
    return "multilingual-e5-small" if name in E5_NAMES else name


def _version(entry: DocumentEntry) -> Any:
    stored = entry.metadata.get(STORED_FIELD)
    return stored.get("version") if isinstance(stored, dict) else None


def _alpha(alpha: Any) -> float:
    """LlamaIndex's ``alpha`` (0: BM25 only, 1: dense only) as ragkit's dense weight."""
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 <= alpha <= 1:
        raise InvalidArgumentError(f"alpha={alpha!r}: give a number from 0 (BM25 only) to 1")
    return float(alpha)


def _mmr(threshold: float | None, given: dict[str, Any], k: int) -> dict[str, Any]:
    """MMR's search options: LlamaIndex's ``mmr_threshold`` (the query's, else the keyword's,
    else 0.5) as ragkit's ``mmr_lambda``, and the candidates (``mmr_prefetch_k``, or
    ``mmr_prefetch_factor`` times ``k``)."""
    if threshold is None:
        threshold = given.get("mmr_threshold", MMR_THRESHOLD)
    options: dict[str, Any] = {"mmr_lambda": threshold}
    if given.get("mmr_prefetch_k") is not None:
        options["mmr_candidates"] = given["mmr_prefetch_k"]
    elif given.get("mmr_prefetch_factor") is not None:
        factor = given["mmr_prefetch_factor"]
        if isinstance(factor, bool) or not isinstance(factor, int | float) or factor < 1:
            raise InvalidArgumentError(f"mmr_prefetch_factor={factor!r}: give a number ≥ 1")
        options["mmr_candidates"] = max(k, round(factor * k))
    return options
