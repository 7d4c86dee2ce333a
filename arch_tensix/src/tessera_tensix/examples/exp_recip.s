# SFPU example kernel (Blackhole, direct mode): exp(x) and 1/x over one 4x8 slice of Dest.
#
# Dest rows 0..3, even columns (Dst32b, FP32) start as x = 0.5 (written by the kernel
# itself, so `tessera demo` needs no --dest-in).  The kernel then computes
#   rows 0..3  even columns:  e(x) = 1 + x*(1 + x*(1/2 + x*(1/6 + x/24)))   (Horner, SFPMAD)
#   rows 0..3  odd columns:   r(x) ~ 1/x: r0 = 2.9 - 2x, then two Newton steps r = r*(2 - x*r)
# With --dest-in a.npy the first two lines can be dropped to work on your own data.

        sfploadi L0,16128,0        # L0 = 0.5            (FLOATB: BF16 immediate 0x3F00)
        sfpstore 0,L0,3,7          # Dest[0:4, even] = x  (Mod0 3 = FP32, AddrMod 7)

        sfpload L1,0,3,7           # L1 = x
        # exp: Horner with SFPMAD  (VD = VA * VB + VC; L10 = 1.0, L9 = 0)
        sfploadi L2,15659,0        # 1/24  (BF16 0x3D2B)
        sfploadi L3,15914,0        # 1/6   (BF16 0x3E2A)
        sfpmad L4,L2,L1,L3,0       # x/24 + 1/6
        sfploadi L3,16128,0        # 1/2
        sfpmad L4,L4,L1,L3,0       # (...)*x + 1/2
        sfpmad L4,L4,L1,L10,0      # (...)*x + 1
        sfpmad L4,L4,L1,L10,0      # (...)*x + 1  = e(x)
        sfpstore 0,L4,3,7          # Dest[0:4, even] = e(x)

        # reciprocal: r0 = 2.9 - 2x (BF16 2.90625 = 0x403A), Newton r = r * (2 - x*r)
        sfploadi L5,16442,0        # 2.90625
        sfploadi L6,16384,0        # 2.0
        sfpmad L7,L1,L6,L5,1       # r0 = 2.90625 - 2x  (Mod1 bit0 negates the product)
        sfpmad L2,L1,L7,L6,1       # t = 2 - x*r   (Mod1 bit0: negated product)
        sfpmad L7,L7,L2,L9,0       # r = r*t
        sfpmad L2,L1,L7,L6,1
        sfpmad L7,L7,L2,L9,0
        sfpstore 2,L7,3,7          # Dest[0:4, odd] = r (Addr bit 1 selects the odd columns)
        end
