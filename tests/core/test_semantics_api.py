"""``tessera.semantics``: ``no_inline``, ``inline_report`` and ``row_functions``."""

from __future__ import annotations

import functools

import attrs

from tessera.semantics import InlineReport, function_name, inline_report, no_inline, row_functions
from tessera_toyarch import TOY
from tessera_toyarch import semantics as toy_semantics

MASK = 0xFFFF_FFFF


def add(cpu, ins):
    cpu.r[ins.rd] = (cpu.r[ins.rs] + cpu.r[ins.rt]) & MASK


def branch(cpu, ins):
    if cpu.r[ins.rs]:
        return ins.address + ins.off
    return None


@no_inline
def heavy(cpu, ins):
    cpu.r[ins.rd] = 0


def counts(cpu, ins):
    ins.seen = getattr(ins, "seen", 0) + 1


def three(cpu, ins, extra):
    return None


def rebinds(cpu, ins):
    ins = None  # noqa: F841 - a function that rebinds its parameter, on purpose


def closure(cpu, ins):
    return sum(cpu.r[i] for i in range(ins.rd))


def test_a_plain_function_is_inlined():
    assert inline_report(add) == InlineReport(True, inline_report(add).reason, False)
    assert inline_report(add).reason.startswith("plain function")
    assert inline_report(branch).inlined and inline_report(branch).terminal


def test_no_inline_is_the_same_decorator_in_its_old_home():
    from tessera.engine import inline

    assert inline.no_inline is no_inline
    report = inline_report(heavy)
    assert (report.inlined, report.reason) == (False, "marked no_inline")
    assert inline.template(heavy) is None


def test_storing_into_ins_is_pointed_out():
    report = inline_report(counts)
    assert "stores ins.seen" in report.reason and "read-only" in report.reason


def test_what_makes_a_function_called():
    assert "3 parameters" in inline_report(three).reason
    assert "assigns to its parameter ins" == inline_report(rebinds).reason
    assert not inline_report(closure).inlined  # a generator expression is an inner scope
    part = inline_report(functools.partial(add))
    assert (part.inlined, part.terminal) == (False, True)  # no source: may end a block
    assert "partial object" in part.reason
    assert not inline_report(len).inlined


def test_function_names():
    assert function_name(add) == f"{__name__}.add"
    assert function_name(None) == "-"
    assert function_name(functools.partial(add)).startswith("functools.partial(")


def _refine(ins, peek):
    """Rows writing r0 become nops (as RISC-V's refine does)."""
    if ins.mnemonic == "add" and not ins.rd:
        ins.run = toy_semantics.nop


def test_row_functions_without_refine_are_the_rows_own():
    found = row_functions(TOY)
    assert [(f.encoding, f.function, f.via) for f in found] == [(e, e.semantics, "row") for e in TOY.encodings]


def test_row_functions_find_what_refine_swaps_in():
    arch = attrs.evolve(TOY, refine=_refine)
    found = [(f.encoding.mnemonic, f.function, f.via) for f in row_functions(arch)]
    assert ("add", toy_semantics.add, "row") in found
    assert ("add", toy_semantics.nop, "refine") in found
    assert [f for f in found if f[0] == "sub"] == [("sub", toy_semantics.sub, "row")]
