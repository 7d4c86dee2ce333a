/* The RISC-V demo of `tessera faults demo`: an insertion sort and a checksum over 32 words.
 *
 * It prints the sorted array's checksum and exits 0.  Before printing it checks two
 * invariants a fault can break -- the array is in order, and its sum is the sum it had
 * before sorting -- and exits 3 when one fails: the program *detecting* corruption,
 * which a campaign names with `detected = [3]`.
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

#define N 32
u32 data[N] = {
    907, 112, 455, 31, 768, 290, 643, 5, 871, 334, 219, 980, 76, 512, 398, 661,
    143, 827, 54, 729, 468, 201, 935, 387, 18, 602, 275, 846, 139, 593, 720, 361,
};

int main(void)
{
    u32 before = 0;
    for (int i = 0; i < N; i++) before += data[i];
    for (int i = 1; i < N; i++) {            /* insertion sort */
        u32 v = data[i];
        int j = i - 1;
        while (j >= 0 && data[j] > v) { data[j + 1] = data[j]; j--; }
        data[j + 1] = v;
    }
    u32 after = 0, check = 0;
    for (int i = 0; i < N; i++) {
        if (i && data[i - 1] > data[i]) { put("corrupted: out of order\n"); return 3; }
        after += data[i];
        check = (check << 5 | check >> 27) ^ data[i];
    }
    if (after != before) { put("corrupted: sum changed\n"); return 3; }
    put("checksum ");
    puthex(check);
    return 0;
}

__asm__(".section .text._start, \"ax\", @progbits\n"
        ".globl _start\n_start:\n"
        ".option push\n.option norelax\nla gp, __global_pointer$\n.option pop\n"
        "andi sp, sp, -16\ncall start_c\n1: j 1b\n");
void __attribute__((used, noreturn)) start_c(void) { sys3(93, main(), 0, 0); for (;;) { } }
