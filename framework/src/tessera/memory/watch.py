"""Memory watches: plugin callbacks on data accesses to chosen ranges, or journals of them.

A watch either *calls* the plugin (``on_read``/``on_write``, which may also change the
value) or only *records* (``journal``): each access appends ``(0 | 1, address, size,
value)`` to a list the plugin owns.  A callback costs a call into the plugin per
access, and it keeps the fast engine from accessing that memory inline; a journal
does neither — translated blocks still access the RAM directly and append the tuple
themselves (:mod:`tessera.engine.memops`) — so a tool that only needs to know what
was accessed (a tracer) should journal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from tessera.errors import MemoryFault, PluginError, TesseraError

#: what a journal entry's first element says
READ, WRITE = 0, 1


@attrs.define(eq=False)
class Watch:
    """Observe (and optionally modify) data accesses to ``[start, end)``.

    ``on_read(agent, address, size, value)`` may return a replacement value;
    ``on_write(agent, address, size, value)`` may return the value to store instead.

    ``journal``, a list, makes this a *journal* watch instead: every sized access
    overlapping the range that completes appends ``(READ, address, size, value)``
    (the value the program receives) or ``(WRITE, address, size, value)`` (the value
    stored: its low ``size`` bytes, as memory or the device receives them), in program
    order, and does nothing else; a faulting access appends nothing.  Blocks of the
    fast engine append inline (see the module docstring).  The owner reads the list
    and empties it (``clear()``: the list object must stay the same) when it likes.
    A watch has callbacks or a journal, not both.

    ``plugin`` is filled in by the machine so a raising callback is reported by name.
    """

    start: int
    end: int
    on_read: Callable[[Any, int, int, int], int | None] | None = None
    on_write: Callable[[Any, int, int, int], int | None] | None = None
    plugin: str = "?"
    journal: list[tuple[int, int, int, int]] | None = attrs.field(default=None, kw_only=True)

    def __attrs_post_init__(self) -> None:
        if self.journal is not None:
            if not isinstance(self.journal, list):
                raise TypeError(f"Watch journal must be a list, not {type(self.journal).__name__}")
            if self.on_read is not None or self.on_write is not None:
                raise ValueError("a Watch records into a journal or calls on_read/on_write, not both")

    def _call(self, fn: Callable[..., Any], agent: Any, address: int, size: int, value: int) -> Any:
        try:
            return fn(agent, address, size, value)
        except (MemoryFault, PluginError):
            raise
        except TesseraError:
            raise
        except Exception as exc:
            raise PluginError(f"memory watch raised {type(exc).__name__}: {exc}",
                              plugin=self.plugin, address=address) from exc

    def call_read(self, agent: Any, address: int, size: int, value: int) -> Any:
        return self._call(self.on_read, agent, address, size, value)  # type: ignore[arg-type]

    def call_write(self, agent: Any, address: int, size: int, value: int) -> Any:
        return self._call(self.on_write, agent, address, size, value)  # type: ignore[arg-type]
