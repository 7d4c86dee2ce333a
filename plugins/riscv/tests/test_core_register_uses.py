"""``register_uses`` of the RISC-V table tells the truth, row by row (tessera_riscv.uses).

Tools trust it to prune work (the faults plugin decides a fault in a register nobody
reads again without running on), so a register an instruction reads but does not declare
would make a campaign lie.  For every row of the RV32 and RV64 base tables, with random
operand fields and random register values, one instruction runs twice from machines that
agree on the declared *reads* and differ in every other register: the runs must end the
same (trap or not, PC, memory, CSRs, output, declared writes), every register not
declared written must keep its value, and every declared write must be a real write (its
value the same whatever the register held before).
"""

from __future__ import annotations

import random

import pytest
from rvcore_support import ARCHS, BASE, XLENS, machine

from tessera.errors import TesseraError
from tessera.isa import Decoder
from tessera_riscv.syscalls import SYS_EXIT, SYS_WRITE

#: register values that make loads, stores and branches do something: addresses in RAM
#: (the machines get 1 MiB at 0), small numbers, signs, zero
DATA = 0x8000


def _values(rng: random.Random, xlen: int) -> int:
    pick = rng.randrange(6)
    if pick == 0:
        return DATA + 8 * rng.randrange(64)
    if pick == 1:
        return rng.randrange(-4, 64) & ((1 << xlen) - 1)
    if pick == 2:
        return 0
    return rng.getrandbits(xlen)


def _run(xlen: int, word: int, regs: list[int]) -> tuple[dict, list[int], list[int]]:
    m = machine(xlen, config={"echo": False})
    m.set_engine("step")
    m.space.write_bytes(BASE, word.to_bytes(4, "little"), force=True)
    m.set_entry(BASE)
    hart = m.agent("hart0")
    for i in range(1, 32):
        hart.x[i] = regs[i]
    before = list(hart.x)
    outcome: object
    try:
        outcome = m.run(max_steps=1, raise_on_budget=False).reason
    except TesseraError as exc:
        outcome = type(exc).__name__
    state = m.state()
    agent = state["agents"]["hart0"]
    seen = {"outcome": outcome, "pc": agent["pc"], "csrs": agent["csrs"], "traps": agent["traps"],
            "status": agent["status"], "exit": agent["exit_code"], "instret": agent["instret"],
            "ram": bytes(m.space.read_bytes(0, 1 << 16)), "io": bytes(m.ext["riscv_io"].stdout)}
    return seen, before, list(hart.x)


def _cases(xlen: int) -> list[tuple[str, int]]:
    arch = ARCHS[xlen]
    rng = random.Random(xlen)
    out = []
    for enc in arch.encodings:
        if not enc.flags & {"rv32", "rv64"}:
            continue
        for _ in range(6):
            out.append((enc.mnemonic, enc.match | (rng.getrandbits(32) & ~enc.mask)))
    return out


@pytest.mark.parametrize("xlen", XLENS)
def test_every_base_row_reads_and_writes_what_it_declares(xlen: int) -> None:
    arch = ARCHS[xlen]
    decoder = Decoder(arch)
    rng = random.Random(1000 + xlen)
    checked = dynamic = 0
    for _mnemonic, word in _cases(xlen):
        ins = decoder.decode(word, BASE)
        if ins.encoding.mnemonic == "illegal" or not ins.encoding.flags & {"rv32", "rv64"}:
            continue
        uses = arch.register_uses(ins)
        assert uses is not None, f"{ins.mnemonic}: a base row must declare its uses"
        for _ in range(4):
            a = [0] + [_values(rng, xlen) for _ in range(31)]
            if ins.mnemonic == "ecall":
                a[17] = rng.choice([SYS_WRITE, SYS_EXIT, 1234])
                a[10], a[11], a[12] = 1, DATA, rng.randrange(4)
            if callable(uses):
                # which registers depends on state: ask what this execution used (a7 is kept)
                probe = machine(xlen)
                for i in range(1, 32):
                    probe.agent("hart0").x[i] = a[i]
                reads, writes = uses(probe.agent("hart0"))
                dynamic += 1
            else:
                reads, writes = uses
            read_regs = {n for f, n in reads if f == "x"}
            write_regs = {n for f, n in writes if f == "x"}
            assert all(f == "x" for f, _ in (*reads, *writes))
            b = [0] + [a[i] if i in read_regs else _values(rng, xlen) ^ 0x5A5A for i in range(1, 32)]
            seen_a, before_a, after_a = _run(xlen, word, a)
            seen_b, before_b, after_b = _run(xlen, word, b)
            assert seen_a == seen_b, (f"{ins.mnemonic} {word:#010x}: depends on a register it does not "
                                      f"declare reading (reads {sorted(read_regs)})")
            completed = seen_a["instret"] == 1
            for i in range(1, 32):
                if i in write_regs and completed:
                    if i not in read_regs:
                        assert after_a[i] == after_b[i], f"{ins.mnemonic}: x{i} is declared written but kept"
                else:
                    assert after_a[i] == before_a[i] and after_b[i] == before_b[i], \
                        f"{ins.mnemonic} {word:#010x}: wrote x{i}, which it does not declare writing"
            checked += 1
    assert checked > 6 * 40
    assert dynamic > 0, "ecall's state-dependent uses were exercised"


def test_extension_rows_are_unknown() -> None:
    """A row an extension adds may use ``hart.x`` any way: the table says it cannot tell."""
    from tessera.isa import Encoding
    from tessera_riscv.encoding import CUSTOM_0
    from tessera_riscv.extension import RiscvExtension, make_arch

    def touch(hart: object, ins: object) -> None:
        return None

    ext = RiscvExtension("probe", encodings=(Encoding("probe", CUSTOM_0, 0x7F, "{rd}, {rs1}", touch),))
    arch = make_arch("rv32-probe", 32, (ext,))
    decoder = Decoder(arch)
    assert arch.register_uses(decoder.decode(CUSTOM_0 | (5 << 7) | (6 << 15), BASE)) is None
    add = decoder.decode(0x00C58533, BASE)  # add a0, a1, a2
    assert arch.register_uses(add) == ((("x", 11), ("x", 12)), (("x", 10),))
