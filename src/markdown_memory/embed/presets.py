"""The embedding presets: one registry that config, loading, download, ranking and messages read.

A :class:`Preset` holds what is known about a preset without loading anything (its name, the
prefix of the ``weights_id`` its vectors carry, what ranking needs to know about its vectors)
and names the module under ``embed/`` that implements it (:class:`PresetModule`: load,
expected weights id, presence check, ``--download-model``'s fetch or check; the prompts are that
module's embedder's ``document_text`` / ``embed_query``, part of what its ``weights_id`` pins).

This module imports nothing from the package (no numpy, no onnxruntime): the CLI, the config
and the MCP handshake read it. Adding a preset: write ``embed/<module>.py`` implementing
:class:`PresetModule` and add one :class:`Preset` to :data:`PRESETS`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

if TYPE_CHECKING:  # pragma: no cover
    from .base import Embedder
    from .download import Manifest


class PresetModule(Protocol):
    """What the module of a preset provides (module-level functions)."""

    def load(self, threads: int | None) -> Embedder:
        """Verify and load the preset with ``threads`` onnxruntime threads (None: the default).
        Raises EmbedderUnavailableError whose message says how to fix it; never downloads."""
        ...

    def expected_weights_id(self) -> str | None:
        """The ``weights_id`` :meth:`load` would return, when known without loading (a few
        stats, small reads); None when only a load can tell."""
        ...

    def problem(self) -> str | None:
        """Why the preset cannot load, from its files' presence only (a few stats), with the
        fix; None when its files are in place."""
        ...

    def download_summary(self, manifest: Manifest | None, endpoint: str | None) -> str:
        """Fetch (when the preset downloads) or verify, and load; one paragraph for
        ``--download-model``. ``manifest``/``endpoint`` replace the pinned ones (tests).
        Raises ModelDownloadError, EmbedderUnavailableError."""
        ...


@dataclass(frozen=True)
class Preset:
    """One embedding preset.

    ``name``: what ``--embedder`` / ``MARKDOWN_MEMORY_EMBEDDER`` say; ``module``: the module of
    ``embed/`` implementing :class:`PresetModule`; ``weights_prefix``: every ``weights_id`` of
    its vectors starts with it (how a stored index tells which preset made it);
    ``multilingual``: its vectors understand queries in other languages than English, CJK
    included (ranking keeps vectors for them); ``vector_bar``: the cosine a vector hit must
    reach to count as a confident answer (ranking).
    """

    name: str
    module: str
    weights_prefix: str
    multilingual: bool = False
    vector_bar: float = 0.5

    def implementation(self) -> PresetModule:
        """The preset's module, imported on first use (it brings numpy and onnxruntime)."""
        return cast(PresetModule, importlib.import_module(f"{__package__}.{self.module}"))


#: Every preset by name, in the order ``--embedder`` lists them (``none`` follows: no preset).
PRESETS: dict[str, Preset] = {p.name: p for p in (
    Preset("embeddinggemma", "gemma", "embeddinggemma-", multilingual=True),
    Preset("minilm", "minilm", "minilm-"),
    Preset("multilingual-e5", "e5", "multilingual-e5-", multilingual=True),
)}
#: The preset used when none is named and the index holds no other preset's vectors.
DEFAULT_PRESET = "embeddinggemma"
#: The preset that needs no download (its model ships with its Python extra): what a user
#: without the default's model is pointed to.
NO_DOWNLOAD_PRESET = "minilm"
#: The ``--embedder`` value for keyword-only search (no preset, no vectors).
NO_EMBEDDER = "none"
#: ``--embedder`` choices: every preset, then ``none``.
EMBEDDER_CHOICES: tuple[str, ...] = (*PRESETS, NO_EMBEDDER)
#: The vector bar when no preset made the query vector (ranking's default).
DEFAULT_VECTOR_BAR = 0.5


def preset(name: str) -> Preset:
    """The preset called ``name``. Raises ValueError for an unknown name."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown embedder preset {name!r}") from None


def preset_of_weights_id(weights_id: str) -> str | None:
    """The name of the preset whose vectors carry ``weights_id``, from its prefix; None for an
    id no preset writes."""
    return next((p.name for p in PRESETS.values() if weights_id.startswith(p.weights_prefix)), None)


def is_multilingual(name: str | None) -> bool:
    """True when preset ``name`` (None, ``none`` or unknown: no) has multilingual vectors."""
    found = PRESETS.get(name or "")
    return found is not None and found.multilingual


def vector_bar(name: str | None) -> float:
    """Preset ``name``'s vector bar; :data:`DEFAULT_VECTOR_BAR` for None or an unknown name."""
    found = PRESETS.get(name or "")
    return found.vector_bar if found is not None else DEFAULT_VECTOR_BAR
