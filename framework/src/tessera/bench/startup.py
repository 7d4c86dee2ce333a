"""Workload ``startup``: how long whole ``tessera`` commands take, start-up included.

A user waits for the whole process: the interpreter starting, the imports, reading
the plugins' metadata, building the one architecture the command needs, and only
then the work.  Each variant runs one command as a child process (the ``tessera``
console script next to this interpreter) and times it from start to exit; the best
of the samples counts (the least disturbed run).  The variants:

* ``version``: ``tessera --version`` (no plugin, no command module is imported);
* ``archs``: ``tessera archs`` (every architecture is built: not a target);
* then the commands the offered workloads contribute
  (:meth:`~tessera.bench.model.Workload.startup_commands`), so the core times
  ``tessera run`` of a program without naming its architecture — typically a tiny
  program run with and without ``--arch``, so what is measured is getting to the
  program (docs/performance.md lists them).  A contribution that cannot be made here
  (its architecture is missing) is left out, and ``size["note"]`` says when there is
  none at all.

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

from tessera.bench.model import BenchFailure, Context, Sample, Skip, Variant, Workload
from tessera.bench.targets import Target

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
    order = 1000            # last: it runs whole processes, the others' programs included
    rate_style = "ms"
    targets = (Target("startup-version", "tessera --version, whole process",
                      ("startup", "derived", "seconds", "version"), 0.15, False, "s"),)

    def prepare(self, ctx: Context) -> list[Variant]:
        self.tmp = tempfile.mkdtemp(prefix="tessera-bench-startup-")
        self.samples_per_round = ctx.size(type(self).samples_per_round)  # --scale: fewer samples
        env = child_environment(ctx.host, str(Path(self.tmp, "pycache")))
        variants = [
            Variant("version", Command(["--version"], env, self.tmp, "tessera, version").run,
                    "tessera --version"),
            Variant("archs", Command(["archs"], env, self.tmp, "").run, "tessera archs"),
        ]
        self.size = {}
        for cls in ctx.workloads.values():
            try:
                runs = cls.startup_commands(ctx, Path(self.tmp))
            except Skip:
                continue
            for run in runs:
                variants.append(Variant(run.name, Command(list(run.args), env, self.tmp, run.expect_out).run,
                                        run.description))
                self.size.update(run.size)
        if len(variants) == 2:
            self.size = {"note": "no enabled plugin offers a program to run: no run variants"}
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
