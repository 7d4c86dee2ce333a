# 32x32x32 matmul on the whole Tensix coprocessor (Wormhole B0, direct mode): the
# Wormhole version of matmul.s — C = A @ B for BF16 tiles A and B, accumulated in an
# FP32 Dest at full fidelity (HiFi4) and packed to L1 as FP32.  Besides the differences
# datacopy_wh.s lists: Wormhole's AddrMod field has two bits, so, as in tt-llk's
# Wormhole matmul, ADDR_MOD_3 sets the bias bit that makes the next instruction's
# ADDR_MOD 0 or 1 select set 4 or 5; and Wormhole's RDCFG blocks its thread until the
# GPR is written, so ADDDMAREG may follow it at once.
#
# L1 layout (byte offsets; the same in datacopy_wh.s and eltwise_add_wh.s):
#   0x10000  input tile A (the left operand, in0): 32x32 BF16 in tile order (4 faces of
#            16x16, each row-major: face 0 = rows 0-15 x cols 0-15, face 1 = rows 0-15 x
#            cols 16-31, face 2, face 3), 2048 bytes
#   0x11000  input tile B (the right operand, in1): the same layout, 2048 bytes
#   0x12000  output tile C: the same layout, 32x32 FP32 (4096 bytes) — or BF16 (2048
#            bytes) with PACK_OUT = BF16 below
#
#   tessera run --arch tensix-wh matmul_wh.s --l1 0x10000:bf16=a.npy --l1 0x11000:bf16=b.npy \
#       --l1-out 0x12000:32x32:fp32=c.npy
#
# (tile order: a 32x32 matrix m is m.reshape(2,16,2,16).transpose(0,2,1,3).reshape(32,32),
# and c.reshape(2,2,16,16).transpose(0,2,1,3).reshape(32,32) is the matrix C.)
#
# The threads follow tt-llk's matmul (llk_unpack_AB_matmul, llk_math_matmul, llk_pack)
# for one tile (ct_dim = rt_dim = kt_dim = 1), with the configuration written by the
# kernel itself:
#   T0 unpack: the whole of A into SrcB (UNPACR, 1024 datums), then a template-0 MOP
#              whose one iteration replays six recorded words: the whole of B into SrcA
#              and the bump of unpacker 0's L1 address to the next tile (RDCFG,
#              ADDDMAREG, WRCFG); each UNPACR hands its bank to the matrix unit;
#   T1 math:   records sixteen MVMULs in the replay buffer (each: 8 Dest rows += 8 SrcB
#              rows x a 16x16 face of SrcA, walking the faces with ADDR_MOD 0/1/2/3/4 and
#              ending with ADDR_MOD_5, which rewinds the RWCs and moves to the next
#              fidelity phase); waits for a free Dest half, then a template-1 MOP
#              replays them once per fidelity phase (4 x 16 MVMULs) and gives SrcA back
#              (SETRWC CLR_A); SETRWC CLR_B gives SrcB back; SEMPOST MATH_PACK;
#   T2 pack:   as in datacopy_wh.s, for 32-bit Dest data.
#
# Results: with integer-valued inputs whose products and sums are exact in FP32, C equals
# numpy's A @ B exactly; for other values each MVMUL rounds its 16-term dot product to
# FP32 once and Dest adds the two halves of k (and the phases) in FP32, so C differs from
# a float64 product by a few FP32 ulps of sum|a||b|.

# ---- Wormhole B0 configuration register indices (cfg_defines.h *_ADDR32)
.equ ALU_FORMAT_SPEC_REG0_SrcA,      1     # SrcA [20:17], SrcB [24:21], Dstacc [28:25], Fp32 [29]
.equ PCK0_ADDR_CTRL_XY_REG_0,        8     # Xstride [15:0], Ystride [31:16] (bytes)
.equ PCK0_ADDR_CTRL_ZW_REG_0,        9     # Zstride [15:0], Wstride [31:16]
.equ PCK_DEST_RD_CTRL,               14    # Read_32b_data [0]
.equ PCK_EDGE_OFFSET_SEC0,           20    # mask [15:0]
.equ UNP0_ADD_DEST_ADDR_CNTR,        41    # add_dest_addr_cntr [8]
.equ THCON_SEC0_REG0_TileDescriptor, 52    # four registers
.equ THCON_SEC0_REG1_Row_start,      56    # packer: +0 sizes, +1 L1_Dest_addr, +2 formats
.equ THCON_SEC0_REG2_Out_data_format, 60   # unpacker 0: +0 formats, +1 per-context flags
.equ THCON_SEC0_REG3_Base_address,   64
.equ THCON_SEC0_REG3_Base_cntx1_address, 65
.equ THCON_SEC0_REG5_Dest_cntx0,     72    # +0 Dest_cntx0/1, +2 Tile_x_dim_cntx0/1
.equ THCON_SEC1_REG0_TileDescriptor, 92    # unpacker 1 (SrcB)
.equ THCON_SEC1_REG2_Out_data_format, 100
.equ THCON_SEC1_REG3_Base_address,   104
.equ DEST_TARGET_REG_CFG_PACK_SEC0,  152
# ---- thread configuration (SETC16) indices
.equ DEST_TARGET_REG_CFG_MATH_Offset, 1
.equ SRCA_SET_Base,                  3     # [1:0] Base, [2] SetOvrdWithAddr
.equ ADDR_MOD_AB_SEC0,               7     # + 2n: SrcAIncr [5:0], CR [6], Clear [7]; SrcB [15:8]
.equ ADDR_MOD_DST_SEC0,              23    # + n: DestIncr [9:0], CR [10], Clear [11], FidelityIncr [14:13]
.equ ADDR_MOD_BIAS_SEC0,             48    # + n: BiasIncr [3:0] (toggles the bias bit)
.equ ADDR_MOD_PACK_SEC0,             31    # + n: YsrcIncr [3:0] ... ZsrcIncr [12]
# ---- this kernel
.equ IN_A,  0x10000
.equ IN_B,  0x11000
.equ OUT,   0x12000
.equ FP32,  0                              # data format codes
.equ BF16,  5
.equ PACK_OUT, FP32                        # the output format: FP32, or BF16 (rounded to nearest,
                                           # ties away from zero)
.equ PACK_DATUM, 4 >> (PACK_OUT & 3)       # its bytes per datum (FP32 4, BF16 2: the packer's strides)
.equ MATH_PACK, 2                          # semaphore mask: semaphore 1 (ckernel::semaphore::MATH_PACK)
.equ TILE_SIZE, 2048 / 16                  # a BF16 tile in 16-byte units

unpack:
    SETADCXY 0b011, 0, 0, 0, 0, 0b1111     # unpacker 0 and 1: X = Y = 0
    SETADCZW 0b011, 0, 0, 0, 0, 0b1111     # Z = W = 0
    RMWCIB2 0xFE, (BF16 << 1) | (BF16 << 5 & 0xE0), ALU_FORMAT_SPEC_REG0_SrcA   # SrcA, SrcB = BF16
    RMWCIB3 0x01, BF16 >> 3, ALU_FORMAT_SPEC_REG0_SrcA
    # tile descriptor (both unpackers): BF16, uncompressed, X = 256 datums, Y = 1, Z = 4
    SETDMAREG 0, 0x0015, 0, 2*4            # GPR4 = 0x01000015
    SETDMAREG 0, 0x0100, 0, 2*4+1
    SETDMAREG 0, 0x0001, 0, 2*5            # GPR5 = 0x00040001
    SETDMAREG 0, 0x0004, 0, 2*5+1
    SETDMAREG 0, 0, 0, 2*6                 # GPR6 = GPR7 = 0
    SETDMAREG 0, 0, 0, 2*6+1
    SETDMAREG 0, 0, 0, 2*7
    SETDMAREG 0, 0, 0, 2*7+1
    WRCFG 4, 1, THCON_SEC0_REG0_TileDescriptor
    WRCFG 4, 1, THCON_SEC1_REG0_TileDescriptor
    # output format BF16; every context uncompressed (0x000F000F)
    SETDMAREG 0, BF16, 0, 2*8
    SETDMAREG 0, 0, 0, 2*8+1
    SETDMAREG 0, 0x000F, 0, 2*9
    SETDMAREG 0, 0x000F, 0, 2*9+1
    WRCFG 8, 1, THCON_SEC0_REG2_Out_data_format        # GPR10, GPR11 are still 0
    WRCFG 8, 1, THCON_SEC1_REG2_Out_data_format
    # L1 addresses in 16-byte units, minus one for the tile header: B -> SrcA, A -> SrcB
    SETDMAREG (IN_B / 16 - 1) >> 14, (IN_B / 16 - 1) & 0x3FFF, 0, 2*12
    SETDMAREG 0, 0, 0, 2*12+1
    WRCFG 12, 0, THCON_SEC0_REG3_Base_address
    WRCFG 12, 0, THCON_SEC0_REG3_Base_cntx1_address
    SETDMAREG (IN_A / 16 - 1) >> 14, (IN_A / 16 - 1) & 0x3FFF, 0, 2*12
    WRCFG 12, 0, THCON_SEC1_REG3_Base_address
    # context 0 writes SrcA from output datum 64 (SrcA row 0)
    SETDMAREG 0, 64, 0, 2*16
    SETDMAREG 0, 64, 0, 2*16+1
    SETDMAREG 0, 0, 0, 2*17
    SETDMAREG 0, 0, 0, 2*17+1
    SETDMAREG 0, 256, 0, 2*18
    SETDMAREG 0, 256, 0, 2*18+1
    SETDMAREG 0, 0, 0, 2*19
    SETDMAREG 0, 0, 0, 2*19+1
    WRCFG 16, 1, THCON_SEC0_REG5_Dest_cntx0
    RMWCIB1 0x01, 0x01, UNP0_ADD_DEST_ADDR_CNTR        # Dest_cntx address + the ch1 counter
    SETC16 SRCA_SET_Base, 0x4              # SetOvrdWithAddr: SrcA rows from the address alone
    SETADCXX 0b011, 1023, 0                # both unpackers read a whole tile: datums 0..1023
    SETDMAREG 0, TILE_SIZE, 0, 2*20        # GPR20 = the tile size (p_gpr_unpack::TILE_SIZE_A)
    SETDMAREG 0, 0, 0, 2*20+1
    # record the two unpack sequences (unpacker 0 context 0, context 1) in replay entries 0..11
    REPLAY 0, 12, 0, 1
    UNPACR 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1   # B -> SrcA (64 rows), SetDatValid
    RDCFG 21, THCON_SEC0_REG3_Base_address         # next tile's address: Base += TILE_SIZE
    ADDDMAREG 0, 21, 21, 20
    STALLWAIT 0x80, 0x1                    # configuration writes wait for the scalar unit
    WRCFG 21, 0, THCON_SEC0_REG3_Base_address
    NOP                                    # nothing may consume a WRCFG in the next cycle
    UNPACR 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1
    RDCFG 21, THCON_SEC0_REG3_Base_cntx1_address
    ADDDMAREG 0, 21, 21, 20
    STALLWAIT 0x80, 0x1
    WRCFG 21, 0, THCON_SEC0_REG3_Base_cntx1_address
    NOP
    STALLWAIT 0x8, 0x2000                  # block unpacking until config writes are done (TRISC_CFG)
    UNPACR 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1   # A -> SrcB (64 rows), SetDatValid
    MOP 0, 0, 0                            # one iteration, mask bit 0 clear: InsnA0 (context 0)
    end

unpack_mop:                                # MopCfg, template 0
    .word 0                                # (unused)
    .word 0                                # Flags: no A1..A3, no B
    NOP                                    # InsnB
    REPLAY 0, 6, 0, 0                      # InsnA0: replay entries 0..5
    NOP                                    # InsnA1
    NOP                                    # InsnA2
    NOP                                    # InsnA3
    REPLAY 6, 6, 0, 0                      # SkipA0: entries 6..11 (context 1)
    NOP                                    # SkipB

math:
    SETC16 ADDR_MOD_AB_SEC0 + 2*0, 8 << 8                      # ADDR_MOD_0: SrcB += 8
    SETC16 ADDR_MOD_DST_SEC0 + 0, 8                            #   Dst += 8
    SETC16 ADDR_MOD_AB_SEC0 + 2*1, 16 | 1 << 14                # ADDR_MOD_1: SrcA += 16, SrcB = its CR
    SETC16 ADDR_MOD_DST_SEC0 + 1, 8                            #   Dst += 8
    SETC16 ADDR_MOD_AB_SEC0 + 2*2, 1 << 6 | (32 | 1 << 6) << 8 # ADDR_MOD_2: SrcA = CR, SrcB CR += 32
    SETC16 ADDR_MOD_DST_SEC0 + 2, 8                            #   Dst += 8
    SETC16 ADDR_MOD_AB_SEC0 + 2*3, 8 << 8                      # ADDR_MOD_3: ADDR_MOD_0 and set the bias bit
    SETC16 ADDR_MOD_DST_SEC0 + 3, 8
    SETC16 ADDR_MOD_BIAS_SEC0 + 3, 1
    SETC16 ADDR_MOD_AB_SEC0 + 2*4, 32 | 1 << 6 | (48 | 1 << 6) << 8   # ADDR_MOD_4 (0 with bias): SrcA CR += 32, SrcB CR += 48
    SETC16 ADDR_MOD_DST_SEC0 + 4, 1 << 10                      #   Dst = its CR, bias bit cleared
    SETC16 ADDR_MOD_BIAS_SEC0 + 4, 1
    SETC16 ADDR_MOD_AB_SEC0 + 2*5, 3 << 6 | 3 << 14            # ADDR_MOD_5 (1 with bias): clear SrcA, SrcB
    SETC16 ADDR_MOD_DST_SEC0 + 5, 3 << 10 | 1 << 13            #   clear Dst, fidelity phase += 1,
    SETC16 ADDR_MOD_BIAS_SEC0 + 5, 1                           #   bias bit cleared
    RMWCIB3 0xE0, 0x20, ALU_FORMAT_SPEC_REG0_SrcA              # FP32 Dest, no INT8 math
    SEMINIT 2, 0, MATH_PACK                # MATH_PACK: Max 2 (two Dest halves), Value 0
    SETC16 DEST_TARGET_REG_CFG_MATH_Offset, 0
    ZEROACC 7, 0, 0                        # Dest starts at zero (all, 32-bit; the packer clears it after use)
    SETRWC 0, 0, 0, 0, 0, 0b1111           # RWCs and fidelity phase to 0
    # the matmul of one tile, recorded in replay entries 16..31 (face by face: B0A0 = SrcB
    # face 0 x SrcA face 0; Dest faces 0..3 = C00, C01, C10, C11)
    REPLAY 16, 16, 0, 1
    MVMUL 0, 0, 0, 0                       # B0A0 rows 0-7   -> Dst 0-7
    MVMUL 0, 0, 1, 0                       # B0A0 rows 8-15  -> Dst 8-15;  SrcA -> A1
    MVMUL 0, 0, 0, 0                       # B0A1            -> Dst 16-23
    MVMUL 0, 0, 2, 0                       # B0A1            -> Dst 24-31; SrcA -> A0, SrcB -> B2
    MVMUL 0, 0, 0, 0                       # B2A0            -> Dst 32-39
    MVMUL 0, 0, 1, 0                       # B2A0            -> Dst 40-47
    MVMUL 0, 0, 3, 0                       # B2A1            -> Dst 48-55; bias bit set
    MVMUL 0, 0, 0, 0                       # B2A1 (ADDR_MOD_4) -> Dst 56-63; SrcA -> A2, SrcB -> B1, Dst -> 0
    MVMUL 0, 0, 0, 0                       # B1A2            -> Dst 0-7
    MVMUL 0, 0, 1, 0                       # B1A2            -> Dst 8-15
    MVMUL 0, 0, 0, 0                       # B1A3            -> Dst 16-23
    MVMUL 0, 0, 2, 0                       # B1A3            -> Dst 24-31; SrcA -> A2, SrcB -> B3
    MVMUL 0, 0, 0, 0                       # B3A2            -> Dst 32-39
    MVMUL 0, 0, 1, 0                       # B3A2            -> Dst 40-47
    MVMUL 0, 0, 3, 0                       # B3A3            -> Dst 48-55; bias bit set
    MVMUL 0, 0, 1, 0                       # B3A3 (ADDR_MOD_5) -> Dst 56-63; rewind, next phase
    SEMWAIT 0x142, MATH_PACK, 2            # a Dest half must be free (Value < Max)
    MOP 1, 0, 0                            # 4 phases x 16 MVMULs (math_mop below)
    SETRWC 2, 0, 0, 0, 0, 0b1111           # CLR_B: SrcB back to the unpackers; RWCs to 0
    STALLWAIT 0x2, 0x4080                  # SEMPOST after the matrix unit and SFPU are done
    SEMPOST MATH_PACK                      # Dest half ready for the packer
    end

math_mop:
    .word 1                                # OuterCount
    .word 4                                # InnerCount: HiFi4, one replay per fidelity phase
    NOP                                    # StartOp
    SETRWC 1, 0, 0, 0, 0, 0b1111           # EndOp0: CLR_A (SrcA back), RWCs and phase to 0
    NOP                                    # EndOp1
    REPLAY 16, 16, 0, 0                    # LoopOp: the sixteen MVMULs
    NOP                                    # LoopOp1
    REPLAY 16, 16, 0, 0                    # Loop0Last
    REPLAY 16, 16, 0, 0                    # Loop1Last

pack:
    # packer 0's configuration: sizes 0, L1 destination, uncompressed PACK_OUT (an FP32
    # Dest read as 32-bit data is rounded to PACK_OUT by the early conversion: Dstacc)
    SETDMAREG 0, 0, 0, 2*4
    SETDMAREG 0, 0, 0, 2*4+1
    SETDMAREG (OUT / 16 - 1) >> 14, (OUT / 16 - 1) & 0x3FFF, 0, 2*5
    SETDMAREG 0, 0, 0, 2*5+1
    SETDMAREG 0, 1 | PACK_OUT << 4 | PACK_OUT << 8, 0, 2*6   # Disable_zero_compress, Out, In
    SETDMAREG 0, 0, 0, 2*6+1
    SETDMAREG 0, 0, 0, 2*7
    SETDMAREG 0, 0, 0, 2*7+1
    WRCFG 4, 1, THCON_SEC0_REG1_Row_start
    SETDMAREG 0xFFFF >> 14, 0xFFFF & 0x3FFF, 0, 2*8     # edge mask: keep all 16 columns
    SETDMAREG 0, 0, 0, 2*8+1
    WRCFG 8, 0, PCK_EDGE_OFFSET_SEC0
    SETDMAREG 0, 1, 0, 2*9                             # read Dest as 32-bit data
    SETDMAREG 0, 0, 0, 2*9+1
    WRCFG 9, 0, PCK_DEST_RD_CTRL
    WRCFG 7, 0, DEST_TARGET_REG_CFG_PACK_SEC0          # Dest offset 0 (GPR7 = 0)
    RMWCIB3 0x1E, PACK_OUT << 1, ALU_FORMAT_SPEC_REG0_SrcA   # Dstacc: the packer's intermediate format
    # strides in bytes of PACK_OUT datums: a row of 16, a face of 256, a tile of 1024
    # (set_packer_strides; the packer divides the address by the datum size)
    SETDMAREG 0, 0, 0, 2*10
    SETDMAREG 0, 16 * PACK_DATUM, 0, 2*10+1
    SETDMAREG 0, 256 * PACK_DATUM, 0, 2*11
    SETDMAREG 0, 1024 * PACK_DATUM, 0, 2*11+1
    WRCFG 10, 0, PCK0_ADDR_CTRL_XY_REG_0
    WRCFG 11, 0, PCK0_ADDR_CTRL_ZW_REG_0
    SETC16 ADDR_MOD_PACK_SEC0 + 0, 1 << 12             # ADDR_MOD_0: Zsrc += 1 (next face)
    SETC16 ADDR_MOD_PACK_SEC0 + 1, 1 << 5 | 1 << 11 | 1 << 13   # ADDR_MOD_1: clear Ysrc, Ydst, Zsrc
    SETADCXY 0b100, 0, 0, 0, 0, 0b1011     # packer counters to 0
    SETADCZW 0b100, 0, 0, 0, 0, 0b1111
    SETADCXX 0b100, 255, 0                 # packer 0 reads 256 datums (a face) per PACR
    SEMWAIT 0x1, MATH_PACK, 1              # wait until math has finished a Dest half (Value > 0)
    MOP 1, 0, 0                            # the four faces (pack_mop below)
    SETADCZW 0b100, 0, 0, 0, 0, 0b0101     # Z counters to 0
    STALLWAIT 0x40, 0x78                   # wait for the packers before clearing Dest
    ZEROACC 6, 1, 0                        # clear Dest half 0 (32-bit mode)
    SEMGET MATH_PACK                       # give the half back to math
    end

pack_mop:
    .word 4                                # OuterCount: faces
    .word 1                                # InnerCount
    NOP                                    # StartOp
    NOP                                    # EndOp0
    NOP                                    # EndOp1
    PACR 0, 0, 1, 0, 0, 0, 0               # LoopOp: packer 0, a face, ADDR_MOD_0
    NOP                                    # LoopOp1
    PACR 1, 0, 1, 0, 0, 0, 1               # Loop0Last: ADDR_MOD_1, Last (closes the tile)
    PACR 0, 0, 1, 0, 0, 0, 0               # Loop1Last
