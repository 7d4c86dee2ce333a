/* M extension edge cases: every mul/div/rem form over values including 0, -1,
 * INT_MIN/LONG_MIN (division by zero and the overflow case INT_MIN / -1 do not trap
 * on RISC-V: they have defined results).  Inline asm pins the exact instructions. */
#include "rt.h"

#define OP(name, insn)                                                          \
    static uxlen name(uxlen a, uxlen b)                                         \
    {                                                                           \
        uxlen r;                                                                \
        __asm__ volatile(insn " %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));        \
        return r;                                                               \
    }

OP(op_mul, "mul")
OP(op_mulh, "mulh")
OP(op_mulhsu, "mulhsu")
OP(op_mulhu, "mulhu")
OP(op_div, "div")
OP(op_divu, "divu")
OP(op_rem, "rem")
OP(op_remu, "remu")
#if XLEN == 64
OP(op_mulw, "mulw")
OP(op_divw, "divw")
OP(op_divuw, "divuw")
OP(op_remw, "remw")
OP(op_remuw, "remuw")
#endif

static volatile uxlen vals[] = {
    0, 1, (uxlen)-1, 2, (uxlen)-2, 7, (uxlen)-7, 0x7fffffff, 0x80000000u, 0x80000001u,
    0xffffffffu, 0xdeadbeefu,
#if XLEN == 64
    0x7fffffffffffffffUL, 0x8000000000000000UL, 0x100000000UL, 0xfedcba9876543210UL,
#endif
};

static const char *names[] = {"mul", "mulh", "mulhsu", "mulhu", "div", "divu", "rem", "remu",
#if XLEN == 64
                              "mulw", "divw", "divuw", "remw", "remuw",
#endif
};

int main(void)
{
    uxlen (*ops[])(uxlen, uxlen) = {op_mul, op_mulh, op_mulhsu, op_mulhu, op_div, op_divu, op_rem,
                                    op_remu,
#if XLEN == 64
                                    op_mulw, op_divw, op_divuw, op_remw, op_remuw,
#endif
    };
    int n = ARRAY_LEN(vals);
    put_str("muldiv\n");
    /* the famous cases, spelled out */
    uxlen min = (uxlen)1 << (XLEN - 1);
    put_hexx(op_div(min, (uxlen)-1));
    put_char(' ');
    put_hexx(op_rem(min, (uxlen)-1));
    put_char(' ');
    put_hexx(op_div(5, 0));
    put_char(' ');
    put_hexx(op_divu(5, 0));
    put_char(' ');
    put_hexx(op_rem(5, 0));
    put_char(' ');
    put_hexx(op_remu(5, 0));
    put_char(' ');
    put_hexx(op_rem((uxlen)-5, 0));
    put_nl();
#if XLEN == 64
    put_hexx(op_divw(0x80000000u, (uxlen)-1));
    put_char(' ');
    put_hexx(op_remw(0x80000000u, (uxlen)-1));
    put_char(' ');
    put_hexx(op_divw(0x123456789UL, 0));
    put_char(' ');
    put_hexx(op_divuw(0x1ffffffffUL, 0));
    put_char(' ');
    put_hexx(op_remuw(0x1fffffff0UL, 0));
    put_char(' ');
    put_hexx(op_remw(0x1fffffff0UL, 0));
    put_nl();
#endif
    for (unsigned k = 0; k < ARRAY_LEN(ops); k++) {
        put_str(names[k]);
        put_nl();
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                put_hexx(ops[k](vals[i], vals[j]));
                put_char(j + 1 == n ? '\n' : ' ');
            }
        }
    }
    /* C-level division, as the compiler emits it (no zero divisors: that is UB in C) */
    volatile int a = -17, b = 5;
    volatile unsigned ua = 0xfffffff0u, ub = 7;
    put_kv("a/b", a / b);
    put_kv("a%b", a % b);
    put_kv("ua/ub", ua / ub);
    put_kv("ua%ub", ua % ub);
    volatile sxlen la = -1000000007, lb = -3;
    put_kv("la/lb", la / lb);
    put_kv("la%lb", la % lb);
    put_kv("la*lb", la * lb);
    return 0;
}
