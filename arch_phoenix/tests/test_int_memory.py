"""Loads, stores, vector/gather/scatter access, reservations and CACHE (spec 4.8, 5.1).

Machines here run with ``pma=False`` so a bad access is a plain bus error whatever
PMA table the MMU code installs; the trap path under test is the view's.
"""

from __future__ import annotations

import pytest
from int_support import M32, OP, PC, F, ls_word, machine, r2, run, thread, v, vget, vset

from tessera.control import Trap

DBE, UNIMP, PRIV, DBG = 60, 37, 53, 33
BUF = 0x2000
ROM = 0xFFFD_0000
UNMAPPED = 0x8000_0000


@pytest.fixture
def t():
    return thread(pma=False)


def mem(t, addr, n):
    return t.space.phys.read_bytes(addr, n)


def poke(t, addr, data):
    t.space.phys.write_bytes(addr, bytes(data))


def load(t, name, rt, ra, disp, sz=2, mask=0):
    return run(t, name, ls_word(OP[name], rt, ra, disp, sz=sz, mask=mask), value=disp)


def store(t, rs, ra, disp, sz=2, mask=0, name="store"):
    return run(t, name, ls_word(OP[name], rs, ra, disp, sz=sz, mask=mask), value=disp)


# ---------------------------------------------------------------------------- scalar sizes


@pytest.mark.parametrize("sz, nbytes", [(0, 1), (1, 2), (2, 4), (3, 4), (4, 4)])
def test_int_store_sizes_write_only_their_bytes(t, sz, nbytes):
    poke(t, BUF, [0xEE] * 8)
    t.wr(1, BUF)
    t.wr(2, 0x8877_6655)
    store(t, 2, 1, 0, sz=sz)
    assert mem(t, BUF, 8) == bytes([0x55, 0x66, 0x77, 0x88][:nbytes] + [0xEE] * (8 - nbytes))


@pytest.mark.parametrize("sz, signed, unsigned", [
    (0, 0xFFFF_FF81, 0x81), (1, 0xFFFF_8281, 0x8281), (2, 0x8483_8281, 0x8483_8281),
    (3, 0x8483_8281, 0x8483_8281), (4, 0x8483_8281, 0x8483_8281),
])
def test_int_load_sign_and_zero_extension(t, sz, signed, unsigned):
    poke(t, BUF, [0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88])
    t.wr(1, BUF)
    load(t, "load", 3, 1, 0, sz=sz)
    load(t, "loadu", 4, 1, 0, sz=sz)
    assert (t.gpr[3], t.gpr[4]) == (signed, unsigned)


def test_int_load_positive_values_are_not_extended(t):
    poke(t, BUF, [0x7F, 0x7F])
    t.wr(1, BUF)
    load(t, "load", 3, 1, 0, sz=0)
    assert t.gpr[3] == 0x7F
    load(t, "load", 3, 1, 0, sz=1)
    assert t.gpr[3] == 0x7F7F


@pytest.mark.parametrize("sz", [5, 6, 7])
def test_int_reserved_size_is_unimp(t, sz):
    t.wr(1, BUF)
    with pytest.raises(Trap) as exc:
        load(t, "load", 3, 1, 0, sz=sz)
    assert exc.value.cause == UNIMP
    with pytest.raises(Trap):
        store(t, 3, 1, 0, sz=sz)


def test_int_reserved_size_is_an_undefined_instruction(t):
    t.wr(1, BUF)
    with pytest.raises(Trap) as exc:
        load(t, "loadu", 3, 1, 0, sz=7)
    assert exc.value.info.get("undefined")  # lenient mode skips it like an undefined opcode


def test_int_unaligned_little_endian(t):
    t.wr(1, BUF)
    t.wr(2, 0x1122_3344)
    store(t, 2, 1, 3)
    assert mem(t, BUF + 3, 4) == bytes([0x44, 0x33, 0x22, 0x11])
    load(t, "loadu", 3, 1, 4, sz=1)
    assert t.gpr[3] == 0x2233


def test_int_negative_displacement_and_32_bit_wrap(t):
    t.wr(1, BUF + 0x10)
    t.wr(2, 0xAB)
    store(t, 2, 1, -0x10, sz=0)
    assert mem(t, BUF, 1) == b"\xab"
    t.wr(1, 0xFFFF_FFFF)
    load(t, "loadu", 3, 1, BUF + 1, sz=0)  # 0xFFFFFFFF + 0x2001 wraps to 0x2000
    assert t.gpr[3] == 0xAB


def test_int_load_into_r0_is_discarded(t):
    poke(t, BUF, [1, 2, 3, 4])
    t.wr(1, BUF)
    load(t, "load", 0, 1, 0)
    assert t.gpr[0] == 0


def test_int_store_of_r59_stores_the_pc(t):
    t.wr(1, BUF)
    store(t, 59, 1, 0)
    assert int.from_bytes(mem(t, BUF, 4), "little") == PC


def test_int_access_across_a_page_boundary(t):
    t.wr(1, 0x3FFE)
    t.wr(2, 0xA1B2_C3D4)
    store(t, 2, 1, 0)
    assert mem(t, 0x3FFE, 4) == bytes([0xD4, 0xC3, 0xB2, 0xA1])
    load(t, "load", 3, 1, 0)
    assert t.gpr[3] == 0xA1B2_C3D4


# ---------------------------------------------------------------------------- faults are precise


def test_int_store_to_rom_traps_and_writes_nothing(t):
    before = mem(t, ROM, 4)
    t.wr(1, ROM)
    t.wr(2, 0x1234_5678)
    with pytest.raises(Trap) as exc:
        store(t, 2, 1, 0)
    assert (exc.value.cause, exc.value.tval) == (DBE, ROM)
    assert mem(t, ROM, 4) == before


def test_int_load_from_unmapped_traps_and_keeps_rt(t):
    t.wr(1, UNMAPPED)
    t.wr(3, 0x5555)
    with pytest.raises(Trap) as exc:
        load(t, "load", 3, 1, 8)
    assert (exc.value.cause, exc.value.tval) == (DBE, UNMAPPED + 8)
    assert t.gpr[3] == 0x5555


def test_int_store_straddling_the_end_of_dram_writes_nothing(t):
    end = 1 << 20  # dram size in these tests; also a 16 KiB page boundary
    poke(t, end - 2, [0xEE, 0xEE])
    t.wr(1, end - 2)
    t.wr(2, M32)
    with pytest.raises(Trap) as exc:
        store(t, 2, 1, 0)
    assert exc.value.cause == DBE
    assert mem(t, end - 2, 2) == b"\xee\xee"


# ---------------------------------------------------------------------------- indexed


def test_int_indexed_forms(t):
    t.wr(1, BUF)
    t.wr(2, 0x10)
    t.wr(3, 0xFFFF_FF80)
    run(t, "stx", r2(F["stx"], 3, 1, 2, sz=1))
    assert mem(t, BUF + 0x10, 3) == b"\x80\xff\x00"
    run(t, "ldx", r2(F["ldx"], 4, 1, 2, sz=0))
    run(t, "ldux", r2(F["ldux"], 5, 1, 2, sz=0))
    assert (t.gpr[4], t.gpr[5]) == (0xFFFF_FF80, 0x80)


def test_int_indexed_address_wraps(t):
    poke(t, BUF, [0x42])
    t.wr(1, 0xFFFF_F000)
    t.wr(2, BUF + 0x1000)
    run(t, "ldux", r2(F["ldux"], 4, 1, 2, sz=0))
    assert t.gpr[4] == 0x42


# ---------------------------------------------------------------------------- contiguous vectors


def words(t, addr, n):
    data = mem(t, addr, 4 * n)
    return [int.from_bytes(data[4 * i:4 * i + 4], "little") for i in range(n)]


def test_int_vector_contiguous_store_and_load(t):
    vset(t, 1, [0x100 + i for i in range(16)])
    t.wr(2, BUF)
    store(t, v(1), 2, 4, sz=0)  # Sz is ignored: 32 bits per lane
    assert words(t, BUF + 4, 16) == [0x100 + i for i in range(16)]
    load(t, "load", v(3), 2, 4)
    assert vget(t, 3) == [0x100 + i for i in range(16)]


def test_int_vector_store_partial_mask_writes_enabled_lanes_only(t):
    poke(t, BUF, [0xEE] * 64)
    vset(t, 1, list(range(16)))
    t.wr(2, BUF)
    t.wr(48, 0b1000_0000_0000_0011)
    store(t, v(1), 2, 0, mask=48)
    got = words(t, BUF, 16)
    assert got == [0, 1] + [0xEEEE_EEEE] * 13 + [15]


def test_int_vector_load_partial_mask_merges(t):
    poke(t, BUF, list(range(64)))
    vset(t, 3, [7] * 16)
    t.wr(2, BUF)
    t.wr(48, 0b10)
    load(t, "load", v(3), 2, 0, mask=48)
    assert vget(t, 3) == [7, 0x0706_0504] + [7] * 14


def test_int_vector_all_zero_mask_is_a_no_op_even_at_a_bad_address(t):
    t.wr(2, UNMAPPED)
    t.wr(48, 0)
    vset(t, 3, [7] * 16)
    load(t, "load", v(3), 2, 0, mask=48)
    store(t, v(3), 2, 0, mask=48)
    assert vget(t, 3) == [7] * 16


def test_int_vector_all_one_mask(t):
    vset(t, 1, [9] * 16)
    t.wr(2, BUF)
    t.wr(48, M32)
    store(t, v(1), 2, 0, mask=48)
    assert words(t, BUF, 16) == [9] * 16


def test_int_vector_store_to_rom_is_all_or_nothing(t):
    # lanes 0..11 land in scratch RAM, lanes 12..15 in the ROM: nothing may be written
    scratch_end = 0xFFFD_0000
    base = scratch_end - 48
    poke(t, base, [0xEE] * 48)
    vset(t, 1, [1] * 16)
    t.wr(2, base)
    with pytest.raises(Trap) as exc:
        store(t, v(1), 2, 0)
    assert (exc.value.cause, exc.value.tval) == (DBE, scratch_end)
    assert mem(t, base, 48) == b"\xee" * 48


def test_int_vector_load_fault_keeps_the_register(t):
    vset(t, 3, [7] * 16)
    t.wr(2, (1 << 20) - 8)  # lanes 2.. fall off the end of dram
    with pytest.raises(Trap):
        load(t, "load", v(3), 2, 0)
    assert vget(t, 3) == [7] * 16


def test_int_vector_four_lanes():
    t4 = thread(pma=False, lanes=4)
    vset(t4, 1, [1, 2, 3, 4])
    t4.wr(2, BUF)
    store(t4, v(1), 2, 0)
    assert words(t4, BUF, 5) == [1, 2, 3, 4, 0]


# ---------------------------------------------------------------------------- gather / scatter


def test_int_gather_with_vector_base(t):
    for i in range(16):
        poke(t, BUF + 0x100 * i + 8, (0x1000 + i).to_bytes(4, "little"))
    vset(t, 1, [BUF + 0x100 * i for i in range(16)])
    load(t, "load", v(3), v(1), 8)
    assert vget(t, 3) == [0x1000 + i for i in range(16)]


def test_int_gather_skips_masked_lanes_with_bad_addresses(t):
    poke(t, BUF, (0xCAFE).to_bytes(4, "little"))
    vset(t, 1, [BUF] + [UNMAPPED] * 15)
    vset(t, 3, [7] * 16)
    t.wr(48, 1)
    load(t, "load", v(3), v(1), 0, mask=48)
    assert vget(t, 3) == [0xCAFE] + [7] * 15


def test_int_gather_fault_reports_the_lane_address(t):
    vset(t, 1, [BUF, BUF + 4, UNMAPPED + 0x40] + [BUF] * 13)
    vset(t, 3, [7] * 16)
    with pytest.raises(Trap) as exc:
        load(t, "load", v(3), v(1), 0)
    assert exc.value.tval == UNMAPPED + 0x40
    assert vget(t, 3) == [7] * 16


def test_int_indexed_gather_scalar_base_vector_index(t):
    poke(t, BUF, list(range(64)))
    t.wr(1, BUF)
    vset(t, 2, [4 * (15 - i) for i in range(16)])
    run(t, "ldx", r2(F["ldx"], v(3), 1, v(2)))
    assert vget(t, 3) == words(t, BUF, 16)[::-1]


def test_int_indexed_gather_vector_base_scalar_index(t):
    poke(t, BUF, list(range(64)))
    vset(t, 1, [BUF + 4 * i for i in range(16)])
    t.wr(2, 4)
    run(t, "ldx", r2(F["ldx"], v(3), v(1), 2))
    assert vget(t, 3)[:15] == words(t, BUF + 4, 15)


def test_int_scatter_vector_base_and_vector_index(t):
    vset(t, 1, [BUF] * 16)
    vset(t, 2, [8 * i for i in range(16)])
    vset(t, 3, [0x300 + i for i in range(16)])
    t.wr(48, 0x00FF)
    run(t, "stx", r2(F["stx"], v(3), v(1), v(2), mask=48))
    got = words(t, BUF, 32)
    assert got[0:16:2] == [0x300 + i for i in range(8)]
    assert got[16:] == [0] * 16


def test_int_scatter_broadcasts_a_scalar_source(t):
    vset(t, 1, [BUF + 0x10 * i for i in range(16)])
    t.wr(3, 0xBEEF)
    store(t, 3, v(1), 0)
    assert [words(t, BUF + 0x10 * i, 1)[0] for i in range(16)] == [0xBEEF] * 16


def test_int_scatter_fault_writes_nothing(t):
    vset(t, 1, [BUF + 4 * i for i in range(15)] + [ROM])
    vset(t, 3, [1] * 16)
    with pytest.raises(Trap) as exc:
        store(t, v(3), v(1), 0)
    assert exc.value.tval == ROM
    assert words(t, BUF, 15) == [0] * 15


def test_int_scalar_destination_with_vector_address_reads_lane_0(t):
    poke(t, BUF, [0xFE, 0xFF])
    vset(t, 1, [BUF] + [UNMAPPED] * 15)
    load(t, "load", 3, v(1), 0, sz=1)
    assert t.gpr[3] == 0xFFFF_FFFE


# ---------------------------------------------------------------------------- reservations


def test_int_ldsr_reserves_the_granule_and_stcr_clears_it_everywhere():
    m = machine(pma=False)
    t0, t1, t2 = m.agents[:3]
    poke(t0, BUF + 0x44, (0x1234).to_bytes(4, "little"))
    t0.wr(1, BUF + 0x44)
    run(t0, "ldsr", ls_word(OP["ldsr"], 3, 1, 0, sz=0), value=0)  # always a tetra
    assert t0.gpr[3] == 0x1234
    assert t0.reservation == BUF + 0x40
    t1.reservation = BUF + 0x40
    t2.reservation = BUF + 0x80
    t1.wr(1, BUF + 0x7C)
    t1.wr(2, 0xABCD)
    run(t1, "stcr", ls_word(OP["stcr"], 2, 1, 0), value=0)
    assert words(t1, BUF + 0x7C, 1) == [0xABCD]
    assert (t0.reservation, t1.reservation, t2.reservation) == (None, None, BUF + 0x80)


def test_int_stcr_straddling_two_granules_clears_both():
    m = machine(pma=False)
    t0, t1 = m.agents[:2]
    t0.reservation = BUF + 0x40
    t1.reservation = BUF + 0x80
    t0.wr(1, BUF + 0x7E)
    run(t0, "stcr", ls_word(OP["stcr"], 2, 1, 0), value=0)
    assert (t0.reservation, t1.reservation) == (None, None)


def test_int_indexed_reservation_forms(t):
    t.wr(1, BUF)
    t.wr(2, 0x84)
    t.wr(3, 77)
    run(t, "stcrx", r2(F["stcrx"], 3, 1, 2))
    run(t, "ldsrx", r2(F["ldsrx"], 4, 1, 2))
    assert t.gpr[4] == 77 and t.reservation == BUF + 0x80


def test_int_stcr_fault_keeps_reservations(t):
    t.reservation = ROM
    t.wr(1, ROM)
    with pytest.raises(Trap):
        run(t, "stcr", ls_word(OP["stcr"], 2, 1, 0), value=0)
    assert t.reservation == ROM


def test_int_vector_reservation_is_unimp(t):
    with pytest.raises(Trap) as exc:
        run(t, "ldsr", ls_word(OP["ldsr"], v(3), 1, 0), value=0)
    assert exc.value.cause == UNIMP


# ---------------------------------------------------------------------------- CACHE


def cache_word(ic, dc, ra=1, disp=0):
    return ls_word(OP["cache"], (dc << 3) | ic, ra, disp)


def test_int_cache_is_a_functional_no_op(t):
    poke(t, BUF, [1, 2, 3, 4])
    t.wr(1, BUF)
    before = list(t.gpr)
    for ic, dc in [(0, 0), (1, 0), (2, 4), (0, 3), (0, 1), (0, 2)]:
        assert run(t, "cache", cache_word(ic, dc), value=0) is None
    run(t, "cachex", r2(F["cachex"], 1, 1, 0))
    assert t.gpr == before and mem(t, BUF, 4) == b"\x01\x02\x03\x04"


def test_int_cache_line_commands_translate_the_address(t, monkeypatch):
    seen = []

    def translate(va, access):
        seen.append(va)
        raise Trap(58, va, name="data page fault")

    monkeypatch.setattr(t.space, "translate", translate)
    t.wr(1, BUF)
    run(t, "cache", cache_word(2, 4), value=0)  # invalidate-all commands ignore the address
    assert seen == []
    with pytest.raises(Trap) as exc:
        run(t, "cache", cache_word(1, 0), value=0x20)
    assert exc.value.tval == BUF + 0x20
    with pytest.raises(Trap):
        run(t, "cache", cache_word(0, 3), value=0)


def test_int_cache_outside_machine_mode_is_privileged(t):
    t.status_word = t.status_word & ~(3 << 10)  # user mode
    with pytest.raises(Trap) as exc:
        run(t, "cache", cache_word(0, 0), value=0)
    assert exc.value.cause == PRIV


def test_int_cachex_outside_machine_mode_is_privileged(t):
    t.status_word = (t.status_word & ~(3 << 10)) | (2 << 10)  # hypervisor mode
    with pytest.raises(Trap) as exc:
        run(t, "cachex", r2(F["cachex"], 1, 1, 0))
    assert exc.value.cause == PRIV


# ---------------------------------------------------------------------------- data breakpoints


def debug_on(t, address, kind):
    """Enable DBAD0 at ``address`` for thread 0: kind 1 = stores, 3 = loads or stores."""
    shared = t.shared
    shared.dbad[0] = address
    shared.dbcr = 1 | kind << 8 | t.tid << 28


def test_int_store_breakpoint_fires_before_the_store(t):
    debug_on(t, BUF + 8, 1)
    t.wr(1, BUF)
    t.wr(2, 0xFFFF)
    with pytest.raises(Trap) as exc:
        store(t, 2, 1, 8)
    assert (exc.value.cause, exc.value.tval) == (DBG, BUF + 8)
    assert mem(t, BUF + 8, 4) == bytes(4) and t.shared.dbsr & 1
    load(t, "load", 3, 1, 8)  # a store-only breakpoint ignores loads


def test_int_load_breakpoint_on_a_gather_lane_keeps_the_register(t):
    debug_on(t, BUF + 0x30, 3)
    vset(t, 1, [BUF + 0x10 * i for i in range(16)])
    vset(t, 3, [7] * 16)
    with pytest.raises(Trap) as exc:
        load(t, "load", v(3), v(1), 0)
    assert (exc.value.cause, exc.value.tval) == (DBG, BUF + 0x30)
    assert vget(t, 3) == [7] * 16


def test_int_scatter_breakpoint_writes_nothing(t):
    debug_on(t, BUF + 0x3C, 1)
    t.wr(2, BUF)
    vset(t, 1, [5] * 16)
    with pytest.raises(Trap) as exc:
        store(t, v(1), 2, 0)
    assert exc.value.cause == DBG
    assert words(t, BUF, 16) == [0] * 16
