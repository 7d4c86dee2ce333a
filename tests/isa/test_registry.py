"""The semantics registry used by architectures whose tables bind by name."""

from __future__ import annotations

import sys

import pytest

from tessera.isa.registry import SemanticsRegistry


def test_registry_registers_loads_and_refuses_duplicates(tmp_path, monkeypatch):
    pkg = tmp_path / "semdemo"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from tessera.isa.registry import SemanticsRegistry\n"
        "REGISTRY = SemanticsRegistry(__name__, __path__, skip=('helpers',))\n")
    (pkg / "alu.py").write_text(
        "from semdemo import REGISTRY\n"
        "@REGISTRY.op('add', 'addi')\n"
        "def add(cpu, ins):\n    return None\n")
    (pkg / "helpers.py").write_text("raise RuntimeError('skipped modules are not imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        import semdemo

        registry = semdemo.REGISTRY.load_all()
        assert sorted(registry) == ["add", "addi"] and registry["add"] is registry["addi"]
        with pytest.raises(ValueError, match="'add' defined twice"):
            registry.op("add")(lambda cpu, ins: None)
    finally:
        for name in [n for n in sys.modules if n == "semdemo" or n.startswith("semdemo.")]:
            del sys.modules[name]


def test_an_empty_registry_is_a_dict():
    reg = SemanticsRegistry("nowhere", [])
    assert reg == {} and reg.load_all() is reg
