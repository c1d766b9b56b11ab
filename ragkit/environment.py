"""ragkit's environment variables (``RAGKIT_*``), read and checked in one place by
pydantic-settings: :class:`Environment`.

A variable is read when ragkit needs it (:func:`read`), so a test or a long-running process
that changes it sees the new value. A bad value is one :class:`RagkitError` naming the
variable, its value and what it takes; an empty variable counts as unset.

Example:
    >>> read("max_file_mb", {"RAGKIT_MAX_FILE_MB": "8"})
    8
    >>> read("max_file_mb", {"RAGKIT_MAX_FILE_MB": "lots"})
    Traceback (most recent call last):
    ...
    ragkit.errors.InvalidArgumentError: RAGKIT_MAX_FILE_MB='lots': give a whole number of MiB, e.g. 64
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, TypeAdapter, ValidationError
from pydantic_settings import BaseSettings, EnvSettingsSource, SettingsConfigDict

from ragkit.errors import InvalidArgumentError

PREFIX = "RAGKIT_"
DEFAULT_MAX_FILE_MB = 64
DEFAULT_MAX_DOCUMENT_CHARS = 4_000_000
DEFAULT_PROGRESS_SECONDS = 30.0


def _lowered(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


class Environment(BaseSettings):
    """Every ``RAGKIT_*`` variable; each field's description is what a bad value is told."""

    model_config = SettingsConfigDict(env_prefix=PREFIX, env_ignore_empty=True, extra="ignore")

    cache: Path | None = Field(
        None, description="give a folder for converted models and other derived files"
    )
    shared_data: Path | None = Field(
        None, description="give the folder of the shared evaluation data"
    )
    tokenizers: Path | None = Field(None, description="give a folder of tokenizer models")
    model: str | None = Field(None, description="give the name or path of an embedding model")
    reranker: str | None = Field(None, description="give a shipped reranker's name or a folder")
    threads: int | None = Field(None, ge=1, description="give a whole number of threads, e.g. 4")
    max_file_mb: int = Field(
        DEFAULT_MAX_FILE_MB, ge=1, description="give a whole number of MiB, e.g. 64"
    )
    max_document_chars: int = Field(
        DEFAULT_MAX_DOCUMENT_CHARS,
        ge=1,
        description=f"give a whole number of characters, e.g. {DEFAULT_MAX_DOCUMENT_CHARS}",
    )
    progress_seconds: float = Field(
        DEFAULT_PROGRESS_SECONDS,
        gt=0,
        allow_inf_nan=False,
        description="give the seconds between progress lines in a log, e.g. 30",
    )
    embed_runtime: Annotated[Literal["auto", "onnx", "torch"], BeforeValidator(_lowered)] = Field(
        "auto",
        description="give one of auto, onnx, torch (auto: ONNX Runtime for passages and "
        "queries when installed)",
    )
    # embed_runtime's name while only queries ran on ONNX Runtime, still read where it is unset
    query_runtime: Annotated[Literal["auto", "onnx", "torch"], BeforeValidator(_lowered)] = Field(
        "auto", description="give one of auto, onnx, torch (now named RAGKIT_EMBED_RUNTIME)"
    )


def read(name: str, values: Mapping[str, str] | None = None) -> Any:
    """The variable of field ``name`` (``RAGKIT_`` + its name in capitals) in ``values``
    (default: this process's environment, as pydantic-settings reads it), checked; the field's
    default when it is unset or empty. Only that variable is checked, so one bad variable
    never stops code that reads another.

    Raises:
        RagkitError: the variable holds a value its field refuses (named with the value).

    Example:
        >>> read("threads", {"RAGKIT_THREADS": "3", "RAGKIT_MAX_FILE_MB": "lots"})
        3
    """
    variable = PREFIX + name.upper()
    if values is None:
        present = EnvSettingsSource(Environment)()  # case-insensitive, empty ones left out
        raw = present.get(name)
        raw = raw.strip() or None if isinstance(raw, str) else raw
    else:
        raw = values.get(variable, "").strip() or None
    field = Environment.model_fields[name]
    if raw is None:
        return field.default
    checked: TypeAdapter[Any] = TypeAdapter(Annotated[field.annotation, field])  # type: ignore[arg-type]
    try:
        return checked.validate_python(raw)
    except ValidationError:
        raise InvalidArgumentError(f"{variable}={raw!r}: {field.description}") from None
