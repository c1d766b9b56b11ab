"""What the inspection endpoints answer, read from an open :class:`ragkit.Index`: a hit's
score taken apart with its context, an index's details, doctor's findings, the documents, and
one document with its chunks, chunker choice, matching key and language decision.

Example:
    >>> context("Water boils at 100 degrees at sea level.", 15, 18, 10)
    ('boils at ', ' degrees')
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict

import numpy as np

from ragkit.chunking.adaptive import METRICS
from ragkit.errors import NotFoundError
from ragkit.index import ExplainedHit, Index
from ragkit.normalize import normalize_document
from ragkit.normalize.base import Normalized, changes, word_changes
from ragkit.serve.views import (
    CandidateScores,
    ChunkingView,
    ChunkSpan,
    DoctorReport,
    DocumentList,
    DocumentSummary,
    DocumentView,
    HitExplanation,
    IndexDetails,
    LanguageCount,
    LanguageDecision,
    NormalizationChange,
    NormalizationView,
    Setting,
)
from ragkit.store.address import Location, diagnose, display
from ragkit.store.records import PendingDocument

CONTEXT_CHARACTERS = 240  # original text shown on each side of a hit's span
CACHED_TEXTS = 512  # documents whose text the context of hits is cut from, kept per server

REASONS = {
    "script": "the only language allowed for its script ({script})",
    "letters": "letters that only {language} uses among the {script}-script languages",
    "words": "function words of {language} among the {script}-script languages",
    "statistical": "statistical identification (py3langid) of its {script}-script text",
    "default": "too little evidence: the first language of the {script} script",
    "profile": "weak evidence of its own: the collection's main {script}-script language",
    "given": "given by the record itself",
}


class UnknownDocumentError(NotFoundError):
    """A request named a document the index does not hold (HTTP 404)."""


def context(text: str, start: int, end: int, size: int = CONTEXT_CHARACTERS) -> tuple[str, str]:
    """Up to ``size`` characters of ``text`` before ``start`` and after ``end``, cut at
    whitespace so no word is shown in part (unless it is all there is)."""
    before = text[max(0, start - size) : start]
    if start > size and " " in before:
        before = before[before.index(" ") + 1 :]
    after = text[end : end + size]
    if end + size < len(text) and " " in after:
        after = after[: after.rindex(" ")]
    return before, after


class DocumentTexts:
    """Original texts of recently shown documents, by index location, generation and key
    (a new generation reads them again); safe to share between threads."""

    def __init__(self, size: int = CACHED_TEXTS) -> None:
        self._texts: OrderedDict[tuple[str, int, str], str] = OrderedDict()
        self._lock = threading.Lock()
        self._size = size

    def get(self, index: Index, key: str) -> str:
        cached = (index.store.location, index.store.generation, key)
        with self._lock:
            if cached in self._texts:
                self._texts.move_to_end(cached)
                return self._texts[cached]
        found = index.store.stored_documents([key])
        text = found[0].document.text if found else ""
        with self._lock:
            self._texts[cached] = text
            while len(self._texts) > self._size:
                self._texts.popitem(last=False)
        return text


def explanations(
    index: Index, explained: list[ExplainedHit], texts: DocumentTexts
) -> list[HitExplanation]:
    """Each hit's contributions and the original text around its span."""
    found = []
    for each in explained:
        hit, part = each.hit, each.contribution
        before, after = context(texts.get(index, hit.key), hit.start, hit.end)
        choice = part.choice
        found.append(
            HitExplanation(
                fusion=part.fusion,
                fusion_choice=None if choice is None else choice.name,
                dense_weight=None if choice is None else choice.dense_weight,
                fusion_feedback=None if choice is None else choice.feedback,
                fusion_evidence=None if choice is None else dataclasses.asdict(choice.evidence),
                first_stage=part.score,
                dense=part.dense,
                sparse=part.sparse,
                dense_score=part.dense_score,
                sparse_score=part.sparse_score,
                dense_rank=part.dense_rank,
                sparse_rank=part.sparse_rank,
                evidence=part.evidence,
                phrase=part.phrase,
                listing=part.listing,
                reranked=each.reranked,
                cosine=each.evidence.cosine,
                coverage=each.evidence.coverage,
                before=before,
                after=after,
            )
        )
    return found


def index_details(name: str, location: Location, index: Index) -> IndexDetails:
    """``ragkit info`` of the index, with the characters it holds per script and language."""
    index.store.refresh()
    info = index.info()
    return IndexDetails(
        name=name,
        path=display(location),
        generation=info.generation,
        embedding_model=index.store.settings.embedding_model,
        dimension=info.dimension,
        chunker=info.chunker,
        documents=info.documents,
        chunks=info.chunks,
        vectors=info.vectors,
        chunkers_chosen=info.chunkers_chosen,
        languages=[
            LanguageCount(script=script, language=language, characters=characters)
            for (script, language), characters in index.store.languages().items()
        ],
        settings=[Setting(name=what, value=value) for what, value in info.settings],
    )


def doctor_report(location: Location) -> DoctorReport:
    """``ragkit doctor --index LOCATION`` without ``--repair``."""
    found = diagnose(location)
    return DoctorReport(
        healthy=found.healthy,
        generation=found.generation,
        counts=found.counts,
        problems=found.problems,
        notes=found.notes,
        hint=found.hint if found.problems else "",
        checked=found.checked,
    )


def document_list(index: Index, glob: str | None, limit: int) -> DocumentList:
    """The documents whose key or source matches ``glob`` (all when None), the first
    ``limit`` of them."""
    entries = index.documents(glob)
    return DocumentList(
        total=len(entries),
        documents=[
            DocumentSummary(
                key=entry.key,
                source=entry.source,
                title=entry.title,
                language=entry.language,
                chunks=entry.chunks,
                characters=entry.characters,
                metadata=entry.metadata,
            )
            for entry in entries[:limit]
        ],
    )


def document_view(name: str, index: Index, key: str) -> DocumentView:
    """The document ``key`` (as stored, or a path relative to the server's folder)."""
    index.store.refresh()
    stored = index.store.stored_documents([index.stored_key(key)])
    if not stored:
        raise UnknownDocumentError(
            f"{name}: no document {key!r} (GET /indexes/{name}/documents lists the keys)"
        )
    pending = stored[0]
    document = pending.document
    return DocumentView(
        index=name,
        generation=index.store.generation,
        key=document.key,
        source=document.source,
        document_id=document.external_id or document.key,
        title=document.title,
        metadata=document.metadata,
        text=document.text,
        language=LanguageDecision(
            language=document.language,
            script=document.script,
            confidence=document.language_confidence,
            method=document.language_method,
            reason=REASONS.get(document.language_method, document.language_method).format(
                language=document.language, script=document.script
            ),
        ),
        chunks=[
            ChunkSpan(start=c.start, end=c.end, tokens=c.token_count, chunker=c.chunker)
            for c in pending.chunks
        ],
        chunking=_chunking(pending),
        normalization=_normalization(index, document.text, document.language),
    )


def _chunking(pending: PendingDocument) -> ChunkingView:
    record = pending.chunking
    ranked = sorted(record.scores.items(), key=lambda item: -item[1].get("score", 0.0))
    return ChunkingView(
        chosen=record.chosen,
        adaptive=record.adaptive,
        metrics=list(METRICS),
        candidates=[
            CandidateScores(
                chunker=label,
                metrics={metric: scores.get(metric) for metric in METRICS},
                score=scores.get("score"),
            )
            for label, scores in ranked
        ],
        weights=record.weights,
        seconds=record.seconds,
        skipped=list(record.skipped),
    )


def _normalization(index: Index, text: str, language: str) -> NormalizationView:
    settings = index.settings
    if settings.normalization == "off":
        return NormalizationView(language=language, enabled=False, key=text, changes=[])
    normalized: Normalized = normalize_document(
        text,
        language,
        geez_mode=settings.geez_mode,
        lexical=settings.lexical_normalization,
        orthography=settings.orthography,
    )
    edits = (word_changes if settings.lexical_normalization else changes)(text, normalized)
    bounds = np.searchsorted(normalized.offsets, np.arange(len(text) + 1), side="left")
    return NormalizationView(
        language=language,
        enabled=True,
        key=normalized.text,
        changes=[
            NormalizationChange(
                start=edit.start,
                end=edit.end,
                key_start=int(bounds[edit.start]),
                key_end=int(bounds[edit.end]),
                before=edit.before,
                after=edit.after,
            )
            for edit in edits
        ],
    )
