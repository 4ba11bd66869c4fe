"""Who may use the MCP-over-HTTP endpoint and which docs root each URL serves (no web server here:
``setup --http`` imports this without starlette or uvicorn).

Everything lives in the per-user config folder :func:`config_dir`
(``platformdirs.user_config_dir("markdown-memory")``, e.g. ``~/.config/markdown-memory``, or
``$MARKDOWN_MEMORY_CONFIG_DIR``), created 0700; it survives logout and reboot, unlike the
service's runtime folder, so a registered URL and token keep working:

- ``http-token``: the bearer token (``secrets.token_urlsafe(32)``, 43 characters), one line,
  mode 0600, created on first use. A token file that others may read or that another user
  owns is refused (:class:`~markdown_memory.errors.ConfigError` saying how to fix it).
  Delete the file to make a new token (every registration must then be made again).
- ``http-roots.json``: ``{"roots": {"<id>": <Settings.to_wire()>}}``, mode 0600: the docs
  roots ``setup --http`` registered, with the settings the command resolved (embedder, database).

One URL per docs root: ``http://127.0.0.1:PORT/roots/<id>/mcp``, where ``<id>`` is the name
of the root's default index folder, ``<root name>-<12 hex>`` (``config.default_db_path``),
percent-encoded in the URL. The service maps an id back to its settings with :func:`lookup`:
the registry first, else an index folder of that name under ``config.projects_dir()`` whose
database records a docs root with that id (a root indexed at the default location is served
without registering it).
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import re
import secrets
import stat
from pathlib import Path
from urllib.parse import quote

from ..config import Settings, default_db_path
from ..errors import ConfigError
from ..files.private import write_private

log = logging.getLogger("markdown_memory.http")

#: the port ``setup --http`` names when neither ``--http-port`` nor the environment does
DEFAULT_HTTP_PORT = 7761
#: the service's only address: the endpoint never listens beyond this machine
HOST = "127.0.0.1"
TOKEN_FILE = "http-token"
REGISTRY_FILE = "http-roots.json"
#: a docs root id: ``<root name>-<12 lowercase hex>``; the name has no path separator
_ID = re.compile(r"^[^/\\\x00]+-[0-9a-f]{12}$")


def config_dir() -> Path:
    """``$MARKDOWN_MEMORY_CONFIG_DIR``, else ``platformdirs.user_config_dir("markdown-memory")``."""
    custom = os.environ.get("MARKDOWN_MEMORY_CONFIG_DIR", "").strip()
    if custom:
        return Path(os.path.expanduser(custom))
    import platformdirs

    return Path(platformdirs.user_config_dir("markdown-memory"))


def http_port(explicit: int | None = None, default: int | None = DEFAULT_HTTP_PORT) -> int | None:
    """The HTTP port: ``explicit`` (``--http-port``), else ``$MARKDOWN_MEMORY_HTTP_PORT``, else
    ``default``. Raises ConfigError for a value that is not a port number (1-65535)."""
    raw: object = explicit if explicit is not None else (os.environ.get("MARKDOWN_MEMORY_HTTP_PORT", "").strip() or None)
    if raw is None:
        return default
    try:
        port = int(str(raw))
    except ValueError:
        port = -1
    if not 1 <= port <= 65535:
        raise ConfigError(f"the HTTP port (--http-port, MARKDOWN_MEMORY_HTTP_PORT) must be a number from 1 to 65535, "
                          f"got {raw!r}")
    return port


def _private_dir(folder: Path) -> Path:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder


def _check_private(path: Path) -> None:
    """Refuse a secret file another user owns or others may read or write."""
    st = path.stat()
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise ConfigError(f"{path} belongs to another user; remove it (a new one is made on the next use)")
    if stat.S_IMODE(st.st_mode) & 0o077:
        raise ConfigError(f"{path} can be read by other users (mode {stat.S_IMODE(st.st_mode):o}); "
                          f"run `chmod 600 {path}` or delete it (a new token is then made)")


def token_path() -> Path:
    return config_dir() / TOKEN_FILE


def load_token(*, create: bool = True) -> str:
    """The bearer token, made (0600) on first use when ``create``. Raises ConfigError for an
    unsafe or empty token file, or a missing one when not ``create``."""
    path = token_path()
    if create and not path.exists():
        _private_dir(path.parent)
        try:
            write_private(path, secrets.token_urlsafe(32) + "\n", exclusive=True)
            log.info("made the HTTP bearer token in %s", path)
        except FileExistsError:  # another process made it meanwhile: use that one
            pass
    try:
        _check_private(path)
        token = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError as exc:
        raise ConfigError(f"no HTTP token in {path}; run `markdown-memory setup claude-code --http --yes` to make one") from exc
    if len(token) < 16:
        raise ConfigError(f"the HTTP token in {path} is empty or too short; delete the file to make a new one")
    return token


def bearer(authorization: str | None) -> str:
    """The token an ``Authorization`` header value presents as ``Bearer <token>`` (the scheme in
    any case); "" for no header, another scheme or no token."""
    scheme, _, presented = (authorization or "").partition(" ")
    return presented.strip() if scheme.lower() == "bearer" else ""


def token_matches(presented: str, token: str) -> bool:
    """Constant-time comparison of a presented token with the real one."""
    return hmac.compare_digest(presented.encode("utf-8"), token.encode("utf-8"))


def root_id(docs_root: Path) -> str:
    """The id of ``docs_root`` in its URL: its default index folder's name."""
    return default_db_path(docs_root).parent.name


def root_url(port: int, ident: str) -> str:
    """``http://127.0.0.1:PORT/roots/<id>/mcp`` (the id percent-encoded)."""
    return f"http://{HOST}:{port}/roots/{quote(ident, safe='')}/mcp"


def _registry_path(folder: Path | None = None) -> Path:
    return (folder or config_dir()) / REGISTRY_FILE


def _read_registry(folder: Path | None = None) -> dict[str, dict[str, object]]:
    path = _registry_path(folder)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path} cannot be read ({exc}); delete it and run `setup --http` again") from exc
    roots = data.get("roots") if isinstance(data, dict) else None
    return {k: v for k, v in roots.items() if isinstance(v, dict)} if isinstance(roots, dict) else {}


def register(settings: Settings) -> str:
    """Record ``settings`` as the docs root its id serves (replacing an older record); the id."""
    ident = root_id(settings.docs_root)
    roots = _read_registry()
    roots[ident] = settings.to_wire()
    _private_dir(config_dir())
    write_private(_registry_path(), json.dumps({"roots": roots}, indent=2, sort_keys=True) + "\n", exclusive=False)
    return ident


def unregister(idents: list[str]) -> list[str]:
    """Remove ``idents`` from the registry (``setup --http --remove``, ``roots --prune --yes``);
    the ids that were there. Raises ConfigError for a registry that cannot be read."""
    roots = _read_registry()
    gone = [ident for ident in idents if ident in roots]
    if gone:
        for ident in gone:
            del roots[ident]
        write_private(_registry_path(), json.dumps({"roots": roots}, indent=2, sort_keys=True) + "\n",
                       exclusive=False)
    return gone


def registered_gone() -> dict[str, str]:
    """The registered ids whose docs root is no longer a folder: ``{id: docs root}``. Raises
    ConfigError for a registry that cannot be read."""
    found: dict[str, str] = {}
    for ident, wire in _read_registry().items():
        root = str(wire.get("docs_root") or "")
        if not root or not os.path.isdir(root):
            found[ident] = root
    return found


def lookup(ident: str, folder: Path | None = None, projects: Path | None = None) -> Settings | None:
    """The settings of the docs root ``ident`` names (see the module docstring), or None when no
    registered or indexed root has that id, or its docs root no longer exists. ``folder``: the
    config folder (default :func:`config_dir`); ``projects``: the index folders (default
    ``config.projects_dir()``). Opens at most one database (read-only); may raise ConfigError
    for a registry that cannot be read."""
    if not _ID.match(ident):
        return None
    wire = _read_registry(folder).get(ident)
    if wire is not None:
        settings = Settings.from_wire(wire)
        return settings if settings.docs_root.is_dir() and root_id(settings.docs_root) == ident else None
    from ..config import projects_dir
    from ..roots import describe

    index = (projects or projects_dir()) / ident
    entry = describe(index) if (index / "index.db").is_file() else None
    if entry is None or entry.root is None or not os.path.isdir(entry.root):
        return None
    root = Path(entry.root)
    if root_id(root) != ident:
        return None
    return Settings.load(docs_root=root, db=entry.database)
