"""Program formats a plugin adds to ``tessera run``: a file that is neither ELF, image, words nor assembly.

Some programs are more than one file: a Tensix kernel is four ELFs (one per baby
RISC-V core), L1 inputs and expected outputs, named by a small manifest.  A plugin
describes such a format with a :class:`ProgramFormat` returned from the
``tessera_program_formats`` hook; :func:`tessera.loaders.load_program` (format
``auto``) and the command line's choice of architecture ask each one, in plugin
order, whether it *claims* the file before trying the built-in formats (after the
ELF magic, so an ELF is always an ELF).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from tessera.errors import PluginError, TesseraError


@attrs.frozen
class ProgramFormat:
    """A program format a plugin loads.

    * ``claims(path, head)``: is the file at ``path`` (whose first bytes are ``head``,
      up to 4096) one of this format's?  Cheap, and False for anything else;
    * ``architecture(path, data)``: the name of the architecture that runs it (used
      when the user gives no ``--arch``);
    * ``load(machine, path, data)``: put it into ``machine`` and return a
      :class:`~tessera.loaders.common.LoadedProgram`; a bad file is a one-line
      :class:`~tessera.errors.LoadError` (or ``ConfigError``).
    """

    name: str
    description: str
    claims: Callable[[str, bytes], bool]
    architecture: Callable[[str, bytes], str]
    load: Callable[[Any, str, bytes], Any]


def plugin_formats(host: Any) -> list[tuple[ProgramFormat, str]]:
    """Every ``(format, plugin name)`` the host's plugins provide, in plugin order."""
    if host is None:
        return []
    found: list[tuple[ProgramFormat, str]] = []
    for impl in host.hook_calls("tessera_program_formats"):
        try:
            got = impl() or []
        except TesseraError:
            raise
        except Exception as exc:
            raise PluginError(f"tessera_program_formats raised {type(exc).__name__}: {exc}",
                              plugin=impl.plugin_name) from exc
        for fmt in got:
            if not isinstance(fmt, ProgramFormat):
                raise PluginError(f"tessera_program_formats returned {type(fmt).__name__}, not a "
                                  "tessera.loaders.ProgramFormat", plugin=impl.plugin_name)
            found.append((fmt, impl.plugin_name))
    return found


def claiming(host: Any, path: str, head: bytes) -> tuple[ProgramFormat, str] | None:
    """The first plugin format that claims ``path``, with its plugin's name, or None."""
    for fmt, plugin in plugin_formats(host):
        try:
            if fmt.claims(path, head[:4096]):
                return fmt, plugin
        except TesseraError:
            raise
        except Exception as exc:
            raise PluginError(f"program format {fmt.name}: claims() raised {type(exc).__name__}: {exc}",
                              plugin=plugin) from exc
    return None


def call_format(fmt: ProgramFormat, plugin: str, what: str, *args: Any) -> Any:
    """``fmt.<what>(*args)``; a plugin's own bug is a PluginError naming it, user errors pass."""
    try:
        return getattr(fmt, what)(*args)
    except TesseraError:
        raise
    except Exception as exc:
        raise PluginError(f"program format {fmt.name}: {what}() raised {type(exc).__name__}: {exc}",
                          plugin=plugin) from exc
