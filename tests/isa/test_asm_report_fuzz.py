"""Properties of multi-error reports: source order, positions, and no cascades."""

from hypothesis import given, settings
from hypothesis import strategies as st
from isa_toyarch import ToyAssembler, toy32, toyx

from tessera.errors import AssemblyError
from tessera.isa.asm import assemble
from tessera.isa.asm.report import MAX_SHOWN

ARCHES = [toy32(assembler=ToyAssembler), toyx()]

# Lines that assemble on toy32 wherever they are placed among each other (each a
# multiple of four bytes, so instructions stay aligned).
GOOD = [
    "addi r1, r1, 1", "add r1, r2, r3", "beq r1, r2, top", "bne r0, r1, end", "jmp top",
    "jmp end", "ld r2, 4(r3)", ".word top, end", ".byte 1, 2, 3, 4", ".align 4", "halt", "nop",
    "x = end - top", "li r4, x", ".ascii \"abcd\"", "1: nop", "jmp 1b", "mv r1, r2",
]
# Lines with exactly one error each, whatever surrounds them.
BAD = [
    "frob r1", "addi r1, r1, 99999", ".word 0x1ffffffff", "ld r1, 4(r9)", "jmp nowhere", "@@",
    ".wrod 1", "beq r1, r2", "add r1, r2, sp, r3", ".align 3", "li r1, undefined_thing",
    "jmp 9f", "bad",
]


@settings(deadline=None, max_examples=150)
@given(st.lists(st.sampled_from(GOOD), max_size=12), st.lists(
    st.tuples(st.integers(0, 12), st.sampled_from(BAD)), min_size=1, max_size=5))
def test_each_bad_line_is_reported_once_and_nothing_else(good, bad):
    lines = ["top: 1:", "x = end - top"] + list(good)
    for position, text in sorted(bad, key=lambda b: b[0], reverse=True):
        lines.insert(1 + min(position, len(lines) - 1), text)
    lines.append("end:")
    bad_lines = [n for n, text in enumerate(lines, 1) if text in BAD]
    try:
        assemble(ARCHES[0], "\n".join(lines), file="p.s")
    except AssemblyError as exc:
        assert [e.line for e in exc.errors] == bad_lines, str(exc)
        return
    raise AssertionError("no error reported")


@settings(deadline=None)
@given(st.sampled_from(ARCHES), st.lists(st.text(st.characters(min_codepoint=32,
                                                                max_codepoint=126),
                                                  max_size=40), max_size=40))
def test_reports_are_sorted_positioned_and_bounded(arch, lines):
    text = "\n".join(lines)
    try:
        assemble(arch, text, file="f.s")
    except AssemblyError as exc:
        errors = exc.errors
        assert errors and errors[0].message == exc.message and errors[0].line == exc.line
        assert [(e.line, e.column) for e in errors] == sorted((e.line, e.column) for e in errors)
        for err in errors:
            assert err.file == "f.s" and 1 <= err.line <= len(lines) and err.column >= 1
            assert "\n" not in err.message
        shown = str(exc).splitlines()
        assert len(shown) == min(len(errors), MAX_SHOWN) + (len(errors) > MAX_SHOWN)
        assert all(line.startswith("f.s:") for line in shown[:MAX_SHOWN])
