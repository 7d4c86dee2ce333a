"""The RISC-V debug window onto Dest at 0xFFBD8000: every fmt, with and without swizzle,
through a real address space (MMIO region), and pickling of the device."""

from __future__ import annotations

import pickle
import struct
from types import SimpleNamespace

import pytest
from tensix_dest_support import Thread, adj16_ref, adj32_ref, execute, sfpload, sfpstore, zeroacc

from tessera.errors import MemoryFault
from tessera.memory.space import AddressSpace
from tessera_tensix import dest as D
from tessera_tensix.debug_window import BASE, SIZE, DestWindow


class Machine(SimpleNamespace):
    pass


def _setup(fmt: int, *, no_swizzle: int = 0, unsigned: int = 0, sec: int = 0):
    t = Thread()
    space = AddressSpace()
    from tessera_tensix import debug_window

    debug_window.install(Machine(space=space), t.core)
    p = f"RISC_DEST_ACCESS_CTRL_SEC{sec}_"
    t.core.cfg.set(p + "fmt", fmt)
    t.core.cfg.set(p + "no_swizzle", no_swizzle)
    t.core.cfg.set(p + "unsigned_int", unsigned)
    space.current_agent = SimpleNamespace(tid=sec)
    return t, space


def _f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def test_window_is_mapped_32k():
    t, space = _setup(0)
    assert SIZE == 0x8000 and BASE == 0xFFBD8000
    space.write(BASE + SIZE - 4, 4, 1)
    with pytest.raises(MemoryFault):
        space.read(BASE + SIZE, 4)


def test_fmt0_fp32_with_swizzle():
    t, space = _setup(0)
    space.write(BASE + (5 * 16 + 3) * 4, 4, _f32(1.5))
    assert t.dest.get32(5, 3) == D.shuffle_fp32(_f32(1.5))
    assert space.read(BASE + (5 * 16 + 3) * 4, 4) == _f32(1.5)
    t.sfpu.lreg[0] = _f32(-2.25)
    execute(t, sfpstore(0, 3, 0, 0x8))                    # Dst32b rows 8..11
    assert space.read(BASE + (8 * 16 + 0) * 4, 4) == _f32(-2.25)
    execute(t, sfpload(1, 3, 0, 6))                       # SFPLOAD sees the window write:
    assert t.sfpu.lreg[1, 9] == _f32(1.5)


def test_fmt0_no_swizzle_is_raw():
    t, space = _setup(0, no_swizzle=1)
    space.write(BASE + 4 * 17, 4, 0x12345678)
    assert t.dest.get32(1, 1) == 0x12345678
    assert t.dest.bits[adj32_ref(1, False, False), 1] == 0x1234
    assert space.read(BASE + 4 * 17, 4) == 0x12345678


def test_fmt1_int32_sign_magnitude_conversion():
    t, space = _setup(1)
    space.write(BASE, 4, (-5) & 0xFFFFFFFF)
    assert D.unshuffle_fp32(t.dest.get32(0, 0)) == 0x80000005
    assert space.read(BASE, 4) == (-5) & 0xFFFFFFFF
    space.write(BASE + 4, 4, 0x80000000)                  # -2^31 clamps to -(2^31 - 1)
    assert D.unshuffle_fp32(t.dest.get32(0, 1)) == 0xFFFFFFFF
    t.dest.set32(0, 2, D.shuffle_fp32(0x80000000))        # -0 reads as +0
    assert space.read(BASE + 8, 4) == 0
    t2, space2 = _setup(1, no_swizzle=1)
    space2.write(BASE, 4, 0xFFFFFFFB)
    assert t2.dest.get32(0, 0) == 0xFFFFFFFB


def test_fmt2_fp16():
    t, space = _setup(2)
    space.write(BASE + 2 * (700 * 16 + 15), 2, 0x3C00)   # 1.0 in IEEE FP16
    assert t.dest.bits[700, 15] == D.shuffle_fp16(0x3C00) == (15 | 0)
    assert space.read(BASE + 2 * (700 * 16 + 15), 2) == 0x3C00
    t2, space2 = _setup(2, no_swizzle=1)
    space2.write(BASE, 2, 0x3C00)
    assert t2.dest.bits[0, 0] == 0x3C00


def test_fmt3_bf16_and_remap():
    t, space = _setup(3)
    space.write(BASE + 2 * 16, 2, 0x3F80)
    assert t.dest.bits[1, 0] == D.shuffle_bf16(0x3F80)
    execute(t, sfpload(0, 2, 0, 0))
    assert t.sfpu.lreg[0, 8] == 0x3F800000
    t.core.cfg.set("DEST_ACCESS_CFG_remap_addrs", 1)
    space.write(BASE + 2 * (8 * 16), 2, 0x4000)
    assert t.dest.bits[adj16_ref(8, True), 0] == D.shuffle_bf16(0x4000)


def test_fmt4_int16():
    t, space = _setup(4)
    space.write(BASE, 2, 0xFFFF)                          # -1 → sign-magnitude 0x8001
    assert t.dest.bits[0, 0] == 0x8001
    assert space.read(BASE, 2) == 0xFFFF
    space.write(BASE + 2, 2, 0x8000)                      # -32768 clamps to -32767
    assert t.dest.bits[0, 1] == 0xFFFF
    t.dest.bits[0, 2] = 0x8000                            # -0 → 0
    assert space.read(BASE + 4, 2) == 0
    t2, space2 = _setup(4, unsigned=1)
    space2.write(BASE, 2, 0xFFFF)
    assert t2.dest.bits[0, 0] == 0xFFFF and space2.read(BASE, 2) == 0xFFFF


def test_fmt5_int8():
    t, space = _setup(5)
    space.write(BASE + 3, 1, 100)
    assert t.dest.bits[0, 3] == (100 << 5) | 16
    space.write(BASE + 4, 1, 0)
    assert t.dest.bits[0, 4] == 0
    assert space.read(BASE + 3, 1) == 100
    space.write(BASE + 5, 1, 0xFF)                        # -1: the documented (buggy) conversion
    assert t.dest.bits[0, 5] == 0x8000 | (0x81 << 5) | 16
    space.write(BASE + 6, 1, 0x80)                        # -128
    assert t.dest.bits[0, 6] == 0x8000 | (0xFF << 5) | 16
    t.dest.bits[0, 7] = 0x8000 | (5 << 5) | 16            # -5 reads as two's complement
    assert space.read(BASE + 7, 1) == 0xFB
    execute(t, sfpload(0, 5, 0, 2))                       # INT8 load: lane 1 = row 0, column 3
    assert t.sfpu.lreg[0, 1] == 100 and t.sfpu.lreg[0, 2] == 0x80000000 | 0x81
    t2, space2 = _setup(5, unsigned=1)
    space2.write(BASE, 1, 200)
    assert t2.dest.bits[0, 0] == (200 << 5) | 16 and space2.read(BASE, 1) == 200
    space2.write(BASE + 16 * 1024, 1, 7)                  # rows wrap at 10 bits
    assert t2.dest.bits[0, 0] == (7 << 5) | 16


def test_wide_aligned_access_is_split_into_elements():
    t, space = _setup(3)
    space.write(BASE + 8, 8, 0x4000_3F80_C000_3F00)
    assert [int(t.dest.bits[0, c]) for c in range(4, 8)] == [D.shuffle_bf16(v) for v in
                                                             (0x3F00, 0xC000, 0x3F80, 0x4000)]
    assert space.read(BASE + 8, 4) == 0xC000_3F00


@pytest.mark.parametrize("fmt,size,offset", [(0, 2, 0), (3, 4, 2), (2, 1, 0), (0, 4, 2)])
def test_narrow_or_misaligned_access_faults(fmt, size, offset):
    t, space = _setup(fmt)
    with pytest.raises(MemoryFault) as exc:
        space.read(BASE + offset, size)
    assert "Dest debug window" in str(exc.value)


def test_reserved_fmt_faults():
    t, space = _setup(6)
    with pytest.raises(MemoryFault) as exc:
        space.write(BASE, 4, 0)
    assert "reserved" in str(exc.value)


def test_per_thread_config_sections():
    t, space = _setup(3, sec=2)                           # thread 2 uses SEC2 (BF16)
    space.write(BASE, 2, 0x3F80)
    assert t.dest.bits[0, 0] == D.shuffle_bf16(0x3F80)
    space.current_agent = SimpleNamespace(tid=0)          # thread 0: SEC0 unset → fmt 0 (32-bit)
    with pytest.raises(MemoryFault):
        space.write(BASE, 2, 0x3F80)
    space.current_agent = SimpleNamespace(dest_window_sec=2, tid=0)
    assert space.read(BASE, 2) == 0x3F80


def test_window_writes_define_cells_of_undefined_rows():
    t, space = _setup(3)
    execute(t, zeroacc(1, where=0))
    for c in range(16):
        space.write(BASE + 2 * c, 2, 0x3F80)
    assert t.dest.row_valid[0] and not t.dest.row_valid[1]


def test_device_pickles():
    t, space = _setup(0)
    dev = DestWindow(t.core, space)
    t.dest.bits[3, 4] = 0xBEEF
    clone = pickle.loads(pickle.dumps(dev))
    assert clone.core.dest.bits[3, 4] == 0xBEEF
    assert clone.core is not t.core
    clone.core.dest.set16(0, 0, 7)                        # the unpickled Dest's flat view is live
    assert clone.core.dest.flat[0] == 7
