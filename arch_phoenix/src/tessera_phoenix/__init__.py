"""Tessera architecture plugin for Robert Finch's rfPhoenix GPGPU core.

See ``docs/phoenix.md`` for what is implemented, every choice the specification
leaves open, and the configuration keys.
"""

from tessera_phoenix.causes import name as cause_name

__all__ = ["cause_name"]
