"""Entry point of the evaluation flow (:mod:`ragkit.flows.evaluate`): ``ragkit flows run
evaluate``, or ``prefect deploy flows/evaluate.py:evaluate_flow``."""

from ragkit.flows.evaluate import evaluate_flow

__all__ = ["evaluate_flow"]
