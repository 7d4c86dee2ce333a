"""Differential tests: random RV32IM / RV64IM instruction streams, Tessera against Unicorn.

Random blocks (ALU, M extension, lui/auipc, aligned loads and stores, Zaamo
atomics, fence, forward branches and jumps — see ``diffsupport.random_block``) are
encoded by Tessera's own assembler from the plugin's encoding table, then run from
the same random registers and data in Unicorn (``UC_ARCH_RISCV``) and in a Tessera
machine; all 32 registers, the PC and the data area must agree.  Unicorn (QEMU
5.0 based) has no Zba/Zbb, so those are compared against qemu-user instead
(``test_diff_random_qemu.py``).  Seeds are fixed.
"""

from __future__ import annotations

import os
import random
import struct

import pytest
from diffsupport import AREA_HALF, BASE_REG, make_machine, random_block, random_value, riscv_arch

if os.environ.get("TESSERA_REQUIRE_DIFF_TOOLS") == "1":  # CI installs it: a missing one must fail
    import unicorn
else:
    unicorn = pytest.importorskip("unicorn", reason="unicorn is not installed (pip install unicorn)")
from unicorn import riscv_const as rc

CODE = 0x1_0000
AREA = 0x8_0000                    # x3: the centre of the data area
SEEDS = range(40)
LENGTH = 200


def assemble(xlen: int, lines: list[str]) -> bytes:
    from tessera.isa.asm import assemble as tessera_assemble

    program = tessera_assemble(riscv_arch(xlen), "\n".join(lines) + "\n", file="<random>", base=CODE)
    ((address, blob),) = program.segments
    assert address == CODE
    return bytes(blob)


def run_unicorn(xlen: int, code: bytes, regs: list[int], area: bytes):
    mode = unicorn.UC_MODE_RISCV64 if xlen == 64 else unicorn.UC_MODE_RISCV32
    uc = unicorn.Uc(unicorn.UC_ARCH_RISCV, mode)
    uc.mem_map(CODE, 0x1_0000)
    uc.mem_map(AREA - 0x1000, 0x2000)
    uc.mem_write(CODE, code)
    uc.mem_write(AREA - AREA_HALF, area)
    for r in range(1, 32):
        uc.reg_write(rc.UC_RISCV_REG_X0 + r, regs[r])
    uc.emu_start(CODE, CODE + len(code), timeout=10_000_000)
    mask = (1 << xlen) - 1
    out = [uc.reg_read(rc.UC_RISCV_REG_X0 + r) & mask for r in range(32)]
    return out, uc.reg_read(rc.UC_RISCV_REG_PC) & mask, bytes(uc.mem_read(AREA - AREA_HALF, 2 * AREA_HALF))


def run_tessera_block(xlen: int, code: bytes, regs: list[int], area: bytes):
    machine = make_machine(xlen, {"ram": 1 << 20})
    machine.space.write_bytes(CODE, code)
    machine.space.write_bytes(AREA - AREA_HALF, area)
    machine.set_entry(CODE)
    hart = machine.agent("hart0")
    for r in range(1, 32):
        hart.x[r] = regs[r]
    end = CODE + len(code)
    result = machine.run(until_pc=[end], max_steps=4 * len(code))
    assert (result.reason, result.pc) == ("breakpoint", end), result
    return list(hart.x), hart.pc, machine.space.read_bytes(AREA - AREA_HALF, 2 * AREA_HALF)


@pytest.mark.parametrize("xlen", [32, 64])
@pytest.mark.parametrize("seed", SEEDS)
def test_random_stream_matches_unicorn(xlen, seed):
    rng = random.Random(f"unicorn-{xlen}-{seed}")
    lines = random_block(rng, xlen, LENGTH, label="L", bitmanip=False, atomics=True,
                         branches=True, memory=True, misaligned=False)
    regs = [0] + [random_value(rng, xlen) for _ in range(31)]
    regs[BASE_REG] = AREA
    area = bytes(rng.getrandbits(8) for _ in range(2 * AREA_HALF))
    code = assemble(xlen, lines)
    assert len(code) == 4 * LENGTH

    want_regs, want_pc, want_area = run_unicorn(xlen, code, regs, area)
    got_regs, got_pc, got_area = run_tessera_block(xlen, code, regs, area)

    listing = "\n".join(f"  {CODE + 4 * i:#x}: {w:08x}" for i, (w,) in
                        enumerate(struct.iter_unpack("<I", code)))
    diffs = [f"x{r}: unicorn {want_regs[r]:#x}, tessera {got_regs[r]:#x}"
             for r in range(32) if want_regs[r] != got_regs[r]]
    assert not diffs and got_pc == want_pc, (
        "registers differ:\n  " + "\n  ".join(diffs) + f"\n  pc: unicorn {want_pc:#x}, tessera {got_pc:#x}"
        + "\ninitial: " + ", ".join(f"x{r}={v:#x}" for r, v in enumerate(regs) if r)
        + "\ncode:\n" + "\n".join(lines) + "\n" + listing)
    first = next((i for i in range(len(want_area)) if want_area[i] != got_area[i]), None)
    assert first is None, (f"data differs first at x3{first - AREA_HALF:+d}: unicorn "
                           f"{want_area[first]:#04x}, tessera {got_area[first]:#04x}\ncode:\n" + "\n".join(lines))
