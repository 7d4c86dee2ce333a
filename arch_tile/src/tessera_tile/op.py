"""One dispatched tile operation: the record the sequencer builds and an engine executes.

A :class:`TileOp` holds only plain values — the form's name, the words, their decoded
fields, the GPRs each word saw when it executed (tile.md 2.2: "the emulator reads each
GPR when that word executes"), the value the ASP word captured, and what the executor's
checks worked out at dispatch (``plan``) — so it pickles into snapshots while it sits in
an engine's queue in timed mode.
"""

from __future__ import annotations

from typing import Any

import attrs


@attrs.define
class TileOp:
    form: str                   # operation name in the tables (``tld.g.us``)
    kind: str                   # executor (``mem``, ``tma`` ...)
    thread: str                 # issuing hart
    pc: int                     # address of the dispatching word
    word: int                   # the dispatching word
    words: dict[str, int]       # "W2"/"W1"/"W0" -> word
    fields: dict[str, int]      # "W1.td" -> value, for every word
    x: dict[str, list[int]]     # per word: the GPRs when it executed
    asp: Any = None             # the staged W2's captured value
    asp_mask: bytes | None = None   # v0 as the W2 saw it, when its func6 asks for masking
    params: dict[str, Any] = attrs.field(factory=dict)
    unit: str = ""              # lsu / tma / mma / alu, or "" for front-end operations
    keys: tuple[str, ...] = ()  # completion counters it holds while outstanding
    plan: dict[str, Any] = attrs.field(factory=dict)
    reads: list[tuple[str, int, int, int]] = attrs.field(factory=list)    # (space, index, lo, hi)
    writes: list[tuple[str, int, int, int]] = attrs.field(factory=list)

    def f(self, name: str) -> int:
        """A field: ``op.f("W1.td")``."""
        return self.fields[name]

    def has(self, name: str) -> bool:
        return name in self.fields

    def gpr(self, word: str, field: str) -> int:
        """The value of the GPR that field ``word.field`` names, as it was when that word ran."""
        return self.x[word][self.fields[f"{word}.{field}"]]

    def describe(self) -> str:
        return f"{self.form} (pc {self.pc:#x}, {self.thread})"
