"""Property: for any input text the assembler returns a Program or raises AssemblyError.

Nothing else may escape (no IndexError, RecursionError, ValueError, MemoryError …),
and every error names a line of the input and a column on it.
"""

from hypothesis import example, given, settings
from hypothesis import strategies as st
from isa_toyarch import ToyAssembler, toy32, toy48, toyx

from tessera.errors import AssemblyError
from tessera.isa.asm import Program, assemble

ARCHES = [toy32(assembler=ToyAssembler), toy48(), toyx()]

TOKENS = [
    "add", "addi", "ld", "ldw", "beq", "bne", "jmp", "li", "mode", "halt", "nop", "sem.wait",
    "mv", "call2", "bad", "movi", "r0", "r1", "r7", "sp", "r9", "user", "machine",
    ".org", ".align", ".p2align", ".byte", ".half", ".word", ".dword", ".space", ".zero",
    ".ascii", ".asciz", ".string", ".equ", ".set", ".global", ".entry", ".text", ".data",
    ".section", ".twice", "_start", "x", "y", ".", "0", "1", "-1", "4", "0x10", "0xffffffff",
    "4096", "ld.b", "st.o", "fence.cta", "vec.ld.w", "sync", "shl", ".q", "[", "]",
    "'a'", "'\\n'", '"s"', '"\\x41;"', "(", ")", ",", ":", "=", "+", "-", "*", "/",
    "%", "<<", ">>", "&", "|", "^", "~", "#", ";", "//", "!", " ", "  ", "\t", "\\",
]


def _check(arch, text):
    try:
        result = assemble(arch, text, file="fuzz.s")
    except AssemblyError as exc:
        assert exc.file == "fuzz.s"
        assert 1 <= exc.line <= text.count("\n") + 1, (exc.line, str(exc))
        assert exc.column >= 1, str(exc)
        assert "\n" not in exc.message
        return
    assert isinstance(result, Program)
    assert all(data for _, data in result.segments)
    addresses = [a for a, _ in result.segments]
    assert addresses == sorted(addresses)


@settings(deadline=None)
@given(st.sampled_from(ARCHES), st.text(max_size=300))
def test_random_text(arch, text):
    _check(arch, text)


@settings(deadline=None)
@given(st.sampled_from(ARCHES),
       st.lists(st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=60),
                max_size=12))
def test_random_printable_lines(arch, lines):
    _check(arch, "\n".join(lines))


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(ARCHES),
       st.lists(st.lists(st.sampled_from(TOKENS), max_size=10).map("".join), max_size=12),
       st.lists(st.lists(st.sampled_from(TOKENS), max_size=10).map(" ".join), max_size=4))
@example(ARCHES[0], ["x: .equ y, x", ".org y", "call2 x"], [])
@example(ARCHES[0], ["(" * 3000], [".byte " + "(" * 3000])
@example(ARCHES[0], [".set x, 0xffffffffffffffff"] + [".set x, x * x"] * 12, [])
@example(ARCHES[0], ["1:"], [".data", ".org 0x100000000", ".byte 1"])
def test_token_soup(arch, tight, spaced):
    _check(arch, "\n".join(tight + spaced))
