"""Tessera: emulate accelerator and GPGPU instruction sets through plugins.

The core knows no ISA.  Architectures and tools arrive as plugins registered under
the ``tessera`` entry-point group; see ``docs/hooks.md`` and ``docs/architecture.md``.
"""

import pluggy

from tessera.version import PLUGIN_API_VERSION, SUPPORTED_API_VERSIONS, __version__

#: Decorator for hook implementations: ``@tessera.hookimpl def tessera_architectures(): ...``
hookimpl = pluggy.HookimplMarker("tessera")

__all__ = ["__version__", "PLUGIN_API_VERSION", "SUPPORTED_API_VERSIONS", "hookimpl"]
