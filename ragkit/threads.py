"""ragkit's thread policy: OpenMP threads that sleep when idle, and a deliberate thread count.

On a machine shared with other processes, OpenMP threads spinning at barriers (torch, faiss)
made a warm hybrid search about 40x slower (500 ms against 13 ms). torch, faiss and the BLAS
libraries read these variables once, when they load, so ``import ragkit`` applies the policy
(:func:`apply_thread_policy`) before any of them is imported through ragkit:

- ``OMP_WAIT_POLICY=PASSIVE``: idle threads sleep instead of spinning.
- ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``: the thread count.
- ``TOKENIZERS_PARALLELISM=false``: no tokenizer thread pool beside torch's.

A variable the user set is kept. The one knob is ``RAGKIT_THREADS``: the number of threads
for torch, faiss and BLAS; it wins over the variables above. Without it the count is
``OMP_NUM_THREADS`` when set, else the CPUs this process may use, at most
:data:`MAX_DEFAULT_THREADS`.

Example:
    >>> thread_environment({}, cpus=2)["OMP_WAIT_POLICY"]
    'PASSIVE'
    >>> thread_environment({"OMP_WAIT_POLICY": "ACTIVE"}, cpus=2).get("OMP_WAIT_POLICY")
    >>> thread_environment({"RAGKIT_THREADS": "3"}, cpus=16)["OMP_NUM_THREADS"]
    '3'
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from ragkit.environment import read
from ragkit.errors import RagkitError

THREADS_VARIABLE = "RAGKIT_THREADS"
MAX_DEFAULT_THREADS = 8
COUNT_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
POLICY = {"OMP_WAIT_POLICY": "PASSIVE", "TOKENIZERS_PARALLELISM": "false"}


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the platform has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def thread_count(env: Mapping[str, str], cpus: int | None = None) -> int:
    """The thread count ragkit uses: ``RAGKIT_THREADS``, else ``OMP_NUM_THREADS``, else the
    available CPUs up to :data:`MAX_DEFAULT_THREADS`.

    Example:
        >>> thread_count({"OMP_NUM_THREADS": "2"}, cpus=16), thread_count({}, cpus=32)
        (2, 8)
    """
    chosen = read("threads", env)
    if chosen is not None:
        return chosen
    value = env.get("OMP_NUM_THREADS", "").strip()
    if value:
        if not value.isdigit() or int(value) < 1:
            raise RagkitError(f"OMP_NUM_THREADS={value!r}: give a whole number of threads, e.g. 4")
        return int(value)
    return max(1, min(cpus or available_cpus(), MAX_DEFAULT_THREADS))


def thread_environment(env: Mapping[str, str], cpus: int | None = None) -> dict[str, str]:
    """The variables to add to ``env``: the policy's, except those the user set (the count
    variables are replaced when ``RAGKIT_THREADS`` is set)."""
    count = str(thread_count(env, cpus))
    forced = bool(env.get(THREADS_VARIABLE, "").strip())
    wanted = POLICY | dict.fromkeys(COUNT_VARIABLES, count)
    return {
        name: value
        for name, value in wanted.items()
        if name not in env or (forced and name in COUNT_VARIABLES)
    }


def apply_thread_policy() -> None:
    """Set the policy in ``os.environ``; when torch or faiss are already loaded (imported
    before ragkit), their thread count follows ``RAGKIT_THREADS`` too (the waiting policy
    cannot change once OpenMP has started)."""
    os.environ.update(thread_environment(os.environ))
    if not os.environ.get(THREADS_VARIABLE, "").strip():
        return
    count = thread_count(os.environ)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(count)
    if "faiss" in sys.modules:
        sys.modules["faiss"].omp_set_num_threads(count)
