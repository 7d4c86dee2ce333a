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

QUIET = """\
import tessera

TESSERA_API_VERSION = 1


@tessera.hookimpl
def tessera_machine_ready(machine):
    pass
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
    (d / "tessera_test_quiet.py").write_text(QUIET)
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
    monkeypatch.setenv("TESSERA_DISABLE_PLUGINS", " toy")
    assert records(tessera("plugins", "--json"))["toy"]["status"] == "disabled"
    assert_one_line_error(tessera("run", "--arch", "toy", exit7_elf), 64, "unknown architecture",
                          "plugin toy provides it but is disabled by user")


def test_plugins_allow_list_environment_variable(tessera, monkeypatch, plugin_dir, exit7_elf):
    monkeypatch.setenv("TESSERA_PLUGINS", "toy")
    assert records(tessera("plugins", "--json"))["toy"]["status"] == "active"
    assert tessera("run", exit7_elf).code == 7

    monkeypatch.syspath_prepend(str(plugin_dir))  # a second plugin to allow instead of toy
    monkeypatch.setenv("TESSERA_EXTRA_PLUGINS", "other=tessera_test_quiet")
    monkeypatch.setenv("TESSERA_PLUGINS", "other")
    toy = records(tessera("plugins", "--json"))["toy"]
    assert toy["status"] == "disabled" and toy["reason"] == "not in the allow-list"
    assert_one_line_error(tessera("run", "--arch", "toy", exit7_elf), 64, "unknown architecture",
                          "plugin toy provides it but is not in the allow-list")


def test_only_plugin_option(tessera, plugin_dir, monkeypatch):
    assert records(tessera("--only-plugin", "toy", "plugins", "--json"))["toy"]["status"] == "active"
    monkeypatch.syspath_prepend(str(plugin_dir))
    toy = records(tessera("--plugin-module", "other=tessera_test_quiet", "--only-plugin", "other",
                          "plugins", "--json"))["toy"]
    assert toy["status"] == "disabled"


# --------------------------------------------------------------------------- unknown plugin names


@pytest.mark.parametrize("args, env, where", [
    (["--only-plugin", "nosuch"], {}, "--only-plugin"),
    (["--no-plugin=nosuch"], {}, "--no-plugin"),
    ([], {"TESSERA_PLUGINS": "toy,nosuch"}, "TESSERA_PLUGINS"),
    ([], {"TESSERA_DISABLE_PLUGINS": "nosuch"}, "TESSERA_DISABLE_PLUGINS"),
])
@pytest.mark.parametrize("command", [["archs"], ["plugins", "--json"], ["run", "--arch", "toy", "x.elf"]])
def test_an_unknown_plugin_name_is_a_usage_error_naming_the_plugins(tessera, monkeypatch, args, env,
                                                                    where, command):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    res = tessera(*args, *command)
    line = assert_one_line_error(res, 2, "usage error", "unknown plugin 'nosuch'", f"(in {where})")
    assert "toy" in line.split("the plugins are:")[1]  # the names to choose from
    assert res.out == ""


def test_unknown_plugin_names_in_a_real_process(tessera_proc):
    res = tessera_proc("--no-plugin", "ghost", "--only-plugin", "toy", "archs")
    assert_one_line_error(res, 2, "unknown plugin 'ghost' (in --no-plugin)", "toy")


def test_a_plugin_module_name_is_a_known_plugin_name(tessera, plugin_dir, monkeypatch):
    monkeypatch.syspath_prepend(str(plugin_dir))
    got = records(tessera("--plugin-module", "extra=tessera_test_quiet", "--no-plugin", "extra",
                          "plugins", "--json"))
    assert got["extra"]["status"] == "disabled"


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


# --------------------------------------------------------------------------- lazy loading

CHIP8 = """\
raise RuntimeError("no chip8 today")
"""


@pytest.fixture
def broken_dist(tmp_path):
    """A directory holding an installed-looking distribution (dist-info on sys.path) whose
    plugin module raises on import and which declares the architecture ``chip8``."""
    site = tmp_path / "site"
    info = site / "tessera_chip8-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tessera-chip8\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[tessera]\nchip8 = tessera_test_chip8\n\n[tessera.architectures]\nchip8 = chip8\n")
    (site / "tessera_test_chip8.py").write_text(CHIP8)
    return site


def test_the_architecture_of_a_plugin_that_fails_to_import_names_the_plugin(tessera, broken_dist,
                                                                             monkeypatch, exit7_elf):
    monkeypatch.syspath_prepend(str(broken_dist))
    res = tessera("--only-plugin", "chip8", "--only-plugin", "toy", "run", "--arch", "chip8", exit7_elf)
    assert_one_line_error(res, 72, "plugin error: architecture 'chip8' is provided by plugin chip8, "
                                   "which failed to load: import failed: RuntimeError: no chip8 today",
                          "(plugin chip8)")
    assert records(tessera("--only-plugin", "chip8", "plugins", "--json"))["chip8"]["reason"] == \
        "import failed: RuntimeError: no chip8 today"


def test_a_broken_plugin_is_not_imported_for_another_architecture(tessera, broken_dist, monkeypatch,
                                                                   exit7_elf):
    monkeypatch.syspath_prepend(str(broken_dist))
    res = tessera("--only-plugin", "chip8", "--only-plugin", "toy", "asm", "--arch", "toy",
                  "--word", "1")  # a usage error of asm: toy is found before it
    assert "chip8" not in res.err
    res = tessera("--only-plugin", "chip8", "--only-plugin", "toy", "disasm", "--arch", "toy",
                  "--word", "14800007")
    assert res.code == 0 and res.err == "" and "li r2, 7" in res.out  # chip8 was never imported
    # a run needs every plugin's hooks: the broken one is imported, reported, and skipped
    res = tessera("--only-plugin", "chip8", "--only-plugin", "toy", "run", "--arch", "toy", exit7_elf)
    assert res.code == 7 and "no chip8 today" in res.err and "Traceback" not in res.err


def test_a_failed_plugin_that_declares_nothing_is_named_as_a_possible_provider(tessera, plugin_dir,
                                                                               monkeypatch, exit7_elf):
    (plugin_dir / "tessera_test_chip8.py").write_text(CHIP8)  # a module only: no metadata
    monkeypatch.syspath_prepend(str(plugin_dir))
    res = tessera("--plugin-module", "chip8=tessera_test_chip8", "run", "--arch", "chip8", exit7_elf)
    assert_one_line_error(res, 64, "unknown architecture 'chip8' (known: toy)",
                          "plugin chip8, which may provide it, failed to load: import failed: "
                          "RuntimeError: no chip8 today")


def test_failed_import_in_a_real_process(tessera_proc, broken_dist, exit7_elf):
    res = tessera_proc("--only-plugin", "chip8", "run", "--arch", "chip8", exit7_elf,
                       env={"PYTHONPATH": str(broken_dist)})
    assert_one_line_error(res, 72, "provided by plugin chip8, which failed to load", "no chip8 today")


def test_version_imports_no_plugin_and_no_logging_library(tmp_path):
    """``tessera --version`` must stay fast: nothing but the core's command line is imported."""
    import subprocess
    import sys

    script = ("import sys\nfrom tessera.cli.main import main\n"
              "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
              "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
              "('structlog', 'rich', 'numpy', 'pluggy', 'elftools') or m.startswith('tessera_')"
              " or m in ('tessera.machine', 'tessera.plugins', 'tessera.cli.run'))\n"
              "print('imported:', heavy, file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", script, "--version"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60)
    assert proc.returncode == 0 and "tessera, version" in proc.stdout, proc.stderr
    assert proc.stderr.strip() == "imported: []"


def test_architecture_flags_are_added_when_used(tessera, exit7_elf):
    # toy declares --no-echo; run parses it although it is only added on demand
    assert tessera("run", "--arch", "toy", "--no-echo", exit7_elf).code == 7
    assert "--no-echo" in tessera("run", "--help").out
    res = tessera("run", "--arch", "toy", "--no-such-flag", exit7_elf)
    assert_one_line_error(res, 2, "No such option", "--no-such-flag")


# --------------------------------------------------------------------------- tessera demo

DEMO_PLUGIN = """\
import attrs
import tessera
from tessera.logs import get_logger
from tessera_toyarch import TOY

TESSERA_API_VERSION = 1


def bad_check(machine, result):
    raise ValueError("negative shift count")


def noisy_check(machine, result):
    return None


EXAMPLE = TOY.examples[0]
BAD = attrs.evolve(TOY, name="toybad", examples=(attrs.evolve(EXAMPLE, name="shifty", check=bad_check),))
NOISY = attrs.evolve(TOY, name="toynoisy", examples=(attrs.evolve(EXAMPLE, name="chatty",
                                                                  check=noisy_check),))


@tessera.hookimpl
def tessera_architectures():
    return [BAD, NOISY]


@tessera.hookimpl
def tessera_run_finished(machine, result):
    if machine.arch.name == "toynoisy":
        get_logger("tessera.test").warning("toy race", detail="core1 wrote what core0 reads")
"""


@pytest.fixture
def demo_plugin(tmp_path, monkeypatch):
    (tmp_path / "tessera_test_demo.py").write_text(DEMO_PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "demos=tessera_test_demo"


def test_an_example_check_that_raises_is_a_plugin_error_naming_plugin_and_example(tessera, demo_plugin):
    res = tessera("--plugin-module", demo_plugin, "demo", "--arch", "toybad", "--arch", "toy")
    assert_one_line_error(res, 72, "plugin error: the check of example toybad/shifty raised "
                                   "ValueError: negative shift count", "(plugin demos)")
    assert "-- toybad/shifty: FAILED (plugin error: the check of example toybad/shifty" in res.out
    assert "-- toy/producer-consumer: ok" in res.out  # the other examples still ran


def test_what_an_example_logs_is_part_of_its_output(tessera, demo_plugin):
    res = tessera("--plugin-module", demo_plugin, "demo", "--arch", "toynoisy")
    assert res.code == 0, res.err
    assert res.err == ""  # no timestamped warning line
    lines = res.out.splitlines()
    at = lines.index("   toy race: core1 wrote what core0 reads")
    assert lines[at - 1].startswith("== toynoisy/chatty") or "== toynoisy/chatty" in "\n".join(lines[:at])
    assert lines[-1].startswith("-- toynoisy/chatty: ok")


def test_the_tile_demo_shows_its_race_report_under_the_example(tessera):
    pytest.importorskip("tessera_tile")
    res = tessera("--only-plugin", "tile", "demo", "--arch", "tile")
    assert res.code == 0, res.err
    assert res.err == ""
    race = [line for line in res.out.splitlines() if "nobody waited for" in line]
    assert len(race) == 1 and race[0].startswith("   tile race: tst.g.us by hart0 at pc 0x10040")
    assert "race: race:" not in res.out
