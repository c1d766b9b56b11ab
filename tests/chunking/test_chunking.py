from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import pytest

from ragkit.chunking import (
    AdaptiveChunker,
    Chunk,
    DocumentContext,
    FixedChunker,
    RecursiveChunker,
    SemanticChunker,
    SentenceChunker,
    StructureChunker,
    available_chunkers,
    count_tokens,
    get_chunker,
)
from ragkit.chunking.metrics import (
    block_integrity,
    contextual_coherence,
    intrachunk_cohesion,
    size_compliance,
)
from ragkit.chunking.references import reference_pairs, references_completeness
from ragkit.chunking.sentences import sentence_spans
from ragkit.chunking.structure import infer_markers
from ragkit.documents import text_blocks
from ragkit.errors import RagkitError

Embed = Callable[[list[str]], np.ndarray]

TEXT = (
    "# Heading\n\n"
    + " ".join(f"Sentence number {i} has several words in it." for i in range(12))
    + "\n\nما هو الوقت؟ الوقت الآن متأخر. "
    + "ሰላም ነው። እንዴት ነህ፧\n\n"
    + "word " * 700
)
CATS = "Cats purr when they are content. A cat sleeps for most of the day. Kittens play often."
TAXES = "Income tax rates rose this year. The treasury collects the taxes. Tax law is complex."


@pytest.fixture(scope="session")
def embed() -> Embed:
    """The bundled MiniLM encoder, remembering vectors by text so tests share them."""
    from ragkit.embed import Encoder

    encoder = Encoder("all-minilm-l6-v2")
    seen: dict[str, np.ndarray] = {}

    def cached(texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in seen]
        if missing:
            seen.update(zip(missing, encoder.encode_passages(missing), strict=True))
        return np.stack([seen[t] for t in texts]) if texts else np.zeros((0, 384), np.float32)

    return cached


def _tiles(text: str, chunks: list[Chunk]) -> None:
    assert chunks[0].start == 0 and chunks[-1].end == len(text)
    for before, after in itertools.pairwise(chunks):
        assert before.end == after.start
    for chunk in chunks:
        assert text[chunk.start : chunk.end] == chunk.text
        assert chunk.token_count == count_tokens(chunk.text)


# --- chunkers: coverage, offsets, budgets ---------------------------------------------------


@pytest.mark.parametrize("name", ["fixed", "sentence", "recursive", "structure", "semantic"])
@pytest.mark.parametrize("budget", [16, 64, 256])
def test_every_chunker_tiles_the_text_within_budget(name: str, budget: int, embed: Embed) -> None:
    options: dict[str, object] = {"max_tokens": budget, "counter": count_tokens}
    if name == "semantic":
        options["embed"] = embed
    chunker = get_chunker(name, **options)
    chunks = chunker.chunk(TEXT, text_blocks(TEXT, markdown=True), "en")
    _tiles(TEXT, chunks)
    assert all(c.token_count <= budget for c in chunks)
    assert {c.chunker for c in chunks} == {chunker.label}
    assert all(c.block_ids for c in chunks)


def test_registry_names_and_errors() -> None:
    assert set(available_chunkers()) == {"fixed", "sentence", "recursive", "structure", "semantic"}
    assert get_chunker("fixed", max_tokens=512).label == "fixed-512"
    with pytest.raises(RagkitError, match="unknown chunker"):
        get_chunker("nope")
    with pytest.raises(RagkitError, match="max_tokens"):
        FixedChunker(max_tokens=0)


def test_fixed_sizes_and_overlap() -> None:
    text = " ".join(f"w{i}" for i in range(1000))
    for size in (64, 128, 256, 512, 1024):
        chunks = FixedChunker(size, counter=count_tokens).chunk(text)
        assert all(c.token_count <= size for c in chunks)
        assert all(c.token_count == size for c in chunks[:-1])
    overlapping = FixedChunker(64, counter=count_tokens, overlap=16).chunk(text)
    assert overlapping[0].start == 0 and overlapping[-1].end == len(text)
    for before, after in itertools.pairwise(overlapping):
        shared = text[after.start : before.end]
        assert before.start < after.start < before.end and count_tokens(shared) == 16


def test_small_pieces_merge_and_short_text_is_one_chunk(embed: Embed) -> None:
    text = "A short note.\n\nTwo paragraphs."
    for chunker in (
        SentenceChunker(256),
        RecursiveChunker(256),
        StructureChunker(256),
        SemanticChunker(embed, 256),
    ):
        assert [(c.start, c.end) for c in chunker.chunk(text)] == [(0, len(text))]
    assert FixedChunker(256).chunk("   \n ") == []


def test_recursive_prefers_headings_then_paragraphs() -> None:
    body = " ".join(["alpha beta gamma delta."] * 10)
    text = f"# One\n\n{body}\n\n# Two\n\n{body}"
    chunks = RecursiveChunker(60, counter=count_tokens).chunk(text)
    assert [c.text.splitlines()[0] for c in chunks] == ["# One", "# Two"]


def test_semantic_cuts_between_topics(embed: Embed) -> None:
    text = f"{CATS} {TAXES}"
    chunks = SemanticChunker(embed, max_tokens=25, min_tokens=5, counter=count_tokens).chunk(text)
    assert len(chunks) == 2 and chunks[1].text.startswith("Income tax")


# --- sentence boundaries ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Pi is 3.14159 roughly. Next one.", ["Pi is 3.14159 roughly.", "Next one."]),
        ("It cost $1,250.75 in 2019. Fine.", ["It cost $1,250.75 in 2019.", "Fine."]),
        (
            "Dr. Watson and Mr. Holmes met. Then e.g. tea.",
            ["Dr. Watson and Mr. Holmes met.", "Then e.g. tea."],
        ),
        ("See Fig. 3 and Eq. 2 here. Done.", ["See Fig. 3 and Eq. 2 here.", "Done."]),
        ("J. R. Tolkien wrote it. Yes!", ["J. R. Tolkien wrote it.", "Yes!"]),
        ("1. Scope\n2. Terms", ["1. Scope", "2. Terms"]),
        ("hard wrapped\nline goes on. And ends.", ["hard wrapped\nline goes on.", "And ends."]),
        ("Title\nBody starts here.", ["Title", "Body starts here."]),
        ('He said "stop." Then left.', ['He said "stop."', "Then left."]),
        ("Wait… what? Yes.", ["Wait…", "what?", "Yes."]),
    ],
)
def test_sentence_edge_cases(text: str, expected: list[str]) -> None:
    assert [text[s:e] for s, e in sentence_spans(text, language="en")] == expected


def test_arabic_and_amharic_terminators() -> None:
    arabic = "ما اسمك؟ اسمي أحمد. قال د. محمد إن الساعة 3.5 الآن۔ انتهى"
    assert [arabic[s:e] for s, e in sentence_spans(arabic, language="ar")] == [
        "ما اسمك؟",
        "اسمي أحمد.",
        "قال د. محمد إن الساعة 3.5 الآن۔",
        "انتهى",
    ]
    amharic = "ሰላም ነው። እንዴት ነህ፧ በ1990 ዓ.ም. ተወለደ። ፨ መጨረሻ"
    assert [amharic[s:e] for s, e in sentence_spans(amharic, language="am")] == [
        "ሰላም ነው።",
        "እንዴት ነህ፧",
        "በ1990 ዓ.ም. ተወለደ።",
        "፨",
        "መጨረሻ",
    ]
    assert len(sentence_spans("नमस्ते। आप कैसे हैं।")) == 2


# --- structure inference ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind", "heads"),
    [
        ("# A\n\nText one.\n\n## B\n\nText two.", "markdown", ["# A", "## B"]),
        (
            "1.1 Scope\nText one here.\n1.2 Terms\nText two here.",
            "numbered",
            ["1.1 Scope", "1.2 Terms"],
        ),
        ("Article 1\nFirst rule.\nArticle 2\nSecond rule.", "article", ["Article 1", "Article 2"]),
        ("المادة 1\nنص أول.\nالمادة 2\nنص ثان.", "arabic", ["المادة 1", "المادة 2"]),
        ("ክፍል አንድ\nመግቢያ ነው።\nክፍል ሁለት\nማጠቃለያ ነው።", "amharic", ["ክፍል አንድ", "ክፍል ሁለት"]),
        (
            "INTRODUCTION\nSome text here.\nMETHODS\nMore text here.",
            "caps",
            ["INTRODUCTION", "METHODS"],
        ),
        ("page one text\fpage two text", "page", ["page one text", "page two text"]),
    ],
)
def test_structure_infers_markers(text: str, kind: str, heads: list[str]) -> None:
    assert kind in [m.kind for m in infer_markers(text)]
    chunks = StructureChunker(200, min_tokens=1, counter=count_tokens).chunk(text)
    assert [c.text.strip("\f").splitlines()[0] for c in chunks] == heads
    _tiles(text, chunks)


def test_structure_ignores_lists_and_uses_proposed_pattern() -> None:
    prose = "We did this.\n1. first item\n2. second item\n3. third item"
    assert "numbered" not in [m.kind for m in infer_markers(prose)]
    text = "§ A\nfirst.\n§ B\nsecond."
    chunker = StructureChunker(
        200, min_tokens=1, counter=count_tokens, propose_pattern=lambda _: "^§"
    )
    assert [c.text.splitlines()[0] for c in chunker.chunk(text)] == ["§ A", "§ B"]
    broken = StructureChunker(
        200, min_tokens=1, counter=count_tokens, propose_pattern=lambda _: "("
    )
    assert len(broken.chunk(text)) == 1  # invalid regex: falls back to inference (no markers)


# --- metrics on hand-built cases -------------------------------------------------------------


def _chunks(text: str, cuts: list[int]) -> list[Chunk]:
    bounds = [0, *cuts, len(text)]
    return [
        Chunk(text[s:e], s, e, count_tokens(text[s:e]), "hand")
        for s, e in itertools.pairwise(bounds)
    ]


def test_size_compliance() -> None:
    text = "a " * 30
    assert size_compliance(_chunks(text, [20, 40]), 5, 10) == 1.0
    assert size_compliance(_chunks(text, [2]), 5, 10) == 0.0
    assert size_compliance(_chunks("a b", []), 5, 10) == 1.0  # whole document under min


def test_block_integrity() -> None:
    text = "# H\n\nFirst paragraph here.\n\nSecond paragraph here."
    context = DocumentContext.build(text, text_blocks(text, markdown=True), "en", count_tokens)
    at_paragraph = text.index("Second")
    assert block_integrity(_chunks(text, [at_paragraph]), context, 100) == 1.0
    inside = text.index("paragraph here.\n")
    after_heading = text.index("First")
    assert block_integrity(_chunks(text, [inside]), context, 100) == 0.5
    assert block_integrity(_chunks(text, [after_heading]), context, 100) == 0.5


def test_cohesion_and_coherence(embed: Embed) -> None:
    cats = "Cats purr. A cat sleeps all day. Kittens chase yarn. My cat hunts mice."
    mixed = "Cats purr. A cat sleeps all day. Income tax rates rose. The treasury collects taxes."
    scores = {}
    for name, text in (("cats", cats), ("mixed", mixed)):
        context = DocumentContext.build(text, None, "en", count_tokens, embed)
        scores[name] = intrachunk_cohesion(_chunks(text, []), context)
    assert 0 <= scores["mixed"] < scores["cats"] <= 1
    same_topic = f"{CATS}\n\nMy cat hunts mice at night. Cats groom their fur daily."
    two_topics = f"{CATS}\n\n{TAXES}"
    coherence = {}
    for name, text in (("same", same_topic), ("two", two_topics)):
        context = DocumentContext.build(text, None, "en", count_tokens, embed)
        halves = _chunks(text, [len(CATS) + 2])
        coherence[name] = contextual_coherence(halves, context)
        assert contextual_coherence(_chunks(text, []), context) == 1.0  # no neighbours
    assert 0 <= coherence["two"] < coherence["same"] <= 1


def test_references_completeness() -> None:
    text = "Marie Curie studied radium. She won two prizes."
    pairs = reference_pairs(text, "en")
    assert (text.index("Curie"), text.index("She")) in pairs
    assert references_completeness(_chunks(text, []), pairs) == 1.0
    assert references_completeness(_chunks(text, [text.index("She")]), pairs) < 1.0
    arabic = "درس العلماء الماء جيدا. وكما ذكر أعلاه فإن الماء يغلي."
    pairs = reference_pairs(arabic, "ar")
    assert (0, arabic.index("كما")) in pairs
    diacritized = "جَاءَ النَّبِيُّ. هُوَ يُصَلِّي."
    pairs = reference_pairs(diacritized, "ar")
    assert [diacritized[r : r + 4] for _, r in pairs] == ["هُوَ"]
    crossed = "## 3 Results\n\nWe measured it.\n\nAs in Section 3 the values hold."
    pairs = reference_pairs(crossed, "en")
    assert (0, crossed.index("Section 3")) in pairs
    amharic = "ውሃ ይፈላል። ከላይ እንደተጠቀሰው ውሃ ጠቃሚ ነው።"
    assert (0, amharic.index("ከላይ")) in reference_pairs(amharic, "am")


# --- selection --------------------------------------------------------------------------------


def test_selection_picks_best_by_weights(embed: Embed) -> None:
    text = TEXT
    blocks = text_blocks(text, markdown=True)
    adaptive = AdaptiveChunker(embed=embed, counter=count_tokens, max_tokens=64)
    selection = adaptive.chunk(text, blocks, "en")
    assert set(selection.scores) == {"fixed-64", "sentence", "recursive", "structure", "semantic"}
    best = max(selection.scores.values(), key=lambda s: s["score"])["score"]
    assert selection.scores[selection.chosen]["score"] == best
    assert selection.chunks[0].chunker == selection.chosen
    for scores in selection.scores.values():
        assert all(0.0 <= scores[m] <= 1.0 for m in ("SC", "BI", "ICC", "DCC", "RC", "score"))
    only_bi = AdaptiveChunker(embed=embed, counter=count_tokens, max_tokens=64, weights={"BI": 1})
    chosen = only_bi.chunk(text, blocks, "en")
    top_bi = max(s["BI"] for s in chosen.scores.values())
    assert chosen.scores[chosen.chosen]["BI"] == top_bi == chosen.scores[chosen.chosen]["score"]
    with pytest.raises(RagkitError, match="unknown metric"):
        AdaptiveChunker(weights={"XX": 1})


def test_selection_without_embeddings_and_agreeing_candidates() -> None:
    selection = AdaptiveChunker(counter=count_tokens, max_tokens=64).chunk(TEXT)
    assert "semantic" not in selection.scores and selection.skipped == ("DCC", "ICC")
    short = AdaptiveChunker(embed=lambda t: 1 / 0, counter=count_tokens).chunk("One. Two.")
    assert short.skipped == ("DCC", "ICC") and len(short.chunks) == 1  # embed never called


def test_chunk_command_is_registered(tmp_path):
    from typer.testing import CliRunner

    from ragkit.cli import app

    source = tmp_path / "doc.md"
    source.write_text("# A\n\nOne short paragraph.\n\n# B\n\nAnother one.\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["chunk", str(source), "--chunker", "structure", "--json"])
    assert result.exit_code == 0, result.output
    assert "One short paragraph." in result.stdout


def test_chunk_many_embeds_once_and_matches_chunk(embed: Embed) -> None:
    from ragkit.documents import Document

    calls: list[int] = []

    def counting(texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        return embed(texts)

    texts = [TEXT, "A short note. Nothing more.", CATS + "\n\n" + TAXES]
    docs = [Document(f"d{i}", f"d{i}", t, "h", text_blocks(t)) for i, t in enumerate(texts)]
    many = AdaptiveChunker(embed=counting, counter=count_tokens, max_tokens=20).chunk_many(docs)
    assert len(calls) == 1  # the two documents over the budget, in one call
    one = AdaptiveChunker(embed=embed, counter=count_tokens, max_tokens=20)
    single = [one.chunk(d.text, d.blocks, d.language) for d in docs]
    assert [(s.chosen, s.chunks, s.scores) for s in many] == [
        (s.chosen, s.chunks, s.scores) for s in single
    ]
    assert many[1].skipped == ("DCC", "ICC") and not many[0].skipped
