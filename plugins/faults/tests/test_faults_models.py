"""Every fault model changes exactly what it should, and nothing else.

The machine with a fault is compared with the same program run to the same point
without one: a fault at ``step:N`` fires when a pause cuts the run after N steps, so
running both to a budget of N steps shows the state right after the injection.
"""

from __future__ import annotations

import hashlib

import pytest
from faults_support import ENGINES, LOOP, SUM, differences, host, inject, outcome, registers, rv_machine

from tessera.errors import ConfigError
from tessera.machine import Machine


def ram(machine) -> bytes:
    return machine.space.read_bytes(0, 0x20000)


def at_step(source, spec, steps, engine="fast"):
    """(machine with the fault, machine without), both run exactly ``steps`` steps."""
    faulty, clean = rv_machine(source, engine), rv_machine(source, engine)
    record = inject(faulty, spec)
    for m in (faulty, clean):
        m.run(max_steps=steps, raise_on_budget=False)
    return faulty, clean, record


@pytest.mark.parametrize("engine", ENGINES)
def test_a_flip_changes_one_bit_of_one_register(engine):
    faulty, clean, record = at_step(SUM, "target=a0,bit=6,at=step:2", 2, engine)
    assert differences(registers(clean), registers(faulty)) == [("hart0.x", 10, 5, 5 ^ 64)]
    assert ram(faulty) == ram(clean)
    assert (record["status"], record["target"], record["bits"], record["old"], record["new"], record["step"]) == (
        "injected", "hart0.x[10]", [6], 5, 69, 2)


def test_a_flip_in_memory_changes_one_bit_of_one_byte():
    faulty, clean, record = at_step(SUM, "target=mem[0x101],bit=7,at=step:3", 3)   # after the store
    assert registers(faulty) == registers(clean)
    a, b = ram(clean), ram(faulty)
    assert [(i, x ^ y) for i, (x, y) in enumerate(zip(a, b)) if x != y] == [(0x101, 0x80)]
    assert record["target"] == "mem.ram[0x101]"


@pytest.mark.parametrize(("spread", "k"), [("adjacent", 3), ("random", 4)])
def test_k_bit_flips_touch_k_bits_adjacent_or_random_and_the_seed_decides(spread, k):
    chosen = set()
    for seed in range(6):
        faulty, clean, record = at_step(SUM, f"target=a1,k={k},spread={spread},seed={seed},at=step:4", 4)
        ((_file, index, old, new),) = differences(registers(clean), registers(faulty))
        mask = old ^ new
        assert index == 11 and bin(mask).count("1") == k
        bits = [b for b in range(32) if mask >> b & 1]
        assert record["bits"] == bits
        if spread == "adjacent":
            assert bits == list(range(bits[0], bits[0] + k))
        again, _clean, _ = at_step(SUM, f"target=a1,k={k},spread={spread},seed={seed},at=step:4", 4)
        assert registers(again) == registers(faulty)                # the same seed, the same bits
        chosen.add(tuple(bits))
    assert len(chosen) > 1                                            # other seeds, other bits


def test_random_and_zero_values():
    faulty, clean, record = at_step(SUM, "target=a0,model=random,seed=11,at=step:2", 2)
    ((_f, index, old, new),) = differences(registers(clean), registers(faulty))
    assert (index, old, record["new"]) == (10, 5, new) and new != old
    again, _c, _r = at_step(SUM, "target=a0,model=random,seed=11,at=step:2", 2)
    assert registers(again) == registers(faulty)
    faulty, clean, record = at_step(SUM, "target=t1,model=zero,at=step:2", 2)
    assert differences(registers(clean), registers(faulty)) == [("hart0.x", 6, 0x100, 0)]


def test_a_structure_without_an_entry_gets_a_random_one_never_a_hard_wired_one():
    hit = set()
    for seed in range(12):
        faulty, clean, record = at_step(SUM, f"target=hart0.x,bit=0,seed={seed},at=step:1", 1)
        ((_f, index, _old, _new),) = differences(registers(clean), registers(faulty))
        assert index != 0 and record["index"] == index
        hit.add(index)
    assert len(hit) > 3


@pytest.mark.parametrize("engine", ENGINES)
def test_stuck_at_holds_across_writes_in_its_window_and_not_after(engine):
    # t0 counts down 20, 19, ... (written every iteration); bit 0 stuck at 0 for 9 instructions
    machine = rv_machine(LOOP, engine)
    record = inject(machine, "target=t0,model=stuck0,bit=0,at=step:2,window=9")
    seen = []
    while machine.agent("hart0").status != "halted":
        machine.step()
        seen.append((record["status"], machine.agent("hart0").regs["x"][5]))
    window = [t0 for status, t0 in seen if status == "stuck"]         # from the fault, after step 2,
    assert len(window) == 1 + 9 and all(t0 % 2 == 0 for t0 in window)   # to 9 instructions later
    assert window == [20, 20, 18, 18, 18, 16, 16, 16, 14, 14]        # 19, 17, 15 never seen
    after = [t0 for status, t0 in seen if status == "injected"]
    assert any(t0 % 2 for t0 in after) and after[-1] == 0           # released: odd values again
    assert record["left"] == 0


def test_stuck_at_in_memory_holds_while_the_program_stores_there():
    source = """
        li   t1, 0x200
        li   t0, 8
    loop:
        sw   t0, 0(t1)
        lw   a1, 0(t1)
        add  a0, a0, a1
        addi t0, t0, -1
        bnez t0, loop
        li   a7, 93
        ecall
    """
    machine = rv_machine(source)
    inject(machine, "target=mem[0x200],model=stuck1,bit=4,at=step:2")
    assert outcome(machine)[:2] == ("halted", sum(v | 16 for v in range(1, 9)))
    assert machine.space.read_bytes(0x200, 1)[0] & 16                 # still stuck at the end


@pytest.mark.parametrize("engine", ENGINES)
def test_skip_leaves_the_instruction_undone_but_counted(engine):
    faulty, clean, record = at_step(SUM, "model=skip,at=step:4", 6, engine)   # skips `add a0, a0, a1`
    diff = differences(registers(clean), registers(faulty))
    assert diff == [("hart0.x", 10, 10, 5)]
    assert faulty.agent("hart0").instret == clean.agent("hart0").instret == 6
    assert faulty.agent("hart0").pc == clean.agent("hart0").pc
    assert (record["status"], record["pc"], record["agent"]) == ("injected", 0x10010, "hart0")


def patched(source, address, word, engine="fast"):
    machine = rv_machine(source, engine)
    machine.space.write(address, 4, word)
    return machine


@pytest.mark.parametrize("engine", ENGINES)
def test_a_corrupted_word_runs_as_that_word_would_and_memory_keeps_the_original(engine):
    # `add a0, a0, a1` (0x00b50533) with bit 5 flipped is `addi a0, a0, 11`
    machine = rv_machine(SUM, engine)
    original = machine.space.read(0x10010, 4)
    record = inject(machine, "target=insn,bit=5,at=pc:0x10010")
    got = outcome(machine)
    reference = patched(SUM, 0x10010, original ^ 32, engine)
    assert got == outcome(reference) == ("halted", 16, 7)
    assert registers(machine) == registers(reference)
    assert machine.space.read(0x10010, 4) == original
    assert (record["old"], record["new"], record["bits"]) == (original, original ^ 32, [5])


@pytest.mark.parametrize("engine", ENGINES)
def test_an_illegal_corrupted_word_takes_the_architecture_s_illegal_instruction_trap(engine):
    # flipping bit 0 of the add's opcode gives no RV32 instruction; a handler at 0x10100
    # stores mcause and mtval and exits with mcause
    source = """
        la   t2, handler
        csrw mtvec, t2
        li   a0, 5
        add  a0, a0, a0
        li   a7, 93
        ecall
        .org 0x100
    handler:
        csrr a0, mcause
        csrr a1, mtval
        li   t1, 0x300
        sw   a1, 0(t1)
        li   a7, 93
        ecall
    """
    machine = rv_machine(source, engine)
    add_at = 0x1000C
    word = machine.space.read(add_at, 4)
    inject(machine, f"target=insn,bit=0,at=pc:{add_at:#x}")
    got = outcome(machine)
    reference = patched(source, add_at, word ^ 1, engine)
    assert got == outcome(reference) and got[:2] == ("halted", 2)       # cause 2: illegal instruction
    assert machine.space.read(0x300, 4) == word ^ 1                     # mtval: the corrupted word
    assert machine.agent("hart0").traps == 1


def test_models_that_do_not_fit_their_target_are_refused():
    for spec, message in [("target=insn,model=stuck1,bit=0,at=step:1", "the instruction word takes flip"),
                          ("target=a0,model=skip,at=step:1", "skip skips the instruction"),
                          ("target=a0,bit=32,at=step:1", "bit=32: hart0.x has bits 0..31"),
                          ("target=a0,k=33,at=step:1", "k=33: hart0.x has 32 bits"),
                          ("target=x0,at=step:1", "holds no state")]:
        with pytest.raises(ConfigError, match=message):
            inject(rv_machine(SUM), spec)


def test_a_lane_of_an_rfphoenix_vector_register():
    h = host()
    machine = Machine(h.architecture("phoenix"), host=h, config={"lanes": 8, "threads": 1, "dram": 0x100000})
    before = hashlib.sha256(machine.agent("t0").vr.tobytes()).hexdigest()
    record = inject(machine, "target=t0.v[5,7],bit=31,at=step:0")
    machine.run(max_steps=0, raise_on_budget=False)               # the pause fires as the run starts
    vr = machine.agent("t0").vr
    assert int(vr[5, 7]) == 1 << 31 and int(vr.sum()) == 1 << 31
    assert hashlib.sha256(vr.tobytes()).hexdigest() != before and record["target"] == "t0.v[5,7]"


def test_a_dest_cell_and_an_lreg_lane_of_tensix():
    h = host()
    machine = Machine(h.architecture("tensix"), host=h)
    core = machine.ext["tensix"]
    lregs, dest = core.sfpu.lreg.copy(), core.dest.bits.copy()
    inject(machine, "target=dest[7,3],bit=15,at=step:0")
    inject(machine, "target=sfpu.lreg[2,30],model=random,seed=5,at=step:0")
    machine.run(max_steps=0, raise_on_budget=False)
    changed = (core.dest.bits != dest).nonzero()
    assert [(int(r), int(c)) for r, c in zip(*changed)] == [(7, 3)] and int(core.dest.bits[7, 3]) == 0x8000
    lanes = (core.sfpu.lreg != lregs).nonzero()
    assert [(int(r), int(c)) for r, c in zip(*lanes)] == [(2, 30)]
