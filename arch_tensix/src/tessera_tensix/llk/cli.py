"""``tessera tensix build`` and ``tessera tensix kernels``: the tt-llk kernel build on the command line.

The command group is added to ``tessera`` by the plugin's ``tessera_cli_commands``
hook.  Every failure the user can cause or fix (no compiler, no network, a kernel
that needs SFPI, a bad option) is a one-line ConfigError; ``--debug`` shows more.
"""

from __future__ import annotations

from pathlib import Path

import click

from tessera.errors import ConfigError
from tessera_tensix.llk.check_cli import check_command
from tessera_tensix.llk.options import _FIDELITIES, _dims


@click.group("tensix")
def tensix() -> None:
    """Tensix tools: build tt-llk test kernels (docs/tensix-llk.md)."""


@tensix.command("build")
@click.argument("kernel")
@click.option("--chip", default="blackhole", show_default=True,
              help="blackhole or wormhole_b0 (also bh, wh).")
@click.option("--format", "input_format", default="Float16_b", show_default=True,
              help="L1 format of the inputs (Float16_b, Float16, Float32, Bfp8_b, Int32, Int8 ...).")
@click.option("--out-format", "output_format", default=None, help="L1 format of the result (default: --format).")
@click.option("--format-b", "input_format_b", default=None, help="L1 format of input B (default: --format).")
@click.option("--tiles", default=1, show_default=True, type=click.IntRange(1, 256),
              help="Input tiles, in one tile-row (same as --dims 32x(32*N)).")
@click.option("--dims", default=None, callback=_dims, help="Input size ROWSxCOLUMNS in elements (multiples of 32).")
@click.option("--dest-acc/--no-dest-acc", "dest_acc", default=None,
              help="32-bit Dest (default: what the kernel's harness test uses).")
@click.option("--unpack-to-dest/--no-unpack-to-dest", "unpack_to_dest", default=None,
              help="Unpack straight into Dest (default: for 32-bit inputs with a 32-bit Dest).")
@click.option("--math-fidelity", type=click.Choice(_FIDELITIES), default=None, help="MATH_FIDELITY (default LoFi).")
@click.option("--op", default=None, help="The kernel's operation: add/sub/mul (eltwise), row-sum/col-max ... (reduce).")
@click.option("--param", "param_list", multiple=True, metavar="NAME=VALUE",
              help="Set a build-header parameter (repeatable): TILE_CNT=4, tilize_en=true, MATH_FIDELITY=HiFi4.")
@click.option("--force-chip", is_flag=True,
              help="Build even if tt-llk's own tests do not run KERNEL on --chip (they skip it there).")
@click.option("-o", "--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Directory for the ELFs and kernel.toml (created).")
@click.option("--offline", is_flag=True, help="Use only the cache: never download.")
@click.option("--jobs", type=click.IntRange(1, 64), default=None, help="Compiler runs at once (default: up to 4).")
def build_command(kernel: str, chip: str, input_format: str, output_format: str | None, input_format_b: str | None,
                  tiles: int, dims: tuple[int, int] | None, dest_acc: bool | None, unpack_to_dest: bool | None,
                  math_fidelity: str | None, op: str | None, param_list: tuple[str, ...], force_chip: bool, out: Path,
                  offline: bool, jobs: int | None) -> None:
    """Compile tt-llk's tests/sources/KERNEL.cpp, unchanged, into BRISC + TRISC0/1/2 ELFs and kernel.toml.

    The first build downloads the ttnn wheel (tt-llk inside, ~100 MB) and two Debian
    packages into the cache ($TESSERA_CACHE/llk or ~/.cache/tessera/llk).  Exit 64 when
    the build fails, 80 when tt-llk does not build or test KERNEL for --chip.
    """
    from tessera_tensix.llk.build import build, clean
    from tessera_tensix.llk.kernels import Options
    from tessera_tensix.llk.params import parse_assignment

    assigned: dict[str, object] = {}
    for text in param_list:
        name, value = parse_assignment(text)
        assigned[name] = value
    opts = Options(kernel=kernel, chip=chip, input_format=input_format, output_format=output_format,
                   input_format_b=input_format_b, dest_acc=dest_acc, unpack_to_dest=unpack_to_dest, dims=dims,
                   tiles=tiles, math_fidelity=math_fidelity, op=op, params=assigned, force_chip=force_chip)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"-o {out}: not a directory")
    clean(out)
    built = build(opts, out, download=not offline, jobs=jobs)
    spec = built.resolved.spec
    click.echo(f"built {spec.kernel} for {spec.chip} ({spec.formats.unpack_A_src} -> {spec.formats.pack_dst}, "
               f"{built.resolved.values['TILE_CNT']} tile(s)) in {out}: brisc.elf unpack.elf math.elf pack.elf "
               f"kernel.toml")


@tensix.command("fetch")
def fetch_command() -> None:
    """Fill the cache (ttnn wheel, picolibc/libstdc++ headers) and check the compiler, for offline builds."""
    from tessera_tensix.llk.build import prepare
    from tessera_tensix.llk.cache import cache_root

    tools, tree = prepare(download=True)
    click.echo(f"cache {cache_root()}: tt-llk {tree.llk}, sysroot {tree.sysroot.root}; compiler {tools.version}")


@tensix.command("kernels")
@click.option("--offline", is_flag=True, help="Use only the cache: never download.")
def kernels_command(offline: bool) -> None:
    """List tt-llk's test kernels (tests/sources); * marks those tessera knows by name."""
    from tessera_tensix.llk.build import kernels
    from tessera_tensix.llk.kernels import PROFILES

    for name in kernels(download=not offline):
        click.echo(f"{'*' if name in PROFILES else ' '} {name}")


tensix.add_command(check_command)
