"""Tile CSRs (tile.md 5.4, Zicsr side effects) and Tile Move (5.6)."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from tile_support import EXIT, run, set_tile, tile_bytes

from tessera.errors import UnhandledTrap


def test_discovery_csrs_and_thread_ids():
    m, _ = run(f"""_start:
        tcsrr a0, tile_bytes
        tcsrr a1, num_tiles
        tcsrr a2, granule
        tcsrr a3, vlen
        tcsrr a4, tid
        tcsrr a5, pe_id
        tcsrr a6, cluster_id
        csrr  s1, mhartid
        beqz  a4, out
        li    a0, 0
out:    {EXIT}""", config={"tile.threads_per_pe": 2, "tile.pes_per_cluster": 2, "tile.vlen": 256})
    h0, h3 = m.agent("hart0"), m.agent("hart3")
    assert [h0.x[i] for i in range(10, 17)] == [1024, 256, 32, 256, 0, 0, 0]
    assert (h3.x[14], h3.x[15], h3.x[16], h3.x[9]) == (1, 1, 0, 3)


def test_zicsr_side_effects_and_read_only_csrs():
    m, _ = run(f"""_start:
        li t0, 0xf0
        tcsrw s1, tmask, t0            # s1 = old (0), tmask = 0xf0
        li t1, 0x0f
        tcsrs s2, tmask, t1            # s2 = 0xf0, tmask = 0xff
        tcsrc s3, tmask, t0            # s3 = 0xff, tmask = 0x0f
        tcsrsi s4, tgld_cnt, 0         # set with 0 does not write: reading a read-only CSR is fine
        tcsrci zero, trm, 0
        tcsrwi zero, tfmt, 7
        tcsrr s5, tfmt
        tcsrr s6, tmask
{EXIT}""")
    h = m.agent("hart0")
    assert [h.x[i] for i in (9, 18, 19, 20, 21, 22)] == [0, 0xF0, 0xFF, 0, 7, 0x0F]
    with pytest.raises(UnhandledTrap, match="tile CSR tgld_cnt is read-only"):
        run(f"_start:\n        li t0, 1\n        tcsrs zero, tgld_cnt, t0\n{EXIT}")
    with pytest.raises(UnhandledTrap, match="no tile CSR 0x07f"):
        run(f"_start:\n        tcsrr a0, 0x7f\n{EXIT}")


def test_csr_widths_mask_written_values():
    m, _ = run(f"_start:\n        li t0, -1\n        tcsrw zero, tfmt, t0\n        tcsrr a0, tfmt\n"
               f"        tcsrw zero, trm, t0\n        tcsrr a1, trm\n{EXIT}")
    assert (m.agent("hart0").x[10], m.agent("hart0").x[11]) == (7, 0x3F)


def test_vector_moves_with_broadcast_and_v0_mask():
    from tile_support import machine

    t1 = bytes(range(256)) * 4
    m = machine(f"""_start:
        tmv.vt v1, t1, 2                # v1 = chunk 2 of t1
        tmv.tv t2, v1, 0, bc            # every chunk of t2 = v1
        tmv.vt v0, t1, 0                # v0 = chunk 0 (mask bits)
        tmv.tv t3, v1, 1, ew=h, v0.t    # chunk 1 of t3: only the halfwords v0 selects
{EXIT}""")
    set_tile(m, 1, t1)
    m.run(max_steps=100)
    chunk2 = t1[128:192]
    assert tile_bytes(m, 2) == chunk2 * 16
    mask = int.from_bytes(t1[0:8], "little")
    t3 = tile_bytes(m, 3)
    for e in range(32):
        want = chunk2[2 * e:2 * e + 2] if mask >> e & 1 else b"\0\0"
        assert t3[64 + 2 * e:64 + 2 * e + 2] == want, e
    assert t3[:64] == bytes(64) and t3[128:] == bytes(896)


def test_nibble_moves():
    from tile_support import machine

    m = machine(f"""_start:
        tmv.vt v1, t1, 1, ew=n          # 32 bytes of t1 from offset 32, one nibble per byte
        tmv.tv t2, v1, 3, ew=n          # packed back at offset 96
{EXIT}""")
    t1 = bytes((i * 37) & 0xFF for i in range(1024))
    set_tile(m, 1, t1)
    m.run(max_steps=100)
    v1 = m.tile.threads["hart0"].vreg(1)
    assert v1 == bytes(x for b in t1[32:64] for x in (b & 0xF, b >> 4))
    assert tile_bytes(m, 2)[96:128] == t1[32:64]


def test_gpr_moves_extend_as_func6_says():
    m, _ = run(f"""_start:
        li t0, 0x89abcdef
        tmv.tx t1, t0, 1, ew=w          # word element 1
        tmv.xt a0, t1, 1, ew=w          # zero-extended
        tmv.xt a1, t1, 1, ew=ws         # sign-extended
        tmv.xt a2, t1, 2, ew=hs         # halfword 2 = 0xcdef, sign-extended
        tmv.xt a3, t1, 9, ew=ns         # nibble 9 = 0xe (high nibble of byte 4 = 0xef), sign-extended
        li a4, 3
        tmv.xt a5, t1, a4, ew=n         # index from a GPR: nibble 3 = 0x0
        li t2, 0x5
        tmv.tx t2, t2, 0, ew=h, bc      # every halfword of t2
{EXIT}""")
    h = m.agent("hart0")
    assert h.x[10] == 0x89ABCDEF and h.x[11] == 0xFFFF_FFFF_89AB_CDEF
    assert h.x[12] == 0xFFFF_FFFF_FFFF_CDEF and h.x[13] == 0xFFFF_FFFF_FFFF_FFFE
    assert h.x[15] == 0
    assert tile_bytes(m, 2) == b"\x05\x00" * 512


def test_fpr_moves_nan_box():
    from tile_support import machine

    m = machine(f"""_start:
        tmv.ft f1, t1, 0, ew=s
        tmv.ft f2, t1, 2, ew=h
        tmv.tf t2, f1, 3, ew=s
        tmv.ft f3, t2, 3, ew=s
        tmv.ft f4, t1, 1, ew=d
{EXIT}""")
    t1 = struct.pack("<f", 1.5) + struct.pack("<e", -2.0) + bytes(2) + struct.pack("<d", 3.25) + bytes(1008)
    set_tile(m, 1, t1)
    m.run(max_steps=100)
    f = m.tile.threads["hart0"].fpr
    assert f[1] == 0xFFFF_FFFF_3FC0_0000 and f[3] == f[1]
    assert f[2] == 0xFFFF_FFFF_FFFF_C000          # fp16 -2.0, NaN-boxed
    assert f[4] == struct.unpack("<Q", struct.pack("<d", 3.25))[0]
    assert np.frombuffer(tile_bytes(m, 2)[12:16], dtype="<f4")[0] == 1.5


def test_move_func6_is_decoded_per_direction():
    # 0b100011 is "store FP16" into the tile and "load FP64" out of it (tile.md Table 6)
    m, _ = run(f"""_start:
        .ace W2.move{{mvop=3, func6=35, reg=1}}
        .ace W0.move{{tile=1, index=0}}
{EXIT}""")
    assert m.agent("hart0").exit_code == 0
    with pytest.raises(UnhandledTrap, match="func6 100110 is not a fpr move out the tile"):
        run(f"_start:\n        .ace W2.move{{mvop=2, func6=38, reg=1}}\n        .ace W0.move{{tile=1}}\n{EXIT}")
    with pytest.raises(UnhandledTrap, match="func6 000001 is not a gpr move out the tile"):
        run(f"_start:\n        .ace W2.move{{mvop=0, func6=1, reg=1}}\n        .ace W0.move{{tile=1}}\n{EXIT}")


def test_move_index_out_of_range():
    with pytest.raises(UnhandledTrap, match="move index 16 is beyond the 16 chunks"):
        run(f"_start:\n        tmv.vt v1, t1, 16\n{EXIT}")
