"""The query path of :class:`ragkit.embed.Encoder`: a direct forward pass that must give the
vectors sentence-transformers' ``encode`` gives, for short and long, English and Arabic
queries, one at a time or several padded together (single queries on ONNX Runtime:
tests/embed/test_onnx_query.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ragkit.embed import Encoder

QUERIES = [
    "boiling point",
    "ab",
    (
        "what similarity laws must be obeyed when constructing aeroelastic models of heated "
        "high speed aircraft"
    ),
    "الماء",
    "صلاة الجمعة في السفر",
]


@pytest.fixture(scope="module")
def encoder() -> Encoder:
    return Encoder("all-minilm-l6-v2")


def test_query_vectors_match_batched_encoding(encoder: Encoder) -> None:
    texts = [encoder.spec.query_prefix + q for q in QUERIES]
    expected = encoder._encode(texts)
    together = encoder.encode_queries(QUERIES)
    one_by_one = np.vstack([encoder.encode_queries([q]) for q in QUERIES])
    assert together.shape == (len(QUERIES), encoder.dimension)
    assert together.dtype == np.float32 and together.flags.c_contiguous
    np.testing.assert_allclose(together, expected, atol=1e-5)
    np.testing.assert_allclose(one_by_one, expected, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(one_by_one, axis=1), 1.0, atol=1e-5)


def test_more_queries_than_a_batch_take_the_batched_path(encoder: Encoder) -> None:
    queries = [f"query number {n}" for n in range(encoder.batch_size + 3)]
    vectors = encoder.encode_queries(queries)
    assert vectors.shape == (len(queries), encoder.dimension)
    np.testing.assert_allclose(vectors[-1], encoder.encode_queries(queries[-1:])[0], atol=1e-5)


def test_a_model_left_in_training_mode_still_gives_the_same_vector(encoder: Encoder) -> None:
    expected = encoder._forward(["heat transfer"])
    encoder.model.train()  # dropout on: a caller fine-tuning the model forgot to switch back
    try:
        np.testing.assert_array_equal(encoder._forward(["heat transfer"]), expected)
    finally:
        encoder.model.eval()


def test_one_query_leaves_the_thread_count_as_it_was(encoder: Encoder) -> None:
    before = torch.get_num_threads()
    encoder._forward(["wing flutter"])
    assert torch.get_num_threads() == before
