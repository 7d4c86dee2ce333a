"""Version numbers: the package's and the plugin API's.

``PLUGIN_API_VERSION`` changes only when the hook contract (hookspecs, the records in
``tessera.isa``, the agent/memory API semantics rely on) changes incompatibly.  A
plugin declares the version it targets as ``TESSERA_API_VERSION``; the host refuses
one it does not support, naming it.
"""

__version__ = "0.1.0"
PLUGIN_API_VERSION = 1
SUPPORTED_API_VERSIONS = frozenset({1})
