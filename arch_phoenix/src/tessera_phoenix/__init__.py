"""Tessera architecture plugin for Robert Finch's rfPhoenix GPGPU core.

See ``docs/phoenix.md`` for what is implemented and the configuration keys,
``docs/phoenix-assembly.md`` for the assembly syntax and ``docs/phoenix-decisions.md``
for every choice the specification leaves open.
"""

from tessera_phoenix.causes import name as cause_name

__all__ = ["cause_name"]
