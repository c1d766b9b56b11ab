"""DHSA against the dense reference: exactness, fidelity, what is always kept, padding, shapes."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from ragkit.errors import RagkitError
from ragkit.rerank.attention import AttentionConfig, attend, dense_attention
from ragkit.rerank.attention.dhsa import chunk_keys
from ragkit.rerank.layers import InteractionLayer


def group_segments(query: int, docs: int, doc_tokens: int, padding: int = 0) -> torch.Tensor:
    """``(tokens,)`` segments of a reranking group: query, ``docs`` slots, then padding."""
    slots = torch.arange(1, docs + 1).repeat_interleave(doc_tokens)
    return torch.cat([torch.zeros(query, dtype=torch.long), slots, torch.full((padding,), -1)])


def topical_qkv(segments: torch.Tensor, heads: int = 2, dim: int = 32, seed: int = 0):
    """Keys cluster by candidate slot; each slot's queries look for another slot's topic.

    Attention as in a groupwise interaction layer: a document's tokens attend to a document
    far away in the sequence (and to the query), so selection must find those keys among many
    and a local window alone cannot.
    """
    generator = torch.Generator().manual_seed(seed)
    batch, tokens = segments.shape
    slots = int(segments.max()) + 1
    topics = torch.randn(batch, heads, slots + 1, dim, generator=generator)
    partner = torch.cat(
        [torch.zeros(1, dtype=torch.long), torch.randperm(slots - 1, generator=generator) + 1]
    )
    noise = torch.randn(3, batch, heads, tokens, dim, generator=generator)

    def of(slot: torch.Tensor) -> torch.Tensor:
        index = slot.clamp_min(0)[:, None, :, None].expand(batch, heads, tokens, dim)
        return topics.gather(2, index)

    q = 1.5 * of(partner[segments.clamp_min(0)]) + 0.5 * noise[0]
    k = 1.5 * of(segments) + 0.5 * noise[1]
    return q, k, noise[2]


def attention_weights(segments: torch.Tensor, config: AttentionConfig, seed: int = 0):
    """Each query's attention distribution over the keys: values are the identity matrix."""
    tokens = segments.shape[1]
    generator = torch.Generator().manual_seed(seed)
    q = torch.randn(1, 1, tokens, tokens, generator=generator)
    k = torch.randn(1, 1, tokens, tokens, generator=generator)
    v = torch.eye(tokens)[None, None]
    return attend(q, k, v, segments, config)[0, 0]


def cosine(a: torch.Tensor, b: torch.Tensor, segments: torch.Tensor) -> float:
    valid = (segments >= 0)[:, None, :].expand(a.shape[:3])
    return float(F.cosine_similarity(a, b, dim=-1)[valid].mean())


def test_equals_dense_exactly_when_the_budget_covers_every_key() -> None:
    segments = torch.stack(
        [group_segments(8, 4, 50), group_segments(5, 3, 40, padding=83)]
    )  # 208 tokens, 145 valid in row 2
    q, k, v = torch.randn(3, 2, 3, 208, 16).unbind(0)
    config = AttentionConfig(kind="dhsa", budget=208, block_size=16, local_window=8)
    assert torch.equal(
        attend(q, k, v, segments, config), dense_attention(q, k, v, segments, config)
    )


def test_high_fidelity_to_dense_on_structured_inputs_at_a_small_budget() -> None:
    segments = group_segments(32, 24, 128)[None]  # 3,104 tokens
    q, k, v = topical_qkv(segments)
    config = AttentionConfig(kind="dhsa", budget=512, block_size=64, local_window=32)
    dense = dense_attention(q, k, v, segments, config)
    sparse = attend(q, k, v, segments, config)
    local = AttentionConfig(kind="dhsa", budget=512, block_size=64, local_window=224)
    windowed = attend(q, k, v, segments, local)  # the same budget spent on the window only
    assert cosine(sparse, dense, segments) > 0.95
    assert cosine(windowed, dense, segments) < 0.5


def test_query_segment_and_local_window_are_always_kept_padding_never() -> None:
    segments = torch.cat(
        [torch.zeros(10), torch.arange(1, 9).repeat_interleave(25), -torch.ones(30)]
    )
    segments = segments.long()[None]  # 240 tokens, 30 of them padding
    config = AttentionConfig(kind="dhsa", budget=80, block_size=16, local_window=8)
    weights = attention_weights(segments, config)
    valid = segments[0] >= 0
    for row in torch.nonzero(valid).flatten().tolist():
        kept = weights[row] > 0
        start = row // 16 * 16
        window = torch.zeros_like(valid)
        window[max(start - 8, 0) : start + 16 + 8] = True
        assert kept[segments[0] == 0].all()
        assert kept[window & valid].all()
        assert not kept[~valid].any()
        assert int(kept.sum()) <= config.budget
        assert weights[row].sum() == pytest.approx(1.0, abs=1e-5)
    assert not weights[~valid].any()  # padding rows are zeros


def test_padding_keys_never_change_the_output() -> None:
    segments = group_segments(6, 5, 40, padding=50)[None]
    q, k, v = torch.randn(3, 1, 2, 256, 8).unbind(0)
    config = AttentionConfig(kind="dhsa", budget=64, block_size=16, local_window=8)
    first = attend(q, k, v, segments, config)
    pad = segments[0] < 0
    k2, v2 = k.clone(), v.clone()
    k2[:, :, pad] = 100.0
    v2[:, :, pad] = 1e6
    assert torch.equal(attend(q, k2, v2, segments, config), first)


def test_batch_rows_with_different_padding_match_rows_run_alone() -> None:
    long_row = group_segments(16, 8, 60)
    short_row = torch.cat([group_segments(10, 6, 50), torch.full((186,), -1)])
    segments = torch.stack([long_row, short_row])  # 496 tokens; 496 and 310 valid
    q, k, v = torch.randn(3, 2, 4, 496, 16).unbind(0)
    config = AttentionConfig(kind="dhsa", budget=160, block_size=32, local_window=16)
    together = attend(q, k, v, segments, config)
    for row in range(2):
        alone = attend(
            q[row : row + 1], k[row : row + 1], v[row : row + 1], segments[row : row + 1], config
        )
        assert torch.allclose(together[row : row + 1], alone, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_shape_and_dtype_are_kept(dtype: torch.dtype) -> None:
    segments = group_segments(7, 3, 33, padding=4)[None].expand(2, -1)  # 110 tokens, odd blocks
    q, k, v = torch.randn(3, 2, 3, 110, 8, dtype=dtype).unbind(0)
    out = attend(q, k, v, segments, AttentionConfig(kind="dhsa", budget=40, block_size=16))
    assert out.shape == q.shape and out.dtype == dtype
    assert torch.isfinite(out).all() and (out[:, :, -4:] == 0).all()  # padding rows stay zero
    wide = attend(q, k, v, segments, AttentionConfig(kind="dhsa", budget=110, block_size=16))
    dense = dense_attention(q, k, v, segments, AttentionConfig())
    tolerance = 2e-2 if dtype == torch.bfloat16 else 1e-5
    assert torch.allclose(wide.float(), dense.float(), atol=tolerance)  # budget ≥ keys: dense


def test_interaction_layer_runs_with_dhsa() -> None:
    torch.manual_seed(0)
    config = AttentionConfig(kind="dhsa", budget=64, block_size=16, local_window=8)
    layer = InteractionLayer(hidden=32, heads=4, ffn=64, attention=config).eval()
    segments = group_segments(8, 6, 30, padding=12)[None]
    hidden = torch.randn(1, 200, 32)
    out = layer(hidden, segments)
    assert out.shape == (1, 200, 32) and torch.isfinite(out).all()
    dense = InteractionLayer(hidden=32, heads=4, ffn=64, attention=AttentionConfig()).eval()
    wide = InteractionLayer(
        hidden=32, heads=4, ffn=64, attention=AttentionConfig(kind="dhsa", budget=200)
    ).eval()
    dense.load_state_dict(layer.state_dict())
    wide.load_state_dict(layer.state_dict())
    with torch.no_grad():
        assert torch.allclose(wide(hidden, segments), dense(hidden, segments), atol=1e-5)
        assert not torch.allclose(out, dense(hidden, segments), atol=1e-3)  # the budget bites


def test_chunks_cut_at_segments_similarity_drops_and_max_length() -> None:
    direction = torch.tensor([1.0, 0.0])
    keys = torch.cat([direction.expand(40, 2), direction.flip(0).expand(60, 2)])[None, None]
    segments = torch.cat([torch.zeros(10), torch.ones(90)]).long()[None]
    chunks = chunk_keys(keys, segments, AttentionConfig(chunk_size=64, max_chunk=32))
    starts = chunks.start[0].tolist()
    assert 10 in starts  # the segment boundary
    assert 40 in starts  # the one similarity drop (one cut per 64 key pairs)
    assert max(chunks.size[0].tolist()) <= 32
    assert sum(chunks.size[0].tolist()) == 100
    assert chunks.segment[0].tolist() == [0] + [1] * (len(starts) - 1)


def test_bad_settings_and_shapes_are_clear_errors() -> None:
    q = k = v = torch.randn(1, 1, 20, 4)
    segments = torch.zeros(1, 20, dtype=torch.long)
    with pytest.raises(RagkitError, match="block_size"):
        attend(q, k, v, segments, AttentionConfig(kind="dhsa", block_size=0))
    with pytest.raises(RagkitError, match="segments"):
        attend(q, k, v, segments[:, :10], AttentionConfig(kind="dhsa"))


def test_gradients_flow_through_the_selected_keys() -> None:
    segments = group_segments(6, 5, 40, padding=10)[None]
    q, k, v = (t.requires_grad_() for t in torch.randn(3, 1, 2, 216, 8).unbind(0))
    config = AttentionConfig(kind="dhsa", budget=64, block_size=16, local_window=8)
    attend(q, k, v, segments, config).square().sum().backward()
    for tensor in (q, k, v):
        assert torch.isfinite(tensor.grad).all() and tensor.grad.abs().sum() > 0
    assert not v.grad[:, :, segments[0] < 0].any()  # padding values are never read


def test_groupwise_reranker_runs_with_dhsa_and_matches_dense_at_full_budget() -> None:
    from ragkit.rerank.config import RerankerConfig
    from ragkit.rerank.model import FEATURES, GroupwiseReranker

    shape = {"hidden": 32, "heads": 4, "ffn": 64, "layers": 2, "backbone_dim": 16, "pool_stride": 1}
    torch.manual_seed(0)
    dense = GroupwiseReranker(RerankerConfig(**shape)).eval()
    inputs = (
        torch.randn(2, 6, 16),
        torch.ones(2, 6, dtype=torch.bool),
        torch.randn(2, 5, 40, 16),
        torch.arange(40).expand(2, 5, 40) < torch.tensor([40, 25]).view(2, 1, 1),
        torch.randn(2, 5, FEATURES),
    )
    for budget, block, window, close in ((512, 64, 64, True), (48, 16, 8, False)):
        config = RerankerConfig(
            **shape,
            attention="dhsa",
            attention_budget=budget,
            attention_block=block,
            attention_window=window,
        )
        sparse = GroupwiseReranker(config).eval()
        sparse.load_state_dict(dense.state_dict())
        with torch.no_grad():
            expected, logits = dense(*inputs), sparse(*inputs)
        assert logits.shape == (2, 5, 11) and torch.isfinite(logits).all()
        assert torch.allclose(logits, expected, atol=1e-5) == close
