"""The tests' and benchmarks' vLLM server: ``camab serve``'s server (:mod:`camab_cli.serve`
holds the launch the CPU build needs), plus one server shared by several test sessions.

``scripts/run_tests.sh`` starts one with ``camab serve`` and exports its port as
``CAMAB_TEST_VLLM_PORT``; then every :class:`VLLMServer` created without a ``port`` uses
that server (waiting for its health) instead of starting its own, and leaves it running.
A server started here logs to ``.pytest_cache/vllm.log``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, TypeVar

from camab_cli import serve
from camab_cli.serve import free_port, vllm_missing_reason

__all__ = ["VLLMServer", "free_port", "require_vllm", "smollm2_dir", "vllm_missing_reason"]

REPO = Path(__file__).resolve().parent.parent
EXTERNAL_PORT_ENV = "CAMAB_TEST_VLLM_PORT"


Shared = TypeVar("Shared", bound="VLLMServer")


class VLLMServer(serve.VLLMServer):
    """:class:`camab_cli.serve.VLLMServer` on 127.0.0.1, or, with ``CAMAB_TEST_VLLM_PORT``
    set and no ``port`` given, the server already running there (never stopped here)."""

    def __init__(
        self,
        model_dir: str | os.PathLike[str],
        name: str = "smollm2",
        *,
        port: int | None = None,
        **options: Any,
    ) -> None:
        external = os.environ.get(EXTERNAL_PORT_ENV)
        self.external = port is None and bool(external)
        options.setdefault("log_path", REPO / ".pytest_cache" / "vllm.log")
        super().__init__(
            model_dir, name, port=int(str(external)) if self.external else port, **options
        )

    def start(self: Shared) -> Shared:
        if not self.external:
            return super().start()
        began = time.monotonic()
        while time.monotonic() < began + self.startup_timeout:
            if self.healthy():
                return self
            time.sleep(1.0)
        raise RuntimeError(
            f"{EXTERNAL_PORT_ENV}={self.port}: no healthy server on 127.0.0.1:{self.port}"
        )

    def stop(self, timeout: float = 30.0) -> None:
        if not self.external:
            super().stop(timeout)


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
