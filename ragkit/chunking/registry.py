"""Chunkers by name: the five built in, and any a user registers.

Example:
    >>> sorted(available_chunkers())
    ['fixed', 'recursive', 'semantic', 'sentence', 'structure']
    >>> get_chunker("fixed", max_tokens=64).label
    'fixed-64'
"""

from __future__ import annotations

from typing import Any, TypeVar

from ragkit.chunking.base import Chunker
from ragkit.chunking.fixed import FixedChunker
from ragkit.chunking.recursive import RecursiveChunker
from ragkit.chunking.semantic import SemanticChunker
from ragkit.chunking.sentence import SentenceChunker
from ragkit.chunking.structure import StructureChunker
from ragkit.errors import RagkitError

_REGISTRY: dict[str, type[Chunker]] = {
    chunker.name: chunker
    for chunker in (
        FixedChunker,
        RecursiveChunker,
        SemanticChunker,
        SentenceChunker,
        StructureChunker,
    )
}
C = TypeVar("C", bound=type[Chunker])


def register(cls: C) -> C:
    """Class decorator: make a chunker of your own available by its ``name``."""
    if not cls.name:
        raise RagkitError(f"{cls.__qualname__}: a registered chunker needs a name")
    _REGISTRY[cls.name] = cls
    return cls


def available_chunkers() -> list[str]:
    """Registered chunker names."""
    return list(_REGISTRY)


def get_chunker(name: str, **options: Any) -> Chunker:
    """A chunker by registry name, e.g. ``get_chunker("fixed", max_tokens=128)``."""
    if name not in _REGISTRY:
        raise RagkitError(f"unknown chunker {name!r}; choose one of {sorted(_REGISTRY)}")
    return _REGISTRY[name](**options)
