"""The error hierarchy: distinct exit codes, one-line messages with context."""

from __future__ import annotations

import importlib

import pytest

from tessera import errors
from tessera.errors import (
    INTERNAL_ERROR_EXIT,
    INTERRUPTED_EXIT,
    Deadlock,
    MemoryFault,
    TesseraError,
    all_error_classes,
)


def test_every_error_class_has_its_own_exit_code():
    # import the modules that define further subclasses; the answer must not change
    before = all_error_classes()
    for mod in ("tessera.isa.asm", "tessera.isa.expr", "tessera.loaders", "tessera.cli.main"):
        try:
            importlib.import_module(mod)
        except ImportError:  # not every checkout has every module yet
            pass
    classes = all_error_classes()
    assert classes == before
    codes = [c.exit_code for c in classes]
    assert len(codes) == len(set(codes)), {c.__name__: c.exit_code for c in classes}
    assert INTERNAL_ERROR_EXIT not in codes and INTERRUPTED_EXIT not in codes
    assert all(0 < code < 126 for code in codes)


def test_all_error_classes_lists_the_whole_hierarchy():
    classes = set(all_error_classes())
    defined = {obj for obj in vars(errors).values()
               if isinstance(obj, type) and issubclass(obj, TesseraError)}
    assert classes == defined
    assert all(issubclass(c, Exception) for c in classes)
    assert len({c.kind for c in classes}) == len(classes)


def test_memory_fault_message_is_one_line_with_context():
    err = MemoryFault("write to read-only memory 'rom'", address=0x20010, access="write", size=4,
                      agent="core0", pc=0x8)
    text = str(err)
    assert text == ("memory fault: write to read-only memory 'rom' "
                    "(agent core0, pc 0x00000008, address 0x00020010)")
    assert "\n" not in text
    assert err.context() == {"address": 0x20010, "agent": "core0", "pc": 0x8}
    assert err.access == "write" and err.size == 4


def test_with_context_fills_only_missing_fields():
    err = MemoryFault("x", address=0x10, pc=0x4)
    assert err.with_context(agent="core1", pc=0x99, plugin=None) is err
    assert (err.agent, err.pc, err.plugin) == ("core1", 0x4, None)
    assert str(err) == "memory fault: x (agent core1, pc 0x00000004, address 0x00000010)"


def test_address_equal_to_pc_is_not_repeated():
    assert str(MemoryFault("fetch", address=0x40, pc=0x40)) == "memory fault: fetch (pc 0x00000040)"


def test_plain_error_and_deadlock_text():
    assert str(TesseraError("boom")) == "error: boom"
    d = Deadlock({"core0": "semaphore sem0 to be posted", "core1": "barrier bar (1 of 2 arrived)"})
    assert str(d) == ("deadlock: every agent is waiting: core0 waits for semaphore sem0 to be posted; "
                      "core1 waits for barrier bar (1 of 2 arrived)")
    assert d.waits["core1"].startswith("barrier")


@pytest.mark.parametrize("cls", all_error_classes())
def test_every_class_renders_one_line(cls):
    if cls is Deadlock:
        err = cls({"a": "something failed"}, agent="a", pc=1)
    else:
        err = cls("something failed", agent="a", pc=1, word=0xFF, plugin="p")
    text = str(err)
    assert "\n" not in text
    assert "something failed" in text and cls.kind in text
