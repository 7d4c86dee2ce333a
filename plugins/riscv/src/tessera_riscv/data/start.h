/* start.h - declarations of what start.S provides (tessera-riscv).
 *
 * #include "start.h" and compile with -I "$(tessera riscv-start --dir)".
 * write and exit are the Linux RISC-V system calls 64 and 93, which Tessera's
 * rv32im / rv64im and qemu-riscv32/64 user mode implement: fd 1 is standard
 * output, fd 2 standard error; exit's status becomes the run's exit status.
 */
#ifndef TESSERA_START_H
#define TESSERA_START_H

long write(int fd, const void *buf, __SIZE_TYPE__ count);
void exit(int status) __attribute__((noreturn));

void *memcpy(void *dst, const void *src, __SIZE_TYPE__ n);
void *memmove(void *dst, const void *src, __SIZE_TYPE__ n);
void *memset(void *dst, int c, __SIZE_TYPE__ n);
int memcmp(const void *a, const void *b, __SIZE_TYPE__ n);

#endif
