/* Small algorithms: quicksort, a sieve, CRC-32, binary search, string handling,
 * a bytecode interpreter whose dense switch compiles to a jump table (indirect
 * jumps through a table of addresses), and function-pointer dispatch. */
#include "rt.h"

static u32 seed = 42;
static u32 rnd(void)
{
    seed ^= seed << 13;
    seed ^= seed >> 17;
    seed ^= seed << 5;
    return seed;
}

static void quicksort(int *a, int lo, int hi)
{
    while (lo < hi) {
        int p = a[(lo + hi) / 2], i = lo, j = hi;
        while (i <= j) {
            while (a[i] < p)
                i++;
            while (a[j] > p)
                j--;
            if (i <= j) {
                int t = a[i];
                a[i++] = a[j];
                a[j--] = t;
            }
        }
        if (j - lo < hi - i) {
            quicksort(a, lo, j);
            lo = i;
        } else {
            quicksort(a, i, hi);
            hi = j;
        }
    }
}

static int bsearch_int(const int *a, int n, int key)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (a[mid] == key)
            return mid;
        if (a[mid] < key)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

static u32 crc32(const unsigned char *p, size_t n)
{
    u32 crc = 0xffffffffu;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
    }
    return ~crc;
}

/* A stack machine: opcodes 0..11, dense switch. */
enum { PUSH, ADD, SUB, MUL, DIV, DUP, SWAP, JNZ, DEC, PRINT, NEG, HALT };

static s64 interpret(const int *code)
{
    s64 stack[16];
    int sp = 0, pc = 0;
    for (;;) {
        int op = code[pc++];
        switch (op) {
        case PUSH: stack[sp++] = code[pc++]; break;
        case ADD: sp--; stack[sp - 1] += stack[sp]; break;
        case SUB: sp--; stack[sp - 1] -= stack[sp]; break;
        case MUL: sp--; stack[sp - 1] *= stack[sp]; break;
        case DIV: sp--; stack[sp - 1] = stack[sp] ? (s32)stack[sp - 1] / (s32)stack[sp] : -1; break;
        case DUP: stack[sp] = stack[sp - 1]; sp++; break;
        case SWAP: { s64 t = stack[sp - 1]; stack[sp - 1] = stack[sp - 2]; stack[sp - 2] = t; } break;
        case JNZ: pc = stack[sp - 1] ? code[pc] : pc + 1; break;
        case DEC: stack[sp - 1]--; break;
        case PRINT: put_dec(stack[sp - 1]); put_char(' '); break;
        case NEG: stack[sp - 1] = -stack[sp - 1]; break;
        default: return sp ? stack[sp - 1] : -999;
        }
    }
}

static int cmp_lt(int a, int b) { return a < b; }
static int cmp_gt(int a, int b) { return a > b; }
static int cmp_abs(int a, int b) { return (a < 0 ? -a : a) < (b < 0 ? -b : b); }

int main(void)
{
    put_str("algorithms\n");
    static int a[300];
    for (int i = 0; i < 300; i++)
        a[i] = (int)(rnd() % 2001) - 1000;
    quicksort(a, 0, 299);
    int sorted = 1;
    for (int i = 1; i < 300; i++)
        sorted &= a[i - 1] <= a[i];
    put_kv("sorted", sorted);
    put_kv("min", a[0]);
    put_kv("median", a[150]);
    put_kv("max", a[299]);
    put_kv("find", bsearch_int(a, 300, a[123]) >= 0);
    put_kv("missing", bsearch_int(a, 300, 5000));

    static unsigned char sieve[2000];
    int primes = 0, last = 0;
    for (int i = 2; i < 2000; i++) {
        if (!sieve[i]) {
            primes++;
            last = i;
            for (int j = i * i; j < 2000; j += i)
                sieve[j] = 1;
        }
    }
    put_kv("primes", primes);
    put_kv("last", last);

    static const char text[] = "The quick brown fox jumps over the lazy dog";
    put_kx("crc", crc32((const unsigned char *)text, strlen(text)));
    char rev[64];
    size_t n = strlen(text);
    for (size_t i = 0; i < n; i++) {
        char c = text[n - 1 - i];
        rev[i] = (c >= 'a' && c <= 'z') ? (char)(c - 32) : c;
    }
    rev[n] = 0;
    put_str(rev);
    put_nl();

    /* a count-down loop, then ((7 - 3) * 5 / 2) negated, plus 2 - 3 * 3 */
    static const int prog[] = {PUSH, 10,
                               /* 2 */ PRINT, DEC, JNZ, 2,
                               PUSH, 7, PUSH, 3, SUB, PUSH, 5, MUL, PUSH, 2, DIV, NEG, ADD, PRINT,
                               PUSH, 3, DUP, MUL, PUSH, 2, SWAP, SUB, ADD, PRINT, HALT};
    s64 r = interpret(prog);
    put_nl();
    put_kv("interp", r);

    int (*cmps[])(int, int) = {cmp_lt, cmp_gt, cmp_abs};
    for (int k = 0; k < 3; k++) {
        int best = a[0];
        for (int i = 1; i < 300; i += 7)
            if (cmps[k](a[i], best))
                best = a[i];
        put_kv("best", best);
    }
    return 0;
}
