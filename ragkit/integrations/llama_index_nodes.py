"""LlamaIndex nodes as ragkit records and back, for
:class:`~ragkit.integrations.llama_index.RagkitVectorStore` and
:class:`~ragkit.integrations.llama_index.RagkitRetriever`.

**Stable ids.** A node is stored as one record, under an id that stays the same when the same
document is read again (:class:`DocumentIds`): a document a reader made of a file (a random
uuid id and a ``file_path``, as ``SimpleDirectoryReader`` gives) is known by its file's path,
so running ``from_documents`` again updates what it stored instead of adding it twice. A node
of a document is ``DOCUMENT#START-END`` (its offsets in the document's text; without them
``DOCUMENT#`` and a digest of its text); a node with no document is its own, under its id.

**What a record keeps.** The node's text and metadata, ``ref_doc_id`` (the document's stable
id, a metadata field as in LlamaIndex's other stores, so filters and ``doc_ids`` reach it) and
under ``_llama_index`` what LlamaIndex needs back: the version of the document (its hash),
where the node starts in it and how long it is, the metadata keys left out of the text embedded
and shown to the LLM, and the node's templates when they are not the defaults.

Example:
    >>> from llama_index.core import Document
    >>> ids = DocumentIds()
    >>> document = Document(text="Water boils.", metadata={"file_path": "/docs/a.txt"})
    >>> ids.assign([document])
    >>> record = node_record(document, ids)
    >>> record.key, record.document, record.fields["metadata"]["ref_doc_id"]
    ('/docs/a.txt', '/docs/a.txt', '/docs/a.txt')
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragkit.documents import Document as StoredDocument
from ragkit.documents import document_key
from ragkit.documents.given import is_record_source
from ragkit.index import Hit
from ragkit.integrations.common import FrameworkNotInstalled, hit_metadata

try:
    from llama_index.core.schema import (
        BaseNode,
        MetadataMode,
        NodeRelationship,
        RelatedNodeInfo,
        TextNode,
    )
except ImportError as error:
    raise FrameworkNotInstalled.of("llama-index-core", "llama-index", error) from error

DOCUMENT_FIELD = "ref_doc_id"  # the stable document id, a metadata field others filter on
STORED_FIELD = "_llama_index"  # what LlamaIndex needs back
TEMPLATES = ("metadata_template", "metadata_separator", "text_template")
_RANDOM_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


@dataclass(frozen=True)
class NodeRecord:
    """A node as a ragkit record (``fields``: ``id``, ``text``, ``metadata``), with its key,
    its document's stable id and the document's version (None: not known)."""

    key: str
    document: str
    version: str | None
    fields: dict[str, Any]


@dataclass(frozen=True)
class _FileParts:
    """The file the last call ended with: how many documents it gave so far, and the hash of
    the first."""

    path: str
    count: int
    first_hash: str | None


class DocumentIds:
    """The stable id of each LlamaIndex document a store was given.

    A document with an id of its own (``Document(id_="faq-1")``, or ``filename_as_id=True``
    on the reader) keeps it. A document with a random id (uuid4, new on every read) and a
    ``file_path`` in its metadata is known by that path (made absolute); when one file gives
    several documents (a PDF's pages, a Markdown file's sections), the first is the path and
    the others ``PATH_part_1``, ``PATH_part_2``… in the order given. Any other document keeps
    its random id (reading it again adds it again, as in every LlamaIndex store).

    The ids given are remembered (:meth:`of`), so a document whose nodes arrive in two calls
    (``VectorStoreIndex`` adds nodes in batches of 2,048) keeps its id, and the parts of a file
    cut between two calls go on counting.

    Example:
        >>> from llama_index.core import Document
        >>> ids = DocumentIds()
        >>> pages = [Document(text=t, metadata={"file_path": "/d/a.pdf"}) for t in "ABC"]
        >>> ids.assign([Document(text="x", id_="faq-1"), *pages])
        >>> [ids.of(d.doc_id) for d in pages], ids.of("faq-1")
        (['/d/a.pdf', '/d/a.pdf_part_1', '/d/a.pdf_part_2'], 'faq-1')
    """

    def __init__(self) -> None:
        self._given: dict[str, str] = {}
        self._last: _FileParts | None = None

    def of(self, given: str) -> str:
        """The stable id of the document LlamaIndex calls ``given`` (``given`` itself when
        this store was never given it)."""
        return self._given.get(given, given)

    def assign(self, nodes: Sequence[BaseNode]) -> None:
        """Choose the stable id of each document of ``nodes`` (a node without a document is
        its own) not given before."""
        documents: dict[str, tuple[str | None, str | None]] = {}
        for node in nodes:
            given, path, version = _document_of(node)
            documents.setdefault(given, (path, version))
        if not documents:
            return
        fresh: dict[str, list[tuple[str, str | None]]] = {}
        for given, (path, version) in documents.items():
            if given in self._given:
                continue
            if path is None or not _RANDOM_ID.fullmatch(given):
                self._given[given] = given
            else:
                fresh.setdefault(path, []).append((given, version))
        order = list(documents)
        opening = documents[order[0]][0]
        leading = set()  # the documents the call opens with, all of the opening file
        for given in order:
            if documents[given][0] != opening:
                break
            leading.add(given)
        counts: dict[str, _FileParts] = {}
        for path, parts in fresh.items():
            start, first_hash = 0, parts[0][1]
            last = self._last
            if (
                last is not None
                and last.path == path == opening
                and parts[0][0] in leading
                # a call opening with a new first part whose hash is the file's first part's
                # is the file read again, not its next part
                and (order[0] != parts[0][0] or parts[0][1] != last.first_hash)
            ):
                start, first_hash = last.count, last.first_hash
            for number, (given, _) in enumerate(parts, start):
                self._given[given] = path if number == 0 else f"{path}_part_{number}"
            counts[path] = _FileParts(path, start + len(parts), first_hash)
        final = documents[order[-1]][0]
        if final is not None and final in counts:
            self._last = counts[final]
        elif self._last is None or self._last.path != final:
            self._last = None


def _document_of(node: BaseNode) -> tuple[str, str | None, str | None]:
    """The id LlamaIndex gives ``node``'s document (the node itself when it has none), the
    document's file path (absolute) when a reader set one, and its version (hash)."""
    source = node.source_node
    path = node.metadata.get("file_path")
    if isinstance(path, str) and path:
        path = path if os.path.isabs(path) or "://" in path else document_key(path)
    else:
        path = None
    if source is None:
        return node.node_id, path, node.hash
    return source.node_id, path, source.hash


def node_record(node: BaseNode, ids: DocumentIds) -> NodeRecord:
    """``node`` as a record (its document's id chosen by ``ids`` first: :meth:`assign`)."""
    text = node.get_content(metadata_mode=MetadataMode.NONE)
    given, _, version = _document_of(node)
    document = ids.of(given)
    if node.source_node is None:
        key, start = document, 0
    elif isinstance(node, TextNode) and node.start_char_idx is not None:
        key, start = (
            f"{document}#{node.start_char_idx}-{node.start_char_idx + len(text)}",
            (node.start_char_idx),
        )
    else:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        key, start = f"{document}#{digest}", None
    stored: dict[str, Any] = {
        "version": version,
        "start": start,
        "length": len(text),
        "excluded_embed_metadata_keys": list(node.excluded_embed_metadata_keys),
        "excluded_llm_metadata_keys": list(node.excluded_llm_metadata_keys),
    }
    defaults = TextNode.model_fields
    for name in TEMPLATES:
        value = getattr(node, name, None)
        if value is not None and value != defaults[name].default:
            stored[name] = value
    metadata = {**node.metadata, DOCUMENT_FIELD: document, STORED_FIELD: stored}
    return NodeRecord(key, document, version, {"id": key, "text": text, "metadata": metadata})


def stored_fields(metadata: dict[str, Any]) -> dict[str, Any] | None:
    """What a record stored for LlamaIndex (None: a document ragkit ingested itself)."""
    stored = metadata.get(STORED_FIELD)
    return stored if isinstance(stored, dict) and DOCUMENT_FIELD in metadata else None


def hit_node(hit: Hit) -> TextNode:
    """A hit as a LlamaIndex ``TextNode``.

    A passage of a node a store added: the node's id when the passage is the whole node, else
    ``ID:START-END`` (offsets in the node's text); ``start_char_idx`` / ``end_char_idx`` in its
    document's text (when the node's were known); the node's metadata, its left-out keys and
    templates; its document (stable id) as source. A passage of a document ragkit ingested
    itself: id ``KEY:START-END``, the document as source, offsets into its original text,
    the document's metadata with ``file_path`` (files), ``language`` and ``title``.
    """
    stored = stored_fields(hit.metadata)
    if stored is None:
        return TextNode(
            id_=f"{hit.key}:{hit.start}-{hit.end}",
            text=hit.text,
            start_char_idx=hit.start,
            end_char_idx=hit.end,
            metadata=hit_metadata(hit),
            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=hit.key)},
        )
    whole = hit.start == 0 and hit.end == stored.get("length")
    node = _node(
        hit.key if whole else f"{hit.key}:{hit.start}-{hit.end}", hit.text, hit.metadata, stored
    )
    start = stored.get("start")
    if isinstance(start, int):
        node.start_char_idx, node.end_char_idx = start + hit.start, start + hit.end
    return node


def stored_node(document: StoredDocument, text: str) -> TextNode:
    """A stored record read back whole as a node (a document ragkit ingested itself: its
    whole text, with its metadata)."""
    stored = stored_fields(document.metadata)
    if stored is None:
        metadata = dict(document.metadata)
        if not is_record_source(document.source):
            metadata.setdefault("file_path", document.source)
        return TextNode(id_=document.key, text=text, metadata=metadata)
    node = _node(document.key, text, document.metadata, stored)
    start = stored.get("start")
    if isinstance(start, int):
        node.start_char_idx, node.end_char_idx = start, start + len(text)
    return node


def _node(node_id: str, text: str, metadata: dict[str, Any], stored: dict[str, Any]) -> TextNode:
    own = {k: v for k, v in metadata.items() if k not in (DOCUMENT_FIELD, STORED_FIELD)}
    templates = {name: stored[name] for name in TEMPLATES if isinstance(stored.get(name), str)}
    version = stored.get("version")
    source = RelatedNodeInfo(
        node_id=str(metadata[DOCUMENT_FIELD]), hash=version if isinstance(version, str) else None
    )
    return TextNode(
        id_=node_id,
        text=text,
        metadata=own,
        excluded_embed_metadata_keys=_names(stored.get("excluded_embed_metadata_keys")),
        excluded_llm_metadata_keys=_names(stored.get("excluded_llm_metadata_keys")),
        relationships={NodeRelationship.SOURCE: source},
        **templates,
    )


def _names(value: Any) -> list[str]:
    return [str(name) for name in value] if isinstance(value, list) else []
