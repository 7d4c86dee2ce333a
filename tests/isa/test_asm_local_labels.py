"""GNU numeric local labels: ``1:`` defined any number of times, ``1b``/``1f`` used."""

import pytest
from isa_toyarch import ToyAssembler, toy32, toyx

from tessera.errors import AssemblyError
from tessera.isa import Decoder
from tessera.isa.asm import Assembler, assemble
from tessera.isa.expr import ExpressionError, evaluate, local_reference

ARCH = toy32(assembler=ToyAssembler)
DEC = Decoder(ARCH)


def words(text, count=None, **kw):
    """The program and its first ``count`` words decoded (all by default)."""
    prog = assemble(ARCH, text, **kw)
    addr, data = prog.image()
    count = len(data) // 4 if count is None else count
    return prog, [DEC.decode(int.from_bytes(data[i:i + 4], "little"), addr + i)
                  for i in range(0, 4 * count, 4)]


def test_backward_and_forward_references_pick_the_nearest_definition():
    prog, ins = words("""
1:      addi r1, r1, -1
        bne r1, r0, 1b          # the 1: above (address 0)
        beq r0, r0, 1f          # the next 1: (address 16)
        jmp 2f                  # 2: at 20
1:      jmp 1b                  # its own line: a jump to itself
2:      beq r0, r0, 1b          # the 1: at 16
""")
    targets = [(i.address + i.operands[f]) for i in ins for f in ("off", "target")
               if f in i.operands]
    assert targets == [0, 16, 20, 16, 16]
    assert dict(prog.symbols) == {}  # local labels are not symbols


def test_local_labels_in_data_expressions_and_sections():
    prog = assemble(ARCH, """
1:      .word 1f - 1b, 1f       # at 0: 1b is this line's label, 1f the next (8)
1:      .word 1b                # at 8: itself
        .data
1:      .word 1b, 3f            # .data follows at 16: 16, and 3: at 24
3:
""")
    data = b"".join(d for _, d in prog.segments)
    values = [int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4)]
    assert values == [8, 8, 8, 16, 24]


def test_zero_label_and_binary_literals_do_not_clash():
    assert evaluate("0b101") == 5
    assert evaluate("0b + 1", {"0b": 7}) == 8
    assert evaluate("0f", {"0f": 3}) == 3
    assert evaluate("0x1f") == 31
    assert local_reference("007f") == ("7", "f") and local_reference("f1") is None
    with pytest.raises(ExpressionError, match="malformed number '1b'"):
        evaluate("1bx")
    _, ins = words("0: jmp 0b\n00: jmp 0b")  # leading zeros name the same label
    assert [i.operands["target"] for i in ins] == [0, 0]


def test_uppercase_direction_is_accepted():
    _, ins = words("1: jmp 1B")
    assert ins[0].operands["target"] == 0


def test_missing_definitions_are_errors_that_say_which_way():
    with pytest.raises(AssemblyError) as info:
        assemble(ARCH, "jmp 1b\n1: halt\njmp 1f\n.word 7b", file="l.s")
    assert [(e.line, e.column, e.message) for e in info.value.errors] == [
        (1, 5, "local label reference '1b': no label 1: at or before this line"),
        (3, 5, "local label reference '1f': no label 1: after this line"),
        (4, 7, "local label reference '7b': no label 7: at or before this line"),
    ]


def test_local_labels_through_pseudo_instructions_and_assignments():
    prog, ins = words("""
1:      call2 1f                # expands to two jumps, both to the same 1:
x = 1f                          # an assignment referring forward
1:      .word x
""", count=2)
    assert [i.operands["target"] for i in ins] == [8, 4]
    assert int.from_bytes(prog.image()[1][8:12], "little") == 8


def test_layout_values_may_use_backward_local_labels_only():
    prog = assemble(ARCH, "1: .word 0\n.space . - 1b + 4\n2: .word 2b")
    assert dict(prog.symbols) == {} and prog.size == 4 + 8 + 4
    with pytest.raises(AssemblyError, match="must be defined before it is used"):
        assemble(ARCH, ".space 1f - .\n1: halt")


def test_local_labels_on_a_suffix_architecture():
    prog = Assembler(toyx()).assemble("1: ld.b r1, 1b[r2]\nld r1, 1f[r2]\n1:")
    assert prog.size == 8


def test_a_local_label_is_not_a_symbol_name():
    with pytest.raises(AssemblyError, match="undefined symbol 'x1'"):
        assemble(ARCH, "1: jmp x1")
