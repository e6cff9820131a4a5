"""``camab serve`` checks the port, the host and the key before it starts (issue 50, 6/8).

vLLM is never started here: a fake vLLM environment (``fake_vllm_api_server.py`` as
``vllm.entrypoints.openai.api_server``, run by a link to this interpreter) stands in for
it, so the real command launches a small server that binds the port, answers ``/health``
and, like vLLM, requires ``VLLM_API_KEY`` when set. Ports are taken for real on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from camab_cli.cli import main
from camab_cli.serve import STAMP_FILE, VLLMServer, free_port
from camab_cli.serve_checks import PortInUseError, is_loopback

KEY = "serve-KEY-3b8f0a"
KEY_ENV = "CAMAB_TEST_SERVE_KEY"
HERE = Path(__file__).resolve().parent


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    """A vLLM environment whose "vLLM" is ``fake_vllm_api_server.py``."""
    root = tmp_path / "fake-vllm-venv"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "python").symlink_to(sys.executable)
    (root / STAMP_FILE).write_text("fake\n", encoding="utf-8")
    package = root / "vllm" / "entrypoints" / "openai"
    package.mkdir(parents=True)
    for folder in (root / "vllm", root / "vllm" / "entrypoints", package):
        (folder / "__init__.py").write_text("", encoding="utf-8")
    source = (HERE / "fake_vllm_api_server.py").read_text(encoding="utf-8")
    (package / "api_server.py").write_text(source, encoding="utf-8")
    return root


@pytest.fixture
def model(tmp_path: Path) -> Path:
    folder = tmp_path / "tiny-model"
    folder.mkdir()
    (folder / "config.json").write_text("{}", encoding="utf-8")
    return folder


def launched(venv: Path) -> dict[str, Any] | None:
    """What the fake vLLM was started with, or ``None`` if it never was."""
    path = venv / "launched.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


class Health(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture(params=["answers /health", "silent"])
def taken(request: pytest.FixtureRequest) -> Iterator[tuple[int, str]]:
    """A port on 127.0.0.1 held by another process: an HTTP server that answers
    ``/health`` (another camab serve, say), or a socket that only listens."""
    if request.param == "silent":
        with socket.socket() as holder:
            holder.bind(("127.0.0.1", 0))
            holder.listen()
            yield holder.getsockname()[1], request.param
        return
    server = ThreadingHTTPServer(("127.0.0.1", 0), Health)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], request.param
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def serve_args(model: Path, venv: Path, port: int, *more: str) -> list[str]:
    log = str(venv / "server.log")
    arguments = ["serve", "--model", str(model), "--venv", str(venv), "--no-install"]
    return [*arguments, "--port", str(port), "--log", log, *more]


def test_a_taken_port_is_refused_before_anything_starts(
    taken: tuple[int, str], model: Path, venv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On main, with a holder that answers /health, the command printed the holder's URL
    on stdout as its own and failed later; with a silent one, vLLM's traceback."""
    port, holder = taken
    assert main(serve_args(model, venv, port)) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert f"port {port} on 127.0.0.1 is already in use" in err and "--port 0" in err
    assert ("answers /health" in err) == (holder == "answers /health")
    assert launched(venv) is None and not (venv / "server.log").exists()


def test_the_port_is_checked_again_at_launch(
    taken: tuple[int, str], model: Path, venv: Path
) -> None:
    """The library's own start (tests, benchmarks) checks too, right before the launch."""
    server = VLLMServer(model, "tiny", port=taken[0], venv=venv, log_path=venv / "server.log")
    with pytest.raises(PortInUseError, match=f"port {taken[0]} "):
        server.start()
    assert server.process is None and launched(venv) is None


def test_a_host_other_machines_reach_needs_allow_remote(
    model: Path, venv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as holder:  # keeps the run from starting once allowed
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        assert main(serve_args(model, venv, port, "--host", "0.0.0.0")) == 2
        out, err = capsys.readouterr()
        assert out == "" and "--allow-remote" in err and "warning" not in err
        allowed = serve_args(model, venv, port, "--host", "0.0.0.0", "--allow-remote")
        assert main(allowed) == 1  # allowed, warned, then 0.0.0.0:port is taken too
        out, err = capsys.readouterr()
        assert out == ""
        assert "warning: --host '0.0.0.0' lets other machines reach the server" in err
        assert "--api-key-env NAME requires one" in err
        assert f"port {port} on 0.0.0.0 is already in use" in err
    assert launched(venv) is None


def test_which_hosts_are_loopback() -> None:
    assert all(map(is_loopback, ["127.0.0.1", "127.0.0.2", "::1", "localhost"]))
    assert not any(map(is_loopback, ["0.0.0.0", "::", "", "192.0.2.1"]))


def test_a_key_variable_that_is_not_set_is_refused(
    model: Path, venv: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    assert main(serve_args(model, venv, 0, "--api-key-env", KEY_ENV)) == 2
    assert f"--api-key-env {KEY_ENV}: the variable is not set" in capsys.readouterr().err
    assert launched(venv) is None


def test_a_callers_vllm_api_key_is_not_passed_on(
    model: Path, venv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without ``api_key`` the server requires none, whatever the caller's environment."""
    monkeypatch.setenv("VLLM_API_KEY", "inherited-key")
    assert "VLLM_API_KEY" not in VLLMServer(model, venv=venv).environment()
    with_key = VLLMServer(model, venv=venv, api_key=KEY)
    assert with_key.environment()["VLLM_API_KEY"] == KEY and KEY not in with_key.command()


def get(url: str, key: str | None = None) -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"} if key else {})
    try:
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def test_serve_requires_the_named_key_and_never_prints_it(
    model: Path, venv: Path, tmp_path: Path
) -> None:
    """The real command, launching the fake vLLM: it prints its URL once healthy, the
    server refuses a request without the key, the key is in vLLM's environment only (not
    its command line, not stdout or stderr), and Ctrl-C stops it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "camab_cli.cli", *serve_args(model, venv, port)]
    command += ["--api-key-env", KEY_ENV]
    environment = {**os.environ, KEY_ENV: KEY}
    with open(tmp_path / "stderr", "wb") as stderr:
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=stderr, text=True, env=environment
        )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # printed once healthy ("" if the command died)
        assert line == f"http://127.0.0.1:{port}/v1\n", (tmp_path / "stderr").read_text()
        models = f"http://127.0.0.1:{port}/v1/models"
        assert (get(models), get(models, "wrong-key"), get(models, KEY)) == (401, 401, 200)
        process.send_signal(signal.SIGINT)
        assert process.wait(30) == 0
        out = line + process.stdout.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    err = (tmp_path / "stderr").read_text(encoding="utf-8")
    started = launched(venv)
    assert started is not None and started["key"] == KEY
    assert KEY not in " ".join(started["argv"])
    assert KEY not in out and KEY not in err
    assert f"--api-key-env {KEY_ENV}" in err and f"os.environ[{KEY_ENV!r}]" in err
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_an_ipv6_loopback_host_is_served_and_checked(
    model: Path, venv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--host ::1`` needs no --allow-remote, gets a free port (on main ``--port 0`` was
    a raw gaierror: the free port was looked for on IPv4), and its taken port is found."""
    if not socket.has_ipv6:
        pytest.skip("no IPv6 here")
    with socket.socket(socket.AF_INET6) as holder:
        try:
            holder.bind(("::1", 0))
        except OSError:
            pytest.skip("no IPv6 loopback here")
        holder.listen()
        port = holder.getsockname()[1]
        assert main(serve_args(model, venv, port, "--host", "::1")) == 1
        assert f"port {port} on ::1 is already in use" in capsys.readouterr().err
    assert free_port("::1") > 0


def test_a_log_the_caller_names_is_appended_to_never_replaced(
    model: Path, venv: Path, tmp_path: Path
) -> None:
    """On main ``--log FILE`` truncated FILE, whatever it held."""
    log = tmp_path / "my-notes.log"
    log.write_text("my own notes\n", encoding="utf-8")
    server = VLLMServer(model, "tiny", port=free_port(), venv=venv, log_path=log)
    try:
        server.start()
        deadline = time.monotonic() + 10
        while "fake vLLM" not in server.log_tail() and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        server.stop()
    assert log.read_text(encoding="utf-8").startswith("my own notes\nfake vLLM serving tiny")
    assert server.log_tail() == "fake vLLM serving tiny"  # this start's lines only
