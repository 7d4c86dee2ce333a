"""A tile run cut anywhere, snapshotted and restored, ends exactly as the uninterrupted run:
mid-kernel (an instruction popped by a Tensix thread), mid-probe of a polling core, and
between a core's wall-clock reads (tessera_tensix.tile: fedthread, polls, tilectl)."""

from __future__ import annotations

from importlib.resources import files

import pytest
from tensix_tile_support import host

from tessera.loaders import load_program
from tessera.machine import Machine


def fresh(chip: str) -> Machine:
    from tessera_tensix.tile.arch import TILE_BH, TILE_WH

    m = Machine(TILE_WH if chip == "wormhole_b0" else TILE_BH, host=host())
    load_program(m, str(files("tessera_tensix.tile") / "prebuilt" / chip / "run.toml"))
    return m


def final(m: Machine) -> dict:
    return {a.name: (a.status, a.instret, getattr(a, "pc", None), a.cycles) for a in m.agents}


@pytest.mark.parametrize("chip", ["blackhole", "wormhole_b0"])
def test_cut_snapshotted_and_restored_runs_end_as_the_uninterrupted_one(chip):
    ref = fresh(chip)
    total = ref.run(max_steps=10_000_000).steps
    want = final(ref)
    popped = 0
    # two strides: steps at which a thread holds a popped (waiting) instruction are few,
    # since busy threads interleave one instruction per turn (FedThread.lockstep)
    for cut in sorted({*range(total // 9, total, total // 9), *range(total // 13, total, total // 13)}):
        m = fresh(chip)
        m.run(max_steps=cut, raise_on_budget=False)
        popped += any(getattr(a, "current", None) is not None for a in m.agents)
        restored = Machine.restore(m.snapshot(), host=m.host)
        result = restored.run(max_steps=10_000_000)
        assert result.reason == "halted", (cut, result.detail)
        assert final(restored) == want, f"cut at step {cut} of {total}"
    assert popped, "no cut fell while a Tensix thread held a popped instruction"
