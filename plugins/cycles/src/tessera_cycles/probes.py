"""The silicon benchmarks' probes as Tessera programs on a Blackhole Tensix tile.

Why this exists: the shipped measurements (:mod:`tessera_cycles.silicon`) are cycles per
instruction that ``tensixbench`` (phases A and B) and ``riscvbench`` (phases r, t, c, f,
g) read on a Blackhole card by timing loops with the tile's wall clock (and the cycles of
single bursts of pushes, riscvbench's queue phases q and s).  A cycle model is checked
against them by running the *same experiment* on the emulated tile and reading the clock
the same way; this module writes those programs (assembly for ``tensix-tile``), runs them
and derives the same figure the benchmarks report.

Every program has the benchmarks' shape (docs/silicon.md §2 describes them in words; no
upstream code is used):

* RISCV B releases T0..T2 from soft reset (``RISCV_DEBUG_REG_SOFT_RESET_0`` = 0,
  BlackholeA0 .../SoftReset.md) and exits.  T0..T2 start at their fixed pcs; a TRISC
  outside the variant's active set exits at once, an active one sets its thread index
  and jumps to the probe code, which the three share (each ``.ttinsn`` word pushes into
  the *issuing* core's own Tensix thread, BabyRISCV/PushTensixInstruction.md).
* A **probe** is, for each of four points (``blocks`` = base × 1..4): a barrier (each
  active thread stores its next sequence number to its own L1 word and spins until every
  active thread's word has reached it — outside the timed region, so contended probes
  really overlap); a read of ``RISCV_DEBUG_REG_WALL_CLOCK_L`` (DebugTimestamper.md); a
  loop of ``blocks`` iterations of a straight-line body of ``unroll`` instructions; a
  second read; the difference stored to the thread's own result slot in L1.  No drain
  is timed: what is timed is the issuing core's view, as on silicon.
* Cost per instruction = (slope(probe) − slope(``loop_overhead``)) / ``unroll``, the
  least-squares slope over the four points, per thread (:func:`per_instruction`).
* An active TRISC ends with ``tensix_sync`` (a load of ``PC_BUF_BASE + 4``,
  CoprocessorDoneCheck) and exits.
* Data: riscv-r's L1 pointer chase walks a 64-node ring (16 bytes apart) in the thread's
  own L1 scratch; its local-RAM chase two words at ``MEM_LOCAL_BASE`` pointing at each
  other (the stack's memory on silicon; each core has its own).

**tensixbench phase B** (suite ``tensix-b``; silicon.md §2.2) timed ``matmul_tiles`` at
three fidelities: the math thread pushes one MOP per tile, which expands to a REPLAY of 16
MVMULs once per fidelity phase (LoFi 1, HiFi2 2, HiFi4 4).  Only the *differences* between
fidelities are interpretable, so the suite reproduces the matrix unit fed by the MOP
expander and nothing else: TRISC1 alone (variant t1) sets the matmul's address modifiers
(SETC16), records the 16 MVMULs in replay entries 16..31 once (``REPLAY 16, 16, 0, 1``,
REPLAY.md: load without executing), hands both source banks to the matrix unit once
(``SETDVALID``, phase A's "once"; every MVMUL has ``clear_dvalid`` 0, so they stay
valid), then per fidelity — one probe each — drains its thread (``tensix_sync``: software
must not change ``MopCfg`` under an expansion, MOPExpander.md "Configuration"), sets
ADDR_MOD_5's fidelity increment, stores the nine ``MopCfg`` words at
``TENSIX_MOP_CFG_BASE`` (template 1: one outer iteration of ``loops`` inner ones, each a
``REPLAY 16, 16, 0, 0``; MOPExpander.md, as tt-llk's matmul programs it), pushes
:data:`PRIME` MOPs untimed so every timed point starts behind a full queue, and times
``calls`` pushes of ``MOP 1, 0, 0`` (4 points) like a phase-A probe.  The slope is cycles
per call.  No BRISC feeder, unpack thread or packer runs: on silicon they add to every
call a constant the same at every fidelity (the feeder's page handshakes, the unpack
thread's Src handoff), which the differences cancel — and which is why the per-fidelity
slopes themselves are not compared.

Tensix instructions are assembled with the Tensix assembler (the LLK macro spelling,
:mod:`tessera_tensix.isa.asm`), never encoded by hand; each becomes a ``.word`` of the
word rotated left by 2 — the ``.ttinsn`` encoding a baby core executes as a push
(:func:`tessera_tensix.examples.tile._push` shows the same rotation).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from tessera.errors import Deadlock, TesseraError
from tessera_cycles.silicon import slope

__all__ = ["DEFAULT_BASE_BLOCKS", "FIDELITIES", "MVMULS", "Measurement", "PRIME", "Probe", "ProbeError", "SUITES",
           "Series", "VARIANTS", "expanded_per_call", "high_fidelity", "measure", "mop_config", "per_instruction",
           "probes", "source", "variants"]

#: the suites: tensixbench phases A and B and riscvbench phases r, t, c, f, g, q and s
SUITES = ("tensix-a", "tensix-b", "riscv-r", "riscv-t", "riscv-c", "riscv-f", "riscv-g", "riscv-q", "riscv-s")
#: the benchmarks' thread sets (active TRISCs; silicon.md §1): t1 = TRISC1 alone
VARIANTS: dict[str, tuple[int, ...]] = {"t1": (1,), "t2": (0, 1), "t3": (0, 1, 2)}
#: tensixbench phase B's fidelities (the CSV's ``variant``) and their fidelity phases: the
#: math MOP's inner-loop count, one replay of the tile's MVMULs each (tt-llk's matmul)
FIDELITIES: dict[str, int] = {"LoFi": 1, "HiFi2": 2, "HiFi4": 4}
#: the MVMULs of one 32x32 tile per fidelity phase: 4 output faces x 2 halves of 8 rows x 2
#: faces of the inner dimension (each MVMUL: 8 Dst rows += 8 SrcB rows x a 16x16 SrcA face)
MVMULS = 16
#: MOPs a phase-B probe pushes untimed before its points, so its first timed point starts
#: as every later one does: behind a full queue, the core stalled on it.  A queue holds at
#: most 32 (the tensix model's deepest ``fifo_depth``; silicon run-ahead 31-32) and fills
#: only as fast as the core pushes faster than calls leave it (a push every ~3 cycles, a
#: call every >= 16): a LoFi queue is full after ~37 pushes, so twice the depth is safe
PRIME = 64
#: blocks of the first point.  The silicon runs used 32.  A small base keeps a run to
#: seconds; the price: the probes run back to back without a drain (as on the card), so a
#: probe's first point starts behind the previous probe's queued work, and that cold point
#: weighs more in the slope the smaller the base (at 4, up to ~6 % on a probe that follows
#: a dearer or cheaper one under the tensix model; at 32 it is the silicon's own bias)
DEFAULT_BASE_BLOCKS = 4
#: points per probe (blocks = base × 1..POINTS)
POINTS = 4
#: the empty-body control every slope is measured against
CONTROL = "loop_overhead"

# ---- the tile (tessera_tensix.tile.memmap; BlackholeA0 .../BabyRISCV/README.md "Memory map")
TRISC_PCS = (0x6000, 0xA000, 0xE000)       # where T0..T2 leave soft reset (SoftReset.md)
DEBUG_REGS = 0xFFB1_2000                   # RISCV_DEBUG_REGS_START_ADDR
SOFT_RESET_0 = 0x1B0                       # ... + RISCV_DEBUG_REG_SOFT_RESET_0
WALL_CLOCK_L = 0x1F0                       # ... + RISCV_DEBUG_REG_WALL_CLOCK_L
PC_BUF_BASE = 0xFFE8_0000
MEM_LOCAL_BASE = 0xFFB0_0000               # each core's own data RAM (the stack on silicon)
#: ``.ttinsn`` carries a word only below this; larger ones are stores to INSTRN_BUF_BASE
TTINSN_LIMIT = 0xC000_0000

# ---- this program's L1 layout (all above the TRISCs' reset pcs' code)
CODE = 0x1_0000                            # the probe code the active TRISCs share
BARRIER = 0x7_0000                         # one word per thread
RESULTS = 0x7_1000                         # RESULT_STRIDE bytes per thread: probe × point words
RESULT_STRIDE = 0x400
SCRATCH = 0x7_2000                         # SCRATCH_STRIDE bytes per thread (the L1 probes' data)
SCRATCH_STRIDE = 0x400
RING = 64                                  # nodes of the L1 pointer-chase ring, 16 bytes apart
RING_STRIDE = 16

ECALL_EXIT = 93
#: what a result slot holds before its probe stores it (no difference of two clock reads
#: in a run of seconds comes near it)
UNWRITTEN = 0xDEAD_BEEF

#: settings a suite's run starts from (``config`` may override them).  riscv-r's timed
#: loops re-read a few words and store nothing: the tile's poll probe
#: (tessera_tensix.tile.polls) steps them one by one each time before it concludes they make
#: progress, so riscv-r runs faster without parking (the tensix model gives a poll's
#: spinning back either way: the results are the same); the other suites park, and the
#: barrier ends with a store so a probe of the parker that began in the spin ends there.
RUN_SETTINGS: dict[str, dict[str, Any]] = {"riscv-r": {"park_polls": False}}
#: steps each core runs before the next takes its turn.  The tensix model books a shared
#: resource (an L1 access port or bank, a coprocessor unit) first come first served in the
#: order the functional run shows it the accesses; with the architecture's long quantum one
#: core would book a shared port ~a thousand instructions ahead of the other (the first
#: core run wins every tie over its slice, and where the slices fall moves the result),
#: with one step the cores' accesses reach the model nearly in time order, as the silicon
#: cores issue them: concurrently (the same at every loop count).
QUANTUM = 1


class ProbeError(TesseraError):
    """A probe program that did not do what a measurement needs (did not halt, a core
    failed, a result slot is missing).  It keeps its base's exit code, as errors defined
    outside tessera.errors do."""

    kind = "probe error"


@attrs.frozen
class Probe:
    """One probe: ``name`` as the silicon CSV's ``probe`` column, its loop body (assembly
    lines for a baby core) and ``unroll``, the count the benchmark divides by (instructions,
    or groups for riscvbench's tt_pad/fuse/spread)."""

    name: str
    unroll: int
    body: tuple[str, ...]
    #: assembly run once before the probe's first point (outside timing); ``{S}`` becomes
    #: a label of the probe's own
    setup: tuple[str, ...] = ()
    #: a burst probe (riscvbench phases q and s): one cold shot per burst length in
    #: ``ns`` (each twice the last) of ``body`` — a straight-line cascade (``block`` 0) or
    #: a loop of ``block`` copies a turn — instead of a slope over loop counts
    ns: tuple[int, ...] = ()
    block: int = 0
    #: an untimed ``tensix_sync`` after each point's barrier: the burst starts from an
    #: empty queue (phase q's loop form and phase s; not the cascade, nor a ``sync`` probe,
    #: whose previous point ended drained)
    drain: bool = False
    #: a ``tensix_sync`` inside the timed region, after the burst (the drained figure)
    sync: bool = False
    #: only TRISC1 pushes; every other active thread spins ``SPIN`` times as many addi
    #: and reports nothing (phase s's solo probes)
    solo: bool = False

    @property
    def burst(self) -> bool:
        return bool(self.ns)

    def points(self, base_blocks: int) -> tuple[int, ...]:
        """The ``n`` of each point: burst lengths, or loop counts ``base_blocks`` × 1..4."""
        return self.ns or tuple(base_blocks * k for k in range(1, POINTS + 1))


# ------------------------------------------------------------------ Tensix words


@functools.cache
def tensix_word(statement: str) -> int:
    """The Blackhole Tensix word of one instruction in the assembler's syntax (assembled,
    so an operand out of range is the assembler's error, not a wrong word)."""
    from tessera.isa.asm import assemble
    from tessera_tensix.arch import TENSIX_BH

    program = assemble(TENSIX_BH, statement + "\n", file="<probe>")
    (_address, blob), = program.segments
    if len(blob) != 4:
        raise ValueError(f"{statement!r} is not one Tensix instruction ({len(blob)} bytes)")
    return int.from_bytes(blob, "little")


def push(statement: str) -> str:
    """One baby-core instruction pushing ``statement`` into the core's own Tensix thread:
    the ``.ttinsn`` word (the Tensix word rotated left by 2; PushTensixInstruction.md).
    A probe body must be one instruction per push, so a word ``.ttinsn`` cannot carry is
    refused here (no probe has one)."""
    word = tensix_word(statement)
    if word >= TTINSN_LIMIT:
        raise ValueError(f"{statement!r} ({word:#010x}) needs a store to INSTRN_BUF_BASE, not one .ttinsn word")
    return f".word {((word << 2) | (word >> 30)) & 0xFFFF_FFFF:#010x}   # push {statement}"


def _repeat(lines: Sequence[str], times: int) -> tuple[str, ...]:
    return tuple(lines) * times


# ------------------------------------------------------------------ the suites
#
# Registers the bodies may use: a0..a3 operands, a4 = 3 (multiplier, divisor),
# a5 = 0x12345678 (dividend), a6 = the toggling value, t0 a sink, t4 the L1 chase
# pointer, t5 the local-RAM chase pointer, t6 the thread's L1 scratch.  t1 (loop count),
# t2 (first clock) and s0..s11 belong to the harness.

UNROLL = 64
GROUPS = 16         # riscvbench's group probes: 16 groups per iteration
PAD = 16            # ... each with 16 addi


def _tensix_a() -> tuple[Probe, ...]:
    """tensixbench phase A: 64 back-to-back pushes of one instruction per probe; operands
    fixed, state-free (SFPU on LRegs 0-3, ThCon on GPRs 60-62, RDCFG into GPR 60,
    RWC and matrix ops all zero, ``clear_dvalid`` 0 so the source banks stay valid)."""
    one = {
        "NOP": "NOP",
        "DMANOP": "DMANOP",
        "SFPNOP": "SFPNOP",
        "SFPMOV": "SFPMOV 0, 0, 1, 0",            # imm12, lreg_c, lreg_dest, mod1
        "SFPADD": "SFPADD 0, 1, 2, 3, 0",         # src a, src b, src c, dest, mod1
        "SFPMUL": "SFPMUL 0, 1, 2, 3, 0",
        "SFPMAD": "SFPMAD 0, 1, 2, 3, 0",
        "SFPABS": "SFPABS 0, 0, 1, 0",
        "SETDMAREG": "SETDMAREG 0, 7, 0, 120",    # 16-bit register 120 = low half of GPR 60
        "ADDDMAREG": "ADDDMAREG 1, 60, 1, 60",    # b is a constant
        "MULDMAREG": "MULDMAREG 1, 61, 1, 60",
        "SHIFTDMAREG": "SHIFTDMAREG 1, 0, 61, 1, 60",
        "CMPDMAREG": "CMPDMAREG 1, 0, 62, 1, 60",
        "RDCFG": "RDCFG 60, 0",
        "SETRWC": "SETRWC 0, 0, 0, 0, 0, 0",
        "INCRWC": "INCRWC 0, 0, 0, 0",
        "MVMUL": "MVMUL 0, 0, 0, 0",
        "ELWADD": "ELWADD 0, 0, 0, 0, 0",
        "ELWMUL": "ELWMUL 0, 0, 0, 0, 0",
    }
    out = [Probe(CONTROL, UNROLL, ())]
    for name, statement in one.items():
        # "once" (the primary dataset's dvalid_setup): TRISC1 alone hands both source
        # banks to the matrix unit, then everyone meets at a barrier
        setup = ("    li t0, 1", "    bne s0, t0, {S}", "    " + push("SETDVALID 3"), "{S}:",
                 "    jal ra, barrier") if name == "MVMUL" else ()
        out.append(Probe(name, UNROLL, _repeat(["    " + push(statement)], UNROLL), setup))
    return tuple(out)


# tensixbench phase B.  Thread-configuration indices (Blackhole cfg_defines.h; the same
# as arch_tensix's matmul.s): ADDR_MOD_AB_SEC0 + n holds SrcA [7:0] / SrcB [15:8] (incr,
# CR, clear), ADDR_MOD_DST_SEC0 + n Dst incr [9:0], CR [10], clear [11], fidelity incr [14:13]
ADDR_MOD_AB_SEC0 = 12
ADDR_MOD_DST_SEC0 = 28
TENSIX_MOP_CFG_BASE = 0xFFB8_0000          # nine write-only words (MOPExpander.md "Configuration")
REPLAY_AT = 16                             # the replay entries the tile's MVMULs are recorded in
#: the tile's MVMULs, face by face, and the address modifier each uses (matmul.s; tt-llk's
#: order): ADDR_MOD_5, on the last, rewinds the counters and (high fidelity) steps the
#: fidelity phase
MATMUL_ADDR_MODS = (0, 1, 0, 2, 0, 1, 0, 4, 0, 1, 0, 2, 0, 1, 0, 5)
#: the address modifiers but ADDR_MOD_5's Dst half (it depends on the fidelity): (AB, Dst)
ADDR_MODS = {0: (8 << 8, 8),                                     # SrcB += 8, Dst += 8
             1: (16 | 1 << 14, 8),                               # SrcA += 16, SrcB = its CR
             2: (1 << 6 | (32 | 1 << 6) << 8, 8),                # SrcA = CR, SrcB CR += 32
             4: (32 | 1 << 6 | (48 | 1 << 6) << 8, 1 << 10),     # SrcA CR += 32, SrcB CR += 48, Dst = CR
             5: (3 << 6 | 3 << 14, None)}                        # clear SrcA, SrcB (and Dst, below)
#: ``SETRWC`` with no bank cleared and every counter (A, B, D, fidelity phase) set to 0
REWIND = "SETRWC 0, 0, 0, 0, 0, 15"


def high_fidelity(fidelity: str) -> bool:
    """More than one fidelity phase (tt-llk's ``is_high_fidelity``)."""
    return FIDELITIES[fidelity] > 1


def mop_config(fidelity: str) -> list[int]:
    """The nine ``MopCfg`` words of one ``matmul_tiles`` at ``fidelity`` (template 1,
    MOPExpander.md): one outer iteration of ``FIDELITIES[fidelity]`` inner ones, each a
    replay of the :data:`MVMULS` recorded MVMULs.  As tt-llk's Blackhole matmul
    (llk_math_matmul.h) programs it, a high-fidelity MOP ends with a ``SETRWC`` that
    rewinds the counters and the fidelity phase (there with the reused bank's clear; here
    none, so the banks stay valid) and a LoFi one has no end op."""
    nop = tensix_word("NOP")
    replay = tensix_word(f"REPLAY {REPLAY_AT}, {MVMULS}, 0, 0")
    end = tensix_word(REWIND) if high_fidelity(fidelity) else nop
    #       outer inner              StartOp EndOp0 EndOp1 LoopOp  LoopOp1 Loop0Last Loop1Last
    return [1, FIDELITIES[fidelity], nop, end, nop, replay, nop, replay, replay]


def expanded_per_call(fidelity: str) -> int:
    """The Tensix instructions one pushed MOP issues at ``fidelity``: the MVMULs of every
    fidelity phase, and the high-fidelity end op."""
    return MVMULS * FIDELITIES[fidelity] + (1 if high_fidelity(fidelity) else 0)


def _matmul_once() -> list[str]:
    """Run once before the phase-B probes: the matmul's address modifiers, the counters
    rewound, the tile's MVMULs recorded (not executed) in the replay buffer, and both
    source banks handed to the matrix unit (phase A's ``dvalid_setup=once``)."""
    lines = ["# ---- once: address modifiers, the tile's MVMULs into the replay buffer, Src valid"]
    for n, (ab, dst) in ADDR_MODS.items():
        lines.append("    " + push(f"SETC16 {ADDR_MOD_AB_SEC0 + n}, {ab}"))
        if dst is not None:
            lines.append("    " + push(f"SETC16 {ADDR_MOD_DST_SEC0 + n}, {dst}"))
    lines += ["    " + push(REWIND), "    " + push(f"REPLAY {REPLAY_AT}, {MVMULS}, 0, 1")]
    lines += ["    " + push(f"MVMUL 0, 0, {mode}, 0") for mode in MATMUL_ADDR_MODS]
    lines.append("    " + push("SETDVALID 3"))
    return lines


def _fidelity_setup(fidelity: str) -> tuple[str, ...]:
    """Before a fidelity's points: drain the thread, ADDR_MOD_5's fidelity increment,
    the ``MopCfg`` words, then :data:`PRIME` untimed calls (``{S}`` is the probe's label)."""
    step = 1 if high_fidelity(fidelity) else 0     # tt-llk: the phase steps only at high fidelity
    lines = [f"    li t0, {PC_BUF_BASE:#x}             # tensix_sync: no MOP expands while MopCfg changes",
             "    sw zero, 4(t0)",
             "    lw t1, 4(t0)",
             "    " + push(f"SETC16 {ADDR_MOD_DST_SEC0 + 5}, {3 << 10 | step << 13}"),
             f"    li t0, {TENSIX_MOP_CFG_BASE:#x}          # MopCfg[0..8]"]
    for i, word in enumerate(mop_config(fidelity)):
        lines += [f"    li t1, {word:#x}", f"    sw t1, {4 * i}(t0)"]
    lines += [f"    li t1, {PRIME}                       # untimed calls: the queue full before the first point",
              "{S}:",
              "    " + push("MOP 1, 0, 0"),
              "    addi t1, t1, -1",
              "    bnez t1, {S}",
              # ... ended as a point ends — a clock read, a difference stored (to the
              # thread's scratch), and as many instructions before the barrier (a point's
              # addi, addi, bnez; here nop and the probe's li, li) — so the first point
              # starts as far behind the queue as every later one
              f"    lw t3, {WALL_CLOCK_L:#x}(s5)",
              "    sub t3, t3, t2",
              "    sw t3, 0(t6)",
              "    nop"]
    return tuple(lines)


def _tensix_b() -> tuple[Probe, ...]:
    """tensixbench phase B: one probe per fidelity, its body one ``matmul_tiles`` call —
    one pushed MOP (``unroll`` 1: the slope is cycles per call, as silicon's)."""
    return tuple(Probe(fidelity, 1, ("    " + push("MOP 1, 0, 0"),), _fidelity_setup(fidelity))
                 for fidelity in FIDELITIES)


def _riscv_r() -> tuple[Probe, ...]:
    """riscvbench phase r: RV32IM straight-line bodies of 64 instructions."""
    four = functools.partial(_repeat, times=UNROLL // 4)
    return (
        Probe(CONTROL, UNROLL, ()),
        Probe("rv_addi_indep", UNROLL, four([f"    addi a{i}, a{i}, 1" for i in range(4)])),
        Probe("rv_addi_dep", UNROLL, _repeat(["    addi a0, a0, 1"], UNROLL)),
        Probe("rv_mul_indep", UNROLL, four([f"    mul a{i}, a{i}, a4" for i in range(4)])),
        Probe("rv_mul_dep", UNROLL, _repeat(["    mul a0, a0, a4"], UNROLL)),
        Probe("rv_div", UNROLL, _repeat(["    divu t0, a5, a4"], UNROLL)),
        Probe("rv_load_chase", UNROLL, _repeat(["    lw t4, 0(t4)"], UNROLL)),
        Probe("rv_load_indep", UNROLL, four([f"    lw a{i}, {16 * i}(t6)" for i in range(4)])),
        Probe("rv_store_spread", UNROLL, four([f"    sw a0, {16 * i}(t6)" for i in range(4)])),
        Probe("rv_store_coalesce", UNROLL, four([f"    sw a0, {off}(t6)" for off in (0, 4, 0, 4)])),
        Probe("rv_load_stack", UNROLL, _repeat(["    lw t5, 0(t5)"], UNROLL)),
        Probe("rv_store_stack", UNROLL, _repeat(["    sw a0, 0(t5)"], UNROLL)),
    )


def _riscv_t() -> tuple[Probe, ...]:
    """riscvbench phase t: the push path (64 pushes) and the fusion groups (16 groups of
    16 addi with 0, 2 or 4 adjacent NOP pushes, or 4 pushes each followed by an addi)."""
    addi = "    addi a0, a0, 1"
    nop = "    " + push("NOP")

    def groups(group: list[str]) -> tuple[str, ...]:
        return _repeat(group, GROUPS)

    return (
        Probe(CONTROL, UNROLL, ()),
        Probe("tt_nop", UNROLL, _repeat([nop], UNROLL)),
        Probe("tt_sfpnop", UNROLL, _repeat(["    " + push("SFPNOP")], UNROLL)),
        Probe("tt_setdmareg", UNROLL, _repeat(["    " + push("SETDMAREG 0, 7, 0, 120")], UNROLL)),
        Probe("tt_adddmareg", UNROLL, _repeat(["    " + push("ADDDMAREG 1, 60, 1, 60")], UNROLL)),
        Probe("tt_pad", GROUPS, groups([addi] * PAD)),
        Probe("tt_fuse2", GROUPS, groups([nop] * 2 + [addi] * PAD)),
        Probe("tt_fuse4", GROUPS, groups([nop] * 4 + [addi] * PAD)),
        Probe("tt_spread4", GROUPS, groups([nop, addi] * 4 + [addi] * (PAD - 4))),
    )


def _riscv_c() -> tuple[Probe, ...]:
    """riscvbench phase c: 64 branches (to the next instruction) or xori + branch pairs.
    ``{L}`` becomes a label unique to the copy (the target is always the next instruction)."""
    def branches(lines: list[str]) -> tuple[str, ...]:
        return _repeat([*lines, "{L}:"], UNROLL)

    return (
        Probe(CONTROL, UNROLL, ()),
        Probe("c_ctrl_xor", UNROLL, _repeat(["    xori a6, a6, 1"], UNROLL)),
        Probe("c_nt", UNROLL, branches(["    bne a0, a0, {L}"])),
        Probe("c_t", UNROLL, branches(["    beq a0, a0, {L}"])),
        Probe("c_xor_nt", UNROLL, branches(["    xori a6, a6, 1", "    bne a0, a0, {L}"])),
        Probe("c_xor_t", UNROLL, branches(["    xori a6, a6, 1", "    beq a0, a0, {L}"])),
        Probe("c_xor_alt", UNROLL, branches(["    xori a6, a6, 1", "    beqz a6, {L}"])),
        Probe("c_jal", UNROLL, branches(["    j {L}"])),
    )


#: riscvbench's queue probes: the cascade's burst lengths (phase q), the loop form's
#: (phase q: 16 instructions a turn; phase s: 4), and how many times as many addi a solo
#: probe's other threads spin (rvbench_layout.h; silicon.md §2.3)
CASCADE = tuple(1 << p for p in range(8))
Q_LOOP, Q_BLOCK = tuple(16 << p for p in range(7)), 16
S_LOOP, S_BLOCK = tuple(4 << p for p in range(8)), 4
SPIN = 4
SOLO_ISSUER = 1
ADDDMAREG = "ADDDMAREG 1, 60, 1, 60"
#: ``tensix_sync``: wait until the core's Tensix thread has nothing queued or in flight
#: (a load of ``PC_BUF_BASE + 4``, CoprocessorDoneCheck).  A sync probe's series starts
#: with one, untimed (the benchmark: the first of a run is not like the others)
TENSIX_SYNC = (f"    li t0, {PC_BUF_BASE:#x}", "    sw zero, 4(t0)", "    lw t0, 4(t0)")


def _riscv_q() -> tuple[Probe, ...]:
    """riscvbench phase q: how deep is a thread's instruction queue?  The cascade emits
    2^p copies straight-line for p = 0..7 (guarded by p, so its compare-and-branch pairs
    are in every point and ``q_ctrl``, the empty cascade, measures them); the loop form
    runs n/16 turns of 16 copies, every burst from an empty queue; the ``_sync`` probes
    end their timed region with ``tensix_sync`` (silicon.md §2.3)."""
    push_add = "    " + push(ADDDMAREG)
    return (
        Probe(CONTROL, UNROLL, ()),
        Probe("q_ctrl", 1, (), ns=CASCADE),
        Probe("q_nop", 1, ("    " + push("NOP"),), ns=CASCADE),
        Probe("q_setdmareg", 1, ("    " + push("SETDMAREG 0, 7, 0, 120"),), ns=CASCADE),
        Probe("q_adddmareg", 1, (push_add,), ns=CASCADE),
        Probe("q_adddmareg_sync", 1, (push_add,), TENSIX_SYNC, ns=CASCADE, sync=True),
        Probe("q_loop_addi", 1, ("    addi a0, a0, 1",), ns=Q_LOOP, block=Q_BLOCK, drain=True),
        Probe("q_loop_adddmareg", 1, (push_add,), ns=Q_LOOP, block=Q_BLOCK, drain=True),
        Probe("q_loop_adddmareg_sync", 1, (push_add,), TENSIX_SYNC, ns=Q_LOOP, block=Q_BLOCK, sync=True),
    )


def _riscv_s() -> tuple[Probe, ...]:
    """riscvbench phase s: is the queue per thread or shared?  Loops of 4 copies, n = 4 to
    512, every burst from an empty queue; ``co``: every active thread pushes ADDDMAREG,
    ``solo``: TRISC1 alone pushes while the others spin on addi (silicon.md §2.3)."""
    push_add = "    " + push(ADDDMAREG)
    loop = functools.partial(Probe, unroll=1, ns=S_LOOP, block=S_BLOCK, drain=True)
    return (
        Probe(CONTROL, UNROLL, ()),
        loop("s_loop_addi", body=("    addi a0, a0, 1",)),
        loop("s_co_plain", body=(push_add,)),
        loop("s_co_repeat", body=(push_add,)),
        loop("s_co_sync", body=(push_add,), sync=True),
        loop("s_solo_plain", body=(push_add,), solo=True),
        loop("s_solo_sync", body=(push_add,), sync=True, solo=True),
    )


#: riscvbench phase f's loop bodies (addi instructions; 256 bytes to 8 KiB of text) and
#: phase g's (the 4 KiB anchor and the intermediates its five builds paired with it)
FOOTPRINTS = {"f": (64, 128, 256, 512, 1024, 2048), "g": (1024, 1152, 1280, 1408, 1536, 1792)}


def _footprint(phase: str) -> tuple[Probe, ...]:
    """riscvbench phases f and g: a loop body of K ``addi`` (``unroll`` K), which finds
    how large a loop body the core fetches at one instruction a cycle (silicon.md §2.3)."""
    return (Probe(CONTROL, UNROLL, ()),
            *(Probe(f"{phase}_{k}", k, _repeat(["    addi a0, a0, 1"], k)) for k in FOOTPRINTS[phase]))


_SUITES: dict[str, Callable[[], tuple[Probe, ...]]] = {
    "tensix-a": _tensix_a, "tensix-b": _tensix_b, "riscv-r": _riscv_r, "riscv-t": _riscv_t, "riscv-c": _riscv_c,
    "riscv-f": functools.partial(_footprint, "f"), "riscv-g": functools.partial(_footprint, "g"),
    "riscv-q": _riscv_q, "riscv-s": _riscv_s}
#: suites that run only some variants: phase B times the math thread (T1) alone — the
#: silicon run's unpack thread only follows it through the Src handshake (silicon.md §4.1)
_ONLY = {"tensix-b": ("t1",), "riscv-q": ("t1",)}


@functools.cache
def probes(suite: str) -> tuple[Probe, ...]:
    """The probes of ``suite`` in the order they run (the control first, where the
    suite has one: phase B has none — silicon reports its raw slope per call)."""
    if suite not in _SUITES:
        raise ValueError(f"no probe suite {suite!r}; known: {', '.join(SUITES)}")
    return _SUITES[suite]()


def variants(suite: str) -> tuple[str, ...]:
    """The variants (thread sets) ``suite`` runs: every one of :data:`VARIANTS`, but
    ``tensix-b`` only t1."""
    probes(suite)
    return _ONLY.get(suite, tuple(VARIANTS))


# ------------------------------------------------------------------ the program


def _check(suite: str, variant: str, base_blocks: int) -> tuple[Probe, ...]:
    found = probes(suite)
    if variant not in VARIANTS:
        raise ValueError(f"no variant {variant!r}; known: {', '.join(VARIANTS)}")
    if variant not in variants(suite):
        raise ValueError(f"{suite} runs only variant {', '.join(variants(suite))}, not {variant!r}")
    if isinstance(base_blocks, bool) or not isinstance(base_blocks, int) or base_blocks < 1:
        raise ValueError(f"base_blocks must be a positive integer, got {base_blocks!r}")
    if sum(len(p.points(base_blocks)) for p in found) * 4 > RESULT_STRIDE:
        raise ValueError(f"{suite}: {len(found)} probes do not fit a thread's result slots")
    return found


def source(suite: str, variant: str, base_blocks: int = DEFAULT_BASE_BLOCKS) -> str:
    """The tile assembly of ``suite`` (one of :data:`SUITES`) run by the TRISCs of
    ``variant`` (t1, t2, t3), with points of ``base_blocks`` × 1..4 iterations (phase B:
    ``matmul_tiles`` calls)."""
    found = _check(suite, variant, base_blocks)
    active = VARIANTS[variant]
    exit_now = ["    li a7, 93", "    li a0, 0", "    ecall"]
    out = [f"# Tessera probe suite {suite}, variant {variant} (active TRISCs {', '.join(map(str, active))}),",
           f"# points of {base_blocks} x 1..{POINTS} blocks.  Generated by tessera_cycles.probes.",
           ".org 0",
           f"    li t0, {DEBUG_REGS:#x}",
           f"    sw zero, {SOFT_RESET_0:#x}(t0)        # release T0..T2",
           *exit_now]
    for tid, pc in enumerate(TRISC_PCS):
        out.append(f".org {pc:#x}                          # RISCV T{tid}")
        out += [f"    li s0, {tid}", "    j probes"] if tid in active else exit_now
    out += [f".org {CODE:#x}", *_prologue(suite, base_blocks)]
    for index, probe in enumerate(found):
        out += _burst_text(index, probe) if probe.burst else _probe_text(index, probe)
    out += _epilogue(active)
    return "\n".join(out) + "\n"


def _prologue(suite: str, base_blocks: int) -> list[str]:
    """Per thread: its barrier word, result slots, scratch, the bodies' operands, and
    (riscv-r) the L1 ring and the 2-node local-RAM ring the chase probes walk."""
    lines = [
        "probes:",
        f"    li s1, {BARRIER:#x}             # barrier words, one per thread",
        "    slli t0, s0, 2",
        "    add s2, s1, t0                 # this thread's word",
        "    li s3, 0                       # its sequence number",
        f"    li s4, {RESULTS:#x}",
        f"    li t0, {RESULT_STRIDE}",
        "    mul t0, t0, s0",
        "    add s4, s4, t0                 # this thread's result slots",
        f"    li s5, {DEBUG_REGS:#x}          # the wall clock is at +{WALL_CLOCK_L:#x}",
        f"    li s6, {base_blocks}                       # blocks of the first point",
        f"    li t6, {SCRATCH:#x}",
        f"    li t0, {SCRATCH_STRIDE}",
        "    mul t0, t0, s0",
        "    add t6, t6, t0                 # this thread's L1 scratch",
        "    mv t4, t6",
        f"    li t5, {MEM_LOCAL_BASE:#x}      # this core's local RAM",
        "    li a0, 1",
        "    li a1, 2",
        "    li a2, 3",
        "    li a3, 4",
        "    li a4, 3",
        "    li a5, 0x12345678",
        "    li a6, 0",
    ]
    if suite == "riscv-r":
        lines += [
            f"    mv t0, t6                      # the L1 ring: {RING} nodes {RING_STRIDE} bytes apart",
            f"    li t3, {RING - 1}",
            "ring:",
            f"    addi t2, t0, {RING_STRIDE}",
            "    sw t2, 0(t0)",
            "    mv t0, t2",
            "    addi t3, t3, -1",
            "    bnez t3, ring",
            "    sw t6, 0(t0)                   # the last node points at the first",
            "    addi t0, t5, 4                 # the local-RAM ring: two words pointing at each other",
            "    sw t0, 0(t5)",
            "    sw t5, 4(t5)",
        ]
    if suite == "tensix-b":
        lines += _matmul_once()
    return lines


def _probe_text(index: int, probe: Probe) -> list[str]:
    """One probe: its setup, then four points of barrier, clock, ``blocks`` iterations of
    the body, clock, result."""
    tag = f"p{index}"
    body = _labelled(probe.body, tag)
    setup = [line.replace("{S}", f"{tag}_setup") for line in probe.setup]
    near = len(body) < NEAR
    return [
        f"# ---- probe {index}: {probe.name} (unroll {probe.unroll})",
        *setup,
        "    li s7, 0",
        f"    li s8, {POINTS}",
        f"{tag}_point:",
        "    add s7, s7, s6                 # blocks of this point",
        "    jal ra, barrier",
        "    mv t1, s7",
        f"    lw t2, {WALL_CLOCK_L:#x}(s5)             # clock",
        f"{tag}_loop:",
        *body,
        "    addi t1, t1, -1",
        *_back(near, "t1", f"{tag}_loop", f"{tag}_done"),
        f"    lw t3, {WALL_CLOCK_L:#x}(s5)             # clock",
        "    sub t3, t3, t2",
        "    sw t3, 0(s4)",
        "    addi s4, s4, 4",
        "    addi s8, s8, -1",
        *_back(near, "s8", f"{tag}_point", f"{tag}_next"),
    ]


#: bodies of this many lines or more are too long for a conditional branch's reach
#: (4 KiB): their back edges branch out of the loop and jump back, as a compiler does
NEAR = 1000


def _back(near: bool, counter: str, loop: str, out: str) -> list[str]:
    """A loop's back edge on ``counter``: one branch, or a branch out and a jump back."""
    if near:
        return [f"    bnez {counter}, {loop}"]
    return [f"    beqz {counter}, {out}", f"    j {loop}", f"{out}:"]


def _burst_text(index: int, probe: Probe) -> list[str]:
    """A burst probe: per burst length, a barrier, (``drain``) an untimed ``tensix_sync``,
    a clock read, the burst, (``sync``) a ``tensix_sync``, a clock read, the difference
    stored.  ``s7`` holds the cascade's p (0, 1, …) or the loop form's turns (doubling)."""
    tag = f"p{index}"
    sync = list(TENSIX_SYNC)
    first = probe.ns[0] // probe.block if probe.block else 0
    lines = [f"# ---- probe {index}: {probe.name} (bursts of {', '.join(map(str, probe.ns))})",
             *[line.replace("{S}", f"{tag}_setup") for line in probe.setup],
             f"    li s7, {first}",
             f"    li s8, {len(probe.ns)}",
             f"{tag}_point:",
             "    jal ra, barrier"]
    if probe.drain:
        lines += sync
    if probe.solo:
        lines += [f"    li t0, {SOLO_ISSUER}", f"    bne s0, t0, {tag}_spin"]
    if probe.block:
        lines += ["    mv t1, s7",
                  f"    lw t2, {WALL_CLOCK_L:#x}(s5)             # clock",
                  f"{tag}_loop:",
                  *probe.body * probe.block,
                  "    addi t1, t1, -1",
                  f"    bnez t1, {tag}_loop"]
    else:   # the cascade: 1 copy, then 2^(k-1) more for each k = 1..7 the point's p reaches
        lines += [f"    lw t2, {WALL_CLOCK_L:#x}(s5)             # clock", *probe.body]
        for k in range(1, len(probe.ns)):
            lines += [f"    li t0, {k}", f"    blt s7, t0, {tag}_c{k}", *probe.body * (1 << (k - 1)), f"{tag}_c{k}:"]
    if probe.sync:
        lines += sync
    lines += [f"    lw t3, {WALL_CLOCK_L:#x}(s5)             # clock",
              "    sub t3, t3, t2",
              "    sw t3, 0(s4)",
              f"{tag}_stored:",
              "    addi s4, s4, 4",
              "    slli s7, s7, 1" if probe.block else "    addi s7, s7, 1",
              "    addi s8, s8, -1",
              f"    bnez s8, {tag}_point"]
    if probe.solo:   # the other threads: SPIN times as many addi, in the same loop form; no result
        lines += [f"    j {tag}_end",
                  f"{tag}_spin:",
                  f"    slli t1, s7, {SPIN.bit_length() - 1}",
                  f"{tag}_spin_loop:",
                  *["    addi a0, a0, 1"] * probe.block,
                  "    addi t1, t1, -1",
                  f"    bnez t1, {tag}_spin_loop",
                  "    sw zero, 0(s4)",
                  f"    j {tag}_stored",
                  f"{tag}_end:"]
    return lines


def _labelled(body: Sequence[str], tag: str) -> list[str]:
    """Give every ``{L}`` its own label: a branch and the ``{L}:`` after it (its target,
    the next instruction) share one, so the copies of a body do not clash."""
    out: list[str] = []
    serial = 0
    for line in body:
        out.append(line.replace("{L}", f"{tag}_t{serial}"))
        if line == "{L}:":
            serial += 1
    return out


def _epilogue(active: Sequence[int]) -> list[str]:
    waits: list[str] = []
    for tid in active:
        waits += [f"    lw t0, {4 * tid}(s1)", "    bltu t0, s3, barrier_wait"]
    return [
        "# ---- the end: wait for this thread's Tensix work (tensix_sync), exit",
        f"    li t0, {PC_BUF_BASE:#x}",
        "    sw zero, 4(t0)",
        "    lw t1, 4(t0)                   # CoprocessorDoneCheck",
        f"    li a7, {ECALL_EXIT}",
        "    li a0, 0",
        "    ecall",
        "# ---- barrier: publish the next sequence number, wait for every active thread's",
        "barrier:",
        "    addi s3, s3, 1",
        "    sw s3, 0(s2)",
        "barrier_wait:",
        *waits,
        "    sw s3, 0(s2)                   # a store: the tile's poll parker sees work again",
        "    ret",
    ]


# ------------------------------------------------------------------ running and reading


@attrs.frozen
class Series:
    """One probe on one thread: its four ``(n, cycles)`` points (``n`` = loop iterations)."""

    probe: str
    thread: int
    unroll: int
    points: tuple[tuple[int, int], ...]

    def slope(self) -> float:
        """Least-squares cycles per loop iteration (fixed costs cancel)."""
        return per_iteration(self.points)


@attrs.frozen
class Measurement:
    """What one run of a suite measured: every (probe, thread) series, how long the run
    took (``steps`` executed, ``seconds`` of wall time) and, when a cycle model timed it,
    the model's report (``tessera_cycles.report``: per core and thread, per unit)."""

    suite: str
    variant: str
    base_blocks: int
    engine: str
    config: Mapping[str, Any]
    series: Mapping[tuple[str, int], Series]
    steps: int
    seconds: float
    report: Mapping[str, Any] | None = attrs.field(default=None, eq=False)

    @property
    def threads(self) -> tuple[int, ...]:
        return VARIANTS[self.variant]

    @property
    def probe_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p for p, _t in self.series))

    def cycles_per_instruction(self, probe: str, thread: int | None = None) -> float:
        """(slope(probe) − slope(loop_overhead)) / unroll on ``thread``, or averaged over
        the variant's threads (as silicon.md §4 reports the silicon figures) if None.  A
        suite without a control (``tensix-b``) gives slope / unroll, as its silicon does."""
        threads = self.threads if thread is None else (thread,)
        values = [per_instruction(self.series[probe, t], self.series[CONTROL, t])
                  if (CONTROL, t) in self.series else self.series[probe, t].slope() / self.series[probe, t].unroll
                  for t in threads]
        return sum(values) / len(values)

    def table(self) -> dict[str, dict[int, float]]:
        """Cycles per instruction of every slope probe but the control, per thread (a
        burst probe's points are read one by one: :attr:`series`)."""
        bursts = {p.name for p in probes(self.suite) if p.burst}
        return {p: {t: self.cycles_per_instruction(p, t) for t in self.threads}
                for p in self.probe_names if p != CONTROL and p not in bursts}


def per_iteration(points: Iterable[tuple[int, int]]) -> float:
    """The least-squares slope of cycles over iterations (the loader's :func:`slope`)."""
    return slope([{"n": n, "cycles": c} for n, c in points])[0]


def per_instruction(probe: Series, control: Series) -> float:
    """The benchmarks' figure: (slope(probe) − slope(control)) / unroll — the control
    loop's own counter and branch taken off (silicon.md §1)."""
    if probe.thread != control.thread:
        raise ValueError(f"{probe.probe} on thread {probe.thread} measured against the control of thread "
                         f"{control.thread}")
    return (probe.slope() - control.slope()) / probe.unroll


def _host() -> Any:
    import tessera_cycles.plugin
    import tessera_riscv.plugin
    import tessera_tensix.plugin
    from tessera.plugins import PluginHost

    host = PluginHost(load_entry_points=False, use_environment=False)
    host.register(tessera_riscv.plugin, "riscv")
    host.register(tessera_tensix.plugin, "tensix")
    host.register(tessera_cycles.plugin, "cycles")
    return host


def step_budget(suite: str, variant: str, base_blocks: int) -> int:
    """Steps a run may take: every active core's timed instructions and its Tensix
    thread's (phase B: every instruction a MOP expands to, the primed calls included),
    with room for the barriers' spinning (parked polls take no steps; a spinning core
    takes some) — a run that needs more is stuck, not slow."""
    found = _check(suite, variant, base_blocks)
    iterations = base_blocks * sum(range(1, POINTS + 1))
    per_thread = sum(iterations * (len(p.body) + 2) for p in found if not p.burst)
    per_thread += sum(SPIN * 2 * sum(p.ns) * max(len(p.body), 1) + 20 * len(p.ns) for p in found if p.burst)
    if suite == "tensix-b":
        per_thread += sum((iterations + PRIME) * expanded_per_call(p.name) for p in found)
    return 10 * per_thread * len(VARIANTS[variant]) + 500_000


def measure(suite: str, variant: str, *, config: Mapping[str, Any] | None = None,
            base_blocks: int = DEFAULT_BASE_BLOCKS, engine: str = "fast") -> Measurement:
    """Run ``suite``'s program for ``variant`` on a ``tensix-tile`` machine (``config``
    merged into its configuration: ``{"cycles": "tensix"}`` times it with the tensix
    model, which gives each core its own time; without a ``cycles`` key the clock is the
    nominal one, the machine clock — the largest count of any agent — which is a core's
    own count only when one core runs (t1): at t2/t3 it reads whichever agent the
    scheduler ran furthest) and read every thread's result slots.  Raises
    :class:`ProbeError` when the run does not halt or an active core does not exit 0."""
    from tessera.isa.asm import assemble
    from tessera.machine import Machine
    from tessera_tensix.tile.arch import TILE_BH

    found = _check(suite, variant, base_blocks)
    text = source(suite, variant, base_blocks)
    settings = {**RUN_SETTINGS.get(suite, {}), **(config or {})}
    m = Machine(TILE_BH, host=_host(), config=settings, engine=engine, quantum=QUANTUM)
    for address, blob in assemble(m.arch, text, file=f"<probes {suite} {variant}>").segments:
        m.space.write_bytes(address, blob, force=True)
    slots = sum(len(p.points(base_blocks)) for p in found)
    for tid in VARIANTS[variant]:     # a slot the program never stores keeps this
        m.space.write_bytes(RESULTS + tid * RESULT_STRIDE, UNWRITTEN.to_bytes(4, "little") * slots, force=True)
    m.set_entry(0)
    label = f"probe suite {suite} {variant}"
    started = time.perf_counter()
    try:
        result = m.run(max_steps=step_budget(suite, variant, base_blocks), raise_on_budget=False)
    except Deadlock as exc:
        raise ProbeError(f"{label} did not halt: {exc}") from None
    seconds = time.perf_counter() - started
    if result.reason != "halted":
        detail = f" ({result.detail})" if getattr(result, "detail", None) else ""
        raise ProbeError(f"{label} did not halt: the run ended {result.reason}{detail}")
    for tid in VARIANTS[variant]:
        code = m.agent(f"trisc{tid}").exit_code
        if code != 0:
            raise ProbeError(f"{label}: RISCV T{tid} exited {code}, not 0")
    series: dict[tuple[str, int], Series] = {}
    for tid in VARIANTS[variant]:
        slot = RESULTS + tid * RESULT_STRIDE
        for probe in found:
            ns = probe.points(base_blocks)
            points = tuple((n, int(m.space.read(slot + 4 * k, 4))) for k, n in enumerate(ns))
            slot += 4 * len(ns)
            if any(c == UNWRITTEN for _n, c in points):
                raise ProbeError(f"{label}: {probe.name} on RISCV T{tid} left a result slot unwritten")
            if probe.solo and tid != SOLO_ISSUER:     # it spun; the benchmark reports no row
                continue
            series[probe.name, tid] = Series(probe.name, tid, probe.unroll, points)
    from tessera_cycles import report

    return Measurement(suite, variant, base_blocks, engine, settings, series, int(result.steps), seconds,
                       report(m))
