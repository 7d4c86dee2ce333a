"""The semantics registry: how every architecture binds its rows to semantic functions."""

from __future__ import annotations

import pickle
import sys
import types

import pytest

from tessera.errors import ConfigError
from tessera.isa import Encoding
from tessera.isa.registry import SemanticRef, SemanticsRegistry, resolve, specialised, swap


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


# ----------------------------------------------------------------- refs, variants, swap


def _demo_package(tmp_path, monkeypatch, name, missing=""):
    pkg = tmp_path / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from tessera.isa.registry import SemanticsRegistry\n"
        f"REGISTRY = SemanticsRegistry(__name__, __path__{missing})\n")
    (pkg / "alu.py").write_text(
        f"from {name} import REGISTRY\n"
        "MASK = 0xFF\n"
        "@REGISTRY.op('add')\n"
        "def add(cpu, ins):\n    cpu.r[ins.rd] = (cpu.r[ins.rs1] + cpu.r[ins.rs2]) & MASK\n")
    monkeypatch.syspath_prepend(str(tmp_path))


@pytest.fixture
def forget_modules():
    yield
    for name in [n for n in sys.modules if n.split(".")[0] in ("refdemo", "missdemo")]:
        del sys.modules[name]


def test_a_ref_resolves_lazily_pickles_by_name_and_compares_by_name(tmp_path, monkeypatch, forget_modules):
    _demo_package(tmp_path, monkeypatch, "refdemo")
    import refdemo

    ref = refdemo.REGISTRY.ref("add")
    assert ref is refdemo.REGISTRY.ref("add") and ref == SemanticRef("refdemo", "add")
    assert hash(ref) == hash(SemanticRef("refdemo", "add")) and ref != SemanticRef("refdemo", "sub")
    assert "add" not in refdemo.REGISTRY  # nothing imported yet: the table can load first
    fn = ref.resolve()
    assert fn.__name__ == "add" and resolve(ref) is fn and resolve(fn) is fn
    again = pickle.loads(pickle.dumps(ref))
    assert again is ref  # the same registry's one ref per name
    assert "refdemo" in pickle.dumps(ref).decode("latin-1")


def test_an_unregistered_name_is_a_config_error_or_what_missing_makes(tmp_path, monkeypatch, forget_modules):
    _demo_package(tmp_path, monkeypatch, "refdemo")
    import refdemo

    with pytest.raises(ConfigError, match="no semantic function registered as 'mul' in refdemo"):
        refdemo.REGISTRY.ref("mul").resolve()
    _demo_package(tmp_path, monkeypatch, "missdemo", missing=", missing=lambda name: ('stub', name)")
    import missdemo

    assert missdemo.REGISTRY.resolve("mul") == ("stub", "mul")


def test_specialised_copies_see_their_constants(tmp_path, monkeypatch, forget_modules):
    _demo_package(tmp_path, monkeypatch, "refdemo")
    from refdemo import alu

    wide = specialised(alu.add, "add16", MASK=0xFFFF)
    cpu = types.SimpleNamespace(r=[0, 0xF0, 0x20, 0])
    ins = types.SimpleNamespace(rd=3, rs1=1, rs2=2)
    wide(cpu, ins)
    assert cpu.r[3] == 0x110 and wide.__qualname__ == "add16" and wide.__module__ == "refdemo.alu"
    alu.add(cpu, ins)
    assert cpu.r[3] == 0x10  # the original keeps its module's constant
    with pytest.raises(ValueError, match="not globals"):
        specialised(alu.add, "bad", NOPE=1)
    with pytest.raises(TypeError, match="plain function"):
        specialised(len, "bad")  # type: ignore[arg-type]


def test_variants_are_declared_on_the_row():
    def nop(cpu, ins):
        return None

    row = Encoding("add", 0, 0, "", nop, variants={"x0": nop})
    assert row.variant("x0") is nop and row.variant("other") is None and row.variant_names == ("x0",)
    assert hash(row) == hash(Encoding("add", 0, 0, "", nop, variants=[("x0", nop)]))
    with pytest.raises(ConfigError, match="variant"):
        Encoding("add", 0, 0, "", nop, variants={"x0": 5})
    with pytest.raises(ConfigError, match="repeat"):
        Encoding("add", 0, 0, "", nop, variants=[("a", nop), ("a", nop)])
    ins = types.SimpleNamespace(encoding=row, run=None)
    swap(ins, "x0")
    assert ins.run is nop
    with pytest.raises(ConfigError, match="does not declare"):
        swap(ins, "misaligned")
