"""Lexical normalization: MultiLexNorm format, ERR, candidates, the shipped English model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragkit.errors import RagkitError
from ragkit.normalize.lexical import (
    LexicalNormalization,
    LexicalNormalizer,
    LexToken,
    err_interval,
    model_path,
    most_frequent_replacement,
    parse_lexnorm,
    read_lexnorm,
    score_predictions,
    train_lexical,
    with_predictions,
    write_lexnorm,
)
from ragkit.normalize.lexical.candidates import (
    Candidate,
    CandidateGenerator,
    DeleteIndex,
    Resources,
    edit_distance,
    elongation_variants,
    token_shape,
)
from ragkit.normalize.lexical.normalizer import TokenDecision, decode
from ragkit.normalize.lexical.ranker import (
    FEATURE_NAMES,
    Tree,
    TreeEnsemble,
    candidate_rows,
    fit_ranker,
)
from ragkit.normalize.lexical.sources import american_spellings, slang_expansions
from ragkit.normalize.lexical.train import (
    KEEP_BIASES,
    MARGINS,
    MULTIWORD_BIASES,
    carve_train,
    evaluate_normalizer,
)
from ragkit.normalize.lexical.tuning import ThresholdScorer
from ragkit.paths import shared_data_dir

DATA = shared_data_dir() / "lexnorm" / "en"

SAMPLE = (
    "rt\trt\n@bob\t@bob\n:\t:\nu\tyou\nr\tare\nsooo\tso\ncute\tcute\n\n"
    "lol\tlaughing out loud\nim\ti'm\nin\tin\nmy\tmy\nscreen\tscreenshot\nshot\t\n"
)


@pytest.fixture(scope="module")
def shipped() -> LexicalNormalizer:
    return LexicalNormalizer.load("en")


def test_format_round_trip(tmp_path: Path) -> None:
    sentences = parse_lexnorm(SAMPLE)
    assert [len(s) for s in sentences] == [7, 6]
    assert sentences[1][0].norm == "laughing out loud"
    assert sentences[1][-1] == LexToken("shot", "", merged=True)
    path = tmp_path / "out.norm"
    write_lexnorm(sentences, path)
    assert read_lexnorm(path) == sentences
    assert path.read_text(encoding="utf-8") == SAMPLE


def test_deletion_at_sentence_start_is_not_a_merge() -> None:
    (sentence,) = parse_lexnorm("x\t\ny\ty\n")
    assert sentence[0].norm == "" and not sentence[0].merged


@pytest.mark.parametrize(
    ("text", "line"),
    [("u\tyou\nr are\n", 2), ("u\tyou\n\nr\tare\tx\n", 3), ("\tyou\n", 1), ("u\t you\n", 1)],
)
def test_malformed_lines_name_file_and_line(tmp_path: Path, text: str, line: int) -> None:
    path = tmp_path / "bad.norm"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RagkitError, match=rf"bad\.norm:{line}:"):
        read_lexnorm(path)


def test_missing_file_is_a_ragkit_error(tmp_path: Path) -> None:
    with pytest.raises(RagkitError, match="missing.norm"):
        read_lexnorm(tmp_path / "missing.norm")


def test_err_on_hand_example() -> None:
    gold = parse_lexnorm("u\tyou\nr\tare\nok\tok\nlol\tlol\n")
    # one right replacement, one missed, one false replacement, one right identity
    score = score_predictions(gold, [["you", "r", "okay", "lol"]])
    assert (score.tp, score.fp, score.fn) == (1, 1, 1)
    assert score.err == 0.0
    assert score.accuracy == 0.5
    leave = score_predictions(gold, [[t.raw for t in gold[0]]])
    assert leave.err == 0.0 and leave.accuracy == 0.5
    perfect = score_predictions(gold, [[t.norm for t in gold[0]]])
    assert perfect.err == 1.0
    # ERR equals (accuracy - LAI) / (1 - LAI)
    assert score.err == pytest.approx((score.accuracy - leave.accuracy) / (1 - leave.accuracy))
    with pytest.raises(RagkitError):
        score_predictions(gold, [["you"]])


def test_err_interval_brackets_the_err_and_narrows_with_more_sentences() -> None:
    one = [
        [LexToken("u", "you"), LexToken("r", "are")],
        [LexToken("so", "so"), LexToken("d", "the")],
    ]
    guess = [["you", "r"], ["so", "the"]]
    err = score_predictions(one, guess).err
    low, high = err_interval(one, guess)
    assert low <= err <= high and low < high
    wide = high - low
    low, high = err_interval(one * 25, guess * 25)
    assert low <= err <= high and high - low < wide
    # same seed, same interval; all right leaves nothing to resample
    assert err_interval(one * 25, guess * 25) == (low, high)
    assert err_interval(one, [["you", "are"], ["so", "the"]]) == (1.0, 1.0)
    with pytest.raises(ValueError, match="confidence"):
        err_interval(one, guess, confidence=95)


def test_with_predictions_and_mfr() -> None:
    gold = parse_lexnorm(SAMPLE)
    assert most_frequent_replacement(gold)["u"] == "you"
    out = with_predictions(gold[0], [t.raw for t in gold[0]])
    assert [t.norm for t in out] == [t.raw for t in gold[0]]


def test_candidates_elongation_lexicon_split_merge() -> None:
    vocabulary = {"good": 6.0, "god": 5.5, "a": 7.5, "lot": 5.5, "screenshot": 3.5, "you": 7.0}
    resources = Resources.build([("u", "you"), ("u", "u")], vocabulary)
    generator = CandidateGenerator(resources)
    assert elongation_variants("goooood") == ["god", "good"]
    elongated = generator.generate(["goooood"], 0)
    assert elongated[0].identity and {"good", "god"} <= {c.text for c in elongated}
    assert any(c.text == "you" and c.lexicon for c in generator.generate(["u"], 0))
    assert any(c.text == "a lot" and c.split for c in generator.generate(["alot"], 0))
    assert any(
        c.text == "screenshot" and c.merge for c in generator.generate(["screen", "shot"], 0)
    )
    assert [c.text for c in generator.generate(["@bob"], 0)] == ["@bob"]


def test_edit_distance_and_index() -> None:
    assert edit_distance("becuase", "because") == 1
    assert edit_distance("abc", "xyzw") == 3
    index = DeleteIndex(["because", "tomorrow", "the"])
    assert index.lookup("becuse") == [("because", 1)]
    assert index.lookup("tomorow") == [("tomorrow", 1)]
    assert [token_shape(t) for t in ("#tbt", "http://t.co/a", "...")] == [2, 3, 5]


def test_shipped_model_fixes_typical_tokens(shipped: LexicalNormalizer) -> None:
    assert model_path("en").stat().st_size < 3_000_000
    out = shipped.normalize_tokens(["u", "r", "so", "cute", "and", "im", "going", "tmrw"])
    assert out[0] == "you" and out[1] == "are" and out[5] == "i'm"
    assert out[7] == "tomorrow"
    assert out[2:5] == ["so", "cute", "and"]
    kept = shipped.normalize_tokens(["@user", "#tbt", "http://t.co/x", "the", "house"])
    assert kept == ["@user", "#tbt", "http://t.co/x", "the", "house"]
    assert shipped.normalize_tokens(["pls", "dont", "go"]) == ["please", "don't", "go"]


def test_step_keeps_offsets_and_case(shipped: LexicalNormalizer) -> None:
    step = LexicalNormalization(shipped)
    text = "U r  so cute!! pls dont go"
    out = step(text)
    assert out.text == "You are  so cute!! please don't go"
    assert len(out.offsets) == len(out.text)
    assert all(0 <= i < len(text) for i in out.offsets)
    assert list(out.offsets) == sorted(out.offsets)
    start = out.text.index("please")
    assert text[slice(*out.original_span(start, start + len("please")))] == "pls"
    start = out.text.index("are")
    assert text[slice(*out.original_span(start, start + 3))] == "r"
    assert step("").text == ""
    # a one-letter capital inside a sentence is shorthand, not a capitalized word
    assert step("I love U").text == "I love you"
    assert step("Thank U. U rock").text == "Thank you. You rock"


def test_unknown_language_is_a_ragkit_error() -> None:
    with pytest.raises(RagkitError, match="train_lexical"):
        LexicalNormalizer.load("xx")


@pytest.mark.quality
@pytest.mark.slow
def test_retrain_on_shared_data_beats_mfr(tmp_path: Path) -> None:
    if not (DATA / "train.norm").is_file():
        pytest.skip(f"shared MultiLexNorm data not found at {DATA}")
    pytest.importorskip("wordfreq", reason="training needs wordfreq")
    pytest.importorskip("lightgbm", reason="training needs LightGBM")
    pytest.importorskip("symspellpy", reason="training needs symspellpy's bigram list")
    report = train_lexical(
        DATA / "train.norm", DATA / "dev.norm", tmp_path / "m.json.gz", folds=5, trees=60
    )
    assert report.leave_as_is.err == 0.0
    assert report.dev.overall.err > report.most_frequent.err > 0.3
    assert report.held.overall.err > report.held_most_frequent.err
    assert sum(s.tp for s in report.dev.by_change.values()) == report.dev.overall.tp
    loaded = LexicalNormalizer.load(path=tmp_path / "m.json.gz")
    assert (loaded.margin, loaded.keep_bias) == (report.margin, report.keep_bias)
    # the saved file decides exactly as the model that was scored
    held = carve_train(read_lexnorm(DATA / "train.norm"))[1]
    assert evaluate_normalizer(loaded, held) == report.held
    assert loaded.multiword_bias == report.multiword_bias
    assert report.cross_validation.overall.tp > 0 and report.corpus_bigrams > 100_000
    # the saved model also learned from the dev split; the held-out tenth stays out of both
    assert report.dev_in_model and report.model_sentences == report.train_sentences + 590
    assert report.web_words > 100_000 and report.slang_entries > 3000
    assert report.american_spellings > 1500


def _prefers(feature: str) -> TreeEnsemble:
    """A one-split ranker: log-odds +1 for candidates with ``feature`` above 0.5, else −1."""
    node = FEATURE_NAMES.index(feature)
    split = Tree([node, -1, -1], [0.5, 0.0, 0.0], [1, -1, -1], [2, -1, -1], [0.0, -1.0, 1.0])
    return TreeEnsemble(0.0, 1.0, FEATURE_NAMES, [split])


def test_step_merge_points_over_both_tokens() -> None:
    resources = Resources.build([("my", "my")], {"screenshot": 4.0, "my": 7.0, "here": 6.0})
    normalizer = LexicalNormalizer(resources, _prefers("from_merge"))
    assert normalizer.normalize_tokens(["my", "screen", "shot"]) == ["my", "screenshot", ""]
    text = "my screen  shot here"
    out = LexicalNormalization(normalizer)(text)
    assert out.text == "my screenshot here"
    assert out.original_span(3, 13) == (3, 15)
    assert out.original_span(14, 18) == (16, 20)


def test_merge_candidates_join_words_and_read_the_lexicon() -> None:
    resources = Resources.build(
        [("fuk", "fuck")], {"preorder": 3.2, "fuck": 5.0, "pre": 4.0, "order": 5.0, "k": 4.0}
    )
    generator = CandidateGenerator(resources)
    assert [c.text for c in generator.generate(["pre", "order"], 0) if c.merge] == ["preorder"]
    assert [c.text for c in generator.generate(["fu", "k", "off"], 0) if c.merge] == ["fuck"]
    assert not [c for c in generator.generate(["pre", "!"], 0) if c.merge]
    assert not [c for c in generator.generate(["pre", "order"], 1) if c.merge]


def test_split_candidates_need_two_frequent_halves() -> None:
    vocabulary = {"sound": 5.0, "cloud": 4.5, "at": 7.0, "least": 5.5, "x": 3.5, "yz": 1.0}
    generator = CandidateGenerator(Resources.build([], vocabulary))
    splits = {c.text for c in generator.generate(["soundcloud", "atleast", "xyz"], 0) if c.split}
    assert splits == {"sound cloud"}
    assert {c.text for c in generator.generate(["atleast"], 0) if c.split} == {"at least"}
    assert not [c for c in generator.generate(["xyz"], 0) if c.split]


def test_keep_bias_keeps_vocabulary_words() -> None:
    resources = Resources.build(
        [("rt", "retweet"), ("ya", "you"), ("u", "you")], {"rt": 4.0, "ya": 4.5, "you": 7.0}
    )
    normalizer = LexicalNormalizer(resources, _prefers("from_lexicon"), margin=0.5)
    line = ["rt", "@user", "ya", "know", "u"]
    assert normalizer.normalize_tokens(line) == ["retweet", "@user", "you", "know", "you"]
    normalizer.keep_bias = 2.0
    assert normalizer.normalize_tokens(line) == ["rt", "@user", "ya", "know", "you"]


def test_shipped_model_keeps_social_media_words(shipped: LexicalNormalizer) -> None:
    assert shipped.normalize_tokens(["rt", "@user", "ya", "know"])[:2] == ["rt", "@user"]
    # the slang dictionary spells these out, but the annotators keep them
    assert shipped.normalize_tokens(["lol", "that", "was", "funny"])[0] == "lol"
    assert shipped.normalize_tokens(["omg", "so", "cute"])[0] == "omg"
    assert shipped.normalize_tokens(["plan", "b", "is", "fine"])[1] == "b"


def test_g_dropping_candidates_for_short_tweets() -> None:
    resources = Resources.build([], {"go": 6.0, "going": 6.0, "down": 6.0})
    generator = CandidateGenerator(resources)
    assert "cussing" in [c.text for c in generator.generate(["cussin"], 0) if c.g_dropping]
    assert "chilling" in [c.text for c in generator.generate(["chilln", "!"], 0) if c.g_dropping]
    assert "nothing" in [c.text for c in generator.generate(["nothin'"], 0)]
    # a vocabulary word ending in -n is not taken for a dropped -ing
    assert not [c for c in generator.generate(["down"], 0) if c.g_dropping]


def test_abbreviation_candidates_for_out_of_vocabulary_tokens() -> None:
    vocabulary = {"friend": 5.5, "fried": 4.0, "government": 5.2, "probably": 5.6, "prob": 3.0}
    generator = CandidateGenerator(Resources.build([], vocabulary))
    assert [c.text for c in generator.generate(["frnd"], 0) if c.abbreviation] == ["friend"]
    assert "government" in [c.text for c in generator.generate(["my", "govt"], 1)]
    # vocabulary words and two-letter tokens are not expanded
    assert not [c for c in generator.generate(["prob"], 0) if c.abbreviation]
    assert not [c for c in generator.generate(["gv"], 0) if c.abbreviation]


def test_corpus_bigrams_feed_context_features() -> None:
    resources = Resources.build(
        [("2", "to")], {"to": 7.0, "go": 6.0}, corpus_bigrams={"to go": 9.6}
    )
    candidates = CandidateGenerator(resources).generate(["2", "go"], 0)
    rows = candidate_rows(["2", "go"], 0, candidates, resources)
    right = FEATURE_NAMES.index("right_corpus_log")
    assert [c.text for c in candidates] == ["2", "to"]
    assert rows[:, right].tolist() == [0.0, 9.6]
    assert rows[1, FEATURE_NAMES.index("right_corpus_gain")] == 9.6


def test_multiword_bias_raises_the_bar_for_splits_and_merges_only() -> None:
    lol = (Candidate("lol", identity=True), Candidate("laughing out loud", lexicon=True))
    u = (Candidate("u", identity=True), Candidate("you", lexicon=True))
    decisions = [TokenDecision(lol, (0.0, 1.0)), TokenDecision(u, (0.0, 1.0))]
    assert decode(["lol", "u"], decisions, 0.0, False) == ["laughing out loud", "you"]
    assert decode(["lol", "u"], decisions, 0.0, False, multiword_bias=1.5) == ["lol", "you"]


def test_slang_and_web_words_feed_candidates_and_features() -> None:
    resources = Resources.build(
        [],
        {"how": 6.5, "about": 6.6, "you": 7.0},
        web_words={"avedon": 2.1},
        slang={"hbu": "how about you"},
    )
    generator = CandidateGenerator(resources)
    found = generator.generate(["hbu"], 0)
    assert [(c.text, c.slang) for c in found] == [("hbu", False), ("how about you", True)]
    rows = candidate_rows(["hbu"], 0, found, resources)
    assert rows[:, FEATURE_NAMES.index("from_slang")].tolist() == [0.0, 1.0]
    assert rows[1, FEATURE_NAMES.index("candidate_web_zipf")] == 6.5
    # a name the web list knows reads as a word; a typo reads as nothing
    assert resources.web_zipf("avedon") == 2.1 and resources.web_zipf("wkeend") == 0.0


def test_slang_dictionary_comes_from_ekphrasis_data() -> None:
    pytest.importorskip("ekphrasis", reason="the slang dictionary ships inside ekphrasis")
    slang = slang_expansions()
    assert slang["hbu"] == "how about you" and slang["tix"] == "tickets"
    assert len(slang) > 3000
    assert all(len(text.split()) <= 4 and text == text.lower() for text in slang.values())


def test_british_spellings_get_their_american_candidate() -> None:
    resources = Resources.build([], {"colour": 4.0, "color": 4.9}, american={"colour": "color"})
    found = CandidateGenerator(resources).generate(["nice", "colour"], 1)
    assert ("color", True) in [(c.text, c.american) for c in found]
    rows = candidate_rows(["nice", "colour"], 1, found, resources)
    flags = dict(
        zip([c.text for c in found], rows[:, FEATURE_NAMES.index("from_american_spelling")])
    )
    assert flags["color"] == 1.0 and flags["colour"] == 0.0


def test_american_spellings_come_from_breame_data() -> None:
    pytest.importorskip("breame", reason="the British spelling table ships inside breame")
    table = american_spellings()
    assert table["colour"] == "color" and table["realised"] == "realized"
    assert table["programme"] == "program" and "color" not in table
    assert len(table) > 1500


def test_ranker_learns_to_order_each_tokens_candidates() -> None:
    pytest.importorskip("lightgbm", reason="training needs LightGBM")
    rng = np.random.default_rng(0)
    width = len(FEATURE_NAMES)
    rows = rng.normal(size=(600, width))
    # three candidates per token; the gold one has the largest lexicon probability
    column = FEATURE_NAMES.index("lexicon_probability")
    labels = np.zeros(600, dtype=int)
    for start in range(0, 600, 3):
        labels[start + int(np.argmax(rows[start : start + 3, column]))] = 1
    ranker = fit_ranker(rows, labels, [3] * 200, n_trees=30, leaves=7)
    scores = ranker.score(rows).reshape(200, 3)
    assert (scores.argmax(axis=1) == labels.reshape(200, 3).argmax(axis=1)).mean() > 0.9
    restored = TreeEnsemble.from_dict(ranker.to_dict())
    assert np.array_equal(restored.score(rows), ranker.score(rows))
    with pytest.raises(ValueError, match="groups cover 598 rows, not 600"):
        fit_ranker(rows, labels, [3] * 199 + [1], n_trees=2)


def _random_decisions(seed: int) -> tuple[list[tuple[LexToken, ...]], list[list[TokenDecision]]]:
    """Gold sentences and scored candidates with ties (scores on a quarter grid), splits,
    merges (several in a row), vocabulary words, unscored tokens and empty normalizations."""
    rng = np.random.default_rng(seed)
    words = ["u", "you", "r", "are", "screen", "shot", "screenshot", "lol", "ok", "ya", ""]
    gold: list[tuple[LexToken, ...]] = []
    decisions: list[list[TokenDecision]] = []
    for _ in range(60):
        raws = [str(rng.choice(words[:-1])) for _ in range(int(rng.integers(1, 9)))]
        sentence = tuple(
            LexToken(raw, str(rng.choice(words)) if rng.random() < 0.4 else raw) for raw in raws
        )
        found = []
        for raw in raws:
            candidates = [Candidate(raw, identity=True)]
            for _ in range(int(rng.integers(0, 5))):
                text = str(rng.choice(["you", "are", "laughing out loud", raw, "screenshot"]))
                candidates.append(Candidate(text, merge=bool(rng.random() < 0.3)))
            scores = (rng.integers(-8, 9, len(candidates)) / 4).tolist()
            if rng.random() < 0.1:  # a token the ranker did not score
                scores = [0.0] * len(candidates)
            found.append(TokenDecision(tuple(candidates), tuple(scores), bool(rng.random() < 0.3)))
        gold.append(sentence)
        decisions.append(found)
    return gold, decisions


@pytest.mark.parametrize("seed", range(5))
def test_threshold_scorer_equals_decoding_every_setting(seed: int) -> None:
    gold, decisions = _random_decisions(seed)
    scorer = ThresholdScorer(gold, decisions)
    for margin in MARGINS[::3]:
        for keep_bias in KEEP_BIASES[::2]:
            for multiword in MULTIWORD_BIASES[::3]:
                predicted = [
                    decode([t.raw for t in sentence], found, margin, False, keep_bias, multiword)
                    for sentence, found in zip(gold, decisions, strict=True)
                ]
                expected = score_predictions(gold, predicted).err
                assert scorer.err(margin, keep_bias, multiword) == expected
