"""Lexical normalization of social-media text (MultiLexNorm task), English model shipped.

Example:
    >>> from ragkit.normalize.lexical import parse_lexnorm, score_predictions
    >>> gold = parse_lexnorm("u\\tyou\\nr\\tare\\nok\\tok\\n")
    >>> score_predictions(gold, [["you", "r", "ok"]]).err
    0.5
"""

from ragkit.normalize.lexical.evaluate import (
    LexnormScore,
    err_interval,
    most_frequent_replacement,
    score_predictions,
)
from ragkit.normalize.lexical.format import (
    LexToken,
    Sentence,
    format_lexnorm,
    parse_lexnorm,
    read_lexnorm,
    with_predictions,
    write_lexnorm,
)
from ragkit.normalize.lexical.normalizer import (
    LexicalNormalization,
    LexicalNormalizer,
    model_path,
)
from ragkit.normalize.lexical.train import TrainingReport, train_lexical

__all__ = [
    "LexToken",
    "LexicalNormalization",
    "LexicalNormalizer",
    "LexnormScore",
    "Sentence",
    "TrainingReport",
    "err_interval",
    "format_lexnorm",
    "model_path",
    "most_frequent_replacement",
    "parse_lexnorm",
    "read_lexnorm",
    "score_predictions",
    "train_lexical",
    "with_predictions",
    "write_lexnorm",
]
