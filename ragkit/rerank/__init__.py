"""Groupwise reranking: the model, its attention (dense or DHSA), GRPO training."""
