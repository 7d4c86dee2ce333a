"""Tool plugins' configuration keys (``tessera_tool_settings``): checked with the machine's.

A tool that acts while the machine is built (a timing model) reads its keys from
``machine.tool_config``; the core checks them against the tool's declaration before anything
is built, beside the architecture's, and ``tessera run`` takes them from ``--set`` and
from a tool option named like a key.
"""

from __future__ import annotations

import click
import pytest

import tessera
from tessera.errors import BudgetExceeded, ConfigError, PluginError
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera.settings import Setting, SettingFamily, Settings
from tessera_riscv import RV32IM

PROBE = Settings([Setting("probe", "choice", "off", choices=("off", "on"), help="the probe's mode")],
                 [SettingFamily("probe.", settings=(Setting("probe.depth", "int", 4, min=1, max=64),),
                                label="probe")], label="probe")


class ProbePlugin:
    """Declares ``probe`` / ``probe.depth`` and a ``--probe`` run option; remembers the config it saw."""

    TESSERA_API_VERSION = 1
    seen: list[dict] = []

    @tessera.hookimpl
    def tessera_tool_settings(self):
        return PROBE

    @tessera.hookimpl
    def tessera_run_options(self):
        return [click.Option(["--probe", "probe"], default=None, help="probe mode")]

    @tessera.hookimpl
    def tessera_machine_ready(self, machine):
        ProbePlugin.seen.append(dict(machine.tool_config))


def host(*plugins):
    import tessera_riscv.plugin

    h = PluginHost(load_entry_points=False, use_environment=False)
    h.register(tessera_riscv.plugin, "riscv")
    for i, p in enumerate(plugins):
        h.register(p, f"tool{i}")
    return h


def test_a_tools_keys_are_checked_beside_the_architectures():
    m = Machine(RV32IM, host=host(ProbePlugin()), config={"probe": "on", "probe.depth": "8", "echo": False})
    assert m.tool_config == {"probe": "on", "probe.depth": 8}
    assert m.config["echo"] is False and "probe" not in m.config


@pytest.mark.parametrize("config, message", [
    ({"probe": "sideways"}, "probe"),
    ({"probe.depth": 0}, "probe.depth"),
    ({"probe.width": 3}, "probe.width"),
])
def test_a_bad_tool_key_is_one_line_before_the_machine_is_built(config, message):
    with pytest.raises(ConfigError, match=message) as err:
        Machine(RV32IM, host=host(ProbePlugin()), config=config)
    assert "\n" not in str(err.value)


def test_without_the_tool_its_keys_are_unknown():
    with pytest.raises(ConfigError, match="unknown .*probe"):
        Machine(RV32IM, host=host(), config={"probe": "on"})


def test_a_tool_returning_something_else_is_named():
    class Bad:
        TESSERA_API_VERSION = 1

        @tessera.hookimpl
        def tessera_tool_settings(self):
            return {"probe": 1}

    with pytest.raises(PluginError, match="tool0.*not a tessera.settings.Settings|not a tessera.settings.Settings"):
        Machine(RV32IM, host=host(Bad()))


def run_cli(h, *args):
    """``tessera ARGS`` in-process with host ``h``: the command's exit status (errors raise)."""
    from tessera.cli.main import cli

    return cli.main(args=list(args), prog_name="tessera", standalone_mode=False, obj=h)


def test_run_takes_tool_keys_from_set_and_from_an_option_named_like_one(tmp_path):
    program = tmp_path / "p.s"
    program.write_text("    li a0, 7\n    li a7, 93\n    ecall\n")
    ProbePlugin.seen.clear()
    assert run_cli(host(ProbePlugin()), "run", str(program), "--arch", "rv32im", "--probe", "on",
                   "--set", "probe.depth=16") == 7
    assert ProbePlugin.seen[-1] == {"probe": "on", "probe.depth": 16}
    with pytest.raises(ConfigError, match="probe.depth"):
        run_cli(host(ProbePlugin()), "run", str(program), "--arch", "rv32im", "--set", "probe.depth=99")


def test_resume_refuses_a_setting_option_and_keeps_the_snapshots(tmp_path):
    program = tmp_path / "p.s"
    program.write_text("    li a0, 7\n    li a7, 93\n    ecall\n")
    snap = tmp_path / "s.snap"
    with pytest.raises(BudgetExceeded):  # stopped after one step, the snapshot written
        run_cli(host(ProbePlugin()), "run", str(program), "--arch", "rv32im", "--probe", "on", "--max-steps", "1",
                "--snapshot-out", str(snap))
    with pytest.raises(ConfigError, match="--probe sets how the machine is built"):
        run_cli(host(ProbePlugin()), "resume", str(snap), "--probe", "on")
    ProbePlugin.seen.clear()
    restored = Machine.load_snapshot(str(snap), host=host(ProbePlugin()))
    assert restored.tool_config == {"probe": "on"}
