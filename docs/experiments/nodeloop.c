/*
   One-thread row loops outside PETSc on the block-size-3 elasticity pattern (27-point stencil, 3 rows per node with the
   same columns): the plain AIJ loop against "node" loops that multiply a node's 3 rows together (each column index and
   x entry loaded once, three independent sums, each row still summed in its own order: the same bits).

     gcc -O3 -DAHEAD=4 nodeloop.c -o nodeloop && ./nodeloop 60 5      # n (nodes per direction), repetitions

   What it showed on the 2-core machine (docs/design.md, "Row nodes"): a node loop reads the column indices of one row of three
   and skips the other two, and the values of the three rows as three short streams; the hardware prefetcher loses
   those partial streams and the node loop ran 2x slower than the plain loop, which streams everything. Prefetching
   the column indices and values of the node AHEAD nodes ahead (4) made it 1.1-1.4x faster than the plain loop.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef AHEAD
  #define AHEAD 4
#endif

static double Now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* y = A x node by node (3 rows with the same columns), the node ahead nodes ahead prefetched (0: none) */
static void NodeLoop(int m, const int *rp, const int *cj, const double *va, const double *x, double *y, int ahead)
{
  for (int r = 0; r < m; r += 3) {
    const int     q0 = rp[r], nz = rp[r + 1] - q0, *c = cj + q0;
    const double *v  = va + q0;
    double        s0 = 0, s1 = 0, s2 = 0;
    if (ahead && r + 3 * ahead < m) {
      const int qn = rp[r + 3 * ahead], qe = rp[r + 3 * ahead + 1], ve = rp[r + 3 * ahead + 3];
      for (int p = qn; p < qe; p += 16) __builtin_prefetch(cj + p);
      __builtin_prefetch(cj + qe - 1);
      for (int p = qn; p < ve; p += 8) __builtin_prefetch(va + p);
    }
    for (int j = 0; j < nz; j++) {
      const double xj = x[c[j]];
      s0 += v[j] * xj;
      s1 += v[nz + j] * xj;
      s2 += v[2 * nz + j] * xj;
    }
    y[r]     = s0;
    y[r + 1] = s1;
    y[r + 2] = s2;
  }
}

int main(int argc, char **argv)
{
  const int n = argc > 1 ? atoi(argv[1]) : 60, reps = argc > 2 ? atoi(argv[2]) : 5, m = 3 * n * n * n;
  int      *rp = malloc(sizeof(int) * (m + 1)), *cj = malloc(sizeof(int) * (size_t)m * 81), q = 0;
  double   *va = malloc(sizeof(double) * (size_t)m * 81), *x = malloc(sizeof(double) * m), *y = malloc(sizeof(double) * m), *y2 = malloc(sizeof(double) * m);

  rp[0] = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++) {
        const int node = (i * n + j) * n + k;
        int       cols[81], nc = 0;
        for (int a = -1; a <= 1; a++)
          for (int b = -1; b <= 1; b++)
            for (int c = -1; c <= 1; c++) {
              const int ii = i + a, jj = j + b, kk = k + c;
              if (ii < 0 || jj < 0 || kk < 0 || ii >= n || jj >= n || kk >= n) continue;
              for (int d = 0; d < 3; d++) cols[nc++] = 3 * ((ii * n + jj) * n + kk) + d;
            }
        for (int d = 0; d < 3; d++) {
          for (int t = 0; t < nc; t++, q++) {
            cj[q] = cols[t];
            va[q] = 1.0 / (1 + t + d);
          }
          rp[3 * node + d + 1] = q;
        }
      }
  for (int i = 0; i < m; i++) x[i] = 1 + i % 7;
  for (int rep = 0; rep < reps; rep++) {
    double t0, t1, t2, t3, t4;
    int    same;
    t0 = Now();
    for (int r = 0; r < m; r++) {
      double s = 0;
      for (int p = rp[r]; p < rp[r + 1]; p++) s += va[p] * x[cj[p]];
      y[r] = s;
    }
    t1 = Now();
    NodeLoop(m, rp, cj, va, x, y2, 0);
    t2   = Now();
    same = !memcmp(y, y2, sizeof(double) * m);
    t3   = Now();
    NodeLoop(m, rp, cj, va, x, y2, AHEAD);
    t4   = Now();
    same = same && !memcmp(y, y2, sizeof(double) * m);
    printf("plain %.1f ms   node %.1f ms   node, prefetched %d ahead %.1f ms   same bits %d\n", 1e3 * (t1 - t0), 1e3 * (t2 - t1), AHEAD, 1e3 * (t4 - t3), same);
  }
  return 0;
}
