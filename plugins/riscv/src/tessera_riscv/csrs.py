"""CSR numbers and names (privileged spec, machine mode only).

The hart implements (see :mod:`tessera_riscv.hart` for the rules of each):

* machine information: ``mvendorid``, ``marchid``, ``mimpid`` (0), ``mhartid``,
  ``mconfigptr`` (0) — read-only;
* trap setup and handling: ``mstatus`` (MIE, MPIE; MPP reads 3), ``mstatush``
  (RV32, 0), ``misa`` (writes ignored), ``mie``, ``mtvec``, ``mscratch``, ``mepc``,
  ``mcause``, ``mtval``, ``mip``;
* counters: ``mcycle``, ``minstret`` (and ``mcycleh``/``minstreth`` on RV32), their
  read-only user aliases ``cycle``, ``time``, ``instret`` (``cycleh``, ``timeh``,
  ``instreth``), ``mcountinhibit`` and the hardware performance counters
  ``mhpmcounter3``–``31`` / ``mhpmevent3``–``31`` (all read as zero, writes ignored).

Any other number is not implemented: accessing it is an illegal instruction.  By the
spec's convention, numbers whose bits 11:10 are ``11`` are read-only: writing them
is an illegal instruction too.
"""

from __future__ import annotations

MSTATUS, MISA, MIE, MTVEC = 0x300, 0x301, 0x304, 0x305
MSTATUSH = 0x310
MCOUNTINHIBIT = 0x320
MSCRATCH, MEPC, MCAUSE, MTVAL, MIP = 0x340, 0x341, 0x342, 0x343, 0x344
MCYCLE, MINSTRET, MCYCLEH, MINSTRETH = 0xB00, 0xB02, 0xB80, 0xB82
CYCLE, TIME, INSTRET, CYCLEH, TIMEH, INSTRETH = 0xC00, 0xC01, 0xC02, 0xC80, 0xC81, 0xC82
MVENDORID, MARCHID, MIMPID, MHARTID, MCONFIGPTR = 0xF11, 0xF12, 0xF13, 0xF14, 0xF15

# mstatus bits
MSTATUS_MIE = 1 << 3
MSTATUS_MPIE = 1 << 7
MSTATUS_MPP = 3 << 11

# mie/mip bits: software, timer, external (machine level); 16 and up are for platforms
MSI, MTI, MEI = 3, 7, 11


def names(xlen: int) -> dict[int, str]:
    """Number → name of every implemented CSR for ``xlen``."""
    out = {
        MSTATUS: "mstatus", MISA: "misa", MIE: "mie", MTVEC: "mtvec",
        MCOUNTINHIBIT: "mcountinhibit",
        MSCRATCH: "mscratch", MEPC: "mepc", MCAUSE: "mcause", MTVAL: "mtval", MIP: "mip",
        MCYCLE: "mcycle", MINSTRET: "minstret",
        CYCLE: "cycle", TIME: "time", INSTRET: "instret",
        MVENDORID: "mvendorid", MARCHID: "marchid", MIMPID: "mimpid", MHARTID: "mhartid",
        MCONFIGPTR: "mconfigptr",
    }
    for i in range(3, 32):
        out[0xB00 + i] = f"mhpmcounter{i}"
        out[0x320 + i] = f"mhpmevent{i}"
        out[0xC00 + i] = f"hpmcounter{i}"
    if xlen == 32:
        out.update({MSTATUSH: "mstatush", MCYCLEH: "mcycleh", MINSTRETH: "minstreth",
                    CYCLEH: "cycleh", TIMEH: "timeh", INSTRETH: "instreth"})
        for i in range(3, 32):
            out[0xB80 + i] = f"mhpmcounter{i}h"
            out[0xC80 + i] = f"hpmcounter{i}h"
    return out


def operand_names(xlen: int) -> tuple[str, ...]:
    """The ``csr`` field's enum names: a CSR's name, else its number in hex (``0x7c0``).

    Every 12-bit number has a name, so any CSR instruction disassembles to text the
    assembler reads back; the assembler also takes plain numbers and expressions.
    """
    known = names(xlen)
    return tuple(known.get(n, f"{n:#x}") for n in range(4096))


def numbers(xlen: int) -> dict[str, int]:
    """Name → number (the assembler's table)."""
    return {name: n for n, name in names(xlen).items()}


def read_only(number: int) -> bool:
    """Bits 11:10 == 0b11 mark a read-only CSR."""
    return number >> 10 == 3
