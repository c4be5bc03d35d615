/*
   Can the gather of x into the internal order hide behind the product on one core? A banded 7-entry product over m
   rows (row r reads xw[r - W .. r + W], as a reordered stencil does) after a gather xw[r] = x[perm[r]] through a
   random permutation, against the same product with the gather interleaved: before row r, x is gathered up to
   row r + W + D, so that the random reads of the gather run beside the streamed reads of the matrix. Both give the
   same bits (checked). On the 2-core machine and on the 16-core host the interleaved form was 0.87-1.02x the
   separate passes (2026-11-21; docs/design.md, "What went and why"): the random reads and the streams share the core's misses.

     gcc -O3 gatherfuse.c -o gatherfuse && ./gatherfuse 2097152 15 4096        # m, repetitions, D
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NZ 7

static double Now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int CmpD(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* rows [r0, r1) of the banded product */
static void Rows(int r0, int r1, const int *col, const double *val, const double *xw, double *y)
{
  for (int r = r0; r < r1; r++) {
    double s = 0;
    for (int j = 0; j < NZ; j++) s += val[(long)r * NZ + j] * xw[col[(long)r * NZ + j]];
    y[r] = s;
  }
}

/* xw[g0..g1) gathered from x through perm, 128 ahead prefetched */
static void Gather(int g0, int g1, int m, const int *perm, const double *x, double *xw)
{
  for (int g = g0; g < g1; g++) {
    if (g + 128 < m) __builtin_prefetch(x + perm[g + 128]);
    xw[g] = x[perm[g]];
  }
}

int main(int argc, char **argv)
{
  const int m = argc > 1 ? atoi(argv[1]) : 1 << 21, reps = argc > 2 ? atoi(argv[2]) : 15, D = argc > 3 ? atoi(argv[3]) : 4096, W = 128;
  const int off[NZ] = {-W, -W / 2, -1, 0, 1, W / 2, W};
  int      *perm = malloc(sizeof(int) * m), *col = malloc(sizeof(int) * (size_t)m * NZ);
  double   *x = malloc(8 * (size_t)m), *xw = malloc(8 * (size_t)m), *val = malloc(8 * (size_t)m * NZ), *y = malloc(8 * (size_t)m), *y2 = malloc(8 * (size_t)m);
  double    tsep[100], tfused[100], tprod[100];

  if (reps > 100) return 1;
  srand(1);
  for (int i = 0; i < m; i++) perm[i] = i;
  for (int i = m - 1; i > 0; i--) {
    int j = (int)(((unsigned long)rand() * RAND_MAX + rand()) % (unsigned long)(i + 1)), s = perm[i];
    perm[i] = perm[j], perm[j] = s;
  }
  for (int i = 0; i < m; i++) x[i] = 1.0 / (i + 1);
  for (long r = 0; r < m; r++)
    for (int j = 0; j < NZ; j++) {
      long c = r + off[j];
      col[r * NZ + j] = (int)(c < 0 ? 0 : c >= m ? m - 1 : c);
      val[r * NZ + j] = 1 + 0.1 * j;
    }
  for (int k = 0; k < reps; k++) {
    double t0 = Now();
    Gather(0, m, m, perm, x, xw);
    Rows(0, m, col, val, xw, y);
    tsep[k] = Now() - t0;
    memset(xw, 0, 8 * (size_t)m);
    t0 = Now();
    for (int r = 0, g = 0; r < m; r += 64) {
      const int r1 = r + 64 < m ? r + 64 : m, need = r1 + W + D < m ? r1 + W + D : m;
      Gather(g, need, m, perm, x, xw);
      g = need;
      Rows(r, r1, col, val, xw, y2);
    }
    tfused[k] = Now() - t0;
    if (memcmp(y, y2, 8 * (size_t)m)) {
      printf("the two forms differ\n");
      return 1;
    }
    t0 = Now();
    Rows(0, m, col, val, xw, y2);
    tprod[k] = Now() - t0;
  }
  qsort(tsep, reps, 8, CmpD);
  qsort(tfused, reps, 8, CmpD);
  qsort(tprod, reps, 8, CmpD);
  printf("m %d D %d: product alone %.2f ms, gather then product %.2f ms, interleaved %.2f ms (%.2fx)\n", m, D, 1e3 * tprod[reps / 2], 1e3 * tsep[reps / 2], 1e3 * tfused[reps / 2], tsep[reps / 2] / tfused[reps / 2]);
  return 0;
}
