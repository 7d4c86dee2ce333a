"""``tessera.semantics``: ``no_inline``, ``inline_report`` and ``row_functions``."""

from __future__ import annotations

import functools

import attrs

from tessera.isa import swap
from tessera.semantics import InlineReport, function_name, inline_report, no_inline, row_functions
from tessera_toyarch import TOY
from tessera_toyarch import semantics as toy_semantics
from tessera_toyarch.semantics import REGISTRY

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
    """Rows writing r0 become nops (as RISC-V's refine does), through the declared variant."""
    if ins.mnemonic == "add" and not ins.rd:
        swap(ins, "x0")


def _with_variant():
    """TOY whose ``add`` row declares an ``x0`` variant, with the refine above."""
    rows = tuple(attrs.evolve(e, variants={"x0": REGISTRY.ref("nop")}) if e.mnemonic == "add" else e
                 for e in TOY.encodings)
    return attrs.evolve(TOY, encodings=rows, refine=_refine)


def test_row_functions_are_the_rows_own_resolved():
    found = row_functions(TOY)
    assert [(f.encoding, f.function, f.via) for f in found] == [
        (e, e.semantics.resolve(), "row") for e in TOY.encodings]
    assert found[1].function is toy_semantics.add  # a ref is shown as the function it names


def test_row_functions_list_the_declared_variants():
    found = [(f.encoding.mnemonic, f.function, f.via) for f in row_functions(_with_variant())]
    assert ("add", toy_semantics.add, "row") in found
    assert ("add", toy_semantics.nop, "variant:x0") in found
    assert [f for f in found if f[0] == "sub"] == [("sub", toy_semantics.sub, "row")]
