"""Test helpers of the MOP and replay expander tests.

An independent encoder of MOP / MOP_CFG / REPLAY / NOP and the few instructions the
kernels use (field layout from spec tensix.md §5: MOP 0x01 Template[23] Count1[22:16]
MaskLo[15:0]; MOP_CFG 0x03 MaskHi[15:0]; REPLAY 0x04 Index[18:14] Count[9:4] Exec[1]
Load[0]; SEMWAIT 0xA6 stall_res[23:15] sem_sel[9:2] cond[1:0]; SEMPOST 0xA4 sem_sel[9:2]),
and :func:`run` — a direct-mode machine with a kernel at 0, ``MopCfg`` programmed the
way a RISC-V core would (:meth:`tessera_tensix.mop.MopExpander.program`), run to the end.
"""

from __future__ import annotations

from typing import Any

from tensix_ctl_support import ADDDMAREG, MULDMAREG, SFPIADD
from tensix_table_support import machine

from tessera_tensix.mop import expander_of

NOP = 0x0200_0000
SFPNOP = 0x8F00_0000


def MOP(template: int, count1: int, mask_lo: int) -> int:
    return (0x01 << 24) | (template << 23) | (count1 << 16) | mask_lo


def MOP_CFG(mask_hi: int) -> int:
    return (0x03 << 24) | mask_hi


def REPLAY(index: int, count: int, execute: int, load: int) -> int:
    return (0x04 << 24) | (index << 14) | (count << 4) | (execute << 1) | load


def SEMWAIT(stall_res: int, sem_mask: int, cond: int) -> int:
    return (0xA6 << 24) | (stall_res << 15) | (sem_mask << 2) | cond


def SEMPOST(sem_mask: int) -> int:
    return (0xA4 << 24) | (sem_mask << 2)


def inc(lreg: int, n: int) -> int:
    """SFPIADD with an immediate, no condition update: LReg[lreg] += n."""
    return SFPIADD(n & 0xFFF, lreg, lreg, 5)


def addg(gpr: int, n: int) -> int:
    """ADDDMAREG with a constant: GPR[gpr] += n."""
    return ADDDMAREG(1, gpr, n, gpr)


def mulg(gpr: int, n: int) -> int:
    """MULDMAREG with a constant: GPR[gpr] = low16(GPR[gpr]) * n."""
    return MULDMAREG(1, gpr, n, gpr)


def template1_cfg(outer: int, inner: int, *, start: int = NOP, end0: int = NOP, end1: int = NOP,
                  loop: int = NOP, loop1: int = NOP, last0: int | None = None,
                  last1: int | None = None) -> list[int]:
    """``MopCfg`` for template 1 (the last-iteration words default to the loop word that
    ckernel_template's constructors give them: LoopOp1 if set, else LoopOp)."""
    tail = loop if loop1 == NOP else loop1
    return [outer, inner, start, end0, end1, loop, loop1,
            tail if last0 is None else last0, tail if last1 is None else last1]


def template0_cfg(*, a0: int, skip_a0: int = NOP, b: int = NOP, skip_b: int = NOP,
                  a1: int = NOP, a2: int = NOP, a3: int = NOP, has_b: bool = False,
                  has_a123: bool = False) -> list[int]:
    return [0, int(has_b) | int(has_a123) << 1, b, a0, a1, a2, a3, skip_a0, skip_b]


def run(words: list[int], chip: str = "bh", *, mop_cfg: list[int] | None = None,
        max_steps: int = 100_000, **config: Any) -> Any:
    """Run ``words`` (+ the ending 0 word) on T0 with ``mop_cfg`` programmed; the machine."""
    m = machine(list(words) + [0], chip, **config)
    if mop_cfg is not None:
        expander_of(m.agent("t0")).program(mop_cfg)
    m.run(max_steps=max_steps)
    return m


def lane0(m: Any, index: int) -> int:
    """LReg[index] of lane 0 (the kernels keep every lane equal)."""
    values = {int(v) for v in m.agent("t0").core.sfpu.lreg[index]}
    assert len(values) == 1, values
    return values.pop()
