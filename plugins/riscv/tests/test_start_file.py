"""The startup file the plugin ships for C programs (``start.S``, ``start.h``,
``tessera riscv-start``), and the documented C example, run as a user would paste it
from README.md and docs/riscv.md.

The compiled tests need Debian's ``riscv64-unknown-elf-gcc``; without it they skip
with the reason, and with ``TESSERA_REQUIRE_DIFF_TOOLS=1`` (CI) they fail instead.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tessera_riscv import startfile

ROOT = Path(__file__).resolve().parents[3]
PLUGIN = Path(__file__).resolve().parents[1]
GCC = "riscv64-unknown-elf-gcc"
VENV_BIN = Path(sys.executable).parent
FLAGS = ["-ffreestanding", "-fno-builtin", "-nostdlib", "-O2", "-Wall", "-Werror"]
ABI = {32: ("rv32im", "ilp32"), 64: ("rv64im", "lp64")}


def clean_env(**extra: str) -> dict[str, str]:
    # the developer's plugin selection must not apply; the engine choice (CI runs both) must
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_") or k == "TESSERA_ENGINE"}
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra)
    return env


def tessera(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    script = VENV_BIN / "tessera"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "tessera.cli.main"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, cwd=cwd, timeout=60,
                          env=clean_env(TESSERA_PLUGINS="riscv"))


def need(tool: str) -> None:
    if shutil.which(tool) is None:
        problem = f"{tool} is not installed (apt-get install gcc-riscv64-unknown-elf qemu-user)"
        if os.environ.get("TESSERA_REQUIRE_DIFF_TOOLS") == "1":  # CI installs it
            pytest.fail(f"required but {problem}")
        pytest.skip(problem)


# ---------------------------------------------------------------- finding the file

def test_the_command_prints_the_installed_start_file(tmp_path):
    res = tessera("riscv-start", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    path = Path(res.stdout.strip())
    assert res.stdout.count("\n") == 1 and path.is_absolute()
    assert path == startfile.start_file() and path.name == "start.S"
    text = path.read_text()
    assert "_start:" in text and "li      a7, 64" in text and "li      a7, 93" in text

    res = tessera("riscv-start", "--dir", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    folder = Path(res.stdout.strip())
    assert folder == path.parent and (folder / "start.h").is_file()


def test_python_m_prints_the_same_path(tmp_path):
    res = subprocess.run([sys.executable, "-m", "tessera_riscv.startfile"], capture_output=True,
                         text=True, cwd=tmp_path, timeout=60, env=clean_env())
    assert res.returncode == 0 and Path(res.stdout.strip()) == startfile.start_file()


def test_the_files_are_package_data():
    """A wheel of tessera-riscv carries them: pyproject's package-data patterns match both."""
    config = tomllib.loads((PLUGIN / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["tessera_riscv"]
    package = PLUGIN / "src" / "tessera_riscv"
    shipped = {p.relative_to(package).as_posix() for pattern in patterns for p in package.glob(pattern)}
    assert {"data/start.S", "data/start.h"} <= shipped


# ---------------------------------------------------------------- the documented example

def example_blocks(path: Path) -> list[str]:
    """The ```sh blocks that write a C file and compile it with the startup file."""
    text = path.read_text(encoding="utf-8")
    blocks = re.findall(r"^```sh\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)
    return [b for b in blocks if "riscv-start" in b and "<<'EOF'" in b]


@pytest.mark.parametrize("doc", ["README.md", "docs/riscv.md"])
def test_the_documented_example_runs_by_copy_paste(doc, tmp_path):
    blocks = example_blocks(ROOT / doc)
    assert len(blocks) == 1, f"{doc} should have one runnable C example (found {len(blocks)})"
    need(GCC)
    block = blocks[0]
    source = re.search(r"<<'EOF'\n(.*?)^EOF$", block, re.MULTILINE | re.DOTALL).group(1)
    message = re.search(r'"((?:[^"\\]|\\.)*)\\n"', source).group(1)
    status = int(re.search(r"return (\d+);", source).group(1))
    (tmp_path / ".venv").symlink_to(VENV_BIN.parent)  # README's commands say .venv/bin/tessera
    res = subprocess.run(["bash", "-c", block], capture_output=True, text=True, cwd=tmp_path,
                         timeout=120, env=clean_env())
    assert res.stderr == ""
    assert res.stdout == f"{message}\n{status}\n"


# ---------------------------------------------------------------- what start.S provides

PROGRAM = r"""
#include "start.h"

struct big { char bytes[200]; };
static struct big pattern = {{1, 2, 3}};

static void put(const char *s)
{
    __SIZE_TYPE__ n = 0;
    while (s[n])
        n++;
    write(1, s, n);
}

int main(int argc, char **argv)
{
    struct big copy;
    char text[16] = "abcdefghijklmno";
    char line[12];

    memcpy(&copy, &pattern, sizeof copy);
    memset(line, '-', sizeof line);
    line[10] = '\n';
    line[11] = 0;
    memmove(text + 2, text, 8);            /* overlapping, dst above src: copies backwards */
    memmove(text + 8, text + 9, 4);        /* overlapping, dst below src: copies forwards */
    put(memcmp(text, "ababcdefhklmmno", 15) == 0 ? "memmove ok\n" : "memmove bad\n");
    put(memcmp("abc", "abd", 3) < 0 && memcmp("abd", "abc", 3) > 0 ? "memcmp ok\n" : "memcmp bad\n");
    put(line);
    put(argv[argc] == 0 ? "argv ok\n" : "argv bad\n");
    if (write(5, "x", 1) != -9)            /* EBADF */
        put("write to fd 5 did not fail\n");
    write(2, "to stderr\n", 10);
    exit(copy.bytes[2] + 40);              /* 43 */
}
"""


def build(tmp_path: Path, xlen: int) -> Path:
    march, mabi = ABI[xlen]
    (tmp_path / "prog.c").write_text(PROGRAM)
    elf = tmp_path / f"prog{xlen}.elf"
    proc = subprocess.run([GCC, f"-march={march}", f"-mabi={mabi}", *FLAGS, "-I", str(startfile.data_dir()),
                           "-o", str(elf), "prog.c", str(startfile.start_file())],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return elf


@pytest.mark.parametrize("xlen", [32, 64])
def test_start_file_runs_c_programs(tmp_path, xlen):
    need(GCC)
    elf = build(tmp_path, xlen)
    res = tessera("run", str(elf), "--arch", ABI[xlen][0], cwd=tmp_path)
    assert (res.returncode, res.stdout, res.stderr) == \
        (43, "memmove ok\nmemcmp ok\n----------\nargv ok\n", "to stderr\n")


@pytest.mark.parametrize("xlen", [32, 64])
def test_start_file_runs_the_same_under_qemu(tmp_path, xlen):
    need(GCC)
    need(f"qemu-riscv{xlen}")
    elf = build(tmp_path, xlen)
    ours = tessera("run", str(elf), "--arch", ABI[xlen][0], cwd=tmp_path)
    qemu = subprocess.run([f"qemu-riscv{xlen}", str(elf)], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert (ours.returncode, ours.stdout, ours.stderr) == (qemu.returncode, qemu.stdout, qemu.stderr)
