"""Helpers of the tile plugin's tests: build a machine from assembly, words from spec bit positions."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from tessera.isa.asm import assemble
from tessera.machine import Machine
from tessera_tile import TILE

BASE = 0x10000
RAM = 1 << 22
ONE = {"tile.threads_per_pe": 1}        # one hart: most tests need no tid guard
CUSTOM3 = 0x7B

HAVE_NUMERICS = all(importlib.util.find_spec(f"tessera_tile.numerics.{m}") is not None
                    for m in ("mma", "talu", "convert", "formats"))
needs_numerics = pytest.mark.skipif(not HAVE_NUMERICS, reason="tessera_tile.numerics (written separately) "
                                    "is not there yet")


def machine(source: str, *, config: dict[str, Any] | None = None, engine: str | None = None,
            host: Any = None, arch: Any = TILE) -> Machine:
    """A machine with ``source`` assembled at BASE (1 hart unless ``config`` says otherwise)."""
    cfg = {"ram": RAM, "echo": False, **ONE, **(config or {})}
    m = Machine(arch, config=cfg, host=host, engine=engine)
    program = assemble(arch, source, base=BASE)
    for address, blob in program.segments:
        m.space.write_bytes(address, blob)
    m.symbols.update(program.symbols)
    m.set_entry(program.entry if program.entry is not None else BASE)
    return m


def run(source: str, *, max_steps: int = 100_000, **kw: Any) -> tuple[Machine, Any]:
    m = machine(source, **kw)
    return m, m.run(max_steps=max_steps)


EXIT = """
        li a7, 93
        ecall
"""


def word(tuop: int, fields: dict[Any, int], opcode: int = CUSTOM3) -> int:
    """A word from spec bit positions: ``{31: 1, (30, 23): 4}`` plus tuop [14:12] and the opcode."""
    w = opcode | tuop << 12
    for bits, value in fields.items():
        hi, lo = (bits, bits) if isinstance(bits, int) else bits
        assert 0 <= value < 1 << (hi - lo + 1), (bits, value)
        w |= value << lo
    return w


def tile_bytes(m: Machine, index: int, thread: str = "hart0") -> bytes:
    return m.tile.threads[thread].tile(index).tobytes()


def set_tile(m: Machine, index: int, data: bytes, thread: str = "hart0") -> None:
    import numpy as np

    m.tile.threads[thread].tile(index)[:] = np.frombuffer(data, dtype=np.uint8)
