"""``tessera --help``, ``--version``, ``plugins`` and ``archs``."""

from __future__ import annotations

import importlib.metadata as md
import json

from tessera.version import __version__
from tessera_toyarch import TOY

TOY_VERSION = md.version("tessera-toyarch")
BUILTIN_COMMANDS = ("run", "resume", "asm", "disasm", "plugins", "archs", "demo", "bench")


def test_help_lists_every_command_and_the_plugin_options(tessera):
    res = tessera("--help")
    assert res.code == 0, res.err
    assert res.err == ""
    for cmd in BUILTIN_COMMANDS:
        assert f"  {cmd} " in res.out, cmd
    for opt in ("--debug", "--no-plugin", "--only-plugin", "--plugin-module"):
        assert opt in res.out


def test_help_of_a_subcommand(tessera):
    res = tessera("run", "--help")
    assert res.code == 0
    for opt in ("--max-steps", "--until-symbol", "--dump-state", "--snapshot-out", "--entry"):
        assert opt in res.out


def test_help_through_the_console_script(tessera_proc):
    res = tessera_proc("--help")
    assert res.code == 0, res.err
    assert "Usage: tessera" in res.out
    assert "plugins" in res.out and "Traceback" not in res.err


def test_version(tessera):
    res = tessera("--version")
    assert res.code == 0
    assert res.out.strip() == f"tessera, version {__version__}"


def test_bare_tessera_shows_help_and_fails_as_usage(tessera):
    res = tessera()
    assert res.code == 2
    assert "Usage: tessera" in res.out + res.err
    assert "Traceback" not in res.out + res.err


def test_plugins_table_lists_toy(tessera):
    res = tessera("plugins")
    assert res.code == 0, res.err
    row = next(line for line in res.out.splitlines() if " toy " in line)
    for cell in ("tessera-toyarch", TOY_VERSION, "active", "architectures"):
        assert cell in row, (cell, row)


def test_plugins_json(tessera):
    res = tessera("plugins", "--json")
    assert res.code == 0, res.err
    records = {r["name"]: r for r in json.loads(res.out)}
    toy = records["toy"]
    assert toy["distribution"] == "tessera-toyarch"
    assert toy["version"] == TOY_VERSION
    assert toy["api_version"] == 1
    assert toy["status"] == "active"
    assert toy["reason"] == ""
    assert toy["hooks"] == ["tessera_architectures", "tessera_conformance_cases"]


def test_archs_table(tessera):
    res = tessera("archs")
    assert res.code == 0, res.err
    row = next(line for line in res.out.splitlines() if " toy " in line)
    assert "32 bits" in row and "little" in row and str(len(TOY.encodings)) in row


def test_archs_json(tessera):
    res = tessera("archs", "--json")
    assert res.code == 0, res.err
    (toy,) = [a for a in json.loads(res.out) if a["name"] == "toy"]
    assert toy["plugin"] == "toy"
    assert toy["word_bits"] == 32
    assert toy["endian"] == "little"
    assert toy["instructions"] == len(TOY.encodings) == 22
    assert "multi-agent" in toy["capabilities"]
    assert toy["capabilities"] == sorted(toy["capabilities"])
