"""The ``tessera`` command: one line and a distinct exit code for every failure.

Plugin selection options (``--no-plugin``, ``--only-plugin``, ``--plugin-module``)
must be known before click parses subcommands, because plugins contribute
subcommands; so they are read from ``argv`` first, the plugin host is built, plugin
commands are added, and then click runs.  Every :class:`TesseraError` is printed as
one line with its class's exit code; anything else is reported as an internal error
(exit 76); ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import traceback
from typing import Any

import click

from tessera import logs
from tessera.errors import (
    INTERNAL_ERROR_EXIT,
    INTERRUPTED_EXIT,
    HostMemoryError,
    PluginError,
    TesseraError,
)
from tessera.plugins import PluginHost, call_impl, set_default_host
from tessera.version import __version__

PLUGIN_OPTIONS = ("--no-plugin", "--only-plugin", "--plugin-module")
# click >= 8.2 raises this (a UsageError whose message is the whole help) for a bare `tessera`
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


class Context:
    """Shared state for subcommands: the plugin host and global flags."""

    def __init__(self, host: PluginHost, debug: bool) -> None:
        self.host = host
        self.debug = debug


def _scan_plugin_options(argv: list[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {opt: [] for opt in PLUGIN_OPTIONS}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            break
        for opt in PLUGIN_OPTIONS:
            if arg == opt and i + 1 < len(argv):
                found[opt].append(argv[i + 1])
                i += 1
            elif arg.startswith(opt + "="):
                found[opt].append(arg.split("=", 1)[1])
        i += 1
    return found


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


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
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
    logs.configure(verbose, log_format)
    host = ctx.obj if isinstance(ctx.obj, PluginHost) else None  # main() passes obj=host
    if host is None:  # invoked without main() (tests using CliRunner)
        host = PluginHost(disabled=no_plugin, only=only_plugin or None, extra_modules=plugin_module)
    set_default_host(host)
    ctx.obj = Context(host, debug)


def _add_builtin_commands() -> None:
    from tessera.cli import commands

    for cmd in commands.ALL:
        cli.add_command(cmd)


_add_builtin_commands()
BUILTIN = frozenset(cli.commands)


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
    """Ctrl-C: interrupt now, and make sure the scheduler stops even if Python loses
    the ``KeyboardInterrupt`` (see ``tessera.machine.machine.INTERRUPT_REQUESTED``)."""
    from tessera.machine.machine import INTERRUPT_REQUESTED

    INTERRUPT_REQUESTED[0] = True
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    args = list(sys.argv[1:] if argv is None else argv)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _on_sigint)
    debug = "--debug" in args or os.environ.get("TESSERA_DEBUG") == "1"
    code = 0
    try:
        logs.configure(*_scan_log_options(args))  # before the host: plugin loading logs too
        opts = _scan_plugin_options(args)
        host = PluginHost(disabled=opts["--no-plugin"], only=opts["--only-plugin"] or None,
                          extra_modules=opts["--plugin-module"])
        add_plugin_commands(cli, host)
        from tessera.cli.run import add_arch_flags, add_tool_options
        from tessera.cli.run import resume as resume_command
        from tessera.cli.run import run as run_command

        add_arch_flags(run_command, [arch for arch, _ in host.architectures().values()])
        add_tool_options([run_command, resume_command], host)
        rv = cli.main(args=args, prog_name="tessera", standalone_mode=False,
                      obj=host)
        code = rv if isinstance(rv, int) else 0
    except click.exceptions.Exit as exc:
        code = exc.exit_code
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
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        code = INTERRUPTED_EXIT
    except TesseraError as exc:
        if debug:
            traceback.print_exc()
        click.echo(f"tessera: {exc}", err=True)
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
    sys.stdout.flush()
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
