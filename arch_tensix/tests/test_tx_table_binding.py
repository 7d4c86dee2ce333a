"""How the tables bind their rows to semantics (tessera.isa.SemanticsRegistry), and the
control flow the rows declare.

* every row that names a registered function runs on the fields its row decodes (the
  functions read operands from ``ins.<field>``, so a field the row lacks would be an
  AttributeError), and a word with reserved bits set runs, leniently, exactly as the
  clean word does;
* rows resolve to plain functions whose code the control-flags check can read, and the
  declared flags (END halts, STALLWAIT & co. wait) agree with it.
"""

from __future__ import annotations

import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tensix_table_support import ARCHS, decoder

from tessera.control import ControlSignal
from tessera.isa import SemanticRef
from tessera.machine import Machine
from tessera.semantics import control_flow_rows, flag_disagreements, row_functions
from tessera_tensix.isa import DIRECT_MODE, WAITS, row_info, tables
from tessera_tensix.semantics import REGISTRY


def _direct_rows(chip: str) -> list:
    """The strict rows of ``chip`` whose instruction has a registered function (not END)."""
    return [e for e in tables(chip).encodings
            if (info := row_info(e)) is not None and "reserved-bits" not in e.flags
            and REGISTRY.lookup(info.name) is not None]


DIRECT = {chip: _direct_rows(chip) for chip in ("bh", "wh")}


def _run(chip: str, word: int) -> tuple[object, dict]:
    """Run ``word`` on thread T0 of a fresh lenient machine: (what it raised or None — a
    rule stop, a wait, the end of the slice — and the state after)."""
    m = Machine(ARCHS[chip], config={"lenient": True})
    t = m.agent("t0")
    t.core.sfpu.lreg[0:8] = np.random.default_rng(5).integers(0, 1 << 32, (8, 32), dtype=np.uint32)
    t.gpr[:] = range(1000, 1064)
    t.pc = t.next_pc = 0x40
    ins = decoder(chip).decode(word, 0x40)
    outcome: object = None
    try:
        ins.run(t, ins)
    except ControlSignal as exc:  # a rule stop (not modelled), a wait, a Yield
        outcome = (type(exc).__name__, str(exc).split(":", 1)[-1])
    return outcome, {"core": t.core.state(), "thread": t.state_extra()}


def test_direct_mode_rows_are_the_instructions_with_semantics():
    for chip, rows in DIRECT.items():
        assert {row_info(e).name for e in rows} == (DIRECT_MODE - {"END"}) & set(tables(chip).rows), chip


@pytest.mark.parametrize("chip", ["bh", "wh"])
@settings(deadline=None, max_examples=150)
@given(data=st.data())
def test_rows_run_on_their_fields_and_ignore_reserved_bits_when_lenient(chip, data):
    enc = data.draw(st.sampled_from(DIRECT[chip]), label="row")
    reserved = row_info(enc).reserved
    clean = enc.match | (data.draw(st.integers(0, 0xFF_FFFF), label="fields") & ~reserved)
    got = _run(chip, clean)                                  # an AttributeError would fail here
    if reserved:
        dirty = clean | (data.draw(st.integers(1, 0xFF_FFFF), label="reserved") & reserved or reserved)
        assert decoder(chip).decode(dirty).encoding is not enc
        assert _run(chip, dirty) == got


@pytest.mark.parametrize("chip", ["bh", "wh"])
def test_rows_name_registry_functions_and_resolve_to_plain_functions(chip):
    arch = ARCHS[chip]
    for item in row_functions(arch):
        assert isinstance(item.encoding.semantics, SemanticRef), item
        assert item.via == "row"                             # no row declares refine variants
        assert isinstance(item.function, types.FunctionType), item
    assert arch.refine is None


@pytest.mark.parametrize("chip", ["bh", "wh"])
def test_control_flags_are_declared_and_agree_with_the_code(chip):
    arch = ARCHS[chip]
    assert arch.control_flow == "flags"
    rows = control_flow_rows(arch)
    assert all(r.code is False for r in rows)                # every function readable, none returns a PC
    assert flag_disagreements(arch) == []
    flagged = {(row_info(r.encoding).name if row_info(r.encoding) else r.mnemonic, r.flags)
               for r in rows if r.flags}
    waits = WAITS & set(tables(chip).rows)
    assert flagged == {("end", frozenset({"halt"}))} | {(n, frozenset({"wait"})) for n in waits}
    assert waits == WAITS - ({"STREAMWAIT"} if chip == "wh" else set())   # STREAMWAIT: Blackhole only
    assert {"STALLWAIT", "SEMWAIT", "ATGETM", "UNPACR", "MVMUL", "MOP", "REPLAY"} <= waits
