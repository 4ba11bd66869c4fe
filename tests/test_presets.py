"""The preset registry (embed/presets.py): every command reads the same list, and a preset
added to it is loaded, checked, downloaded and recognised by its vectors without other edits."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from markdown_memory import config
from markdown_memory.embed import base, download, presets
from markdown_memory.errors import ConfigError


def test_every_preset_module_implements_the_preset_operations():
    for preset in presets.PRESETS.values():
        module = preset.implementation()
        for name in ("load", "expected_weights_id", "problem", "download_summary"):
            assert callable(getattr(module, name, None)), f"{preset.module}.{name}"


def test_the_embedder_choices_are_the_registry_then_none(tmp_path):
    assert config.EMBEDDER_CHOICES == (*presets.PRESETS, "none")
    assert config.DEFAULT_EMBEDDER in presets.PRESETS
    with pytest.raises(ConfigError) as caught:
        config.Settings.load(tmp_path, tmp_path / "x.db", "not-a-preset")
    assert ", ".join(presets.PRESETS) in str(caught.value)


def test_vectors_are_traced_back_to_the_preset_that_made_them(minilm):
    assert presets.preset_of_weights_id(minilm.weights_id) == "minilm"
    assert base.expected_weights_id("minilm") in (minilm.weights_id, None)
    assert presets.preset_of_weights_id("another-model:abc") is None
    assert base.expected_weights_id("unknown") is None and base.model_problem("unknown") is None


def test_ranking_traits_of_no_preset_are_the_defaults():
    assert not presets.is_multilingual(None) and not presets.is_multilingual("none")
    assert presets.vector_bar(None) == presets.vector_bar("none") == presets.DEFAULT_VECTOR_BAR
    assert presets.is_multilingual("multilingual-e5") and not presets.is_multilingual("minilm")


class _Tiny:
    name = "tiny"
    dimension = 2
    weights_id = "tiny-v1:0"

    def document_text(self, title: str, text: str) -> str:
        return text

    def embed_texts(self, texts):
        return np.ones((len(texts), 2), dtype=np.float32) / np.sqrt(2)

    def embed_query(self, query: str):
        return self.embed_texts([query])[0]


def test_a_registered_preset_needs_no_other_edit(monkeypatch):
    module = types.ModuleType("markdown_memory.embed.tiny")
    module.load = lambda threads: _Tiny()
    module.expected_weights_id = lambda: "tiny-v1:0"
    module.problem = lambda: "the tiny model is missing"
    module.download_summary = lambda manifest, endpoint: "tiny: verified"
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(presets.PRESETS, "tiny", presets.Preset("tiny", "tiny", "tiny-", multilingual=True,
                                                                vector_bar=0.6))
    assert isinstance(base.get_embedder("tiny"), base.Embedder)
    assert base.expected_weights_id("tiny") == "tiny-v1:0"
    assert base.model_problem("tiny") == "the tiny model is missing"
    assert download.download_model("tiny") == "tiny: verified"
    assert presets.preset_of_weights_id("tiny-v1:0") == "tiny"
    assert presets.is_multilingual("tiny") and presets.vector_bar("tiny") == 0.6


def test_batches_are_ordered_by_tokens_only_for_embedders_that_pad(minilm):
    texts = ["a much longer text than the other one", "short"]
    assert base.batch_order_lengths(_Tiny(), texts) == [len(t) for t in texts]
    assert base.batch_order_lengths(minilm, texts) == minilm.sort_lengths(texts)


def test_an_unknown_preset_is_refused():
    with pytest.raises(ValueError):
        base.get_embedder("not-a-preset")
    with pytest.raises(ValueError):
        download.download_model("not-a-preset")
