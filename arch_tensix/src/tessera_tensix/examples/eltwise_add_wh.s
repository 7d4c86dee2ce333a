# Eltwise add on the whole Tensix coprocessor (Wormhole B0, direct mode): the Wormhole
# version of eltwise_add.s (the differences are those datacopy_wh.s lists) — unpack two
# 32x32 BF16 tiles from L1 into SrcA and SrcB, ELWADD them into Dest, pack the sum to L1.
#
# L1 layout (byte offsets; the same in datacopy_wh.s and matmul_wh.s):
#   0x10000  input tile A: 32x32 BF16 in tile order (4 faces of 16x16, each row-major:
#            face 0 = rows 0-15 x cols 0-15, face 1 = rows 0-15 x cols 16-31, face 2,
#            face 3), 2048 bytes
#   0x11000  input tile B: the same layout, 2048 bytes
#   0x12000  output tile A + B: the same layout, 2048 bytes
#
#   tessera run --arch tensix-wh eltwise_add_wh.s --l1 0x10000:bf16=a.npy \
#       --l1 0x11000:bf16=b.npy --l1-out 0x12000:32x32:bf16=sum.npy
#
# Element-wise, so the tile order does not matter here: sum.npy is a + b, each sum
# rounded to FP32 and then to BF16 (nearest even), as the matrix unit does.
#
# The threads follow tt-llk's eltwise binary kernels (llk_unpack_AB, llk_math_eltwise_binary,
# llk_pack), with the configuration written by the kernel itself:
#   T0 unpack: a MOP over the four faces: UNPACR of face z of A into SrcA and of B into
#              SrcB, each handing its bank to the matrix unit (SetDatValid);
#   T1 math:   waits for a free Dest half, a MOP of two ELWADD (8 rows each) per face and
#              SETRWC CLR_AB giving both banks back, then SEMPOST MATH_PACK;
#   T2 pack:   as in datacopy_wh.s.

# ---- Wormhole B0 configuration register indices (cfg_defines.h *_ADDR32)
.equ ALU_FORMAT_SPEC_REG0_SrcA,      1     # SrcA [20:17], SrcB [24:21], Dstacc [28:25], Fp32 [29]
.equ PCK0_ADDR_CTRL_XY_REG_0,        8     # Xstride [15:0], Ystride [31:16] (bytes)
.equ PCK0_ADDR_CTRL_ZW_REG_0,        9     # Zstride [15:0], Wstride [31:16]
.equ PCK_DEST_RD_CTRL,               14    # Read_32b_data [0]
.equ PCK_EDGE_OFFSET_SEC0,           20    # mask [15:0]
.equ UNP0_ADD_DEST_ADDR_CNTR,        41    # add_dest_addr_cntr [8]
.equ UNP0_ADDR_CTRL_ZW_REG_1,        45    # Zstride [15:0]
.equ THCON_SEC0_REG0_TileDescriptor, 52    # four registers
.equ THCON_SEC0_REG1_Row_start,      56    # packer: +0 sizes, +1 L1_Dest_addr, +2 formats
.equ THCON_SEC0_REG2_Out_data_format, 60   # unpacker 0: +0 formats, +1 per-context flags
.equ THCON_SEC0_REG3_Base_address,   64
.equ THCON_SEC0_REG5_Dest_cntx0,     72    # +0 Dest_cntx0/1, +2 Tile_x_dim_cntx0/1
.equ THCON_SEC1_REG0_TileDescriptor, 92    # unpacker 1 (SrcB)
.equ THCON_SEC1_REG2_Out_data_format, 100
.equ THCON_SEC1_REG3_Base_address,   104
.equ UNP1_ADDR_CTRL_ZW_REG_1,        47
.equ DEST_TARGET_REG_CFG_PACK_SEC0,  152
# ---- thread configuration (SETC16) indices
.equ DEST_TARGET_REG_CFG_MATH_Offset, 1
.equ SRCA_SET_Base,                  3     # [1:0] Base, [2] SetOvrdWithAddr
.equ ADDR_MOD_AB_SEC0,               7     # + 2n: SrcAIncr [5:0] ... SrcBIncr [13:8]
.equ ADDR_MOD_DST_SEC0,              23    # + n: DestIncr [9:0] ...
.equ ADDR_MOD_PACK_SEC0,             31    # + n: YsrcIncr [3:0] ... ZsrcIncr [12]
# ---- this kernel
.equ IN_A,  0x10000
.equ IN_B,  0x11000
.equ OUT,   0x12000
.equ BF16,  5                              # data format code
.equ MATH_PACK, 2                          # semaphore mask: semaphore 1 (ckernel::semaphore::MATH_PACK)

unpack:
    SETADCXY 0b011, 0, 0, 0, 0, 0b1111     # unpacker 0 and 1: X = Y = 0
    SETADCZW 0b011, 0, 0, 0, 0, 0b1111     # Z = W = 0
    RMWCIB2 0xFE, (BF16 << 1) | (BF16 << 5 & 0xE0), ALU_FORMAT_SPEC_REG0_SrcA   # SrcA, SrcB = BF16
    RMWCIB3 0x01, BF16 >> 3, ALU_FORMAT_SPEC_REG0_SrcA
    # tile descriptor: BF16, uncompressed, X = 256 datums (a face), Y = 1, Z = 4 faces
    SETDMAREG 0, 0x0015, 0, 2*4            # GPR4 = 0x01000015
    SETDMAREG 0, 0x0100, 0, 2*4+1
    SETDMAREG 0, 0x0001, 0, 2*5            # GPR5 = 0x00040001
    SETDMAREG 0, 0x0004, 0, 2*5+1
    SETDMAREG 0, 0, 0, 2*6                 # GPR6 = GPR7 = 0
    SETDMAREG 0, 0, 0, 2*6+1
    SETDMAREG 0, 0, 0, 2*7
    SETDMAREG 0, 0, 0, 2*7+1
    WRCFG 4, 1, THCON_SEC0_REG0_TileDescriptor
    WRCFG 4, 1, THCON_SEC1_REG0_TileDescriptor         # the same for unpacker 1
    # output format BF16; every context uncompressed (0x000F000F)
    SETDMAREG 0, BF16, 0, 2*8
    SETDMAREG 0, 0, 0, 2*8+1
    SETDMAREG 0, 0x000F, 0, 2*9
    SETDMAREG 0, 0x000F, 0, 2*9+1
    WRCFG 8, 1, THCON_SEC0_REG2_Out_data_format        # GPR10, GPR11 are still 0
    WRCFG 8, 1, THCON_SEC1_REG2_Out_data_format
    # L1 address of the tile in 16-byte units, minus one for the tile header
    SETDMAREG (IN_A / 16 - 1) >> 14, (IN_A / 16 - 1) & 0x3FFF, 0, 2*12
    SETDMAREG 0, 0, 0, 2*12+1
    WRCFG 12, 0, THCON_SEC0_REG3_Base_address
    SETDMAREG (IN_B / 16 - 1) >> 14, (IN_B / 16 - 1) & 0x3FFF, 0, 2*12
    WRCFG 12, 0, THCON_SEC1_REG3_Base_address
    # context 0 writes SrcA from output datum 64 (SrcA row 0), faces of 256 datums
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
    SETDMAREG 0, 512, 0, 2*13                          # ch1 Z stride: a BF16 face
    SETDMAREG 0, 0, 0, 2*13+1
    WRCFG 13, 0, UNP0_ADDR_CTRL_ZW_REG_1
    WRCFG 13, 0, UNP1_ADDR_CTRL_ZW_REG_1
    SETC16 SRCA_SET_Base, 0x4              # SetOvrdWithAddr: SrcA rows from the address alone
    SETADCXX 0b011, 255, 0                 # both unpackers read datums 0..255 of a face
    STALLWAIT 0x8, 0x2000                  # block unpacking until config writes are done (TRISC_CFG)
    MOP 1, 0, 0                            # the four faces (unpack_mop below)
    end

unpack_mop:                                # MopCfg, template 1
    .word 2                                # OuterCount: face rows (A, B, A, B per iteration)
    .word 2                                # InnerCount: face columns
    NOP                                    # StartOp
    NOP                                    # EndOp0
    NOP                                    # EndOp1
    UNPACR 0, 0b1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1   # LoopOp: face of A -> SrcA, ch0 Z += 1, SetDatValid
    UNPACR 1, 0b1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1   # LoopOp1: face of B -> SrcB, ch0 Z += 1, SetDatValid
    UNPACR 1, 0b1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1   # Loop0Last
    UNPACR 1, 0b1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1   # Loop1Last

math:
    SETC16 ADDR_MOD_AB_SEC0 + 2*0, 8 | 8 << 8   # ADDR_MOD_0: SrcA += 8, SrcB += 8
    SETC16 ADDR_MOD_DST_SEC0 + 0, 8            #             Dst += 8
    RMWCIB3 0xE0, 0, ALU_FORMAT_SPEC_REG0_SrcA # 16-bit Dest (BF16), no INT8 math
    SEMINIT 2, 0, MATH_PACK                # MATH_PACK: Max 2 (two Dest halves), Value 0
    SETC16 DEST_TARGET_REG_CFG_MATH_Offset, 0
    SETRWC 0, 0, 0, 0, 0, 0b1111           # RWCs and fidelity phase to 0
    SEMWAIT 0x142, MATH_PACK, 2            # a Dest half must be free (Value < Max)
    MOP 1, 0, 0                            # the four faces (math_mop below)
    SETRWC 0, 0, 0, 0, 0, 0b0100           # Dst RWC to 0
    STALLWAIT 0x2, 0x4080                  # SEMPOST after the matrix unit and SFPU are done
    SEMPOST MATH_PACK                      # Dest half ready for the packer
    end

math_mop:
    .word 4                                # OuterCount: faces
    .word 2                                # InnerCount: 16 rows, 8 per ELWADD
    NOP                                    # StartOp
    SETRWC 3, 3, 0, 0, 0, 0b0011           # EndOp0: CLR_AB (both banks back), SrcA = SrcB = 0
    NOP                                    # EndOp1
    ELWADD 0, 0, 0, 0, 0                   # LoopOp: Dst = SrcA + SrcB on 8 rows, ADDR_MOD_0
    NOP                                    # LoopOp1
    ELWADD 0, 0, 0, 0, 0                   # Loop0Last
    ELWADD 0, 0, 0, 0, 0                   # Loop1Last

pack:
    # packer 0's configuration: sizes 0, L1 destination, uncompressed BF16 -> BF16
    SETDMAREG 0, 0, 0, 2*4
    SETDMAREG 0, 0, 0, 2*4+1
    SETDMAREG (OUT / 16 - 1) >> 14, (OUT / 16 - 1) & 0x3FFF, 0, 2*5
    SETDMAREG 0, 0, 0, 2*5+1
    SETDMAREG 0, 1 | BF16 << 4 | BF16 << 8, 0, 2*6      # Disable_zero_compress, Out, In
    SETDMAREG 0, 0, 0, 2*6+1
    SETDMAREG 0, 0, 0, 2*7
    SETDMAREG 0, 0, 0, 2*7+1
    WRCFG 4, 1, THCON_SEC0_REG1_Row_start
    SETDMAREG 0xFFFF >> 14, 0xFFFF & 0x3FFF, 0, 2*8     # edge mask: keep all 16 columns
    SETDMAREG 0, 0, 0, 2*8+1
    WRCFG 8, 0, PCK_EDGE_OFFSET_SEC0
    SETDMAREG 0, 0, 0, 2*9                             # read Dest as 16-bit data
    SETDMAREG 0, 0, 0, 2*9+1
    WRCFG 9, 0, PCK_DEST_RD_CTRL
    WRCFG 9, 0, DEST_TARGET_REG_CFG_PACK_SEC0          # Dest offset 0
    RMWCIB3 0x1E, BF16 << 1, ALU_FORMAT_SPEC_REG0_SrcA # Dstacc (the packer's intermediate) = BF16
    # strides in bytes of a BF16 Dest: a row 32, a face 512, a tile 2048 (set_packer_strides)
    SETDMAREG 0, 0, 0, 2*10
    SETDMAREG 0, 32, 0, 2*10+1
    SETDMAREG 0, 512, 0, 2*11
    SETDMAREG 0, 2048, 0, 2*11+1
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
    ZEROACC 2, 1, 0                        # clear Dest half 0
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
