/*
   One-thread row loops outside PETSc on a Matrix Market matrix: the plain AIJ loop against "row lanes", C consecutive
   rows multiplied together, a row per vector lane, from a copy whose entries are interleaved (entry j of the C rows
   together, rows shorter than the longest of their C padded). Each lane adds its row's products in the row's order,
   and a padded entry is not added (a select, not a multiply by zero): the same bits as the AIJ loop, checked.
   On the 2-core machine (2026-11-21; docs/design.md, "What went and why") lanes were 1.2-1.3x the AIJ loop on 4elt (6 % padding) and
   0.55-0.95x wherever rows of one slice differ in length by more (padding 16-147 %); not taken into the library.

     gcc -O3 -fopenmp-simd lanes.c -o lanes && ./lanes matrix.mtx[.gz] 200        # file, repetitions
*/
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#pragma GCC optimize("fp-contract=off")

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

typedef struct {
  int i, j;
  double v;
} Entry;

static int CmpE(const void *a, const void *b)
{
  const Entry *p = a, *q = b;
  return p->i != q->i ? (p->i > q->i) - (p->i < q->i) : (p->j > q->j) - (p->j < q->j);
}

static void AIJLoop(int m, const int *rp, const int *cj, const double *va, const double *x, double *y)
{
  for (int i = 0; i < m; i++) {
    const int     n = rp[i + 1] - rp[i], *idx = cj + rp[i];
    const double *v = va + rp[i];
    double        sum = 0;
    for (int j = 0; j < n; j++) sum += v[j] * x[idx[j]];
    y[i] = sum;
  }
}

#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

/* lanes of C rows: slice s has width w[s] and starts at sp[s] in the interleaved copy; len: each row's length */
#define LANES(C) \
  CLONES static void Lanes##C(int m, const int *restrict sp, const int *restrict len, const int *restrict c8, const double *restrict v8, const double *restrict x, double *restrict y) \
  { \
    for (int s = 0; s < m / C; s++) { \
      double acc[C]; \
      int    l0[C]; \
      const int w = (sp[s + 1] - sp[s]) / C, *restrict c = c8 + sp[s]; \
      const double *restrict v = v8 + sp[s]; \
      for (int l = 0; l < C; l++) acc[l] = 0, l0[l] = len[s * C + l]; \
      for (int j = 0; j < w; j++) \
        for (int l = 0; l < C; l++) { \
          const double p = v[j * C + l] * x[c[j * C + l]]; \
          acc[l]         = j < l0[l] ? acc[l] + p : acc[l]; \
        } \
      for (int l = 0; l < C; l++) y[s * C + l] = acc[l]; \
    } \
  }
LANES(8)
LANES(4)

static void Build(int m, const int *rp, const int *cj, const double *va, int C, int **sp, int **len, int **c8, double **v8, double *pad)
{
  int ns = m / C, tot = 0;
  *sp  = malloc(sizeof(int) * (ns + 1));
  *len = malloc(sizeof(int) * m);
  for (int s = 0; s < ns; s++) {
    int w = 0;
    for (int l = 0; l < C; l++) w = w > rp[s * C + l + 1] - rp[s * C + l] ? w : rp[s * C + l + 1] - rp[s * C + l];
    (*sp)[s] = tot;
    tot += w * C;
  }
  (*sp)[ns] = tot;
  *c8       = calloc(tot + 1, sizeof(int));
  *v8       = calloc(tot + 1, sizeof(double));
  for (int s = 0; s < ns; s++)
    for (int l = 0; l < C; l++) {
      int r = s * C + l, n = rp[r + 1] - rp[r];
      (*len)[r] = n;
      for (int j = 0; j < n; j++) (*c8)[(*sp)[s] + j * C + l] = cj[rp[r] + j], (*v8)[(*sp)[s] + j * C + l] = va[rp[r] + j];
      for (int j = n; j < ((*sp)[s + 1] - (*sp)[s]) / C; j++) (*c8)[(*sp)[s] + j * C + l] = n ? cj[rp[r] + n - 1] : 0;
    }
  *pad = (double)tot / rp[ns * C];
}

int main(int argc, char **argv)
{
  char  line[1024], cmd[1100];
  int   reps = argc > 2 ? atoi(argv[2]) : 200, m, n, nz, sym, pat, ne = 0;
  FILE *f;
  if (argc < 2) return 1;
  if (strstr(argv[1], ".gz")) snprintf(cmd, sizeof(cmd), "zcat %s", argv[1]), f = popen(cmd, "r");
  else f = fopen(argv[1], "r");
  if (!f || !fgets(line, sizeof(line), f)) return 1;
  sym = strstr(line, "symmetric") != NULL;
  pat = strstr(line, "pattern") != NULL;
  while (fgets(line, sizeof(line), f) && line[0] == '%');
  sscanf(line, "%d %d %d", &m, &n, &nz);
  Entry *e = malloc(sizeof(Entry) * 2 * (size_t)nz);
  for (int k = 0; k < nz; k++) {
    int    i, j;
    double v = 1;
    if (pat ? fscanf(f, "%d %d", &i, &j) != 2 : fscanf(f, "%d %d %lf", &i, &j, &v) != 3) return 1;
    v = v + 0.001 * (k % 7);
    e[ne++] = (Entry){i - 1, j - 1, v};
    if (sym && i != j) e[ne++] = (Entry){j - 1, i - 1, v};
  }
  qsort(e, ne, sizeof(Entry), CmpE);
  int    *rp = calloc(m + 1, sizeof(int)), *cj = malloc(sizeof(int) * ne);
  double *va = malloc(sizeof(double) * ne), *x = malloc(sizeof(double) * n), *y0 = malloc(sizeof(double) * m), *y1 = malloc(sizeof(double) * m);
  for (int k = 0; k < ne; k++) rp[e[k].i + 1]++, cj[k] = e[k].j, va[k] = e[k].v;
  for (int i = 0; i < m; i++) rp[i + 1] += rp[i];
  for (int j = 0; j < n; j++) x[j] = 1.0 / (j + 3);
  m -= m % 8; /* whole slices only: the tail would be a scalar loop */
  int    *sp8, *len8, *c8, *sp4, *len4, *c4;
  double *v8, *v4, pad8, pad4, t[3][1000];
  Build(m, rp, cj, va, 8, &sp8, &len8, &c8, &v8, &pad8);
  Build(m, rp, cj, va, 4, &sp4, &len4, &c4, &v4, &pad4);
  AIJLoop(m, rp, cj, va, x, y0);
  for (int k = 0; k < reps; k++) {
    double t0 = Now();
    AIJLoop(m, rp, cj, va, x, y0);
    t[0][k] = Now() - t0;
    t0      = Now();
    Lanes8(m, sp8, len8, c8, v8, x, y1);
    t[1][k] = Now() - t0;
    if (memcmp(y0, y1, sizeof(double) * m)) { printf("lanes 8 differ\n"); return 1; }
    t0 = Now();
    Lanes4(m, sp4, len4, c4, v4, x, y1);
    t[2][k] = Now() - t0;
    if (memcmp(y0, y1, sizeof(double) * m)) { printf("lanes 4 differ\n"); return 1; }
  }
  for (int v = 0; v < 3; v++) qsort(t[v], reps, sizeof(double), CmpD);
  printf("%s: %d rows, %d nonzeros; padding 8: %.3f, 4: %.3f; median us aij %.1f lanes8 %.1f (%.2fx) lanes4 %.1f (%.2fx)\n", argv[1], m, rp[m], pad8, pad4, 1e6 * t[0][reps / 2], 1e6 * t[1][reps / 2], t[0][reps / 2] / t[1][reps / 2], 1e6 * t[2][reps / 2], t[0][reps / 2] / t[2][reps / 2]);
  return 0;
}
