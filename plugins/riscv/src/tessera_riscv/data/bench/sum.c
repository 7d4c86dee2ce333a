/* The compiled RV32 workload of `tessera bench` (see tessera_riscv/bench.py).
 *
 * The loop body compiles at -O1 to three instructions (add, addi, bnez), the same
 * shape as the hand-written loops of the other workloads, so instructions per
 * second compare like with like.  `iterations` is patched in the ELF image through
 * its symbol table before each run; `result` is read back from memory to check the
 * sum.  Both are volatile so the compiler keeps them as real loads and stores.
 */

volatile unsigned int iterations = 1000;
volatile unsigned int result;

static unsigned int sum(unsigned int n)
{
    unsigned int s = 0;
    for (; n != 0; n--)
        s += n;
    return s;
}

int main(void)
{
    result = sum(iterations);
    return 0;
}

/* No C runtime (-nostdlib): call main, then the Linux `exit` system call (93) with
 * main's return value in a0, which both Tessera's RISC-V board and qemu-user take. */
__asm__(
    "  .section .text._start, \"ax\", @progbits\n"
    "  .globl _start\n"
    "_start:\n"
    "  call main\n"
    "  li a7, 93\n"
    "  ecall\n"
    "1: j 1b\n");
