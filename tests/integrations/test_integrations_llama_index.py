"""LlamaIndex components against the real llama-index-core: RagkitRetriever used as
LlamaIndex's docs use a retriever (retrieve, a RetrieverQueryEngine answering with source
nodes), nodes with offsets into the original text (files and added records), metadata,
MetadataFilters, async, clear errors; RagkitNodeParser in an IngestionPipeline and a
VectorStoreIndex."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

pytest.importorskip("llama_index.core", reason='needs pip install "ragkit-pipeline[llama-index]"')

from integration_texts import ARABIC, RAIL, RECORDS, rail_and_records_index
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.llms import MockLLM
from llama_index.core.postprocessor import SimilarityPostprocessor
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import NodeRelationship, NodeWithScore, TextNode
from llama_index.core.vector_stores import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)

from ragkit import Index, RagkitError
from ragkit.integrations.llama_index import RagkitNodeParser, RagkitRetriever

MODEL = "all-minilm-l6-v2"


@pytest.fixture(scope="module")
def ragkit_index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    """RAIL as a Markdown file, the other texts as records with metadata."""
    return rail_and_records_index(tmp_path_factory.mktemp("llama"), MODEL)


def _text_of(node: TextNode) -> str:
    """The original text of the node's document: its file, or the record added."""
    if "file_path" in node.metadata:
        return Path(node.metadata["file_path"]).read_text(encoding="utf-8")
    return RECORDS[node.ref_doc_id or ""][0]


def test_retrieve_as_llama_index_docs_show(ragkit_index: Index) -> None:
    retriever = RagkitRetriever(ragkit_index, similarity_top_k=3)
    results = retriever.retrieve("when did towns adopt a standard railway time?")
    assert all(isinstance(r, NodeWithScore) for r in results)
    top = results[0].node
    assert isinstance(top, TextNode) and "noon" in top.text
    assert top.ref_doc_id is not None and top.ref_doc_id.endswith("rail.md")
    for result in results:
        node = result.node
        assert isinstance(node, TextNode)
        text = _text_of(node)
        assert text[node.start_char_idx : node.end_char_idx] == node.text
    kettle = RagkitRetriever(ragkit_index, similarity_top_k=1).retrieve("kettle boiling")[0]
    assert kettle.node.ref_doc_id == "kettle"
    assert kettle.node.metadata == {"source": "physics-notes", "year": 1998, "language": "en"}
    assert top.metadata["file_path"] == top.ref_doc_id and top.metadata["language"] == "en"


def test_a_similarity_cutoff_drops_what_the_index_cannot_answer(ragkit_index: Index) -> None:
    """Node scores are ragkit's relevance: a cutoff of 0.5 keeps the answer to a question the
    index holds and drops every node of a nonsense query."""
    retriever = RagkitRetriever(ragkit_index, similarity_top_k=3)
    cutoff = SimilarityPostprocessor(similarity_cutoff=0.5)
    kept = cutoff.postprocess_nodes(retriever.retrieve("kettle boiling at sea level"))
    assert [node.node.ref_doc_id for node in kept][:1] == ["kettle"]
    nonsense = retriever.retrieve("zzzz qqqq")
    assert nonsense and cutoff.postprocess_nodes(nonsense) == []
    assert all(0.0 <= (node.score or -1.0) <= 1.0 for node in nonsense)


def test_query_engine_answers_with_source_nodes(ragkit_index: Index) -> None:
    retriever = RagkitRetriever(ragkit_index, similarity_top_k=2, rerank=True)
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
    response = engine.query("Why does bread dough rise?")
    assert response.source_nodes[0].node.ref_doc_id == "bread"
    assert "yeast" in str(response)  # MockLLM echoes the prompt, which holds the passages


def test_metadata_filters(ragkit_index: Index) -> None:
    def ids(filters: MetadataFilters | dict[str, object]) -> set[str | None]:
        retriever = RagkitRetriever(ragkit_index, similarity_top_k=8, filters=filters)
        return {n.node.ref_doc_id for n in retriever.retrieve("water")}

    recent = MetadataFilters(
        filters=[MetadataFilter(key="year", value=2000, operator=FilterOperator.GTE)]
    )
    assert ids(recent) == {"bread", "ar-boil"}
    either = MetadataFilters(
        filters=[
            MetadataFilter(key="meta.source", value="kitchen"),
            MetadataFilter(key="year", value=2020),
        ],
        condition=FilterCondition.OR,
    )
    assert ids(either) == {"bread", "ar-boil"}
    one_key = MetadataFilters(
        filters=[MetadataFilter(key="year", value=1998), MetadataFilter(key="year", value=2005)],
        condition=FilterCondition.OR,
    )
    assert ids(one_key) == {"kettle", "bread"}
    files = MetadataFilters(filters=[MetadataFilter(key="file_path", value="*.md")])
    assert {i.rsplit("/", 1)[-1] for i in ids(files) if i} == {"rail.md"}
    assert ids({"language": "ar"}) == {"ar-boil"}  # a ragkit filter dict works too
    nested = MetadataFilters(
        filters=[
            MetadataFilters(filters=[MetadataFilter(key="year", value=2010, operator="<")]),
            MetadataFilter(key="meta.source", value="physics-notes"),
        ]
    )
    assert ids(nested) == {"kettle"}

    def names(filters: MetadataFilters) -> set[str]:  # rail.md is a file: no metadata
        return {i.rsplit("/", 1)[-1] for i in ids(filters) if i}

    def one(key: str, value: object, operator: str) -> set[str]:
        condition = MetadataFilter(key=key, value=value, operator=operator)  # type: ignore[arg-type]
        return names(MetadataFilters(filters=[condition]))

    assert one("year", 1998, "!=") == {"bread", "rail.md", "ar-boil"}
    assert one("year", [1998, 2005], "nin") == {"rail.md", "ar-boil"}
    assert one("meta.source", "notes", "text_match") == {"kettle", "ar-boil"}
    assert one("meta.source", "NOTES", "text_match_insensitive") == {"kettle", "ar-boil"}
    assert one("meta.source", ["kitch", "hist"], "any") == {"bread"}
    assert one("meta.source", ["physics", "notes"], "all") == {"kettle", "ar-boil"}
    assert one("pages", None, "is_empty") == {"kettle", "bread", "rail.md", "ar-boil"}
    assert one("year", None, "is_empty") == {"rail.md"}
    negated = MetadataFilters(
        filters=[
            MetadataFilter(key="year", value=2010, operator=">="),
            MetadataFilter(key="year", value=1998),
        ],
        condition=FilterCondition.NOT,
    )
    assert names(negated) == {"bread", "rail.md"}  # none of them holds


def test_search_options(ragkit_index: Index) -> None:
    arabic = RagkitRetriever(ragkit_index, similarity_top_k=1, mode="sparse", language="ar")
    assert arabic.retrieve("الماء يغلي")[0].node.get_content() == ARABIC
    for mode in ("dense", "sparse", "hybrid"):
        found = RagkitRetriever(ragkit_index, similarity_top_k=1, mode=mode).retrieve("yeast")
        assert found[0].node.ref_doc_id == "bread", mode
    assert RagkitRetriever(ragkit_index, similarity_top_k=0).retrieve("water") == []


@pytest.mark.anyio
async def test_async(ragkit_index: Index) -> None:
    retriever = RagkitRetriever(ragkit_index, similarity_top_k=1)
    found = await retriever.aretrieve("carbon dioxide bubbles in dough")
    assert found[0].node.ref_doc_id == "bread"
    parser = RagkitNodeParser.from_defaults(chunk_size=64, chunker="sentence")
    nodes = await parser.aget_nodes_from_documents([Document(text="One. Two.")])
    assert [n.get_content() for n in nodes] == ["One. Two."]


def test_clear_errors(ragkit_index: Index, tmp_path: Path) -> None:
    with pytest.raises(RagkitError, match="no ragkit index here"):
        RagkitRetriever(tmp_path / "missing")
    with pytest.raises(RagkitError, match="similarity_top_k"):
        RagkitRetriever(ragkit_index, similarity_top_k=-1)
    with pytest.raises(RagkitError, match="MetadataFilters or a ragkit filter"):
        RagkitRetriever(ragkit_index, filters="year=1998")  # type: ignore[arg-type]
    with pytest.raises(RagkitError, match="chunker"):
        RagkitNodeParser(chunker="paragraphs")


def test_sentence_splitter_arguments_are_accepted(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        parser = RagkitNodeParser(chunk_size=1024, chunk_overlap=20)  # as SentenceSplitter's
    assert "chunk_overlap ignored" in caplog.text and parser.chunk_size == 1024


def test_node_parser_in_an_ingestion_pipeline() -> None:
    document = Document(text=RAIL, metadata={"topic": "railways"})
    pipeline = IngestionPipeline(transformations=[RagkitNodeParser.from_defaults(chunk_size=64)])
    nodes = pipeline.run(documents=[document])
    assert len(nodes) > 2
    for position, node in enumerate(nodes):
        assert isinstance(node, TextNode)
        assert RAIL[node.start_char_idx : node.end_char_idx] == node.text
        assert node.ref_doc_id == document.doc_id
        assert node.metadata["topic"] == "railways" and node.metadata["chunker"]
        assert "chunker" not in node.get_content(metadata_mode="llm")
        assert (NodeRelationship.NEXT in node.relationships) == (position < len(nodes) - 1)
    assert [n.start_char_idx for n in nodes] == sorted(n.start_char_idx or 0 for n in nodes)


def test_parsed_nodes_build_a_vector_store_index() -> None:
    parser = RagkitNodeParser(chunk_size=64, chunker="sentence")
    nodes = parser.get_nodes_from_documents([Document(text=RAIL)])
    store_index = VectorStoreIndex(nodes, embed_model=MockEmbedding(embed_dim=8))
    assert len(store_index.as_retriever(similarity_top_k=2).retrieve("telegraph")) == 2


def test_repeated_passages_keep_their_own_offsets() -> None:
    text = "Stop.\n\nGo on.\n\nStop.\n\nGo on."
    parser = RagkitNodeParser(chunk_size=8, chunker="structure")
    nodes = parser.get_nodes_from_documents([Document(text=text)])
    assert [text[n.start_char_idx : n.end_char_idx] for n in nodes] == [n.text for n in nodes]
    assert len({n.start_char_idx for n in nodes}) == len(nodes)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_from_documents_adds_a_readers_documents(tmp_path: Path) -> None:
    """What a LlamaIndex reader returns goes in as records (text, metadata), each under its
    file's path, not the random id the reader gave it."""
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "ice.txt").write_text("Ice floats because it is less dense than water.")
    (folder / "rail.txt").write_text("Steam locomotives pulled the early trains.")
    from llama_index.core import SimpleDirectoryReader

    documents = SimpleDirectoryReader(str(folder)).load_data()
    index = Index.open(tmp_path / "index", create=True, model=MODEL)
    retriever = RagkitRetriever.from_documents(documents, index, similarity_top_k=1)
    (found,) = retriever.retrieve("why does ice float")
    assert found.node.metadata["file_name"] == "ice.txt"
    assert found.node.ref_doc_id == str(folder / "ice.txt")
