"""The RISC-V settings declaration: ranges per XLEN, one size syntax, extensions, host memory."""

from __future__ import annotations

import mmap
import os
from pathlib import Path

import pytest

from tessera.cli.main import main
from tessera.errors import ConfigError
from tessera.machine import Machine
from tessera.settings import Setting, Settings
from tessera_riscv import RV32IM, RV64IM, RiscvExtension, make_arch

DOC = Path(__file__).resolve().parents[3] / "docs" / "riscv.md"
EXIT_0 = "li a0, 0\nli a7, 93\necall\n"


def test_both_variants_declare_every_key_with_its_xlen_bounds():
    for arch, top in ((RV32IM, 1 << 32), (RV64IM, 1 << 56)):
        declared = arch.settings
        assert [s.name for s in declared.items] == ["ram", "syscalls", "misaligned", "stack_top", "echo",
                                                    "hartid"]
        assert declared.get("ram").max == top and declared.get("ram").kind == "size"
        assert declared.get("hartid").max == (1 << arch.address_bits) - 1


@pytest.mark.parametrize(("config", "message"), [
    ({"ram": "100T"}, r"RISC-V setting ram=100T is out of range \(16\.\.4G: the 32-bit address space\)"),
    ({"ram": "1.5M"}, "ram must be a number of bytes"),
    ({"hartid": 1 << 32}, r"hartid=4294967296 is out of range \(0\.\.0xffffffff"),
    ({"stack_top": "8G"}, "stack_top=8G is out of range"),
    ({"misaligned": 1}, "misaligned must be one of allow, trap"),
    ({"ram": "2M", "ramm": 1}, r"unknown RISC-V setting\(s\): ramm \(did you mean ram\? known: ram, "),
])
def test_rv32_refusals(config, message):
    with pytest.raises(ConfigError, match=message):
        Machine(RV32IM, config=config)


def test_one_size_syntax_with_t():
    m = Machine(RV64IM, config={"ram": "2MiB", "stack_top": "1M", "echo": "no"})
    assert m.space.describe()[0]["size"] == 2 << 20
    assert m.config == {"ram": 2 << 20, "stack_top": 1 << 20, "echo": False}
    # 100T passes the declaration on RV64 and is then refused by the memory cap, not by syntax
    with pytest.raises(ConfigError, match="memory cap"):
        Machine(RV64IM, config={"ram": "100T"})


def _acc_extension(settings: Settings | None) -> RiscvExtension:
    return RiscvExtension("acc", settings=settings)


def test_an_extension_declares_its_own_keys():
    declared = Settings((Setting("acc.depth", "int", 4, min=1, max=64, help="FIFO depth"),), label="acc")
    arch = make_arch("rv32acc_test", 32, extensions=[_acc_extension(declared)])
    assert Machine(arch, config={"ram": "1M", "acc.depth": "16"}).config["acc.depth"] == 16
    with pytest.raises(ConfigError, match=r"acc setting acc\.depth=65 is out of range \(1\.\.64\)"):
        Machine(arch, config={"ram": "1M", "acc.depth": 65})
    with pytest.raises(ConfigError, match=r"unknown acc setting\(s\): acc\.deep \(did you mean acc\.depth\?"):
        Machine(arch, config={"ram": "1M", "acc.deep": 1})
    with pytest.raises(ConfigError, match="must start with 'acc.'"):
        _acc_extension(Settings((Setting("depth", "int", 4),)))
    # an extension that declares nothing gets its keys passed through for its build to read
    loose = make_arch("rv32loose_test", 32, extensions=[_acc_extension(None)])
    assert Machine(loose, config={"ram": "1M", "acc.anything": "x"}).config["acc.anything"] == "x"


def test_the_documentation_lists_every_key_with_its_range():
    text = DOC.read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(): line for line in text.splitlines() if line.startswith("| `")}
    for setting in RV32IM.settings.items:
        row = rows.get(f"`{setting.name}`")
        assert row is not None, f"docs/riscv.md does not list {setting.name}"
        if setting.kind in ("int", "size") and setting.name != "stack_top":
            assert setting.range_text in row, (setting.name, setting.range_text)
            assert RV64IM.settings.get(setting.name).range_text in row, setting.name


def _cli(capsys, monkeypatch, *args):
    for name in list(os.environ):
        if name.startswith("TESSERA_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("TESSERA_PLUGINS", "riscv")
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return exc.value.code, out, err


def test_cli_ram_beyond_the_host_is_out_of_host_memory(capsys, monkeypatch, tmp_path):
    """``--set ram=64G --memory-cap 100T``: exit 77 with one line, never an internal error.

    Whether 64 GiB can be mapped depends on the host (its RAM and overcommit policy): a
    lazy anonymous mapping costs nothing until written, so where it succeeds the test
    checks the run instead.
    """
    src = tmp_path / "exit.s"
    src.write_text(EXIT_0)
    try:
        probe = mmap.mmap(-1, 64 << 30)
    except OSError:
        code, _out, err = _cli(capsys, monkeypatch, "run", "--arch", "rv64im", src, "--set", "ram=64G",
                               "--memory-cap", "100T")
        assert code == 77
        assert err.splitlines() == [
            "tessera: out of host memory: the host cannot allocate 64G (0x1000000000 bytes) for region 'ram': "
            "Cannot allocate memory; lower the setting that sizes it (e.g. --set ram=...) or free host memory"]
    else:
        probe.close()
        code, _out, err = _cli(capsys, monkeypatch, "run", "--arch", "rv64im", src, "--set", "ram=64G",
                               "--set", "stack_top=1M", "--memory-cap", "100T")
        assert (code, err) == (0, "")


def test_cli_ram_syntax_and_range(capsys, monkeypatch, tmp_path):
    src = tmp_path / "exit.s"
    src.write_text(EXIT_0)
    code, _out, err = _cli(capsys, monkeypatch, "run", "--arch", "rv32im", src, "--set", "ram=100T")
    assert code == 64 and err.splitlines() == [
        "tessera: configuration error: RISC-V setting ram=100T is out of range (16..4G: the 32-bit address space)"]
    code, _out, err = _cli(capsys, monkeypatch, "run", "--arch", "rv32im", src, "--set", "ram=1M")
    assert (code, err) == (0, "")
