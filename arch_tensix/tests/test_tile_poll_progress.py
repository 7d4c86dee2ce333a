"""A core is parked only when its polling is provably a loop without progress (tile/polls.py).

Parking waits for a word the core read to change, so it is right only for a loop that,
with memory unchanged, would go round for ever: the probe parks a core when it comes back
to a loop head with the same registers (the wall clock's left out) after loading a word.
These tile programs check both sides: finite loops that re-read the same few words (a
counted loop, a pointer chase, arithmetic after a barrier) run to their end, while real
polls — a tight one, one with a ``ckernel::wait``-like delay on the wall clock between
reads, an endless re-read of four words, an endless pointer chase — park, wake when
another core stores, and are reported as a deadlock when nobody ever does.

Each program follows ``tessera_tensix.examples.tile``: RISCV B at 0 releases T0..T2 from
soft reset and exits (or polls), T0..T2 start at their fixed pcs 0x6000 / 0xA000 / 0xE000.
"""

from __future__ import annotations

from typing import Any

import pytest
from tensix_tile_support import host

from tessera.errors import Deadlock
from tessera.isa.asm import assemble
from tessera.loaders import place
from tessera.machine import Machine
from tessera_tensix.examples.tile import STARTS
from tessera_tensix.tile import polls
from tessera_tensix.tile.arch import TILE_BH

RELEASE = """
    li t0, 0xFFB12000          # RISCV_DEBUG_REG_SOFT_RESET_0: release T0..T2
    sw zero, 0x1B0(t0)
"""
EXIT0 = """
    li a7, 93
    li a0, 0
    ecall
"""
#: L1 words the programs use (far above the code)
DATA = 0x2_0000
FLAG = 0x2_1000
#: a TRISC's private local RAM
LOCAL = 0xFFB0_0000
#: four words read over and over, 16 bytes apart, and their values
WORDS = (0x11, 0x202, 0x3003, 0x40004)


def run_tile(cores: dict[str, str], data: str = "", **run: Any) -> tuple[Machine, Any]:
    """Run a Blackhole tile program: ``cores['brisc']`` at 0 (default: release T0..T2 and
    exit), T0..T2's code at their start pcs (default: exit 0), ``data`` after them."""
    parts = [cores.get("brisc", RELEASE + EXIT0)]
    for i, start in enumerate(STARTS):
        parts.append(f".org {start:#x}\n" + cores.get(f"trisc{i}", EXIT0))
    program = assemble(TILE_BH, "\n".join(parts) + data, file="poll-progress.s", base=0)
    m = Machine(TILE_BH, host=host())
    for address, blob in program.segments:
        place(m, address, blob, what="the test program")
    m.set_entry(0)
    run.setdefault("max_steps", 2_000_000)
    return m, m.run(**run)


def four_words() -> str:
    return f".org {DATA:#x}\n" + "".join(f".word {w:#x}, 0, 0, 0\n" for w in WORDS)


def reread_loop(iterations: int | None) -> str:
    """64 loads of the four words per round, summed into a4 and a5; ``iterations`` rounds
    counted in t0 (a finite loop), or ``None`` for a loop that never ends."""
    loads = "".join(f"    lw a{i % 4}, {16 * (i % 4)}(t6)\n" for i in range(64))
    count = f"    li t0, {iterations}\n" if iterations is not None else ""
    back = "    addi t0, t0, -1\n    bnez t0, 1b\n" if iterations is not None else "    j 1b\n"
    return f"""
    li t6, {DATA:#x}
{count}1:
{loads}    add a4, a0, a1
    add a5, a2, a3
{back}    add a0, a4, a5
    andi a0, a0, 0xFF
    li a7, 93
    ecall
"""


def test_a_long_finite_loop_rereading_four_words_runs_to_its_end():
    iterations = 200
    m, result = run_tile({"trisc0": reread_loop(iterations)}, four_words())
    # 68 instructions a round: the loop outlasts several probes (PROBE_AFTER + PROBE_LENGTH each)
    assert iterations * 68 > 4 * (polls.PROBE_AFTER + polls.PROBE_LENGTH)
    assert result.reason == "halted", result.detail
    trisc0 = m.agent("trisc0")
    assert trisc0.exit_code == sum(WORDS) & 0xFF
    assert trisc0.instret >= iterations * 68      # it ran every round


def test_the_same_loop_without_an_end_parks_and_is_a_deadlock_naming_its_words():
    with pytest.raises(Deadlock) as err:
        run_tile({"trisc0": reread_loop(None)}, four_words())
    wait = err.value.waits["trisc0"]
    for i, value in enumerate(WORDS):
        assert f"{DATA + 16 * i:#x} (= {value:#x})" in wait
    assert "wall clock" not in wait


def pointer_chase(steps: int | None) -> str:
    """T0 links two nodes of its local RAM into a ring (A -> B -> A) and follows it ``steps``
    times (counted in t0), exiting with the offset of the node it ends on; ``None``: for ever."""
    count = f"    li t0, {steps}\n" if steps is not None else ""
    back = "    addi t0, t0, -1\n    bnez t0, 1b\n" if steps is not None else "    j 1b\n"
    return f"""
    li a1, {LOCAL + 0x100:#x}       # node A
    li a2, {LOCAL + 0x108:#x}       # node B
    sw a2, 0(a1)
    sw a1, 0(a2)
    mv a0, a1
{count}1:
    lw a0, 0(a0)
{back}    sub a0, a0, a1
    li a7, 93
    ecall
"""


def test_a_finite_pointer_chase_through_a_two_node_ring_runs_to_its_end():
    steps = 5001
    m, result = run_tile({"trisc0": pointer_chase(steps)})
    assert steps * 3 > 4 * (polls.PROBE_AFTER + polls.PROBE_LENGTH)
    assert result.reason == "halted", result.detail
    assert m.agent("trisc0").exit_code == (0x8 if steps % 2 else 0)   # the node it ended on


def test_an_endless_pointer_chase_through_an_unchanging_ring_parks():
    with pytest.raises(Deadlock) as err:
        run_tile({"trisc0": pointer_chase(None)})
    wait = err.value.waits["trisc0"]
    assert f"{LOCAL + 0x100:#x}" in wait and f"{LOCAL + 0x108:#x}" in wait


#: T1 counts ``n`` rounds (about 2n instructions), then stores 7 to FLAG and exits
def setter(n: int, value: int = 7) -> str:
    return f"""
    li t1, {n}
1:  addi t1, t1, -1
    bnez t1, 1b
    li t2, {FLAG:#x}
    li t1, {value}
    sw t1, 0(t2)
""" + EXIT0


def spin_then_sum(rounds: int, preamble: int = 0) -> str:
    """T0 counts ``preamble`` rounds, spins on FLAG until it is set (a barrier), then sums
    ``rounds`` .. 1 — a long loop that loads nothing — and exits with the sum plus the flag."""
    return f"""
    li t0, {preamble + 1}
0:  addi t0, t0, -1
    bnez t0, 0b
    li t2, {FLAG:#x}
1:  lw a1, 0(t2)
    beqz a1, 1b
    li t0, {rounds}
    li a0, 0
2:  add a0, a0, t0
    addi t0, t0, -1
    bnez t0, 2b
    add a0, a0, a1
    andi a0, a0, 0xFF
    li a7, 93
    ecall
"""


def test_arithmetic_right_after_a_barrier_runs_to_its_end():
    # the flag is set before T0 starts; T0's first probe begins just before it reads it
    # (PROBE_AFTER instructions in), so the probe sees one load and then only arithmetic
    rounds = 20_000
    preamble = (polls.PROBE_AFTER + polls.QUIET_LENGTH // 4) // 2
    brisc = f"""
    li t2, {FLAG:#x}
    li t1, 7
    sw t1, 0(t2)
""" + RELEASE + EXIT0
    m, result = run_tile({"brisc": brisc, "trisc0": spin_then_sum(rounds, preamble)})
    assert result.reason == "halted", result.detail
    assert m.agent("trisc0").exit_code == (rounds * (rounds + 1) // 2 + 7) & 0xFF


def test_arithmetic_after_a_barrier_set_late_runs_to_its_end():
    # T0 spins on FLAG until T1 sets it late (the spin parks), then sums
    rounds = 20_000
    m, result = run_tile({"trisc0": spin_then_sum(rounds), "trisc1": setter(30_000)})
    assert result.reason == "halted", result.detail
    trisc0 = m.agent("trisc0")
    assert trisc0.exit_code == (rounds * (rounds + 1) // 2 + 7) & 0xFF
    # the spin parked: T0 ran the sum (3 instructions a round) and little polling besides
    assert trisc0.instret < 3 * rounds + 10_000


def test_a_tight_poll_parks_while_waiting_and_wakes_with_the_stored_value():
    poll = f"""
    li t2, {FLAG:#x}
1:  lw a0, 0(t2)
    beqz a0, 1b
    li a7, 93
    ecall
"""
    cores = {"trisc0": poll, "trisc1": setter(40_000, value=9)}
    m, _ = run_tile(cores, max_steps=30_000, raise_on_budget=False)
    trisc0 = m.agent("trisc0")
    assert trisc0.status == "waiting" and f"memory at {FLAG:#x} (= 0x0)" in trisc0.wait_reason
    result = m.run(max_steps=2_000_000)
    assert result.reason == "halted" and trisc0.exit_code == 9
    # parked, it ran a few probes' worth, not the 80,000 instructions T1 counted for
    assert trisc0.instret < m.agent("trisc1").instret // 10


#: RISCV B's firmware loop (``ckernel::wait`` between polls): poll FLAG, and while it is 0
#: wait 1350 wall-clock cycles (the clock read into t3/a6 and then t1/a0 each round)
FIRMWARE_POLL = f"""
    li t0, 0xFFB12000
    sw zero, 0x1B0(t0)             # release T0..T2
    li t2, {FLAG:#x}
1:  lw a0, 0(t2)
    bnez a0, 3f
    lw a0, 0x1F0(t0)               # wall clock low (latches high)
    lw a6, 0x1F8(t0)
    addi t3, a0, 1350
    sltu a0, t3, a0
    add a6, a0, a6
2:  lw t1, 0x1F0(t0)
    lw a0, 0x1F8(t0)
    bltu a0, a6, 2b
    bne a6, a0, 1b
    bltu t1, t3, 2b
    j 1b
3:  li a7, 93
    ecall
"""


def test_a_poll_with_a_wall_clock_delay_between_reads_parks_and_wakes():
    m, result = run_tile({"brisc": FIRMWARE_POLL, "trisc0": setter(60_000, value=5)})
    assert result.reason == "halted", result.detail
    brisc = m.agent("brisc")
    assert brisc.exit_code == 5
    # unparked it would run as long as T0 counts (120,000 instructions): parked, a few rounds
    assert brisc.instret < m.agent("trisc0").instret // 5


def test_a_poll_with_a_wall_clock_delay_on_a_word_nobody_writes_is_a_deadlock():
    with pytest.raises(Deadlock) as err:
        run_tile({"brisc": FIRMWARE_POLL})
    assert f"memory at {FLAG:#x} (= 0x0) to change: it polls them and the wall clock" in err.value.waits["brisc"]


def test_a_clock_timed_loop_with_a_counter_is_not_parked():
    # reads a word and the clock every round, and counts: its state never repeats
    timed = f"""
    li t2, {FLAG:#x}
    li t0, 0xFFB12000
    li t4, 3000
    li a0, 0
1:  lw a1, 0(t2)
    lw t1, 0x1F0(t0)
    add a0, a0, a1
    addi t4, t4, -1
    bnez t4, 1b
    andi a0, a0, 0xFF
    li a7, 93
    ecall
"""
    data = f".org {FLAG:#x}\n.word 3\n"
    m, result = run_tile({"trisc0": timed}, data)
    assert result.reason == "halted", result.detail
    assert m.agent("trisc0").exit_code == (3000 * 3) & 0xFF


def test_a_word_that_reads_otherwise_mid_probe_makes_the_probe_forget_its_loop_heads():
    # a loop head seen before the word changed saw other memory: it may not count as a repeat
    m = Machine(TILE_BH, host=host())
    hart = m.agent("trisc0")
    polls.start(hart)
    hart.pc = STARTS[0]
    heads, reads = hart.probe_heads, hart.probe_reads
    assert polls._read(hart, reads, heads, FLAG, 4)
    assert not polls._repeats(hart, heads, 0)          # the first visit
    assert polls._read(hart, reads, heads, FLAG, 4)
    assert polls._repeats(hart, heads, 0)              # the same state, a load in between
    m.space.write_bytes(FLAG, (3).to_bytes(4, "little"))
    assert polls._read(hart, reads, heads, FLAG, 4) and reads[(FLAG, 4)] == 3
    assert not polls._repeats(hart, heads, 0)          # forgotten: a first visit again
    assert polls._read(hart, reads, heads, FLAG, 4)
    assert polls._repeats(hart, heads, 0)


def test_clock_registers_are_left_out_and_an_earlier_visit_with_fewer_counts():
    m = Machine(TILE_BH, host=host())
    hart = m.agent("trisc0")
    polls.start(hart)
    hart.pc = STARTS[0]
    heads, reads = hart.probe_heads, hart.probe_reads
    t1, t3, a0 = 6, 28, 10
    hart.x[t1], hart.x[t3], hart.x[a0] = 100, 200, 1
    assert not polls._repeats(hart, heads, 1 << t1)     # t1 from the clock, t3 not (yet)
    polls._read(hart, reads, heads, FLAG, 4)
    hart.x[t1], hart.x[t3] = 101, 201                   # both re-read from the clock
    assert polls._repeats(hart, heads, (1 << t1) | (1 << t3))
    polls._read(hart, reads, heads, FLAG, 4)
    hart.x[a0] = 2                                      # a register not from the clock moved on
    assert not polls._repeats(hart, heads, (1 << t1) | (1 << t3))
    polls._read(hart, reads, heads, FLAG, 4)
    hart.x[a0] = 1                                      # as at first, but t1 is no clock register now:
    assert not polls._repeats(hart, heads, 1 << t3)     # earlier visits had it as one, so no match


def test_a_run_cut_in_the_middle_of_a_probe_resumes_from_a_snapshot_exactly():
    cores = {"brisc": FIRMWARE_POLL, "trisc0": setter(60_000, value=5)}
    whole, _ = run_tile(cores)
    m, _ = run_tile(cores, max_steps=1500, raise_on_budget=False)
    assert m.agent("brisc").probe_heads                 # cut while probing, loop heads seen
    restored = Machine.restore(m.snapshot(), host=m.host)
    result = restored.run(max_steps=2_000_000)
    assert result.reason == "halted" and restored.agent("brisc").exit_code == 5
    assert restored.agent("brisc").instret == whole.agent("brisc").instret
