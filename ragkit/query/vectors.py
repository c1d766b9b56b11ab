"""A query vector given by the caller (:meth:`ragkit.Index.search_by_vector`), checked and
made unit length as the index's own query vectors are.

Example:
    >>> checked_vector([3, 4], 2).tolist()
    [0.6000000238418579, 0.800000011920929]
    >>> checked_vector([0.1, 0.2, 0.3], 2)
    Traceback (most recent call last):
    ...
    ragkit.errors.InvalidArgumentError: vector of 3 numbers: this index's vectors have 2 (its model's dimension)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ragkit.errors import InvalidArgumentError

__all__ = ["Vector", "checked_vector"]

Vector = np.ndarray
"""A query vector: one row of float32 numbers, unit length, of the index's dimension."""

KINDS = {"U": "text", "S": "bytes", "b": "booleans", "c": "complex numbers"}


def checked_vector(vector: Any, dimension: int) -> Vector:
    """``vector`` (a sequence of numbers or a 1-d numpy array) as unit-length float32, or an
    :class:`InvalidArgumentError` naming the ``dimension`` expected: not numbers, not one
    row of ``dimension`` of them, NaN or infinity, all zeros."""
    if isinstance(vector, str | bytes | dict) or (
        not isinstance(vector, np.ndarray) and not hasattr(vector, "__len__")
    ):
        raise InvalidArgumentError(
            f"vector {vector!r:.60}: give {dimension} numbers (a list or a 1-d numpy array)"
        )
    try:
        array = np.asarray(vector)
    except ValueError:  # rows of different lengths
        array = np.asarray(vector, dtype=object)
    if array.dtype.kind not in "iuf":
        held = KINDS.get(array.dtype.kind, "values that are not numbers")
        raise InvalidArgumentError(f"vector {vector!r:.60}: give {dimension} numbers, not {held}")
    with np.errstate(over="ignore"):  # beyond float32: infinity, refused below
        values = array.astype(np.float32)
    if values.ndim != 1 or len(values) != dimension:
        shape = f"{len(values)} numbers" if values.ndim == 1 else f"shape {values.shape}"
        raise InvalidArgumentError(
            f"vector of {shape}: this index's vectors have {dimension} (its model's dimension)"
        )
    if not np.isfinite(values).all():
        raise InvalidArgumentError(
            f"vector: NaN, infinity or a number beyond float32 at position {int(np.flatnonzero(~np.isfinite(values))[0])}"
            f"; give {dimension} finite numbers"
        )
    norm = float(np.linalg.norm(values))
    if norm == 0.0:
        raise InvalidArgumentError(f"vector: all {dimension} numbers are 0; it points nowhere")
    return values / norm
