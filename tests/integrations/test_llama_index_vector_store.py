"""RagkitVectorStore as LlamaIndex's own tutorials use a vector store — VectorStoreIndex built
from SimpleDirectoryReader documents through a StorageContext, a query engine answering with
MockLLM, insert, delete_ref_doc, reading the folder again — on the folder store and on a real
Milvus server; its query modes, filters, node ids and hostile inputs; the stable ids of reader
documents; RagkitRetriever.from_documents with a model."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("llama_index.core", reason='needs pip install "ragkit-pipeline[llama-index]"')

from integration_texts import BREAD, KETTLE, RAIL
from llama_index.core import (
    Document,
    Settings,
    SimpleDirectoryReader,
    StorageContext,
    VectorStoreIndex,
)
from llama_index.core.llms import MockLLM
from llama_index.core.postprocessor import SimilarityPostprocessor
from llama_index.core.schema import MetadataMode, TextNode
from llama_index.core.vector_stores import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)
from llama_index.core.vector_stores.types import VectorStoreQuery
from llama_index.core.vector_stores.utils import build_metadata_filter_fn

from ragkit import Index, InvalidArgumentError, RagkitError
from ragkit.integrations.llama_index import (
    RagkitEmbedding,
    RagkitRetriever,
    RagkitVectorStore,
)
from ragkit.integrations.llama_index_nodes import DocumentIds

MODEL = "all-minilm-l6-v2"
LEFT_OUT = {"file_name", "file_type", "file_size", "creation_date", "last_modified_date"}
TEA = "Tea is brewed by steeping dried leaves in water that has just come to the boil."
PARAPHRASES = {
    "boil-1": "Water boils at one hundred degrees Celsius at sea level.",
    "boil-2": "At sea level the boiling point of water is 100 degrees Celsius.",
    "boil-3": "Pure water starts to boil at 100 °C under normal atmospheric pressure.",
}
OTHERS = {
    "mountain": "High on a mountain the air pressure is lower, so tea water boils sooner.",
    "ice": "Ice melts at zero degrees and floats, being less dense than liquid water.",
    "bread": BREAD,
    "rail": "Railway companies adopted one standard time along their lines in 1847.",
}
QUERY = "what is the boiling point of water"


@pytest.fixture(scope="module", autouse=True)
def llama_settings() -> Iterator[None]:
    """LlamaIndex's embedding model as it was before the module (the stores set theirs)."""
    held = Settings._embed_model
    yield
    Settings._embed_model = held


@pytest.fixture(params=["folder", "milvus"])
def where(request: pytest.FixtureRequest, tmp_path: Path, milvus_server: str) -> str:
    """A new index on the folder store and on a real Milvus server (milvus-lite)."""
    if request.param == "folder":
        return str(tmp_path / "index")
    return f"milvus://{milvus_server}/llama_{uuid.uuid4().hex[:12]}"


def _folder(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    (data / "rail.md").write_text(RAIL, encoding="utf-8")
    (data / "kettle.txt").write_text(KETTLE, encoding="utf-8")
    (data / "bread.txt").write_text(BREAD, encoding="utf-8")
    return data


def _stored(store: RagkitVectorStore) -> dict[str, int]:
    """The records the store holds, with their chunks."""
    return {entry.key: entry.chunks for entry in store.index.documents()}


def test_the_tutorial_runs_on_the_store(where: str, tmp_path: Path) -> None:
    data = _folder(tmp_path)
    store = RagkitVectorStore(where, model=MODEL)
    documents = SimpleDirectoryReader(str(data)).load_data()
    storage_context = StorageContext.from_defaults(vector_store=store)
    index = VectorStoreIndex.from_documents(documents, storage_context=storage_context)
    assert Settings.embed_model is store.embed_model  # nothing reached for OpenAI

    response = index.as_query_engine(llm=MockLLM(), similarity_top_k=2).query(
        "Why does bread dough rise?"
    )
    top = response.source_nodes[0].node
    assert top.ref_doc_id == str(data / "bread.txt") and top.metadata["file_name"] == "bread.txt"
    prompt = str(response)  # MockLLM answers with the prompt, which holds the passages
    assert "yeast" in prompt and f"file_path: {data / 'bread.txt'}" in prompt
    assert not [key for key in LEFT_OUT if key in prompt]  # the reader's exclusions kept
    assert LEFT_OUT <= set(top.excluded_llm_metadata_keys)
    assert "file_size" not in top.get_content(metadata_mode=MetadataMode.EMBED)
    for result in response.source_nodes:
        node = result.node
        assert isinstance(node, TextNode) and node.ref_doc_id
        text = Path(node.ref_doc_id).read_text(encoding="utf-8")
        assert text[node.start_char_idx : node.end_char_idx] == node.text
        assert 0.0 <= (result.score or -1.0) <= 1.0

    stored = _stored(store)
    again = SimpleDirectoryReader(str(data)).load_data()  # new random ids: the same files
    assert {d.doc_id for d in again}.isdisjoint(d.doc_id for d in documents)
    VectorStoreIndex.from_documents(again, storage_context=storage_context)
    assert _stored(store) == stored
    later = RagkitVectorStore(where)  # another process: nothing remembered but the index
    later_context = StorageContext.from_defaults(vector_store=later)
    VectorStoreIndex.from_documents(SimpleDirectoryReader(str(data)).load_data(), later_context)
    assert _stored(store) == stored

    (data / "kettle.txt").write_text("Kettles are descaled with vinegar.", encoding="utf-8")
    VectorStoreIndex.from_documents(SimpleDirectoryReader(str(data)).load_data(), storage_context)
    kettle = [key for key in _stored(store) if key.startswith(str(data / "kettle.txt"))]
    assert kettle == [f"{data / 'kettle.txt'}#0-34"]  # the old version's node is gone
    found = index.as_retriever(similarity_top_k=1).retrieve("removing limescale with vinegar")
    assert found[0].node.ref_doc_id == str(data / "kettle.txt")

    index.insert(Document(text=TEA, id_="tea", metadata={"year": 2024}))
    found = index.as_retriever(similarity_top_k=1).retrieve("how is tea made")
    assert found[0].node.ref_doc_id == "tea" and found[0].node.metadata == {"year": 2024}
    index.delete_ref_doc("tea")
    bread = next(d for d in documents if d.metadata["file_name"] == "bread.txt")
    index.delete_ref_doc(bread.doc_id)  # the id the reader gave it, three reads ago
    left = {key.split("#")[0] for key in _stored(store)}
    assert left == {str(data / "rail.md"), str(data / "kettle.txt")}
    found = index.as_retriever(similarity_top_k=5).retrieve("bread dough yeast")
    assert {n.node.ref_doc_id for n in found} <= left


@pytest.fixture(scope="module")
def topics(tmp_path_factory: pytest.TempPathFactory) -> VectorStoreIndex:
    """A VectorStoreIndex over a store holding short passages, one per node."""
    folder = tmp_path_factory.mktemp("llama-store")
    store = RagkitVectorStore(folder / "index", model=MODEL, chunker="sentence", chunk_tokens=24)
    index = VectorStoreIndex.from_vector_store(store)
    topic = {key: "boil" if key.startswith("boil") else key for key in PARAPHRASES | OTHERS}
    index.insert_nodes(
        [
            TextNode(id_=key, text=text, metadata={"topic": topic[key]})
            for key, text in (PARAPHRASES | OTHERS).items()
        ]
    )
    return index


def _ids(index: VectorStoreIndex, query: str = QUERY, **retriever: object) -> list[str]:
    return [n.node.node_id for n in index.as_retriever(**retriever).retrieve(query)]


def test_query_modes(topics: VectorStoreIndex) -> None:
    ragkit = topics.vector_store.client
    assert isinstance(ragkit, Index)

    def ragkit_ids(**options: object) -> list[str]:
        return [hit.key for hit in ragkit.search(QUERY, k=3, **options)]

    assert _ids(topics, similarity_top_k=3) == ragkit_ids()  # default: ragkit's hybrid
    for mode in ("sparse", "text_search"):
        assert _ids(topics, similarity_top_k=3, vector_store_query_mode=mode) == ragkit_ids(
            mode="sparse"
        )
    hybrid = {"similarity_top_k": 3, "vector_store_query_mode": "hybrid"}
    assert _ids(topics, **hybrid, alpha=1.0) == ragkit_ids(mode="dense")
    assert _ids(topics, **hybrid, alpha=0.0) == ragkit_ids(mode="sparse")
    assert _ids(topics, **hybrid, alpha=0.3) == ragkit_ids(dense_weight=0.3)
    reranked = _ids(topics, similarity_top_k=2, vector_store_query_mode="semantic_hybrid")
    assert reranked == [hit.key for hit in ragkit.search(QUERY, k=2, rerank=True)]
    mmr = {"similarity_top_k": 3, "vector_store_query_mode": "mmr"}
    plain = _ids(topics, similarity_top_k=3)
    assert set(plain) <= set(PARAPHRASES)
    diverse = _ids(topics, **mmr, vector_store_kwargs={"mmr_threshold": 0.3})
    assert diverse[0] == plain[0] and set(diverse) - set(PARAPHRASES)
    assert _ids(topics, **mmr, vector_store_kwargs={"mmr_threshold": 1.0}) == plain
    assert _ids(topics, similarity_top_k=1, vector_store_kwargs={"language": "en"}) == plain[:1]


def test_a_query_by_embedding_and_the_embedding_model(topics: VectorStoreIndex) -> None:
    store = topics.vector_store
    assert isinstance(store, RagkitVectorStore) and isinstance(store.embed_model, RagkitEmbedding)
    vector = store.embed_model.get_query_embedding(QUERY)
    assert vector == pytest.approx(store.index.embed_query(QUERY).tolist(), abs=1e-5)
    result = store.query(VectorStoreQuery(query_embedding=vector, similarity_top_k=3))
    dense = store.index.search(QUERY, k=3, mode="dense")
    assert result.ids == [hit.key for hit in dense]
    assert result.similarities == pytest.approx([hit.relevance for hit in dense], abs=1e-5)
    texts = store.embed_model.get_text_embedding_batch(list(PARAPHRASES.values()))
    assert len(texts) == 3 and all(len(v) == len(vector) for v in texts)
    with pytest.raises(RagkitError, match="'sparse' searches text"):
        store.query(VectorStoreQuery(query_embedding=vector, mode="sparse"))


def test_scores_a_cutoff_can_use(topics: VectorStoreIndex) -> None:
    cutoff = SimilarityPostprocessor(similarity_cutoff=0.5)
    retriever = topics.as_retriever(similarity_top_k=3)
    assert cutoff.postprocess_nodes(retriever.retrieve(QUERY))
    nonsense = retriever.retrieve("zzzz qqqq")
    assert nonsense and cutoff.postprocess_nodes(nonsense) == []


def test_filters_and_document_ids(topics: VectorStoreIndex) -> None:
    boil = MetadataFilters(filters=[MetadataFilter(key="topic", value="boil")])
    assert set(_ids(topics, similarity_top_k=5, filters=boil)) == set(PARAPHRASES)
    assert set(_ids(topics, similarity_top_k=5, doc_ids=["ice", "rail"])) == {"ice", "rail"}
    both = _ids(topics, similarity_top_k=5, filters=boil, doc_ids=["boil-2", "ice"])
    assert both == ["boil-2"]


SHELF = {
    "a": ("Water boils at sea level.", {"year": 1998, "tags": ["physics", "water"], "title": "Boiling Water"}),
    "b": ("Bread rises with yeast.", {"year": 2005, "tags": ["kitchen"], "title": "Bread"}),
    "c": ("Railway time was made standard.", {"year": 2012, "tags": ["history", "rail"], "title": "Rail Time", "note": None}),
    "d": ("Ice floats on water.", {"year": 2020, "tags": [], "title": "ice facts"}),
}  # fmt: skip


def _one(key: str, operator: FilterOperator, value: object) -> MetadataFilters:
    return MetadataFilters(filters=[MetadataFilter(key=key, operator=operator, value=value)])


def test_filters_through_the_store_match_llama_index_s_own(where: str) -> None:
    """Every operator and condition, on both backends, keeps the nodes LlamaIndex's own
    in-memory filter keeps."""
    store = RagkitVectorStore(where, model=MODEL)
    store.add([TextNode(id_=key, text=text, metadata=meta) for key, (text, meta) in SHELF.items()])
    either = MetadataFilters(
        filters=[
            MetadataFilter(key="year", value=1998),
            MetadataFilter(key="title", value="Bread"),
        ],
        condition=FilterCondition.OR,
    )
    recent = MetadataFilters(
        filters=[MetadataFilter(key="year", value=2010, operator=FilterOperator.GT)],
        condition=FilterCondition.NOT,
    )
    op = FilterOperator
    cases = [
        _one("year", op.NE, 2005),
        _one("year", op.NIN, [1998, 2020]),
        _one("year", op.GTE, 2005),
        _one("year", op.LT, 2012),
        _one("title", op.TEXT_MATCH, "Water"),
        _one("title", op.TEXT_MATCH_INSENSITIVE, "water"),
        _one("tags", op.CONTAINS, "rail"),
        _one("tags", op.ANY, ["water", "kitchen"]),
        _one("tags", op.ALL, ["history", "rail"]),
        _one("tags", op.IS_EMPTY, None),
        _one("note", op.IS_EMPTY, None),
        either,
        recent,
    ]
    for filters in cases:
        keep = build_metadata_filter_fn(lambda key: SHELF[key][1], filters)
        expected = {key for key in SHELF if keep(key)}
        query = VectorStoreQuery(query_str="water", similarity_top_k=10, filters=filters)
        found = {node.ref_doc_id for node in store.query(query).nodes or []}
        assert found == expected, filters


def test_refusals_say_what_to_give(topics: VectorStoreIndex) -> None:
    store = topics.vector_store
    for query, words in (
        (VectorStoreQuery(query_str="water", mode="svm"), "query mode 'svm'"),
        (VectorStoreQuery(query_str="water", mode="hybrid", alpha=1.5), "alpha=1.5"),
        (VectorStoreQuery(query_str="water", similarity_top_k=-1), "similarity_top_k=-1"),
        (VectorStoreQuery(), "give query_str or query_embedding"),
    ):
        with pytest.raises(InvalidArgumentError, match=words):
            store.query(query)
    with pytest.raises(InvalidArgumentError, match="unknown option.*colapse"):
        store.query(VectorStoreQuery(query_str="water"), colapse=False)
    assert store.query(VectorStoreQuery(query_str="water", similarity_top_k=0)).nodes == []
    with pytest.raises(InvalidArgumentError, match="embeds with all-minilm-l6-v2"):
        store.add([TextNode(text="x")], model="multilingual-e5-small")
    with pytest.raises(RagkitError, match="angle brackets"):
        RagkitVectorStore(store.index, source="plain")
    with pytest.raises(RagkitError, match="settings apply when an index is opened by path"):
        RagkitVectorStore(store.index, model=MODEL)


def test_nodes_by_id_get_delete_and_clear(tmp_path: Path) -> None:
    store = RagkitVectorStore(tmp_path / "index", model=MODEL, chunker="sentence", chunk_tokens=8)
    long = "Water boils at sea level. Ice floats on water. Steam rises from the kettle."
    ids = store.add(
        [
            TextNode(id_="long", text=long, metadata={"kind": "notes"}),
            TextNode(id_="short", text=TEA, metadata={"kind": "tea"}),
        ]
    )
    assert ids == ["long", "short"]
    hits = store.query(VectorStoreQuery(query_str="ice floats", similarity_top_k=1)).nodes or []
    passage = hits[0]
    assert passage.node_id.startswith("long:") and passage.node_id != "long"
    assert isinstance(passage, TextNode) and long[passage.start_char_idx : passage.end_char_idx]
    whole = store.get_nodes([passage.node_id])
    assert [n.get_content() for n in whole] == [long] and whole[0].metadata == {"kind": "notes"}
    tea = MetadataFilters(filters=[MetadataFilter(key="kind", value="tea")])
    assert [n.node_id for n in store.get_nodes(filters=tea)] == ["short"]
    store.delete_nodes([passage.node_id])
    assert set(_stored(store)) == {"short"}
    store.clear()
    assert _stored(store) == {}


def test_hostile_nodes_are_named_and_the_others_kept(where: str) -> None:
    store = RagkitVectorStore(where, model=MODEL)
    odd = ["*", "a/../b", "x#1:2-3", "ü [x]?", "' OR 1=1 --", "%s", "\\"]
    good = [TextNode(id_=key, text=f"{TEA} ({n})") for n, key in enumerate(odd)]
    bad = [
        TextNode(id_="nan", text="Not a number.", metadata={"weight": math.nan}),
        TextNode(id_="surrogate", text="A lone \ud800 surrogate."),
        TextNode(id_="surrogate-meta", text="Fine text.", metadata={"k": "\udc80"}),
        TextNode(id_="empty", text=""),
        TextNode(id_="blank", text="  \n "),
    ]
    with pytest.raises(RagkitError, match="5 record") as refused:
        store.add([*good[:3], *bad, *good[3:]])
    for key in ("nan", "surrogate", "surrogate-meta", "empty", "blank"):
        assert f"'{key}'" in str(refused.value)
    assert set(_stored(store)) == set(odd)
    store.delete_nodes(["*"])  # an id, never a pattern
    assert set(_stored(store)) == set(odd) - {"*"}
    store.delete("a/../b")
    store.delete("no such document")
    assert set(_stored(store)) == set(odd) - {"*", "a/../b"}
    nodes = store.get_nodes(["x#1:2-3", "\\"])
    assert [n.node_id for n in nodes] == ["x#1:2-3", "\\"]
    documents = [
        Document(text="Kettles whistle.", id_="fine"),
        Document(text="NaN metadata.", id_="nan-doc", metadata={"weight": math.nan}),
    ]
    context = StorageContext.from_defaults(vector_store=store)
    with pytest.raises(RagkitError, match=r"'nan-doc#0-13'.*NaN"):
        VectorStoreIndex.from_documents(documents, storage_context=context)
    assert "fine#0-16" in _stored(store)


def test_reader_documents_have_stable_ids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def pages(path: str, *texts: str) -> list[Document]:
        return [Document(text=t, metadata={"file_path": path}) for t in texts]

    ids = DocumentIds()
    one = pages("/d/a.txt", "A")
    parts = pages("/d/b.pdf", "P0", "P1", "P2", "P3")
    own = Document(text="F", id_="faq-1", metadata={"file_path": "/d/f.txt"})
    loose = Document(text="L")
    ids.assign([*one, *parts[:2], own, loose])
    assert ids.of(one[0].doc_id) == "/d/a.txt" and ids.of("faq-1") == "faq-1"
    assert ids.of(loose.doc_id) == loose.doc_id
    assert [ids.of(p.doc_id) for p in parts[:2]] == ["/d/b.pdf", "/d/b.pdf_part_1"]

    cut = DocumentIds()  # a file's parts cut between two calls go on counting
    cut.assign([*one, *parts[:2]])
    cut.assign(parts[1:])
    assert [cut.of(p.doc_id) for p in parts] == [
        "/d/b.pdf",
        "/d/b.pdf_part_1",
        "/d/b.pdf_part_2",
        "/d/b.pdf_part_3",
    ]
    more = pages("/d/b.pdf", "P4")  # a call opening with a new part of the file: the next
    cut.assign(more)
    assert cut.of(more[0].doc_id) == "/d/b.pdf_part_4"
    reread = pages("/d/b.pdf", "P0")  # opening with the file's first part: read again
    cut.assign(reread)
    assert cut.of(reread[0].doc_id) == "/d/b.pdf"

    monkeypatch.chdir(tmp_path)
    relative = pages("docs/r.txt", "R")
    ids.assign(relative)
    assert ids.of(relative[0].doc_id) == str(tmp_path / "docs" / "r.txt")


def test_the_same_file_read_again_starts_its_parts_over() -> None:
    ids = DocumentIds()
    first = [Document(text=t, metadata={"file_path": "/d/b.pdf"}) for t in ("P0", "P1")]
    again = [Document(text=t, metadata={"file_path": "/d/b.pdf"}) for t in ("P0", "P1")]
    ids.assign(first)
    ids.assign(again)
    assert [ids.of(d.doc_id) for d in again] == ["/d/b.pdf", "/d/b.pdf_part_1"]


def test_retriever_from_reader_documents(tmp_path: Path) -> None:
    data = _folder(tmp_path)
    documents = SimpleDirectoryReader(str(data)).load_data()
    retriever = RagkitRetriever.from_documents(documents, tmp_path / "index", model=MODEL)
    assert retriever.index.settings.embedding_model == MODEL
    node = retriever.retrieve("Why does bread dough rise?")[0].node
    assert node.ref_doc_id == str(data / "bread.txt")
    assert LEFT_OUT <= set(node.excluded_llm_metadata_keys)
    assert "file_size" not in node.get_content(metadata_mode=MetadataMode.LLM)
    keys = sorted(d.key for d in retriever.index.documents())
    RagkitRetriever.from_documents(SimpleDirectoryReader(str(data)).load_data(), retriever.index)
    assert sorted(d.key for d in retriever.index.documents()) == keys


def test_from_documents_takes_the_index_s_model(tmp_path: Path) -> None:
    store = RagkitVectorStore(tmp_path / "index", model=MODEL)
    context = StorageContext.from_defaults(vector_store=store)
    VectorStoreIndex.from_documents([Document(text=TEA)], storage_context=context, model=MODEL)
    assert len(_stored(store)) == 1
    with pytest.raises(InvalidArgumentError, match="a model is chosen when the index is created"):
        VectorStoreIndex.from_documents([Document(text=TEA)], context, model="other-model")


@pytest.mark.anyio
async def test_async(topics: VectorStoreIndex) -> None:
    found = await topics.as_retriever(similarity_top_k=1).aretrieve("yeast in dough")
    assert found[0].node.ref_doc_id == "bread"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
