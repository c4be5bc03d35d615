/*
   The per-product permutation of a reordered matrix outside PETSc: x gathered into the internal order,
   xw[r] = x[perm[r]], with a random permutation of m entries. Three ways, each checked bit for bit:
     gather    the library's loop: random reads of x, the entry `ahead` rows ahead prefetched (0: none);
     scatter   x read in its own order, xw[iperm[i]] = x[i]: random writes;
     bucketed  two streaming passes: x read in its own order and appended to the bucket of its internal block
               (B entries, so that a block of xw stays in L2), then each bucket written into its block of xw;
               random accesses only inside an L2-sized block. Index data: iperm (4 B) for the first pass, a
               16-bit offset in the block for the second.
   Neither alternative beat the prefetched gather on the 2-core machine or on the 16-core host
   (2026-11-21; docs/design.md, "What went and why"), so the library keeps the gather.

     gcc -O3 -fopenmp permgather.c -o permgather && OMP_NUM_THREADS=1 ./permgather 2097152 20 16384 128
                                     # m, repetitions, block size (a power of 2, <= 65536), prefetch distance
*/
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <omp.h>

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

int main(int argc, char **argv)
{
  const int m = argc > 1 ? atoi(argv[1]) : 1 << 21, reps = argc > 2 ? atoi(argv[2]) : 20, B = argc > 3 ? atoi(argv[3]) : 1 << 16, ahead = argc > 4 ? atoi(argv[4]) : 128;
  int       shift = 0, nt = omp_get_max_threads();
  while ((1 << shift) < B) shift++;
  const int nb = (m + B - 1) / B;
  int      *perm = malloc(sizeof(int) * m), *iperm = malloc(sizeof(int) * m);
  double   *x = malloc(sizeof(double) * m), *xw = malloc(sizeof(double) * m), *ref = malloc(sizeof(double) * m), *tmp = malloc(sizeof(double) * m);
  uint16_t *dloc = malloc(sizeof(uint16_t) * m);
  /* start[t * nb + b]: where thread t's entries of bucket b go in tmp (buckets in order, threads in order inside) */
  int      *start = calloc((size_t)nt * nb + 1, sizeof(int));
  double    tg[64], tb[64], tp[64], ts[64];
  srand(1);
  for (int i = 0; i < m; i++) perm[i] = i;
  for (int i = m - 1; i > 0; i--) {
    int j = (int)(((unsigned long)rand() * RAND_MAX + rand()) % (unsigned long)(i + 1)), s = perm[i];
    perm[i] = perm[j], perm[j] = s;
  }
  for (int r = 0; r < m; r++) iperm[perm[r]] = r;
  for (int i = 0; i < m; i++) x[i] = 1.0 / (i + 1);
  for (int r = 0; r < m; r++) ref[r] = x[perm[r]];
  /* the set-up: counts of each thread's source range per bucket, prefix sums, then the 16-bit offsets */
  for (int t = 0; t < nt; t++) {
    int i0 = (int)((long)m * t / nt), i1 = (int)((long)m * (t + 1) / nt);
    for (int i = i0; i < i1; i++) start[t * nb + (iperm[i] >> shift) + 1]++;
  }
  {
    int *cnt = calloc((size_t)nt * nb + 1, sizeof(int)), s = 0;
    for (int b = 0; b < nb; b++)
      for (int t = 0; t < nt; t++) cnt[t * nb + b] = s, s += start[t * nb + b + 1];
    memcpy(start, cnt, sizeof(int) * nt * nb);
    free(cnt);
    for (int t = 0; t < nt; t++) {
      int i0 = (int)((long)m * t / nt), i1 = (int)((long)m * (t + 1) / nt), *cur = malloc(sizeof(int) * nb);
      memcpy(cur, start + t * nb, sizeof(int) * nb);
      for (int i = i0; i < i1; i++) dloc[cur[iperm[i] >> shift]++] = (uint16_t)(iperm[i] & (B - 1));
      free(cur);
    }
  }
  for (int k = 0; k < reps; k++) {
    double t0 = Now();
#pragma omp parallel for schedule(static)
    for (int r = 0; r < m; r++) {
      if (ahead && r + ahead < m) __builtin_prefetch(x + perm[r + ahead]);
      xw[r] = x[perm[r]];
    }
    tg[k] = Now() - t0;
    if (memcmp(xw, ref, sizeof(double) * m)) { printf("gather wrong\n"); return 1; }
    memset(xw, 0, sizeof(double) * m);
    t0 = Now();
#pragma omp parallel for schedule(static)
    for (int i = 0; i < m; i++) xw[iperm[i]] = x[i];
    ts[k] = Now() - t0;
    if (memcmp(xw, ref, sizeof(double) * m)) { printf("scatter wrong\n"); return 1; }
    memset(xw, 0, sizeof(double) * m);
    t0 = Now();
#pragma omp parallel
    {
      int  t = omp_get_thread_num(), i0 = (int)((long)m * t / nt), i1 = (int)((long)m * (t + 1) / nt);
      int  cur[4096];
      memcpy(cur, start + t * nb, sizeof(int) * nb);
      for (int i = i0; i < i1; i++) tmp[cur[iperm[i] >> shift]++] = x[i];
#pragma omp barrier
#pragma omp master
      tp[k] = Now() - t0;
      /* buckets split over threads by block */
      int b0 = (int)((long)nb * t / nt), b1 = (int)((long)nb * (t + 1) / nt);
      for (int b = b0; b < b1; b++) {
        double *restrict blk = xw + ((size_t)b << shift);
        int              j1  = b + 1 < nb ? start[b + 1] : m, len = b + 1 < nb ? B : m - (b << shift);
        /* the block's lines in order first: its writes come in random order, which the hardware prefetcher cannot follow */
        for (int q = 0; q < len; q += 8) __builtin_prefetch(blk + q, 1);
        for (int j = start[b]; j < j1; j++) blk[dloc[j]] = tmp[j];
      }
    }
    tb[k] = Now() - t0;
    if (memcmp(xw, ref, sizeof(double) * m)) { printf("bucketed wrong\n"); return 1; }
  }
  qsort(tg, reps, sizeof(double), CmpD);
  qsort(tb, reps, sizeof(double), CmpD);
  qsort(tp, reps, sizeof(double), CmpD);
  qsort(ts, reps, sizeof(double), CmpD);
  printf("scatter median %.2f ms (min %.2f)\n", 1e3 * ts[reps / 2], 1e3 * ts[0]);
  printf("first pass median %.2f ms\n", 1e3 * tp[reps / 2]);
  printf("m %d threads %d block %d buckets %d ahead %d: gather median %.2f ms (min %.2f), bucketed median %.2f ms (min %.2f): %.2fx\n", m, nt, B, nb, ahead, 1e3 * tg[reps / 2], 1e3 * tg[0], 1e3 * tb[reps / 2], 1e3 * tb[0], tg[reps / 2] / tb[reps / 2]);
  return 0;
}
