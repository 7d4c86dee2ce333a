// Stand-in written for Tessera (not vendor code): the replay-buffer helpers that the
// SFPI toolchain ships as lltt.h, which tt-llk includes but the ttnn wheel does not carry.
//
// REPLAY (opcode 0x04) either records the next `len` instructions of the thread into
// its replay buffer from `start` (load = 1; exec = 1 also executes them while
// recording) or replays `len` recorded instructions from `start`.  The helpers push the
// instruction through the core's instruction-push window (the linker's __instrn_buffer),
// which keeps program order with the `.word` Tensix instructions around them.
#pragma once
#include <cstdint>

extern volatile std::uint32_t __instrn_buffer[];

namespace lltt
{
enum ExecBool : bool
{
    NoExec = false,
    Exec   = true,
};

// The REPLAY instruction word (also used as data, e.g. in MOP programs).
constexpr std::uint32_t replay_insn(std::uint32_t start, std::uint32_t len, bool exec = false, bool load = false)
{
    return (0x04u << 24) | (start << 14) | (len << 4) | (static_cast<std::uint32_t>(exec) << 1) |
           static_cast<std::uint32_t>(load);
}

[[gnu::always_inline]] inline void push(std::uint32_t insn)
{
    __instrn_buffer[0] = insn;
}

// Replay `len` recorded instructions starting at `start`.
[[gnu::always_inline]] inline void replay(std::uint32_t start, std::uint32_t len)
{
    push(replay_insn(start, len));
}

// Record the next `len` instructions at `start` (and execute them too when E is Exec).
template <ExecBool E = NoExec>
[[gnu::always_inline]] inline void record(std::uint32_t start, std::uint32_t len)
{
    push(replay_insn(start, len, E, true));
}
} // namespace lltt
