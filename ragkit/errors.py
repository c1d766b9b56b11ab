"""The one error family ragkit raises; messages name the file or setting and the fix. Each
class says how the command line exits (``exit_code``) and what ``ragkit serve`` answers
(``http_status``) when it stops a command or a request.

Example:
    >>> RagkitError.exit_code, RagkitError.http_status
    (2, 422)
    >>> BackendUnavailableError.exit_code, BackendUnavailableError.http_status
    (3, 503)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

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

    exit_code: ClassVar[int] = 2
    http_status: ClassVar[int] = 422


class BackendUnavailableError(RagkitError):
    """The index's backend cannot answer now — a Milvus server down, restarting or out of
    reach — though nothing is wrong with the request or the index: the same call may succeed
    later. Exit code 3; HTTP 503.

    Example:
        >>> raise BackendUnavailableError("milvus://db:19530/docs: Milvus unreachable (…)")
        Traceback (most recent call last):
        ...
        ragkit.errors.BackendUnavailableError: milvus://db:19530/docs: Milvus unreachable (…)
    """

    exit_code = 3
    http_status = 503


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
