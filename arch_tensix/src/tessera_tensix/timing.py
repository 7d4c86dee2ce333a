"""Nominal latencies of the Tensix timing classes (the default timing model).

From tensix-sfpu.md §18 (VectorUnit.md's instruction table) and seed 000:

* ``sfpu1`` — 1 cycle: every SFPU instruction not listed below (SFPLOAD/STORE/LOADI,
  SFPSTOCHRND, SFPARECIP, SFPCAST, the simple integer/bit and predication ones …);
* ``sfpu2`` — 2 cycles (the result is ready one cycle later; a dependent next instruction
  is stalled one cycle): SFPMAD/ADD/MUL/ADDI/MULI, SFPLUT, SFPLUTFP32, SFPMUL24, and
  SFPSWAP (the next instruction must be SFPNOP or is stalled);
* ``scalar`` — 3 cycles: the scalar unit (ThCon) GPR instructions ADDDMAREG … CMPDMAREG,
  SETDMAREG, FLUSHDMA (seed 000: "3 cycles (immediate variant, or both registers in the
  same aligned group of 4 GPRs), 4 otherwise"; FLUSHDMA "at least 2");
* ``sync`` — 1 cycle for the sync unit's own work (STALLWAIT, SEM*, ATGETM …; waiting is
  not modelled in direct mode);
* ``cfg`` — 1 cycle: configuration writes (SETC16, WRCFG, RMWCIB*, …);
* ``end`` — 1 cycle: the END pseudo-instruction (the all-zero word; not hardware, but every
  retired instruction costs at least a cycle, as Tessera's timing models require);
* ``default`` — 1 cycle: everything else (matrix unit, packers, frontend instructions).

Cycle counts are nominal per-instruction latencies, not a pipeline model: there is no
overlap between threads and no stall modelling.
"""

from __future__ import annotations

TIMING: dict[str, int] = {
    "default": 1,
    "sfpu1": 1,
    "sfpu2": 2,
    "scalar": 3,
    "sync": 1,
    "cfg": 1,
    "end": 1,
}

#: SFPU instructions of the 2-cycle class (VectorUnit.md; tensix-sfpu.md §18, E11).
SFPU_TWO_CYCLE = frozenset({
    "SFPMAD", "SFPADD", "SFPMUL", "SFPADDI", "SFPMULI", "SFPLUT", "SFPLUTFP32", "SFPMUL24",
    "SFPSWAP",
})

#: assembly.yaml ``ex_resource`` -> timing class for the instructions that are not SFPU.
RESOURCE_CLASS = {"THCON": "scalar", "SYNC": "sync", "CFG": "cfg"}


def timing_class(name: str, resource: str) -> str:
    """The timing class of instruction ``name`` (vendor name) run by ``resource``."""
    if name == "END":
        return "end"
    if name.startswith("SFP"):
        return "sfpu2" if name in SFPU_TWO_CYCLE else "sfpu1"
    return RESOURCE_CLASS.get(resource, "default")
