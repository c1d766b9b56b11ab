"""Static token vectors distilled from an index's own encoder, for choosing chunks cheaply.

Adaptive chunk selection (ICC/DCC) and the ``semantic`` chunker compare sentence vectors
within one document; they need the encoder's sense of similarity, not its full accuracy. A
:class:`StaticEncoder` gives each token of the encoder's vocabulary one fixed vector — the
encoder's output for that token alone, reduced by PCA and weighted by token frequency
(``model2vec``'s distillation) — and embeds a sentence as the normalized mean of its token
vectors: no transformer pass, tens of times faster than the encoder on CPU.

The distillation runs once per model, offline, from the encoder already loaded in memory
(all-MiniLM-L6-v2's 30k tokens: 30–75 s on two busy CPU cores; multilingual-e5-small's
250k tokens, 12 layers: 19 min there), and is cached in ``<cache>/models/static/<model>-<digest>``
beside the converted models (:func:`static_folder`). A text whose tokens all lack a vector
gets the unknown token's vector (:meth:`StaticEncoder.encode`).

Example:
    >>> from ragkit.embed import Encoder  # doctest: +SKIP
    >>> static = StaticEncoder.for_encoder(Encoder("all-minilm-l6-v2"))  # doctest: +SKIP
    >>> static.encode(["Heat transfer.", "مرحبا"]).shape  # doctest: +SKIP
    (2, 256)
"""

from __future__ import annotations

import functools
import hashlib
import logging
import re
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from unittest import mock

import numpy as np

from ragkit.errors import RagkitError
from ragkit.normalize.unicode import text_only
from ragkit.paths import cache_dir

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from ragkit.embed.encoder import Encoder

log = logging.getLogger(__name__)

STATIC_FORMAT = 1  # bump when the recipe below changes: older caches are then rebuilt
PCA_DIMENSIONS = 256
INSTALL_HINT = "pip install 'model2vec>=0.10' 'skeletoken>=0.6,<0.7'"

_loaded: dict[Path, StaticEncoder] = {}


def static_folder(name: str, location: str) -> Path:
    """Where the static vectors of the model ``name`` (weights at ``location``) are cached.

    Example:
        >>> folder = static_folder("all-minilm-l6-v2", "/models/minilm")
        >>> folder.parent == cache_dir() / "models" / "static", folder.name.startswith("all-minilm")
        (True, True)
    """
    digest = hashlib.sha256(f"{STATIC_FORMAT}\0{name}\0{location}".encode()).hexdigest()[:12]
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-")[-60:] or "model"
    return cache_dir() / "models" / "static" / f"{safe}-{digest}"


def _model2vec() -> Any:
    try:
        import model2vec
    except ImportError as error:
        raise RagkitError(
            f"chunk_vectors 'static' needs the model2vec package: {INSTALL_HINT} "
            '(or set chunk_vectors = "encoder")'
        ) from error
    return model2vec


def distill(model: SentenceTransformer, folder: Path) -> None:
    """Distill static token vectors from a loaded sentence-transformers ``model`` into
    ``folder`` (written to a scratch folder first and renamed, so a crash leaves nothing)."""
    _model2vec()
    try:
        from model2vec.distill import distill_from_model
    except ImportError as error:
        raise RagkitError(
            f"static vectors need model2vec's distillation: {INSTALL_HINT}"
        ) from error
    transformer = model[0]
    backbone = getattr(transformer, "auto_model", None) or getattr(transformer, "model", None)
    if backbone is None:
        raise RagkitError(
            f"{folder.name}: the model's first module has no transformer to distill "
            '(set chunk_vectors = "encoder")'
        )
    hidden = getattr(backbone.config, "hidden_size", PCA_DIMENSIONS)
    dimensions = min(PCA_DIMENSIONS, int(hidden))
    import model2vec.distill.inference as steps
    from tqdm import tqdm

    # model2vec's token bar only on a terminal (tqdm's disable=None), never in logs or pipes.
    with mock.patch.object(steps, "tqdm", functools.partial(tqdm, disable=None)):
        static = distill_from_model(
            model=backbone, tokenizer=model.tokenizer, pca_dims=dimensions, device="cpu"
        )
    folder.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        static.save_pretrained(str(scratch))
        try:
            scratch.rename(folder)
        except OSError:  # another process finished first: keep its copy
            if not (folder / "config.json").exists():
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


class StaticEncoder:
    """Sentence vectors from static token vectors (:mod:`ragkit.embed.static`).

    A text none of whose tokens has a vector (a script the vocabulary lacks, say Ge'ez under
    all-MiniLM-L6-v2) gets the unknown token's vector: the encoder, too, sees such texts as
    unknown tokens, and they then compare alike instead of dropping out of every cosine.
    """

    def __init__(self, folder: Path) -> None:
        model2vec = _model2vec()
        self.folder = folder
        self.model = model2vec.StaticModel.from_pretrained(
            str(folder), normalize=True, force_download=False
        )
        table = np.asarray(self.model.embedding, dtype=np.float32)
        unknown = self.model.unk_token_id
        self.unknown = (
            table[unknown] if unknown is not None and unknown < len(table) else table.mean(axis=0)
        )

    @property
    def dimension(self) -> int:
        return int(self.model.dim)

    @classmethod
    def for_encoder(cls, encoder: Encoder) -> StaticEncoder:
        """The static vectors of ``encoder``'s model: loaded from the cache, distilled there
        first when missing (once per model and machine, logged)."""
        folder = static_folder(encoder.spec.name, encoder.spec.location)
        if folder not in _loaded:
            if not (folder / "config.json").exists():
                log.warning(
                    "distilling static token vectors from %s for chunk selection, once, into %s "
                    "(about a minute for all-minilm-l6-v2, up to 20 for multilingual-e5-small)",
                    encoder.spec.name,
                    folder,
                )
                clock = time.perf_counter()
                distill(encoder.model, folder)
                log.warning("static vectors ready in %.0f s", time.perf_counter() - clock)
            _loaded[folder] = cls(folder)
        return _loaded[folder]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalized float32 vectors, one row per text (``(0, d)`` for no texts)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self.model.encode(
            [text_only(t) for t in texts],
            show_progress_bar=False,
            max_length=None,
            use_multiprocessing=False,
        )
        vectors = np.nan_to_num(np.asarray(vectors, dtype=np.float32))
        norms = np.linalg.norm(vectors, axis=1)
        empty = norms < 1e-9
        if empty.any():
            vectors[empty] = self.unknown
            norms[empty] = float(np.linalg.norm(self.unknown))
        return vectors / np.maximum(norms, 1e-12)[:, None]
