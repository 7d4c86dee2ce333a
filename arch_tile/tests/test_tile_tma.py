"""TMA (tile.md 5.3): tensor maps, boxes with OOB fill, stores, multicast, completions, mbarriers."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from tile_support import EXIT, machine

from tessera.errors import UnhandledTrap

DATA = """
        .data
        .align 7
tmap:   .space 128
coords: .space 64
tensor: .space 4096
out:    .space 4096
"""
SETUP = """
        la a0, tmap
        la a1, coords
        tld.g.us t9, (a1), -64          # the 64 bytes before coords do not matter, coords are row 1
        tmv.vt v1, t9, 1
        la a2, tensor
        la a3, out
"""


def tensor_map(base: int, elem: int, dims: list[int], strides: list[int], box: list[int], nan: bool = False
               ) -> bytes:
    out = bytearray(128)
    struct.pack_into("<QII", out, 0, base, elem, len(dims))
    for d, v in enumerate(dims):
        struct.pack_into("<Q", out, 16 + 8 * d, v)
    for d, v in enumerate(strides):
        if d:
            struct.pack_into("<Q", out, 48 + 8 * d, v)
    for d, v in enumerate(box):
        struct.pack_into("<I", out, 80 + 4 * d, v)
    struct.pack_into("<I", out, 96, int(nan))
    return bytes(out)


def _machine(body: str, *, coords: list[int], box: list[int] | None = None, nan: bool = False,
             config: dict | None = None):
    m = machine(f"_start:\n{SETUP}\n{body}\n{EXIT}{DATA}", config=config)
    tensor = np.arange(16 * 16, dtype="<u4").reshape(16, 16)          # 16 x 16 words
    m.space.write_bytes(m.symbols["tensor"], tensor.tobytes())
    m.space.write_bytes(m.symbols["tmap"], tensor_map(m.symbols["tensor"], 4, [16, 16], [4, 64], box or [8, 4],
                                                      nan))
    lanes = [c & 0xFFFF_FFFF for c in coords] + [0] * (16 - len(coords))
    m.space.write_bytes(m.symbols["coords"], struct.pack("<16I", *lanes))
    return m, tensor


def test_two_dimensional_box_with_zero_fill():
    m, tensor = _machine("tma.tiled zero, a0, v1, dim=2, srctm, dst=shared", coords=[12, -1])
    assert m.run(max_steps=1000).reason == "halted"
    got = np.frombuffer(m.tile.pes[0].shmem.read_bytes(0, 8 * 4 * 4), dtype="<u4").reshape(4, 8)
    want = np.zeros((4, 8), dtype="<u4")
    for r in range(4):
        for c in range(8):
            y, x = r - 1, 12 + c
            if 0 <= y < 16 and 0 <= x < 16:
                want[r, c] = tensor[y, x]
    assert np.array_equal(got, want)


def test_nan_fill_box_override_and_group_wait():
    m, tensor = _machine("tma.tiled zero, a0, v1, dim=2, srctm, dst=shared, group=5\n        twait.tma 5",
                         coords=[-2, 14, 0, 0, 4, 4], nan=True)
    m.run(max_steps=1000)
    got = np.frombuffer(m.tile.pes[0].shmem.read_bytes(0, 64), dtype="<u4").reshape(4, 4)
    assert got[0, 0] == 0x7FFF_FFFF and got[0, 2] == tensor[14, 0] and got[2, 3] == 0x7FFF_FFFF
    assert m.tile.threads["hart0"].completion.counts.get("tma.g5") is None


def test_tiled_store_skips_out_of_bounds_elements():
    m, tensor = _machine("tma.tiled zero, a0, v1, dim=2, srctm, dst=shared\n"
                         "        tma.tiled a0, zero, v1, dim=2, dsttm, src=shared", coords=[10, 13])
    # load the box at (10, 13), store it back: in-bounds elements unchanged, nothing written outside
    m.space.write_bytes(m.symbols["out"], b"\xAA" * 64)
    m.run(max_steps=1000)
    assert np.array_equal(np.frombuffer(m.space.read_bytes(m.symbols["tensor"], 1024), dtype="<u4").reshape(16, 16),
                          tensor)
    assert m.space.read_bytes(m.symbols["out"], 64) == b"\xAA" * 64


def test_linear_copy_with_tmask():
    m, tensor = _machine("""
        li t0, 128
        tmv.tx t8, t0, 0, ew=w
        tmv.vt v2, t8, 0
        li t1, 0b1010
        tcsrw zero, tmask, t1
        tma.linear a3, a2, v2, tmask
""", coords=[])
    m.run(max_steps=1000)
    out = m.space.read_bytes(m.symbols["out"], 128)
    src = tensor.tobytes()[:128]
    assert out == bytes(32) + src[32:64] + bytes(32) + src[96:128]


def test_multicast_to_the_pes_of_a_cluster_signals_each_mbarrier():
    cfg = {"tile.threads_per_pe": 1, "tile.pes_per_cluster": 4, "tile.mbar_instructions": True}
    m, tensor = _machine("""
        tcsrr t0, pe_id
        bnez t0, done                   # PE 0 issues for the whole cluster
        li s1, 0x400                    # the mbarrier, same offset in every PE's shared memory
        li s2, 1
        li s3, 128                      # 8 x 4 words
        tmbar.init s1, s2
        tmbar.arrive_tx s4, s1, s3      # this PE's barrier: arrival + 128 bytes expected
        tma.tiled zero, a0, v1, dim=2, srctm, dst=shared, multicast, mbar=s1
        tmbar.try_wait s5, s1, zero     # phase 0 complete?
done:
""", coords=[0, 0], config=cfg)
    m.run(max_steps=1000)
    first = m.tile.pes[0].shmem.read_bytes(0, 128)
    assert first == tensor[:4, :8].tobytes()
    for pe in m.tile.pes:
        assert pe.shmem.read_bytes(0, 128) == first
    states = [m.tile.mbar_packing.unpack(pe.shmem.read(0x400, 8)) for pe in m.tile.pes]
    assert states[0] == {"phase": 1, "pending": 1, "expected": 1, "tx": 0}
    # the other PEs never initialised or armed theirs: complete_tx left tx at -128
    assert all(s["tx"] == -128 and s["phase"] == 0 for s in states[1:])
    assert m.agent("hart0").x[21] == 1


def test_mbarrier_phase_flips_only_when_arrivals_and_bytes_are_done():
    m, _ = _machine("""
        li s1, 0x800
        li s2, 2
        tmbar.init s1, s2               # two arrivals expected
        li s3, 128
        tmbar.expect_tx s1, s3
        tma.tiled zero, a0, v1, dim=2, srctm, dst=shared, mbar=s1
        tmbar.try_wait s4, s1, zero     # 0: one arrival missing
        tmbar.arrive s5, s1             # s5 = phase 0
        tmbar.try_wait s6, s1, zero     # 0: still one missing
        tmbar.arrive s7, s1             # completes: phase 1
        tmbar.try_wait s8, s1, zero     # 1
        tmbar.try_wait s9, s1, s2       # parity 2 & 1 = 0 -> 1 too
        li s10, 1
        tmbar.try_wait s11, s1, s10     # phase 1 not complete -> 0
""", coords=[0, 0], config={"tile.mbar_instructions": True})
    m.run(max_steps=1000)
    h = m.agent("hart0")
    assert [h.x[r] for r in (20, 21, 22, 23, 24, 25, 27)] == [0, 0, 0, 0, 1, 1, 0]
    assert m.tile.mbar_packing.unpack(m.tile.pes[0].shmem.read(0x800, 8)) == {
        "phase": 1, "pending": 2, "expected": 2, "tx": 0}


def test_semaphore_completion_and_wait():
    m, _ = _machine("""
        la t0, sems
        tcsrw zero, tsem_base, t0
        tma.tiled zero, a0, v1, dim=2, srctm, dst=shared, sem=3
        tma.tiled zero, a0, v1, dim=2, srctm, dst=shared, sem=3
        li t1, 2
        tsem.wait 3, t1                 # satisfied: 2 >= 2
        li t2, 5
        tsem.signal 3, t2
        j over
        .data
        .align 3
sems:   .space 256
        .text
over:
""", coords=[0, 0], config={"tile.mbar_instructions": True})
    assert m.run(max_steps=1000).reason == "halted"
    assert m.space.read(m.symbols["sems"] + 24, 8) == 7


def test_tma_bad_inputs_are_illegal():
    with pytest.raises(UnhandledTrap, match="tensor map rank 2 differs from the TMA's 3 dimensions"):
        _machine("tma.tiled zero, a0, v1, dim=3, srctm, dst=shared", coords=[0, 0])[0].run(max_steps=100)
    with pytest.raises(UnhandledTrap, match="exactly one tensor-map side"):
        _machine("tma.tiled zero, a0, v1, dim=2, dst=shared", coords=[0, 0])[0].run(max_steps=100)
    with pytest.raises(UnhandledTrap, match="multicastl2 needs a shared-memory destination"):
        _machine("tma.tiled a3, a0, v1, dim=2, srctm, multicast", coords=[0, 0])[0].run(max_steps=100)
    with pytest.raises(UnhandledTrap, match="store/AMO access fault: TMA destination"):
        _machine("li t0, 0x3ffa0\n        tma.tiled t0, a0, v1, dim=2, srctm, dst=shared",
                 coords=[0, 0])[0].run(max_steps=100)


def test_l2b_destination_and_an_mbarrier_in_l2b():
    m, tensor = _machine("""
        li s1, 0x10000040               # mbarrier at L2B offset 0x40 (tile.mbar_l2b_base = 0x10000000)
        li s2, 1
        tmbar.init s1, s2
        li s3, 128
        tmbar.arrive_tx zero, s1, s3
        li t0, 0x100
        tma.tiled t0, a0, v1, dim=2, srctm, dst=l2b, mbar=s1
        tmbar.try_wait s4, s1, zero
""", coords=[0, 0], config={"tile.mbar_instructions": True})
    m.run(max_steps=1000)
    l2b = m.spaces["cluster0.l2b"]
    assert l2b.read_bytes(0x100, 128) == tensor[:4, :8].tobytes()
    assert m.tile.mbar_packing.unpack(l2b.read(0x40, 8))["phase"] == 1 and m.agent("hart0").x[20] == 1


def test_tma_mbar_mode_arrive():
    m, _ = _machine("""
        li s1, 0x800
        li s2, 1
        tmbar.init s1, s2               # one arrival, no bytes: the TMA's arrive completes it
        tma.tiled zero, a0, v1, dim=2, srctm, dst=shared, mbar=s1
        tmbar.try_wait s4, s1, zero
""", coords=[0, 0], config={"tile.mbar_instructions": True, "tile.tma_mbar_mode": "arrive"})
    m.run(max_steps=1000)
    assert m.agent("hart0").x[20] == 1
