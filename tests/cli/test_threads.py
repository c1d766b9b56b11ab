"""The thread policy ragkit applies on import (ragkit.threads), checked in fresh processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ragkit.errors import RagkitError
from ragkit.threads import thread_count, thread_environment

PROBE = """
import json, os
{before}
import ragkit, torch, faiss
names = ["OMP_WAIT_POLICY", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "TOKENIZERS_PARALLELISM"]
seen = {{name: os.environ.get(name) for name in names}}
print(json.dumps(seen | {{"torch": torch.get_num_threads(), "faiss": faiss.omp_get_max_threads()}}))
"""
MANAGED = ("OMP_WAIT_POLICY", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def probe(before: str = "", **env: str) -> dict[str, object]:
    """What a fresh process sees after ``import ragkit`` with ``env`` on top of a clean one."""
    clean = {k: v for k, v in os.environ.items() if k not in (*MANAGED, "RAGKIT_THREADS")}
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(before=before)],
        env=clean | env,
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(result.stdout.splitlines()[-1]))


def test_import_sets_passive_waiting_and_a_thread_count() -> None:
    seen = probe()
    assert seen["OMP_WAIT_POLICY"] == "PASSIVE"
    assert seen["TOKENIZERS_PARALLELISM"] == "false"
    assert seen["OMP_NUM_THREADS"] == seen["MKL_NUM_THREADS"] == str(seen["torch"])
    assert seen["faiss"] == seen["torch"]


def test_users_environment_is_kept() -> None:
    seen = probe(OMP_WAIT_POLICY="ACTIVE", OMP_NUM_THREADS="1")
    assert seen["OMP_WAIT_POLICY"] == "ACTIVE"
    assert (seen["OMP_NUM_THREADS"], seen["MKL_NUM_THREADS"], seen["torch"]) == ("1", "1", 1)


def test_ragkit_threads_sets_the_count_even_after_torch_loaded() -> None:
    assert probe(RAGKIT_THREADS="1", OMP_NUM_THREADS="2")["torch"] == 1
    seen = probe(before="import torch, faiss; torch.set_num_threads(2)", RAGKIT_THREADS="1")
    assert (seen["torch"], seen["faiss"]) == (1, 1)


def test_default_count_is_capped() -> None:
    assert thread_count({}, cpus=64) == 8
    assert thread_environment({"MKL_NUM_THREADS": "5"}, cpus=2)["OMP_NUM_THREADS"] == "2"
    assert "MKL_NUM_THREADS" not in thread_environment({"MKL_NUM_THREADS": "5"}, cpus=2)


@pytest.mark.parametrize("value", ["0", "four", "-2"])
def test_a_bad_count_names_the_variable(value: str) -> None:
    with pytest.raises(RagkitError, match="RAGKIT_THREADS"):
        thread_count({"RAGKIT_THREADS": value})
