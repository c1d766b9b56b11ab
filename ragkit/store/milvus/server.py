"""A local Milvus gRPC endpoint for tests and benchmarks: ``milvus-lite server`` on a free
127.0.0.1 port, started and stopped as a context manager.

Clients reach it as they reach Milvus Standalone (``milvus://127.0.0.1:PORT/COLLECTION``), from
any number of processes, which an embedded ``milvus-lite://`` file does not allow.

Example:
    >>> with LiteServer(Path("/tmp/milvus-data")) as address:  # doctest: +SKIP
    ...     Index.open(f"milvus://{address}/docs", create=True)
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

from ragkit.errors import RagkitError

__all__ = ["LiteServer", "free_port"]

START_SECONDS = 60.0


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def executable() -> str:
    """The ``milvus-lite`` command beside this Python, else on ``PATH``."""
    beside = Path(sys.executable).parent / "milvus-lite"
    found = str(beside) if beside.exists() else shutil.which("milvus-lite")
    if found is None:
        raise RagkitError("milvus-lite is not installed: pip install 'ragkit-pipeline[milvus]'")
    return found


class LiteServer:
    """``milvus-lite server`` keeping its data in ``data``; entering yields ``HOST:PORT``."""

    def __init__(self, data: Path, port: int | None = None) -> None:
        self.data = data
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def __enter__(self) -> str:
        self.data.mkdir(parents=True, exist_ok=True)
        log = (self.data / "server.log").open("wb")
        command = [executable(), "server", "--data-dir", str(self.data / "db")]
        command += ["--host", "127.0.0.1", "--port", str(self.port)]
        self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + START_SECONDS
        while True:
            with socket.socket() as client:
                if client.connect_ex(("127.0.0.1", self.port)) == 0:
                    return self.address
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                output = (self.data / "server.log").read_text(errors="replace")[-2000:]
                raise RagkitError(f"milvus-lite server did not start on {self.address}: {output}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()
