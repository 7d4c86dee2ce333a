"""``tessera new-plugin``: name checks, one-line errors, the generated files, and the
generated plugins loaded in this process (no installation; see test_kit_install.py).
"""

from __future__ import annotations

import configparser
import importlib
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from tessera import plugins
from tessera import version as tessera_version
from tessera.cli.demo import run_example
from tessera.cli.main import cli, main
from tessera.cli.newplugin import generate, module_name, name_clash, name_problem, tox_sources
from tessera.errors import ConfigError
from tessera.isa.asm import assemble
from tessera.machine import Machine
from tessera.plugins import PluginHost

ARCH_FILES = [
    ".gitignore", "README.md", "pyproject.toml", "tox.ini",
    "src/tessera_{n}/__init__.py", "src/tessera_{n}/board.py", "src/tessera_{n}/conformance.py",
    "src/tessera_{n}/examples.py", "src/tessera_{n}/isa.py", "src/tessera_{n}/plugin.py",
    "src/tessera_{n}/semantics.py", "tests/test_{n}.py",
]
TOOL_FILES = [
    ".gitignore", "README.md", "pyproject.toml", "tox.ini",
    "src/tessera_{n}/__init__.py", "src/tessera_{n}/plugin.py", "tests/test_{n}.py",
]


@pytest.fixture(autouse=True)
def keep_default_host():
    """The ``tessera`` group makes the host it runs with the process default; put it back."""
    saved = plugins._default
    yield
    plugins.set_default_host(saved)


@pytest.fixture
def clean_env(monkeypatch):
    for var in ("TESSERA_DISABLE_PLUGINS", "TESSERA_PLUGINS", "TESSERA_EXTRA_PLUGINS", "TESSERA_DEBUG"):
        monkeypatch.delenv(var, raising=False)


def tessera(capsys, *argv: str) -> tuple[int, str, str]:
    """Run the real console entry point; ``(exit status, stdout, stderr)``."""
    with pytest.raises(SystemExit) as info:
        main(list(argv))
    out, err = capsys.readouterr()
    return info.value.code, out, err


def error_lines(err: str) -> list[str]:
    """stderr without log lines (a broken plugin elsewhere may log a warning)."""
    return [line for line in err.splitlines() if line.startswith("tessera:")]


@pytest.mark.parametrize("name", ["a", "mini16", "my_arch", "acme-isa", "a-1-b", "x" * 32])
def test_good_names(name):
    assert name_problem(name) is None


@pytest.mark.parametrize(("name", "why"), [
    ("", "empty"),
    ("Mini", "lowercase"),
    ("My-Arch", "try 'my-arch'"),
    ("my--arch", "a plugin name"),
    ("arch-", "a plugin name"),
    ("my-_arch", "try 'my__arch'"),
    ("-arch", "starting with a letter"),
    ("1arch", "starting with a letter"),
    ("_arch", "starting with a letter"),
    ("a b", "lowercase"),
    ("x" * 33, "longer than 32"),
    ("class", "keyword"),
    ("tessera", "Tessera itself"),
    ("tessera_x", "Tessera itself"),
    ("tessera-x", "Tessera itself"),
])
def test_bad_names(name, why):
    assert why in name_problem(name)


def test_a_bad_name_is_a_one_line_usage_error(capsys, tmp_path, clean_env):
    code, out, err = tessera(capsys, "--only-plugin", "toy", "new-plugin", "My-Arch", "--dir", str(tmp_path))
    assert code == 2 and out == ""
    assert error_lines(err) == [
        "tessera: usage error: Invalid value for 'NAME': 'My-Arch' is not a plugin name: use lowercase "
        "letters, digits, '_' and '-', starting with a letter (try 'my-arch') (see 'tessera new-plugin --help')"]
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_kind_is_a_usage_error(capsys, tmp_path, clean_env):
    code, _, err = tessera(capsys, "--only-plugin", "toy", "new-plugin", "fresh", "--kind", "board",
                           "--dir", str(tmp_path))
    assert code == 2 and len(error_lines(err)) == 1 and "'board' is not one of 'arch', 'tool'" in err


def test_an_installed_plugin_name_is_refused(capsys, tmp_path, clean_env):
    code, _, err = tessera(capsys, "--only-plugin", "toy", "new-plugin", "toy", "--dir", str(tmp_path))
    assert code == 64
    assert error_lines(err) == ["tessera: configuration error: a plugin named 'toy' is already installed "
                                "(distribution tessera-toyarch); choose another NAME"]
    assert list(tmp_path.iterdir()) == []


def test_clashes_with_distributions_modules_and_architectures(tmp_path, monkeypatch):
    assert name_clash("toyarch") == "the distribution tessera-toyarch is already installed"
    (tmp_path / "tessera_loose.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert name_clash("loose").startswith("a module named tessera_loose is already importable (")
    host = PluginHost(only=["riscv"], use_environment=False)
    assert name_clash("rv32im", host) == ("an architecture named 'rv32im' is already provided by the "
                                          "plugin riscv")
    assert name_clash("rv32im") is None          # without a host, architectures are not known
    assert name_clash("brand_new_arch", host) is None


def test_a_disabled_plugin_name_is_still_refused(capsys, tmp_path, clean_env):
    code, _, err = tessera(capsys, "--no-plugin", "toy", "--only-plugin", "riscv", "new-plugin", "toy",
                           "--dir", str(tmp_path))
    assert code == 64 and "a plugin named 'toy' is already installed" in err


def test_an_existing_directory_is_refused(capsys, tmp_path, clean_env):
    (tmp_path / "tessera-taken").mkdir()
    code, _, err = tessera(capsys, "--only-plugin", "toy", "new-plugin", "taken", "--dir", str(tmp_path))
    assert code == 64
    assert error_lines(err) == [f"tessera: configuration error: {tmp_path / 'tessera-taken'} already "
                                "exists; choose another NAME or --dir"]
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="is not a directory"):
        generate("other", "arch", tmp_path / "file")


def test_the_command_reports_what_it_made(capsys, tmp_path, clean_env):
    code, out, err = tessera(capsys, "--only-plugin", "toy", "new-plugin", "made", "--dir",
                             str(tmp_path / "new" / "dir"))
    assert code == 0 and error_lines(err) == []
    target = tmp_path / "new" / "dir" / "tessera-made"
    assert out.splitlines()[0] == f"created {target} (arch plugin 'made', 12 files)"
    assert "tessera demo --arch made" in out
    assert "pytest --pyargs tessera_conformance --tessera-plugin made" in out


def test_the_default_directory_is_the_current_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    host = PluginHost(load_entry_points=False, use_environment=False)
    result = CliRunner().invoke(cli, ["new-plugin", "here", "--kind", "tool"], obj=host,
                                standalone_mode=False)
    assert result.exception is None and result.return_value == 0
    assert (tmp_path / "tessera-here" / "pyproject.toml").is_file()


@pytest.mark.parametrize(("kind", "expected"), [("arch", ARCH_FILES), ("tool", TOOL_FILES)])
def test_the_generated_files(tmp_path, kind, expected):
    target = generate("gen", kind, tmp_path)
    assert target == tmp_path / "tessera-gen"
    found = sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file())
    assert found == sorted(f.format(n="gen") for f in expected)
    for path in target.rglob("*"):
        if path.is_file():
            text = path.read_text()
            assert not re.search(r"\{\{\w+\}\}", text), path
            assert "__module__" not in str(path)
            if path.suffix == ".py":
                compile(text, str(path), "exec")

    project = tomllib.loads((target / "pyproject.toml").read_text())
    assert project["project"]["name"] == "tessera-gen"
    assert project["project"]["dependencies"][0] == "tessera>=0.1.0"
    entry = project["project"]["entry-points"]["tessera"]
    assert entry == {"gen": "tessera_gen.plugin" if kind == "arch" else "tessera_gen.plugin:PLUGIN"}
    assert project["tool"]["setuptools"]["packages"]["find"]["where"] == ["src"]

    tox = configparser.ConfigParser(interpolation=None)
    tox.read(target / "tox.ini")
    assert tox["tox"]["envlist"].split(", ") == ["py", "conformance"]
    assert "--pyargs tessera_conformance --tessera-plugin gen" in tox["testenv:conformance"]["commands"]
    assert "TESSERA_CONFORMANCE" in tox["testenv:conformance"]["commands_pre"]
    assert "tessera-gen" in (target / "README.md").read_text()


def test_a_hyphenated_name_gives_the_usual_package_spelling(tmp_path, capsys, clean_env):
    code, out, err = tessera(capsys, "--only-plugin", "toy", "new-plugin", "acme-isa", "--dir", str(tmp_path))
    assert code == 0 and error_lines(err) == [], err
    target = tmp_path / "tessera-acme-isa"
    found = sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file())
    assert found == sorted(f.format(n="acme_isa") for f in ARCH_FILES)
    project = tomllib.loads((target / "pyproject.toml").read_text())
    assert project["project"]["name"] == "tessera-acme-isa"
    assert project["project"]["entry-points"]["tessera"] == {"acme-isa": "tessera_acme_isa.plugin"}
    assert "tessera demo --arch acme-isa" in out
    assert module_name("acme-isa") == "tessera_acme_isa"


def test_the_hyphenated_architecture_works_in_process(importable):
    plugin = importable("kitgen-hyphen", "arch")
    assert plugin.__name__ == "tessera_kitgen_hyphen.plugin"
    host = PluginHost(load_entry_points=False, use_environment=False)
    assert host.register(plugin, "kitgen-hyphen").status == "active"
    arch = host.architecture("kitgen-hyphen")
    ok, summary = run_example(host, arch, arch.examples[0])
    assert ok, summary


# --------------------------------------------------------------------------- tox.ini


def _tox(target):
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(target / "tox.ini")
    return tox


def _need(tox, variable, value, what):
    """Run the tox.ini's check command as tox would (its words split like a shell's)."""
    line = next(ln for ln in tox["testenv"]["commands_pre"].splitlines() if variable in ln)
    words = shlex.split(line.replace("{[tessera]need}", tox["tessera"]["need"]))
    assert words[-3:] == [variable, "{[tessera]core}" if variable == "TESSERA_CORE" else "{[tessera]suite}", what]
    words[-2] = value
    words[0] = sys.executable
    return subprocess.run(words, capture_output=True, text=True, check=False)


def test_tox_installs_the_core_from_the_checkout_it_was_generated_from(tmp_path):
    target = generate("toxed", "tool", tmp_path)
    tox = _tox(target)
    sources = tox_sources()
    framework = Path(tessera_version.__file__).resolve().parents[2]  # this checkout's framework/ (editable)
    assert sources["core_source"] == str(framework)
    assert tox["tessera"]["core"] == f"{{env:TESSERA_CORE:{framework}}}"
    assert tox["tessera"]["suite"] == f"{{env:TESSERA_CONFORMANCE:{sources['suite_source']}}}"
    # tox does not install the package (its dependency "tessera" would come from the index);
    # commands_pre installs it after the core
    assert tox["testenv"]["skip_install"] == "true"
    assert 'pip install -q "{[tessera]core}" "{toxinidir}"' in tox["testenv"]["commands_pre"]
    assert ('pip install -q "{[tessera]core}" "{[tessera]suite}" "{toxinidir}"'
            in tox["testenv:conformance"]["commands_pre"])
    assert "{env:TESSERA_CORE:tessera}" not in (target / "tox.ini").read_text()


def test_tox_without_a_core_stops_with_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr("tessera.cli.newplugin.local_source", lambda dist: None)
    target = generate("untoxed", "tool", tmp_path)
    tox = _tox(target)
    assert tox["tessera"]["core"] == "{env:TESSERA_CORE:}"
    assert tox["tessera"]["suite"] == "{env:TESSERA_CONFORMANCE:}"
    assert "They have no default here" in (target / "tox.ini").read_text()
    refused = _need(tox, "TESSERA_CORE", "", "core")
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.splitlines() == [
        "tox: set TESSERA_CORE to the Tessera core to install: a directory of a Tessera checkout or a "
        "wheel (the tessera on the package index is an unrelated project)"]
    assert _need(tox, "TESSERA_CORE", "/some/checkout/framework", "core").returncode == 0


@pytest.fixture
def importable(tmp_path):
    """Generate packages into tmp_path and import them from their src/ (no installation)."""
    added: list[str] = []

    def make(name: str, kind: str):
        target = generate(name, kind, tmp_path)
        sys.path.insert(0, str(target / "src"))
        added.append(str(target / "src"))
        importlib.invalidate_caches()
        return importlib.import_module(f"{module_name(name)}.plugin")

    yield make
    for path in added:
        sys.path.remove(path)
    for module in [m for m in sys.modules if m.startswith("tessera_kitgen")]:
        del sys.modules[module]


def test_the_generated_architecture_works_in_process(importable):
    plugin = importable("kitgen_arch", "arch")
    host = PluginHost(load_entry_points=False, use_environment=False)
    record = host.register(plugin, "kitgen_arch")
    assert record.status == "active", record.reason
    assert record.api_version == 1
    assert record.hooks == ["tessera_architectures", "tessera_conformance_cases"]
    arch = host.architecture("kitgen_arch")
    assert [e.mnemonic for e in arch.encodings] == ["addi", "bnez", "halt"]

    (example,) = arch.examples
    ok, summary = run_example(host, arch, example)
    assert ok, summary

    (got,) = [cases for _plugin, cases in host.call_each("tessera_conformance_cases", arch=arch)]
    assert [c["name"] for c in got] == [
        "multiply-state", "r0-reads-zero", "negative-immediate-wraps", "branch-not-taken", "two-cores",
        "endless-loop", "illegal-instruction", "jump-out-of-memory"]
    assert not {c["name"] for c in got} & {e.name for e in arch.examples}   # names are unique
    toy = PluginHost(use_environment=False, only=["toy"]).architecture("toy")
    assert [c for _p, c in host.call_each("tessera_conformance_cases", arch=toy)] == [None]


def test_the_generated_demo_runs_under_the_cli(importable):
    plugin = importable("kitgen_demo", "arch")
    host = PluginHost(load_entry_points=False, use_environment=False)
    host.register(plugin, "kitgen_demo")
    result = CliRunner().invoke(cli, ["demo", "--arch", "kitgen_demo"], obj=host, standalone_mode=False)
    assert result.exception is None and result.return_value == 0
    assert "-- kitgen_demo/multiply: ok (21 steps, 27 cycles, halted)" in result.stdout


def test_the_generated_tool_counts_without_changing_results(importable):
    module = importable("kitgen_tool", "tool")
    toy = PluginHost(use_environment=False, only=["toy"]).architecture("toy")
    host = PluginHost(load_entry_points=False, use_environment=False)
    counter = module.InstructionCounter()
    record = host.register(counter, "kitgen_tool")
    assert record.status == "active", record.reason
    assert record.hooks == ["tessera_execute_instrument", "tessera_run_finished"]
    assert module.PLUGIN.TESSERA_API_VERSION == 1

    def run(with_host):
        machine = Machine(toy, host=with_host, config={"echo": False})
        (example,) = toy.examples
        for address, blob in assemble(toy, example.source).segments:
            machine.space.write_bytes(address, blob)
        machine.run(max_steps=example.max_steps)
        return machine

    counted, plain = run(host), run(None)
    assert counted.state_hash() == plain.state_hash()
    cpus = [a for a in counted.agents if a.name.startswith("core")]
    assert sum(counter.counts(counted).values()) >= sum(a.instret for a in cpus) > 0
    assert counter.counts(counted)["halt"] == 2
