"""32-bit Dest and its second half-section: the packer must read ``Dst32b`` rows 512..1023
where unpack-to-Dest, the FPU and the SFPU write them.

tt-llk's ``DstSync::SyncHalf`` puts the second half-section at ``DEST_REGISTER_HALF_SIZE``
(row 512) for the math offset, the unpack-to-Dest address and the packer's
``DEST_TARGET_REG_CFG_PACK_SEC[i].Offset`` alike, also when Dest holds 32-bit data.  Dst.md
(WormholeB0 and BlackholeA0 TensixCoprocessor) maps a 10-bit ``Dst32b`` row to
``AdjRow = ((Row & 0x1f8) << 1) | (Row & 0x207)``, keeping bit 9; the packer used to drop
bit 9 first (reading EdgeMasking.md's "reduced from 10 bits to 9" as a mask), so the second
half of every 32-bit run came out as the first half's (or zero) data.
"""

from __future__ import annotations

import numpy as np
import pytest
from tensix_llk_support import require_llk, tessera

from tessera.machine import Machine
from tessera_tensix.adc import PACKERS, adcs
from tessera_tensix.arch import TENSIX_BH, TENSIX_WH
from tessera_tensix.dest import shuffle_fp32

FP32 = 0                          # the 4-bit format code of FP32 (In/Out_data_format)
OUT = 0x2000                      # L1 byte address the packed row goes to


#: PACR with Last set and bit 8 of its mask field: packer 0 on Wormhole (PackerMask), read
#: interface 0 of configuration context 0 on Blackhole (ReadIntfSel) -- the same word on both
PACR_LAST = 0x41 << 24 | 1 << 8 | 1


def _adj_row(row: int) -> int:
    """Dst.md's AdjRow (no remap, no swizzle), written out here rather than taken from dest.py."""
    return ((row & 0x1F8) << 1) | (row & 0x207)


@pytest.mark.parametrize("chip", ["wh", "bh"])
@pytest.mark.parametrize("offset", [0, 512, 512 + 64])
def test_packer_reads_the_dst32b_row_its_offset_names(chip, offset):
    """Random DstBits everywhere; one PACR of 16 FP32 datums from Dst32b row ``offset``
    (via the packer's Dest offset register) must give that row's two 16-bit halves,
    which for rows 512.. live in DstBits 512..1023, not at the 9-bit alias."""
    rng = np.random.default_rng(offset)
    m = Machine(TENSIX_WH if chip == "wh" else TENSIX_BH, config={})
    core = m.agent("t0").core
    want = rng.integers(-1 << 20, 1 << 20, size=16).astype(np.float32)
    core.dest.bits[:] = rng.integers(0, 1 << 16, size=core.dest.bits.shape, dtype=np.uint16)
    cells = shuffle_fp32(want.view(np.uint32))
    phys = _adj_row(offset)
    core.dest.bits[phys] = (cells >> 16).astype(np.uint16)
    core.dest.bits[phys + 8] = (cells & 0xFFFF).astype(np.uint16)
    cfg = core.cfg
    for name, value in {"ALU_FORMAT_SPEC_REG2_Dstacc": FP32, "PCK_DEST_RD_CTRL_Read_32b_data": 1,
                        "PCK_EDGE_OFFSET_SEC0_mask": 0xFFFF, "THCON_SEC0_REG1_In_data_format": FP32,
                        "THCON_SEC0_REG1_Out_data_format": FP32, "THCON_SEC0_REG1_Disable_zero_compress": 1,
                        "THCON_SEC0_REG1_L1_Dest_addr": OUT // 16 - 1,
                        "DEST_TARGET_REG_CFG_PACK_SEC0_Offset": offset}.items():
        cfg.set(name, value)
    adcs(core).set(0, PACKERS, 0, "X", 0)
    adcs(core).set(0, PACKERS, 1, "X", 15)
    m.space.write_bytes(0, b"".join(w.to_bytes(4, "little") for w in (PACR_LAST, 0)))
    assert m.run(max_steps=10_000).exit_code == 0
    np.testing.assert_array_equal(core.l1.read_as(OUT, "<f4", 16), want)


@pytest.mark.llk_build
@pytest.mark.parametrize("chip", ["blackhole", "wormhole_b0"])
def test_int32_pack_untilize_fills_both_dest_halves(chip):
    """Four Int32 tiles with SyncHalf: tiles 2 and 3 go through the second half-section
    (math/unpack at row 512, packer offset 512); all 4096 datums must match the golden."""
    require_llk()
    done = tessera("tensix", "check", "pack_untilize_test", "--chip", chip, "--format", "Int32",
                   "--dims", "64x64", "--jobs", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and lines[0].endswith(": pass"), done.stdout
