"""Translation and the engine's decode cache: code runs through the MMU, and changes are seen."""

from __future__ import annotations

from mmu_support import (
    HALT,
    MACHINE,
    OPS,
    RUN_ARCH,
    USER,
    R,
    Tree,
    W,
    X,
    ldi,
    machine,
    phys_write,
    ptbr,
    put,
    put_code,
    selector,
    set_mode,
    set_of,
    set_vec,
    tlb_entry,
    tlb_ins,
    v,
)

from tessera.engine.agent import RUNNABLE
from tessera.machine import Machine
from tessera_phoenix import causes
from tessera_phoenix.mmu.pma import UNLOCKED

VA = 0x0040_0000
PA1, PA2, PA3 = 0x1_0000, 0x2_0000, 0x3_0000


def user_machine(**config):
    m = machine(arch=RUN_ARCH, threads=1, **config)
    t = m.agents[0]
    t.ptbr = ptbr(s=True)
    set_mode(t, USER)
    t.space.flush()
    return m, t


def rerun(m, t, pc):
    t.status = RUNNABLE
    t.pc = pc
    return m.run(max_steps=100)


def test_code_runs_from_a_translated_address():
    m, t = user_machine()
    put(t, 0, VA, PA1, R | X)
    put_code(t, PA1 + 0x100, [ldi(1, 0x123), HALT])
    result = rerun(m, t, VA + 0x100)
    assert result.reason == "halted" and t.gpr[1] == 0x123 and t.traps == 0


def test_remapping_a_code_page_with_tlbrw_runs_the_new_code():
    m, t = user_machine()
    put_code(t, PA1, [ldi(1, 1), HALT])
    put_code(t, PA2, [ldi(1, 2), HALT])
    put(t, 0, VA, PA1, R | X)
    rerun(m, t, VA)
    assert t.gpr[1] == 1
    # what needs flushing is the decode cache: a silent TLB change is not seen
    t.shared.mmu.tlb.write(0, set_of(VA), tlb_entry(VA, PA2, R | X))
    rerun(m, t, VA)
    assert t.gpr[1] == 1
    # TLBRW (machine mode, as the handler would run it) makes every thread re-decode
    set_mode(t, MACHINE)
    set_vec(t, 6, tlb_entry(VA, PA2, R | X))
    t.wr(9, selector(0, set_of(VA)))
    OPS["tlbrw"](t, tlb_ins(1, v(7), 9, v(6)))
    set_mode(t, USER)
    t.space.flush()                       # RTI does this when it changes the mode
    rerun(m, t, VA)
    assert t.gpr[1] == 2


def test_eviction_by_a_hardware_fill_drops_stale_decodes():
    m, t = user_machine()
    tree = Tree(t)
    t.ptbr = tree.ptbr()                  # fixed policy: every fill replaces way 0
    t.space.flush()
    other = VA + (1 << 24)                # same TLB set
    tree.map(VA, PA1, R | X)
    tree.map(other, PA2, R | X)
    put_code(t, PA1, [ldi(1, 1), HALT])
    put_code(t, PA2, [ldi(1, 2), HALT])
    put_code(t, PA3, [ldi(1, 3), HALT])
    rerun(m, t, VA)
    assert t.gpr[1] == 1
    rerun(m, t, other)                    # evicts VA's entry
    assert t.gpr[1] == 2
    tree.map(VA, PA3, R | X)              # the OS changes the table while VA is not cached
    rerun(m, t, VA)
    assert t.gpr[1] == 3


def test_store_through_another_mapping_invalidates_decoded_code():
    m, t = user_machine()
    alias = 0x0080_0000
    put(t, 0, VA, PA1, R | X)
    put(t, 1, alias, PA1, R | W)
    put_code(t, PA1, [ldi(1, 1), HALT])
    rerun(m, t, VA)
    assert t.gpr[1] == 1
    t.space.write(alias, 6, ldi(1, 0x55))   # data store to the same physical code
    rerun(m, t, VA)
    assert t.gpr[1] == 0x55


def test_instruction_straddling_two_pages_fetches_both_halves():
    m, t = user_machine()
    put(t, 0, VA, PA1, R | X)
    put(t, 0, VA + 0x4000, PA3, R | X)    # next virtual page, physically far away
    word = ldi(1, 0x3C3)
    phys_write(t, PA1 + 0x3FFE, 2, word & 0xFFFF)
    phys_write(t, PA3, 4, word >> 16)
    phys_write(t, PA3 + 4, 6, HALT)
    for _ in range(2):
        t.gpr[1] = 0
        result = rerun(m, t, VA + 0x3FFE)
        assert result.reason == "halted" and t.gpr[1] == 0x3C3


def test_fetch_miss_takes_the_tlb_exception_at_the_instruction():
    m, t = user_machine()
    t.shared.tvec[3] = 0xFFFC_0000
    phys_write(t, 0xFFFC_0000, 6, HALT)   # handler (user mode → offset 0)
    result = rerun(m, t, VA + 0x10)
    assert result.reason == "halted"
    assert t.cause[USER] == causes.TLB and t.badaddr[USER] == VA + 0x10
    assert t.ip_stack[0] == VA + 0x10 and t.mode == MACHINE


def test_postfix_lookahead_before_an_unmapped_page_does_not_fault():
    m, t = user_machine()
    put(t, 0, VA, PA1, R | X)
    last = VA + 0x4000 - 6
    phys_write(t, PA1 + 0x4000 - 6, 6, HALT)
    result = rerun(m, t, last)
    assert result.reason == "halted" and t.traps == 0
    assert t._filler.cache[last].peeked is None


def test_machine_mode_keeps_its_decodes_across_a_no_op_flush():
    m = machine(arch=RUN_ARCH, threads=1)
    t = m.agents[0]
    put_code(t, 0x100, [ldi(1, 4), HALT])
    rerun(m, t, 0x100)
    cache = t._filler.cache
    assert len(cache) == 2
    t.space.flush()                       # e.g. an exception taken from machine mode
    assert len(cache) == 2
    t.space.flush(force=True)
    assert len(cache) == 0


def test_pma_change_drops_decodes_so_fetch_rights_are_rechecked():
    m = machine(arch=RUN_ARCH, threads=1)
    t = m.agents[0]
    put_code(t, 0xFFFC_0100, [ldi(1, 4), HALT])
    t.shared.tvec[3] = 0x200
    put_code(t, 0x260, [HALT])            # handler for exceptions from machine mode
    rerun(m, t, 0xFFFC_0100)
    assert t.gpr[1] == 4 and t.traps == 0
    win = 0xFF9F_0000 + 0x40 * 4
    t.space.write(win + 4 * 14, 4, UNLOCKED)
    t.space.write(win + 4 * 8, 4, 0x6)    # scratch RAM: no execute
    t.gpr[1] = 0
    rerun(m, t, 0xFFFC_0100)
    assert t.gpr[1] == 0 and t.cause[MACHINE] == causes.PMA
    assert t.badaddr[MACHINE] == 0xFFFC_0100


def test_translated_run_survives_a_snapshot():
    m, t = user_machine()
    tree = Tree(t)
    t.ptbr = tree.ptbr(al=2)
    t.space.flush()
    tree.map(VA, PA1, R | X)
    put_code(t, PA1, [ldi(1, 8), HALT])
    rerun(m, t, VA)
    m2 = Machine.restore(m.snapshot(), architectures=[m.arch])
    t2 = m2.agents[0]
    assert t2.shared.mmu.tlb.entries() == t.shared.mmu.tlb.entries()
    assert t2.shared.mmu.tlb.rng == t.shared.mmu.tlb.rng
    t2.gpr[1] = 0
    result = rerun(m2, t2, VA)
    assert result.reason == "halted" and t2.gpr[1] == 8
