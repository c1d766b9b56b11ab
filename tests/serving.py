"""``ragkit serve`` started as its own process for a test, and stopped after it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def served(*indexes: str, start_seconds: float = 120) -> Iterator[httpx.Client]:
    """A client of ``ragkit serve INDEXES...`` on a free port, once ``/health`` answers."""
    port = free_port()
    command = [str(Path(sys.executable).parent / "ragkit"), "serve", *indexes]
    command += ["--port", str(port), "--log-level", "warning"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60)
    try:
        deadline = time.monotonic() + start_seconds
        while True:
            try:
                if client.get("/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                output = process.stdout.read().decode() if process.stdout else ""
                pytest.fail(f"ragkit serve did not start:\n{output}")
            time.sleep(0.2)
        yield client
    finally:
        client.close()
        process.terminate()
        process.wait(timeout=30)
