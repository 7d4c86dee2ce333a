"""Conformance cases of the faults plugin (docs/conformance.md): what an injection must do.

Every architecture this repository ships gets a few small programs, each run with a
``--fault`` (the case's ``tool_options``) and the final state the fault must leave:

* cases marked ``"changes": True`` pin a fault that must change the outcome — the
  suite's ``tool-effect`` check also runs them without the option and requires a
  difference, on the step and on the fast engine (so a fault that silently never
  fires fails even when its expectation happens to hold);
* cases marked ``"transparent": True`` arm a fault that never triggers — a count past
  the program's end, or a PC whose instruction never runs (or not as often as the
  trigger's count) — and must leave the run identical to the run without it: outcome,
  steps, cycles, registers, memory, on both engines.  Counted triggers cut the run with
  pauses and PC triggers instrument their instruction, so this is what checks that an
  armed injector costs nothing.

The expected values below are worked out from the programs (the arithmetic is in the
comments).  When the architecture's own plugin is checked too, the suite also runs the
cases through its generic checks (determinism, snapshots, both engines, budgets) with
the fault armed, so a fault that fired at a different point on another engine, or twice
after a snapshot, fails there.
"""

from __future__ import annotations

from typing import Any

# --------------------------------------------------------------------------- RISC-V (rv32im, rv64im)

#: a0 = 5 + 5 = 10, then exit(a0): seven instructions at 0x10000
SUM = """
    li   a0, 5
    li   t1, 0x100
    sw   a0, 0(t1)
    lw   a1, 0(t1)
    add  a0, a0, a1
    li   a7, 93
    ecall
"""

#: a loop summing 1..20 into a0 (210), then exit(a0 & 0xff)
LOOP = """
    li   a0, 0
    li   t0, 20
loop:
    add  a0, a0, t0
    addi t0, t0, -1
    bnez t0, loop
    andi a0, a0, 0xff
    li   a7, 93
    ecall
"""

#: LOOP with an instruction after the exit that never runs (for PC triggers that never fire)
LOOP_NEVER = LOOP + """
never:
    addi a0, a0, 1
"""


def _riscv() -> list[dict[str, Any]]:
    small = {"ram": 0x100000}
    return [
        {"name": "faults-idle", "source": SUM, "config": small, "max_steps": 100,
         "tool_options": {"fault": None}, "transparent": True, "expect": {"exit_code": 10}},
        # a0 = 5 ^ 2 after the first instruction: 7 + 7
        {"name": "faults-flip-retired", "source": SUM, "config": small, "max_steps": 100, "changes": True,
         "tool_options": {"--fault": "target=a0,bit=1,at=retired:1"}, "expect": {"exit_code": 14}},
        # the stored 5 becomes 4 before the load: 5 + 4
        {"name": "faults-flip-memory", "source": SUM, "config": small, "max_steps": 100, "changes": True,
         "tool_options": {"--fault": "target=mem[0x100],bit=0,at=retired:3"}, "expect": {"exit_code": 9}},
        # the last round's add (of 1) is skipped: 209
        {"name": "faults-skip-pc", "source": LOOP, "config": small, "max_steps": 1000, "changes": True,
         "tool_options": {"--fault": "model=skip,at=pc:loop#20"}, "expect": {"exit_code": 209}},
        {"name": "faults-stuck-window", "source": LOOP, "config": small, "max_steps": 1000, "changes": True,
         # t0 = 20 is held even through add, addi (19 -> 18), bnez: 20 + 18 + 17 + ... + 1
         "tool_options": {"--fault": "target=t0,model=stuck0,bit=0,at=retired:2,window=3"},
         "expect": {"exit_code": 20 + sum(range(1, 19))}},
        # the load's destination (a1) is zeroed: 5 + 0
        {"name": "faults-class-dest", "source": SUM, "config": small, "max_steps": 100, "changes": True,
         "tool_options": {"--fault": "model=zero,at=class:load"}, "expect": {"exit_code": 5}},
        # armed, never triggered: SUM retires 7 instructions, far from 1000
        {"name": "faults-armed-past-end", "source": SUM, "config": small, "max_steps": 100, "transparent": True,
         "tool_options": {"--fault": "target=a0,bit=1,at=retired:1000"}, "expect": {"exit_code": 10}},
        # the loop's add runs 20 times, never a 21st: instrumented on every round, never fired
        {"name": "faults-armed-pc-count", "source": LOOP, "config": small, "max_steps": 1000,
         "transparent": True, "tool_options": {"--fault": "model=skip,at=pc:loop#21"},
         "expect": {"exit_code": 210}},
        # `never` follows the exit: its PC is never fetched
        {"name": "faults-armed-pc-never", "source": LOOP_NEVER, "config": small, "max_steps": 1000,
         "transparent": True, "tool_options": {"--fault": "target=a0,bit=0,at=pc:never"},
         "expect": {"exit_code": 210}},
    ]


# --------------------------------------------------------------------------- rfPhoenix

PHOENIX_SCRATCH = 0xFFFC_0000

#: v1 = [1, 2, 3, 4] loaded from the scratchpad; v2 = v1 + v1 = [2, 4, 6, 8] stored after it
VECTOR = """
        ldi     r1, 0xFFFC0000
        ldi     r2, 1
        st.t    r2, 0[r1]
        ldi     r2, 2
        st.t    r2, 4[r1]
        ldi     r2, 3
        st.t    r2, 8[r1]
        ldi     r2, 4
        st.t    r2, 12[r1]
        ld.t    v1, 0[r1]
double: add     v2, v1, v1
        st.t    v2, 16[r1]
done:   bra     done
never:  add     v2, v2, v2
"""

#: t0 enables t1 (CR0); t0 sums 10..1 (55) into scratch+0, t1 sums 5..1 (15) into scratch+4
THREADS = """
        csrrd   r1, r0, hartid
        andi    r1, r1, 15
        bne     r1, r0, second
        ldi     r2, 3
        csrrw   r0, r2, cr0
        ldi     r5, 10
        ldi     r6, 0
loop0:  add     r6, r6, r5
        addi    r5, r5, -1
        bne     r5, r0, loop0
        ldi     r3, 0xFFFC0000
        st.t    r6, 0[r3]
done0:  bra     done0
second: ldi     r5, 5
        ldi     r6, 0
loop1:  add     r6, r6, r5
        addi    r5, r5, -1
        bne     r5, r0, loop1
        ldi     r3, 0xFFFC0000
        st.t    r6, 4[r3]
done1:  bra     done1
"""


def _phoenix() -> list[dict[str, Any]]:
    lanes4 = {"dram": 0x10_0000, "lanes": 4}
    two = {"dram": 0x10_0000, "threads": 2}
    out = PHOENIX_SCRATCH + 16
    return [
        # lane 2 of v1 is 3 ^ 16 = 19 when the add runs: v2 lane 2 = 38, the other lanes 2, 4, 8
        {"name": "faults-phoenix-lane", "source": VECTOR, "config": lanes4, "max_steps": 100, "changes": True,
         "tool_options": {"--fault": "target=t0.v[1,2],bit=4,at=pc:double"},
         "expect": {"memory": {out: 2, out + 4: 4, out + 8: 38, out + 12: 8}}},
        # armed on the add after the self-loop, which never runs: v2 = [2, 4, 6, 8]
        {"name": "faults-phoenix-armed-lane", "source": VECTOR, "config": lanes4, "max_steps": 100,
         "transparent": True, "tool_options": {"--fault": "target=t0.v[1,2],bit=4,at=pc:never"},
         "expect": {"memory": {out: 2, out + 4: 4, out + 8: 6, out + 12: 8}}},
        # t1's sum is 5 + 4 = 9 before its third add; bit 4 makes it 25, then + 3 + 2 + 1 = 31
        {"name": "faults-phoenix-thread", "source": THREADS, "config": two, "max_steps": 1000, "changes": True,
         "tool_options": {"--fault": "target=t1.r6,bit=4,at=pc:loop1#3@t1"},
         "expect": {"memory": {PHOENIX_SCRATCH: 55, PHOENIX_SCRATCH + 4: 31}}},
        # t1 retires fewer than 30 instructions (3 + 2 + 5 rounds of 3 + the store's few), never 1000:
        # the count is approached with pauses
        # across the two interleaved threads and must not move either of them
        {"name": "faults-phoenix-armed-thread", "source": THREADS, "config": two, "max_steps": 1000,
         "transparent": True, "tool_options": {"--fault": "target=t1.r6,bit=4,at=retired:1000@t1"},
         "expect": {"memory": {PHOENIX_SCRATCH: 55, PHOENIX_SCRATCH + 4: 15}}},
    ]


# --------------------------------------------------------------------------- Tensix (direct mode)

#: L2 = L0 * L1 + L0 = 0.5 * 2.0 + 0.5 = 1.5 in every lane, stored as FP32 into Dest rows
#: 0..3, even columns (lane L: row L >> 3, column 2 * (L & 7); docs/tensix.md, SFPSTORE).
#: BF16 immediates: 0x3F00 (16128) = 0.5, 0x4000 (16384) = 2.0.  ``ADDRMOD`` is 7 on
#: Blackhole, 3 on Wormhole (its 2-bit field).
MAD = """
        sfploadi L0,16128,0
        sfploadi L1,16384,0
mad:    sfpmad L2,L0,L1,L0,0
        sfpnop
        sfpstore 0,L2,3,ADDRMOD
fin:    end
never:  sfpnop
"""


def _dest_fp32(changed: dict[tuple[int, int], float]) -> Any:
    """A ``check``: Dest's 4 × 8 FP32 slice holds 1.5, except ``{(row, column): value}``."""

    def check(machine: Any, outcome: Any) -> str | None:
        from tessera_tensix.examples import dest_fp32

        dest = machine.ext["tensix"].dest
        for row in range(4):
            for col in range(0, 16, 2):
                got, want = dest_fp32(dest, row, col), changed.get((row, col), 1.5)
                if got != want:
                    return f"Dest[{row}][{col}] = {got!r}, expected {want!r}"
        return None

    return check


def _tensix(addrmod: int) -> list[dict[str, Any]]:
    source = MAD.replace("ADDRMOD", str(addrmod))
    return [
        # lane 5 of L0: 0.5 = 0x3F000000; bit 23 is the exponent's lowest bit: 0x3F800000 = 1.0,
        # so lane 5 computes 1.0 * 2.0 + 1.0 = 3.0, stored at row 5 >> 3 = 0, column 2 * 5 = 10
        {"name": "faults-tensix-lreg", "source": source, "max_steps": 100, "changes": True,
         "tool_options": {"--fault": "target=sfpu.lreg[0,5],bit=23,at=pc:mad"},
         "expect": {"exit_code": 0}, "check": _dest_fp32({(0, 10): 3.0})},
        # after the store: cell [0, 4] is the high half of Dst32b[0][4] (its low half is row 8);
        # bit 15 of the high cell is the sign (docs/tensix.md, Dest layouts): 1.5 becomes -1.5
        {"name": "faults-tensix-dest", "source": source, "max_steps": 100, "changes": True,
         "tool_options": {"--fault": "target=dest[0,4],bit=15,at=pc:fin"},
         "expect": {"exit_code": 0}, "check": _dest_fp32({(0, 4): -1.5})},
        # armed on the SFPNOP after END (never run), and on a count past the program's six steps
        {"name": "faults-tensix-armed-pc", "source": source, "max_steps": 100, "transparent": True,
         "tool_options": {"--fault": "target=sfpu.lreg[0,5],bit=23,at=pc:never"},
         "expect": {"exit_code": 0}, "check": _dest_fp32({})},
        {"name": "faults-tensix-armed-count", "source": source, "max_steps": 100, "transparent": True,
         "tool_options": {"--fault": "target=dest[0,4],bit=15,at=retired:1000@t0"},
         "expect": {"exit_code": 0}, "check": _dest_fp32({})},
    ]


# --------------------------------------------------------------------------- tile, Tensix tiles

#: 5 + 7 = 12, exit(a0)
ADD = """
    li   a0, 5
    li   t1, 7
    add  a0, a0, t1
    li   a7, 93
    ecall
never:
    addi a0, a0, 1
"""


def _tile() -> list[dict[str, Any]]:
    small = {"ram": 0x100000, "echo": False}  # two harts, both running the program
    return [
        # a0 = 5 ^ 8 = 13 after hart0's first instruction: 13 + 7 = 20 (hart0's exit status)
        {"name": "faults-tile-flip", "source": ADD, "config": small, "max_steps": 1000, "changes": True,
         "tool_options": {"--fault": "target=hart0.a0,bit=3,at=retired:1@hart0"}, "expect": {"exit_code": 20}},
        # each hart retires five instructions: hart1's 1000th never comes, approached with pauses
        {"name": "faults-tile-armed-count", "source": ADD, "config": small, "max_steps": 1000,
         "transparent": True, "tool_options": {"--fault": "target=hart1.a0,bit=3,at=retired:1000@hart1"},
         "expect": {"exit_code": 12}},
        # LOOP's add runs 20 times on each hart; hart0's 21st never comes
        {"name": "faults-tile-armed-pc", "source": LOOP, "config": small, "max_steps": 1000,
         "transparent": True, "tool_options": {"--fault": "model=skip,at=pc:loop#21@hart0"},
         "expect": {"exit_code": 210}},
    ]


def _tensix_tile() -> list[dict[str, Any]]:
    # RISCV B (brisc) runs the program; the other cores stay in soft reset
    return [
        # a0 = 5 ^ 8 = 13 after brisc's first instruction: 13 + 7 = 20
        {"name": "faults-brisc-flip", "source": ADD, "max_steps": 1000, "changes": True,
         "tool_options": {"--fault": "target=brisc.a0,bit=3,at=retired:1@brisc"}, "expect": {"exit_code": 20}},
        {"name": "faults-brisc-armed-pc", "source": ADD, "max_steps": 1000, "transparent": True,
         "tool_options": {"--fault": "target=brisc.a0,bit=3,at=pc:never"}, "expect": {"exit_code": 12}},
        {"name": "faults-brisc-armed-count", "source": ADD, "max_steps": 1000, "transparent": True,
         "tool_options": {"--fault": "target=brisc.a0,bit=3,at=retired:1000@brisc"}, "expect": {"exit_code": 12}},
    ]


# --------------------------------------------------------------------------- toy (tests/toyarch)

#: r2 = 5 + 4 + 3 + 2 + 1 = 15, halt r2
TOY_LOOP = """
        li    r1, 5
        li    r2, 0
loop:   add   r2, r2, r1
        addi  r1, r1, -1
        bne   r1, r0, loop
        halt  r2
never:  addi  r2, r2, 1
"""

#: both cores: r2 = core id + 1, two barriers, halt r2 (core0's status: 1)
TOY_BARRIER = """
        cid   r1
        addi  r2, r1, 1
        bar
        bar
        halt  r2
"""


def _toy() -> list[dict[str, Any]]:
    one = {"cores": 1, "echo": False}
    two = {"echo": False}
    return [
        # before the second add r1 = 4; bit 3 makes it 12: 5 + 12 + 11 + ... + 1 = 5 + 78 = 83
        {"name": "faults-toy-flip", "source": TOY_LOOP, "config": one, "max_steps": 1000, "changes": True,
         "tool_options": {"--fault": "target=r1,bit=3,at=pc:loop#2"}, "expect": {"exit_code": 83}},
        # core0's r2 = 0 + 1 = 1 after its second instruction; bit 2 makes it 5
        {"name": "faults-toy-barrier", "source": TOY_BARRIER, "config": two, "max_steps": 1000, "changes": True,
         "tool_options": {"--fault": "target=core0.r2,bit=2,at=retired:2@core0"}, "expect": {"exit_code": 5}},
        # the add runs five times, never a sixth; `never` follows the halt
        {"name": "faults-toy-armed-pc-count", "source": TOY_LOOP, "config": one, "max_steps": 1000,
         "transparent": True, "tool_options": {"--fault": "target=r1,bit=3,at=pc:loop#6"},
         "expect": {"exit_code": 15}},
        {"name": "faults-toy-armed-pc-never", "source": TOY_LOOP, "config": one, "max_steps": 1000,
         "transparent": True, "tool_options": {"--fault": "target=r2,bit=0,at=pc:never"},
         "expect": {"exit_code": 15}},
        # core1 retires five instructions, never 50: pauses across two cores and a barrier
        {"name": "faults-toy-armed-count", "source": TOY_BARRIER, "config": two, "max_steps": 1000,
         "transparent": True, "tool_options": {"--fault": "target=core1.r2,bit=2,at=retired:50@core1"},
         "expect": {"exit_code": 1, "registers": {"core1": {"r": {2: 2}}}}},
    ]


BUILDERS = {
    "rv32im": _riscv,
    "rv64im": _riscv,
    "phoenix": _phoenix,
    "tensix": lambda: _tensix(7),
    "tensix-wh": lambda: _tensix(3),
    "tile": _tile,
    "tensix-tile": _tensix_tile,
    "tensix-tile-wh": _tensix_tile,
    "toy": _toy,
}


def cases(arch: Any) -> list[dict[str, Any]] | None:
    """The cases for ``arch`` (``None`` for an architecture this module does not know)."""
    build = BUILDERS.get(arch.name)
    return build() if build is not None else None
