"""Small types that several layers of the core share, kept where every layer may import them.

This module imports no other Tessera module, so it sits at the bottom of the core's
layer order (docs/architecture.md, "Layers"; checked by tests/core/test_layering.py).
A type belongs here when two layers that must not know each other both need it:
``Endian`` is named by an architecture description (``tessera.isa``) and by an
address space (``tessera.memory``); :class:`HookCall` is made by the plugin host
(``tessera.plugins``) and called by the engine and the machine, which sit below it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

__all__ = ["Endian", "HookCall"]

#: Byte order of an architecture's instructions and of an address space's data.
Endian = Literal["little", "big"]


class HookCall:
    """One plugin's implementation of one hook, callable with the hook's keyword arguments.

    An implementation may declare only some of its hook's arguments (pluggy allows
    that); a ``HookCall`` passes it just the ones it names.  The plugin host resolves
    these (:meth:`tessera.plugins.PluginHost.hook_calls`) and the machine hands them
    to the engine, so neither needs the host's module to call a plugin, and each can
    still name the plugin (``plugin_name``) when its callback fails.
    """

    __slots__ = ("plugin_name", "function", "argnames")

    def __init__(self, plugin_name: str, function: Callable[..., Any], argnames: Sequence[str]) -> None:
        self.plugin_name = plugin_name
        self.function = function
        self.argnames = tuple(argnames)

    def __call__(self, **kwargs: Any) -> Any:
        return self.function(*[kwargs[name] for name in self.argnames])

    def __repr__(self) -> str:
        return f"HookCall({self.plugin_name!r}, {getattr(self.function, '__qualname__', self.function)!r})"
