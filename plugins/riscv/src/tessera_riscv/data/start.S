/* start.S - startup file for bare-metal C programs on Tessera's rv32im / rv64im
 * (tessera-riscv); the same ELF runs under qemu-riscv32 / qemu-riscv64 user mode.
 *
 *   _start   sets gp, calls main(argc, argv, envp) with what the initial stack holds
 *            (Tessera: argc = 0, argv = {NULL}), then exit(main's return value)
 *   write    long write(int fd, const void *buf, size_t count)  Linux call 64
 *   exit     void exit(int status)                              Linux call 93
 *   memcpy, memmove, memset, memcmp
 *            byte loops, defined weak: gcc may call them even with -ffreestanding,
 *            and a program's own definitions replace them
 *
 * Build (the path comes from `tessera riscv-start`; start.h, next to this file,
 * declares the functions above for C):
 *
 *   riscv64-unknown-elf-gcc -march=rv32im -mabi=ilp32 -ffreestanding -fno-builtin \
 *       -nostdlib -O2 -o prog.elf prog.c "$(tessera riscv-start)"
 *
 * Use -march=rv64im -mabi=lp64 for rv64im.
 */

#if __riscv_xlen == 64
#define LOAD_WORD ld
#define WORD_BYTES 8
#define WORD_SHIFT 3
#else
#define LOAD_WORD lw
#define WORD_BYTES 4
#define WORD_SHIFT 2
#endif

        .section .text._start, "ax", @progbits
        .globl  _start
        .type   _start, @function
_start:
        .option push
        .option norelax
        la      gp, __global_pointer$   /* for linker relaxation of small data */
        .option pop
        LOAD_WORD a0, 0(sp)             /* argc */
        addi    a1, sp, WORD_BYTES      /* argv */
        addi    a2, a0, 1
        slli    a2, a2, WORD_SHIFT
        add     a2, a1, a2              /* envp = argv + argc + 1 */
        andi    sp, sp, -16             /* the ABI's stack alignment */
        call    main
        tail    exit                    /* exit(main's return value) */
        .size   _start, . - _start

        .text
        .p2align 2
        .globl  write
        .type   write, @function
write:                                  /* a0 = fd, a1 = buf, a2 = count */
        li      a7, 64
        ecall                           /* a0 = bytes written, or -errno */
        ret
        .size   write, . - write

        .globl  exit
        .type   exit, @function
exit:                                   /* a0 = status */
        li      a7, 93
        ecall
1:      j       1b                      /* not reached: the hart has halted */
        .size   exit, . - exit

        .weak   memcpy
        .type   memcpy, @function
memcpy:                                 /* a0 = dst, a1 = src, a2 = n; returns dst */
.Lforward:
        mv      t0, a0
1:      beqz    a2, 2f
        lbu     t1, 0(a1)
        sb      t1, 0(t0)
        addi    a1, a1, 1
        addi    t0, t0, 1
        addi    a2, a2, -1
        j       1b
2:      ret
        .size   memcpy, . - memcpy

        .weak   memmove
        .type   memmove, @function
memmove:                                /* like memcpy; the regions may overlap */
        bgeu    a1, a0, .Lforward       /* src at or above dst: copying forwards is safe */
        add     t0, a0, a2
        add     a1, a1, a2
1:      beqz    a2, 2f
        addi    a1, a1, -1
        addi    t0, t0, -1
        lbu     t1, 0(a1)
        sb      t1, 0(t0)
        addi    a2, a2, -1
        j       1b
2:      ret
        .size   memmove, . - memmove

        .weak   memset
        .type   memset, @function
memset:                                 /* a0 = dst, a1 = byte, a2 = n; returns dst */
        mv      t0, a0
1:      beqz    a2, 2f
        sb      a1, 0(t0)
        addi    t0, t0, 1
        addi    a2, a2, -1
        j       1b
2:      ret
        .size   memset, . - memset

        .weak   memcmp
        .type   memcmp, @function
memcmp:                                 /* a0 = a, a1 = b, a2 = n; returns <0, 0, >0 */
1:      beqz    a2, 2f
        lbu     t0, 0(a0)
        lbu     t1, 0(a1)
        bne     t0, t1, 3f
        addi    a0, a0, 1
        addi    a1, a1, 1
        addi    a2, a2, -1
        j       1b
2:      li      a0, 0
        ret
3:      sub     a0, t0, t1
        ret
        .size   memcmp, . - memcmp
