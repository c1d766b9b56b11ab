"""Griffe extension for the API reference: ragkit's docstrings read as Google-style sections.

ragkit writes ``Example:`` (the Google style guide's spelling) where griffe knows only
``Examples:``, so its ``>>>`` lines would render as nested quotes; and a few docstrings name
other objects with Sphinx roles (``:meth:`open```), shown here as code. The source stays as it
is (doctests and ``help()`` read it); only the text the site renders changes.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

EXAMPLE_HEADING = re.compile(r"^(\s*)Example:[ \t]*$", re.MULTILINE)
SPHINX_ROLE = re.compile(r":(?:meth|class|func|mod|attr|data|exc|obj):`~?([^`]+)`")


class ExampleSections(griffe.Extension):
    """Reads ``Example:`` as an examples section and Sphinx roles as inline code."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is None:
            return
        text = EXAMPLE_HEADING.sub(r"\1Examples:", obj.docstring.value)
        obj.docstring.value = SPHINX_ROLE.sub(r"`\1`", text)
