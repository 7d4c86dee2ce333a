"""How the rows bind their functions: the registry, the per-XLEN copies, refine's declared variants."""

from __future__ import annotations

import pickle

import pytest
from rvcore_support import ARCHS, XLENS, hart, load, machine, reg_index

from tessera.errors import UnhandledTrap
from tessera.isa import Encoding, SemanticRef
from tessera_riscv import RiscvExtension, make_arch
from tessera_riscv import encoding as table
from tessera_riscv.encoding import CUSTOM_0, OPCODE
from tessera_riscv.semantics import REGISTRY, base, m, misaligned, system, zaamo, zba, zbb, zicsr
from tessera_riscv.semantics.xlen import CONSTANTS, XlenFunctions

EXTENSIONS = (base, system, m, zicsr, zba, zbb, zaamo)


@pytest.mark.parametrize("xlen", XLENS)
def test_every_row_names_a_registered_function_and_declared_variants(xlen):
    for enc in ARCHS[xlen].encodings:
        assert type(enc.semantics) is SemanticRef, enc.mnemonic
        assert callable(REGISTRY.lookup(enc.semantics.name)), enc
        names = dict(enc.variants)
        assert names["misaligned-fetch"] == REGISTRY.ref("misaligned_fetch"), enc.mnemonic
        for ref in names.values():
            assert callable(REGISTRY.lookup(ref.name)), (enc.mnemonic, ref)
        if "pure" in enc.flags:
            assert names["x0"] == REGISTRY.ref("nop"), enc.mnemonic
        if "branch" in enc.flags:
            assert names["misaligned-target"] == REGISTRY.ref("misaligned_branch")


def test_the_table_is_the_extensions_rows_in_order():
    rows = table.ROWS
    assert rows == (base.ROWS + system.ROWS + base.WORD_ROWS + m.ROWS + zicsr.ROWS + zba.ROWS
                    + zbb.ROWS + zaamo.ROWS)
    for xlen in XLENS:
        listed = [e.mnemonic for e in ARCHS[xlen].encodings]
        assert listed == [r.mnemonic for r in rows if xlen in r.xlens]
    assert [e.mnemonic for e in ARCHS[32].encodings][:3] == ["lui", "auipc", "jal"]
    assert sum(len(ext.ROWS) for ext in EXTENSIONS) + len(base.WORD_ROWS) == len(rows)


@pytest.mark.parametrize(("mnemonic", "per_xlen"), [
    ("addi", True), ("add", True), ("blt", True), ("lh", True), ("sh2add", True), ("rori", True),
    ("amoadd.w", True), ("beq", False), ("xor", False), ("csrrw", False), ("cpop", False),
])
def test_xlen_dependent_functions_are_copies_with_their_constants(mnemonic, per_xlen):
    fns = {xlen: next(e for e in ARCHS[xlen].encodings if e.mnemonic == mnemonic).semantics.resolve()
           for xlen in XLENS}
    if not per_xlen:
        assert fns[32] is fns[64]
        assert fns[32].__qualname__ == REGISTRY.ref(mnemonic).resolve().__qualname__
        return
    assert fns[32] is not fns[64] and fns[32].__code__ is fns[64].__code__   # one body, two copies
    for xlen, fn in fns.items():
        assert fn.__qualname__ == f"rv{xlen}_" + mnemonic.replace(".", "_")
        for name, value in CONSTANTS[xlen].items():
            if name in fn.__code__.co_names:
                assert fn.__globals__[name] == value, (mnemonic, name)


def test_lw_sign_extends_only_where_it_is_narrower_than_xlen():
    assert REGISTRY.lookup("rv32_lw").__code__ is base.load.__code__
    assert REGISTRY.lookup("rv64_lw").__code__ is base.load_signed.__code__
    assert REGISTRY.lookup("rv64_lw").__globals__["SIGN_BIT"] == 0x8000_0000


def test_an_unspecialised_original_refuses_to_compute():
    class Hart:
        x = [0] * 32

    class Ins:
        rd, rs1, rs2 = 1, 2, 3

    with pytest.raises(TypeError, match="Unspecialised"):
        base.add(Hart(), Ins())


def test_a_function_reading_no_xlen_constant_is_registered_once():
    per_xlen = XlenFunctions(REGISTRY)
    per_xlen.add("cpop", zbb.cpop)
    with pytest.raises(ValueError, match="reads no XLEN constant"):
        per_xlen.register()


@pytest.mark.parametrize("xlen", XLENS)
def test_rows_pickle_by_name(xlen):
    rows = ARCHS[xlen].encodings
    again = pickle.loads(pickle.dumps(rows))
    assert again == rows
    assert [e.semantics.resolve() for e in again] == [e.semantics.resolve() for e in rows]


# ------------------------------------------------------------------ refine installs declared variants


def _entry(mach, address):
    return mach.space.decode_cache(mach.arch.name)[address]


@pytest.mark.parametrize("xlen", XLENS)
def test_refine_installs_the_rows_variants(xlen):
    mach = machine(xlen)
    symbols = load(mach, """
        addi  zero, a0, 5          # pure, writes x0: the x0 variant
        addi  a1, zero, 7          # li: the value is precomputed
        addi  a2, a1, 1            # the row's own function
        jal   zero, next           # jal x0: no link
next:   lui   zero, 1
        li    a7, 93
        li    a0, 0
        ecall
""")
    assert mach.run(max_steps=100).exit_code == 0
    start = 0x10000
    assert _entry(mach, start).semantic is base.nop
    assert _entry(mach, start + 4).semantic is base.set_value
    assert _entry(mach, start + 8).semantic is REGISTRY.lookup(f"rv{xlen}_addi")
    assert _entry(mach, start + 12).semantic is base.j
    assert _entry(mach, symbols["next"]).semantic is base.nop
    assert hart(mach).x[reg_index("a1")] == 7 and hart(mach).x[reg_index("a2")] == 8


@pytest.mark.parametrize("xlen", XLENS)
def test_a_misaligned_branch_target_traps_through_its_variant(xlen):
    mach = machine(xlen, """
        li    a0, 1
        .word 0x00050363           # beq a0, zero, .+6: not taken, so no trap
        li    a7, 93
        li    a0, 0
        ecall
""")
    assert mach.run(max_steps=100).exit_code == 0
    assert _entry(mach, 0x10004).semantic is misaligned.misaligned_branch


def _custom(hart, ins):
    hart.x[10] = 99


CUSTOM = RiscvExtension("cust", encodings=(
    Encoding("cust.set", CUSTOM_0, OPCODE | 0xFFFF_FF80, "", _custom, "alu"),))


def test_extension_rows_declare_the_fetch_trap_and_take_it_misaligned():
    arch = make_arch("rv32im-cust", 32, extensions=[CUSTOM])
    row = arch.encodings[-1]
    assert row.mnemonic == "cust.set" and row.semantics is _custom
    assert dict(row.variants) == {"misaligned-fetch": REGISTRY.ref("misaligned_fetch")}
    mach = machine(arch=arch)
    load(mach, "nop\n.word 0x0000000b\n.word 0x0000000b")
    mach.set_entry(0x10006)                  # the custom word, misaligned
    with pytest.raises(UnhandledTrap, match="instruction address misaligned"):
        mach.run(max_steps=10)
    assert hart(mach).x[10] == 0


@pytest.mark.parametrize("xlen", XLENS)
def test_an_undecodable_word_at_a_misaligned_address_is_a_misaligned_fetch(xlen):
    mach = machine(xlen, "nop\n.word 0xffffffff\n.word 0xffffffff")
    mach.set_entry(0x10006)
    with pytest.raises(UnhandledTrap, match="instruction address misaligned"):
        mach.run(max_steps=10)
