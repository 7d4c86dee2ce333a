"""Checks of an architecture's description and encoding table: no program runs here."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tessera.control import Trap
from tessera.errors import DecodeError, TesseraError
from tessera.isa import ILLEGAL, Decoder, Disassembler, Encoder, Instruction, SemanticRef
from tessera.machine import Machine
from tessera_conformance.strategies import fixed, random_words, row_operands

BATCH = 500


def _fail(message: str) -> None:
    pytest.fail(message, pytrace=False)


def _tools(suite, arch):
    key = ("isa-tools", arch.name)
    if key not in suite.cache:
        dec = Decoder(arch)
        suite.cache[key] = (Encoder(arch), dec, Disassembler(arch, dec), arch.assembler_class()(arch))
    return suite.cache[key]


def _unresolved(arch):
    """``mnemonic: error`` for each row (or declared variant) whose registry ref resolves to nothing."""
    out = []
    for enc in arch.encodings:
        for label, fn in (("", enc.semantics), *((f" variant {n}", f) for n, f in enc.variants)):
            try:
                if isinstance(fn, SemanticRef):
                    fn.resolve()
            except TesseraError as exc:
                out.append(f"{enc.mnemonic}{label}: {exc}")
    return out


def test_architecture(arch_target, conformance_suite):
    """The description builds a decoder and a machine; rows have semantics; state is JSON."""
    arch = arch_target.arch
    problems = []
    try:
        Decoder(arch, check_overlaps=True)
    except TesseraError as exc:
        problems.append(f"the encoding table does not build a decoder: {exc}")
    missing = sorted({e.mnemonic for e in arch.encodings if not callable(e.semantics)})
    if missing:
        problems.append(f"rows without a semantic function (executing them is a configuration "
                        f"error): {', '.join(missing)}")
    unbound = _unresolved(arch)
    if unbound:
        problems.append(f"rows naming semantic functions nobody registered (executing them is a "
                        f"configuration error): {'; '.join(unbound[:5])}"
                        + (f" and {len(unbound) - 5} more" if len(unbound) > 5 else ""))
    if not arch.encodings:
        problems.append("the encoding table is empty")
    try:
        machine = Machine(arch, host=conformance_suite.host_for(arch_target.subject.name))
    except TesseraError as exc:
        _fail("; ".join([*problems, f"Machine({arch.name}) with the default configuration fails: {exc}"]))
    if not machine.cpus:
        problems.append("the default board has no CPU agent")
    try:
        machine.space.fetch(arch.reset_pc, arch.word_bytes)
    except TesseraError as exc:
        problems.append(f"the reset PC {arch.reset_pc:#x} cannot be fetched: {exc}")
    try:
        json.dumps(machine.state())
    except (TypeError, ValueError) as exc:
        problems.append(f"machine.state() is not JSON data: {exc}")
    names = [ex.name for ex in arch.examples]
    if len(names) != len(set(names)):
        problems.append(f"example names repeat: {names}")
    if problems:
        _fail(f"{arch.name}: " + "; ".join(problems))


def test_round_trip(row_target, conformance_suite):
    """encode -> decode -> disassemble -> assemble gives the same word, for drawn operand values."""
    arch, enc = row_target.arch, row_target.payload
    encoder, decoder, dis, asm = _tools(conformance_suite, arch)

    @fixed(conformance_suite.examples)
    @given(case=row_operands(arch, enc))
    def round_trip(case):
        address, ops = case
        word = encoder.encode(enc, ops)
        ins = decoder.decode(word, address)
        assert ins.encoding is not ILLEGAL, f"{enc.mnemonic} {ops}: word {word:#x} does not decode"
        assert word & ins.encoding.mask == ins.encoding.match
        again = encoder.encode(ins.encoding, ins.operands)
        assert again == word, (f"{enc.mnemonic} {ops}: {word:#x} decodes as {ins.mnemonic} "
                               f"{ins.operands}, which encodes to {again:#x}")
        text = dis.text(ins)
        try:
            program = asm.assemble(text, base=address)
        except TesseraError as exc:
            raise AssertionError(f"{text!r} (word {word:#x} at {address:#x}) does not assemble: {exc}") from None
        want = ((address, encoder.to_bytes(word)),)
        assert program.segments == want, (f"{text!r} at {address:#x} assembles to "
                                          f"{[(hex(a), d.hex()) for a, d in program.segments]}, "
                                          f"not word {word:#x}")

    round_trip()


def _decode_all(arch, words, decoder, dis, hook_decode):
    """Decode each word as the engine would; return a problem description or None."""
    address = arch.reset_pc
    size = arch.word_bytes
    counts = {"instruction": 0, "illegal": 0, "decode-error": 0}
    for i, word in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else None
        try:
            ins = hook_decode(word, address) if hook_decode is not None else None
            if ins is None:
                ins = decoder.decode(word, address)
        except DecodeError:
            if arch.illegal is not None:
                return f"word {word:#x}: DecodeError although {arch.name} has an illegal-instruction trap"
            counts["decode-error"] += 1
            continue
        except Exception as exc:  # noqa: BLE001 - anything else is the failure we look for
            return f"decoding word {word:#x} raised {type(exc).__name__}: {exc}"
        if not isinstance(ins, Instruction):
            return f"decoding word {word:#x} gave {ins!r}, not an Instruction"
        if ins.encoding is ILLEGAL:
            if not isinstance(getattr(ins, "trap", None), Trap):
                return f"word {word:#x}: the illegal form carries no Trap"
            counts["illegal"] += 1
        else:
            counts["instruction"] += 1
        try:
            dis.text(ins)
            if arch.refine is not None:
                arch.refine(ins, lambda a, nxt=nxt, base=address: nxt if a == base + size else None)
        except TesseraError:
            pass  # a defined error (e.g. a refine that finds an undecodable postfix)
        except Exception as exc:  # noqa: BLE001 - anything else is the failure we look for
            return (f"word {word:#x} ({ins.mnemonic}): disassembling or refining raised "
                    f"{type(exc).__name__}: {exc}")
        if not isinstance(ins.next, int) or not isinstance(ins.span, int) or ins.span < size:
            return f"word {word:#x} ({ins.mnemonic}): bad next/span after refine ({ins.next!r}, {ins.span!r})"
    return counts


def test_random_words(arch_target, conformance_suite):
    """Random words decode to an instruction, the illegal form or DecodeError, and nothing else."""
    arch, subject = arch_target.arch, arch_target.subject
    suite = conformance_suite
    _encoder, decoder, dis, _asm = _tools(suite, arch)
    hook_decode = None
    if "tessera_decode" in subject.hooks:  # the plugin's own decode hook goes first, as in the engine
        host = suite.host_for(subject.name)
        machine = Machine(arch, host=host)

        def hook_decode(word, address):
            got = host.first("tessera_decode", machine=machine, arch=arch, word=word, address=address)
            return got[1] if got is not None else None

    budget = suite.budget
    done = {"words": 0, "instruction": 0, "illegal": 0, "decode-error": 0}
    batches = -(-budget // BATCH)

    def check(rnd):
        words = random_words(arch, rnd, BATCH)
        got = _decode_all(arch, words, decoder, dis, hook_decode)
        assert not isinstance(got, str), got
        done["words"] += len(words)
        for k, v in got.items():
            done[k] += v

    fixed(batches)(given(rnd=st.randoms(use_true_random=False))(check))()
    seed = 0
    while done["words"] < budget:  # hypothesis may stop early; finish the budget with fixed seeds
        check(random.Random(f"{arch.name}:{seed}"))
        seed += 1
    print(f"{arch.name}: {done['words']} words: {done['instruction']} instructions, "
          f"{done['illegal']} illegal, {done['decode-error']} decode errors")
