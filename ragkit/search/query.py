"""What a query must hold before it is searched: at least one letter or digit.

Example:
    >>> check_query("boiling point")
"""

from __future__ import annotations

from ragkit.errors import InvalidArgumentError


def check_query(text: object) -> None:
    """Refuse a query that is not text, or without words (empty, or only spaces and
    punctuation): it would match nothing in BM25 and an arbitrary neighbour in the dense
    index.

    Example:
        >>> check_query("  ?! ")
        Traceback (most recent call last):
        ...
        ragkit.errors.InvalidArgumentError: empty query: give words to search for
        >>> check_query(b"water")
        Traceback (most recent call last):
        ...
        ragkit.errors.InvalidArgumentError: query b'water': give text (str), not bytes
    """
    if not isinstance(text, str):
        raise InvalidArgumentError(
            f"query {text!r:.60}: give text (str), not {type(text).__name__}"
        )
    if not any(character.isalnum() for character in text):
        raise InvalidArgumentError("empty query: give words to search for")
