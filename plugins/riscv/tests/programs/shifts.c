/* Shifts: register shift amounts beyond XLEN are masked by the ISA (low 5 bits on
 * rv32, low 6 on rv64; the *W forms use 5), immediate shifts of every distance. */
#include "rt.h"

#define OP(name, insn)                                                          \
    static uxlen name(uxlen a, uxlen b)                                         \
    {                                                                           \
        uxlen r;                                                                \
        __asm__ volatile(insn " %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));        \
        return r;                                                               \
    }

OP(op_sll, "sll")
OP(op_srl, "srl")
OP(op_sra, "sra")
#if XLEN == 64
OP(op_sllw, "sllw")
OP(op_srlw, "srlw")
OP(op_sraw, "sraw")
#endif

static volatile uxlen vals[] = {0, 1, (uxlen)-1, 0x80000000u, 0x7fffffff, 0x12345678, 0xdeadbeefu,
#if XLEN == 64
                                0x8000000000000000UL, 0xfedcba9876543210UL, 0x00000000ffff0000UL,
#endif
};
static volatile uxlen amounts[] = {0, 1, 4, 5, 15, 16, 31, 32, 33, 63, 64, 65, 127, 0x3e1,
                                   (uxlen)-1, (uxlen)-31};

#define IMM_SHIFTS(v, s)                                                        \
    do {                                                                        \
        put_hexx((v) << (s));                                                   \
        put_char(' ');                                                          \
        put_hexx((v) >> (s));                                                   \
        put_char(' ');                                                          \
        put_hexx((uxlen)((sxlen)(v) >> (s)));                                   \
        put_nl();                                                               \
    } while (0)

int main(void)
{
    put_str("shifts\n");
    for (unsigned i = 0; i < ARRAY_LEN(vals); i++) {
        for (unsigned j = 0; j < ARRAY_LEN(amounts); j++) {
            uxlen a = vals[i], s = amounts[j];
            put_hexx(op_sll(a, s));
            put_char(' ');
            put_hexx(op_srl(a, s));
            put_char(' ');
            put_hexx(op_sra(a, s));
#if XLEN == 64
            put_char(' ');
            put_hexx(op_sllw(a, s));
            put_char(' ');
            put_hexx(op_srlw(a, s));
            put_char(' ');
            put_hexx(op_sraw(a, s));
#endif
            put_nl();
        }
    }
    for (unsigned i = 0; i < ARRAY_LEN(vals); i++) {
        uxlen v = vals[i];
        IMM_SHIFTS(v, 1);
        IMM_SHIFTS(v, 7);
        IMM_SHIFTS(v, 16);
        IMM_SHIFTS(v, 31);
#if XLEN == 64
        IMM_SHIFTS(v, 32);
        IMM_SHIFTS(v, 45);
        IMM_SHIFTS(v, 63);
        /* 32-bit shifts of ints on rv64: slliw/srliw/sraiw */
        int w = (int)v;
        unsigned uw = (unsigned)v;
        put_hexx((uxlen)(sxlen)(int)((unsigned)w << 3));
        put_char(' ');
        put_hexx((uxlen)(sxlen)(int)(uw >> 9));
        put_char(' ');
        put_hexx((uxlen)(sxlen)(w >> 31));
        put_nl();
#endif
    }
    /* variable C shifts (in range) */
    u32 h = 1;
    for (int s = 0; s < XLEN; s++) {
        uxlen v = vals[s % ARRAY_LEN(vals)];
        h = mix(h, v << s);
        h = mix(h, v >> s);
        h = mix(h, (uxlen)((sxlen)v >> s));
    }
    put_kx("hash", h);
    return 0;
}
