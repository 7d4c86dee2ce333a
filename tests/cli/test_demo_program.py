"""``Example.program``: a bundled example given as a file ``tessera run`` loads, not as assembly.

The file goes through :func:`tessera.loaders.load_program`, as ``tessera run`` loads it,
so a plugin's program format works in ``tessera demo`` (the Tensix tiles ship a vendor
kernel this way); ``"package:path"`` names a file inside an installed package.
"""

from __future__ import annotations

import sys

import attrs
import pytest

from tessera.cli.demo import run_example
from tessera.errors import LoadError
from tessera.isa import Example
from tessera.plugins import PluginHost
from tessera_toyarch import TOY

EXAMPLE = TOY.examples[0]

#: a plugin with a program format of its own (``#toyk`` files: assembly after that line)
#: and an architecture whose example is such a file, shipped in a package
PROG_PLUGIN = """\
import attrs
import tessera
from tessera.isa import Example
from tessera.loaders import ProgramFormat, load_asm
from tessera_toyarch import TOY

TESSERA_API_VERSION = 1


def claims(path, head):
    return head.startswith(b"#toyk")


def load(machine, path, data):
    loaded = load_asm(machine, path, data.split(b"\\n", 1)[1])
    machine.symbols["toyk_loaded"] = 1
    return loaded


def check(machine, result):
    if "toyk_loaded" not in machine.symbols:
        return "the program was not loaded by the toyk format"
    return TOY.examples[0].check(machine, result)


PACKAGED = attrs.evolve(TOY, name="toyprog", examples=(
    Example("packaged", "the toy example, shipped as a toyk file", program="tessera_test_progpkg:sum.toyk",
            max_steps=100_000, check=check),))


@tessera.hookimpl
def tessera_architectures():
    return [PACKAGED]


@tessera.hookimpl
def tessera_program_formats():
    return [ProgramFormat("toyk", "toy kernels", claims, lambda path, data: "toyprog", load)]
"""


@pytest.fixture
def prog_plugin(tmp_path, monkeypatch):
    for module in ("tessera_test_progdemo", "tessera_test_progpkg"):   # this test's files, not a cached copy
        monkeypatch.delitem(sys.modules, module, raising=False)
    (tmp_path / "tessera_test_progdemo.py").write_text(PROG_PLUGIN)
    package = tmp_path / "tessera_test_progpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "sum.toyk").write_text("#toyk\n" + EXAMPLE.source)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "progdemo=tessera_test_progdemo"


def test_demo_loads_a_packaged_program_through_the_plugins_format(tessera, prog_plugin):
    res = tessera("--plugin-module", prog_plugin, "demo", "--arch", "toyprog")
    assert res.code == 0, res.out + res.err
    assert "-- toyprog/packaged: ok (" in res.out and "halted" in res.out


def test_a_packaged_program_that_is_missing_fails_the_demo_naming_the_file(tessera, prog_plugin, tmp_path):
    (tmp_path / "tessera_test_progpkg" / "sum.toyk").unlink()
    res = tessera("--plugin-module", prog_plugin, "demo", "--arch", "toyprog")
    assert res.code == 1
    assert "-- toyprog/packaged: FAILED (load error: cannot open " in res.out and "sum.toyk" in res.out


def test_a_program_file_runs_like_the_same_source(tmp_path):
    host = PluginHost(only=["toy"], use_environment=False)
    path = tmp_path / "example.s"
    path.write_text(EXAMPLE.source)
    from_file = attrs.evolve(EXAMPLE, source="", program=str(path))
    assert from_file.program_path() == str(path)
    ok, summary = run_example(host, TOY, from_file)
    assert ok, summary
    assert summary == run_example(host, TOY, EXAMPLE)[1]   # same steps, cycles and end


def test_a_wrong_program_fails_its_check(tmp_path):
    host = PluginHost(only=["toy"], use_environment=False)
    path = tmp_path / "other.s"
    path.write_text("copy: .word 0\nli r1, 1\nhalt r1\n")   # halts at once: copy never gets the sum
    ok, summary = run_example(host, TOY, Example("other", "not the example", program=str(path),
                                                 check=EXAMPLE.check, max_steps=100_000))
    assert not ok and "expected 5050" in summary


def test_package_paths_resolve_inside_the_package():
    import tessera_toyarch

    example = Example("e", "packaged", program="tessera_toyarch:isa.py")
    assert example.program_path() == tessera_toyarch.__path__[0] + "/isa.py"
    assert Example("e", "a path", program="C:\\kernels\\k.toml").program_path() == "C:\\kernels\\k.toml"
    assert Example("e", "assembly", source="halt r0\n").program_path() is None


def test_a_package_that_is_not_installed_is_a_load_error():
    example = Example("lost", "nowhere", program="tessera_no_such_package:k.toml")
    with pytest.raises(LoadError, match="example lost: program 'tessera_no_such_package:k.toml': cannot "
                                        "import package tessera_no_such_package"):
        example.program_path()


def test_source_and_program_together_are_refused():
    with pytest.raises(ValueError, match="gives both source and program"):
        Example("both", "ambiguous", source="halt r0\n", program="x.s")


def test_the_conformance_suite_runs_the_program_file(tmp_path):
    programs = pytest.importorskip("tessera_conformance.programs")
    path = tmp_path / "example.s"
    path.write_text(EXAMPLE.source)
    prog = programs.from_example(attrs.evolve(EXAMPLE, source="", program=str(path)), TOY, "toy")
    assert (prog.source, prog.path, prog.load, prog.problem) == (None, str(path), None, None)
    lost = programs.from_example(Example("lost", "nowhere", program="tessera_no_such_package:k"), TOY, "toy")
    assert lost.problem is not None and "cannot import package" in lost.problem


def test_tool_demos_run_after_the_examples_and_a_raising_one_names_its_plugin(capsys):
    """``tessera_tool_demos``: a tool plugin's demos run after the architectures' examples,
    filtered by ``--arch``; one that raises is a plugin error naming the plugin."""
    import click

    import tessera
    import tessera_toyarch.plugin
    from tessera.cli.demo import run_tool_demos
    from tessera.errors import PluginError

    class ToolDemos:
        TESSERA_API_VERSION = 1

        @tessera.hookimpl
        def tessera_tool_demos(self, host):
            def broken(workdir):
                raise RuntimeError("no luck")

            return [{"name": "good", "arch": "toy", "description": "works",
                     "run": lambda workdir: (workdir.is_dir(), "done in a scratch directory")},
                    {"name": "bad", "arch": "toy", "description": "raises", "run": broken},
                    {"name": "other", "arch": "rv32im", "description": "not selected", "run": broken}]

    host = PluginHost(load_entry_points=False, use_environment=False)
    host.register(tessera_toyarch.plugin, "toy")
    host.register(ToolDemos(), "tooldemo")
    errors: list[PluginError] = []
    with click.Context(click.Command("demo")):
        failures = run_tool_demos(host, ("toy",), errors)
    out = capsys.readouterr().out
    assert failures == 1 and "-- tooldemo/good: ok (done in a scratch directory)" in out
    assert "-- tooldemo/bad: FAILED" in out and "other" not in out
    assert len(errors) == 1 and errors[0].plugin == "tooldemo" and "RuntimeError: no luck" in str(errors[0])
