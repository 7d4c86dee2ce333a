"""Helpers of the table tests (test_table_*.py): architectures, assembly, machines, the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tessera.isa import Decoder, Encoder
from tessera.machine import Machine
from tessera_tensix.arch import TENSIX_BH, TENSIX_WH
from tessera_tensix.isa import row_info, tables
from tessera_tensix.isa.asm import TensixAssembler, TensixDisassembler
from tessera_tensix.semantics import REGISTRY

#: shared/ beside the repository (in CI: beside the clone); tests that need it skip without it
SHARED = Path(__file__).resolve().parents[2].parent / "shared"
ARCHS = {"bh": TENSIX_BH, "wh": TENSIX_WH}


def shared(*parts: str) -> Path:
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is not available (shared/ reference data lives beside the repository)")
    return path


def decode_vectors() -> list[dict]:
    return json.loads(shared("reference", "decode-vectors", "bh_add1_sfpu_objdump_vectors.json")
                      .read_text(encoding="utf-8"))


_ASSEMBLERS: dict[str, TensixAssembler] = {}
_DISASSEMBLERS: dict[str, TensixDisassembler] = {}
_DECODERS: dict[str, Decoder] = {}


def words(text: str, arch=TENSIX_BH) -> list[int]:
    """Assemble ``text`` and return its 32-bit words."""
    asm = _ASSEMBLERS.get(arch.name)
    if asm is None:
        asm = _ASSEMBLERS[arch.name] = TensixAssembler(arch)
    _start, blob = asm.assemble(text).image()
    return [int.from_bytes(blob[i:i + 4], "little") for i in range(0, len(blob), 4)]


def word(text: str, arch=TENSIX_BH) -> int:
    (w,) = words(text, arch)
    return w


def dis(value: int, arch=TENSIX_BH) -> str:
    d = _DISASSEMBLERS.get(arch.name)
    if d is None:
        d = _DISASSEMBLERS[arch.name] = TensixDisassembler(arch)
    return d.word(value)


def strict_row(name: str, chip: str = "bh"):
    return tables(chip).encoding(name)


def encode(name: str, chip: str = "bh", **operands: int) -> int:
    """The word of vendor instruction ``name`` with the given fields (others 0)."""
    enc = strict_row(name, chip)
    info = row_info(enc)
    values = {f: 0 for f in enc.operand_names}
    values.update({f: d for f, d in info.extras})
    values.update(operands)
    return Encoder(ARCHS[chip]).encode(enc, values)


def decoder(chip: str = "bh") -> Decoder:
    d = _DECODERS.get(chip)
    if d is None:
        d = _DECODERS[chip] = Decoder(ARCHS[chip])
    return d


def has_semantics(*names: str) -> bool:
    return all(REGISTRY.lookup(n) is not None for n in names)


def need_semantics(*names: str) -> None:
    missing = [n for n in names if REGISTRY.lookup(n) is None]
    if missing:
        pytest.skip(f"semantics not registered yet: {', '.join(missing)}")


def machine(program: list[int] | str, chip: str = "bh", **config) -> Machine:
    """A direct-mode machine with ``program`` (words or assembly) at address 0."""
    arch = ARCHS[chip]
    m = Machine(arch, config=config)
    data = program if isinstance(program, list) else words(program, arch)
    m.space.write_bytes(0, b"".join(w.to_bytes(4, "little") for w in data))
    return m


def tessera(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run the ``tessera`` command with only the Tensix plugin loaded."""
    script = Path(sys.executable).parent / "tessera"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "tessera.cli.main"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_")}
    env["TESSERA_PLUGINS"] = "tensix"
    return subprocess.run(cmd + list(args), capture_output=True, text=True, env=env, timeout=120,
                          cwd=cwd)


def syntax_rows(chip: str = "bh") -> list[str]:
    """The rows of the syntax table in docs/tensix.md (direct-mode instructions, by opcode)."""
    from tessera_tensix.isa import ISSUE5

    t = tables(chip)
    fields = ARCHS[chip].field_map

    def rng(name: str) -> str:
        ((hi, lo),) = fields[name].bits
        return f"{hi}:{lo}" if hi != lo else f"{lo}"

    out = []
    for name, info in sorted(t.rows.items(), key=lambda kv: kv[1].opcode):
        if name not in ISSUE5:
            continue
        mnemonic = t.encoding(name).mnemonic
        operands = list(info.operands)
        for position, ghost, _display in info.ghosts:
            operands.insert(position, f"({ghost}=0)")
        shown = ",".join(operands)
        extras = " ".join(f"[,{n}={d}]" for n, d in info.extras)
        layout = " ".join(f"{n}[{rng(n)}]" for n in sorted(info.fields, key=lambda n: -fields[n].bits[0][0]))
        syntax = " ".join(x for x in (shown, extras) if x) or "—"
        out.append(f"| `{mnemonic}` | {info.opcode:#04x} | {syntax} | {layout or '—'} |")
    return out
