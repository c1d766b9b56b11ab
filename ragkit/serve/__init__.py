"""``ragkit serve``: an HTTP API over index folders that keeps each model loaded.

Example:
    >>> from ragkit.serve import ServedIndexes, create_app, parse_locations
    >>> app = create_app(ServedIndexes(parse_locations(["my-index"])))  # doctest: +SKIP
"""

from ragkit.serve.app import create_app
from ragkit.serve.indexes import IndexLocation, ServedIndexes, UnknownIndexError, parse_locations

__all__ = ["IndexLocation", "ServedIndexes", "UnknownIndexError", "create_app", "parse_locations"]
