"""Program formats from plugins (``tessera_program_formats``, tessera.loaders.formats)."""

from __future__ import annotations

import pytest
from toyprog import EXIT7

import tessera
from tessera.errors import LoadError, PluginError
from tessera.loaders import LoadedProgram, ProgramFormat, load_program
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera.session import resolve_arch

MAGIC = b"TOYBUNDLE\n"


def _claims(path: str, head: bytes) -> bool:
    return head.startswith(MAGIC)


def _arch(path: str, data: bytes) -> str:
    return "toy"


def _load(machine: Machine, path: str, data: bytes) -> LoadedProgram:
    body = data[len(MAGIC):]
    if not body:
        raise LoadError(f"{path}: an empty bundle")
    machine.space.write_bytes(0x100, body, force=True)
    machine.set_entry(0x100)
    return LoadedProgram(path=path, format="toy-bundle", entry=0x100, segments=[(0x100, len(body))])


class Bundles:
    TESSERA_API_VERSION = 1

    def __init__(self, formats=None) -> None:
        self.formats = formats

    @tessera.hookimpl
    def tessera_program_formats(self):
        if self.formats is not None:
            return self.formats
        return [ProgramFormat("toy-bundle", "a toy program after a magic line", _claims, _arch, _load)]


def _host(plugin) -> PluginHost:
    host = PluginHost(only=["toy"], use_environment=False)
    host.register(plugin, "bundles")
    return host


def test_a_claimed_file_picks_its_architecture_and_loads(tmp_path):
    path = tmp_path / "prog.bin"
    path.write_bytes(MAGIC + EXIT7)
    host = _host(Bundles())
    arch = resolve_arch(host, None, str(path))
    assert arch.name == "toy"                        # no --arch: the format named it
    m = Machine(arch, host=host)
    loaded = load_program(m, str(path))
    assert loaded.format == "toy-bundle" and loaded.entry == 0x100
    assert m.run(max_steps=100).exit_code == 7


def test_an_unclaimed_file_is_left_to_the_built_in_formats(tmp_path):
    path = tmp_path / "prog.bin"
    path.write_bytes(EXIT7)
    host = _host(Bundles())
    m = Machine(host.architecture("toy"), host=host)
    assert load_program(m, str(path), load=0x200).format == "raw"


def test_a_formats_load_error_is_the_users(tmp_path):
    path = tmp_path / "empty.bin"
    path.write_bytes(MAGIC)
    host = _host(Bundles())
    with pytest.raises(LoadError, match="an empty bundle"):
        load_program(Machine(host.architecture("toy"), host=host), str(path))


def test_a_format_that_is_not_a_program_format_names_the_plugin(tmp_path):
    path = tmp_path / "prog.bin"
    path.write_bytes(MAGIC + EXIT7)
    with pytest.raises(PluginError, match="returned str, not a tessera.loaders.ProgramFormat") as err:
        resolve_arch(_host(Bundles(formats=["toy-bundle"])), None, str(path))
    assert err.value.plugin == "bundles"


def test_a_claims_bug_names_the_plugin(tmp_path):
    def broken(path, head):
        raise KeyError("oops")

    path = tmp_path / "prog.bin"
    path.write_bytes(MAGIC + EXIT7)
    host = _host(Bundles(formats=[ProgramFormat("bad", "", broken, _arch, _load)]))
    with pytest.raises(PluginError, match=r"program format bad: claims\(\) raised KeyError") as err:
        load_program(Machine(host.architecture("toy"), host=host), str(path))
    assert err.value.plugin == "bundles"
