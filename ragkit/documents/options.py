"""How an ingest chooses and reads files: include/exclude globs and the text field of records.

Globs are matched (case-sensitively, ``*`` crossing ``/``) against a file's path relative to the
folder given, and against its name alone, so ``*.pdf`` and ``drafts/*`` both work at any depth
below the folder. An excluded folder is not walked. ``text_field`` names the field (``.json``)
or column (``.csv``, ``.tsv``) that holds a record's text.

Example:
    >>> options = LoadOptions(include=("*.md",), exclude=("drafts/*",))
    >>> [options.selects(p) for p in ("guide/intro.md", "drafts/new.md", "notes.txt")]
    [True, False, False]
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from ragkit.errors import InvalidArgumentError


@dataclass(frozen=True)
class LoadOptions:
    """Which files under the given folders are read, and which field holds a record's text."""

    include: tuple[str, ...] = ()  # when given, only files matching one of these globs
    exclude: tuple[str, ...] = ()  # files and folders matching one of these are left out
    text_field: str = "text"

    def __post_init__(self) -> None:
        for option, globs in (("--include", self.include), ("--exclude", self.exclude)):
            for glob in globs:
                check_glob(glob, option)

    def excludes(self, relative: str) -> bool:
        """Whether ``relative`` (a file or folder path, ``/``-separated) is excluded."""
        return _matches(relative, self.exclude)

    def selects(self, relative: str) -> bool:
        """Whether the file at ``relative`` is read: not excluded and, with ``include``
        globs, matching one of them."""
        if self.excludes(relative):
            return False
        return not self.include or _matches(relative, self.include)


def _matches(relative: str, patterns: tuple[str, ...]) -> bool:
    name = relative.rsplit("/", 1)[-1]
    return any(
        fnmatchcase(relative, glob) or fnmatchcase(name, glob)
        for glob in (p.rstrip("/") for p in patterns)
    )


def check_glob(glob: str, option: str) -> None:
    """Refuse a glob that cannot mean what was typed: empty, or with a ``[`` that no ``]``
    closes (fnmatch would match a literal ``[``, so the ingest would silently read nothing).

    Example:
        >>> check_glob("*.md", "--include")
        >>> check_glob("[", "--include")
        Traceback (most recent call last):
        ...
        ragkit.errors.InvalidArgumentError: --include '[': a '[' that no ']' closes; write [[] for a literal '['
    """
    if not glob.strip():
        raise InvalidArgumentError(
            f"{option} {glob!r}: an empty glob; give a pattern such as '*.md'"
        )
    position = 0
    while (start := glob.find("[", position)) != -1:
        end = glob.find("]", start + 2 if glob[start + 1 : start + 2] in ("!", "]") else start + 1)
        if end == -1:
            raise InvalidArgumentError(
                f"{option} {glob!r}: a '[' that no ']' closes; write [[] for a literal '['"
            )
        position = end + 1
