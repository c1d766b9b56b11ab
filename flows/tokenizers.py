"""Entry point of the tokenizer training flow (:mod:`ragkit.flows.tokenizers`):
``python -m flows.tokenizers [LANG…]``."""

import sys

from ragkit.flows.tokenizers import main, train_tokenizers

__all__ = ["train_tokenizers"]

if __name__ == "__main__":
    main(sys.argv[1:])
