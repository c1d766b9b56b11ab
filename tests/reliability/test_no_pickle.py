"""Model, tokenizer and index loading never unpickles a user-provided file.

A source scan keeps pickle loaders, unrestricted ``torch.load``, ``allow_pickle=True`` and
``trust_remote_code=True`` out of ``ragkit``; booby-trapped files (a pickle whose loading would
create a marker file) in a model folder, a BM25 folder and a tokenizer path are refused with a
:class:`RagkitError` and the marker never appears.
"""

from __future__ import annotations

import ast
import os
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

import ragkit
from ragkit.embed.models import load_encoder, model_spec
from ragkit.errors import RagkitError
from ragkit.search.sparse import SparseIndex
from ragkit.tokenize import load

PICKLE_MODULES = {"pickle", "cPickle", "_pickle", "dill", "joblib", "cloudpickle", "shelve"}


def _unsafe_calls(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = ast.unparse(node.func)
        keywords = {k.arg: ast.unparse(k.value) for k in node.keywords}
        module, _, attribute = name.rpartition(".")
        if module in PICKLE_MODULES and attribute in {"load", "loads", "Unpickler", "open"}:
            found.append(name)
        if name.endswith("read_pickle") or keywords.get("trust_remote_code") == "True":
            found.append(name)
        if name == "torch.load" and keywords.get("weights_only") != "True":
            found.append("torch.load without weights_only=True")
        if name in {"np.load", "numpy.load"} and keywords.get("allow_pickle") == "True":
            found.append("np.load(allow_pickle=True)")
    return found


def test_no_pickle_loading_in_the_package() -> None:
    problems = {}
    for path in Path(ragkit.__file__).parent.rglob("*.py"):
        calls = _unsafe_calls(ast.parse(path.read_text(encoding="utf-8")))
        if calls:
            problems[str(path)] = calls
    assert problems == {}
    assert _unsafe_calls(ast.parse("torch.load(f)\npickle.loads(b)")) == [
        "torch.load without weights_only=True",
        "pickle.loads",
    ]  # the scan itself sees what it looks for


class _Trap:
    """Unpickling this object runs ``touch MARKER`` (what a malicious weights file does)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (os.system, (f"touch {self.marker}",))


def test_torch_load_defaults_to_weights_only(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    (tmp_path / "trap.bin").write_bytes(pickle.dumps(_Trap(marker), protocol=2))
    with pytest.raises(pickle.UnpicklingError):
        torch.load(tmp_path / "trap.bin")  # no weights_only argument: the default is tested
    assert not marker.exists()


def test_bundled_models_load_from_safetensors() -> None:
    folder = Path(model_spec("all-minilm-l6-v2").location)
    assert (folder / "model.safetensors").is_file()
    assert not list(folder.rglob("*.bin")) and not list(folder.rglob("*.pkl"))


def test_pickled_model_weights_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    shutil.copytree(model_spec("all-minilm-l6-v2").location, folder)
    (folder / "model.safetensors").unlink()
    marker = tmp_path / "ran"
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps(_Trap(marker), protocol=2))
    with pytest.raises(RagkitError, match="pickled objects"):
        load_encoder(str(folder))
    assert not marker.exists()


def test_pickled_bm25_arrays_are_refused(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    trapped = np.empty(1, dtype=object)
    trapped[0] = _Trap(marker)
    saved = tmp_path / "trap.npy"
    np.save(saved, trapped, allow_pickle=True)
    SparseIndex.build([(1, "a b")]).save(tmp_path / "bm25")
    for target in (tmp_path / "bm25").glob("*.npy"):
        shutil.copy(saved, target)  # every array of the folder replaced by the trap
    with pytest.raises(RagkitError, match="BM25 index unreadable"):
        SparseIndex.load(tmp_path / "bm25")
    assert not marker.exists()


def test_pickled_tokenizer_file_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    (tmp_path / "xx.model").write_bytes(pickle.dumps(_Trap(marker), protocol=2))
    with pytest.raises(RagkitError, match="cannot load SentencePiece model"):
        load(tmp_path / "xx.model", "xx")
    assert not marker.exists()
