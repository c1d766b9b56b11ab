"""The scheduled ingest against a real `prefect server start` (slow: a server, a runner and a
flow-run process start here)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import MODEL
from ragkit import Index


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_healthy(url: str, server: subprocess.Popen, log: Path, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert server.poll() is None, log.read_text()[-3000:]
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(1)
    raise AssertionError(
        f"prefect server not healthy after {timeout} s:\n{log.read_text()[-3000:]}"
    )


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM the process group started for ``process`` (by its PID), then SIGKILL."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


@pytest.mark.slow
def test_served_deployment_runs_on_a_real_server(tmp_path: Path, corpus: Path) -> None:
    from prefect.client.orchestration import get_client
    from prefect.deployments import run_deployment
    from prefect.exceptions import ObjectNotFound
    from prefect.settings import PREFECT_API_URL, temporary_settings

    port = _free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = {
        **os.environ,
        "PREFECT_HOME": str(tmp_path / "prefect-home"),
        "PREFECT_API_URL": api,
        "PREFECT_RUNNER_POLL_FREQUENCY": "2",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_UI_ENABLED": "false",
    }
    bin_dir = Path(sys.executable).parent
    server_log, serve_log = tmp_path / "server.log", tmp_path / "serve.log"
    prefect = shutil.which("prefect", path=str(bin_dir)) or "prefect"
    server = subprocess.Popen(
        [prefect, "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=server_log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    serve = None
    try:
        _wait_healthy(api, server, server_log)
        index = tmp_path / "index"
        serve = subprocess.Popen(
            [
                str(bin_dir / "ragkit"),
                *("flows", "serve", "--index", str(index), "--watch", str(corpus)),
                *("--cron", "0 2 * * *", "--name", "nightly", "--model", MODEL),
            ],
            env=env,
            cwd=Path(__file__).resolve().parents[2],
            stdout=serve_log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        with temporary_settings({PREFECT_API_URL: api}):
            with get_client(sync_client=True) as client:
                deadline = time.monotonic() + 240
                while True:
                    assert serve.poll() is None, serve_log.read_text()[-3000:]
                    try:
                        deployment = client.read_deployment_by_name("ragkit-ingest/nightly")
                        break
                    except ObjectNotFound:  # not registered yet
                        assert time.monotonic() < deadline, serve_log.read_text()[-3000:]
                        time.sleep(1)
            assert [s.schedule.cron for s in deployment.schedules] == ["0 2 * * *"]
            assert deployment.parameters["paths"] == [str(corpus.resolve())]
            run = run_deployment("ragkit-ingest/nightly", timeout=400, poll_interval=2)
        assert run.state is not None and run.state.is_completed(), serve_log.read_text()[-3000:]
        opened = Index.open(index)
        assert opened.info().documents == 5
        assert opened.search("water boiling", k=1)[0].source.endswith("water.md")
        opened.close()
    finally:
        if serve is not None:
            _stop(serve)
        _stop(server)
    assert server.poll() is not None and serve.poll() is not None
