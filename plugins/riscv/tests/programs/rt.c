/* See rt.h.  Freestanding: compiled with -ffreestanding -nostdlib. */
#include "rt.h"

int main(void);

/* Entry: qemu-user and Tessera both start here with sp at argc (argc=0, argv=NULL).
 * gp is set for linker relaxation of small-data accesses. */
__asm__(
    "  .section .text._start, \"ax\", @progbits\n"
    "  .globl _start\n"
    "  .type _start, @function\n"
    "_start:\n"
    "  .option push\n"
    "  .option norelax\n"
    "  la gp, __global_pointer$\n"
    "  .option pop\n"
    "  andi sp, sp, -16\n"
    "  call rt_main\n"
    "1: j 1b\n");

void __attribute__((noreturn, used)) rt_main(void)
{
    int code = main();
    rt_flush();
    sys_exit(code);
}

long rt_syscall3(long n, long a0, long a1, long a2)
{
    register long r_a0 __asm__("a0") = a0;
    register long r_a1 __asm__("a1") = a1;
    register long r_a2 __asm__("a2") = a2;
    register long r_a7 __asm__("a7") = n;
    __asm__ volatile("ecall" : "+r"(r_a0) : "r"(r_a1), "r"(r_a2), "r"(r_a7) : "memory");
    return r_a0;
}

long sys_write(int fd, const void *buf, size_t n)
{
    return rt_syscall3(64, fd, (long)buf, (long)n);
}

void sys_exit(int code)
{
    rt_syscall3(93, code, 0, 0);
    for (;;) {
    }
}

void sys_exit_group(int code)
{
    rt_syscall3(94, code, 0, 0);
    for (;;) {
    }
}

/* ---- output: line buffered to fd 1 -------------------------------------------- */
static char out_buf[128];
static size_t out_len;

void rt_flush(void)
{
    size_t done = 0;
    while (done < out_len) {
        long n = sys_write(1, out_buf + done, out_len - done);
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    out_len = 0;
}

void put_char(char c)
{
    out_buf[out_len++] = c;
    if (c == '\n' || out_len == sizeof(out_buf))
        rt_flush();
}

void put_str(const char *s)
{
    while (*s)
        put_char(*s++);
}

void put_nl(void)
{
    put_char('\n');
}

/* Decimal of a 64-bit value without 64-bit division (rv32 has no __udivdi3 here):
 * long division by 10 over four 16-bit limbs, each step fits in 32 bits. */
static u32 divmod10_u64(u64 *v)
{
    u32 limbs[4] = {(u32)(*v >> 48) & 0xffff, (u32)(*v >> 32) & 0xffff,
                    (u32)(*v >> 16) & 0xffff, (u32)*v & 0xffff};
    u32 rem = 0;
    u64 q = 0;
    for (int i = 0; i < 4; i++) {
        u32 cur = (rem << 16) | limbs[i];
        u32 d = cur / 10u;
        rem = cur % 10u;
        q = (q << 16) | d;
    }
    *v = q;
    return rem;
}

void put_udec(u64 v)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + divmod10_u64(&v));
    } while (v);
    while (n)
        put_char(tmp[--n]);
}

void put_dec(s64 v)
{
    if (v < 0) {
        put_char('-');
        put_udec(-(u64)v);
    } else {
        put_udec((u64)v);
    }
}

void put_hex(u64 v, int digits)
{
    static const char hexdig[] = "0123456789abcdef";
    if (digits <= 0) {
        digits = 1;
        for (int i = 15; i > 0; i--) {
            if ((v >> (4 * i)) & 0xf) {
                digits = i + 1;
                break;
            }
        }
    }
    for (int i = digits - 1; i >= 0; i--)
        put_char(hexdig[(v >> (4 * i)) & 0xf]);
}

void put_hexx(uxlen v)
{
    put_hex(v, XLEN / 4);
}

void put_kv(const char *key, s64 v)
{
    put_str(key);
    put_char('=');
    put_dec(v);
    put_nl();
}

void put_kx(const char *key, u64 v)
{
    put_str(key);
    put_str("=0x");
    put_hex(v, 0);
    put_nl();
}

u32 mix32(u32 h, u32 v)
{
    h ^= v;
    h *= 0x01000193u;
    h ^= h >> 15;
    return h;
}

u32 mix(u32 h, u64 v)
{
    h = mix32(h, (u32)v);
    return mix32(h, (u32)(v >> 32));
}

/* ---- the memory functions gcc may emit calls to ------------------------------ */
void *memcpy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    while (n--)
        *d++ = *s++;
    return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (d < s) {
        while (n--)
            *d++ = *s++;
    } else if (d > s) {
        d += n;
        s += n;
        while (n--)
            *--d = *--s;
    }
    return dst;
}

void *memset(void *dst, int c, size_t n)
{
    unsigned char *d = dst;
    while (n--)
        *d++ = (unsigned char)c;
    return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (; n; n--, x++, y++) {
        if (*x != *y)
            return *x < *y ? -1 : 1;
    }
    return 0;
}

size_t strlen(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}
