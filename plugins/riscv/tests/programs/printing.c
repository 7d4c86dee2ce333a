/* Number printing: decimal and hex of many values (64-bit values printed through
 * 32-bit division), stderr output, and one large write. */
#include "rt.h"

static const s64 specials[] = {
    0, 1, -1, 9, 10, 11, 99, 100, 101, 255, 256, 32767, -32768, 65535, 65536,
    2147483647LL, -2147483647LL - 1, 4294967295LL, 4294967296LL,
    9223372036854775807LL, -9223372036854775807LL - 1, 1000000000000000000LL,
    -999999999999999999LL, 0x0123456789abcdefLL,
};

int main(void)
{
    put_str("printing\n");
    for (unsigned i = 0; i < ARRAY_LEN(specials); i++) {
        s64 v = specials[i];
        put_dec(v);
        put_char(' ');
        put_udec((u64)v);
        put_str(" 0x");
        put_hex((u64)v, 0);
        put_char(' ');
        put_hex((u64)v, 16);
        put_nl();
    }
    u64 p = 1;
    for (int i = 0; i < 20; i++) {
        put_udec(p);
        put_char(' ');
        put_udec(p - 1);
        put_nl();
        p *= 10;
    }
    u32 seed = 99;
    for (int i = 0; i < 40; i++) {
        seed = seed * 1103515245u + 12345u;
        u64 v = ((u64)seed << 32) | (seed * 2654435761u);
        put_dec((s64)v >> (i % 64));
        put_char(' ');
        put_hex(v >> i, 0);
        put_nl();
    }
    rt_flush();
    static const char err[] = "this goes to stderr\n";
    sys_write(2, err, sizeof(err) - 1);
    static char big[600];
    for (int i = 0; i < 600; i++)
        big[i] = (i % 60 == 59) ? '\n' : (char)('a' + i % 26);
    long wrote = sys_write(1, big, sizeof(big));
    put_kv("wrote", wrote);
    long zero = sys_write(1, big, 0);
    put_kv("zero", zero);
    return 0;
}
