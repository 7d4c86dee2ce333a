/* Memory: copy loops of every access width, signed/unsigned narrow loads, memmove
 * with overlap, memset, struct copies (gcc emits memcpy), and a few misaligned
 * word accesses (allowed by default in Tessera and in qemu-user). */
#include "rt.h"

struct rec {
    int id;
    short s;
    signed char c;
    unsigned char uc;
    long l;
    char name[20];
};

static signed char sbytes[64];
static unsigned char ubytes[64];
static short shalves[32];
static unsigned short uhalves[32];
static int words[32];
static unsigned uwords[32];
static long longs[16];
static unsigned char buf[160];
static struct rec recs[4];

static unsigned long load_word_at(const unsigned char *p)
{
    unsigned long v;
    __asm__ volatile("lw %0, 0(%1)" : "=r"(v) : "r"(p) : "memory");
    return v;
}

static void store_half_at(unsigned char *p, unsigned long v)
{
    __asm__ volatile("sh %1, 0(%0)" : : "r"(p), "r"(v) : "memory");
}

int main(void)
{
    put_str("memloops\n");
    u32 seed = 12345;
    for (int i = 0; i < 64; i++) {
        seed = seed * 1103515245u + 12345u;
        sbytes[i] = (signed char)(seed >> 16);
    }
    for (int i = 0; i < 64; i++)
        ubytes[i] = (unsigned char)sbytes[63 - i];
    for (int i = 0; i < 32; i++) {
        shalves[i] = (short)(sbytes[2 * i] * 256 + ubytes[2 * i + 1]);
        uhalves[i] = (unsigned short)shalves[31 - i];
        words[i] = shalves[i] * 65536 + uhalves[i];
        uwords[i] = (unsigned)words[31 - i] ^ 0x80000000u;
    }
    for (int i = 0; i < 16; i++)
        longs[i] = (long)words[i] * 3 - (long)uwords[i];

    s64 sum = 0;
    for (int i = 0; i < 64; i++)
        sum += sbytes[i] + 2 * ubytes[i];
    put_kv("bytes", sum);
    sum = 0;
    for (int i = 0; i < 32; i++)
        sum += shalves[i] - uhalves[i];
    put_kv("halves", sum);
    sum = 0;
    for (int i = 0; i < 32; i++)
        sum += (s64)words[i] + uwords[i];
    put_kv("words", sum);
    u32 h = 0;
    for (int i = 0; i < 16; i++)
        h = mix(h, (u64)longs[i]);
    put_kx("longs", h);

    /* copies, forward and backward, and overlapping moves */
    for (int i = 0; i < 160; i++)
        buf[i] = (unsigned char)(i * 7 + 3);
    memmove(buf + 3, buf, 100);
    memmove(buf + 50, buf + 61, 80);
    memcpy(buf + 140, ubytes, 20);
    memset(buf + 10, 0xa5, 13);
    h = 0;
    for (int i = 0; i < 160; i++)
        h = mix32(h, buf[i]);
    put_kx("buf", h);
    for (int i = 0; i < 160; i += 16) {
        put_hex(buf[i], 2);
        put_char(i + 16 >= 160 ? '\n' : ',');
    }

    /* word-wise copy loop with reversed index */
    static unsigned dst[32];
    for (int i = 31; i >= 0; i--)
        dst[31 - i] = uwords[i] + (unsigned)i;
    h = 0;
    for (int i = 0; i < 32; i++)
        h = mix32(h, dst[i]);
    put_kx("dst", h);

    /* struct copies */
    struct rec r = {1, -2, -3, 250, -4, "tessera"};
    for (int i = 0; i < 4; i++) {
        recs[i] = r;
        r.id += 10;
        r.s = (short)(r.s * 3);
        r.c = (signed char)(r.c * 5);
        r.uc = (unsigned char)(r.uc + 17);
        r.l = r.l * -7;
        r.name[i] = (char)('A' + i);
    }
    struct rec copy = recs[3];
    put_kv("id", copy.id);
    put_kv("s", copy.s);
    put_kv("c", copy.c);
    put_kv("uc", copy.uc);
    put_kv("l", copy.l);
    put_str(copy.name);
    put_nl();
    put_kv("cmp", memcmp(&recs[1], &recs[2], sizeof(struct rec)) < 0);
    put_kv("len", (s64)strlen(recs[2].name));

    /* misaligned accesses */
    for (int off = 0; off < 4; off++) {
        put_hex(load_word_at(buf + 33 + off) & 0xffffffffu, 8);
        put_char(' ');
    }
    put_nl();
    store_half_at(buf + 71, 0xbeef);
    put_hex(buf[70], 2);
    put_hex(buf[71], 2);
    put_hex(buf[72], 2);
    put_hex(buf[73], 2);
    put_nl();
    return 0;
}
