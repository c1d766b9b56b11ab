"""Training the groupwise reranker: above :class:`ragkit.Index`, which it uses to build
first-stage indexes and read judged collections, while :mod:`ragkit.rerank` (inference) stays
below it.

- :mod:`~ragkit.training.synthetic` and :mod:`~ragkit.training.judged`: groups of
  candidates with graded targets (from a corpus alone, or from judged queries);
- :mod:`~ragkit.training.batches`: groups → padded tensors;
- :mod:`~ragkit.training.rewards` and :mod:`~ragkit.training.grpo`: rollouts,
  rewards and the GRPO objective;
- :mod:`~ragkit.training.train`: SFT warm start → GRPO, validation, saving.

Example:
    >>> from ragkit.training.train import TrainConfig
    >>> TrainConfig(corpora=["corpus.jsonl"], output="out").objective
    'groupwise'
"""
