"""Declared settings (tessera.settings), run limits (tessera.machine.limits), host memory errors.

Every architecture declares its ``--set`` keys with kind and range; the core refuses an
unknown key, a value of the wrong kind or out of range with one ConfigError line before
anything is built.  Budgets and stop addresses are bounded the same way, and RAM the host
cannot map is a HostMemoryError naming the region.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import attrs
import pytest

from tessera.cli.main import main
from tessera.cli.params import SIZE, parse_settings
from tessera.errors import ConfigError, HostMemoryError
from tessera.isa import Architecture
from tessera.machine import Machine
from tessera.machine.limits import MAX_COUNT
from tessera.memory import regions
from tessera.settings import (
    Setting,
    SettingFamily,
    Settings,
    check_config,
    format_size,
    parse_size,
    setting,
)
from tessera_toyarch import TOY

from .conftest import encode

# ---------------------------------------------------------------------- one size syntax

@pytest.mark.parametrize(("text", "value"), [
    ("4096", 4096), ("0x1000", 4096), ("0x1b", 0x1B), ("1_024", 1024), ("64K", 64 << 10),
    ("64k", 64 << 10), ("256M", 256 << 20), ("2G", 2 << 30), ("2GiB", 2 << 30), ("2gb", 2 << 30),
    ("1T", 1 << 40), ("100T", 100 << 40), ("0x10K", 16 << 10), ("4096b", 4096),
])
def test_size_syntax(text, value):
    assert parse_size(text) == value
    assert SIZE.convert(text, None, None) == value  # --memory-cap reads sizes the same way


@pytest.mark.parametrize("text", ["", "lots", "2X", "K", "1.5G", "G2"])
def test_not_a_size(text):
    with pytest.raises(ValueError):
        parse_size(text)


def test_format_size_is_exact():
    assert [format_size(n) for n in (4 << 30, 256 << 20, 1 << 40, 100, 0x12345)] == \
        ["4G", "256M", "1T", "100", "0x12345"]


# ---------------------------------------------------------------------- one setting

def test_int_setting_converts_text_and_numbers_and_checks_the_range():
    s = Setting("threads", "int", 1, min=1, max=3, note="three threads")
    assert [s.convert(v) for v in ("2", "0x3", 1, " 3 ", "0b1")] == [2, 3, 1, 3, 1]
    with pytest.raises(ConfigError, match=r"^configuration error: Tensix setting threads=1000000 is out of "
                                          r"range \(1\.\.3: three threads\)$"):
        s.convert("1000000", label="Tensix")
    for bad in ("abc", True, 2.0, "1.5"):
        with pytest.raises(ConfigError, match="threads must be an integer"):
            s.convert(bad)


def test_numpy_integers_are_integers():
    np = pytest.importorskip("numpy")
    value = Setting("lanes", "int", 16, min=1, max=32).convert(np.int64(4))
    assert value == 4 and type(value) is int


def test_size_setting_reads_suffixes_and_reports_in_them():
    s = Setting("ram", "size", 1 << 20, min=16, max=4 << 30)
    assert s.convert("64M") == 64 << 20 and s.convert(4096) == 4096
    with pytest.raises(ConfigError, match=r"ram=8G is out of range \(16\.\.4G\)"):
        s.convert("8G")
    with pytest.raises(ConfigError, match="ram must be a number of bytes"):
        s.convert("lots")


@pytest.mark.parametrize(("value", "expected"), [
    (True, True), (False, False), (1, True), (0, False), ("yes", True), ("ON", True), ("off", False),
    ("0", False),
])
def test_bool_setting(value, expected):
    assert Setting("echo", "bool", True).convert(value) is expected


@pytest.mark.parametrize("value", [2, "maybe", None, 1.0])
def test_bool_setting_refuses(value):
    with pytest.raises(ConfigError, match="echo must be true or false|echo needs a value"):
        Setting("echo", "bool", True).convert(value)


def test_choices_of_text_numbers_and_booleans():
    text = Setting("misaligned", "choice", "allow", choices=("allow", "trap"))
    assert text.convert("TRAP") == "trap"
    with pytest.raises(ConfigError, match="misaligned must be one of allow, trap, not 'sometimes'"):
        text.convert("sometimes")
    numbers = Setting("unit", "choice", 1, choices=(1, 32))
    assert numbers.convert("32") == 32 and numbers.convert("0x20") == 32
    with pytest.raises(ConfigError, match="unit must be one of 1, 32"):
        numbers.convert(3)
    only = Setting("flags", "choice", False, choices=(False,), help="no flag bits")
    assert only.convert("no") is False and only.convert(0) is False
    with pytest.raises(ConfigError, match=r"flags=True: only False is implemented \(no flag bits\)"):
        only.convert(True)


def test_text_and_path_settings():
    assert Setting("irq", "str", "").convert(" t0:5@10 ") == "t0:5@10"
    with pytest.raises(ConfigError, match="irq must be text, not 5"):
        Setting("irq", "str", "").convert(5)
    path = Setting("dest_in", "path")
    assert path.convert(Path("a.npy")) == "a.npy" and path.convert(None) is None
    with pytest.raises(ConfigError, match="dest_in must be a file name"):
        path.convert(3)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"kind": "float"}, "unknown kind 'float'"),
    ({"kind": "choice"}, "a choice needs choices"),
    ({"kind": "int", "choices": (1, 2)}, "only a choice has choices"),
    ({"kind": "int", "min": 5, "max": 1}, "min 5 is above max 1"),
    ({"kind": "int", "default": 9, "max": 8}, r"default of setting x=9 is out of range \(at most 8\)"),
])
def test_a_bad_declaration_is_refused_when_made(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        Setting("x", **kwargs)


# ---------------------------------------------------------------------- a declaration

def _preset(key, value):
    if key != "cfg.A":
        raise ConfigError(f"unknown field {key}")
    return int(value) & 0xF


DECLARED = Settings(
    (Setting("cores", "int", 2, min=1, max=16), Setting("echo", "bool", True)),
    (SettingFamily("cfg.", check=_preset),
     SettingFamily("acc."),
     SettingFamily("ext.", settings=(Setting("ext.depth", "int", 4, min=1, max=64),), label="ext")),
    label="demo")


def test_check_converts_given_values_and_leaves_defaults_out():
    got = DECLARED.check({"cores": "3", "cfg.A": "7", "acc.anything": "x", "ext.depth": "8"})
    assert got == {"cores": 3, "cfg.A": 7, "acc.anything": "x", "ext.depth": 8}
    assert DECLARED.resolve({"cores": 5}) == {"cores": 5, "echo": True}


def test_unknown_keys_name_the_known_ones_and_a_close_match():
    with pytest.raises(ConfigError, match=r"^configuration error: unknown demo setting\(s\): coers "
                                          r"\(did you mean cores\? known: cores, echo; also cfg\.NAME, "
                                          r"acc\.NAME, ext\.NAME\)$"):
        DECLARED.check({"coers": 2})
    with pytest.raises(ConfigError, match=r"unknown ext setting\(s\): ext\.deep \(did you mean ext\.depth\? "
                                          r"1 keys: see `tessera archs --settings demo`\)"):
        DECLARED.check({"ext.deep": 1}, arch="demo")
    with pytest.raises(ConfigError, match="unknown field cfg.B"):
        DECLARED.check({"cfg.B": 1})
    with pytest.raises(ConfigError, match=r"ext setting ext\.depth=65 is out of range \(1\.\.64\)"):
        DECLARED.check({"ext.depth": 65})


def test_declaration_conflicts_are_refused():
    with pytest.raises(ConfigError, match="declared twice"):
        Settings((Setting("a", "int", 1), Setting("a", "bool", True)))
    with pytest.raises(ConfigError, match="inside a family"):
        Settings((Setting("cfg.x", "int", 1),), (SettingFamily("cfg."),))
    with pytest.raises(ConfigError, match="must end with '.'"):
        SettingFamily("cfg")
    with pytest.raises(ConfigError, match="must start with 'ext.'"):
        SettingFamily("ext.", settings=(Setting("depth", "int", 1),))


@attrs.frozen
class DemoConfig:
    threads: int = setting(4, min=1, max=16, help="threads")
    dram: int = setting(1 << 20, "size", min=1, help="DRAM bytes")
    mode: str = setting("spec", choices=("spec", "testbench"), help="memory model")
    plain: bool = False  # a field without metadata is a setting too


def test_settings_from_an_attrs_class():
    declared = Settings.from_attrs(DemoConfig, label="demo", dram={"max": 1 << 30})
    kinds = {s.name: (s.kind, s.default, s.max) for s in declared.items}
    assert kinds == {"threads": ("int", 4, 16), "dram": ("size", 1 << 20, 1 << 30),
                     "mode": ("choice", "spec", None), "plain": ("bool", False, None)}
    cfg = DemoConfig(**declared.resolve({"dram": "64K", "mode": "TESTBENCH", "plain": "yes"}))
    assert (cfg.threads, cfg.dram, cfg.mode, cfg.plain) == (4, 65536, "testbench", True)
    with pytest.raises(ConfigError, match="has no setting"):
        Settings.from_attrs(DemoConfig, nope={"max": 1})


# ---------------------------------------------------------------------- the machine checks it

def test_machine_config_is_checked_before_the_board_is_built():
    with pytest.raises(ConfigError, match=r"toy setting cores=100000 is out of range \(1\.\.16"):
        Machine(TOY, config={"cores": 100000})
    m = Machine(TOY, config={"cores": "3", "echo": "off"})
    assert m.config == {"cores": 3, "echo": False}  # typed, as the board reads them
    assert [a.name for a in m.cpus] == ["core0", "core1", "core2"]
    with pytest.raises(ConfigError, match=r"unknown toy setting\(s\): colour \(known: cores, echo\)"):
        Machine(TOY, config={"colour": "red"})


def test_an_architecture_without_a_declaration_gets_its_config_unchanged():
    bare = attrs.evolve(TOY, name="bare", settings=None, build=None, cli_flags={})
    assert check_config(bare, {"whatever": "1"}) == {"whatever": "1"}
    assert Machine(bare, config={"whatever": "1"}).config == {"whatever": "1"}


def test_architecture_settings_accept_a_plain_sequence_and_check_cli_flags():
    arch = attrs.evolve(TOY, settings=[Setting("cores", "int", 2, min=1, max=16),
                                       Setting("echo", "bool", True)])
    assert isinstance(arch.settings, Settings) and arch.settings.get("cores").max == 16
    with pytest.raises(ConfigError, match="--no-echo sets 'echo', which its settings do not declare"):
        attrs.evolve(TOY, settings=[Setting("cores", "int", 2)])
    with pytest.raises(ConfigError, match="neither a Setting nor a SettingFamily"):
        attrs.evolve(TOY, settings=["cores"])
    assert isinstance(TOY, Architecture)


# ---------------------------------------------------------------------- run limits

def _halting_machine() -> Machine:
    m = Machine(TOY, config={"cores": 1, "echo": False})
    m.space.write_bytes(0, encode("halt", rd=0).to_bytes(4, "little"), force=True)
    return m


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"max_seconds": float("nan")}, "max_seconds must be a finite number of seconds above 0, not nan"),
    ({"max_seconds": float("inf")}, "not inf"),
    ({"max_seconds": 0}, "not 0"),
    ({"max_seconds": True}, "must be a number of seconds"),
    ({"max_steps": 10 ** 26}, r"max_steps=100000000000000000000000000 is out of range \(0\.\.2\*\*63-1\)"),
    ({"max_steps": -1}, "max_steps=-1 is out of range"),
    ({"max_steps": 1.5}, "max_steps must be a whole number"),
    ({"max_cycles": MAX_COUNT + 1}, "max_cycles=.* is out of range"),
    ({"until_pc": [0x1_FFFF_FFFF_FFFF_FFFF]},
     r"stop address 0x1ffffffffffffffff lies outside the 32-bit address space \(0\.\.0xffffffff\)"),
    ({"until_pc": [-4]}, "stop address -4 lies outside"),
])
def test_run_limits_are_checked_before_the_run(kwargs, message):
    m = _halting_machine()
    with pytest.raises(ConfigError, match=message):
        m.run(**kwargs)
    assert m.total_steps == 0  # nothing ran


def test_good_limits_still_run():
    m = _halting_machine()
    result = m.run(max_steps=MAX_COUNT, max_cycles=MAX_COUNT, max_seconds=1e9,
                   until_pc=(a for a in [0xFFFF_FFF0]))  # any iterable, even a generator
    assert result.reason == "halted" and result.steps == 1


# ---------------------------------------------------------------------- host memory

def test_ram_the_host_cannot_map_is_a_host_memory_error(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError(errno.ENOMEM, os.strerror(errno.ENOMEM))

    monkeypatch.setattr(regions.mmap, "mmap", refuse)
    with pytest.raises(HostMemoryError) as info:
        regions.RAM("dram", 0, 64 << 30)
    text = str(info.value)
    assert text.startswith("out of host memory: the host cannot allocate 64G (0x1000000000 bytes) "
                           "for region 'dram': Cannot allocate memory; lower the setting")
    assert info.value.exit_code == 77


def test_small_ram_out_of_python_memory_and_absurd_sizes(monkeypatch):
    with pytest.raises(HostMemoryError, match="for region 'huge': OverflowError"):
        regions._zeroed(1 << 68, "huge")  # beyond any host's address width: refused before any syscall

    def no_memory(size):
        raise MemoryError

    monkeypatch.setattr(regions, "bytearray", no_memory, raising=False)
    with pytest.raises(HostMemoryError, match="for region 'tiny': MemoryError"):
        regions.RAM("tiny", 0, 4096)


# ---------------------------------------------------------------------- command line

def _cli(capsys, monkeypatch, *args):
    for name in list(os.environ):
        if name.startswith("TESSERA_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("TESSERA_PLUGINS", "toy")
    monkeypatch.setenv("COLUMNS", "200")
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    out, err = capsys.readouterr()
    return exc.value.code, out, err


@pytest.fixture
def halt_program(tmp_path):
    path = tmp_path / "halt.bin"
    path.write_bytes(encode("halt", rd=0).to_bytes(4, "little"))
    return path


def _one_line(err: str) -> str:
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tessera: "), err
    return lines[0]


@pytest.mark.parametrize(("args", "code", "needle"), [
    (["--set", "cores=100000"], 64, "toy setting cores=100000 is out of range (1..16"),
    (["--set", "cores=two"], 64, "toy setting cores must be an integer"),
    (["--set", "nope=1"], 64, "unknown toy setting(s): nope (known: cores, echo)"),
    (["--max-seconds", "nan"], 2, "'nan' must be a finite number of seconds above 0"),
    (["--max-seconds", "inf"], 2, "'inf' must be a finite number of seconds above 0"),
    (["--max-steps", str(10 ** 26)], 2, "is not in the range 0<=x<=9223372036854775807"),
    (["--max-cycles", str(1 << 63)], 2, "is not in the range 0<=x<=9223372036854775807"),
    (["--until-pc", "0x1ffffffffffffffff"], 64, "stop address 0x1ffffffffffffffff lies outside the 32-bit"),
])
def test_cli_refuses_bad_numbers_in_one_line(capsys, monkeypatch, halt_program, args, code, needle):
    got, _out, err = _cli(capsys, monkeypatch, "run", "--arch", "toy", halt_program, "--set", "echo=false", *args)
    assert got == code
    assert needle in _one_line(err)


def test_cli_good_numbers_run(capsys, monkeypatch, halt_program):
    code, _out, err = _cli(capsys, monkeypatch, "run", "--arch", "toy", halt_program, "--set", "cores=0x1",
                           "--max-seconds", "2.5", "--max-steps", str(MAX_COUNT), "--memory-cap", "1T",
                           "--set", "echo=off")
    assert (code, err) == (0, "")


def test_cli_host_memory_error_is_exit_77(capsys, monkeypatch, halt_program):
    def refuse(*args, **kwargs):
        raise OSError(errno.ENOMEM, os.strerror(errno.ENOMEM))

    monkeypatch.setattr(regions.mmap, "mmap", refuse)  # the toy's 64 KiB RAM takes the bytearray path
    monkeypatch.setattr(regions, "LAZY_RAM_THRESHOLD", 1)
    code, _out, err = _cli(capsys, monkeypatch, "run", "--arch", "toy", halt_program, "--set", "echo=no")
    assert code == 77
    assert "out of host memory: the host cannot allocate" in _one_line(err)


def test_parse_settings_keeps_declared_text_and_guesses_the_rest():
    declared = Settings((Setting("name", "str", ""),), (SettingFamily("cfg.", check=_preset),))
    got = parse_settings(("name=0x10", "cfg.A=0x3", "other=0x10", "flag=on"), declared)
    assert got == {"name": "0x10", "cfg.A": "0x3", "other": 16, "flag": True}
    assert parse_settings(("name=0x10",)) == {"name": 16}


def test_archs_lists_the_settings(capsys, monkeypatch):
    code, out, err = _cli(capsys, monkeypatch, "archs", "--settings", "toy")
    assert code == 0 and not err
    assert "toy settings (--set KEY=VALUE)" in out
    row = next(line for line in out.splitlines() if "cores" in line)
    assert all(part in row for part in ("int", "2", "1..16", "CPU agents"))
    code, out, _err = _cli(capsys, monkeypatch, "archs", "--settings", "--json")
    (entry,) = json.loads(out)
    assert entry["arch"] == "toy" and entry["declared"]
    assert {r["key"]: (r["kind"], r["min"], r["max"]) for r in entry["settings"]} == \
        {"cores": ("int", 1, 16), "echo": ("bool", None, None)}
    code, _out, err = _cli(capsys, monkeypatch, "archs", "--settings", "nosuch")
    assert code == 64 and "unknown architecture 'nosuch' (known: toy)" in _one_line(err)
