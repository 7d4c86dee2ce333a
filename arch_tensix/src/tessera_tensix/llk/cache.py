"""Where the downloaded vendor material is kept: one cache directory, never the checkout.

``$TESSERA_CACHE/llk`` when ``TESSERA_CACHE`` is set, else ``~/.cache/tessera/llk``.
Everything under it can be deleted; the next build fetches it again.
"""

from __future__ import annotations

import os
from pathlib import Path

from tessera.errors import ConfigError


def cache_root() -> Path:
    """The llk cache directory (created on first use)."""
    base = os.environ.get("TESSERA_CACHE")
    root = Path(base) / "llk" if base else Path.home() / ".cache" / "tessera" / "llk"
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the llk cache {root}: {exc.strerror or exc} "
                          "(set TESSERA_CACHE to a writable directory)") from None
    return root
