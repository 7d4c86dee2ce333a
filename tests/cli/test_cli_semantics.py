"""``tessera semantics``: every row's semantic functions, inlined or called, and why."""

from __future__ import annotations

import json

import pytest
from clitools import assert_one_line_error

from tessera_toyarch import TOY

KEYS = ["mnemonic", "function", "via", "inlined", "terminal", "reason", "control_flags", "flag_check"]


def _json(tessera, arch: str) -> list[dict]:
    res = tessera("semantics", "--arch", arch, "--json")
    assert res.code == 0, res.err
    assert res.err == ""
    rows = json.loads(res.out)
    assert rows and all(list(r) == KEYS for r in rows)  # stable keys, in this order
    return rows


def test_every_toy_row_is_listed_with_its_function(tessera):
    rows = _json(tessera, "toy")
    # no refine: exactly one entry per row, the row's own function
    assert [r["mnemonic"] for r in rows] == [e.mnemonic for e in TOY.encodings]
    assert {r["via"] for r in rows} == {"row"}
    by_name = {r["mnemonic"]: r for r in rows}
    assert by_name["add"]["function"] == "tessera_toyarch.semantics.add"
    assert by_name["add"]["inlined"] is True and by_name["add"]["terminal"] is False
    assert by_name["add"]["reason"].startswith("plain function")
    assert by_name["beq"]["terminal"] is True  # returns the branch target: ends a block
    # the declared control flags, and no row whose code contradicts them
    assert by_name["beq"]["control_flags"] == ["branch"] and by_name["add"]["control_flags"] == []
    assert by_name["halt"]["control_flags"] == ["halt"] and by_name["halt"]["terminal"] is False
    assert all(r["flag_check"] is None for r in rows)


def test_rv32im_addi_is_inlined_and_its_declared_variants_are_listed(tessera, monkeypatch):
    pytest.importorskip("tessera_riscv")
    monkeypatch.setenv("TESSERA_PLUGINS", "riscv")
    listed = _json(tessera, "rv32im")
    rows = [r for r in listed if r["mnemonic"] == "addi"]
    own = [r for r in rows if r["via"] == "row"]
    assert len(own) == 1 and own[0]["function"] == "tessera_riscv.semantics.base.rv32_addi"
    assert own[0]["inlined"] is True and own[0]["terminal"] is False
    # the functions refine may install, as the row declares them: `addi x0, ...` is a nop,
    # `addi rd, x0, imm` a constant load, and a word at a misaligned address traps
    variants = {r["via"]: r["function"].rsplit(".", 1)[1] for r in rows if r["via"] != "row"}
    assert variants == {"variant:x0": "nop", "variant:li": "set_value",
                        "variant:misaligned-fetch": "misaligned_fetch"}
    assert all(r["inlined"] is True for r in rows)
    beq = next(r for r in listed if r["mnemonic"] == "beq" and r["via"] == "row")
    assert beq["inlined"] is True and beq["terminal"] is True
    assert {r["via"] for r in listed if r["mnemonic"] == "beq"} == {
        "row", "variant:misaligned-target", "variant:misaligned-fetch"}


def test_the_table_shows_the_same_answers(tessera, monkeypatch):
    pytest.importorskip("tessera_riscv")
    monkeypatch.setenv("TESSERA_PLUGINS", "riscv")
    res = tessera("semantics", "--arch", "rv32im")
    assert res.code == 0, res.err
    for col in ("mnemonic", "function", "via", "inlined", "terminal", "reason"):
        assert col in res.out
    addi = [line for line in res.out.splitlines() if "│ addi " in line and "rv32_addi" in line]
    assert len(addi) == 1, res.out
    cells = [c.strip() for c in addi[0].split("│")[1:-1]]
    assert cells[:5] == ["addi", "tessera_riscv.semantics.base.rv32_addi", "row", "yes", "no"], cells
    total = len(_json(tessera, "rv32im"))
    assert f"{total} row functions:" in res.out


@pytest.mark.parametrize(("plugin", "arch", "mnemonic"), [
    ("tile", "tile", "ace.w0"),
    ("tensix", "tensix", "sfpmad"),
])
def test_no_inline_functions_are_reported_called(tessera, monkeypatch, plugin, arch, mnemonic):
    pytest.importorskip(f"tessera_{plugin}")
    monkeypatch.setenv("TESSERA_PLUGINS", plugin if plugin != "tile" else "riscv,tile")
    rows = [r for r in _json(tessera, arch) if r["mnemonic"] == mnemonic]
    marked = [r for r in rows if r["reason"] == "marked no_inline"]
    assert marked, rows
    assert all(r["inlined"] is False for r in marked)
    assert all(r["function"].startswith(f"tessera_{plugin}.") for r in marked)


def test_an_unknown_architecture_is_a_configuration_error(tessera):
    # like run, asm, disasm, demo and archs: the known architectures are named
    assert_one_line_error(tessera("semantics", "--arch", "nosuch"), 64,
                          "unknown architecture 'nosuch'", "known: toy")


def test_arch_is_required(tessera):
    assert_one_line_error(tessera("semantics"), 2, "usage error", "--arch")


def test_listed_in_help(tessera):
    res = tessera("--help")
    assert res.code == 0
    assert "  semantics " in res.out
