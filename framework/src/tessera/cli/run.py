"""``tessera run`` and ``tessera resume``: load, run with budgets and stop conditions, report."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import click

from tessera.cli.params import ADDRESS, SECONDS, SIZE, parse_settings
from tessera.control import RunInterrupted
from tessera.errors import ConfigError, PluginError, TesseraError
from tessera.loaders import FORMATS, load_program
from tessera.logs import get_logger
from tessera.machine import ENGINES, Machine, configure_tools
from tessera.machine.limits import MAX_COUNT
from tessera.machine.machine import INTERRUPT_DEFERRED, INTERRUPT_REQUESTED
from tessera.memory import DEFAULT_MEMORY_CAP
from tessera.plugins import call_impl
from tessera.progress import RunProgress
from tessera.session import resolve_arch, state_text

log = get_logger("tessera.run")  # structlog is imported only if a message is shown

DEFAULT_MAX_STEPS = 100_000_000


def budget_options(fn: Any) -> Any:
    """Options shared by run and resume: budgets, stop conditions, outputs."""
    opts = [
        click.option("--max-steps", type=click.IntRange(min=0, max=MAX_COUNT), default=DEFAULT_MAX_STEPS,
                     show_default=True, help="Instruction budget across all agents (0 = unlimited)."),
        click.option("--max-cycles", type=click.IntRange(min=0, max=MAX_COUNT), default=None,
                     help="Cycle budget (machine clock)."),
        click.option("--max-seconds", type=SECONDS, default=None,
                     help="Wall-time budget (a finite number of seconds above 0)."),
        click.option("--until-pc", "until_pc", type=ADDRESS, multiple=True,
                     help="Stop before executing ADDR (repeatable; within the architecture's address space)."),
        click.option("--until-symbol", "until_symbol", multiple=True, metavar="SYMBOL",
                     help="Stop before executing SYMBOL (repeatable)."),
        click.option("--stop-on-trap", is_flag=True, help="Stop when any trap is raised."),
        click.option("--dump-state", type=click.Choice(["json", "text"]), default=None,
                     help="Print the final machine state."),
        click.option("--dump-out", type=click.Path(dir_okay=False, writable=True), default=None,
                     help="Write the state dump to a file instead of stdout."),
        click.option("--snapshot-out", type=click.Path(dir_okay=False, writable=True), default=None,
                     help="Save a snapshot of the final machine (resume with `tessera resume`)."),
        click.option("--progress/--no-progress", default=None,
                     help="Progress bar on long runs (default: when stderr is a terminal)."),
        click.option("--engine", type=click.Choice(ENGINES), default=None,
                     help="Execution engine: fast (translated blocks, the default; also "
                          "TESSERA_ENGINE), step (one instruction at a time) or check (fast, every "
                          "block call repeated by stepping and compared; a difference is an engine "
                          "mismatch, exit status 78). Results are identical."),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


def _finish(machine: Machine, result: Any, *, dump_state: str | None, dump_out: str | None,
            snapshot_out: str | None) -> None:
    try:
        _write_outputs(machine, result, dump_state=dump_state, dump_out=dump_out,
                       snapshot_out=snapshot_out)
    except OSError as exc:  # e.g. a missing directory: one line, not an internal error
        raise ConfigError(f"cannot write {exc.filename or 'output'}: {exc.strerror or exc}") from None


def _write_outputs(machine: Machine, result: Any, *, dump_state: str | None, dump_out: str | None,
                   snapshot_out: str | None) -> None:
    if snapshot_out:
        machine.save_snapshot(snapshot_out)
    if dump_state:
        state = machine.state()
        if result is not None:
            state["result"] = result.as_dict()
        text = json.dumps(state, indent=2, sort_keys=True) if dump_state == "json" else state_text(machine, state)
        if dump_out:
            with open(dump_out, "w") as fh:
                fh.write(text + "\n")
        else:
            click.echo(text)


@contextlib.contextmanager
def deferred_interrupts() -> Iterator[None]:
    """While running: the first Ctrl-C stops the scheduler cleanly between slices."""
    INTERRUPT_REQUESTED[0] = False
    INTERRUPT_DEFERRED[0] = True
    try:
        yield
    finally:
        INTERRUPT_DEFERRED[0] = False


def execute(machine: Machine, *, max_steps: int, max_cycles: int | None, max_seconds: float | None,
            until_pc: tuple[int, ...], until_symbol: tuple[str, ...], stop_on_trap: bool,
            dump_state: str | None, dump_out: str | None, snapshot_out: str | None,
            progress: bool | None, engine: str | None = None, **tool_options: Any) -> int:
    """Run ``machine`` and report; returns the process exit status.

    ``tool_options`` are the values of the options tool plugins added
    (``tessera_run_options``); they go to ``tessera_run_configure`` before the run
    (:func:`tessera.machine.configure_tools`, re-exported here for older imports).
    """
    if engine is not None:
        machine.set_engine(engine)
    configure_tools(machine, tool_options)
    result = None
    outputs = dict(dump_state=dump_state, dump_out=dump_out, snapshot_out=snapshot_out)
    try:
        with RunProgress(max_steps or None, enabled=progress) as bar, deferred_interrupts():
            result = machine.run(max_steps=max_steps or None, max_cycles=max_cycles,
                                 max_seconds=max_seconds, until_pc=until_pc,
                                 until_symbol=until_symbol, stop_on_trap=stop_on_trap,
                                 progress=bar.callback)
    except TesseraError as err:
        result = getattr(err, "result", None)
        _finish(machine, result, **outputs)
        raise
    except RunInterrupted as stop:  # Ctrl-C between slices: the state is exact, so save it
        _finish(machine, stop.result, **outputs)
        written = [f"snapshot in {snapshot_out}"] if snapshot_out else []
        if dump_state:
            written.append(f"state dump in {dump_out}" if dump_out else "state dump above")
        steps = stop.result.steps if stop.result is not None else 0
        saved = f"; {' and '.join(written)} (exact, resumable)" if written else ""
        click.echo(f"interrupted after {steps} steps{saved}", err=True)
        stop.reported = True  # type: ignore[attr-defined]  # main() need not say it again
        raise
    except KeyboardInterrupt:  # a second Ctrl-C, mid-instruction: nothing exact to save
        if snapshot_out or dump_state:
            click.echo("interrupted twice: the run stopped mid-instruction, so no snapshot or "
                       "state dump was written", err=True)
        raise
    log.info("run finished", reason=result.reason, steps=result.steps, cycles=result.cycles,
             seconds=round(result.seconds, 6))
    _finish(machine, result, dump_state=dump_state, dump_out=dump_out, snapshot_out=snapshot_out)
    if result.reason == "halted":
        return (result.exit_code or 0) & 0xFF
    if result.reason in ("breakpoint", "trap"):
        click.echo(f"stopped: {result.detail} (agent {result.agent})", err=True)
    return 0


@click.command()
@click.argument("program", type=click.Path())  # a directory is a LoadError (65), not usage
@click.option("--arch", "arch_name", default=None, help="Architecture (default: from the ELF header).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="Program format (auto: ELF by magic, .s/.asm assembly, .hex/.words word list, else raw).")
@click.option("--load", type=ADDRESS, default=None, help="Load address of a raw image or word list.")
@click.option("--entry", type=ADDRESS, default=None, help="Start address (overrides the program's).")
@click.option("--memory-cap", type=SIZE, default=DEFAULT_MEMORY_CAP, show_default=True,
              help="Most RAM/ROM the machine may allocate.")
@click.option("--auto-map", is_flag=True, help="Map RAM for segments outside the architecture's memory map.")
@click.option("--any-elf-machine", is_flag=True,
              help="Load an ELF whatever machine its header names (needs --arch; class and byte "
                   "order are still checked).")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE",
              help="Architecture configuration (repeatable; see the plugin's docs).")
@budget_options
@click.pass_obj
def run(obj: Any, program: str, arch_name: str | None, fmt: str, load: int | None,
        entry: int | None, memory_cap: int, auto_map: bool, any_elf_machine: bool,
        settings: tuple[str, ...], **opts: Any) -> int:
    """Load PROGRAM (ELF, raw image, word list or assembly) and run it.

    Exit status: the program's own exit status when it halts; a distinct code per
    error class otherwise (see docs/errors.md).
    """
    if any_elf_machine and not arch_name:
        raise click.UsageError("--any-elf-machine needs --arch: it says which architecture runs the ELF")
    arch = resolve_arch(obj.host, arch_name, program, memory_cap)
    tools = tool_settings(obj.host)
    config = parse_settings(settings, getattr(arch, "settings", None), tools)
    config.update(arch_flag_settings(arch, opts))
    config.update(tool_setting_options(tools, opts))
    machine = Machine(arch, host=obj.host, memory_cap=memory_cap, config=config)
    loaded = load_program(machine, program, fmt=fmt, load=load, entry=entry, auto_map=auto_map,
                          any_elf_machine=any_elf_machine)
    log.info("loaded", program=program, format=loaded.format, entry=hex(loaded.entry),
             segments=[(hex(a), n) for a, n in loaded.segments])
    return execute(machine, **opts)


def tool_settings(host: Any) -> list[Any]:
    """The ``Settings`` tool plugins declare (``tessera_tool_settings``)."""
    return [declared for _plugin, declared in host.tool_settings()] if host is not None else []


def tool_setting_options(tools: list[Any], opts: dict[str, Any]) -> dict[str, Any]:
    """Take out of ``opts`` the tool options named like a tool's setting (``--cycles MODEL``
    is ``--set cycles=MODEL``): the given ones, as settings."""
    out: dict[str, Any] = {}
    for name in [k for k in opts if any(t.get(k) is not None for t in tools)]:
        value = opts.pop(name)
        if value is not None and value is not False and value != ():
            out[name] = value
    return out


ARCH_FLAG_PREFIX = "arch_flag__"
TOOL_OPTION_MARK = "_tessera_tool_option"


def add_tool_options(commands: list[click.Command], host: Any) -> None:
    """Give ``run``/``resume`` the options tool plugins contribute (idempotent).

    A parameter name (or option string) that clashes with a built-in option or an
    earlier plugin's is refused with a one-line message naming the plugin.
    """
    for command in commands:
        command.params = [p for p in command.params if not getattr(p, TOOL_OPTION_MARK, False)]
    if host is None:
        return
    for impl in host.impls("tessera_run_options"):
        try:
            got = call_impl(impl) or []
        except Exception as exc:  # noqa: BLE001
            host.fail(impl.plugin_name, f"tessera_run_options raised {type(exc).__name__}: {exc}")
            continue
        for opt in got:
            if not isinstance(opt, click.Option):
                click.echo(str(PluginError(f"tessera_run_options returned {type(opt).__name__}, "
                                           "not a click.Option; ignored", plugin=impl.plugin_name)), err=True)
                continue
            for command in commands:
                names = {p.name for p in command.params}
                strings = {s for p in command.params for s in getattr(p, "opts", [])}
                if opt.name in names or strings & set(opt.opts):
                    click.echo(str(PluginError(f"option {opt.opts[0]} clashes with an existing option "
                                               f"of {command.name}; not added", plugin=impl.plugin_name)),
                               err=True)
                    continue
                setattr(opt, TOOL_OPTION_MARK, True)
                command.params.append(opt)


def arch_flag_settings(arch: Any, opts: dict[str, Any]) -> dict[str, Any]:
    """Turn the architecture flags the user gave (``--no-pma``) into settings."""
    out: dict[str, Any] = {}
    for key in [k for k in opts if k.startswith(ARCH_FLAG_PREFIX)]:
        given = opts.pop(key)
        flag = key[len(ARCH_FLAG_PREFIX):].replace("_", "-")
        if isinstance(given, tuple):  # a repeatable option: its values joined by commas
            given = ",".join(given) if given else None
        if given is None or given is False:
            continue
        if flag in arch.cli_flags:
            setting, value, _help = arch.cli_flags[flag]
            out[setting] = value
        elif flag in arch.cli_options:
            out[arch.cli_options[flag][0]] = given
        else:
            raise ConfigError(f"--{flag} does not apply to architecture {arch.name}")
    return out


def add_arch_flags(command: click.Command, archs: list[Any]) -> None:
    """Give ``run`` the flags every installed architecture declares (idempotent)."""
    command.params = [p for p in command.params if not (p.name or "").startswith(ARCH_FLAG_PREFIX)]
    seen: set[str] = set()
    for arch in sorted(archs, key=lambda a: a.name):
        declared = [(flag, text, True) for flag, (_s, _v, text) in arch.cli_flags.items()]
        declared += [(name, text, False) for name, (_s, text) in arch.cli_options.items()]
        for flag, text, is_flag in declared:
            if flag in seen:
                continue
            seen.add(flag)
            decls = [f"--{flag}", f"{ARCH_FLAG_PREFIX}{flag.replace('-', '_')}"]
            if is_flag:
                command.params.append(click.Option(decls, is_flag=True, default=False,
                                                   help=f"{text} (architecture {arch.name})."))
            else:
                command.params.append(click.Option(decls, default=None, metavar="VALUE", multiple=True,
                                                   help=f"{text} (architecture {arch.name}; "
                                                        "repeatable: the values are joined by commas)."))


@click.command()
@click.argument("snapshot", type=click.Path())  # a directory is a SnapshotError (75), not usage
@budget_options
@click.pass_obj
def resume(obj: Any, snapshot: str, **opts: Any) -> int:
    """Restore a machine from SNAPSHOT (``run --snapshot-out``) and keep running it."""
    given = tool_setting_options(tool_settings(obj.host), opts)
    if given:
        raise ConfigError(f"--{next(iter(given)).replace('_', '-')} sets how the machine is built: give it to "
                          "`tessera run`; a snapshot keeps the configuration it was made with")
    machine = Machine.load_snapshot(snapshot, host=obj.host)
    return execute(machine, **opts)
