"""``tessera.machine.configure_tools``: the one way tool options reach ``tessera_run_configure``.

``tessera run``/``resume`` and the conformance suite both configure machines through
it, so what is checked here is what both do: every plugin gets its own copy of the
values, in hook order; a refusal (a ``TesseraError``) passes through unchanged; any
other exception becomes a ``PluginError`` naming the plugin; ``on_error`` receives
both instead and lets the next plugin be configured.
"""

from __future__ import annotations

import pytest

import tessera
import tessera.cli.run
from tessera.errors import ConfigError, PluginError
from tessera.machine import Machine, configure_tools

from .conftest import TOY, Plugin, make_host, new_machine


class Tool(Plugin):
    """Records what it was told, then does what ``fail`` says (nothing, or raise it)."""

    def __init__(self, seen: list, fail: Exception | None = None) -> None:
        self.seen = seen
        self.fail = fail

    @tessera.hookimpl
    def tessera_run_configure(self, machine, options):
        self.seen.append((self, machine, options))
        options["mine"] = True  # a plugin changing its copy changes nobody else's
        if self.fail is not None:
            raise self.fail


def _machine(*tools: Tool) -> Machine:
    return new_machine(host=make_host(*[(f"tool{i}", t) for i, t in enumerate(tools)]), cores=1)


def test_every_plugin_gets_its_own_copy_of_the_values():
    seen: list = []
    first, second = Tool(seen), Tool(seen)
    m = _machine(first, second)
    values = {"fi_at": 4}
    configure_tools(m, values)
    assert {t for t, _m, _o in seen} == {first, second} and len(seen) == 2
    assert all(machine is m and options == {"fi_at": 4, "mine": True} for _t, machine, options in seen)
    assert seen[0][2] is not seen[1][2] and values == {"fi_at": 4}


def test_a_refusal_passes_through_unchanged():
    refusal = ConfigError("--fi-at 3: no instruction there")
    m = _machine(Tool([], refusal))
    with pytest.raises(ConfigError) as info:
        configure_tools(m, {})
    assert info.value is refusal and info.value.plugin is None  # the message the user sees, as raised
    assert str(info.value) == "configuration error: --fi-at 3: no instruction there"


def test_a_crash_is_a_plugin_error_naming_the_plugin():
    m = _machine(Tool([]), Tool([], ZeroDivisionError("division by zero")))
    with pytest.raises(PluginError) as info:
        configure_tools(m, {})
    assert info.value.plugin == "tool1" and info.value.exit_code == 72
    assert "tessera_run_configure raised ZeroDivisionError: division by zero" in str(info.value)
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_on_error_gets_every_failure_and_the_next_plugin_still_runs():
    seen: list = []
    crash, refusal = ValueError("bad"), ConfigError("refused")
    tools = Tool(seen, crash), Tool(seen, refusal), Tool(seen)
    failures: list = []
    m = _machine(*tools)
    configure_tools(m, {"x": 1}, lambda plugin, exc: failures.append((plugin, exc)))
    order = [call.plugin_name for call in m.hook_calls("tessera_run_configure")]
    assert [plugin for plugin, _exc in failures] == [p for p in order if p != "tool2"]
    assert dict(failures) == {"tool0": crash, "tool1": refusal}
    assert len(seen) == 3


def test_a_machine_without_plugins_has_nothing_to_configure():
    m = Machine(TOY, host=None, config={"cores": 1, "echo": False})
    configure_tools(m, {"anything": 1}, lambda plugin, exc: pytest.fail("nothing to call"))


def test_the_command_line_uses_the_same_function():
    assert tessera.cli.run.configure_tools is configure_tools
