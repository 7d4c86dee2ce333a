"""Tessera: emulate accelerator and GPGPU instruction sets through plugins.

The core knows no ISA.  Architectures and tools arrive as plugins registered under
the ``tessera`` entry-point group; see ``docs/hooks.md`` and ``docs/architecture.md``.
"""

from typing import Any

from tessera.version import PLUGIN_API_VERSION, SUPPORTED_API_VERSIONS, __version__

__all__ = ["__version__", "PLUGIN_API_VERSION", "SUPPORTED_API_VERSIONS", "hookimpl"]


def __getattr__(name: str) -> Any:
    """``tessera.hookimpl``, the decorator for hook implementations
    (``@tessera.hookimpl def tessera_architectures(): ...``), made on first use: pluggy
    (and the package metadata machinery it imports) is not needed by ``tessera --version``."""
    if name != "hookimpl":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import pluggy

    marker = globals()["hookimpl"] = pluggy.HookimplMarker("tessera")
    return marker
