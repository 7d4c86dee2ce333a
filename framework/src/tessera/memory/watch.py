"""Memory watches: plugin callbacks on data accesses to chosen ranges."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from tessera.errors import MemoryFault, PluginError, TesseraError


@attrs.define(eq=False)
class Watch:
    """Observe (and optionally modify) data accesses to ``[start, end)``.

    ``on_read(agent, address, size, value)`` may return a replacement value;
    ``on_write(agent, address, size, value)`` may return the value to store instead.
    ``plugin`` is filled in by the machine so a raising callback is reported by name.
    """

    start: int
    end: int
    on_read: Callable[[Any, int, int, int], int | None] | None = None
    on_write: Callable[[Any, int, int, int], int | None] | None = None
    plugin: str = "?"

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
