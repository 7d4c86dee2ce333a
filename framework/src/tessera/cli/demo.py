"""``tessera demo``: run the bundled examples of every installed architecture."""

from __future__ import annotations

from typing import Any

import click

from tessera.errors import TesseraError
from tessera.loaders.common import place
from tessera.machine import Machine


def run_example(host: Any, arch: Any, example: Any) -> tuple[bool, str]:
    """Assemble, load, run and check one example; ``(ok, one-line summary)``."""
    from tessera.isa.asm import assemble

    machine = Machine(arch, host=host)
    program = assemble(arch, example.source, file=f"<{arch.name}:{example.name}>",
                       base=example.load_address)
    for address, blob in program.segments:
        place(machine, address, blob, what=f"example {example.name}")
    machine.symbols.update(program.symbols)
    entry = program.entry if program.entry is not None else example.load_address
    machine.set_entry(entry)
    result = machine.run(max_steps=example.max_steps)
    problem = example.check(machine, result) if example.check is not None else None
    summary = f"{result.steps} steps, {result.cycles} cycles, {result.reason}"
    return problem is None, summary if problem is None else f"{summary}: {problem}"


@click.command()
@click.option("--arch", "only", multiple=True, help="Only these architectures.")
@click.pass_obj
def demo(obj: Any, only: tuple[str, ...]) -> int:
    """Run the bundled example of every installed architecture and check its result."""
    found = obj.host.architectures()
    names = sorted(only) if only else sorted(found)
    if not names:
        click.echo("No architectures are installed, so there is nothing to demonstrate.\n"
                   "Install an architecture plugin (e.g. pip install tessera-phoenix) and run "
                   "`tessera demo` again.")
        return 0
    failures = 0
    for name in names:
        arch = obj.host.architecture(name)
        if not arch.examples:
            click.echo(f"{name}: no bundled examples")
            continue
        for example in arch.examples:
            click.echo(f"== {name}/{example.name}: {example.description}")
            try:
                ok, summary = run_example(obj.host, arch, example)
            except TesseraError as err:
                ok, summary = False, str(err)
            click.echo(f"-- {name}/{example.name}: {'ok' if ok else 'FAILED'} ({summary})")
            failures += not ok
    return 1 if failures else 0
