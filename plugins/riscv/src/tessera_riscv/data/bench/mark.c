/* The compiled "mark" workload of `tessera bench` (see tessera_riscv/bench_mark.py).
 *
 * A program shaped like the embedded benchmarks real users run, written for this
 * project: every iteration builds, searches, reverses and sorts a linked list kept
 * in a static pool, multiplies two small integer matrices and transforms the
 * product, scans a text buffer with a state machine (numbers, identifiers, commas,
 * signs, junk), and folds everything through CRC-16 and CRC-32 into one checksum.
 * That is many short blocks, loads and stores, indirect jumps, multiplies and
 * data-dependent branches: the fast engine's hard case, unlike sum.c's one loop.
 *
 * The work of iteration i depends only on its seed, i % SEEDS, so the bench knows
 * the right answer for any iteration count from the SEEDS per-seed checksums that
 * build.py records under qemu-riscv32 (mark-rv32im.json):
 *     result = crc32(result, checksum(seed) as 4 little-endian bytes), from 0
 *
 * Globals the bench patches through the ELF's symbol table (volatile, so the
 * compiler keeps real loads of them):
 *   iterations  how many iterations to run
 *   warmup      the iteration before which mark_warm() is called: the bench stops
 *               there (a breakpoint on the symbol) to time the rest as steady state
 *   verbose     nonzero: write every iteration's seed and checksum (build.py uses it)
 * At the end `result` holds the checksum and the program writes
 * "mark result=0x........\n" to stdout and exits with status 0.
 *
 * No C runtime (-nostdlib): _start below sets the global pointer (the linker turns
 * accesses to small globals into gp-relative ones), calls main, then the Linux `exit`
 * system call (93), which both Tessera's RISC-V board and qemu-user take; output
 * uses the `write` system call (64).
 */

#define SEEDS 64u
#define POOL 32
#define LIST_LEN 30
#define N 8
#define TEXT_LEN 192

/* in initialised data even when zero, so that the ELF file holds bytes to patch */
#define PATCHABLE __attribute__((section(".sdata.patchable")))

PATCHABLE volatile unsigned int iterations = 10;
PATCHABLE volatile unsigned int warmup = 0xffffffffu;
PATCHABLE volatile unsigned int verbose = 0;
volatile unsigned int result;

/* ---- freestanding support: gcc may emit calls to these for loops it recognises */

void *memset(void *dst, int c, unsigned long n)
{
    unsigned char *d = dst;
    while (n--)
        *d++ = (unsigned char)c;
    return dst;
}

void *memcpy(void *dst, const void *src, unsigned long n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    while (n--)
        *d++ = *s++;
    return dst;
}

static long sys_write(int fd, const void *buf, unsigned long count)
{
    register long a0 __asm__("a0") = fd;
    register long a1 __asm__("a1") = (long)buf;
    register long a2 __asm__("a2") = (long)count;
    register long a7 __asm__("a7") = 64;
    __asm__ volatile("ecall" : "+r"(a0) : "r"(a1), "r"(a2), "r"(a7) : "memory");
    return a0;
}

static char *put_text(char *p, const char *s)
{
    while (*s)
        *p++ = *s++;
    return p;
}

static char *put_hex(char *p, unsigned int v)
{
    static const char digits[] = "0123456789abcdef";
    *p++ = '0';
    *p++ = 'x';
    for (int shift = 28; shift >= 0; shift -= 4)
        *p++ = digits[(v >> shift) & 15];
    return p;
}

static char *put_dec(char *p, unsigned int v)
{
    char tmp[12];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* ---- a small deterministic generator (xorshift32, never zero) */

static unsigned int rng_state;

static void rng_seed(unsigned int seed)
{
    rng_state = 0x9e3779b9u ^ (seed * 0x85ebca6bu);
    if (rng_state == 0)
        rng_state = 1;
}

static unsigned int rng_next(void)
{
    unsigned int x = rng_state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    rng_state = x;
    return x;
}

/* ---- CRC-16/CCITT-FALSE and CRC-32 (reflected), both table-driven; the tables
 * are computed bit by bit once, at the start of the run */

static unsigned short crc16_table[256];

static void crc16_init(void)
{
    for (unsigned int n = 0; n < 256; n++) {
        unsigned short crc = (unsigned short)(n << 8);
        for (int bit = 0; bit < 8; bit++)
            crc = (crc & 0x8000) ? (unsigned short)((crc << 1) ^ 0x1021) : (unsigned short)(crc << 1);
        crc16_table[n] = crc;
    }
}

static unsigned short crc16_byte(unsigned short crc, unsigned char byte)
{
    return (unsigned short)((crc << 8) ^ crc16_table[((crc >> 8) ^ byte) & 0xff]);
}

static unsigned short crc16_word(unsigned short crc, unsigned int word)
{
    crc = crc16_byte(crc, (unsigned char)word);
    crc = crc16_byte(crc, (unsigned char)(word >> 8));
    crc = crc16_byte(crc, (unsigned char)(word >> 16));
    return crc16_byte(crc, (unsigned char)(word >> 24));
}

static unsigned int crc32_table[256];

static void crc32_init(void)
{
    for (unsigned int n = 0; n < 256; n++) {
        unsigned int c = n;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
        crc32_table[n] = c;
    }
}

/* zlib's convention: pass the previous CRC (0 to start), get the next one */
static unsigned int crc32_bytes(unsigned int crc, const unsigned char *p, unsigned int n)
{
    crc = ~crc;
    while (n--)
        crc = crc32_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

static unsigned int crc32_word(unsigned int crc, unsigned int word)
{
    unsigned char b[4];
    b[0] = (unsigned char)word;
    b[1] = (unsigned char)(word >> 8);
    b[2] = (unsigned char)(word >> 16);
    b[3] = (unsigned char)(word >> 24);
    return crc32_bytes(crc, b, 4);
}

/* ---- linked lists in a static pool */

struct node {
    struct node *next;
    int key;
    int value;
};

static struct node pool[POOL];
static int pool_used;

static struct node *node_new(int key, int value)
{
    struct node *n = &pool[pool_used++ % POOL];
    n->next = 0;
    n->key = key;
    n->value = value;
    return n;
}

/* insert keeping keys ascending (stable for equal keys) */
static struct node *list_insert_sorted(struct node *head, struct node *n)
{
    if (head == 0 || n->key < head->key) {
        n->next = head;
        return n;
    }
    struct node *p = head;
    while (p->next != 0 && p->next->key <= n->key)
        p = p->next;
    n->next = p->next;
    p->next = n;
    return head;
}

static struct node *list_reverse(struct node *head)
{
    struct node *prev = 0;
    while (head != 0) {
        struct node *next = head->next;
        head->next = prev;
        prev = head;
        head = next;
    }
    return prev;
}

/* position of the first node with `key`, or -1 */
static int list_find(const struct node *head, int key)
{
    for (int pos = 0; head != 0; head = head->next, pos++)
        if (head->key == key)
            return pos;
    return -1;
}

/* remove every node whose value is a multiple of `m`; returns the new head */
static struct node *list_remove_multiples(struct node *head, int m, int *removed)
{
    struct node **link = &head;
    while (*link != 0) {
        if ((*link)->value % m == 0) {
            *link = (*link)->next;
            (*removed)++;
        } else {
            link = &(*link)->next;
        }
    }
    return head;
}

static int by_value(const struct node *a, const struct node *b)
{
    if (a->value != b->value)
        return a->value < b->value ? -1 : 1;
    return a->key - b->key;
}

/* bottom-up merge sort of a list by value */
static struct node *list_sort(struct node *head)
{
    for (int width = 1;; width *= 2) {
        struct node *p = head, *tail = 0;
        int merges = 0;
        head = 0;
        while (p != 0) {
            struct node *q = p;
            int psize = 0, qsize = width;
            merges++;
            while (psize < width && q != 0) {
                psize++;
                q = q->next;
            }
            while (psize > 0 || (qsize > 0 && q != 0)) {
                struct node *e;
                if (psize == 0) {
                    e = q; q = q->next; qsize--;
                } else if (qsize == 0 || q == 0 || by_value(p, q) <= 0) {
                    e = p; p = p->next; psize--;
                } else {
                    e = q; q = q->next; qsize--;
                }
                if (tail != 0)
                    tail->next = e;
                else
                    head = e;
                tail = e;
            }
            p = q;
        }
        if (tail != 0)
            tail->next = 0;
        if (merges <= 1)
            return head;
    }
}

static unsigned short list_crc(const struct node *head, unsigned short crc)
{
    for (; head != 0; head = head->next)
        crc = crc16_word(crc, (unsigned int)head->key ^ ((unsigned int)head->value << 11));
    return crc;
}

static unsigned int list_work(unsigned int seed)
{
    struct node *head = 0;
    int keys[LIST_LEN];
    pool_used = 0;
    for (int i = 0; i < LIST_LEN; i++) {
        unsigned int r = rng_next();
        keys[i] = (int)(r & 0x3ff) - 0x200;
        head = list_insert_sorted(head, node_new(keys[i], (int)((r >> 10) & 0xfff)));
    }
    unsigned short crc = list_crc(head, (unsigned short)seed);
    int found = 0, misses = 0;
    for (int i = 0; i < LIST_LEN; i += 3) {
        int pos = list_find(head, keys[i]);
        found += pos;
        misses += list_find(head, keys[i] + 1024) < 0;
    }
    head = list_reverse(head);
    crc = list_crc(head, crc);
    int removed = 0;
    head = list_remove_multiples(head, 3 + (int)(seed % 5), &removed);
    head = list_sort(head);
    crc = list_crc(head, crc);
    head = list_reverse(head);
    crc = list_crc(head, crc);
    return ((unsigned int)crc << 16) ^ (unsigned int)(found * 131 + misses * 7 + removed);
}

/* ---- integer matrices */

static int mat_a[N][N], mat_b[N][N], mat_c[N][N];

static void mat_fill(unsigned int seed)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            unsigned int r = rng_next();
            mat_a[i][j] = (int)(r & 0xff) - 128;
            mat_b[i][j] = (int)((r >> 8) & 0x7f) + (int)(seed & 7);
        }
}

static void mat_mul(int c[N][N], int a[N][N], int b[N][N])
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            int s = 0;
            for (int k = 0; k < N; k++)
                s += a[i][k] * b[k][j];
            c[i][j] = s;
        }
}

static void mat_transpose(int m[N][N])
{
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++) {
            int t = m[i][j];
            m[i][j] = m[j][i];
            m[j][i] = t;
        }
}

static void mat_scale_add(int m[N][N], int scale, int add)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            m[i][j] = m[i][j] * scale + add;
}

/* keep bits of each element selected by a per-row mask, then clamp */
static void mat_mask_clamp(int m[N][N], int limit)
{
    for (int i = 0; i < N; i++) {
        int mask = 0x0ff0ff0f >> i;
        for (int j = 0; j < N; j++) {
            int v = m[i][j] & (mask | 0xff);
            if (v > limit)
                v = limit;
            else if (v < -limit)
                v = -limit;
            m[i][j] = v;
        }
    }
}

static unsigned int mat_work(unsigned int seed)
{
    mat_fill(seed);
    mat_mul(mat_c, mat_a, mat_b);
    int trace = 0, colmax = -0x7fffffff;
    for (int i = 0; i < N; i++) {
        trace += mat_c[i][i];
        if (mat_c[i][N - 1 - i] > colmax)
            colmax = mat_c[i][N - 1 - i];
    }
    mat_transpose(mat_c);
    mat_scale_add(mat_c, 3, -(int)seed);
    mat_mask_clamp(mat_c, 20000);
    mat_mul(mat_a, mat_c, mat_b);
    unsigned short crc = 0xffff;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            crc = crc16_word(crc, (unsigned int)mat_a[i][j]);
    return ((unsigned int)crc << 16) ^ (unsigned int)trace ^ ((unsigned int)colmax << 3);
}

/* ---- a state machine scanning text: numbers, identifiers, commas */

enum state { START, SIGN, NUMBER, HEX, IDENT, SPACE, JUNK, NSTATES };

static char text[TEXT_LEN + 1];

static const char *const words[] = {
    "alpha", "x9", "-42", "0x1f", "17", "beta_2", "+7", "??", "1e3", "gamma",
    "0", "delta", "255", "-0x80", "_tmp", "12ab", "--", "zeta9", "31337", "q",
};

static void text_fill(void)
{
    int n = 0;
    while (n < TEXT_LEN - 12) {
        const char *w = words[rng_next() % (sizeof words / sizeof words[0])];
        while (*w && n < TEXT_LEN - 2)
            text[n++] = *w++;
        unsigned int sep = rng_next() & 7;
        text[n++] = sep < 5 ? ',' : sep < 7 ? ' ' : ';';
    }
    text[n] = 0;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int hex_value(char c)
{
    if (is_digit(c))
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

struct scan {
    unsigned int counts[NSTATES];
    unsigned int tokens, commas, transitions;
    int sum;
    unsigned int idhash;
};

static void scan_text(const char *p, struct scan *s)
{
    enum state st = START;
    int value = 0, negative = 0;
    unsigned int h = 0;
    for (;; p++) {
        char c = *p;
        enum state next = st;
        switch (st) {
        case START:
        case SPACE:
            if (c == '-' || c == '+') {
                negative = c == '-';
                value = 0;
                next = SIGN;
            } else if (is_digit(c)) {
                negative = 0;
                value = c - '0';
                next = NUMBER;
            } else if (is_alpha(c)) {
                h = 2166136261u ^ (unsigned char)c;
                next = IDENT;
            } else if (c == ' ') {
                next = SPACE;
            } else if (c != ',' && c != 0) {
                next = JUNK;
            }
            break;
        case SIGN:
            if (is_digit(c)) {
                value = c - '0';
                next = NUMBER;
            } else {
                next = JUNK;
            }
            break;
        case NUMBER:
            if (is_digit(c)) {
                value = value * 10 + (c - '0');
            } else if (c == 'x' && value == 0) {
                next = HEX;
            } else if (is_alpha(c)) {
                next = JUNK;
            }
            break;
        case HEX:
            if (hex_value(c) >= 0)
                value = value * 16 + hex_value(c);
            else if (is_alpha(c))
                next = JUNK;
            break;
        case IDENT:
            if (is_alpha(c) || is_digit(c))
                h = (h ^ (unsigned char)c) * 16777619u;
            break;
        case JUNK:
        default:
            break;
        }
        if (c == ',' || c == ' ' || c == ';' || c == 0) {  /* end of a token */
            if (st == NUMBER || st == HEX) {
                s->sum += negative ? -value : value;
                s->tokens++;
            } else if (st == IDENT) {
                s->idhash ^= h + s->tokens;
                s->tokens++;
            } else if (st == JUNK || st == SIGN) {
                s->counts[JUNK]++;
            }
            if (c == ',')
                s->commas++;
            next = c == ' ' ? SPACE : START;
        }
        if (next != st)
            s->transitions++;
        s->counts[next]++;
        st = next;
        if (c == 0)
            return;
    }
}

static unsigned int text_work(unsigned int seed)
{
    struct scan s;
    memset(&s, 0, sizeof s);
    text_fill();
    text[seed % (TEXT_LEN / 2)] ^= (char)(seed & 1);  /* a little damage, seed-dependent */
    scan_text(text, &s);
    unsigned int crc = crc32_bytes(0, (const unsigned char *)&s, sizeof s);
    return crc32_bytes(crc, (const unsigned char *)text, TEXT_LEN / 4);
}

/* ---- one iteration, the run */

__attribute__((noinline)) void mark_warm(void)
{
    __asm__ volatile("" ::: "memory");  /* a symbol the bench can stop at */
}

static unsigned int iteration(unsigned int seed)
{
    rng_seed(seed);
    unsigned int lists = list_work(seed);
    unsigned int matrix = mat_work(seed);
    unsigned int scanned = text_work(seed);
    unsigned int crc = crc32_word(0, lists);
    crc = crc32_word(crc, matrix);
    return crc32_word(crc, scanned);
}

static void report(const char *what, unsigned int n, unsigned int value)
{
    char line[64];
    char *p = put_text(line, what);
    p = put_dec(p, n);
    p = put_text(p, " checksum=");
    p = put_hex(p, value);
    *p++ = '\n';
    sys_write(1, line, (unsigned long)(p - line));
}

int main(void)
{
    unsigned int n = iterations, acc = 0;
    crc16_init();
    crc32_init();
    for (unsigned int i = 0; i < n; i++) {
        if (i == warmup)
            mark_warm();
        unsigned int check = iteration(i % SEEDS);
        if (verbose)
            report("seed ", i % SEEDS, check);
        acc = crc32_word(acc, check);
    }
    result = acc;
    char line[32];
    char *p = put_text(line, "mark result=");
    p = put_hex(p, acc);
    *p++ = '\n';
    sys_write(1, line, (unsigned long)(p - line));
    return 0;
}

__asm__(
    "  .section .text._start, \"ax\", @progbits\n"
    "  .globl _start\n"
    "_start:\n"
    "  .option push\n"
    "  .option norelax\n"
    "  la gp, __global_pointer$\n"
    "  .option pop\n"
    "  call main\n"
    "  li a7, 93\n"
    "  ecall\n"
    "1: j 1b\n");
