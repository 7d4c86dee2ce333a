"""Architecture.assembler / .disassembler given as ``"module:Class"``: imported on first use.

Naming the class instead of importing it keeps an architecture plugin's import cheap
(``tessera run`` never assembles; docs/performance.md).  The resolved class must be
the named one, and a name that does not resolve to a class is a ConfigError.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from isa_toyarch import toy32

from tessera.errors import ConfigError
from tessera.isa import Disassembler
from tessera.isa.asm import Assembler, assemble


class LoudAssembler(Assembler):
    """The generic assembler, counting its instances."""

    made = 0

    def __init__(self, *args, **kwargs):
        type(self).made += 1
        super().__init__(*args, **kwargs)


def test_named_classes_resolve_and_assemble():
    arch = toy32(assembler=f"{__name__}:LoudAssembler", disassembler="tessera.isa.disasm:Disassembler")
    assert arch.assembler_class() is LoudAssembler
    assert arch.disassembler_class() is Disassembler
    before = LoudAssembler.made
    assert assemble(arch, "add r1, r2, r3\n").image()[1]  # some bytes came out
    assert LoudAssembler.made == before + 1  # and the named subclass made them


def test_defaults_are_the_generic_tools():
    arch = toy32()
    assert arch.assembler_class() is Assembler
    assert arch.disassembler_class() is Disassembler


@pytest.mark.parametrize("target, why", [
    ("no.such.module:Thing", "cannot be imported"),
    ("tessera.isa.asm:NoSuchClass", "cannot be imported"),
    ("tessera.isa.asm:assemble", "is not a class"),
])
def test_bad_names_are_config_errors(target, why):
    arch = toy32(assembler=target)
    with pytest.raises(ConfigError, match=why):
        arch.assembler_class()


def test_riscv_run_does_not_import_its_assembler():
    code = ("import sys; from tessera.plugins import PluginHost; h = PluginHost(); "
            "h.architecture('rv32im'); print('tessera_riscv.asm' in sys.modules, 'tessera.isa.asm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
