/* Recursion: deep call chains, stack frames with spills, mutual recursion,
 * function pointers (jalr), a switch that may compile to a jump table. */
#include "rt.h"

static int fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static int ack(int m, int n)
{
    if (m == 0)
        return n + 1;
    if (n == 0)
        return ack(m - 1, 1);
    return ack(m - 1, ack(m, n - 1));
}

static int is_odd(unsigned n);
static int is_even(unsigned n)
{
    return n == 0 ? 1 : is_odd(n - 1);
}
static int is_odd(unsigned n)
{
    return n == 0 ? 0 : is_even(n - 1);
}

static long many_args(long a, long b, long c, long d, long e, long f, long g, long h, long i,
                      long j, int depth)
{
    if (depth == 0)
        return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + 9 * i + 10 * j;
    return many_args(b, c, d, e, f, g, h, i, j, a + depth, depth - 1) ^ depth;
}

static u32 hanoi(int n, int from, int to, int via, u32 h)
{
    if (n == 0)
        return h;
    h = hanoi(n - 1, from, via, to, h);
    h = mix32(h, (u32)(from * 4 + to));
    return hanoi(n - 1, via, to, from, h);
}

static int classify(int x)
{
    switch (x) {
    case 0: return 11;
    case 1: return 23;
    case 2: return 37;
    case 3: return 41;
    case 4: return 53;
    case 5: return 67;
    case 6: return 71;
    case 7: return 83;
    default: return -1;
    }
}

static int twice(int (*f)(int), int x)
{
    return f(f(x));
}
static int inc(int x) { return x + 1; }
static int sq(int x) { return x * x; }

int main(void)
{
    volatile int n = 17;
    put_str("recursion\n");
    for (int i = 0; i <= n; i += 4)
        put_kv("fib", fib(i));
    put_kv("ack(2,3)", ack(2, 3));
    put_kv("ack(3,3)", ack(3, 3));
    put_kv("even(101)", is_even(101));
    put_kv("odd(77)", is_odd(77));
    put_kv("many", many_args(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12));
    put_kx("hanoi", hanoi(9, 1, 3, 2, 7));
    int s = 0;
    for (volatile int i = -2; i < 10; i++)
        s = s * 3 + classify(i);
    put_kv("switch", s);
    volatile int k = 3;
    put_kv("twice", twice(k & 1 ? sq : inc, k) + twice(inc, k));
    return 0;
}
