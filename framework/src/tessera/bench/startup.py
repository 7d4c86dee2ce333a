"""Workload ``startup``: how long whole ``tessera`` commands take, start-up included.

A user waits for the whole process: the interpreter starting, the imports, reading
the plugins' metadata, building the one architecture the command needs, and only
then the work.  Each variant runs one command as a child process (the ``tessera``
console script next to this interpreter) and times it from start to exit; the best
of the samples counts (the least disturbed run).  The variants:

* ``version``: ``tessera --version`` (no plugin, no command module is imported);
* ``archs``: ``tessera archs`` (every architecture is built: not a target);
* ``run-rv32``: ``tessera run --arch rv32im`` of the bench's compiled RV32 loop,
  patched down to a few iterations, so what is measured is getting to the program;
* ``run-rv32-elf``: the same without ``--arch``: the ELF header chooses the
  architecture, which today asks every architecture plugin (not a target).

Every sample is checked: exit status 0, and ``--version`` must print the version.
The children get the command's plugin selection (``--no-plugin``, ``--only-plugin``)
through ``TESSERA_DISABLE_PLUGINS`` and ``TESSERA_PLUGINS``.  They run with compiled
bytecode cached, as an installed Tessera does: where the environment forbids writing
it (``PYTHONDONTWRITEBYTECODE``), they get a private cache in the bench's temporary
directory (``PYTHONPYCACHEPREFIX``), and every command runs once untimed first.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tessera.bench.elfpatch import patch_symbol
from tessera.bench.model import BenchFailure, Context, Sample, Variant, Workload
from tessera.bench.rv32 import elf_image

#: iterations of the RV32 loop in the run variants: a few thousand instructions
ITERATIONS = 1000
TIMEOUT = 60.0


def tessera_command() -> list[str]:
    """The installed console script next to this interpreter, else ``python -m``."""
    script = Path(sys.executable).parent / "tessera"
    if script.exists():
        return [str(script)]
    found = shutil.which("tessera")
    return [found] if found else [sys.executable, "-m", "tessera.cli.main"]


def child_environment(host: Any, cache: str) -> dict[str, str]:
    """This process's environment with the command's plugin selection spelled out, and
    bytecode caching on (in ``cache`` if the environment had turned it off)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_")}
    if env.pop("PYTHONDONTWRITEBYTECODE", None):
        env["PYTHONPYCACHEPREFIX"] = cache
    env.update({k: v for k, v in os.environ.items() if k in ("TESSERA_EXTRA_PLUGINS", "TESSERA_ENGINE")})
    disabled = sorted(getattr(host, "disabled", ()) or ())
    only = sorted(getattr(host, "only", None) or ())
    if disabled:
        env["TESSERA_DISABLE_PLUGINS"] = ",".join(disabled)
    if only:
        env["TESSERA_PLUGINS"] = ",".join(only)
    return env


class Command:
    """One command line, timed as a whole process and checked."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: str, expect_out: str) -> None:
        self.argv = [*tessera_command(), *args]
        self.env = env
        self.cwd = cwd
        self.expect_out = expect_out

    def run(self) -> Sample:
        start = time.perf_counter()
        try:
            proc = subprocess.run(self.argv, capture_output=True, text=True, env=self.env, cwd=self.cwd,
                                  timeout=TIMEOUT, check=False)
        except subprocess.TimeoutExpired as exc:
            raise BenchFailure(f"{' '.join(self.argv[-2:])} took more than {TIMEOUT:g} s") from exc
        seconds = time.perf_counter() - start
        if proc.returncode != 0 or self.expect_out not in proc.stdout:
            last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
            raise BenchFailure(f"`tessera {' '.join(self.argv[1:])}` exited {proc.returncode}: {last}")
        return Sample(seconds, 1)


class Startup(Workload):
    name = "startup"
    title = "whole tessera commands, start-up included"
    unit = "commands"
    samples_per_round = 3

    def prepare(self, ctx: Context) -> list[Variant]:
        self.tmp = tempfile.mkdtemp(prefix="tessera-bench-startup-")
        self.samples_per_round = ctx.size(type(self).samples_per_round)  # --scale: fewer samples
        env = child_environment(ctx.host, str(Path(self.tmp, "pycache")))
        variants = [
            Variant("version", Command(["--version"], env, self.tmp, "tessera, version").run,
                    "tessera --version"),
            Variant("archs", Command(["archs"], env, self.tmp, "").run, "tessera archs"),
        ]
        if _provides(ctx.host, "rv32im"):
            program = Path(self.tmp, "sum.elf")
            program.write_bytes(patch_symbol(elf_image(), "iterations", ITERATIONS))
            variants += [
                Variant("run-rv32", Command(["run", "--arch", "rv32im", str(program)], env, self.tmp,
                                            "").run, f"tessera run --arch rv32im (a {ITERATIONS}-iteration loop)"),
                Variant("run-rv32-elf", Command(["run", str(program)], env, self.tmp, "").run,
                        "tessera run, the architecture chosen from the ELF"),
            ]
            self.size = {"iterations": ITERATIONS}
        else:
            self.size = {"note": "rv32im not installed: no run variants"}
        self.check = {"what": "every command exits 0; --version prints the version",
                      "expected": {"exit status": 0, "--version": "tessera, version"}}
        for variant in variants:  # untimed: fills the bytecode cache, and fails early
            variant.run()
        return variants

    def derive(self, best: dict[str, Sample]) -> dict[str, Any]:
        return {"seconds": {name: sample.seconds for name, sample in best.items()}}

    def close(self) -> None:
        tmp = getattr(self, "tmp", None)
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def _provides(host: Any, arch_name: str) -> bool:
    try:
        host.architecture(arch_name)
    except Exception:  # noqa: BLE001 - missing or broken: no run variants (the note says so)
        return False
    return True

