"""Per-plugin state on a machine: ``machine.ext``, under names the plugins declare.

A board (an architecture's ``build``) or a tool plugin often keeps state of its own
with a machine: rfPhoenix's shared control registers, the tile system, what a RISC-V
program wrote.  It declares that state once, under a name it chooses::

    machine.ext.declare("tile", system)

and finds it again with ``machine.ext["tile"]`` (a ``KeyError`` naming what is
declared when it is not there) or ``machine.ext.get("tile")`` (``None`` on a machine
of another architecture, for a hook that serves several).  A name is declared once:
two plugins choosing the same name is a :class:`~tessera.errors.ConfigError`, not
one silently replacing the other's state.  The values travel with the machine in
snapshots, so they must be picklable state, like the agents.

``machine.<name>`` reads a declared extension too (``machine.tile.races``), which is
why a name must be an identifier, must not start with ``_`` and must not be an
attribute the machine already has.
"""

from __future__ import annotations

import keyword
from collections.abc import Iterator, Mapping
from typing import Any

from tessera.errors import ConfigError

__all__ = ["MachineExtensions"]


class MachineExtensions(Mapping[str, Any]):
    """``name → state`` of the plugins of one machine; a read-only mapping plus :meth:`declare`.

    ``owner`` is the machine: a name its attributes already use is refused, so the
    ``machine.<name>`` shorthand always means the extension.
    """

    def __init__(self, owner: Any = None) -> None:
        self._values: dict[str, Any] = {}
        self._owner = owner

    def declare(self, name: str, value: Any) -> Any:
        """Keep ``value`` under ``name`` (once per machine); returns ``value``."""
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name) \
                or name.startswith("_"):
            raise ConfigError(f"machine extension name {name!r} must be an identifier that does not "
                              "start with '_'")
        if name in self._values:
            raise ConfigError(f"machine extension {name!r} is already declared "
                              f"(holding a {type(self._values[name]).__name__})")
        owner = self._owner
        if owner is not None and (name in vars(owner) or hasattr(type(owner), name)):
            raise ConfigError(f"machine extension name {name!r} is already an attribute of the machine")
        self._values[name] = value
        return value

    def __getitem__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            declared = ", ".join(sorted(self._values)) or "none"
            raise KeyError(f"no machine extension {name!r} is declared (declared: {declared})") from None

    def __contains__(self, name: object) -> bool:
        return name in self._values

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"MachineExtensions({', '.join(sorted(self._values))})"
