"""``refine`` may only install the functions a row declares (``Encoding.variants``).

The engine checks when it fills the decode cache, so every function a row can run
is on the row (``tessera semantics`` lists them) and a stray swap is a named error,
not a silently different instruction.
"""

from __future__ import annotations

import attrs
import pytest

from tessera.errors import PluginError
from tessera.isa import swap
from tessera.machine import Machine
from tessera_toyarch import TOY
from tessera_toyarch import semantics as toy_semantics
from tessera_toyarch.semantics import REGISTRY

from .conftest import make_host, prog

# r0 reads zero; the program writes r0 with add, then halts with r3 = 7
PROGRAM = (
    ("li", dict(rd=3, limm=7)),
    ("add", dict(rd=0, rs1=3, rs2=3)),
    ("add", dict(rd=3, rs1=3, rs2=0)),
    ("halt", dict(rd=3)),
)


def _arch(refine, declare=True):
    rows = tuple(attrs.evolve(e, variants={"x0": REGISTRY.ref("nop")})
                 if declare and e.mnemonic == "add" else e for e in TOY.encodings)
    return attrs.evolve(TOY, name="toy-variants", encodings=rows, refine=refine)


def _swap_x0(ins, peek):
    if ins.mnemonic == "add" and not ins.rd:
        swap(ins, "x0")


def _assign_x0(ins, peek):
    if ins.mnemonic == "add" and not ins.rd:
        ins.run = toy_semantics.nop  # not through a declared variant


def _run(arch, engine):
    m = Machine(arch, host=make_host(), config={"echo": False, "cores": 1}, engine=engine)
    m.space.write_bytes(0, prog(*PROGRAM), force=True)
    return m, m.run()


@pytest.mark.parametrize("engine", ["step", "fast"])
def test_a_declared_variant_is_installed_and_runs(engine):
    m, result = _run(_arch(_swap_x0), engine)
    assert result.exit_code == 7
    cache = m.space.decode_cache("toy-variants")
    assert cache[4].run is toy_semantics.nop and cache[8].run is toy_semantics.add


@pytest.mark.parametrize("engine", ["step", "fast"])
def test_an_undeclared_swap_is_refused_and_names_the_row(engine):
    with pytest.raises(PluginError, match=r"refine made add run nop, which its row does not declare"):
        _run(_arch(_assign_x0, declare=False), engine)
