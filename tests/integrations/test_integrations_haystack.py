"""Haystack components against the real haystack-ai: RagkitRetriever and
RagkitDocumentSplitter run alone and connected in Pipelines as Haystack's docs build them
(retriever → splitter and prompt builder; splitter → DocumentWriter → an in-memory store),
offsets into the original text, metadata, Haystack filters and filter policies,
serialization (to_dict, Pipeline.dumps/loads), async, clear errors."""

from __future__ import annotations

import os
from itertools import pairwise
from pathlib import Path

import pytest

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # before haystack loads
pytest.importorskip("haystack", reason='needs pip install "ragkit-pipeline[haystack]"')

from haystack import Document, Pipeline
from haystack.components.builders import PromptBuilder
from haystack.components.preprocessors import DocumentSplitter
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.components.writers import DocumentWriter
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.errors import FilterError
from integration_texts import ARABIC, BREAD, RAIL, RECORDS, rail_and_records_index

from ragkit import Index, RagkitError
from ragkit.integrations.haystack import RagkitDocumentSplitter, RagkitRetriever

MODEL = "all-minilm-l6-v2"
TEMPLATE = """Answer from these passages:
{% for document in documents %}- {{ document.content }}
{% endfor %}Question: {{ question }}"""


@pytest.fixture(scope="module")
def ragkit_index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    """RAIL as a Markdown file, the other texts as records with metadata."""
    return rail_and_records_index(tmp_path_factory.mktemp("haystack"), MODEL)


def _original(document: Document) -> str:
    if "file_path" in document.meta:
        return Path(document.meta["file_path"]).read_text(encoding="utf-8")
    return RECORDS[document.meta["source_id"]][0]


def test_retriever_run(ragkit_index: Index) -> None:
    documents = RagkitRetriever(ragkit_index, top_k=4).run(query="railway standard time")[
        "documents"
    ]
    assert "noon" in (documents[0].content or "")
    assert documents[0].meta["source_id"].endswith("rail.md")
    assert all(0.0 <= (document.score or -1.0) <= 1.0 for document in documents)
    assert (documents[0].score or 0.0) > 0.5  # the relevance: a threshold keeps the answer
    nonsense = RagkitRetriever(ragkit_index, top_k=4).run(query="zzzz qqqq")["documents"]
    assert nonsense and all((document.score or 0.0) < 0.5 for document in nonsense)
    for document in documents:
        start, end = document.meta["split_idx_start"], document.meta["split_idx_end"]
        assert _original(document)[start:end] == document.content
    kettle = RagkitRetriever(ragkit_index, top_k=1).run(query="kettle")["documents"][0]
    assert {k: kettle.meta[k] for k in ("source", "year", "language", "source_id")} == {
        "source": "physics-notes",
        "year": 1998,
        "language": "en",
        "source_id": "kettle",
    }


def test_pipeline_retriever_to_splitter_and_prompt(ragkit_index: Index) -> None:
    pipeline = Pipeline()
    pipeline.add_component("retriever", RagkitRetriever(ragkit_index, top_k=2))
    pipeline.add_component("splitter", RagkitDocumentSplitter(split_length=16, chunker="sentence"))
    pipeline.add_component("prompt", PromptBuilder(template=TEMPLATE, required_variables="*"))
    pipeline.connect("retriever.documents", "splitter.documents")
    pipeline.connect("retriever.documents", "prompt.documents")
    question = "How did the telegraph keep trains apart?"
    result = pipeline.run(
        {"retriever": {"query": question}, "prompt": {"question": question}},
        include_outputs_from={"retriever"},
    )
    passages = {d.id: d for d in result["retriever"]["documents"]}
    assert "block system" in result["prompt"]["prompt"]
    splits = result["splitter"]["documents"]
    assert len(splits) > len(passages)
    for split in splits:
        passage = passages[split.meta["source_id"]]
        start, end = split.meta["split_idx_start"], split.meta["split_idx_end"]
        assert (passage.content or "")[start:end] == split.content
        assert split.meta["chunker"].startswith("sentence") and split.meta["page_number"] == 1


def test_indexing_pipeline_splitter_to_writer() -> None:
    store = InMemoryDocumentStore()
    pipeline = Pipeline()
    pipeline.add_component("splitter", RagkitDocumentSplitter(split_length=64))
    pipeline.add_component("writer", DocumentWriter(document_store=store))
    pipeline.connect("splitter", "writer")
    source = Document(content=RAIL + "\f" + ARABIC, meta={"topic": "rail"})
    written = pipeline.run({"splitter": {"documents": [source, Document(content="")]}})
    assert written["writer"]["documents_written"] == store.count_documents() > 2
    splits = sorted(store.filter_documents(), key=lambda d: d.meta["split_id"])
    text = source.content or ""
    for split in splits:
        start = split.meta["split_idx_start"]
        assert text[start : split.meta["split_idx_end"]] == split.content
        assert split.meta["topic"] == "rail" and split.meta["source_id"] == source.id
        assert split.meta["page_number"] == text.count("\f", 0, start) + 1
    found = InMemoryBM25Retriever(store, top_k=1).run(query="telegraph block system")
    assert "telegraph" in (found["documents"][0].content or "")


def test_filters_and_policies(ragkit_index: Index) -> None:
    def ids(retriever: RagkitRetriever, filters: dict | None = None) -> set[str]:
        return {d.meta["source_id"] for d in retriever.run("water", filters=filters)["documents"]}

    recent = {"field": "meta.year", "operator": ">=", "value": 2000}
    physics = {"field": "meta.source", "operator": "==", "value": "physics-notes"}
    retriever = RagkitRetriever(ragkit_index, top_k=8, filters=physics)
    assert ids(retriever) == {"kettle", "ar-boil"}
    assert ids(retriever, recent) == {"bread", "ar-boil"}  # replace (the default)
    merged = RagkitRetriever(ragkit_index, top_k=8, filters=physics, filter_policy="merge")
    assert ids(merged, recent) == {"ar-boil"}
    arabic = {"field": "meta.language", "operator": "==", "value": "ar"}
    assert ids(retriever, arabic) == {"ar-boil"}
    files = {"field": "meta.file_path", "operator": "==", "value": "*.md"}
    assert {i.rsplit("/", 1)[-1] for i in ids(retriever, files)} == {"rail.md"}
    either = {
        "operator": "OR",
        "conditions": [
            {"field": "meta.year", "operator": "==", "value": 1998},
            {"field": "meta.year", "operator": "in", "value": [2005]},
        ],
    }
    assert ids(retriever, either) == {"kettle", "bread"}

    def names(filters: dict) -> set[str]:  # rail.md is a file: no metadata, its path its id
        return {i.rsplit("/", 1)[-1] for i in ids(retriever, filters)}

    assert names({"operator": "NOT", "conditions": [physics]}) == {"bread", "rail.md"}
    assert names({"field": "meta.year", "operator": "!=", "value": 1998}) == {
        "bread", "rail.md", "ar-boil"
    }  # fmt: skip
    assert names({"field": "meta.year", "operator": "not in", "value": [2005]}) == {
        "kettle", "rail.md", "ar-boil"
    }  # fmt: skip
    assert names({"field": "meta.year", "operator": "==", "value": None}) == {"rail.md"}
    assert names({"field": "id", "operator": "in", "value": ["bread", "x"]}) == {"bread"}
    assert names({"field": "content", "operator": "==", "value": BREAD}) == {"bread"}
    for bad, message in [
        ({"field": "embedding", "operator": "==", "value": "x"}, "content, id and meta"),
        ({"operator": "XOR", "conditions": [physics]}, "AND, OR or NOT"),
        ({"field": "meta.year", "operator": ">", "value": "1"}, "a number or an ISO 8601 date"),
        ({"field": "meta.year", "operator": "in", "value": (1998,)}, "give a list"),
    ]:
        with pytest.raises(FilterError, match=message):
            retriever.run("water", filters=bad)


def test_search_options(ragkit_index: Index) -> None:
    arabic = RagkitRetriever(ragkit_index, top_k=1, mode="sparse", language="ar")
    assert arabic.run(query="الماء يغلي")["documents"][0].content == ARABIC
    reranking = RagkitRetriever(ragkit_index, top_k=2, rerank=True)
    reranking.warm_up()
    assert reranking.run(query="why dough rises")["documents"][0].meta["source_id"] == "bread"
    assert RagkitRetriever(ragkit_index).run(query="water", top_k=0) == {"documents": []}


def test_serialization(ragkit_index: Index) -> None:
    retriever = RagkitRetriever(ragkit_index, top_k=3, filter_policy="merge", mode="dense")
    data = retriever.to_dict()
    assert data["init_parameters"]["index"] == str(ragkit_index.store.location)
    again = RagkitRetriever.from_dict(data)
    assert (again.top_k, again.options.mode, again.filter_policy.value) == (3, "dense", "merge")
    pipeline = Pipeline()
    pipeline.add_component("retriever", retriever)
    splitter = RagkitDocumentSplitter(split_length=32, markdown=True, split_overlap=4)
    pipeline.add_component("splitter", splitter)
    pipeline.connect("retriever", "splitter")
    loaded = Pipeline.loads(pipeline.dumps())
    splitter = loaded.get_component("splitter")
    assert isinstance(splitter, RagkitDocumentSplitter)
    assert (splitter.split_length, splitter.markdown, splitter.split_overlap) == (32, True, 4)
    by_word = RagkitDocumentSplitter(split_by="word", split_length=5, split_overlap=2)
    again = RagkitDocumentSplitter.from_dict(by_word.to_dict())
    assert (again.split_by, again.split_length, again.split_overlap) == ("word", 5, 2)
    result = loaded.run({"retriever": {"query": "steam locomotives"}})
    assert result["splitter"]["documents"]


@pytest.mark.parametrize("split_by", ["word", "passage", "page", "line"])
def test_splitter_units_as_haystacks_splitter_cuts_them(split_by: str) -> None:
    """Words, passages, pages and lines: the splits, offsets, pages and overlap meta of
    Haystack's own DocumentSplitter (ragkit adds split_idx_end and chunker)."""
    texts = [RAIL, RAIL + "\f" + ARABIC + "\f\f tail\n\n", "a  b c\n\n\n\nd ", "x"]
    documents = [Document(content=text, meta={"n": n}) for n, text in enumerate(texts)]
    for length, overlap in ((1, 0), (3, 0), (3, 1), (5, 2)):
        options = {"split_by": split_by, "split_length": length, "split_overlap": overlap}
        theirs = DocumentSplitter(**options).run(documents)["documents"]  # type: ignore[arg-type]
        ours = RagkitDocumentSplitter(**options).run(documents)["documents"]  # type: ignore[arg-type]
        assert [_as_haystack(d, ours) for d in ours] == [_as_haystack(d, theirs) for d in theirs]
        for split in ours:
            start, end = split.meta["split_idx_start"], split.meta["split_idx_end"]
            assert texts[split.meta["n"]][start:end] == split.content
            assert split.meta["chunker"] == f"{split_by}-{length}"


def _as_haystack(split: Document, splits: list[Document]) -> tuple:
    """A split as Haystack's splitter describes it (overlaps by position, not by id)."""
    position = {d.id: n for n, d in enumerate(splits)}
    meta = {k: v for k, v in split.meta.items() if k not in ("split_idx_end", "chunker")}
    meta["_split_overlap"] = [
        (position[o["doc_id"]], tuple(o["range"])) for o in meta.get("_split_overlap", [])
    ]
    return split.content, meta


def test_splitter_sentences_and_token_overlap() -> None:
    text = "Dr. Smith paid 3.50 dollars. Then he left! ما هذا؟ ሰላም ነው። Fin"
    by_sentence = RagkitDocumentSplitter(split_by="sentence", split_length=2, split_overlap=1)
    splits = by_sentence.run([Document(content=text)])["documents"]
    assert [d.content for d in splits] == [
        "Dr. Smith paid 3.50 dollars. Then he left! ",
        "Then he left! ما هذا؟ ",
        "ما هذا؟ ሰላም ነው። ",
        "ሰላም ነው። Fin",
    ]
    overlapping = RagkitDocumentSplitter(split_length=32, split_overlap=6, chunker="sentence")
    plain = RagkitDocumentSplitter(split_length=32, chunker="sentence")
    ours = overlapping.run([Document(content=RAIL)])["documents"]
    alone = plain.run([Document(content=RAIL)])["documents"]
    assert [d.meta["split_idx_end"] for d in ours] == [d.meta["split_idx_end"] for d in alone]
    for before, after in pairwise(ours):
        start, end = after.meta["split_idx_start"], before.meta["split_idx_end"]
        assert RAIL[start : after.meta["split_idx_end"]] == after.content
        assert before.meta["split_idx_start"] < start < end  # reaches back into the split before
        shared = RAIL[start:end]
        assert len(shared.split()) <= 6 and (before.content or "").endswith(shared)
        assert after.meta["_split_overlap"][0] == {
            "doc_id": before.id,
            "range": (start - before.meta["split_idx_start"], len(before.content or "")),
        }


@pytest.mark.anyio
async def test_async(ragkit_index: Index) -> None:
    found = await RagkitRetriever(ragkit_index, top_k=1).run_async(query="yeast")
    assert found["documents"][0].meta["source_id"] == "bread"
    splits = await RagkitDocumentSplitter(chunker="sentence").run_async([Document(content="A.")])
    assert [d.content for d in splits["documents"]] == ["A."]


def test_clear_errors(ragkit_index: Index, tmp_path: Path) -> None:
    with pytest.raises(RagkitError, match="no ragkit index here"):
        RagkitRetriever(tmp_path / "missing")
    with pytest.raises(RagkitError, match="top_k"):
        RagkitRetriever(ragkit_index, top_k=-2)
    with pytest.raises(RagkitError, match="meta"):  # refused when built, not at the first run
        RagkitRetriever(ragkit_index, filters={"field": "blob", "operator": "==", "value": "x"})
    with pytest.raises(RagkitError, match="list of Haystack Documents"):
        RagkitDocumentSplitter().run(documents=["plain text"])  # type: ignore[list-item]
    with pytest.raises(RagkitError, match="chunker"):
        RagkitDocumentSplitter(chunker="paragraphs")
    for options, message in [
        ({"split_by": "period"}, "split_by='sentence' cuts at ragkit's sentence boundaries"),
        ({"split_by": "function"}, "DocumentSplitter"),
        ({"split_by": "character"}, "split by token, word, sentence"),
        ({"split_by": "word", "chunker": "sentence"}, "chunker shape"),
        ({"split_by": "sentence", "split_length": 0}, "split_length=0"),
        ({"split_length": 16, "split_overlap": 16}, "less than split_length"),
        ({"split_overlap": -1}, "split_overlap=-1"),
    ]:
        with pytest.raises(ValueError, match=message):
            RagkitDocumentSplitter(**options)  # type: ignore[arg-type]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
