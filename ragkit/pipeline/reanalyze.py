"""Re-derive an index's languages, matching keys and sparse terms with today's rules.

Language routing and normalization improve between versions; an index built before keeps the
languages and terms it was built with until it is re-analyzed. :func:`reanalyze` reads every
committed document back (:meth:`ragkit.store.IndexStore.stored_documents`), decides its language
again (with the collection's profile for texts too short to tell), recomputes each chunk's matching key and sparse terms, and commits the documents where
anything changed — with their stored vectors. Only chunks whose embedded text changed are re-embedded
(text the index embeds normalized: :func:`ragkit.pipeline.stages.embeds_normalized`).
Chunk boundaries are never redone. ``ragkit doctor --reanalyze`` runs it.

Example:
    >>> ReanalyzeReport(documents=3, changed=1).as_dict()["changed"]
    1
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ragkit.config import Settings
from ragkit.documents import Document, iter_batches
from ragkit.normalize.profile import LanguageProfile
from ragkit.pipeline.languages import resolve_documents
from ragkit.pipeline.scheduling import EncoderSource
from ragkit.pipeline.stages import (
    PreparedDocument,
    embedding_texts,
    embeds_normalized,
    normalize_document_chunks,
)
from ragkit.store import IndexStore, PendingDocument


@dataclass
class ReanalyzeReport:
    """What a re-analysis changed."""

    documents: int = 0
    changed: int = 0  # documents committed again
    languages: dict[str, int] = field(default_factory=dict)  # "old → new": documents
    chunks_reembedded: int = 0
    generation: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def reanalyze(
    store: IndexStore, settings: Settings, encoder: EncoderSource, batch: int = 500
) -> ReanalyzeReport:
    """Re-derive languages, matching keys and sparse terms of every document in ``store``
    (call under the writer lock); returns what changed."""
    started, clock = datetime.now(UTC).isoformat(), time.perf_counter()
    report = ReanalyzeReport()
    keys = sorted(store.document_hashes())
    profile = LanguageProfile.from_texts(store.document_texts())
    for group in iter_batches(keys, batch):
        updated: list[PendingDocument] = []
        for old in store.stored_documents(group):
            report.documents += 1
            item = _reanalyzed(old, profile, settings, encoder, report)
            if item is not None:
                updated.append(item)
        if updated:
            store.commit(updated)
            report.changed += len(updated)
    store.reset_tokenizers()  # every piece is today's tokenizer's now
    store.reset_language_rules()  # and every language today's rules' decision
    store.ensure_sparse()
    report.generation = store.generation
    report.seconds = time.perf_counter() - clock
    store.log_run(started, {"reanalyze": report.as_dict()})
    return report


def _reanalyzed(
    old: PendingDocument,
    profile: LanguageProfile,
    settings: Settings,
    encoder: EncoderSource,
    report: ReanalyzeReport,
) -> PendingDocument | None:
    """``old`` with today's language, keys and terms, or None when nothing changed."""
    document = _detected_again(old.document)
    resolve_documents([document], profile)
    keys, terms = normalize_document_chunks(document, old.chunks, settings)
    decision = (document.language, document.language_confidence, document.language_method)
    earlier = (
        old.document.language,
        old.document.language_confidence,
        old.document.language_method,
    )
    if (decision, document.script, keys, terms) == (
        earlier,
        old.document.script,
        old.match_texts,
        old.terms,
    ):
        return None
    if document.language != old.document.language:
        change = f"{old.document.language} → {document.language}"
        report.languages[change] = report.languages.get(change, 0) + 1
    vectors = old.vectors
    if embeds_normalized(document.language, settings) or embeds_normalized(
        old.document.language, settings
    ):
        was = embedding_texts([_prepared(old.document, old)], settings)
        after = embedding_texts([_prepared(document, old, keys, terms)], settings)
        stale = [i for i, (a, b) in enumerate(zip(was, after, strict=True)) if a != b]
        if stale:
            vectors = old.vectors.copy()
            vectors[stale] = encoder().encode_passages([after[i] for i in stale])
            report.chunks_reembedded += len(stale)
    return PendingDocument(document, old.chunks, np.asarray(vectors), keys, terms, old.chunking)


def _detected_again(document: Document) -> Document:
    """``document`` with its script and language detected by today's rules (a language its
    record gave is kept: :mod:`ragkit.documents.given`)."""
    if document.language_method == "given":
        return document
    return dataclasses.replace(
        document, script="", language="", language_confidence=0.0, language_method=""
    )


def _prepared(
    document: Document,
    old: PendingDocument,
    keys: list[str] | None = None,
    terms: list[str] | None = None,
) -> PreparedDocument:
    return PreparedDocument(
        document,
        old.chunks,
        old.match_texts if keys is None else keys,
        old.terms if terms is None else terms,
        old.chunking,
    )
