/* The RISC-V demo of `tessera faults demo`: an insertion sort and a checksum over 80 words.
 *
 * It prints the sorted array's checksum and exits 0.  Before printing it checks two
 * invariants a fault can break -- every word is below LIMIT, and the array is in order --
 * and exits 3 when one fails: the program *detecting* corruption, which a campaign names
 * with `detected = [3]`.  The checks are cheap and partial on purpose: a flip in a low
 * bit that keeps the order passes them, and the checksum it prints is then silently
 * wrong (SDC).
 *
 * Built with build.sh (Debian's riscv64-unknown-elf-gcc, rv32im, freestanding).
 */
typedef unsigned int u32;

static long sys3(long n, long a, long b, long c)
{
    register long r0 __asm__("a0") = a;
    register long r1 __asm__("a1") = b;
    register long r2 __asm__("a2") = c;
    register long r7 __asm__("a7") = n;
    __asm__ volatile("ecall" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r7) : "memory");
    return r0;
}

static void put(const char *s) { long n = 0; while (s[n]) n++; sys3(64, 1, (long)s, n); }

static void puthex(u32 v)
{
    char buf[12];
    buf[0] = '0'; buf[1] = 'x'; buf[10] = '\n'; buf[11] = 0;
    for (int i = 9; i >= 2; i--) { buf[i] = "0123456789abcdef"[v & 15]; v >>= 4; }
    put(buf);
}

#define N 80
#define LIMIT 1000                           /* every word is below it */
u32 data[N] = {
    331, 970, 154, 404, 666, 49, 74, 840, 548, 96, 374, 596, 59, 931, 519, 219,
    38, 88, 444, 428, 71, 246, 92, 564, 434, 60, 846, 579, 126, 970, 228, 645,
    642, 596, 970, 63, 590, 599, 406, 50, 999, 226, 47, 570, 879, 136, 296, 429,
    147, 553, 120, 584, 315, 573, 835, 698, 185, 105, 595, 584, 654, 192, 381, 99,
    560, 729, 64, 577, 61, 633, 210, 508, 696, 544, 437, 795, 321, 476, 599, 945,
};

int main(void)
{
    for (int i = 1; i < N; i++) {            /* insertion sort */
        u32 v = data[i];
        int j = i - 1;
        while (j >= 0 && data[j] > v) { data[j + 1] = data[j]; j--; }
        data[j + 1] = v;
    }
    u32 check = 0;
    for (int i = 0; i < N; i++) {
        if (data[i] >= LIMIT) { put("corrupted: out of range\n"); return 3; }
        if (i && data[i - 1] > data[i]) { put("corrupted: out of order\n"); return 3; }
        check = (check << 5 | check >> 27) ^ data[i];
    }
    put("checksum ");
    puthex(check);
    return 0;
}

__asm__(".section .text._start, \"ax\", @progbits\n"
        ".globl _start\n_start:\n"
        ".option push\n.option norelax\nla gp, __global_pointer$\n.option pop\n"
        "andi sp, sp, -16\ncall start_c\n1: j 1b\n");
void __attribute__((used, noreturn)) start_c(void) { sys3(93, main(), 0, 0); for (;;) { } }
