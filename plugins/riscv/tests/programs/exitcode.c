/* Exit status: main's return value, exit_group, values above 255 (the status is
 * the low 8 bits), and an unknown system call (-38, ENOSYS).  Built in variants
 * with -DVARIANT=n; variants 4 and 5 execute an illegal instruction at the global
 * label bad_insn (an unclaimed custom-0 word, and the all-zero word). */
#include "rt.h"

#ifndef VARIANT
#define VARIANT 0
#endif

static void deep(int n)
{
    if (n == 0) {
        put_str("leaving from deep\n");
        rt_flush();
        sys_exit_group(3);
    }
    deep(n - 1);
}

int main(void)
{
    put_str("exitcode\n");
    put_kv("enosys", rt_syscall3(4000, 1, 2, 3));
    switch (VARIANT) {
    case 0:
        return 42;
    case 1:
        deep(5);
        return 1;
    case 2:
        rt_flush();
        sys_exit(300);
    case 3:
        return -1;
    default:
        break;
    }
#if VARIANT == 4 || VARIANT == 5
    rt_flush();
    __asm__ volatile(".globl bad_insn\nbad_insn: .word %0" : : "i"(VARIANT == 4 ? 0x0000000b : 0));
#endif
    return 0;
}
