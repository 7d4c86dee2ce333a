"""The tiled-matmul example is right in every tile mode: its waits order every engine's
work (the ALU's zeroing before the MMA accumulates onto it), so timed mode — where engines
really run later — gets numpy's product and checker mode finds no race."""

from __future__ import annotations

import pytest

from tessera.isa.asm import assemble
from tessera.machine import Machine
from tessera_tile.arch import TILE


@pytest.mark.parametrize("mode", ["eager", "timed", "checker"])
def test_the_tiled_matmul_is_right_in_every_mode(mode):
    ex = next(e for e in TILE.examples if e.name == "tiled-matmul")
    m = Machine(TILE, config={"ram": 1 << 20, "echo": False, "tile.threads_per_pe": 2, "tile.mode": mode})
    program = assemble(TILE, ex.source, base=ex.load_address)
    for address, blob in program.segments:
        m.space.write_bytes(address, blob)
    m.symbols.update(program.symbols)
    m.set_entry(ex.load_address)
    assert ex.check(m, m.run(max_steps=ex.max_steps)) is None
    assert list(m.tile.races) == []
