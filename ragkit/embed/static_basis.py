"""The projection of static token vectors: model2vec's PCA basis, shipped or fitted.

model2vec's distillation reduces every token's encoder vector (384 numbers for the bundled
models) to 256 with a PCA fitted on the whole vocabulary's vectors, so one token's static
vector depends on all the others only through that basis (the mean and the components).
With the basis known, any token's vector is made alone: ``((h - mean) @ components.T) *
weight``, stored as float16 (:meth:`Basis.project`, the same arithmetic as model2vec).

- The bundled models' bases ship in ``ragkit/embed/bases/`` (``<model>.npz``, 0.4 MB each,
  with their provenance in ``MANIFEST.json``), fitted on the full vocabulary by
  ``python -m benchmarks.static_bases``: their vectors are the full distillation's. Each file
  holds a few probe rows' vectors too; a model whose weights give other vectors for them
  (:meth:`ShippedBasis.matches`) is not the model the basis was made from, and is treated as
  any other model.
- Any other model's basis is fitted on a fixed sample of its vocabulary (:func:`sample_rows`:
  :data:`SAMPLE_ROWS` rows at evenly spaced ranks), once per machine, and kept beside its
  vectors.

Example:
    >>> rng = np.random.default_rng(0)
    >>> hidden = rng.normal(size=(50, 8)).astype(np.float32)
    >>> basis = Basis.fit(hidden, 4)
    >>> basis.components.shape, basis.project(hidden[:2], np.ones(2)).dtype
    ((4, 8), dtype('float16'))
    >>> sample_rows(10, 4).tolist()
    [0, 3, 6, 9]
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragkit.embed.static_vocabulary import replacing
from ragkit.paths import package_folder

PCA_DIMENSIONS = 256  # model2vec's default
SAMPLE_ROWS = 8192  # rows a basis is fitted on where none ships
PROBE_TOLERANCE = 4e-3  # float16 steps at the probe vectors' size; other weights differ by 0.1+
BASIS_FILE = "basis.npz"


@dataclass(frozen=True)
class Basis:
    """A PCA basis: ``mean`` (d,) and ``components`` (k, d), float32, signs as model2vec
    sets them."""

    mean: np.ndarray
    components: np.ndarray

    @property
    def dimension(self) -> int:
        return int(self.components.shape[0])

    @property
    def key(self) -> str:
        """A short hash of the basis: vectors made with it are kept under this name."""
        digest = hashlib.sha256(self.mean.tobytes() + self.components.tobytes())
        return digest.hexdigest()[:12]

    @classmethod
    def fit(cls, hidden: np.ndarray, dimensions: int) -> Basis:
        """model2vec's PCA (``_pca_fit_transform``) of ``hidden`` (tokens × d, float32):
        eigenvectors of the covariance, largest first, each signed so that the token with the
        largest absolute score scores positive."""
        mean = hidden.mean(axis=0)
        centered = hidden - mean
        covariance = (centered.T @ centered) / (hidden.shape[0] - 1)
        _, vectors = np.linalg.eigh(covariance)
        components = vectors[:, ::-1][:, :dimensions].T
        scores = centered @ components.T
        largest = np.argmax(np.abs(scores), axis=0)
        signs = np.sign(scores[largest, range(scores.shape[1])])
        signed = (components * signs[:, None]).astype(np.float32)
        return cls(mean.astype(np.float32), np.ascontiguousarray(signed))

    def project(self, hidden: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Static vectors (float16) of tokens whose encoder vectors are ``hidden`` and whose
        SIF weights are ``weights``."""
        scores = (hidden.astype(np.float32) - self.mean) @ self.components.T
        return (scores * np.asarray(weights, dtype=np.float64)[:, None]).astype(np.float16)

    def save(self, path: Path) -> None:
        """Write the basis to ``path`` (npz) through a temporary file."""
        path.parent.mkdir(parents=True, exist_ok=True)
        with replacing(path) as scratch, scratch.open("wb") as handle:
            np.savez(handle, mean=self.mean, components=self.components)

    @classmethod
    def load(cls, path: Path) -> Basis:
        with np.load(path) as saved:
            return cls(saved["mean"], saved["components"])


@dataclass(frozen=True)
class ShippedBasis:
    """A basis shipped for a bundled model, with the rows it was made for and a few probe
    rows' vectors from the full distillation."""

    basis: Basis
    rows: int  # the vocabulary's size
    probe_rows: np.ndarray
    probe_vectors: np.ndarray  # float16

    def matches(self, rows: int, probes: np.ndarray) -> bool:
        """Whether a vocabulary of ``rows`` rows whose probe rows project to ``probes`` is the
        one this basis was made for."""
        if rows != self.rows or probes.shape != self.probe_vectors.shape:
            return False
        difference = np.abs(probes.astype(np.float32) - self.probe_vectors.astype(np.float32))
        return float(difference.max()) <= PROBE_TOLERANCE


def bases_folder() -> Path:
    return package_folder("ragkit.embed", "bases")


def shipped_basis(model: str) -> ShippedBasis | None:
    """The basis shipped for the bundled ``model``, or None."""
    path = bases_folder() / f"{model}.npz"
    if not path.is_file():
        return None
    with np.load(path) as saved:
        return ShippedBasis(
            Basis(saved["mean"], saved["components"]),
            int(saved["rows"]),
            saved["probe_rows"],
            saved["probe_vectors"],
        )


def sample_rows(size: int, count: int = SAMPLE_ROWS) -> np.ndarray:
    """The rows a basis is fitted on where none ships: ``count`` rows at evenly spaced ranks
    of a vocabulary of ``size`` (all of them when it is smaller)."""
    return np.unique(np.linspace(0, size - 1, min(size, count)).round().astype(np.int64))


def manifest() -> dict[str, dict[str, object]]:
    """The shipped bases' provenance (model, weights, model2vec version, date, command)."""
    path = bases_folder() / "MANIFEST.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
