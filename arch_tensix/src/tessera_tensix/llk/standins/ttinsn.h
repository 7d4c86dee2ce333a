// Stand-in written for Tessera (not vendor code): `.ttinsn` without the SFPI assembler.
//
// Force-included (-include) before every TRISC translation unit.  A baby RISC-V core
// fetches a Tensix instruction as a 32-bit word whose low two bits are not 0b11: the
// instruction rotated left by two bits, which the core rotates back and pushes into
// its Tensix thread.  The SFPI assembler writes that word for `.ttinsn`; Debian's
// binutils does not know the directive, so TTI_INSN (an instruction known at compile
// time) emits the rotated word with `.word`, and TT_INSN (a run-time value) stores the
// instruction to the core's instruction-push window, as tt-llk does under SFPI.
#pragma once
#if defined(COMPILE_FOR_TRISC)
#include "ckernel_ops.h"
#undef TTI_INSN
#undef TT_INSN
#define TESSERA_TTINSN_WORD(op) ((((unsigned)(op)) << 2) | (((unsigned)(op)) >> 30))
#define TTI_INSN(op) ({ __asm__ __volatile__(".word %0" ::"n"(TESSERA_TTINSN_WORD(op))); })
#define TT_INSN(op)  void(::ckernel::instrn_buffer[0] = unsigned(op))
#endif
