"""The one error family ragkit raises, typed by what a caller must do; messages name the file
or setting and the fix. Each class says how the command line exits (``exit_code``) and what
``ragkit serve`` answers (``http_status``) when it stops a command or a request:

| error | what the caller does | exit | HTTP |
|---|---|---|---|
| :class:`InvalidArgumentError` (also a ``ValueError``) | fix the argument, option or setting named | 2 | 422 |
| :class:`InputRefusedError` | fix or leave out the file or record named (a batch goes on without it) | 2 | 422 |
| :class:`IndexNotFoundError`, :class:`NotFoundError` | create the index, or name one (a document) that exists | 2 | 404 |
| :class:`IndexExistsError` | open the index instead of creating it | 2 | 409 |
| :class:`SettingsMismatchError` | use the index's own settings or model, or a new index | 2 | 409 |
| :class:`IndexBusyError` | wait for the other writer (or retry) | 2 | 409 |
| :class:`IndexDamagedError` | run ``ragkit doctor --repair`` | 4 | 500 |
| :class:`BackendUnavailableError` | retry later: the backend (a Milvus server) cannot answer now | 3 | 503 |
| :class:`RagkitError` (any other) | read the message | 2 | 422 |

Example:
    >>> RagkitError.exit_code, RagkitError.http_status
    (2, 422)
    >>> BackendUnavailableError.exit_code, BackendUnavailableError.http_status
    (3, 503)
    >>> isinstance(InvalidArgumentError("k=0: ask for at least one hit"), ValueError)
    True
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


class InvalidArgumentError(RagkitError, ValueError):
    """An argument, option or setting a caller gave is not one ragkit takes (a search mode, a
    ``k``, a filter, a setting's value). Exit code 2; HTTP 422."""


class InputRefusedError(RagkitError):
    """A file or record cannot be indexed (not text, too large, malformed, NaN in its
    metadata…); an ingest reports it and goes on with the others. Exit code 2; HTTP 422."""


class EmptyFileError(InputRefusedError):
    """A file with nothing to index (empty, or whitespace only): reported as passed over,
    not as a failure — real folders hold empty files, and ingesting them is no error."""


class NotFoundError(RagkitError):
    """What a call names (a served index, a document) is not there. Exit code 2; HTTP 404."""

    http_status = 404


class IndexNotFoundError(NotFoundError):
    """No ragkit index at the location given (create it with ``create=True`` or ``ragkit
    ingest``). Exit code 2; HTTP 404."""


class IndexExistsError(RagkitError):
    """An index is already where one was to be created. Exit code 2; HTTP 409."""

    http_status = 409


class SettingsMismatchError(RagkitError):
    """The index was built with another model or other settings than the ones given. Exit
    code 2; HTTP 409."""

    http_status = 409


class IndexBusyError(RagkitError):
    """Another writer holds the index and the caller chose not to wait. Exit code 2; HTTP
    409."""

    http_status = 409


class IndexDamagedError(RagkitError):
    """The index's files or rows are damaged (unreadable SQLite, a vectors file that does not
    match, missing files); ``ragkit doctor --repair`` says and mends what it can. Exit code
    4; HTTP 500."""

    exit_code = 4
    http_status = 500


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
