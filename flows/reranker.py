"""Entry point of the reranker training flow (:mod:`ragkit.flows.reranker`):
``python -m flows.reranker BEIR_DIR…``."""

import sys

from ragkit.flows.reranker import main, train_reranker_flow

__all__ = ["train_reranker_flow"]

if __name__ == "__main__":
    main(sys.argv[1:])
