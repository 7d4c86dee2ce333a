"""Choosing an architecture for an ELF builds only the architectures that may run it.

Without ``--arch``, ``tessera run prog.elf`` used to build every installed architecture
to compare their ELF machines (most of a short run's time).  Plugins now say which ELF
files their architectures run (``TESSERA_ELF_MACHINES``), and only the candidates are
built (``PluginHost.elf_candidates``); a plugin that says nothing is built as before,
and when the candidates do not settle the choice it is made again among all, so
errors read as they always did.
"""

from __future__ import annotations

import subprocess
import sys
import types

import attrs
import pytest
from elfgen import EM_RISCV, build_elf, riscv_attributes
from toyprog import EXIT7

import tessera
from tessera.errors import ConfigError, PluginError
from tessera.loaders import choose_architecture
from tessera.plugins import PluginHost
from tessera_toyarch import TOY

BASE64 = attrs.evolve(TOY, name="base64", elf_machine=EM_RISCV, elf_class=64, address_bits=64)
TILEISH = attrs.evolve(BASE64, name="tileish", elf_extensions={"xtile"})
NOELF = attrs.evolve(TOY, name="noelf", elf_machine=0)


def plugin(name: str, archs, declared=None):
    """A plugin module providing ``archs``, counting how often they are built."""
    module = types.ModuleType(f"fake_{name}")
    module.TESSERA_API_VERSION = 1
    module.built = 0
    if declared is not None:
        module.TESSERA_ELF_MACHINES = declared

    @tessera.hookimpl
    def tessera_architectures():
        module.built += 1
        return list(archs)

    module.tessera_architectures = tessera_architectures
    return module


def host_with(*plugins):
    host = PluginHost(load_entry_points=False, use_environment=False)
    for module in plugins:
        host.register(module, module.__name__.removeprefix("fake_"))
    return host


def rv_elf(isa: str | None) -> bytes:
    return build_elf(machine=EM_RISCV, bits=64, entry=0x100, segments=[(0x100, EXIT7)],
                     attributes=riscv_attributes(isa) if isa else None)


def declared_three():
    return (plugin("base", [BASE64], {"base64": EM_RISCV}),
            plugin("tile", [TILEISH], {"tileish": (EM_RISCV, ("xtile",))}),
            plugin("coproc", [NOELF], {}))


def test_a_plain_elf_builds_only_the_base_architecture():
    base, tile, coproc = declared_three()
    assert choose_architecture(host_with(base, tile, coproc), rv_elf("rv64im"), "p.elf").name == "base64"
    assert (base.built, tile.built, coproc.built) == (1, 0, 0)


def test_an_elf_naming_the_extension_builds_the_extension_architecture_too():
    base, tile, coproc = declared_three()
    host = host_with(base, tile, coproc)
    assert choose_architecture(host, rv_elf("rv64im_xtile1p0"), "p.elf").name == "tileish"
    assert (tile.built, coproc.built) == (1, 0)


def test_a_plugin_that_declares_nothing_is_built_to_see():
    base, tile, _coproc = declared_three()
    silent = plugin("silent", [NOELF])  # no TESSERA_ELF_MACHINES
    assert choose_architecture(host_with(base, tile, silent), rv_elf("rv64im"), "p.elf").name == "base64"
    assert (silent.built, tile.built) == (1, 0)


@pytest.mark.parametrize("declared", [["tileish"], {"tileish": "243"}, {"tileish": (EM_RISCV, "xtile")},
                                      {"tileish": (EM_RISCV,)}, {"tileish": (EM_RISCV, (1,))}])
def test_a_malformed_declaration_counts_as_none(declared):
    base, odd = plugin("base", [BASE64], {"base64": EM_RISCV}), plugin("odd", [TILEISH], declared)
    assert choose_architecture(host_with(base, odd), rv_elf("rv64im"), "p.elf").name == "base64"
    assert odd.built == 1  # built to see, as without a declaration


def test_without_an_answer_among_the_candidates_every_architecture_is_weighed():
    _base, tile, coproc = declared_three()
    with pytest.raises(ConfigError, match=r"only extension architectures run this ELF \(tileish\)"):
        choose_architecture(host_with(tile, coproc), rv_elf("rv64im"), "p.elf")
    assert tile.built == 1  # for the message, as before


def test_two_candidates_are_still_ambiguous():
    twin = attrs.evolve(BASE64, name="twin64")
    base, other = plugin("base", [BASE64], {"base64": EM_RISCV}), plugin("twin", [twin], {"twin64": EM_RISCV})
    with pytest.raises(ConfigError, match=r"several architectures run this ELF \(base64, twin64\)"):
        choose_architecture(host_with(base, other), rv_elf("rv64im"), "p.elf")


@pytest.mark.parametrize(("declared", "says"), [
    ({"tileish": EM_RISCV}, "runs ELF machine 0xf3, but its description says ELF machine 0xf3 with xtile"),
    ({}, "runs no ELF files, but its description says ELF machine 0xf3 with xtile"),
])
def test_a_declaration_that_disagrees_with_the_description_is_a_plugin_error(declared, says):
    liar = plugin("liar", [TILEISH, BASE64], {"base64": EM_RISCV, **declared})
    with pytest.raises(PluginError, match=f"architecture 'tileish' {says}") as info:
        choose_architecture(host_with(liar), rv_elf("rv64im"), "p.elf")
    assert info.value.plugin == "liar"


def test_the_declarations_of_the_installed_plugins_are_true():
    host = PluginHost(use_environment=False)
    declaring = [r for r in host.records.values()
                 if r.status == "active" and hasattr(r.plugin, "TESSERA_ELF_MACHINES")]
    assert {r.name for r in declaring} >= {"phoenix", "tensix", "tile"} & set(host.records)
    for record in declaring:
        for arch, owner in host.architectures().values():
            if owner == record.name:
                says = (arch.elf_machine, set(arch.elf_extensions)) if arch.elf_machine else None
                value = record.plugin.TESSERA_ELF_MACHINES.get(arch.name)
                declared = None if value is None else (
                    (value, set()) if isinstance(value, int) else (value[0], set(value[1])))
                assert declared == says, (record.name, arch.name)


def test_tessera_run_of_a_riscv_elf_does_not_build_the_other_architectures(tmp_path):
    pytest.importorskip("tessera_riscv")
    pytest.importorskip("tessera_tile")
    elf = tmp_path / "p.elf"
    elf.write_bytes(build_elf(machine=EM_RISCV, bits=32, entry=0x100, segments=[(0x100, EXIT7)],
                              attributes=riscv_attributes("rv32i2p1_m2p0")))
    code = ("import sys\n"
            "from tessera.plugins import PluginHost\n"
            "from tessera.session import resolve_arch\n"
            f"arch = resolve_arch(PluginHost(use_environment=False), None, {str(elf)!r})\n"
            "heavy = ('tessera_tile.arch', 'tessera_phoenix.arch', 'tessera_tensix.arch')\n"
            "print(arch.name, *[m for m in heavy if m in sys.modules])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["rv32im"]
