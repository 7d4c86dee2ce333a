"""Tile loads, stores and atomics (tile.md 5.1, 5.2): addressing, tmask, groups, faults."""

from __future__ import annotations

import numpy as np
import pytest
from tile_support import EXIT, machine, run, tile_bytes

from tessera.errors import UnhandledTrap

DATA = """
        .data
        .align 6
src:    .space 8192
dst:    .space 8192
"""
PATTERN = bytes(range(256)) * 32          # 8 KiB


def _prepared(body: str, config=None):
    m = machine(f"_start:\n        la a0, src\n        la a1, dst\n{body}\n{EXIT}{DATA}", config=config)
    m.space.write_bytes(m.symbols["src"], PATTERN)
    return m


def test_unit_stride_round_trip_with_tmask():
    m = _prepared("""
        tld.g.us t2, (a0), ts=2           # two registers, 2 KiB
        li t0, 0x55555555
        tcsrw zero, tmask, t0             # even granules only
        tst.g.us t2, (a1), tmask, ts=2
        twait.mem ld=0, st=0
""")
    assert m.run(max_steps=1000).reason == "halted"
    assert tile_bytes(m, 2) + tile_bytes(m, 3) == PATTERN[:2048]
    out = m.space.read_bytes(m.symbols["dst"], 2048)
    for g in range(64):                    # bit g mod 32 of tmask decides granule g
        want = PATTERN[32 * g:32 * g + 32] if g % 2 == 0 else bytes(32)
        assert out[32 * g:32 * g + 32] == want, g


def test_masked_load_granules_keep_the_register():
    m = _prepared("""
        tld.g.us t1, (a1)                 # zeros
        li t0, 1
        tcsrw zero, tmask, t0
        tld.g.us t1, (a0), 64, tmask      # only granule 0, from src+64
""")
    m.space.write_bytes(m.symbols["dst"], bytes([0xEE]) * 1024)
    m.run(max_steps=1000)
    t1 = tile_bytes(m, 1)
    assert t1[:32] == PATTERN[64:96] and t1[32:] == bytes([0xEE]) * (1024 - 32)


def test_stride_in_bytes_and_in_granules():
    body = """
        li t0, 64
        tld.g.st t1, (a0), t0             # granule g from src + 64*g
"""
    m = _prepared(body)
    m.run(max_steps=1000)
    t1 = tile_bytes(m, 1)
    assert all(t1[32 * g:32 * g + 32] == PATTERN[64 * g:64 * g + 32] for g in range(32))
    m = _prepared(body.replace("li t0, 64", "li t0, 2"), config={"tile.stride_unit": 32})
    m.run(max_steps=1000)
    assert tile_bytes(m, 1) == t1


def test_negative_stride_and_offset_register():
    m = _prepared("""
        li t0, -32
        li t1, 1024 - 32
        tld.g.st t1, (a0), t0, t1         # granule g from src + 992 - 32*g (offseten: rs3 = t1)
""")
    m.run(max_steps=1000)
    t1 = tile_bytes(m, 1)
    assert all(t1[32 * g:32 * g + 32] == PATTERN[992 - 32 * g:1024 - 32 * g] for g in range(32))


def test_index_vector_load_and_store_with_v0_mask():
    m = _prepared("""
        la a2, idx
        tld.g.us t9, (a2)                 # the index vector as tile data
        tmv.vt v2, t9, 0                  # v2 = 32 half-word offsets
        tmv.vt v0, t9, 1                  # v0 = the mask (second row of idx)
        tld.g.ix t1, (a0), v2, ew=h
        tst.g.ix t1, (a1), v2, ew=h, v0.t
""" + """
        j over
        .data
        .align 6
idx:    .space 1024
        .text
over:
""")
    offsets = [(31 - g) * 32 for g in range(32)]         # reversed granules
    idx = np.array(offsets, dtype="<u2").tobytes() + bytes([0x0F, 0, 0, 0]) + bytes(1024 - 68)
    m.space.write_bytes(m.symbols["idx"], idx)
    m.run(max_steps=1000)
    t1 = tile_bytes(m, 1)
    assert all(t1[32 * g:32 * g + 32] == PATTERN[offsets[g]:offsets[g] + 32] for g in range(32))
    out = m.space.read_bytes(m.symbols["dst"], 1024)
    for g in range(32):                    # v0 = 0x0f: only indices 0..3 store
        want = PATTERN[32 * g:32 * g + 32] if g >= 28 else bytes(32)
        assert out[32 * g:32 * g + 32] == want, g


def test_index_count_must_fit_the_vector():
    with pytest.raises(UnhandledTrap, match="64 granules need 64 indices"):
        run(f"_start:\n        la a0, src\n        tld.g.ix t2, (a0), v1, ts=2, ew=h\n{EXIT}{DATA}")


def test_shared_memory_round_trip_and_range_fault():
    m = _prepared("""
        tld.g.us t1, (a0)
        li a2, 0x100
        tst.s.us t1, (a2)
        tld.s.us t3, (a2)
""")
    m.run(max_steps=1000)
    assert tile_bytes(m, 3) == PATTERN[:1024]
    assert m.tile.pes[0].shmem.read_bytes(0x100, 1024) == PATTERN[:1024]
    with pytest.raises(UnhandledTrap, match=r"store/AMO access fault: tst.s.us: .* outside the shared memory"
                       r" .*value 0x3fc00"):
        run(f"_start:\n        li a2, 0x3fc00\n        tst.s.us t2, (a2), ts=2\n{EXIT}")


def test_misaligned_granule_traps_unless_allowed():
    src = f"_start:\n        la a0, src\n        tld.g.us t1, (a0), 8\n{EXIT}{DATA}"
    with pytest.raises(UnhandledTrap, match="load address misaligned"):
        run(src)
    m, result = run(src, config={"tile.misaligned": "allow"})
    assert result.reason == "halted"


def test_register_groups_must_be_aligned_and_inside_the_file():
    with pytest.raises(UnhandledTrap, match="group t1 of 2 registers is not aligned"):
        run(f"_start:\n        la a0, src\n        tld.g.us t1, (a0), ts=2\n{EXIT}{DATA}")
    with pytest.raises(UnhandledTrap, match=r"t254..t257 is beyond the 256 tile registers"):
        run(f"_start:\n        la a0, src\n        tld.g.us t254, (a0), ts=4\n{EXIT}{DATA}",
            config={"tile.tilesize_align": False})
    with pytest.raises(UnhandledTrap, match="tilesize code 4 is reserved"):
        run(f"_start:\n        la a0, src\n        .ace W1.tgmem.mem{{td=0, tilesize=4, rs1=10}}\n"
            f"        .ace W0.mem_us{{}}\n{EXIT}{DATA}")


def test_global_access_fault_is_precise():
    m = machine(f"_start:\n        li a0, 0x3ffc00\n        li a1, 7\n        tld.g.us t0, (a0), ts=2\n{EXIT}")
    with pytest.raises(UnhandledTrap, match=r"load access fault: .*address 0x400000 is not mapped"):
        m.run(max_steps=100)
    assert not m.tile.threads["hart0"].tiles.any()          # nothing was loaded


def test_tile_atomic_add_with_rtn_and_without():
    m = _prepared("""
        tld.g.us t1, (a1)                 # 1 in every 32-bit element (set below)
        tamo.g.add t1, (a0), rtn          # src[i] += 1; t1 = the old src
        tamo.g.add t1, (a1)               # dst[i] += old src[i]
""")
    m.space.write_bytes(m.symbols["dst"], np.ones(256, dtype="<u4").tobytes())
    m.run(max_steps=1000)
    old = np.frombuffer(PATTERN[:1024], dtype="<u4")
    assert np.array_equal(np.frombuffer(tile_bytes(m, 1), dtype="<u4"), old)
    assert np.array_equal(np.frombuffer(m.space.read_bytes(m.symbols["src"], 1024), dtype="<u4"),
                          (old + 1).astype("<u4"))
    assert np.array_equal(np.frombuffer(m.space.read_bytes(m.symbols["dst"], 1024), dtype="<u4"),
                          (old + 1).astype("<u4"))


def test_tile_atomic_fadd_fp32_and_min_shared():
    m = _prepared("""
        tld.g.us t1, (a0)
        tamo.g.fadd t1, (a1)
        tamo.g.fadd t1, (a1)
        li a2, 0x200
        tst.s.us t1, (a2)
        tld.g.us t2, (a1)
        tamo.s.min t2, (a2), ew=16
""")
    values = np.linspace(-3, 3, 256, dtype=np.float32)
    m.space.write_bytes(m.symbols["src"], values.tobytes())
    m.run(max_steps=1000)
    got = np.frombuffer(m.space.read_bytes(m.symbols["dst"], 1024), dtype=np.float32)
    assert np.array_equal(got, values + values)
    shared = np.frombuffer(m.tile.pes[0].shmem.read_bytes(0x200, 1024), dtype="<i2")
    want = np.minimum(np.frombuffer(values.tobytes(), dtype="<i2"), np.frombuffer((values + values).tobytes(),
                                                                                  dtype="<i2"))
    assert np.array_equal(shared, want)


def test_scalar_atomics_on_shared_memory():
    m, result = run(f"""_start:
        li a0, 0x40
        li a1, 5
        tsamo.add a2, a1, (a0), ew=64     # old 0 -> 5
        tsamo.add a3, a1, (a0), ew=64     # old 5 -> 10
        li a4, 10
        li a5, 99
        tsamo.cas a6, a5, (a0), a4, ew=64     # 10 == 10: store 99, a6 = 10
        tsamo.cas s2, a1, (a0), a4, ew=64     # 99 != 10: no store, s2 = 99
        li t0, -1
        tsred.add t0, (a0), 8, ew=32       # shared[0x48] += -1 (32-bit)
        tsamo.maxu s1, a1, (a0), ew=8      # byte at 0x40: 99 vs 5
{EXIT}""")
    hart = m.agent("hart0")
    assert (hart.x[12], hart.x[13], hart.x[16], hart.x[18]) == (0, 5, 10, 99)
    sh = m.tile.pes[0].shmem
    assert sh.read(0x40, 8) == 99 and sh.read(0x48, 4) == 0xFFFF_FFFF and hart.x[9] == 99
    with pytest.raises(UnhandledTrap, match="store/AMO address misaligned"):
        run(f"_start:\n        li a0, 0x41\n        tsamo.add a2, a1, (a0), ew=32\n{EXIT}")
    with pytest.raises(UnhandledTrap, match="atomic fadd has no 8-bit floating-point format"):
        run(f"_start:\n        li a0, 0x40\n        tsamo.fadd a2, a1, (a0), ew=8\n{EXIT}")


def test_memory_counters_go_up_and_down_in_eager_mode():
    m = _prepared("""
        tld.g.us t1, (a0)
        tcsrr s1, tgld_cnt
        tcsrr s2, tstatus
""")
    m.run(max_steps=100)
    hart = m.agent("hart0")
    assert hart.x[9] == 0 and hart.x[18] == 0b111
    assert m.agent("hart0.lsu").instret == 1


def test_pe_scoped_tile_registers_are_shared_by_the_threads_of_a_pe():
    m, result = run(f"""_start:
        tcsrr s0, tid
        bnez s0, reader
        li t0, 99
        tmv.tx t7, t0, 0, ew=d
        tsync 0, 0b11
        li a0, 0
        {EXIT}
reader: tsync 0, 0b11
        tmv.xt a0, t7, 0, ew=d          # thread 1 reads what thread 0 wrote
        {EXIT}""", config={"tile.threads_per_pe": 2, "tile.tile_rf_scope": "pe"})
    assert m.agent("hart1").exit_code == 99


def test_index_offsets_in_granules():
    m = _prepared("""
        la a2, idx
        tld.g.us t9, (a2)
        tmv.vt v2, t9, 0
        tld.g.ix t1, (a0), v2, ew=b
        j over
        .data
        .align 6
idx:    .space 1024
        .text
over:
""", config={"tile.index_unit": 32})
    m.space.write_bytes(m.symbols["idx"], bytes(range(31, -1, -1)) + bytes(992))
    m.run(max_steps=1000)
    t1 = tile_bytes(m, 1)
    assert all(t1[32 * g:32 * g + 32] == PATTERN[32 * (31 - g):32 * (32 - g)] for g in range(32))
