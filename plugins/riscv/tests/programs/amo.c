/* Zaamo: every amo*.w (and *.d on rv64) through inline asm, the old value and the
 * memory afterwards; and __atomic builtins as gcc compiles them.  Built with
 * -march=rv32ima / rv64ima. */
#include "rt.h"

#define AMO(name, insn, type)                                                   \
    static type name(volatile type *p, type v)                                  \
    {                                                                           \
        type old;                                                               \
        __asm__ volatile(insn " %0, %2, (%1)" : "=r"(old) : "r"(p), "r"(v) : "memory"); \
        return old;                                                             \
    }

AMO(amoswap_w, "amoswap.w", s32)
AMO(amoadd_w, "amoadd.w", s32)
AMO(amoand_w, "amoand.w", s32)
AMO(amoor_w, "amoor.w", s32)
AMO(amoxor_w, "amoxor.w", s32)
AMO(amomin_w, "amomin.w", s32)
AMO(amomax_w, "amomax.w", s32)
AMO(amominu_w, "amominu.w", s32)
AMO(amomaxu_w, "amomaxu.w", s32)
AMO(amoadd_w_aqrl, "amoadd.w.aqrl", s32)
AMO(amoswap_w_aq, "amoswap.w.aq", s32)
AMO(amoor_w_rl, "amoor.w.rl", s32)
#if XLEN == 64
AMO(amoswap_d, "amoswap.d", s64)
AMO(amoadd_d, "amoadd.d", s64)
AMO(amoand_d, "amoand.d", s64)
AMO(amoor_d, "amoor.d", s64)
AMO(amoxor_d, "amoxor.d", s64)
AMO(amomin_d, "amomin.d", s64)
AMO(amomax_d, "amomax.d", s64)
AMO(amominu_d, "amominu.d", s64)
AMO(amomaxu_d, "amomaxu.d", s64)
#endif

static const s32 wvals[] = {0, 1, -1, 5, -5, 0x7fffffff, (s32)0x80000000u, 0x12345678, (s32)0xdeadbeefu};
static volatile s32 cell;

typedef s32 (*amo_w_fn)(volatile s32 *, s32);
static const amo_w_fn wops[] = {amoswap_w, amoadd_w, amoand_w, amoor_w, amoxor_w, amomin_w,
                                amomax_w, amominu_w, amomaxu_w, amoadd_w_aqrl, amoswap_w_aq,
                                amoor_w_rl};

#if XLEN == 64
static const s64 dvals[] = {0, 1, -1, 0x7fffffffffffffffLL, (s64)0x8000000000000000ULL,
                            0xffffffffLL, (s64)0xfedcba9876543210ULL};
static volatile s64 dcell;
typedef s64 (*amo_d_fn)(volatile s64 *, s64);
static const amo_d_fn dops[] = {amoswap_d, amoadd_d, amoand_d, amoor_d, amoxor_d,
                                amomin_d, amomax_d, amominu_d, amomaxu_d};
#endif

int main(void)
{
    put_str("amo\n");
    int n = ARRAY_LEN(wvals);
    for (unsigned k = 0; k < ARRAY_LEN(wops); k++) {
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                cell = wvals[i];
                s32 old = wops[k](&cell, wvals[j]);
                put_hex((u32)old, 8);
                put_char(':');
                put_hex((u32)cell, 8);
                put_char(j + 1 == n ? '\n' : ' ');
            }
        }
    }
    /* rd = x0 (the value is discarded) and rd = rs2 */
    cell = 10;
    __asm__ volatile("amoadd.w zero, %1, (%0)" : : "r"(&cell), "r"(7) : "memory");
    put_kv("x0", cell);
    {
        register s32 v __asm__("a5") = 100;
        __asm__ volatile("amoadd.w a5, a5, (%1)" : "+r"(v) : "r"(&cell) : "memory");
        put_kv("same", v);
        put_kv("cell", cell);
    }
#if XLEN == 64
    int m = ARRAY_LEN(dvals);
    for (unsigned k = 0; k < ARRAY_LEN(dops); k++) {
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < m; j++) {
                dcell = dvals[i];
                s64 old = dops[k](&dcell, dvals[j]);
                put_hex((u64)old, 16);
                put_char(':');
                put_hex((u64)dcell, 16);
                put_char(j + 1 == m ? '\n' : ' ');
            }
        }
    }
    /* amo*.w on rv64 sign-extends the loaded word */
    cell = (s32)0x80000001u;
    uxlen raw;
    __asm__ volatile("amoor.w %0, zero, (%1)" : "=r"(raw) : "r"(&cell) : "memory");
    put_kx("sext", raw);
#endif
    /* __atomic builtins: gcc emits amo* for these (no lr/sc for fetch-ops) */
    static int counter;
    static long lcounter;
    for (int i = 0; i < 10; i++) {
        __atomic_fetch_add(&counter, i, __ATOMIC_SEQ_CST);
        __atomic_fetch_xor(&lcounter, (long)i << 3, __ATOMIC_RELAXED);
        __atomic_fetch_or(&counter, 1 << (i + 8), __ATOMIC_ACQUIRE);
        __atomic_fetch_and(&lcounter, ~(long)(1 << i), __ATOMIC_RELEASE);
    }
    put_kv("counter", __atomic_load_n(&counter, __ATOMIC_SEQ_CST));
    put_kv("lcounter", __atomic_exchange_n(&lcounter, 5, __ATOMIC_ACQ_REL));
    put_kv("lcounter2", lcounter);
    __atomic_store_n(&counter, -9, __ATOMIC_RELEASE);
    put_kv("stored", counter);
    return 0;
}
