"""Errors are typed by what the caller must do, each with its exit code and HTTP status
(ragkit/errors.py's table), and raised as such where a user meets them."""

from __future__ import annotations

from pathlib import Path

import pytest

import ragkit
from conftest import MODEL, cli
from ragkit import Index
from ragkit.errors import (
    BackendUnavailableError,
    IndexBusyError,
    IndexDamagedError,
    IndexExistsError,
    IndexNotFoundError,
    InputRefusedError,
    InvalidArgumentError,
    NotFoundError,
    RagkitError,
    SettingsMismatchError,
)
from ragkit.store import DB_NAME

TABLE = {
    RagkitError: (2, 422),
    InvalidArgumentError: (2, 422),
    InputRefusedError: (2, 422),
    NotFoundError: (2, 404),
    IndexNotFoundError: (2, 404),
    IndexExistsError: (2, 409),
    SettingsMismatchError: (2, 409),
    IndexBusyError: (2, 409),
    IndexDamagedError: (4, 500),
    BackendUnavailableError: (3, 503),
}


def test_each_error_has_its_exit_code_and_http_status() -> None:
    assert {kind: (kind.exit_code, kind.http_status) for kind in TABLE} == TABLE
    assert all(issubclass(kind, RagkitError) and kind.__name__ in ragkit.__all__ for kind in TABLE)
    assert issubclass(InvalidArgumentError, ValueError)


def test_errors_are_raised_typed_where_a_user_meets_them(tmp_path: Path) -> None:
    with pytest.raises(IndexNotFoundError, match="no ragkit index here"):
        Index.open(tmp_path / "missing")
    index = Index.open(tmp_path / "index", create=True, model=MODEL, chunk_tokens=64)
    index.add([{"id": "a", "text": "Water boils at 100 degrees."}])
    with pytest.raises(SettingsMismatchError, match="built with chunk_tokens=64"):
        Index.open(tmp_path / "index", chunk_tokens=128)
    with pytest.raises(InvalidArgumentError, match="search mode 'fuzzy'"):
        index.search("water", mode="fuzzy")
    with pytest.raises(ValueError):  # an invalid argument is a ValueError too
        index.search("water", k=0)
    with pytest.raises(NotFoundError, match="no document has the id 'b'"):
        index.delete(["b"])
    index.close()
    (tmp_path / "index" / DB_NAME).write_bytes(b"not a database at all" * 200)
    damaged = cli("query", "water", "--index", str(tmp_path / "index"))
    assert damaged.returncode == 4 and "error:" in damaged.stderr, damaged.stderr
