"""pytest at the repository root: the doctests of framework components whose framework is not
installed (``pip install "ragkit-pipeline[langchain]"`` and the like) are not collected, and Haystack
sends no usage data from tests (it would try at import)."""

from __future__ import annotations

import importlib.util
import os

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

FRAMEWORKS = {
    "ragkit/integrations/langchain.py": "langchain_text_splitters",
    "ragkit/integrations/llama_index.py": "llama_index.core",
    "ragkit/integrations/haystack": "haystack",
}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


collect_ignore = [path for path, module in FRAMEWORKS.items() if not _installed(module)]
