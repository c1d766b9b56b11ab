"""Source globs: ``*`` and ``?`` within one path segment, ``**`` across segments, ``[...]`` a
character class; a relative glob matches the end of a path, whole segments, an absolute one the
whole path (``docs/*.txt`` does not match ``docs/sub/a.txt``; ``docs/**/*.txt`` matches both;
``*.md`` matches any Markdown file).

:func:`path_match` is the rule; :func:`path_glob` the SQL condition (a SQLite ``GLOB`` as a
cheap first pass, then ``path_match``), :func:`like_pattern` a Milvus ``LIKE`` pattern at least as
wide (Milvus then narrows nothing: the exact rule runs on the rows it returns).

Example:
    >>> path_match("docs/*.txt", "docs/sub/a.txt"), path_match("docs/**/*.txt", "docs/sub/a.txt")
    (False, True)
    >>> like_pattern("docs/?.md")
    '%docs/%.md'
"""

from __future__ import annotations

import functools
import re
from typing import Any

from ragkit.errors import InvalidArgumentError

__all__ = ["MAX_GLOB_CHARS", "check_glob", "like_pattern", "path_glob", "path_match"]

MAX_GLOB_CHARS = 4096  # a path's longest; SQLite refuses GLOB patterns over 50,000 bytes
SPECIAL = "*?["  # characters that make a glob more than one path


def check_glob(pattern: str) -> str:
    """``pattern``, refused when over :data:`MAX_GLOB_CHARS` characters (longer than any
    path)."""
    if len(pattern) > MAX_GLOB_CHARS:
        raise InvalidArgumentError(
            f"glob {pattern[:40]!r}… of {len(pattern):,} characters: at most {MAX_GLOB_CHARS:,} "
            "(longer than any path)"
        )
    return pattern


def path_glob(column: str, pattern: str) -> tuple[str, list[Any]]:
    """The SQL condition that ``column`` matches the glob ``pattern`` (:func:`path_match`),
    with a SQLite GLOB as a cheap first pass, and its parameters.

    A pattern over :data:`MAX_GLOB_CHARS` characters is a :class:`RagkitError`.

    Example:
        >>> path_glob("d.key", "docs/*.md")
        ('(d.key GLOB ? AND path_match(?, d.key))', ['*docs/*.md', 'docs/*.md'])
    """
    check_glob(pattern)
    return f"({column} GLOB ? AND path_match(?, {column}))", [_sql_glob(pattern), pattern]


def _sql_glob(pattern: str) -> str:
    """A SQLite GLOB at least as wide as ``pattern`` (SQLite negates a class with ``^``, not
    ``!``)."""
    glob = pattern.replace("**/", "*").replace("**", "*").replace("[!", "[^")
    return glob if glob.startswith("/") else "*" + glob


def like_pattern(pattern: str) -> str:
    """A ``LIKE`` pattern at least as wide as the glob ``pattern``: every wildcard, class and
    backslash becomes ``%`` (``%`` and ``_`` in the glob stay wildcards, wider still), a
    relative glob starts with ``%``."""
    parts: list[str] = []
    position = 0
    while position < len(pattern):
        character = pattern[position]
        if character == "[" and (end := pattern.find("]", position + 2)) != -1:
            parts.append("%")
            position = end + 1
            continue
        parts.append("%" if character in "*?\\" else character)
        position += 1
    like = re.sub("%+", "%", "".join(parts))
    return like if pattern.startswith("/") else "%" + like.removeprefix("%")


@functools.lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    parts: list[str] = []
    position = 0
    while position < len(pattern):
        if pattern.startswith("**/", position):
            parts.append("(?:.*/)?")
            position += 3
        elif pattern.startswith("**", position):
            parts.append(".*")
            position += 2
        elif pattern[position] in "*?":
            parts.append("[^/]*" if pattern[position] == "*" else "[^/]")
            position += 1
        elif pattern[position] == "[" and (end := pattern.find("]", position + 2)) != -1:
            body = pattern[position + 1 : end]
            negate = body[0] in "!^"
            escaped = body[negate:].replace("\\", "\\\\")
            parts.append(f"[{'^' if negate else ''}{escaped}]")
            position = end + 1
        else:
            parts.append(re.escape(pattern[position]))
            position += 1
    anywhere = "" if pattern.startswith("/") else "(?:.*/)?"  # relative: the path's end
    return re.compile(anywhere + "".join(parts), re.DOTALL)


def path_match(pattern: str, path: str) -> bool:
    """Whether ``path`` matches the glob ``pattern`` (``*`` and ``?`` within one path segment,
    ``**`` across segments; a relative pattern matches the path's last segments, an absolute
    one all of it); registered in SQLite as ``path_match``."""
    return _glob_regex(pattern).fullmatch(path) is not None
