// Stand-in written for Tessera (not vendor code): the SFPI compiler's sfpi.h cannot be
// downloaded here.  tt-llk's non-SFPU headers include it for instruction-modifier
// constants only; those tt-llk names are defined below, with the values the Tensix ISA
// documentation gives for each instruction's modifier bits (the same on Wormhole B0 and
// Blackhole).  The SFPI vector types (vFloat, vInt, dst_reg ...) are deliberately
// absent: a kernel that uses them needs the SFPI compiler, and `tessera tensix build`
// reports it as such.
#pragma once

namespace sfpi
{
// SFPLOADI: how the 16-bit immediate is placed in the LReg
constexpr unsigned SFPLOADI_MOD0_FLOATB = 0;
constexpr unsigned SFPLOADI_MOD0_FLOATA = 1;
constexpr unsigned SFPLOADI_MOD0_USHORT = 2;
constexpr unsigned SFPLOADI_MOD0_SHORT  = 4;
constexpr unsigned SFPLOADI_MOD0_UPPER  = 8;
constexpr unsigned SFPLOADI_MOD0_LOWER  = 10;
// SFPIADD: second operand, and how the lane flags are set
constexpr unsigned SFPIADD_MOD1_ARG_LREG_DST        = 0;
constexpr unsigned SFPIADD_MOD1_ARG_IMM             = 1;
constexpr unsigned SFPIADD_MOD1_ARG_2SCOMP_LREG_DST = 2;
constexpr unsigned SFPIADD_MOD1_CC_LT0              = 0;
constexpr unsigned SFPIADD_MOD1_CC_NONE             = 4;
constexpr unsigned SFPIADD_MOD1_CC_GTE0             = 8;
// SFPSETCC: the condition
constexpr unsigned SFPSETCC_MOD1_LREG_LT0  = 0;
constexpr unsigned SFPSETCC_MOD1_LREG_NE0  = 2;
constexpr unsigned SFPSETCC_MOD1_LREG_GTE0 = 4;
constexpr unsigned SFPSETCC_MOD1_LREG_EQ0  = 6;
// SFPEXEXP / SFPEXMAN
constexpr unsigned SFPEXEXP_MOD1_SET_CC_SGN_EXP  = 2;
constexpr unsigned SFPEXEXP_MOD1_SET_CC_COMP_EXP = 8;
constexpr unsigned SFPEXMAN_MOD1_PAD9            = 1;
// SFPMUL24: which half of the 48-bit product (LOWER is the upper bit clear)
constexpr unsigned SFPMUL24_MOD1_LOWER = 0;
constexpr unsigned SFPMUL24_MOD1_UPPER = 1;
// SFPSHFT2
constexpr unsigned SFPSHFT2_MOD1_SUBVEC_SHFLROR1 = 3;
constexpr unsigned SFPSHFT2_MOD1_SUBVEC_SHFLSHR1 = 4;
constexpr unsigned SFPSHFT2_MOD1_SHFT_LREG       = 5;
// SFPSTOCHRND, SFPSWAP, SFPARECIP
constexpr unsigned SFPSTOCHRND_MOD1_FP32_TO_FP16B = 1;
constexpr unsigned SFPSWAP_MOD1_VEC_MIN_MAX       = 1;
constexpr unsigned SFPARECIP_MOD1_RECIP           = 0;
} // namespace sfpi
