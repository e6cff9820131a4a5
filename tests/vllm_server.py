"""The tests' vLLM server, started with the README's one command (``camab serve``), plus
one server shared by several test sessions.

``scripts/run_tests.sh`` starts one with ``camab serve`` and exports its port as
``CAMAB_TEST_VLLM_PORT``; then every :class:`VLLMServer` created without a ``port`` uses
that server (waiting for its health) instead of starting its own, and leaves it running.
A server started here runs ``camab serve`` (the command the tools install) in a child
process and logs to ``.pytest_cache/vllm.log``; the core's tests never import the tools.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

__all__ = [
    "VLLMServer",
    "free_port",
    "require_vllm",
    "smollm2_dir",
    "smollm2_server",
    "vllm_missing_reason",
]

REPO = Path(__file__).resolve().parent.parent
EXTERNAL_PORT_ENV = "CAMAB_TEST_VLLM_PORT"


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def camab_command() -> str | None:
    """The ``camab`` command beside this interpreter (or on ``PATH``), if installed."""
    beside = Path(sys.executable).parent / "camab"
    return str(beside) if beside.exists() else shutil.which("camab")


def vllm_missing_reason() -> str | None:
    """Why no vLLM server can be started here, or ``None`` if ``camab serve`` can."""
    if camab_command() is None:
        return "no camab command: install tools/camab-cli (scripts/setup.sh test)"
    venv = Path(os.environ.get("CAMAB_VLLM_VENV") or REPO / ".venv-vllm")
    if not (venv / "bin" / "python").exists():
        return f"{venv} does not exist: run scripts/setup_vllm.sh (about 2 minutes, 3.4 GB)"
    return None


class VLLMServer:
    """vLLM's OpenAI-compatible server for ``model_dir`` as ``name`` on 127.0.0.1, run by
    ``camab serve``; or, with ``CAMAB_TEST_VLLM_PORT`` set and no ``port`` given, the
    server already running there (never stopped here). Use as a context manager."""

    def __init__(
        self,
        model_dir: str | os.PathLike[str],
        name: str = "smollm2",
        *,
        port: int | None = None,
        startup_timeout: float = 600.0,
    ) -> None:
        external = os.environ.get(EXTERNAL_PORT_ENV)
        self.external = port is None and bool(external)
        self.model_dir = Path(model_dir).absolute()
        self.name = name
        self.port = int(str(external)) if self.external else port or free_port()
        self.startup_timeout = startup_timeout
        self.log_path = REPO / ".pytest_cache" / "vllm.log"
        self.errors_path = REPO / ".pytest_cache" / f"camab-serve-{self.port}.err"
        self.process: subprocess.Popen[bytes] | None = None
        self.startup_seconds: float | None = None

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (``.../v1``)."""
        return f"{self.root_url}/v1"

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.root_url}/health", timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def start(self) -> VLLMServer:
        """Start ``camab serve`` (unless external) and wait until ``/health`` answers."""
        began = time.monotonic()
        if not self.external:
            command = camab_command()
            if command is None:
                raise RuntimeError(str(vllm_missing_reason()))
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            argv = [command, "serve", "--model", str(self.model_dir), "--name", self.name]
            argv += ["--port", str(self.port), "--no-install", "--log", str(self.log_path)]
            with self.errors_path.open("wb") as errors:
                self.process = subprocess.Popen(
                    argv, stdout=subprocess.DEVNULL, stderr=errors, start_new_session=True
                )
        while time.monotonic() < began + self.startup_timeout:
            if self.process is not None and self.process.poll() is not None:
                error = self.errors_path.read_text(encoding="utf-8", errors="replace")
                raise RuntimeError(f"camab serve exited with {self.process.returncode}: {error}")
            if self.healthy():
                self.startup_seconds = time.monotonic() - began
                return self
            time.sleep(1.0)
        self.stop()
        raise RuntimeError(f"no healthy server on {self.root_url} after {self.startup_timeout} s")

    def stop(self, timeout: float = 60.0) -> None:
        """Stop ``camab serve`` (SIGTERM: it stops vLLM), never an external server."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)

    def __enter__(self) -> VLLMServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def require_vllm() -> None:
    """Skip the calling test when no vLLM server can be started here (``CAMAB_SKIP_VLLM=1``
    or no ``.venv-vllm``), except in CI (``CI`` set), where a missing server environment is
    a failure."""
    import pytest

    if os.environ.get("CAMAB_SKIP_VLLM") == "1":
        pytest.skip("CAMAB_SKIP_VLLM=1: no vLLM server environment wanted")
    reason = vllm_missing_reason()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs the vLLM server environment: {reason}")
        pytest.skip(reason)


def smollm2_dir() -> Path:
    """The embedded SmolLM2 model as a transformers directory (converted once, cached)."""
    from camab_rag.scorers.models import ensure_model

    return ensure_model("smollm2")


def smollm2_server() -> VLLMServer:
    """The embedded SmolLM2 served as ``smollm2``: the shared server ``run_tests.sh`` started
    (``CAMAB_TEST_VLLM_PORT``), else a new one (skipped without vLLM, except in CI). Use as a
    context manager: it waits for ``/health`` either way."""
    if not os.environ.get(EXTERNAL_PORT_ENV):
        require_vllm()
    return VLLMServer(smollm2_dir(), "smollm2")
