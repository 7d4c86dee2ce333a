# SFPU example kernel (Wormhole B0, direct mode): exp(x) over one 4x8 slice of Dest.
#
# The Blackhole example without the reciprocal (Wormhole's SFPMAD has no negate bits)
# and with AddrMod 3 (the 2-bit AddrMod field of Wormhole; 3 = "no increment" in sfpi).
# Wormhole does not stall an instruction that reads a MAD result on the next cycle
# (SFPMAD.md), so an SFPNOP follows each MAD whose result is read at once.

        sfploadi L0,16128,0        # L0 = 0.5            (FLOATB: BF16 immediate 0x3F00)
        sfpstore 0,L0,3,3          # Dest[0:4, even] = x  (Mod0 3 = FP32, AddrMod 3)

        sfpload L1,0,3,3           # L1 = x
        sfploadi L2,15659,0        # 1/24  (BF16 0x3D2B)
        sfploadi L3,15914,0        # 1/6   (BF16 0x3E2A)
        sfpmad L4,L2,L1,L3,0       # x/24 + 1/6
        sfploadi L3,16128,0        # 1/2
        sfpmad L4,L4,L1,L3,0       # (...)*x + 1/2
        sfpnop                     # (Wormhole: a MAD result may be read a cycle later)
        sfpmad L4,L4,L1,L10,0      # (...)*x + 1
        sfpnop
        sfpmad L4,L4,L1,L10,0      # (...)*x + 1  = e(x)
        sfpnop
        sfpstore 0,L4,3,3          # Dest[0:4, even] = e(x)
        end
