"""Plugin selection and failure isolation as the user sees it on the command line."""

from __future__ import annotations

import json
import textwrap

import pytest
from clitools import assert_one_line_error
from elfgen import build_elf
from toyprog import EXIT7

BAD_DISCOVERY = """\
import tessera

TESSERA_API_VERSION = 1


@tessera.hookimpl
def tessera_architectures():
    raise RuntimeError("kaboom in discovery")
"""

BAD_INSTRUMENT = """\
import tessera

TESSERA_API_VERSION = 1


@tessera.hookimpl
def tessera_execute_instrument(machine, arch, ins):
    def before(agent, ins):
        raise RuntimeError("instrument exploded")
    return (before, None)
"""

NO_API = """\
import tessera


@tessera.hookimpl
def tessera_architectures():
    return []
"""


@pytest.fixture
def exit7_elf(write):
    return write("exit7.elf", build_elf(entry=0x100, segments=[(0x100, EXIT7)]))


@pytest.fixture
def plugin_dir(tmp_path):
    """A directory of plugin modules that are not installed (put it on PYTHONPATH)."""
    d = tmp_path / "plugins"
    d.mkdir()
    (d / "tessera_test_baddisc.py").write_text(BAD_DISCOVERY)
    (d / "tessera_test_badinstr.py").write_text(BAD_INSTRUMENT)
    (d / "tessera_test_noapi.py").write_text(NO_API)
    return d


def records(res):
    assert res.code == 0, res.err
    return {r["name"]: r for r in json.loads(res.out)}


# --------------------------------------------------------------------------- failing plugins


def test_plugin_failing_discovery_is_shown_failed_and_toy_still_works(tessera_proc, plugin_dir):
    env = {"PYTHONPATH": str(plugin_dir)}
    res = tessera_proc("--plugin-module", "bad=tessera_test_baddisc", "plugins", env=env)
    assert res.code == 0, res.err
    assert "Traceback" not in res.out + res.err
    bad_row = next(line for line in res.out.splitlines() if " bad " in line)
    assert "failed" in bad_row and "(module)" in bad_row
    assert "kaboom in discovery" in res.out
    toy_row = next(line for line in res.out.splitlines() if " toy " in line)
    assert "active" in toy_row

    got = records(tessera_proc("--plugin-module", "bad=tessera_test_baddisc", "plugins", "--json",
                               env=env))
    assert got["bad"]["status"] == "failed"
    assert got["bad"]["reason"] == "tessera_architectures raised RuntimeError: kaboom in discovery"
    assert got["toy"]["status"] == "active"


def test_plugin_failing_discovery_does_not_stop_a_run(tessera_proc, plugin_dir, exit7_elf):
    res = tessera_proc("--plugin-module", "bad=tessera_test_baddisc", "run", exit7_elf,
                       env={"PYTHONPATH": str(plugin_dir)})
    assert res.code == 7
    assert "Traceback" not in res.err
    assert "kaboom in discovery" in res.err  # a logged warning, not a crash


def test_plugin_that_cannot_be_imported(tessera):
    got = records(tessera("--plugin-module", "ghost=tessera_test_no_such_module", "plugins", "--json"))
    assert got["ghost"]["status"] == "failed"
    assert "import failed: ModuleNotFoundError" in got["ghost"]["reason"]
    assert got["toy"]["status"] == "active"


def test_plugin_without_api_version_is_refused(tessera, plugin_dir, monkeypatch):
    monkeypatch.syspath_prepend(str(plugin_dir))
    got = records(tessera("--plugin-module", "noapi=tessera_test_noapi", "plugins", "--json"))
    assert got["noapi"]["status"] == "refused"
    assert "TESSERA_API_VERSION" in got["noapi"]["reason"]


def test_instrument_callback_that_raises_stops_the_run_naming_the_plugin(tessera, plugin_dir,
                                                                         monkeypatch, exit7_elf):
    monkeypatch.syspath_prepend(str(plugin_dir))
    res = tessera("--plugin-module", "boom=tessera_test_badinstr", "run", exit7_elf)
    assert_one_line_error(res, 72, "plugin error", "plugin boom", "instrument exploded",
                          "agent core0")


def test_instrument_callback_that_raises_in_a_real_process(tessera_proc, plugin_dir, exit7_elf):
    res = tessera_proc("--plugin-module", "boom=tessera_test_badinstr", "run", exit7_elf,
                       env={"PYTHONPATH": str(plugin_dir)})
    assert_one_line_error(res, 72, "plugin boom")


def test_extra_plugins_from_the_environment(tessera_proc, plugin_dir, exit7_elf):
    env = {"PYTHONPATH": str(plugin_dir), "TESSERA_EXTRA_PLUGINS": "boom=tessera_test_badinstr"}
    assert_one_line_error(tessera_proc("run", exit7_elf, env=env), 72, "plugin boom")


# --------------------------------------------------------------------------- choosing plugins


def test_no_plugin_disables_toy(tessera, exit7_elf):
    got = records(tessera("--no-plugin", "toy", "plugins", "--json"))
    assert got["toy"]["status"] == "disabled"
    assert got["toy"]["reason"] == "disabled by user"
    assert records(tessera("--no-plugin=toy", "archs", "--json")) == {}
    res = tessera("--no-plugin", "toy", "run", "--arch", "toy", exit7_elf)
    assert_one_line_error(res, 64, "unknown architecture 'toy'", "none installed")


def test_no_plugin_toy_and_an_elf_for_toy(tessera, exit7_elf):
    assert_one_line_error(tessera("--no-plugin", "toy", "run", exit7_elf), 65,
                          "no installed architecture runs ELF machine 0x7a01")


def test_disable_plugins_environment_variable(tessera, monkeypatch, exit7_elf):
    monkeypatch.setenv("TESSERA_DISABLE_PLUGINS", "other, toy")
    assert records(tessera("plugins", "--json"))["toy"]["status"] == "disabled"
    assert_one_line_error(tessera("run", "--arch", "toy", exit7_elf), 64, "unknown architecture")


def test_plugins_allow_list_environment_variable(tessera, monkeypatch, exit7_elf):
    monkeypatch.setenv("TESSERA_PLUGINS", "toy")
    assert records(tessera("plugins", "--json"))["toy"]["status"] == "active"
    assert tessera("run", exit7_elf).code == 7

    monkeypatch.setenv("TESSERA_PLUGINS", "somethingelse")
    toy = records(tessera("plugins", "--json"))["toy"]
    assert toy["status"] == "disabled" and toy["reason"] == "not in the allow-list"
    assert_one_line_error(tessera("run", "--arch", "toy", exit7_elf), 64, "unknown architecture")


def test_only_plugin_option(tessera):
    assert records(tessera("--only-plugin", "toy", "plugins", "--json"))["toy"]["status"] == "active"
    toy = records(tessera("--only-plugin", "nothing", "plugins", "--json"))["toy"]
    assert toy["status"] == "disabled"


def test_environment_variables_in_a_real_process(tessera_proc, exit7_elf):
    res = tessera_proc("run", "--arch", "toy", exit7_elf, env={"TESSERA_DISABLE_PLUGINS": "toy"})
    assert_one_line_error(res, 64, "unknown architecture 'toy'")
    assert tessera_proc("run", exit7_elf, env={"TESSERA_PLUGINS": "toy"}).code == 7


def test_plugin_adding_a_command(tessera_proc, tmp_path):
    (tmp_path / "tessera_test_cmd.py").write_text(textwrap.dedent("""\
        import click
        import tessera

        TESSERA_API_VERSION = 1


        @tessera.hookimpl
        def tessera_cli_commands(cli):
            @cli.command("hello")
            def hello():
                click.echo("hello from a plugin")

            @cli.command("run")
            def clash():
                pass
        """))
    env = {"PYTHONPATH": str(tmp_path)}
    res = tessera_proc("--plugin-module", "greet=tessera_test_cmd", "hello", env=env)
    assert res.code == 0, res.err
    assert res.out.strip() == "hello from a plugin"
    assert "command 'run' clashes" in res.err and "plugin greet" in res.err
    res = tessera_proc("--plugin-module", "greet=tessera_test_cmd", "run", "--help", env=env)
    assert res.code == 0 and "--max-steps" in res.out  # the built-in run is untouched


def test_plugin_loading_warnings_obey_log_format_json(tessera_proc, plugin_dir):
    res = tessera_proc("--log-format", "json", "--plugin-module", "noapi=tessera_test_noapi",
                       "plugins", "--json", env={"PYTHONPATH": str(plugin_dir)})
    assert res.code == 0, res.err
    lines = res.err.splitlines()
    assert lines, "the refused plugin should be logged"
    events = [json.loads(line) for line in lines]  # every log line is JSON, none console-style
    assert {"event": "plugin refused", "plugin": "noapi", "level": "warning"}.items() <= events[0].items()
