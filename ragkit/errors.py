"""The one error family ragkit raises; messages name the file or setting and the fix."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class RagkitError(Exception):
    """Base class of every error ragkit raises on purpose.

    Example:
        >>> raise RagkitError("index /tmp/x: no MANIFEST.json; run `ragkit ingest` first")
        Traceback (most recent call last):
        ...
        ragkit.errors.RagkitError: index /tmp/x: no MANIFEST.json; run `ragkit ingest` first
    """


class EmptyFileError(RagkitError):
    """A file with nothing to index (empty, or whitespace only): reported as passed over,
    not as a failure — real folders hold empty files, and ingesting them is no error."""


def validation_message(error: ValidationError) -> str:
    """The first problem of a pydantic validation error as one line, without pydantic's
    ``Value error,`` prefix, input echo and link.

    Example:
        >>> from pydantic import BaseModel, Field, ValidationError
        >>> class Limits(BaseModel):
        ...     depth: int = Field(ge=1)
        >>> try:
        ...     Limits(depth=0)
        ... except ValidationError as error:
        ...     validation_message(error)
        'Input should be greater than or equal to 1'
    """
    message = str(error.errors()[0]["msg"])
    return message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
