"""Register files, ABI names and CSR numbers (spec sections 1.2 and 1.4).

Register specifiers are 7 bits, {T, R[5:0]}: T = 1 selects the vector file.  The
assembler and disassembler see one 128-name file ``reg`` (r0..r63 then v0..v63) so a
7-bit field decodes straight to a name; the state lives in a 64-entry GPR list and a
64 x NLANES vector array per thread.
"""

from __future__ import annotations

from tessera.isa import RegisterFile

ABI = {
    0: "zero", 1: "a0", 2: "a1", 43: "gp2", 44: "gp1", 45: "gp0", 46: "fp", 47: "sp",
    56: "lc", 57: "lr1", 58: "lr2", 59: "pc", 60: "ssp", 61: "hsp", 62: "msp", 63: "isp",
}
ABI.update({3 + i: f"t{i}" for i in range(12)})
ABI.update({15 + i: f"s{i}" for i in range(14)})
ABI.update({29 + i: f"a{i + 2}" for i in range(10)})
ABI.update({48 + i: f"vm{i}" for i in range(8)})

ZERO, SP, LR1, LR2, PCREG, SSP, HSP, MSP, ISP = 0, 47, 57, 58, 59, 60, 61, 62, 63
#: r47 is redirected per operating mode: user, supervisor, hypervisor, machine; r63 in IRQ handlers
SP_ALIAS = (47, 60, 61, 62)

GPR = RegisterFile("r", 64, 32, names=tuple(f"r{i}" for i in range(64)),
                   aliases={name: i for i, name in ABI.items()}, zero=0, read_only=frozenset({59}))
#: 7-bit specifiers as the assembler sees them: r0..r63 (T = 0), v0..v63 (T = 1)
REG = RegisterFile("reg", 128, 32, storage=False, names=tuple(f"r{i}" for i in range(64)) + tuple(f"v{i}" for i in range(64)),
                   aliases={name: i for i, name in ABI.items()})

# CSR numbers (14 bits; bits 13:12 = lowest mode allowed)
CR0 = 0x3000
HARTID = 0x3001
TICK = 0x3002
STATUS_LOW = 0x004      # 0x?004 (doc) and 0x?044 (HDL) are both STATUS
STATUS_HDL_LOW = 0x044
CAUSE_LOW = 0x006       # 0x?006, one per mode
BADADDR = 0x3007
PTBR = 0x1003
HMASK = 0x1005
ASID = 0x101F
DBAD = range(0x3018, 0x301C)
DBAM = range(0x301C, 0x3020)
DBCR = 0x3020
DBSR = 0x3021
TVEC = range(0x3030, 0x3034)
EIP = 0x3038
EIP_HDL = 0x3048
PLSTACK = 0x303F
PMSTACK = 0x3040
TIME_LOW = 0xFE0        # 0x?FE0
TIMESEC_LOW = 0xFE1     # 0x?FE1
#: reserved by the HDL package, unimplemented: read 0, writes ignored
RESERVED_CSRS = frozenset(
    [0x00C | m << 12 for m in range(4)] + [0x014 | m << 12 for m in range(4)]
    + list(range(0x1020, 0x1025)) + [0x041 | m << 12 for m in range(4)]
    + [0x3042, 0x3043, 0x3046, 0x3047, 0x3049, 0x304A, 0x3050, 0x3051, 0x3052, 0x3054, 0x3060]
    + [0x100 + i | m << 12 for m in range(4) for i in range(32)]
    + list(range(0x3058, 0x3060)) + list(range(0x3420, 0x3428))
)

RESET_IP = 0xFFFD0000
RESET_STATUS = 0xFF000CE0   # PL=0xFF, OM=3, IPL=7, enables 0
