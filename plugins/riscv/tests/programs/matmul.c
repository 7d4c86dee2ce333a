/* A small matrix multiply (int and 64-bit accumulators), transposes and a trace. */
#include "rt.h"

#define N 8

static int a[N][N], b[N][N], c[N][N];
static s64 cl[N][N];

int main(void)
{
    put_str("matmul\n");
    u32 seed = 2024;
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++) {
            seed = seed * 1664525u + 1013904223u;
            a[i][j] = (int)(seed >> 20) - 2048;
            seed = seed * 1664525u + 1013904223u;
            b[i][j] = (int)(seed >> 12) - 500000;
        }
    }
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++) {
            int acc = 0;
            s64 accl = 0;
            for (int k = 0; k < N; k++) {
                acc += a[i][k] * b[k][j];
                accl += (s64)a[i][k] * b[k][j];
            }
            c[i][j] = acc;
            cl[i][j] = accl;
        }
    }
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++) {
            put_dec(c[i][j]);
            put_char(j + 1 == N ? '\n' : ' ');
        }
    }
    s64 trace = 0;
    u32 h = 0;
    for (int i = 0; i < N; i++) {
        trace += cl[i][i];
        for (int j = 0; j < N; j++)
            h = mix(h, (u64)cl[j][i]);
    }
    put_kv("trace", trace);
    put_kx("hash", h);
    /* in-place transpose */
    for (int i = 0; i < N; i++) {
        for (int j = i + 1; j < N; j++) {
            int t = c[i][j];
            c[i][j] = c[j][i];
            c[j][i] = t;
        }
    }
    put_kv("c[1][6]", c[1][6]);
    put_kv("c[6][1]", c[6][1]);
    return 0;
}
