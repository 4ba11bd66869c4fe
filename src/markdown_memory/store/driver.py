"""Which sqlite3-compatible module this process uses, and loading sqlite-vec into a connection.

The stdlib ``sqlite3`` when its connections can load extensions; otherwise the ``sqlean.py``
driver (a maintained sqlite3-compatible build that can); otherwise the stdlib without vectors
(keyword-only, said in every status). ``MARKDOWN_MEMORY_SQLITE_DRIVER=sqlite3|sqlean`` forces
one; ``MARKDOWN_MEMORY_VEC_PATH`` loads sqlite-vec from that file instead of the
``sqlite_vec`` package. sqlite-vec is only touched here (``load_vec``); parsing and FTS never
import it.
"""

from __future__ import annotations

import importlib
import logging
import os
from dataclasses import dataclass
from types import ModuleType
from typing import Any

log = logging.getLogger("markdown_memory.store")


@dataclass
class Driver:
    """The sqlite3-compatible module in use and whether sqlite-vec loaded (``vec_error``: why not)."""

    module: ModuleType
    name: str
    vec_available: bool
    vec_error: str | None


def _driver_candidates() -> list[str]:
    forced = os.environ.get("MARKDOWN_MEMORY_SQLITE_DRIVER", "").strip().lower()
    if forced in ("sqlite3", "sqlean"):
        return [forced]
    return ["sqlite3", "sqlean"]


def _can_load_extensions(module: ModuleType) -> bool:
    conn = module.connect(":memory:")
    try:
        return hasattr(conn, "enable_load_extension")
    finally:
        conn.close()


def load_vec(conn: Any) -> None:
    """Load sqlite-vec into ``conn``; raises whatever the driver raises on failure."""
    override = os.environ.get("MARKDOWN_MEMORY_VEC_PATH")
    conn.enable_load_extension(True)
    try:
        if override:
            conn.load_extension(override)
        else:
            import sqlite_vec

            sqlite_vec.load(conn)
    finally:
        conn.enable_load_extension(False)


_DRIVER: Driver | None = None


def pick_driver() -> Driver:
    """Choose the driver once per process (see module docstring). Never raises."""
    global _DRIVER
    if _DRIVER is not None:
        return _DRIVER
    reasons = []
    for name in _driver_candidates():
        try:
            module = importlib.import_module(name)
        except ImportError:
            reasons.append(f"{name} is not installed")
            continue
        if not _can_load_extensions(module):
            reasons.append(f"this Python's {name} cannot load extensions")
            continue
        probe = module.connect(":memory:")
        try:
            load_vec(probe)
            _DRIVER = Driver(module, name, True, None)
            return _DRIVER
        except Exception as exc:  # any driver's OperationalError, OSError, ImportError
            reasons.append(f"sqlite-vec failed to load with {name}: {exc}")
        finally:
            probe.close()
    import sqlite3

    reason = "; ".join(reasons)
    log.warning(
        "vector search disabled: %s. Install the sqlean.py package (pip install sqlean.py) or use a "
        "Python built with --enable-loadable-sqlite-extensions; keyword search still works.",
        reason,
    )
    _DRIVER = Driver(sqlite3, "sqlite3", False, reason)
    return _DRIVER


def reset_driver_cache() -> None:
    """Forget the chosen driver (tests switch drivers through the environment)."""
    global _DRIVER
    _DRIVER = None
