"""The startup file for C programs (``start.S``, ``start.h``), shipped as package data.

A bare-metal C program linked with ``-nostdlib`` has no ``_start`` and no system-call
wrappers; ``data/start.S`` provides them (and the ``mem*`` functions gcc may call),
using the Linux-numbered system calls this plugin implements.  ``tessera
riscv-start`` prints its path so a compiler command line can name it::

    riscv64-unknown-elf-gcc -march=rv32im -mabi=ilp32 -ffreestanding -fno-builtin \\
        -nostdlib -O2 -o prog.elf prog.c "$(tessera riscv-start)"

``tessera riscv-start --dir`` prints the directory (for ``-I``, to include
``start.h``).  From Python: :func:`start_file`, :func:`data_dir`; from a shell
without the ``tessera`` command: ``python -m tessera_riscv.startfile``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from tessera.errors import ConfigError

START_FILE = "start.S"
HEADER_FILE = "start.h"


def data_dir() -> Path:
    """The installed directory holding ``start.S`` and ``start.h``."""
    path = Path(str(resources.files("tessera_riscv") / "data"))
    if not (path / START_FILE).is_file():  # e.g. a zipped install: no file a compiler can read
        raise ConfigError(f"tessera-riscv is installed without its data files ({path / START_FILE} "
                          "is not a file); reinstall it from a wheel or a checkout")
    return path


def start_file() -> Path:
    """The path of ``start.S``."""
    return data_dir() / START_FILE


def command() -> Any:
    """``tessera riscv-start``: print the path of ``start.S`` (``--dir``: its directory)."""
    import click

    @click.command("riscv-start")
    @click.option("--dir", "directory", is_flag=True,
                  help="Print the directory holding start.S and start.h (for -I).")
    def riscv_start(directory: bool) -> None:
        """Print the path of start.S, the startup file for bare-metal C programs.

        \b
        riscv64-unknown-elf-gcc -march=rv32im -mabi=ilp32 -ffreestanding -fno-builtin \\
            -nostdlib -O2 -o prog.elf prog.c "$(tessera riscv-start)"
        """
        click.echo(str(data_dir() if directory else start_file()))

    return riscv_start


if __name__ == "__main__":
    print(start_file())
