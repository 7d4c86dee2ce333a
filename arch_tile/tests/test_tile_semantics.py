"""How the tile's rows bind to their semantic functions (tessera.isa.SemanticsRegistry).

Every ACE row names one of three functions of :data:`tessera_tile.ace.REGISTRY` by
its class (W2, W0, the W1 classes), pickles by name, and is called (not inlined) by
the fast engine.
"""

from __future__ import annotations

import pickle

import pytest
from tile_support import BASE, ONE, RAM

from tessera.errors import UnhandledTrap
from tessera.isa import Encoder, SemanticRef
from tessera.machine import Machine
from tessera.semantics import inline_report, row_functions
from tessera_tile import TILE, ace, make_tile_arch

ACE_ROWS = [e for e in TILE.encodings if "ace" in e.flags]


def _expected(mnemonic: str):
    cls = mnemonic.split(".", 1)[1]
    return {"w2": ace.ace_w2, "w0": ace.ace_w0}.get(cls, ace.ace_w1)


def test_every_ace_row_names_its_function_in_the_tile_registry():
    assert len(ACE_ROWS) == 8  # W2, W0 and six W1 classes on custom-3
    for enc in ACE_ROWS:
        assert isinstance(enc.semantics, SemanticRef) and enc.semantics.package == "tessera_tile.ace"
        assert enc.semantics.resolve() is _expected(enc.mnemonic), enc.mnemonic


def test_rows_pickle_by_name_and_come_back_equal():
    for enc in ACE_ROWS:
        assert pickle.loads(pickle.dumps(enc)) == enc


def test_rows_on_other_opcodes_bind_the_same_functions():
    arch = make_tile_arch("tile-all-opcodes", opcodes=("custom-0", "custom-3"))
    rows = [e for e in arch.encodings if "ace" in e.flags]
    assert {e.mnemonic.split(".")[0] for e in rows} == {"ace0", "ace"}
    assert all(e.semantics.resolve() is _expected(e.mnemonic) for e in rows)


def test_tessera_semantics_lists_the_ace_functions_as_called():
    listed = {(f.encoding.mnemonic, f.function) for f in row_functions(TILE)
              if "ace" in f.encoding.flags and f.via == "row"}
    assert listed == {(e.mnemonic, _expected(e.mnemonic)) for e in ACE_ROWS}
    for fn in (ace.ace_w2, ace.ace_w1, ace.ace_w0):
        report = inline_report(fn)
        assert not report.inlined and "no_inline" in report.reason


@pytest.mark.parametrize("engine", ["step", "fast"])
def test_an_ace_word_at_a_misaligned_address_is_a_misaligned_fetch(engine):
    """The RISC-V host's refine traps misaligned fetches of every row, the tile's too
    (the variant it installs must be declared on the extension's rows as well)."""
    w0 = next(e for e in ACE_ROWS if e.mnemonic == "ace.w0")
    m = Machine(TILE, config={"ram": RAM, "echo": False, **ONE}, engine=engine)
    m.space.write_bytes(BASE + 2, Encoder(TILE).to_bytes(w0.match), force=True)
    m.set_entry(BASE + 2)
    with pytest.raises(UnhandledTrap) as info:
        m.run(max_steps=10)
    assert info.value.cause == 0 and info.value.pc == BASE + 2  # instruction address misaligned
