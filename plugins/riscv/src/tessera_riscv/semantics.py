"""Semantic functions: one plain function per instruction, ``fn(hart, ins) -> next_pc | None``.

Registers are the list ``hart.x`` of unsigned XLEN-bit ints.  The functions depend
on XLEN only through a few constants (the mask, the sign bit, the shift-amount
mask), so :func:`functions` builds one set per XLEN from closures over those
constants — closure variables are read as fast as locals — and publishes each
function under a module-level name (``rv64_add``) so that encoding rows, and the
architecture records holding them, pickle by reference into snapshots.

Conventions the decode-cache fill establishes (:func:`tessera_riscv.encoding.refine`):

* rows flagged ``pure`` only write ``rd``: when ``rd`` is ``x0`` the fill replaces
  the function by :func:`nop`, so these functions write ``x[ins.rd]`` unconditionally;
* ``ins.target`` (branches, ``jal``), ``ins.link`` (``jal``/``jalr``) and
  ``ins.value`` (``lui``, ``auipc``, ``li``) are precomputed there.

So execute instructions through a machine, not by calling these on bare decoder output.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tessera.control import Yield
from tessera.errors import MemoryFault
from tessera_riscv import traps
from tessera_riscv.syscalls import system_call

Semantics = Callable[[Any, Any], Any]

M32 = 0xFFFF_FFFF
ORC_TABLE = bytes([0] + [0xFF] * 255)


# ------------------------------------------------------------------ XLEN-independent


def nop(h: Any, ins: Any) -> None:
    """Does nothing: ``fence``, ``fence.i``, ``wfi``, and pure instructions that write x0."""
    return None


def ecall(h: Any, ins: Any) -> None:
    """A system call (``syscalls`` on, the default) or the M-mode environment-call trap."""
    if h.syscalls:
        system_call(h)
        return None
    raise traps.trap(traps.ECALL_M, 0)


def ebreak(h: Any, ins: Any) -> None:
    raise traps.trap(traps.BREAKPOINT, ins.address)


def mret(h: Any, ins: Any) -> int:
    """Return from the trap handler: ``MIE = MPIE``, ``MPIE = 1``, continue at ``mepc``."""
    target = h.leave_trap()
    if h.irq_ready:  # the restored MIE lets a pending interrupt in: take it right away
        raise Yield(target)
    return target


def csrrw(h: Any, ins: Any) -> None:
    h.csr_instruction(ins, 0, h.x[ins.rs1], True)


def csrrs(h: Any, ins: Any) -> None:
    h.csr_instruction(ins, 1, h.x[ins.rs1], ins.rs1 != 0)


def csrrc(h: Any, ins: Any) -> None:
    h.csr_instruction(ins, 2, h.x[ins.rs1], ins.rs1 != 0)


def csrrwi(h: Any, ins: Any) -> None:
    h.csr_instruction(ins, 0, ins.zimm, True)


def csrrsi(h: Any, ins: Any) -> None:
    h.csr_instruction(ins, 1, ins.zimm, ins.zimm != 0)


def csrrci(h: Any, ins: Any) -> None:
    h.csr_instruction(ins, 2, ins.zimm, ins.zimm != 0)


def set_value(h: Any, ins: Any) -> None:
    """``x[rd] = ins.value``: ``lui``, ``auipc`` and ``addi rd, zero, imm`` after refinement."""
    h.x[ins.rd] = ins.value


def misaligned_fetch(h: Any, ins: Any) -> None:
    """Installed for a word fetched from an address that is not 4-byte aligned."""
    raise traps.trap(traps.INSTRUCTION_MISALIGNED, ins.address)


def misaligned_jump(h: Any, ins: Any) -> None:
    """Installed for ``jal`` to a target that is not 4-byte aligned (reported on the jump)."""
    raise traps.trap(traps.INSTRUCTION_MISALIGNED, ins.target)


def misaligned_branch(h: Any, ins: Any) -> Any:
    """Installed for a branch whose target is misaligned: it traps only when taken."""
    if ins.taken(h, ins) is not None:
        raise traps.trap(traps.INSTRUCTION_MISALIGNED, ins.target)
    return None


COMMON: dict[str, Semantics] = {
    "nop": nop, "fence": nop, "fence.tso": nop, "fence.i": nop, "wfi": nop,
    "ecall": ecall, "ebreak": ebreak, "mret": mret,
    "csrrw": csrrw, "csrrs": csrrs, "csrrc": csrrc,
    "csrrwi": csrrwi, "csrrsi": csrrsi, "csrrci": csrrci,
    "lui": set_value, "auipc": set_value,
}


# ------------------------------------------------------------------ per XLEN


def _make(xlen: int) -> dict[str, Semantics]:  # noqa: C901 - one closure per instruction
    M = (1 << xlen) - 1
    SIGN = 1 << (xlen - 1)
    SH = xlen - 1
    NB = xlen // 8
    rv64 = xlen == 64
    out: dict[str, Semantics] = {}

    def sem(name: str) -> Callable[[Semantics], Semantics]:
        def put(fn: Semantics) -> Semantics:
            out[name] = fn
            return fn
        return put

    def sext32(v: int) -> int:
        return (((v & M32) ^ 0x8000_0000) - 0x8000_0000) & M

    # ---------------------------------------------------------------- control transfer

    @sem("jal")
    def jal(h, ins):
        h.x[ins.rd] = ins.link
        return ins.target

    @sem("j")  # jal with rd = x0 (chosen by refine)
    def j(h, ins):
        return ins.target

    @sem("jalr")
    def jalr(h, ins):
        x = h.x
        target = (x[ins.rs1] + ins.imm) & M & ~1
        if target & 2:
            raise traps.trap(traps.INSTRUCTION_MISALIGNED, target)
        if ins.rd:
            x[ins.rd] = ins.link
        return target

    @sem("beq")
    def beq(h, ins):
        x = h.x
        if x[ins.rs1] == x[ins.rs2]:
            return ins.target
        return None

    @sem("bne")
    def bne(h, ins):
        x = h.x
        if x[ins.rs1] != x[ins.rs2]:
            return ins.target
        return None

    @sem("blt")
    def blt(h, ins):
        x = h.x
        if x[ins.rs1] ^ SIGN < x[ins.rs2] ^ SIGN:
            return ins.target
        return None

    @sem("bge")
    def bge(h, ins):
        x = h.x
        if x[ins.rs1] ^ SIGN >= x[ins.rs2] ^ SIGN:
            return ins.target
        return None

    @sem("bltu")
    def bltu(h, ins):
        x = h.x
        if x[ins.rs1] < x[ins.rs2]:
            return ins.target
        return None

    @sem("bgeu")
    def bgeu(h, ins):
        x = h.x
        if x[ins.rs1] >= x[ins.rs2]:
            return ins.target
        return None

    # ---------------------------------------------------------------- loads and stores

    def load(name: str, size: int, signed: bool) -> None:
        align = size - 1
        bit = 1 << (8 * size - 1)
        if size == 1:
            if signed:
                def fn(h, ins):
                    v = h.space.read((h.x[ins.rs1] + ins.imm) & M, 1)
                    if ins.rd:
                        h.x[ins.rd] = ((v ^ 0x80) - 0x80) & M
            else:
                def fn(h, ins):
                    v = h.space.read((h.x[ins.rs1] + ins.imm) & M, 1)
                    if ins.rd:
                        h.x[ins.rd] = v
        elif signed and size < NB:
            def fn(h, ins):
                a = (h.x[ins.rs1] + ins.imm) & M
                if a & align and h.trap_misaligned:
                    raise traps.trap(traps.LOAD_MISALIGNED, a)
                v = h.space.read(a, size)
                if ins.rd:
                    h.x[ins.rd] = ((v ^ bit) - bit) & M
        else:
            def fn(h, ins):
                a = (h.x[ins.rs1] + ins.imm) & M
                if a & align and h.trap_misaligned:
                    raise traps.trap(traps.LOAD_MISALIGNED, a)
                v = h.space.read(a, size)
                if ins.rd:
                    h.x[ins.rd] = v
        out[name] = fn

    load("lb", 1, True)
    load("lbu", 1, False)
    load("lh", 2, True)
    load("lhu", 2, False)
    load("lw", 4, True)
    if rv64:
        load("lwu", 4, False)
        load("ld", 8, True)

    def store(name: str, size: int) -> None:
        align = size - 1
        if size == 1:
            def fn(h, ins):
                h.space.write((h.x[ins.rs1] + ins.simm) & M, 1, h.x[ins.rs2])
        else:
            def fn(h, ins):
                x = h.x
                a = (x[ins.rs1] + ins.simm) & M
                if a & align and h.trap_misaligned:
                    raise traps.trap(traps.STORE_MISALIGNED, a)
                h.space.write(a, size, x[ins.rs2])
        out[name] = fn

    store("sb", 1)
    store("sh", 2)
    store("sw", 4)
    if rv64:
        store("sd", 8)

    # ---------------------------------------------------------------- integer, immediate

    @sem("addi")
    def addi(h, ins):
        x = h.x
        x[ins.rd] = (x[ins.rs1] + ins.imm) & M

    @sem("slti")
    def slti(h, ins):
        x = h.x
        x[ins.rd] = int(x[ins.rs1] ^ SIGN < (ins.imm & M) ^ SIGN)

    @sem("sltiu")
    def sltiu(h, ins):
        x = h.x
        x[ins.rd] = int(x[ins.rs1] < ins.imm & M)

    @sem("xori")
    def xori(h, ins):
        x = h.x
        x[ins.rd] = (x[ins.rs1] ^ ins.imm) & M

    @sem("ori")
    def ori(h, ins):
        x = h.x
        x[ins.rd] = (x[ins.rs1] | ins.imm) & M

    @sem("andi")
    def andi(h, ins):
        x = h.x
        x[ins.rd] = x[ins.rs1] & ins.imm & M

    @sem("slli")
    def slli(h, ins):
        x = h.x
        x[ins.rd] = (x[ins.rs1] << ins.shamt) & M

    @sem("srli")
    def srli(h, ins):
        x = h.x
        x[ins.rd] = x[ins.rs1] >> ins.shamt

    @sem("srai")
    def srai(h, ins):
        x = h.x
        x[ins.rd] = (((x[ins.rs1] ^ SIGN) - SIGN) >> ins.shamt) & M

    # ---------------------------------------------------------------- integer, register

    @sem("add")
    def add(h, ins):
        x = h.x
        x[ins.rd] = (x[ins.rs1] + x[ins.rs2]) & M

    @sem("sub")
    def sub(h, ins):
        x = h.x
        x[ins.rd] = (x[ins.rs1] - x[ins.rs2]) & M

    @sem("sll")
    def sll(h, ins):
        x = h.x
        x[ins.rd] = (x[ins.rs1] << (x[ins.rs2] & SH)) & M

    @sem("slt")
    def slt(h, ins):
        x = h.x
        x[ins.rd] = int(x[ins.rs1] ^ SIGN < x[ins.rs2] ^ SIGN)

    @sem("sltu")
    def sltu(h, ins):
        x = h.x
        x[ins.rd] = int(x[ins.rs1] < x[ins.rs2])

    @sem("xor")
    def xor(h, ins):
        x = h.x
        x[ins.rd] = x[ins.rs1] ^ x[ins.rs2]

    @sem("srl")
    def srl(h, ins):
        x = h.x
        x[ins.rd] = x[ins.rs1] >> (x[ins.rs2] & SH)

    @sem("sra")
    def sra(h, ins):
        x = h.x
        x[ins.rd] = (((x[ins.rs1] ^ SIGN) - SIGN) >> (x[ins.rs2] & SH)) & M

    @sem("or")
    def or_(h, ins):
        x = h.x
        x[ins.rd] = x[ins.rs1] | x[ins.rs2]

    @sem("and")
    def and_(h, ins):
        x = h.x
        x[ins.rd] = x[ins.rs1] & x[ins.rs2]

    # ---------------------------------------------------------------- M

    @sem("mul")
    def mul(h, ins):
        x = h.x
        x[ins.rd] = (x[ins.rs1] * x[ins.rs2]) & M

    @sem("mulh")
    def mulh(h, ins):
        x = h.x
        x[ins.rd] = ((((x[ins.rs1] ^ SIGN) - SIGN) * ((x[ins.rs2] ^ SIGN) - SIGN)) >> xlen) & M

    @sem("mulhsu")
    def mulhsu(h, ins):
        x = h.x
        x[ins.rd] = ((((x[ins.rs1] ^ SIGN) - SIGN) * x[ins.rs2]) >> xlen) & M

    @sem("mulhu")
    def mulhu(h, ins):
        x = h.x
        x[ins.rd] = (x[ins.rs1] * x[ins.rs2]) >> xlen

    @sem("div")
    def div(h, ins):
        x = h.x
        b = x[ins.rs2]
        if not b:
            x[ins.rd] = M                       # division by zero: all ones
            return
        a = (x[ins.rs1] ^ SIGN) - SIGN
        b = (b ^ SIGN) - SIGN
        q = abs(a) // abs(b)                    # truncate towards zero
        x[ins.rd] = (-q if (a < 0) != (b < 0) else q) & M   # MIN / -1 = MIN (wraps)

    @sem("divu")
    def divu(h, ins):
        x = h.x
        b = x[ins.rs2]
        x[ins.rd] = x[ins.rs1] // b if b else M

    @sem("rem")
    def rem(h, ins):
        x = h.x
        b = x[ins.rs2]
        if not b:
            x[ins.rd] = x[ins.rs1]              # remainder of division by zero: the dividend
            return
        a = (x[ins.rs1] ^ SIGN) - SIGN
        r = abs(a) % abs((b ^ SIGN) - SIGN)     # sign of the dividend; MIN % -1 = 0
        x[ins.rd] = (-r if a < 0 else r) & M

    @sem("remu")
    def remu(h, ins):
        x = h.x
        b = x[ins.rs2]
        x[ins.rd] = x[ins.rs1] % b if b else x[ins.rs1]

    # ---------------------------------------------------------------- Zba

    def shadd(name: str, n: int, uw: bool) -> None:
        if uw:
            def fn(h, ins):
                x = h.x
                x[ins.rd] = (((x[ins.rs1] & M32) << n) + x[ins.rs2]) & M
        else:
            def fn(h, ins):
                x = h.x
                x[ins.rd] = ((x[ins.rs1] << n) + x[ins.rs2]) & M
        out[name] = fn

    shadd("sh1add", 1, False)
    shadd("sh2add", 2, False)
    shadd("sh3add", 3, False)

    # ---------------------------------------------------------------- Zbb

    @sem("andn")
    def andn(h, ins):
        x = h.x
        x[ins.rd] = x[ins.rs1] & (x[ins.rs2] ^ M)

    @sem("orn")
    def orn(h, ins):
        x = h.x
        x[ins.rd] = x[ins.rs1] | (x[ins.rs2] ^ M)

    @sem("xnor")
    def xnor(h, ins):
        x = h.x
        x[ins.rd] = x[ins.rs1] ^ x[ins.rs2] ^ M

    @sem("clz")
    def clz(h, ins):
        x = h.x
        x[ins.rd] = xlen - x[ins.rs1].bit_length()

    @sem("ctz")
    def ctz(h, ins):
        x = h.x
        v = x[ins.rs1]
        x[ins.rd] = (v & -v).bit_length() - 1 if v else xlen

    @sem("cpop")
    def cpop(h, ins):
        x = h.x
        x[ins.rd] = x[ins.rs1].bit_count()

    @sem("max")
    def max_(h, ins):
        x = h.x
        a, b = x[ins.rs1], x[ins.rs2]
        x[ins.rd] = a if a ^ SIGN > b ^ SIGN else b

    @sem("maxu")
    def maxu(h, ins):
        x = h.x
        a, b = x[ins.rs1], x[ins.rs2]
        x[ins.rd] = a if a > b else b

    @sem("min")
    def min_(h, ins):
        x = h.x
        a, b = x[ins.rs1], x[ins.rs2]
        x[ins.rd] = a if a ^ SIGN < b ^ SIGN else b

    @sem("minu")
    def minu(h, ins):
        x = h.x
        a, b = x[ins.rs1], x[ins.rs2]
        x[ins.rd] = a if a < b else b

    @sem("sext.b")
    def sext_b(h, ins):
        x = h.x
        x[ins.rd] = (((x[ins.rs1] & 0xFF) ^ 0x80) - 0x80) & M

    @sem("sext.h")
    def sext_h(h, ins):
        x = h.x
        x[ins.rd] = (((x[ins.rs1] & 0xFFFF) ^ 0x8000) - 0x8000) & M

    @sem("zext.h")
    def zext_h(h, ins):
        x = h.x
        x[ins.rd] = x[ins.rs1] & 0xFFFF

    @sem("rol")
    def rol(h, ins):
        x = h.x
        a, s = x[ins.rs1], x[ins.rs2] & SH
        x[ins.rd] = ((a << s) | (a >> (xlen - s))) & M

    @sem("ror")
    def ror(h, ins):
        x = h.x
        a, s = x[ins.rs1], x[ins.rs2] & SH
        x[ins.rd] = ((a >> s) | (a << (xlen - s))) & M

    @sem("rori")
    def rori(h, ins):
        x = h.x
        a, s = x[ins.rs1], ins.shamt
        x[ins.rd] = ((a >> s) | (a << (xlen - s))) & M

    @sem("orc.b")
    def orc_b(h, ins):
        x = h.x
        x[ins.rd] = int.from_bytes(x[ins.rs1].to_bytes(NB, "little").translate(ORC_TABLE), "little")

    @sem("rev8")
    def rev8(h, ins):
        x = h.x
        x[ins.rd] = int.from_bytes(x[ins.rs1].to_bytes(NB, "little"), "big")

    # ---------------------------------------------------------------- Zaamo

    def amo(name: str, size: int, op: Callable[[int, int], int]) -> None:
        align = size - 1
        if size == 4:
            def result(old: int) -> int:
                return sext32(old)
        else:
            def result(old: int) -> int:
                return old

        def fn(h, ins):
            x = h.x
            a = x[ins.rs1]
            if a & align:  # AMOs must be naturally aligned, whatever the misaligned policy
                raise traps.trap(traps.STORE_MISALIGNED, a)
            space = h.space
            try:
                old = space.read(a, size)
            except MemoryFault as fault:
                fault.access = "write"  # an AMO's access fault is a store/AMO access fault
                raise
            space.write(a, size, op(old, x[ins.rs2]))
            if ins.rd:
                x[ins.rd] = result(old)

        out[name] = fn

    def amo_ops(suffix: str, size: int) -> None:
        bits = 8 * size
        mask = (1 << bits) - 1
        sign = 1 << (bits - 1)
        amo("amoswap" + suffix, size, lambda old, src: src)
        amo("amoadd" + suffix, size, lambda old, src: old + src)
        amo("amoxor" + suffix, size, lambda old, src: old ^ src)
        amo("amoand" + suffix, size, lambda old, src: old & src)
        amo("amoor" + suffix, size, lambda old, src: old | src)
        amo("amomin" + suffix, size,
            lambda old, src: old if old ^ sign < (src & mask) ^ sign else src)
        amo("amomax" + suffix, size,
            lambda old, src: old if old ^ sign > (src & mask) ^ sign else src)
        amo("amominu" + suffix, size, lambda old, src: old if old < src & mask else src)
        amo("amomaxu" + suffix, size, lambda old, src: old if old > src & mask else src)

    amo_ops(".w", 4)

    # ---------------------------------------------------------------- RV64 only

    if rv64:
        @sem("addiw")
        def addiw(h, ins):
            x = h.x
            x[ins.rd] = sext32(x[ins.rs1] + ins.imm)

        @sem("slliw")
        def slliw(h, ins):
            x = h.x
            x[ins.rd] = sext32(x[ins.rs1] << ins.shamtw)

        @sem("srliw")
        def srliw(h, ins):
            x = h.x
            x[ins.rd] = sext32((x[ins.rs1] & M32) >> ins.shamtw)

        @sem("sraiw")
        def sraiw(h, ins):
            x = h.x
            x[ins.rd] = ((((x[ins.rs1] & M32) ^ 0x8000_0000) - 0x8000_0000) >> ins.shamtw) & M

        @sem("addw")
        def addw(h, ins):
            x = h.x
            x[ins.rd] = sext32(x[ins.rs1] + x[ins.rs2])

        @sem("subw")
        def subw(h, ins):
            x = h.x
            x[ins.rd] = sext32(x[ins.rs1] - x[ins.rs2])

        @sem("sllw")
        def sllw(h, ins):
            x = h.x
            x[ins.rd] = sext32(x[ins.rs1] << (x[ins.rs2] & 31))

        @sem("srlw")
        def srlw(h, ins):
            x = h.x
            x[ins.rd] = sext32((x[ins.rs1] & M32) >> (x[ins.rs2] & 31))

        @sem("sraw")
        def sraw(h, ins):
            x = h.x
            x[ins.rd] = ((((x[ins.rs1] & M32) ^ 0x8000_0000) - 0x8000_0000) >> (x[ins.rs2] & 31)) & M

        @sem("mulw")
        def mulw(h, ins):
            x = h.x
            x[ins.rd] = sext32(x[ins.rs1] * x[ins.rs2])

        @sem("divw")
        def divw(h, ins):
            x = h.x
            b = x[ins.rs2] & M32
            if not b:
                x[ins.rd] = M
                return
            a = ((x[ins.rs1] & M32) ^ 0x8000_0000) - 0x8000_0000
            b = (b ^ 0x8000_0000) - 0x8000_0000
            q = abs(a) // abs(b)
            x[ins.rd] = sext32(-q if (a < 0) != (b < 0) else q)

        @sem("divuw")
        def divuw(h, ins):
            x = h.x
            b = x[ins.rs2] & M32
            x[ins.rd] = sext32((x[ins.rs1] & M32) // b) if b else M

        @sem("remw")
        def remw(h, ins):
            x = h.x
            b = x[ins.rs2] & M32
            if not b:
                x[ins.rd] = sext32(x[ins.rs1])
                return
            a = ((x[ins.rs1] & M32) ^ 0x8000_0000) - 0x8000_0000
            r = abs(a) % abs((b ^ 0x8000_0000) - 0x8000_0000)
            x[ins.rd] = sext32(-r if a < 0 else r)

        @sem("remuw")
        def remuw(h, ins):
            x = h.x
            b = x[ins.rs2] & M32
            x[ins.rd] = sext32((x[ins.rs1] & M32) % b if b else x[ins.rs1])

        @sem("add.uw")
        def add_uw(h, ins):
            x = h.x
            x[ins.rd] = ((x[ins.rs1] & M32) + x[ins.rs2]) & M

        shadd("sh1add.uw", 1, True)
        shadd("sh2add.uw", 2, True)
        shadd("sh3add.uw", 3, True)

        @sem("slli.uw")
        def slli_uw(h, ins):
            x = h.x
            x[ins.rd] = ((x[ins.rs1] & M32) << ins.shamt) & M

        @sem("clzw")
        def clzw(h, ins):
            x = h.x
            x[ins.rd] = 32 - (x[ins.rs1] & M32).bit_length()

        @sem("ctzw")
        def ctzw(h, ins):
            x = h.x
            v = x[ins.rs1] & M32
            x[ins.rd] = (v & -v).bit_length() - 1 if v else 32

        @sem("cpopw")
        def cpopw(h, ins):
            x = h.x
            x[ins.rd] = (x[ins.rs1] & M32).bit_count()

        @sem("rolw")
        def rolw(h, ins):
            x = h.x
            a, s = x[ins.rs1] & M32, x[ins.rs2] & 31
            x[ins.rd] = sext32((a << s) | (a >> (32 - s)))

        @sem("rorw")
        def rorw(h, ins):
            x = h.x
            a, s = x[ins.rs1] & M32, x[ins.rs2] & 31
            x[ins.rd] = sext32((a >> s) | (a << (32 - s)))

        @sem("roriw")
        def roriw(h, ins):
            x = h.x
            a, s = x[ins.rs1] & M32, ins.shamtw
            x[ins.rd] = sext32((a >> s) | (a << (32 - s)))

        amo_ops(".d", 8)

    return out


def export_name(xlen: int, mnemonic: str) -> str:
    """The module-level name a per-XLEN function is published under (``rv64_add_uw``)."""
    return f"rv{xlen}_" + mnemonic.replace(".", "_")


_CACHE: dict[int, dict[str, Semantics]] = {}


def functions(xlen: int) -> dict[str, Semantics]:
    """Mnemonic → semantic function for ``xlen`` (32 or 64), built once."""
    table = _CACHE.get(xlen)
    if table is None:
        table = dict(COMMON)
        for name, fn in _make(xlen).items():
            public = export_name(xlen, name)
            fn.__name__ = fn.__qualname__ = public
            fn.__module__ = __name__
            globals()[public] = fn
            table[name] = fn
        _CACHE[xlen] = table
    return table


# Publish both sets at import time, so unpickling finds e.g. ``rv32_add`` in this module
# even in a process that has not built the RV32 table yet.
functions(32)
functions(64)

__all__ = ["functions", "export_name", "nop", "ecall", "ebreak", "mret"]
