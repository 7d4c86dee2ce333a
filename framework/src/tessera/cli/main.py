"""The ``tessera`` command: one line and a distinct exit code for every failure.

Everything is loaded when it is first needed, so ``tessera --version`` imports no
plugin and no command module: a built-in command's module is imported when that
command is used (:mod:`tessera.cli.commands`); the plugin host is built from the
group's own options (``--no-plugin``, ``--only-plugin``, ``--plugin-module``), which
click has parsed by the time a subcommand is looked up; plugins' commands are
collected only for a name that is not built in, or for the help listing; ``run``
and ``resume`` get the options tool plugins add, and ``run`` the flags the
architectures declare only when its arguments use one (or ask for help).  Every
:class:`TesseraError` is printed as one line with its class's exit code; anything
else is reported as an internal error (exit 76); ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import traceback
from typing import TYPE_CHECKING, Any

import click

from tessera import logs
from tessera.cli import commands
from tessera.errors import (
    INTERNAL_ERROR_EXIT,
    INTERRUPTED_EXIT,
    HostMemoryError,
    PluginError,
    TesseraError,
)
from tessera.version import __version__

if TYPE_CHECKING:
    from tessera.plugins import PluginHost

# click >= 8.2 raises this (a UsageError whose message is the whole help) for a bare `tessera`
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())
#: the built-in command names: a plugin's command may not take one
BUILTIN = frozenset(commands.BUILTIN_COMMANDS)
#: the commands tool plugins add options to (``tessera_run_options``)
RUN_COMMANDS = ("run", "resume")
#: how the plugin host's selection sources are spelled on the command line
_SELECTION_OPTION = {"disabled": "--no-plugin", "only": "--only-plugin"}


class Context:
    """Shared state for subcommands: the plugin host and global flags."""

    def __init__(self, host: PluginHost, debug: bool) -> None:
        self.host = host
        self.debug = debug


def _scan_log_options(argv: list[str]) -> tuple[int, str]:
    """``-v``/``--verbose`` count and ``--log-format``, read early so plugin loading logs obey them."""
    verbosity, fmt = 0, "console"
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == "--verbose":
            verbosity += 1
        elif len(arg) > 1 and arg[0] == "-" and arg[1] != "-" and set(arg[1:]) == {"v"}:
            verbosity += len(arg) - 1
        elif arg == "--log-format" and i + 1 < len(argv):
            fmt = argv[i + 1]
        elif arg.startswith("--log-format="):
            fmt = arg.split("=", 1)[1]
    return verbosity, fmt if fmt in ("console", "json") else "console"


def check_selection(host: PluginHost, ctx: click.Context | None = None) -> None:
    """A plugin name in ``--no-plugin``/``--only-plugin`` (or their environment variables)
    that names no plugin is a typo: a usage error listing the plugins there are."""
    unknown = host.unknown_selection()
    if not unknown:
        return
    names = ", ".join(f"{name!r} (in {_SELECTION_OPTION.get(where, where)})" for where, name in unknown)
    known = ", ".join(host.known_plugins()) or "none installed"
    raise click.UsageError(f"unknown plugin {names}; the plugins are: {known}", ctx)


def host_for(ctx: click.Context) -> PluginHost:
    """The plugin host of this invocation: the one the caller passed as ``obj``, or one
    built (once) from the group's plugin options and the environment."""
    from tessera.plugins import PluginHost

    root = ctx.find_root()
    if isinstance(root.obj, Context):
        return root.obj.host
    if isinstance(root.obj, PluginHost):  # main() or a test (CliRunner ... obj=host) chose it
        return root.obj
    params = root.params
    host = PluginHost(disabled=params.get("no_plugin") or (), only=params.get("only_plugin") or None,
                      extra_modules=params.get("plugin_module") or ())
    check_selection(host, root)
    root.obj = host
    return host


class PipeClosed(Exception):
    """Standard output's reader went away.  Not an ``OSError``, so that click does not
    turn it into its own ``exit(1)`` before :func:`main` can report it."""


class Interrupted(Exception):
    """Ctrl-C, carried past click (which would print a blank line and raise ``Abort``).
    ``reported``: the command already said what it saved."""

    def __init__(self, reported: bool) -> None:
        super().__init__("interrupted")
        self.reported = reported


class TesseraGroup(click.Group):
    """The ``tessera`` group: built-in commands imported when used, plugin commands on demand."""

    plugin_host: Any = None  # whose plugin commands ``commands`` holds now

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError as exc:
            raise PipeClosed() from exc
        except KeyboardInterrupt as exc:
            raise Interrupted(getattr(exc, "reported", False)) from exc

    def _plugin_commands(self, ctx: click.Context) -> None:
        host = host_for(ctx)
        if self.plugin_host is not host:
            add_plugin_commands(self, host)
            self.plugin_host = host

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._plugin_commands(ctx)
        return sorted(BUILTIN | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in BUILTIN:
            if cmd_name not in self.commands:
                self.commands[cmd_name] = commands.load(cmd_name)
            return self.commands[cmd_name]
        self._plugin_commands(ctx)
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[Any, Any, list[str]]:
        if args and self.get_command(ctx, args[0]) is None:
            for builtin in BUILTIN:  # a typo: click suggests among the commands it holds
                self.get_command(ctx, builtin)
        name, cmd, rest = super().resolve_command(ctx, args)
        if cmd is not None and name in RUN_COMMANDS:
            self._prepare_run(ctx, name, rest)
        return name, cmd, rest

    def _prepare_run(self, ctx: click.Context, name: str, args: list[str]) -> None:
        """Give ``run``/``resume`` the tool plugins' options, and ``run`` the architecture
        flags when ``args`` use an option it does not have yet or ask for help."""
        from tessera.cli.run import add_arch_flags, add_tool_options

        host = host_for(ctx)
        run_command, resume_command = (self.get_command(ctx, n) for n in RUN_COMMANDS)
        assert run_command is not None and resume_command is not None  # built-in commands
        add_arch_flags(run_command, [])  # none yet (another host may have added some)
        add_tool_options([run_command, resume_command], host)
        if name == "run" and _uses_unknown_option(run_command, ctx, args):
            add_arch_flags(run_command, [arch for arch, _ in host.architectures().values()])


def _uses_unknown_option(command: click.Command, ctx: click.Context, args: list[str]) -> bool:
    """Does ``args`` ask for help or hold a long option ``command`` does not have (yet)?"""
    known = {s for p in command.get_params(ctx) for s in [*getattr(p, "opts", ()),
                                                         *getattr(p, "secondary_opts", ())]}
    for arg in args:
        if arg == "--":
            break
        if arg in ctx.help_option_names:
            return True
        if arg.startswith("--") and arg.split("=", 1)[0] not in known:
            return True
    return False


@click.group(cls=TesseraGroup, context_settings={"help_option_names": ["-h", "--help"],
                                                 "max_content_width": 100})
@click.version_option(__version__, prog_name="tessera")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.option("-v", "--verbose", count=True, help="More log output (-v info, -vv debug).")
@click.option("--log-format", type=click.Choice(["console", "json"]), default="console",
              show_default=True, help="Log line format on stderr.")
@click.option("--no-plugin", "no_plugin", multiple=True, metavar="NAME",
              help="Do not load plugin NAME (repeatable; also TESSERA_DISABLE_PLUGINS=a,b).")
@click.option("--only-plugin", "only_plugin", multiple=True, metavar="NAME",
              help="Load only these plugins (repeatable; also TESSERA_PLUGINS=a,b).")
@click.option("--plugin-module", "plugin_module", multiple=True, metavar="[NAME=]MODULE",
              help="Also register a plugin module that is not installed (TESSERA_EXTRA_PLUGINS).")
@click.pass_context
def cli(ctx: click.Context, debug: bool, verbose: int, log_format: str, no_plugin: tuple[str, ...],
        only_plugin: tuple[str, ...], plugin_module: tuple[str, ...]) -> None:
    """Tessera: emulate accelerator and GPGPU instruction sets through plugins."""
    from tessera.plugins import set_default_host

    logs.configure(verbose, log_format)
    host = host_for(ctx)  # main() passes no host; tests may pass obj=host
    set_default_host(host)
    ctx.obj = Context(host, debug)


class _CommandCollector:
    """What plugins see as ``cli``: collects commands so clashes can be refused by name."""

    def __init__(self) -> None:
        self.added: list[Any] = []

    def add_command(self, cmd: Any, name: str | None = None) -> None:
        self.added.append((cmd, name or cmd.name))

    def command(self, *args: Any, **kwargs: Any) -> Any:
        def deco(fn: Any) -> Any:
            cmd = click.command(*args, **kwargs)(fn)
            self.add_command(cmd)
            return cmd
        return deco


def add_plugin_commands(group: click.Group, host: PluginHost) -> None:
    """Add the commands of ``host``'s plugins, replacing any a previous host added."""
    from tessera.plugins import call_impl

    for name in [n for n in group.commands if n not in BUILTIN]:
        del group.commands[name]
    for impl in host.impls("tessera_cli_commands"):
        collector = _CommandCollector()
        try:
            call_impl(impl, cli=collector)
        except Exception as exc:  # noqa: BLE001
            host.fail(impl.plugin_name, f"tessera_cli_commands raised {type(exc).__name__}: {exc}")
            continue
        for cmd, name in collector.added:
            if name in BUILTIN or name in group.commands:
                err = PluginError(f"command {name!r} clashes with an existing command; not added",
                                  plugin=impl.plugin_name)
                click.echo(str(err), err=True)
                continue
            group.add_command(cmd, name)


def _on_sigint(signum: int, frame: Any) -> None:
    """Ctrl-C.  While a run is in progress (``INTERRUPT_DEFERRED``), the first one only
    asks the scheduler to stop at the next slice boundary, where the machine state is
    exact, so ``--snapshot-out``/``--dump-state`` can still be written; a second one, or
    one outside a run, interrupts at once.  The request flag also makes sure the
    scheduler stops even if Python loses the ``KeyboardInterrupt``
    (see ``tessera.machine.machine.INTERRUPT_REQUESTED``)."""
    from tessera.machine.machine import INTERRUPT_DEFERRED, INTERRUPT_REQUESTED

    if INTERRUPT_DEFERRED[0] and not INTERRUPT_REQUESTED[0]:
        INTERRUPT_REQUESTED[0] = True
        return
    INTERRUPT_REQUESTED[0] = True
    raise KeyboardInterrupt


#: Exit status when the reader of standard output went away (``tessera run … | head``):
#: 128 + SIGPIPE, what a shell reports for a tool that the closed pipe stopped.
PIPE_CLOSED_EXIT = 141


def _pipe_closed(exc: BaseException) -> bool:
    """True for a closed standard output, also when a plugin's error wraps it."""
    while exc is not None:
        if isinstance(exc, BrokenPipeError):
            return True
        exc = exc.__cause__  # type: ignore[assignment]
    return False


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    args = list(sys.argv[1:] if argv is None else argv)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _on_sigint)
    debug = "--debug" in args or os.environ.get("TESSERA_DEBUG") == "1"
    code = 0
    try:
        logs.configure(*_scan_log_options(args))  # before the host: plugin loading logs too
        rv = cli.main(args=args, prog_name="tessera", standalone_mode=False)
        code = rv if isinstance(rv, int) else 0
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except (BrokenPipeError, PipeClosed):  # stdout closed by its reader: stop quietly
        _silence_stdout()
        code = PIPE_CLOSED_EXIT
    except _NO_ARGS_IS_HELP as exc:  # bare `tessera`: the help text, as click shows it
        exc.show()
        code = exc.exit_code
    except click.UsageError as exc:  # one line, like every other failure
        where = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
        click.echo(f"tessera: usage error: {exc.format_message()}{where}", err=True)
        code = exc.exit_code
    except click.ClickException as exc:
        exc.show()
        code = exc.exit_code
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        code = INTERRUPTED_EXIT
    except (KeyboardInterrupt, Interrupted) as exc:
        if not getattr(exc, "reported", False):
            click.echo("interrupted", err=True)
        code = INTERRUPTED_EXIT
    except TesseraError as exc:
        if _pipe_closed(exc):  # e.g. a program's write() to a closed stdout
            _silence_stdout()
            code = PIPE_CLOSED_EXIT
        else:
            if debug:
                traceback.print_exc()
            for line in str(exc).splitlines() or [""]:  # several for an assembler's errors
                click.echo(f"tessera: {line}", err=True)
            code = exc.exit_code
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except MemoryError:
        if debug:
            traceback.print_exc()
        click.echo(f"tessera: {HostMemoryError('the host ran out of memory (lower --memory-cap, the RAM size or the budget)')}", err=True)
        code = HostMemoryError.exit_code
    except Exception as exc:  # noqa: BLE001 - last line of defence: one line, not a traceback
        if debug:
            traceback.print_exc()
        first = str(exc).splitlines()[0] if str(exc) else ""
        click.echo(f"tessera: internal error: {type(exc).__name__}: {first} "
                   "(rerun with --debug for the traceback)", err=True)
        code = INTERNAL_ERROR_EXIT
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        code = code or PIPE_CLOSED_EXIT
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
