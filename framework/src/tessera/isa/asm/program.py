"""The assembler's result: the :class:`Program` record.

Kept apart from the assembler so that loaders and tools which only consume
assembled output (segments, symbols, entry point, a flat image) depend on this
small immutable record and on nothing of how it was produced.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

import attrs

from tessera.errors import AssemblyError

__all__ = ["MAX_OUTPUT", "Program"]

#: Most bytes one program may produce, and the largest span :meth:`Program.image` builds.
MAX_OUTPUT = 256 << 20


def _names(names: Iterable[str]) -> frozenset[str]:
    return frozenset(names)


@attrs.frozen
class Program:
    """Assembled output: byte segments, the symbol table and the entry point.

    ``segments`` are ``(address, data)`` pairs, sorted, non-empty, non-overlapping
    and not touching (adjacent output is merged).  ``entry`` comes from ``.entry``,
    else the symbol ``_start``, else ``None``.  ``labels`` are the symbols defined as
    labels (``name:``), not by assignment (``.equ``, ``name = value``): the addresses a
    word list keeps (``tessera asm --format words``).
    """

    segments: tuple[tuple[int, bytes], ...] = ()
    symbols: Mapping[str, int] = attrs.field(
        factory=dict, converter=lambda m: MappingProxyType(dict(m)), hash=False)
    entry: int | None = None
    labels: frozenset[str] = attrs.field(default=frozenset(), converter=_names, hash=False)

    @property
    def size(self) -> int:
        """Number of bytes produced (gaps between segments not counted)."""
        return sum(len(data) for _, data in self.segments)

    def image(self, fill: int = 0) -> tuple[int, bytes]:
        """``(address, data)``: one blob from the lowest to the highest byte, gaps filled.

        Loaders that want a flat image use this; a span over :data:`MAX_OUTPUT`
        (typically two ``.org`` far apart) is refused rather than allocated.
        """
        if not self.segments:
            return 0, b""
        start = self.segments[0][0]
        end = self.segments[-1][0] + len(self.segments[-1][1])
        if end - start > MAX_OUTPUT:
            raise AssemblyError(
                f"program spans {end - start:#x} bytes ({start:#x}..{end:#x}), more than the "
                f"{MAX_OUTPUT >> 20} MiB a flat image may have")
        blob = bytearray(bytes([fill]) * (end - start))
        for addr, data in self.segments:
            blob[addr - start:addr - start + len(data)] = data
        return start, bytes(blob)
