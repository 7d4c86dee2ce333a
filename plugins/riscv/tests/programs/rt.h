/* Tiny freestanding runtime for the differential test programs (no libc).
 *
 * Programs are linked with -nostdlib: rt.c provides _start (sets gp and calls
 * main, then the exit system call), write/exit wrappers using the Linux RISC-V
 * system-call numbers (write 64, exit 93, exit_group 94), line-buffered output,
 * number printing, and the memcpy/memset/memmove/memcmp gcc may call on its own.
 * The same ELF runs under qemu-riscv32/64 user mode and under Tessera.
 */
#ifndef RT_H
#define RT_H

typedef unsigned long size_t;
typedef unsigned long uxlen;          /* XLEN bits: 32 on rv32, 64 on rv64 */
typedef long sxlen;
typedef unsigned long long u64;
typedef long long s64;
typedef unsigned int u32;
typedef int s32;

#define XLEN __riscv_xlen

long rt_syscall3(long n, long a0, long a1, long a2);
long sys_write(int fd, const void *buf, size_t n);
void sys_exit(int code) __attribute__((noreturn));
void sys_exit_group(int code) __attribute__((noreturn));

void rt_flush(void);
void put_char(char c);
void put_str(const char *s);
void put_udec(u64 v);
void put_dec(s64 v);
void put_hex(u64 v, int digits);      /* digits: 0 = as many as needed */
void put_hexx(uxlen v);               /* XLEN/4 digits */
void put_nl(void);
void put_kv(const char *key, s64 v);  /* "key=decimal\n" */
void put_kx(const char *key, u64 v);  /* "key=0xhex\n"  */

/* A mixing hash for compact checks of many values. */
u32 mix32(u32 h, u32 v);
u32 mix(u32 h, u64 v);

void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif
