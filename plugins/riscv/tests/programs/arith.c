/* Integer arithmetic: add/sub/logic/compare, sign and zero extension of narrow
 * types, 64-bit arithmetic (register pairs on rv32), immediates of every size. */
#include "rt.h"

static volatile sxlen vals[] = {
    0, 1, -1, 2, -2, 7, -2048, 2047, 0x7fffffff, -0x7fffffff - 1, 0x12345678, (sxlen)0xdeadbeefu,
#if XLEN == 64
    0x7fffffffffffffffL, (sxlen)0x8000000000000000UL, 0x100000000L, (sxlen)0xfedcba9876543210UL,
#endif
};

static volatile s64 wide[] = {0, 1, -1, 0xffffffffLL, 0x100000000LL, 0x7fffffffffffffffLL,
                              (s64)0x8000000000000000ULL, 0x0123456789abcdefLL, -123456789012345LL};

int main(void)
{
    int n = ARRAY_LEN(vals);
    put_str("arith\n");
    for (int i = 0; i < n; i++) {
        sxlen a = vals[i];
        put_hexx((uxlen)a);
        put_char(':');
        put_char(' ');
        put_hexx((uxlen)(signed char)a);
        put_char(' ');
        put_hexx((uxlen)(unsigned char)a);
        put_char(' ');
        put_hexx((uxlen)(short)a);
        put_char(' ');
        put_hexx((uxlen)(unsigned short)a);
        put_char(' ');
        put_hexx((uxlen)(sxlen)(int)a);
        put_char(' ');
        put_hexx((uxlen)(unsigned)a);
        put_char(' ');
        put_hexx((uxlen)(a + 2047));
        put_char(' ');
        put_hexx((uxlen)(a - 2048));
        put_char(' ');
        put_hexx((uxlen)(a ^ -1));
        put_char(' ');
        put_hexx((uxlen)(a & 0x7ff));
        put_char(' ');
        put_hexx((uxlen)(a | 0x400));
        put_char(' ');
        put_dec(a < 5);
        put_dec((uxlen)a < 5u);
        put_dec(a == 0);
        put_dec(-a > 0);
        put_nl();
    }
    for (int i = 0; i < n; i++) {
        u32 h = 0x811c9dc5u;
        for (int j = 0; j < n; j++) {
            sxlen a = vals[i], b = vals[j];
            h = mix(h, (u64)(a + b));
            h = mix(h, (u64)(a - b));
            h = mix(h, (u64)(a & b));
            h = mix(h, (u64)(a | b));
            h = mix(h, (u64)(a ^ b));
            h = mix(h, (u64)(a < b));
            h = mix(h, (u64)((uxlen)a < (uxlen)b));
            h = mix(h, (u64)(a >= b ? a : b));
            h = mix(h, (u64)((int)a + (int)b));
            h = mix(h, (u64)((int)a - (int)b));
        }
        put_str("row ");
        put_dec(i);
        put_str(" hash ");
        put_hex(h, 8);
        put_nl();
    }
    int m = ARRAY_LEN(wide);
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < m; j++) {
            s64 a = wide[i], b = wide[j];
            put_hex((u64)(a + b), 16);
            put_char(' ');
            put_hex((u64)(a - b), 16);
            put_char(' ');
            put_hex((u64)(a * b), 16);
            put_char(' ');
            put_dec(a < b);
            put_dec((u64)a < (u64)b);
            put_dec(a == b);
            put_nl();
        }
    }
    /* lui/auipc-sized constants */
    volatile sxlen k = 0x12345;
    put_hexx((uxlen)(k + 0x7ffff800));
    put_char(' ');
    put_hexx((uxlen)(k * 0x1001));
    put_nl();
    return 0;
}
