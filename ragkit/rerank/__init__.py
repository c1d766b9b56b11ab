"""Groupwise reranking: the model, its attention (dense or DHSA), GRPO training.

Example:
    >>> from ragkit.rerank import Reranker
    >>> reranker = Reranker.load()  # the shipped groupwise-minilm model  # doctest: +SKIP
    >>> [c.index for c in reranker.rank("wing flutter", ["flutter of wings", "tax law"])]  # doctest: +SKIP
    [0, 1]
"""

from ragkit.rerank.reranker import RankedCandidate, Reranker

__all__ = ["RankedCandidate", "Reranker"]
