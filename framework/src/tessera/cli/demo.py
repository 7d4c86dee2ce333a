"""``tessera demo``: run the bundled examples of every installed architecture."""

from __future__ import annotations

from typing import Any

import click

from tessera import logs
from tessera.errors import PluginError, TesseraError
from tessera.loaders import load_program, place
from tessera.machine import Machine


def check_example(host: Any, arch: Any, example: Any, machine: Any, result: Any) -> str | None:
    """The example's own ``check``; a check that raises is a bug of the plugin that ships it."""
    if example.check is None:
        return None
    try:
        return example.check(machine, result)
    except TesseraError:
        raise
    except Exception as exc:  # plugin code: name the plugin and the example
        plugin = host.plugin_of(arch.name) if host is not None else None
        raise PluginError(f"the check of example {arch.name}/{example.name} raised "
                          f"{type(exc).__name__}: {exc}", plugin=plugin) from exc


def load_example(machine: Any, example: Any) -> None:
    """Put the example's program into ``machine``: a ``program`` file exactly as ``tessera
    run`` loads it (:func:`tessera.loaders.load_program`, so plugin program formats such
    as a Tensix kernel manifest too), else its assembly ``source`` at ``load_address``."""
    path = example.program_path() if getattr(example, "program", None) is not None else None
    if path is not None:
        load_program(machine, path)
        return
    from tessera.isa.asm import assemble

    arch = machine.arch
    program = assemble(arch, example.source, file=f"<{arch.name}:{example.name}>",
                       base=example.load_address)
    for address, blob in program.segments:
        place(machine, address, blob, what=f"example {example.name}")
    machine.symbols.update(program.symbols)
    entry = program.entry if program.entry is not None else example.load_address
    machine.set_entry(entry)


def run_example(host: Any, arch: Any, example: Any) -> tuple[bool, str]:
    """Load, run and check one example; ``(ok, one-line summary)``."""
    machine = Machine(arch, host=host)
    load_example(machine, example)
    result = machine.run(max_steps=example.max_steps)
    problem = check_example(host, arch, example, machine, result)
    summary = f"{result.steps} steps, {result.cycles} cycles, {result.reason}"
    return problem is None, summary if problem is None else f"{summary}: {problem}"


@click.command()
@click.option("--arch", "only", multiple=True, help="Only these architectures.")
@click.pass_obj
def demo(obj: Any, only: tuple[str, ...]) -> int:
    """Run the bundled example of every installed architecture and check its result.

    What an example logs (the tile checker's race report, say) is shown indented
    under it.  Exit status: 0 when every example passed its check, 1 when one did
    not; a plugin whose example check raises is a plugin error (72) naming the
    plugin and the example, reported once every example has run.
    """
    names = sorted(only) if only else sorted(obj.host.architectures())
    if not names:
        click.echo("No architectures are installed, so there is nothing to demonstrate.\n"
                   "Install an architecture plugin (e.g. pip install tessera-phoenix) and run "
                   "`tessera demo` again.")
        return 0
    failures = 0
    plugin_errors: list[PluginError] = []
    for name in names:
        arch = obj.host.architecture(name)
        if not arch.examples:
            click.echo(f"{name}: no bundled examples")
            continue
        for example in arch.examples:
            click.echo(f"== {name}/{example.name}: {example.description}")
            with logs.collect() as events:
                try:
                    ok, summary = run_example(obj.host, arch, example)
                except PluginError as err:
                    ok, summary = False, str(err)
                    plugin_errors.append(err)
                except TesseraError as err:
                    ok, summary = False, str(err)
            for event in events:
                click.echo(f"   {logs.plain(event)}")
            click.echo(f"-- {name}/{example.name}: {'ok' if ok else 'FAILED'} ({summary})")
            failures += not ok
    failures += run_tool_demos(obj.host, only, plugin_errors)
    if plugin_errors:
        raise plugin_errors[0]
    return 1 if failures else 0


def run_tool_demos(host: Any, only: tuple[str, ...], plugin_errors: list[PluginError]) -> int:
    """The tool plugins' demos (``tessera_tool_demos``) of the selected architectures; failures."""
    import tempfile
    from pathlib import Path

    failures = 0
    for plugin, items in host.call_each("tessera_tool_demos", host=host):
        for item in items or ():
            if only and item.get("arch") not in only:
                continue
            label = f"{plugin}/{item.get('name')}"
            click.echo(f"== {label}: {item.get('description', '')}")
            with tempfile.TemporaryDirectory(prefix="tessera-demo-") as tmp, logs.collect() as events:
                try:
                    ok, summary = item["run"](Path(tmp))
                except TesseraError as error:
                    ok, summary = False, str(error)
                except Exception as exc:  # noqa: BLE001 - plugin code: name the plugin and the demo
                    problem = PluginError(f"demo {label} raised {type(exc).__name__}: {exc}", plugin=plugin)
                    ok, summary = False, str(problem)
                    plugin_errors.append(problem)
            for event in events:
                click.echo(f"   {logs.plain(event)}")
            click.echo(f"-- {label}: {'ok' if ok else 'FAILED'} ({summary})")
            failures += not ok
    return failures
