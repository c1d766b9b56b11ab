"""LangChain components against the real langchain-core: RagkitVectorStore used as LangChain's
own docs use a vector store (add_documents with ids, similarity_search with a filter,
as_retriever().invoke, the indexing API), offsets into the added texts, metadata round trip,
filters, delete, async, clear errors; RagkitTextSplitter's offsets and chosen chunker; and
LangChain's standard VectorStore suite (langchain-tests) when installed."""

from __future__ import annotations

import gc
import logging
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("langchain_core", reason='needs pip install "ragkit-pipeline[langchain]"')

from integration_texts import ARABIC, RAIL, RECORDS
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.indexing import InMemoryRecordManager, index
from langchain_core.vectorstores import VectorStore

from ragkit import Index, RagkitError
from ragkit.integrations.langchain import RagkitTextSplitter, RagkitVectorStore

MODEL = "all-minilm-l6-v2"
CHUNKERS = {"fixed", "sentence", "recursive", "structure", "semantic"}


@pytest.fixture(scope="module")
def ragkit_index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return Index.open(tmp_path_factory.mktemp("langchain") / "index", create=True, model=MODEL)


@pytest.fixture(scope="module")
def store(ragkit_index: Index) -> RagkitVectorStore:
    """The module's store, holding RECORDS added the way LangChain's docs add documents."""
    vector_store = RagkitVectorStore(index=ragkit_index)
    documents = [Document(page_content=text, metadata=meta) for text, meta in RECORDS.values()]
    assert vector_store.add_documents(documents=documents, ids=list(RECORDS)) == list(RECORDS)
    return vector_store


@pytest.fixture
def scratch(tmp_path: Path, ragkit_index: Index) -> RagkitVectorStore:
    """An empty store of its own, sharing the module index's loaded encoder."""
    fresh = Index.open(tmp_path / "index", create=True, model=MODEL)
    fresh._encoder = ragkit_index.encoder
    return RagkitVectorStore(index=fresh)


def test_used_as_langchain_docs_use_a_vector_store(store: RagkitVectorStore) -> None:
    results = store.similarity_search("why does dough rise?", k=2, filter={"source": "kitchen"})
    assert [(d.id, d.page_content, d.metadata) for d in results] == [
        ("bread", RECORDS["bread"][0], RECORDS["bread"][1])
    ]
    scored = store.similarity_search_with_score("temperature at which water boils", k=3)
    assert scored[0][0].id == "kettle" and scored[0][1] >= scored[-1][1]
    retriever = store.as_retriever(search_type="similarity", search_kwargs={"k": 1})
    assert retriever.invoke("yeast and carbon dioxide")[0].id == "bread"
    relevant = store.as_retriever(
        search_type="similarity_score_threshold", search_kwargs={"score_threshold": 0.5, "k": 4}
    ).invoke("boiling water")
    assert relevant and all(isinstance(d, Document) for d in relevant)


def test_passages_carry_offsets_into_the_added_text(store: RagkitVectorStore) -> None:
    hits = store.similarity_search("railway standard time and local noon", k=3)
    passage = next(d for d in hits if d.id == "rail")
    start, end = passage.metadata["start_index"], passage.metadata["end_index"]
    assert RAIL[start:end] == passage.page_content and "noon" in passage.page_content
    assert passage.metadata["year"] == 2012  # the added metadata comes along
    whole = next(d for d in store.similarity_search("kettle boils", k=2) if d.id == "kettle")
    assert whole.metadata == RECORDS["kettle"][1]  # a whole text comes back as added


def test_split_documents_keep_offsets_into_the_original(scratch: RagkitVectorStore) -> None:
    splitter = RagkitTextSplitter(chunk_size=64)
    pieces = splitter.split_documents([Document(RAIL, metadata={"source": "history"})])
    assert len(pieces) > 2
    scratch.add_documents(pieces)
    hit = scratch.similarity_search("the telegraph and the block system", k=1)[0]
    assert RAIL[hit.metadata["start_index"] : hit.metadata["end_index"]] == hit.page_content
    assert hit.metadata["source"] == "history" and hit.metadata["chunker"]


def test_filters(store: RagkitVectorStore) -> None:
    def ids(**kwargs: object) -> set[str | None]:
        return {d.id for d in store.similarity_search("water", k=8, **kwargs)}  # type: ignore[arg-type]

    assert ids(filter={"year": {"$gte": 2005}}) == {"bread", "rail", "ar-boil"}
    assert ids(filter={"year": {">=": 1990, "<": 2006}}) == {"kettle", "bread"}
    assert ids(filter={"source": ["kitchen", "history"]}) == {"bread", "rail"}
    assert ids(filter={"$and": [{"source": "physics-notes"}, {"year": {"$lt": 2000}}]}) == {
        "kettle"
    }
    assert ids(filter={"language": "ar"}) == {"ar-boil"}
    assert ids(filter={"$or": [{"year": 1998}, {"source": "history"}]}) == {"kettle", "rail"}
    assert ids(filter={"year": {"$ne": 1998}, "source": {"$nin": ["kitchen"]}}) == {
        "rail", "ar-boil"
    }  # fmt: skip
    assert ids(filter={"$not": {"source": "physics-notes"}}) == {"bread", "rail"}
    assert ids(filter={"year": {"$exists": True}, "pages": {"$exists": False}}) == set(RECORDS)
    assert ids(filter={"source": {"$like": "%notes%"}}) == {"kettle", "ar-boil"}
    assert ids(filter={"source": {"$ilike": "%NOTES%"}}) == {"kettle", "ar-boil"}
    assert ids(filter={"id": {"$in": ["rail", "bread"]}}) == {"rail", "bread"}
    with pytest.raises(RagkitError, match="compare with a number"):
        store.similarity_search("water", filter={"year": {"$gte": "recent"}})
    with pytest.raises(RagkitError, match="ragkit matches substrings"):
        store.similarity_search("water", filter={"source": {"$like": "phys%"}})


def test_search_options_through_the_retriever(store: RagkitVectorStore) -> None:
    for mode in ("dense", "sparse", "hybrid"):
        retriever = store.as_retriever(search_kwargs={"k": 1, "mode": mode})
        assert retriever.invoke("yeast ferments sugars")[0].id == "bread", mode
    arabic = store.as_retriever(search_kwargs={"k": 1, "language": "ar", "mode": "sparse"})
    assert arabic.invoke("الماء يغلي")[0].page_content == ARABIC
    reranked = store.as_retriever(search_kwargs={"k": 2, "rerank": True, "filter": {"year": 1998}})
    assert [d.id for d in reranked.invoke("boiling point of water")] == ["kettle"]
    with pytest.raises(RagkitError, match="unknown option.*filters"):
        store.similarity_search("water", filters={"year": 1998})
    assert store.similarity_search("water", k=0) == []


def test_relevance_scores_drop_what_the_store_cannot_answer(store: RagkitVectorStore) -> None:
    scored = store.similarity_search_with_relevance_scores("temperature at which water boils")
    assert scored[0][0].id == "kettle" and scored[0][1] > 0.5
    assert all(0.0 <= score <= 1.0 for _, score in scored)
    nonsense = store.similarity_search_with_relevance_scores("zzzz qqqq", k=4)
    assert nonsense and all(score < 0.5 for _, score in nonsense)
    for query, kept in (("zzzz qqqq", []), ("temperature at which water boils", ["kettle"])):
        threshold = {"score_threshold": 0.5, "k": 4, "filter": {"year": {"$lt": 2000}}}
        retriever = store.as_retriever(
            search_type="similarity_score_threshold", search_kwargs=threshold
        )
        assert [d.id for d in retriever.invoke(query)] == kept, query
    assert [
        d.id
        for d, _ in store.similarity_search_with_relevance_scores(
            "water", k=4, score_threshold=0.0, filter={"source": "kitchen"}
        )
    ] == ["bread"]


def test_mmr_and_search_by_vector(scratch: RagkitVectorStore) -> None:
    texts = {
        "boil-1": "Water boils at one hundred degrees Celsius at sea level.",
        "boil-2": "At sea level the boiling point of water is 100 degrees Celsius.",
        "boil-3": "Pure water starts to boil at 100 °C under normal atmospheric pressure.",
        "ice": "Ice melts at zero degrees and floats, being less dense than liquid water.",
        "rail": "Railway companies adopted one standard time along their lines in 1847.",
    }
    topics = [{"topic": key.split("-")[0]} for key in texts]
    scratch.add_texts(list(texts.values()), topics, ids=list(texts))
    query = "what is the boiling point of water"
    plain = [d.id for d in scratch.similarity_search(query, k=2)]
    assert set(plain) <= {"boil-1", "boil-2", "boil-3"}
    diverse = [d.id for d in scratch.max_marginal_relevance_search(query, k=2, lambda_mult=0.2)]
    assert diverse[0] == plain[0] and diverse[1] in ("ice", "rail")
    mmr = scratch.as_retriever(search_type="mmr", search_kwargs={"k": 2, "lambda_mult": 0.2})
    assert [d.id for d in mmr.invoke(query)] == diverse
    assert [
        d.id for d in scratch.max_marginal_relevance_search(query, k=2, fetch_k=2, lambda_mult=1)
    ] == plain
    vector = scratch.embeddings.embed_query(query)
    assert len(vector) == 384 and isinstance(vector[0], float)
    dense = [d.id for d in scratch.similarity_search(query, k=3, mode="dense")]
    assert [d.id for d in scratch.similarity_search_by_vector(vector, k=3)] == dense
    assert [
        d.id for d in scratch.similarity_search_by_vector(vector, k=3, filter={"topic": "rail"})
    ] == ["rail"]
    by_vector = scratch.max_marginal_relevance_search_by_vector(vector, k=2, lambda_mult=0.2)
    assert by_vector[0].id == dense[0] and by_vector[1].id in ("ice", "rail")
    assert len(scratch.embeddings.embed_documents(["a", "b"])) == 2


@pytest.mark.anyio
async def test_async_relevance_mmr_and_vector(scratch: RagkitVectorStore) -> None:
    ids = scratch.add_texts(["Owls hunt at night.", "Owls are nocturnal birds of prey."])
    scored = await scratch.asimilarity_search_with_relevance_scores("owls hunting", k=1)
    assert scored[0][0].id in ids and 0.0 <= scored[0][1] <= 1.0
    picked = await scratch.amax_marginal_relevance_search("owls", k=1, fetch_k=2)
    assert len(picked) == 1 and picked[0].id in ids
    vector = scratch.embeddings.embed_query("owls")
    assert len(await scratch.asimilarity_search_by_vector(vector, k=2)) == 2


def test_get_by_ids_and_delete(scratch: RagkitVectorStore) -> None:
    ids = scratch.add_texts(["Tea is brewed from leaves.", "Coffee is brewed from beans."])
    assert len(set(ids)) == 2 and all(len(i) == 36 for i in ids)  # uuid4 ids
    assert {d.page_content for d in scratch.get_by_ids([*ids, "absent"])} == {
        "Tea is brewed from leaves.",
        "Coffee is brewed from beans.",
    }
    assert scratch.delete([ids[0], "absent"]) is True
    assert [d.id for d in scratch.similarity_search("brewed", k=4)] == [ids[1]]
    scratch.add_texts(["Cocoa is ground from seeds.", "Cocoa butter melts."], ids=["c*", "cb"])
    assert scratch.delete(["c*"]) is True  # the id as given, never a glob: "cb" stays
    assert {d.id for d in scratch.get_by_ids(["c*", "cb"])} == {"cb"}
    assert scratch.delete(["cb"]) is True
    assert [d.id for d in scratch.similarity_search("brewed", k=4)] == [ids[1]]
    assert scratch.delete() is True
    assert scratch.similarity_search("brewed", k=4) == []


def test_langchain_indexing_api(scratch: RagkitVectorStore) -> None:
    manager = InMemoryRecordManager(namespace="ragkit/test")
    manager.create_schema()
    docs = [Document(text, metadata={"source": key}) for key, (text, _) in RECORDS.items()]
    first = index(
        docs, manager, scratch, cleanup="incremental", source_id_key="source", key_encoder="sha256"
    )
    assert first["num_added"] == 4
    again = index(docs[:3], manager, scratch, cleanup="full", key_encoder="sha256")
    assert (again["num_skipped"], again["num_deleted"]) == (3, 1)
    assert {d.metadata["source"] for d in scratch.similarity_search("water", k=8)} == {
        "kettle",
        "bread",
        "rail",
    }


@pytest.mark.anyio
async def test_async_methods(scratch: RagkitVectorStore) -> None:
    ids = await scratch.aadd_texts(["Owls hunt at night."], metadatas=[{"kind": "bird"}])
    found = await scratch.as_retriever(search_kwargs={"k": 1}).ainvoke("nocturnal birds")
    assert [(d.id, d.metadata) for d in found] == [(ids[0], {"kind": "bird"})]
    assert await scratch.adelete(ids) is True
    assert await scratch.asimilarity_search("owls") == []


def test_clear_errors(scratch: RagkitVectorStore, caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(RagkitError, match="not indexed.*'metadata' is not JSON"):
        scratch.add_texts(["x"], metadatas=[{"when": {1, 2}}])
    with pytest.raises(RagkitError, match="2 metadatas for 1 texts"):
        scratch.add_texts(["x"], metadatas=[{}, {}])
    with pytest.raises(RagkitError, match="not indexed.*text"):
        scratch.add_texts([""], ids=["empty"])
    with pytest.raises(RagkitError, match="this index's vectors have 384"):
        scratch.similarity_search_by_vector([0.1] * 3)
    with pytest.raises(RagkitError, match="a search by vector is dense"):
        scratch.similarity_search_by_vector([0.1] * 384, mode="sparse")
    with pytest.raises(RagkitError, match="mmr_lambda=2.0"):
        scratch.max_marginal_relevance_search("x", lambda_mult=2)
    with pytest.raises(RagkitError, match="give them to Index.open"):
        RagkitVectorStore(index=scratch.index, model=MODEL)
    with pytest.raises(RagkitError, match="angle brackets"):
        RagkitVectorStore(index=scratch.index, source="notes")
    with caplog.at_level(logging.WARNING):
        RagkitVectorStore(DeterministicFakeEmbedding(size=4), index=scratch.index)
    assert "not used" in caplog.text


def test_from_texts_without_an_index_is_temporary(ragkit_index: Index) -> None:
    store = RagkitVectorStore.from_texts(
        ["Glaciers carve valleys."], metadatas=[{"n": 1}], ids=["ice"], model=MODEL
    )
    folder = Path(str(store.index.store.location)).parent
    assert store.similarity_search("valleys", k=1)[0].metadata == {"n": 1}
    del store
    gc.collect()
    assert not folder.exists()


def test_from_documents_needs_no_embedding(ragkit_index: Index) -> None:
    """LangChain's docs pass an embedding; ragkit embeds with its index's model, so a store
    made from documents alone works too, keeping the documents' ids and metadata."""
    documents = [
        Document("Glaciers carve valleys.", id="ice", metadata={"n": 1}),
        Document("Rivers carry sediment to the sea."),
    ]
    store = RagkitVectorStore.from_documents(documents, model=MODEL)
    found = store.similarity_search("valleys", k=1)[0]
    assert (found.id, found.metadata) == ("ice", {"n": 1})
    assert store.as_retriever(search_kwargs={"k": 1}).invoke("sediment")[0].id != "ice"


def test_text_splitter(caplog: pytest.LogCaptureFixture) -> None:
    splitter = RagkitTextSplitter(chunk_size=64)
    docs = splitter.create_documents([RAIL, "Short text."], metadatas=[{"n": 1}, {"n": 2}])
    rail = [d for d in docs if d.metadata["n"] == 1]
    assert len(rail) > 2
    for doc in docs:
        text = RAIL if doc.metadata["n"] == 1 else "Short text."
        assert text[doc.metadata["start_index"] : doc.metadata["end_index"]] == doc.page_content
        assert doc.metadata["chunker"].split("-")[0] in CHUNKERS
    assert splitter.split_text(RAIL) == [d.page_content for d in rail]
    with caplog.at_level(logging.WARNING):
        fixed = RagkitTextSplitter(chunk_size=400, chunk_overlap=50, chunker="fixed")
    assert "chunk_overlap ignored" in caplog.text
    assert {d.metadata["chunker"] for d in fixed.create_documents([RAIL])} == {"fixed-400"}
    plain = RagkitTextSplitter(add_start_index=False, chunker="sentence")
    assert plain.create_documents(["One. Two."])[0].metadata == {"chunker": "sentence"}
    with pytest.raises(RagkitError, match="chunker"):
        RagkitTextSplitter(chunker="paragraphs")


try:
    with warnings.catch_warnings():  # its chat model suites use marks of plugins not installed
        warnings.simplefilter("ignore", pytest.PytestUnknownMarkWarning)
        from langchain_tests.integration_tests import VectorStoreIntegrationTests
except ImportError:  # langchain-tests is optional (make install adds it)
    VectorStoreIntegrationTests = None


if VectorStoreIntegrationTests is not None:

    @pytest.mark.anyio
    class TestStandardVectorStore(VectorStoreIntegrationTests):
        """LangChain's own VectorStore suite, each test on an empty index."""

        @pytest.fixture
        def vectorstore(self, tmp_path: Path, ragkit_index: Index) -> Iterator[VectorStore]:
            fresh = Index.open(tmp_path / "standard", create=True, model=MODEL)
            fresh._encoder = ragkit_index.encoder
            yield RagkitVectorStore(self.get_embeddings(), index=fresh)
            fresh.close()

    @pytest.mark.anyio
    class TestStandardVectorStoreOnMilvus(VectorStoreIntegrationTests):
        """The same suite on a real Milvus server (milvus-lite): one collection, emptied
        before each test (a collection per test would cost seconds each)."""

        @pytest.fixture
        def vectorstore(self, milvus_collection: Index) -> VectorStore:
            store = RagkitVectorStore(self.get_embeddings(), index=milvus_collection)
            store.delete()
            assert not milvus_collection.documents()
            return store


@pytest.fixture(scope="module")
def milvus_collection(milvus_server: str, ragkit_index: Index) -> Iterator[Index]:
    """One collection on the session's Milvus server for the standard suite."""
    where = f"milvus://{milvus_server}/langchain_{uuid.uuid4().hex[:12]}"
    with Index.open(where, create=True, model=MODEL) as opened:
        opened._encoder = ragkit_index.encoder
        yield opened


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
