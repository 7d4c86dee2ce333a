"""Block ends come from the rows' declared control flags; the code analysis is a safety net.

The fast engine ends a block after a row carrying one of ``tessera.isa.CONTROL_FLAGS``
whatever its semantic function looks like, and still after a row whose function may
return a PC without a flag; :func:`tessera.semantics.flag_disagreements` (shown by
``tessera semantics`` and the ``control-flags`` conformance check) reports such a row.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from tessera.cli.semantics import report_rows
from tessera.errors import ConfigError
from tessera.isa import CONTROL_FLAGS, TRANSFER_FLAGS, Encoding
from tessera.machine import Machine
from tessera.semantics import control_flow_rows, flag_disagreements, no_inline, returns_pc
from tessera_toyarch import semantics as toy_sem

from .conftest import TOY, make_host, prog, sum_loop


@no_inline
def add_called(cpu: Any, ins: Any) -> None:
    """The toy ``add``, called from blocks instead of inlined."""
    r = cpu.r
    r[ins.rd] = (r[ins.rs1] + r[ins.rs2]) & 0xFFFF_FFFF


def _sourceless() -> Any:
    """The toy ``add`` as a function whose source cannot be read (as if generated)."""
    code = "def add(cpu, ins):\n    cpu.r[ins.rd] = (cpu.r[ins.rs1] + cpu.r[ins.rs2]) & 0xFFFFFFFF\n"
    namespace: dict[str, Any] = {}
    exec(compile(code, "<generated>", "exec"), namespace)  # noqa: S102 - a function without source, on purpose
    return namespace["add"]


def _arch(**rows: dict[str, Any]) -> Any:
    """The toy architecture with some rows changed (``mnemonic={"flags": ..., "semantics": ...}``)."""
    encodings = tuple(attrs.evolve(e, **rows[e.mnemonic]) if e.mnemonic in rows else e
                      for e in TOY.encodings)
    return attrs.evolve(TOY, name="toyflow", encodings=encodings)


def _run(arch: Any, engine: str, n: int = 40) -> tuple[Machine, Any]:
    m = Machine(arch, host=make_host(), config={"echo": False, "cores": 1})
    m.space.write_bytes(0, prog(*sum_loop(n)), force=True)
    m.set_engine(engine)
    return m, m.run(max_steps=100_000)


def _blocks(m: Machine) -> list[list[str]]:
    cache = m.agents[0]._filler.cache
    return [[i.mnemonic for i in b.ins] for b in cache.blocks.values() if b.ins]


def test_the_vocabulary():
    assert {"branch", "jump", "trap", "halt", "wait"} == CONTROL_FLAGS
    assert TRANSFER_FLAGS <= CONTROL_FLAGS
    enc = Encoding("x", 0, 0, flags={"wait", "sync"})
    assert enc.control_flags == {"wait"}


def test_an_architecture_says_where_its_control_flow_is_declared():
    assert TOY.control_flow == "flags"
    with pytest.raises(ConfigError, match="control_flow"):
        attrs.evolve(TOY, control_flow="ast")


def test_a_flagged_row_ends_the_block_though_its_code_never_returns_a_pc():
    # `add` flagged wait, its function called (no_inline) and never returning a PC
    arch = _arch(add={"flags": {"wait"}, "semantics": add_called})
    assert returns_pc(add_called) is False
    m, r = _run(arch, "fast")
    assert r.exit_code == sum(range(41))
    blocks = _blocks(m)
    assert blocks, "nothing was translated"
    assert all(b[-1] in ("add", "bne") for b in blocks), blocks
    assert ["add"] in blocks  # the loop head: stops right after the flagged add
    assert not any("add" in b[:-1] for b in blocks), blocks
    # the same program on the unchanged toy keeps add and bne in one block
    m0, _ = _run(TOY, "fast")
    assert any(b[-2:] == ["addi", "bne"] and "add" in b for b in _blocks(m0)), _blocks(m0)


def test_a_row_returning_a_pc_without_a_flag_still_ends_its_block_and_is_reported():
    arch = _arch(bne={"flags": frozenset()})
    m, r = _run(arch, "fast")
    assert r.exit_code == sum(range(41))
    assert all(b[-1] == "bne" or "bne" not in b for b in _blocks(m)), _blocks(m)
    (bad,) = flag_disagreements(arch)
    assert bad.mnemonic == "bne" and bad.code is True and bad.flags == frozenset()
    assert "no branch, jump or trap flag" in bad.problem
    shown = [r for r in report_rows(arch) if r["mnemonic"] == "bne"]
    assert shown[0]["flag_check"] == bad.problem  # what `tessera semantics --json` says


def test_a_transfer_flag_on_code_that_never_returns_a_pc_is_reported():
    arch = _arch(add={"flags": {"jump"}})
    (bad,) = flag_disagreements(arch)
    assert bad.mnemonic == "add" and bad.code is False
    assert "flagged jump but its code never returns a PC" in bad.problem
    # halt, wait and trap are raised as signals: code without a returned PC agrees with them
    rows = {r.mnemonic: r for r in control_flow_rows(TOY)}
    assert rows["halt"].problem is None and rows["halt"].code is False
    assert rows["eret"].flags == {"jump", "trap"} and rows["eret"].code is True
    assert flag_disagreements(TOY) == []


def test_code_that_cannot_be_read_is_unknown_not_a_disagreement():
    fn = _sourceless()
    assert returns_pc(fn) is None and returns_pc(None) is None
    arch = _arch(add={"semantics": fn})
    row = next(r for r in control_flow_rows(arch) if r.mnemonic == "add")
    assert row.code is None and row.code_says == "unknown" and row.problem is None
    assert flag_disagreements(arch) == []


@pytest.mark.parametrize("rows", [
    {"add": {"flags": {"wait"}, "semantics": add_called}},
    {"bne": {"flags": frozenset()}},
    {"addi": {"flags": {"halt"}}, "add": {"semantics": _sourceless()}},
])
def test_both_engines_agree(rows):
    arch = _arch(**rows)
    outcomes = []
    for engine in ("step", "fast"):
        m, r = _run(arch, engine)
        outcomes.append((r.reason, r.exit_code, r.steps, m.state_hash()))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][1] == sum(range(41))


def test_the_toy_rows_declare_their_control_flow():
    flags = {e.mnemonic: e.control_flags for e in TOY.encodings}
    assert flags["beq"] == {"branch"} and flags["jmp"] == {"jump"} and flags["halt"] == {"halt"}
    assert flags["sem.wait"] == {"wait"} and flags["ecall"] == {"trap"} and flags["add"] == frozenset()
    assert toy_sem.add is TOY.encodings_named("add")[0].semantics.resolve()
