"""Loads, stores and atomics: widths, extension, the misaligned policy, access faults."""

from __future__ import annotations

import pytest
from rvcore_support import XLENS, execute, hart, machine, mask, reg_index, run

from tessera.errors import MemoryFault, UnhandledTrap

DATA = 0x8000  # a scratch address in RAM, away from the code


def mem(xlen: int, text: str, data: bytes = b"", **regs: int):
    """Run ``text`` with ``data`` at DATA and a1 = DATA; returns (hart, machine)."""
    from rvcore_support import BASE
    from rvcore_support import machine as new_machine

    from tessera.isa.asm import assemble

    m = new_machine(xlen)
    m.space.write_bytes(DATA, data or bytes(16))
    program = assemble(m.arch, text, base=BASE)
    (start, blob), = program.segments
    m.space.write_bytes(start, blob)
    m.set_entry(start)
    h = hart(m)
    h.x[reg_index("a1")] = DATA
    for name, value in regs.items():
        h.x[reg_index(name)] = value & mask(xlen)
    m.run(max_steps=1000, until_pc=[start + len(blob)])
    return h, m


@pytest.mark.parametrize("xlen", XLENS)
def test_load_widths_and_extension(xlen):
    m = mask(xlen)
    data = bytes([0x80, 0xFF, 0x7F, 0x80, 0x01, 0x02, 0x03, 0x84])
    h, _ = mem(xlen, """
        lb   a0, 0(a1)
        lbu  a2, 0(a1)
        lh   a3, 0(a1)
        lhu  a4, 0(a1)
        lw   a5, 0(a1)
        lh   a6, 2(a1)
""", data)
    x = h.x
    assert x[reg_index("a0")] == -0x80 & m
    assert x[reg_index("a2")] == 0x80
    assert x[reg_index("a3")] == -0x80 & m          # 0xff80
    assert x[reg_index("a4")] == 0xFF80
    assert x[reg_index("a5")] == 0x807F_FF80 if xlen == 32 else 0xFFFF_FFFF_807F_FF80
    assert x[reg_index("a6")] == -0x7F81 & m        # 0x807f


def test_rv64_loads():
    data = bytes([0x80, 0xFF, 0x7F, 0x80, 0x01, 0x02, 0x03, 0x84])
    h, _ = mem(64, """
        lwu  a0, 0(a1)
        ld   a2, 0(a1)
        lw   a3, 4(a1)
        lwu  a4, 4(a1)
""", data)
    x = h.x
    assert x[reg_index("a0")] == 0x807F_FF80
    assert x[reg_index("a2")] == 0x8403_0201_807F_FF80
    assert x[reg_index("a3")] == 0xFFFF_FFFF_8403_0201
    assert x[reg_index("a4")] == 0x8403_0201


@pytest.mark.parametrize("xlen", XLENS)
def test_store_widths(xlen):
    h, m = mem(xlen, """
        sb   a2, 0(a1)
        sh   a2, 2(a1)
        sw   a2, 4(a1)
        sw   a2, -4(a1)
""", a2=0x1122_3344)
    assert m.space.read_bytes(DATA - 4, 12) == bytes.fromhex("44332211" "44004433" "44332211")


def test_rv64_sd():
    h, m = mem(64, "sd a2, 0(a1)", a2=0x1122_3344_5566_7788)
    assert m.space.read(DATA, 8) == 0x1122_3344_5566_7788


@pytest.mark.parametrize("xlen", XLENS)
def test_address_computation_wraps(xlen):
    h, m = mem(xlen, "sw a3, 16(a2)\nlw a0, 16(a2)", a2=-16, a3=5)   # address (2**XLEN - 16) + 16 = 0
    assert h.x[reg_index("a0")] == 5
    assert m.space.read(0, 4) == 5


# ------------------------------------------------------------------ misaligned accesses


@pytest.mark.parametrize("xlen", XLENS)
def test_misaligned_accesses_are_allowed_by_default(xlen):
    h, m = mem(xlen, """
        sw   a2, 1(a1)
        lw   a0, 1(a1)
        lhu  a3, 3(a1)
""", a2=0x1122_3344)
    assert h.x[reg_index("a0")] == 0x1122_3344
    assert h.x[reg_index("a3")] == 0x1122
    assert m.space.read_bytes(DATA, 6) == bytes.fromhex("004433221100")


TRAP_PROGRAM = """
        .globl _start
_start: la    t0, handler
        csrw  mtvec, t0
        li    a1, 0x8001
        li    s1, 0
        {access}
        li    a0, 0
        li    a7, 93
        ecall
        .align 2
handler:
        csrr  a0, mcause
        csrr  s2, mtval
        csrr  s3, mepc
        li    a7, 93
        ecall
"""


@pytest.mark.parametrize("xlen", XLENS)
@pytest.mark.parametrize(("access", "cause"), [
    ("lw a0, 0(a1)", 4), ("lh a0, 0(a1)", 4), ("lhu a0, 2(a1)", 4),
    ("sw s1, 0(a1)", 6), ("sh s1, 0(a1)", 6),
])
def test_misaligned_accesses_trap_when_configured(xlen, access, cause):
    m, result = run(TRAP_PROGRAM.format(access=access), xlen, config={"misaligned": "trap"})
    h = hart(m)
    assert result.exit_code == cause
    assert h.x[reg_index("s2")] in (0x8001, 0x8003)          # mtval: the address
    assert m.space.read(0x8000, 4) == 0                      # the store did not happen


@pytest.mark.parametrize("xlen", XLENS)
def test_byte_accesses_never_misalign(xlen):
    m, result = run(TRAP_PROGRAM.format(access="lb a0, 0(a1)\nsb a0, 0(a1)"), xlen,
                    config={"misaligned": "trap"})
    assert result.exit_code == 0


def test_rv64_doubleword_alignment_is_eight_bytes():
    m, result = run(TRAP_PROGRAM.format(access="addi a1, a1, 3\nld a0, 0(a1)"), 64,
                    config={"misaligned": "trap"})
    assert result.exit_code == 4                             # 0x8004: aligned for lw, not ld
    m, result = run(TRAP_PROGRAM.format(access="addi a1, a1, 7\nld a0, 0(a1)"), 64,
                    config={"misaligned": "trap"})
    assert result.exit_code == 0


def test_misaligned_trap_without_handler_stops_the_run():
    m = machine(32, "li a1, 0x8001\nlw a0, 0(a1)", config={"misaligned": "trap"})
    with pytest.raises(UnhandledTrap, match=r"load address misaligned \(cause 4, value 0x8001\)"):
        m.run(max_steps=10)


# ------------------------------------------------------------------ access faults


@pytest.mark.parametrize("xlen", XLENS)
@pytest.mark.parametrize(("access", "cause"), [
    ("lw a0, 0(a1)", 5), ("lbu a0, 0(a1)", 5), ("sw s1, 0(a1)", 7), ("sb s1, 0(a1)", 7),
    ("amoadd.w a0, s1, (a1)", 7),
])
def test_access_faults_are_taken_with_a_handler(xlen, access, cause):
    text = TRAP_PROGRAM.replace("li    a1, 0x8001", "li    a1, 0x40000000")
    m, result = run(text.format(access=access), xlen)
    h = hart(m)
    assert result.exit_code == cause
    assert h.x[reg_index("s2")] == 0x4000_0000


@pytest.mark.parametrize("xlen", XLENS)
def test_access_fault_without_handler_is_the_memory_fault(xlen):
    m = machine(xlen, "li a1, 0x40000000\nsw a1, 0(a1)")
    with pytest.raises(MemoryFault) as info:
        m.run(max_steps=10)
    assert str(info.value) == ("memory fault: write of unmapped address "
                               "(agent hart0, pc 0x00010004, address 0x40000000)")


@pytest.mark.parametrize("xlen", XLENS)
def test_access_crossing_the_end_of_ram(xlen):
    m = machine(xlen, "li a1, 0xFFFFE\nlw a0, 0(a1)")              # RAM is 1 MiB in these tests
    with pytest.raises(MemoryFault, match="crosses the end"):
        m.run(max_steps=10)


@pytest.mark.parametrize("xlen", XLENS)
def test_fetch_fault_with_a_handler(xlen):
    m, result = run("""
        la    t0, handler
        csrw  mtvec, t0
        li    t1, 0x40000000
        jr    t1
        .align 2
handler:
        csrr  a0, mcause
        csrr  s2, mtval
        csrr  s3, mepc
        li    a7, 93
        ecall
""", xlen)
    h = hart(m)
    assert result.exit_code == 1
    assert h.x[reg_index("s2")] == h.x[reg_index("s3")] == 0x4000_0000


# ------------------------------------------------------------------ self-modifying code


@pytest.mark.parametrize("xlen", XLENS)
def test_stores_to_code_take_effect(xlen):
    m, result = run("""
        la    t0, patch
        li    t1, 0x02a00513      # addi a0, zero, 42
        sw    t1, 0(t0)
        fence.i
patch:  li    a0, 1
        li    a7, 93
        ecall
""", xlen)
    assert result.exit_code == 42


# ------------------------------------------------------------------ Zaamo


AMO_CASES = [
    ("amoswap", 5, -3, -3),
    ("amoadd", 5, -3, 2),
    ("amoxor", 0b1100, 0b1010, 0b0110),
    ("amoand", 0b1100, 0b1010, 0b1000),
    ("amoor", 0b1100, 0b1010, 0b1110),
    ("amomin", 5, -3, -3),
    ("amomax", 5, -3, 5),
    ("amominu", 5, -3, 5),
    ("amomaxu", 5, -3, -3),
]


@pytest.mark.parametrize("xlen", XLENS)
@pytest.mark.parametrize(("op", "old", "src", "new"), AMO_CASES)
def test_amo_word(xlen, op, old, src, new):
    h, m = mem(xlen, f"amo{op[3:]}.w a0, a2, (a1)", (old & 0xFFFF_FFFF).to_bytes(4, "little") + b"\x99",
               a2=src)
    assert h.x[reg_index("a0")] == old & mask(xlen)                 # old value, sign-extended
    assert m.space.read(DATA, 4) == new & 0xFFFF_FFFF
    assert m.space.read(DATA + 4, 1) == 0x99                         # nothing else touched


@pytest.mark.parametrize(("op", "old", "src", "new"), AMO_CASES)
def test_amo_doubleword(op, old, src, new):
    m64 = mask(64)
    h, m = mem(64, f"amo{op[3:]}.d.aqrl a0, a2, (a1)", (old & m64).to_bytes(8, "little"), a2=src)
    assert h.x[reg_index("a0")] == old & m64
    assert m.space.read(DATA, 8) == new & m64


def test_amo_word_on_rv64_uses_the_low_32_bits_of_rs2():
    h, m = mem(64, "amomaxu.w a0, a2, (a1)", (5).to_bytes(4, "little"), a2=0x1_0000_0003)
    assert m.space.read(DATA, 4) == 5                                 # 3 < 5 (upper bits ignored)
    h, m = mem(64, "amomin.w a0, a2, (a1)", (0x8000_0000).to_bytes(4, "little"), a2=0x0_7FFF_FFFF)
    assert h.x[reg_index("a0")] == 0xFFFF_FFFF_8000_0000              # old value sign-extended
    assert m.space.read(DATA, 4) == 0x8000_0000


@pytest.mark.parametrize("xlen", XLENS)
def test_amo_rd_equal_rs2(xlen):
    h, m = mem(xlen, "amoadd.w a2, a2, (a1)", (10).to_bytes(4, "little"), a2=5)
    assert h.x[reg_index("a2")] == 10
    assert m.space.read(DATA, 4) == 15


@pytest.mark.parametrize("xlen", XLENS)
def test_misaligned_amo_always_traps(xlen):
    access = "amoadd.w a0, s1, (a1)"
    m, result = run(TRAP_PROGRAM.format(access=access), xlen)          # policy "allow"
    assert result.exit_code == 6
    assert hart(m).x[reg_index("s2")] == 0x8001


@pytest.mark.parametrize("xlen", XLENS)
def test_amo_with_rd_x0(xlen):
    h, m = mem(xlen, "amoswap.w zero, a2, (a1)", (10).to_bytes(4, "little"), a2=5)
    assert h.x[0] == 0 and m.space.read(DATA, 4) == 5


def test_execute_helper_sanity():
    assert execute(32, "li a0, 3").x[reg_index("a0")] == 3
