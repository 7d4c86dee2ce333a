"""Bundled example programs (``tessera demo --arch phoenix``), each with a result check.

The sources are the ``.s`` files next to this module, assembled by
:class:`~tessera_phoenix.asm.PhoenixAssembler` and loaded at the reset address
(0xFFFD0000, the boot ROM), where thread 0 starts.  Each ends in a self-loop, which
halts the thread (``halt_on_self_loop``), and its ``check`` verifies the final state.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from typing import Any

from tessera.isa import Example
from tessera_phoenix.registers import RESET_IP

SCRATCH = 0xFFFC0000
MASK32 = 0xFFFF_FFFF


def _source(name: str) -> str:
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def _after_halt(check: Callable[[Any, Any], str | None]) -> Callable[[Any, Any], str | None]:
    """An example's check: thread 0 must have halted, then ``check(machine, thread 0)``."""

    def run(machine: Any, result: Any) -> str | None:
        t0 = machine.agents[0]
        if result.reason != "halted" or t0.status != "halted":
            return f"thread 0 did not halt ({result.reason}: {result.detail})"
        return check(machine, t0)

    run.__name__ = run.__qualname__ = check.__name__
    run.__doc__ = check.__doc__
    return run


@_after_halt
def check_sum(machine: Any, t0: Any) -> str | None:
    got = machine.space.read(SCRATCH, 4)
    if got != 5050 or t0.gpr[2] != 5050:
        return f"sum of 1..100 is 5050, memory holds {got} and r2 {t0.gpr[2]}"
    return None


@_after_halt
def check_vcopy(machine: Any, t0: Any) -> str | None:
    lanes = t0.lanes
    for i in range(16):
        got = machine.space.read(SCRATCH + 0x100 + 4 * i, 4)
        want = 0x100 + 4 * i if i < lanes and i % 2 == 0 else MASK32
        if got != want:
            return f"destination word {i} is {got:#x}, expected {want:#x}"
    loaded = [int(x) for x in t0.vr[1]]
    if loaded != [0x100 + 4 * i for i in range(lanes)]:
        return f"v1 holds {loaded}, expected the source block"
    return None


@_after_halt
def check_trap(machine: Any, t0: Any) -> str | None:
    bad = machine.symbols.get("bad")
    expect = {10: 2, 11: 37}
    if bad is not None:
        expect[12] = (bad + 6) & MASK32
    for reg, want in expect.items():
        if t0.gpr[reg] != want:
            return f"r{reg} is {t0.gpr[reg]:#x}, expected {want:#x}"
    if t0.depth != 1:
        return f"exception depth is {t0.depth} after RTI, expected 1 (the reset level)"
    return None


EXAMPLES = (
    Example("sum", "integer loop: 1 + 2 + ... + 100 stored to scratchpad RAM",
            _source("sum.s"), load_address=RESET_IP, max_steps=10_000, check=check_sum),
    Example("vcopy", "vector load and a store with a partial lane mask (merge masking)",
            _source("vcopy.s"), load_address=RESET_IP, max_steps=10_000, check=check_vcopy),
    Example("trap", "an undefined instruction (UNIMP) serviced by a handler that returns past it",
            _source("trap.s"), load_address=RESET_IP, max_steps=10_000, check=check_trap),
)
