"""What a kernel build needs to know per chip: folders, defines, linker script, L1 layout.

The L1 addresses are the test harness's conventions (tt-llk ``tests/python_tests/
helpers``, ``tests/helpers/ld``): the runtime arguments at 0x20000 that ``trisc.cpp``
copies into each TRISC's ``run_kernel``, the operand buffers the harness lays out from
0x21000, the three TRISC mailboxes and BRISC's command slots at 0x1FFB8, and (Wormhole
only) the table at the end of L1 from which BRISC takes the TRISCs' start addresses.
"""

from __future__ import annotations

from dataclasses import dataclass

from tessera.errors import ConfigError


@dataclass(frozen=True)
class Chip:
    name: str                  # the manifest's chip name
    define: str                # -D of the chip for tt-llk
    llk_root: str              # tt-llk's folder of the chip
    hw_includes: tuple[str, ...]   # -I folders under tt_metal
    memory_ld: str             # tests/helpers/ld/memory.<...>.ld
    l1_bytes: int
    #: BRISC command that starts the TRISCs (Wormhole's also makes BRISC copy the start table)
    start_command: int
    #: L1 words the host fills with the TRISCs' start addresses (Wormhole), or None
    trisc_start_table: int | None


#: the runtime arguments block (``RuntimeParams``, copied by trisc.cpp before run_kernel)
RUNTIME_ARGS = 0x20000
RUNTIME_ARGS_BYTES = 0x400
#: the first operand buffer (the harness's StimuliConfig.STIMULI_L1_ADDRESS_PERF)
BUFFERS_BASE = 0x21000
#: TRISC0/1/2 mailboxes, then BRISC's two command slots, its counter and two echo words
MAILBOXES = 0x1FFB8
BRISC_COMMAND = MAILBOXES + 12
BRISC_COUNTER = MAILBOXES + 20
#: what BRISC publishes in its counter once it polls for commands
BRISC_READY = 0xB001CAFE
#: what a TRISC writes to its mailbox when run_kernel has returned (ckernel::KERNEL_COMPLETE)
KERNEL_COMPLETE = 0xFF

BLACKHOLE = Chip(
    name="blackhole", define="ARCH_BLACKHOLE", llk_root="tt_llk_blackhole",
    hw_includes=("hw/inc/internal/tt-1xx/blackhole", "hw/ckernels/blackhole/metal/llk_api",
                 "hw/ckernels/blackhole/metal/llk_api/llk_sfpu"),
    memory_ld="memory.blackhole.ld", l1_bytes=1536 * 1024, start_command=1, trisc_start_table=None)
WORMHOLE_B0 = Chip(
    name="wormhole_b0", define="ARCH_WORMHOLE", llk_root="tt_llk_wormhole_b0",
    hw_includes=("hw/inc/internal/tt-1xx/wormhole", "hw/inc/internal/tt-1xx/wormhole/wormhole_b0_defines",
                 "hw/ckernels/wormhole_b0/metal/llk_api", "hw/ckernels/wormhole_b0/metal/llk_api/llk_sfpu"),
    memory_ld="memory.wormhole.ld", l1_bytes=1464 * 1024, start_command=3, trisc_start_table=0x16DFF0)

CHIPS = {"blackhole": BLACKHOLE, "bh": BLACKHOLE, "wormhole_b0": WORMHOLE_B0, "wormhole": WORMHOLE_B0,
         "wh": WORMHOLE_B0}


def chip(name: str) -> Chip:
    try:
        return CHIPS[name.lower()]
    except KeyError:
        raise ConfigError(f"unknown chip {name!r}: use blackhole or wormhole_b0") from None
