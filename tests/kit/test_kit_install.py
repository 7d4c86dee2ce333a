"""The generated packages install with pip and work as installed plugins.

Once per session both kinds are generated and pip-installed (``--no-deps``) into a
fresh virtual environment whose only other packages are this interpreter's: a ``.pth``
file makes its site-packages visible, so the core, pytest and the conformance suite
need not be downloaded again.  In that environment the generated packages' own tests
run, ``tessera plugins`` lists them as active, ``tessera demo`` runs the example, the
tool reports its counts, and — when ``tessera-conformance`` is installed — the
conformance suite passes on both.  (.ci/run does the same from a clean environment
with ``pip install ./framework ./conformance <generated>``.)
"""

from __future__ import annotations

import importlib.util
import json
import os
import site
import subprocess
import sys
from pathlib import Path

import pytest

from tessera.cli.newplugin import generate

ARCH, TOOL = "kitarch", "kittool"

pytestmark = pytest.mark.slow


def _can_build_without_isolation() -> bool:
    """setuptools builds wheels by itself from 70.1 on; before, it needs ``wheel``."""
    try:
        import setuptools
    except ImportError:
        return False
    version = tuple(int(p) for p in setuptools.__version__.split(".")[:2] if p.isdigit())
    return version >= (70, 1) or importlib.util.find_spec("wheel") is not None


class Env:
    """A virtual environment with the generated packages installed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.python = root / "venv" / "bin" / "python"
        self.arch = root / f"tessera-{ARCH}"
        self.tool = root / f"tessera-{TOOL}"

    def run(self, *args: str, cwd: Path | None = None, timeout: float = 120,
            **extra_env: str) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("TESSERA_", "PYTEST_", "COV_", "PYTHON"))}
        env.update(extra_env)
        return subprocess.run([str(self.python), *args], cwd=cwd or self.root, env=env, text=True,
                              capture_output=True, timeout=timeout, check=False)

    def tessera(self, *args: str) -> subprocess.CompletedProcess:
        return self.run("-m", "tessera.cli.main", *args)


@pytest.fixture(scope="session")
def kit(tmp_path_factory) -> Env:
    root = tmp_path_factory.mktemp("kit")
    generate(ARCH, "arch", root)
    generate(TOOL, "tool", root)
    env = Env(root)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True)
    purelib = env.run("-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip()
    parents = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (Path(purelib) / "_tessera_kit_parent.pth").write_text(
        "import site; " + "; ".join(f"site.addsitedir({p!r})" for p in parents) + "\n")
    install = ["-m", "pip", "install", "-q", "--no-deps", "--no-input", "--disable-pip-version-check"]
    if _can_build_without_isolation():
        install.append("--no-build-isolation")
    done = env.run(*install, str(env.arch), str(env.tool), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return env


def test_they_install_into_the_fresh_environment(kit):
    done = kit.run("-c", "import sys, tessera_kitarch, tessera_kittool; "
                         "print(sys.prefix); print(tessera_kitarch.__file__); print(tessera_kittool.__file__)")
    prefix, arch_file, tool_file = done.stdout.split()
    assert Path(prefix) == kit.root / "venv"
    assert Path(arch_file).is_relative_to(kit.root / "venv") and Path(tool_file).is_relative_to(kit.root / "venv")


@pytest.mark.parametrize("package", [ARCH, TOOL])
def test_their_own_tests_pass(kit, package):
    done = kit.run("-m", "pytest", "-q", "-p", "no:cacheprovider", "tests", cwd=kit.root / f"tessera-{package}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert " passed" in done.stdout and "failed" not in done.stdout


def test_tessera_plugins_lists_them_active(kit):
    done = kit.tessera("plugins", "--json")
    assert done.returncode == 0, done.stderr
    records = {r["name"]: r for r in json.loads(done.stdout)}
    assert records[ARCH]["status"] == "active" and records[ARCH]["distribution"] == f"tessera-{ARCH}"
    assert records[ARCH]["api_version"] == 1
    assert records[ARCH]["hooks"] == ["tessera_architectures", "tessera_conformance_cases"]
    assert records[TOOL]["status"] == "active"
    assert records[TOOL]["hooks"] == ["tessera_execute_instrument", "tessera_run_finished"]


def test_tessera_demo_runs_the_example(kit):
    done = kit.tessera("--only-plugin", ARCH, "demo", "--arch", ARCH)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"-- {ARCH}/multiply: ok" in done.stdout


def test_run_asm_disasm_and_the_tool_report(kit):
    (kit.root / "six.s").write_text("        addi r1, r0, 6\n        halt r1\n")
    done = kit.tessera("-v", "--only-plugin", ARCH, "--only-plugin", TOOL, "run", "six.s", "--arch", ARCH)
    assert done.returncode == 6, done.stderr
    assert "instructions executed" in done.stderr and "total=2" in done.stderr
    done = kit.tessera("--only-plugin", ARCH, "asm", "six.s", "--arch", ARCH, "-o", "six.bin")
    assert done.returncode == 0, done.stderr
    done = kit.tessera("--only-plugin", ARCH, "disasm", "six.bin", "--arch", ARCH)
    assert [line.strip() for line in done.stdout.splitlines()] == [
        "00000000:  01100006  addi r1, r0, 6", "00000004:  03010000  halt r1"]


def test_the_conformance_suite_passes_on_them(kit):
    if importlib.util.find_spec("tessera_conformance") is None:
        pytest.skip("tessera-conformance is not installed (pip install ./conformance)")
    # Only the generated plugins exist for the suite (the environment also sees this one's
    # plugins): the allow-list keeps the tool's checks to the generated architecture.
    done = kit.run("-m", "pytest", "-q", "-p", "no:cacheprovider", "--pyargs", "tessera_conformance",
                   timeout=600, TESSERA_PLUGINS=f"{ARCH},{TOOL}")
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]
    summary = done.stdout[done.stdout.index("Tessera conformance"):]
    assert f"{ARCH} (tessera-{ARCH} 0.1.0, API 1): ok" in summary
    assert f"{TOOL} (tessera-{TOOL} 0.1.0, API 1): ok" in summary
