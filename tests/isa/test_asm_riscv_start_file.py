"""The RISC-V startup file that docs/riscv.md documents assembles with Tessera's assembler.

``start.S`` is written for gcc (C preprocessor, GNU as directives, ``/* */`` comments,
numeric local labels).  After the preprocessor step, which this test does for its two
``#if``/``#define`` forms, Tessera's RISC-V assembler must read it as GNU as does, and
the result must run: ``_start`` calls ``main`` and exits with its return value.
"""

import re

import pytest

from tessera.isa.asm import assemble

startfile = pytest.importorskip("tessera_riscv.startfile")

MAIN = """
        .text
main:   mv      s1, ra          # write() leaves s1 alone
        la      a1, msg
        li      a2, 3
        li      a0, 1
        call    write           /* the startup file's wrapper */
        li      a0, 3
        mv      ra, s1
        ret
msg:    .ascii  "hi\\n"
__global_pointer$ = .           # the linker defines it; any address will do here
"""


def preprocess(text: str, xlen: int) -> str:
    """The two preprocessor forms start.S uses: ``#if __riscv_xlen == N``/``#else``/``#endif``
    and object-like ``#define``; line numbers are kept."""
    out, keep, macros = [], [True], {}
    for line in text.split("\n"):
        directive = line.strip()
        if directive.startswith("#if"):
            m = re.fullmatch(r"#if\s+__riscv_xlen\s*==\s*(\d+)", directive)
            assert m, directive
            keep.append(keep[-1] and int(m.group(1)) == xlen)
        elif directive.startswith("#else"):
            keep[-1] = not keep[-1] and keep[-2]
        elif directive.startswith("#endif"):
            keep.pop()
        elif keep[-1] and directive.startswith("#define"):
            _, name, value = directive.split(None, 2)
            macros[name] = value
        elif keep[-1] and not directive.startswith("#"):
            for name, value in macros.items():
                line = re.sub(rf"\b{name}\b", value, line)
            out.append(line)
            continue
        out.append("")
    return "\n".join(out)


@pytest.mark.parametrize("arch_name", ["rv32im", "rv64im"])
def test_start_file_assembles_and_runs(arch_name):
    from tessera.machine import Machine
    from tessera.plugins import PluginHost

    arch = PluginHost().architecture(arch_name)
    source = preprocess(startfile.start_file().read_text(), arch.register_file_map["x"].width)
    assert re.search(r"^1:", source, re.MULTILINE) and "/*" in source  # what is exercised
    program = assemble(arch, source + MAIN, file="start.S", base=0x10000)
    assert {"_start", "write", "exit", "memcpy", "memmove", "memset", "memcmp"} <= set(
        program.symbols)
    assert program.entry == program.symbols["_start"]
    machine = Machine(arch, config={"ram": 1 << 20, "echo": False})
    for address, blob in program.segments:
        machine.space.write_bytes(address, blob)
    machine.set_entry(program.entry)
    result = machine.run(max_steps=10_000)
    assert result.exit_code == 3
    assert bytes(machine.riscv_io.stdout) == b"hi\n"
