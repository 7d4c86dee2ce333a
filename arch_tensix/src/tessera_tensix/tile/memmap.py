"""The Tensix tile's memory map, as the baby RISC-V cores see it, per chip.

From BlackholeA0 .../BabyRISCV/README.md and WormholeB0 .../BabyRISCV/README.md
("Memory map", "Local data RAM"), SoftReset.md and TileControlDebugStatus.md.  The
addresses are the vendor's names; what each window does is the business of the
module that implements it.
"""

from __future__ import annotations

#: the cores of a tile, in the order of their agents (RISCV B, T0, T1, T2, NC)
CORES = ("brisc", "trisc0", "trisc1", "trisc2", "ncrisc")
#: the vendor's short names (mailbox and PCBuf tables)
SHORT = {"brisc": "B", "trisc0": "T0", "trisc1": "T1", "trisc2": "T2", "ncrisc": "NC"}

#: L1 (its size per chip is tessera_tensix.l1.SIZES)
MEM_L1_BASE = 0x0000_0000

MEM_LOCAL_BASE = 0xFFB0_0000
#: local data RAM of each core, bytes (BH: 8 KiB for B and NC, 4 KiB for the TRISCs; WH half)
LOCAL_BYTES = {"bh": {"brisc": 8192, "ncrisc": 8192, "trisc0": 4096, "trisc1": 4096, "trisc2": 4096},
               "wh": {"brisc": 4096, "ncrisc": 4096, "trisc0": 2048, "trisc1": 2048, "trisc2": 2048}}

RISCV_TDMA_REGS_START_ADDR = 0xFFB1_1000
RISCV_DEBUG_REGS_START_ADDR = 0xFFB1_2000
TENSIX_MOP_CFG_BASE = 0xFFB8_0000
REGFILE_BASE = 0xFFE0_0000
INSTRN_BUF_BASE = 0xFFE4_0000
INSTRN1_BUF_BASE = 0xFFE5_0000
INSTRN2_BUF_BASE = 0xFFE6_0000
PC_BUF_BASE = 0xFFE8_0000
PC1_BUF_BASE = 0xFFE9_0000
PC2_BUF_BASE = 0xFFEA_0000
TENSIX_MAILBOX0_BASE = 0xFFEC_0000
TENSIX_CFG_BASE = 0xFFEF_0000

#: windows whose meaning depends on the core (a CoreView sends them to the core's own
#: space): (start, size)
#: the Dest debug window (RISCV T0..T2 only; Dst.md "RISCV access to Dst")
DEST_WINDOW_BASE = 0xFFBD_8000
PRIVATE = ((MEM_LOCAL_BASE, 0x2000), (TENSIX_MOP_CFG_BASE, 0x1000), (DEST_WINDOW_BASE, 0x8000),
           (REGFILE_BASE, 0x1000),
           (INSTRN_BUF_BASE, 0x3_0000), (PC_BUF_BASE, 0x3_0000), (TENSIX_MAILBOX0_BASE, 0x4000))

#: SoftReset.md
SOFT_RESET_0 = RISCV_DEBUG_REGS_START_ADDR + 0x1B0
TRISC_RESET_PC = (RISCV_DEBUG_REGS_START_ADDR + 0x228, RISCV_DEBUG_REGS_START_ADDR + 0x22C,
                  RISCV_DEBUG_REGS_START_ADDR + 0x230)
TRISC_RESET_PC_OVERRIDE = RISCV_DEBUG_REGS_START_ADDR + 0x234
NCRISC_RESET_PC = RISCV_DEBUG_REGS_START_ADDR + 0x238
NCRISC_RESET_PC_OVERRIDE = RISCV_DEBUG_REGS_START_ADDR + 0x23C
#: the soft-reset bit of each core, and its pc out of reset without an override
RESET_BIT = {"brisc": 11, "trisc0": 12, "trisc1": 13, "trisc2": 14, "ncrisc": 18}
DEFAULT_PC = {"brisc": 0x0, "trisc0": 0x6000, "trisc1": 0xA000, "trisc2": 0xE000, "ncrisc": 0x12000}
