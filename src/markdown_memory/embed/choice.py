"""Which embedding preset a command uses: the one place the choice is made.

1. A preset named by ``--embedder`` or ``MARKDOWN_MEMORY_EMBEDDER`` is used, always (``none``
   too: keyword-only by choice). A registration written by ``setup`` names one.
2. Not named: ``none`` when the last index run named it and the database holds no vectors
   (``meta`` ``named_embedder``: kept like any named preset). Else the preset whose vectors the
   docs root's database already holds, when that preset can load here (its package and model
   files are in place). An index built once with
   ``--embedder minilm`` is searched and refreshed with MiniLM from then on, without the flag.
3. A database without vectors (a new index, or a keyword-only one): the default preset,
   ``embeddinggemma``, when its model is in place; else the installed preset that needs no
   download (MiniLM with its extra), and the answer says once which and how to get the
   default (the next call finds MiniLM's vectors: step 2, quiet); keyword-only only when no
   model can load (the answer says how to fix it).
4. A database whose vectors' model is not installed any more: the default; the stored vectors
   are replaced only by a preset that can load, and the answers say so
   (``messages.other_vectors``).

Only steps 3 (MiniLM instead of the default) and 4 change the preset a user had, so only they
are said in text output without ``--verbose`` (:func:`worth_saying`).

``installed_embedder`` is ``setup``'s variant, which has no database to look at: it registers
the default when its model is present, else MiniLM when its extra is installed (the plan it
prints names the preset, and nothing changes before ``--yes``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from .presets import DEFAULT_PRESET as DEFAULT_EMBEDDER
from .presets import NO_DOWNLOAD_PRESET, NO_EMBEDDER, preset_of_weights_id

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Settings
    from ..messages import OtherVectors


@dataclass(frozen=True)
class Choice:
    """``name``: the preset; ``reason``: why, when it was not named and is not simply the default
    (None otherwise)."""

    name: str
    reason: str | None = None


def usable(preset: str) -> bool:
    """True when ``preset`` can load here, judged from its files' presence (a few stats; see
    ``embed.base.model_problem``); ``none`` is always usable."""
    from .base import model_problem

    return preset == NO_EMBEDDER or model_problem(preset) is None


def choose(named: str | None, stored_weights_id: str | None) -> Choice:
    """The preset (see module docstring): ``named`` by flag or environment, else the one of
    ``stored_weights_id`` (the database's vectors) when usable, else the default."""
    from .. import messages

    if named:
        return Choice(named)
    stored = preset_of_weights_id(stored_weights_id) if stored_weights_id else None
    if stored is None and not stored_weights_id:  # no vectors yet: the best preset that loads
        if usable(DEFAULT_EMBEDDER) or not usable(NO_DOWNLOAD_PRESET):
            return Choice(DEFAULT_EMBEDDER)
        return Choice(NO_DOWNLOAD_PRESET, messages.embedder_instead_of_default(NO_DOWNLOAD_PRESET, DEFAULT_EMBEDDER))
    if stored is None or stored == DEFAULT_EMBEDDER:
        return Choice(DEFAULT_EMBEDDER)
    if usable(stored):
        return Choice(stored, messages.embedder_from_index(stored))
    return Choice(DEFAULT_EMBEDDER, messages.embedder_index_model_missing(stored, DEFAULT_EMBEDDER,
                                                                          usable(DEFAULT_EMBEDDER)))


def worth_saying(name: str, reason: str | None, *, verbose: bool = False) -> bool:
    """True when text output should print the ``embedder: NAME (REASON)`` line: a ``reason``
    that says the preset changed (not simply that the index's own preset was kept), or any
    reason with ``verbose``."""
    from .. import messages

    return bool(reason) and (verbose or reason != messages.embedder_from_index(name))


def resolve(settings: Settings) -> tuple[Settings, str | None]:
    """``settings`` with the preset chosen (``embedder_named`` False: steps 2-3 look at the
    database ``settings.db_path`` without opening it for writing), and the reason to show."""
    if settings.embedder_named:
        return settings, None
    from ..store.peek import stored_named_embedder, stored_weights_id

    weights_id = stored_weights_id(settings.db_path)
    if weights_id is None and stored_named_embedder(settings.db_path) == NO_EMBEDDER:
        return replace(settings, embedder=NO_EMBEDDER, embedder_named=False), None  # kept, as named
    choice = choose(None, weights_id)
    return replace(settings, embedder=choice.name, embedder_named=False), choice.reason


def installed_embedder() -> tuple[str, str | None]:
    """``setup``'s preset when none is named: the default when its model is in place, else
    MiniLM when its extra is installed, else the default with a note saying the model still has
    to be downloaded."""
    from .. import messages_setup

    if usable(DEFAULT_EMBEDDER):
        return DEFAULT_EMBEDDER, None
    if usable(NO_DOWNLOAD_PRESET):
        return NO_DOWNLOAD_PRESET, None
    return DEFAULT_EMBEDDER, messages_setup.setup_model_missing(DEFAULT_EMBEDDER)


def no_download_instead(configured: str) -> str | None:
    """The preset to offer a user whose ``configured`` model is not installed: the one that
    needs no download, when it is another and can load here (a few stats); else None."""
    if configured == NO_DOWNLOAD_PRESET or not usable(NO_DOWNLOAD_PRESET):
        return None
    return NO_DOWNLOAD_PRESET


def other_vectors(configured: str, weights_id: str) -> OtherVectors:
    """The facts ``messages.other_vectors`` words: stored vectors ``weights_id`` that the
    ``configured`` preset did not make (which preset made them; who can load here)."""
    from ..messages import OtherVectors

    maker = preset_of_weights_id(weights_id)
    maker_loads = maker is not None and maker != configured and usable(maker)
    return OtherVectors(weights_id, maker, usable(configured), maker_loads)
