/*
   The OpenMP product kernel of the CSR-k structure, y = A x (+ z) in the user's ordering, shared by the sequential
   and MPI types (and by csrkcuda bound to the CPU): the loop nest of the k levels over each thread's rows, with the
   column indices as 32-bit columns, 16-bit offsets from the diagonal or row patterns, and the row slices
   (csrkslices.c) and row nodes (csrknodes.c) where the structure has them.
*/
#include "csrkimpl.h"
#if defined(_OPENMP)
  #include <omp.h>
#endif

/* One thread's rows R0..R1 (in the loop nest of the k levels) with the output fixed at compile time: out[r] = OUT, the
   stored value of sum (out is y, or the product in the internal order of a reordered copy). The column of the row's
   j-th entry is ix[j] of the index array IDX of type ITYPE, read as xr[ix[j]]: xr = xx and the 32-bit columns cj
   (XSTEP 0), or xr = xx + r and the 16-bit offsets co from the diagonal (XSTEP 1). xr advances with the row instead of being xx + r
   in each: the compiler then addresses xr[co[q]] directly, as it does xx[cj[q]], where with xx + r it adds r to every
   offset (one more instruction per nonzero). The loop has the shape of PETSc's AIJ kernel (a count and pointers to
   the row), which measured faster on one core than a loop bounded by the next row pointer (docs/history/experiments.md). */
#define CSRK_ROWS(R0, R1, OUT, XSTEP, ITYPE, IDX) \
  do { \
    const PetscScalar *xr = xx + (XSTEP) * (R0); \
    for (PetscInt r = (R0); r < (R1); r++, xr += (XSTEP)) { \
      const CSRKIdx      q0 = rp[r], nz = rp[r + 1] - q0; \
      const PetscScalar *v  = va + q0; \
      const ITYPE       *ix = (IDX) + q0; \
      PetscScalar        sum = 0.0; \
      for (CSRKIdx j = 0; j < nz; j++) sum += v[j] * xr[ix[j]]; \
      out[r] = OUT; \
    } \
  } while (0)
/* The same with row patterns: row r's offsets from the diagonal are pattern rowpat[r] of the dictionary (pp, po),
   which stays in the L1 cache, instead of an index per entry. Each row's values start at its row pointer rather than
   after the previous row's (which would chain every row's loads to the previous row's pattern lookup): the row-pointer
   form measured at least as fast for its 4 bytes per row (docs/history/experiments.md) */
#define CSRK_PATTERN_ROWS(R0, R1, OUT, UNUSED) \
  do { \
    const PetscScalar *xr = xx + (R0); \
    for (PetscInt r = (R0); r < (R1); r++, xr++) { \
      const CSRKIdx      p0 = pp[rowpat[r]], nz = pp[rowpat[r] + 1] - p0; \
      const int32_t     *ix = po + p0; \
      const PetscScalar *v  = va + rp[r]; \
      PetscScalar        sum = 0.0; \
      for (CSRKIdx j = 0; j < nz; j++) sum += v[j] * xr[ix[j]]; \
      out[r] = OUT; \
    } \
  } while (0)
/* The same with row slices (csrkslices.c), which add z themselves */
#define CSRK_SLICE_ROWS(R0, R1, OUT, UNUSED) q = MatCSRKSliceRows(st, (R0), (R1), q, xx, zz, out)
/* the loop nest of the k levels over the thread's units, with ROWS one of the two row loops above */
#define CSRK_NEST(ROWS, OUT, ...) \
  do { \
    if (st->k == 1) { \
      ROWS(r0, r1, OUT, __VA_ARGS__); \
    } else if (st->k == 2) { \
      for (PetscInt s = st->tstart[t]; s < st->tstart[t + 1]; s++) ROWS(st->srptr[s], st->srptr[s + 1], OUT, __VA_ARGS__); \
    } else { \
      for (PetscInt q3 = st->tstart[t]; q3 < st->tstart[t + 1]; q3++) \
        for (PetscInt s = st->ssrptr[q3]; s < st->ssrptr[q3 + 1]; s++) ROWS(st->srptr[s], st->srptr[s + 1], OUT, __VA_ARGS__); \
    } \
  } while (0)
/* the two outputs: out = A x or out = A x + zz */
#define CSRK_OUTPUTS(ROWS, ...) \
  do { \
    if (!zz) CSRK_NEST(ROWS, sum, __VA_ARGS__); \
    else CSRK_NEST(ROWS, zz[r] + sum, __VA_ARGS__); \
  } while (0)

/* rows ahead that the gathers through a permutation prefetch (one thread waits on each random load otherwise). The
   gathers miss in memory once x and y exceed the caches, so the distance must cover a memory latency; 128 was the
   best of the distances measured on a permuted 7-point product (docs/history/experiments.md) */
#define CSRK_GATHER_AHEAD 128

/* y = A x (+ z) with row slices filled up to st->rfill < m (one thread, the AIJ arrays shared): the filled rows from
   the slices, block by block as the fill went, the others with the AIJ loop; tpart (if not NULL): the time of each part */
static PetscErrorCode CSRKMultFilling(const MatCSRKStructure *st, const PetscScalar *x, const PetscScalar *z, PetscScalar *y, PetscLogDouble *tpart)
{
  const CSRKIdx *restrict     rp = st->rowptr, *restrict cj = st->colidx;
  const PetscScalar *restrict va = st->val, *restrict xx = x, *restrict zz = z;
  PetscScalar *restrict       out = y;
  const PetscInt              r0 = st->rfill, r1 = st->m;
  PetscLogDouble              t0, t1, t2;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  if (st->k == 1) (void)MatCSRKSliceRows(st, 0, st->rfill, 0, x, z, y);
  else {
    PetscInt q = 0;
    for (PetscInt s = 0; s < st->nsr && st->srptr[s] < st->rfill; s++) q = MatCSRKSliceRows(st, st->srptr[s], PetscMin(st->srptr[s + 1], st->rfill), q, x, z, y);
  }
  PetscCall(PetscTime(&t1));
  if (!zz) CSRK_ROWS(r0, r1, sum, 0, CSRKIdx, cj);
  else CSRK_ROWS(r0, r1, zz[r] + sum, 0, CSRKIdx, cj);
  PetscCall(PetscTime(&t2));
  if (tpart) {
    tpart[0] = t1 - t0;
    tpart[1] = t2 - t1;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = A x (+ z) in the user's ordering. The threads' first-touch placement also fixed their row ranges: the
   kernel uses the same ones. tpart (if not NULL): while the row slices are being filled, the time of the filled
   rows and of the others (CSRKMultFilling()) */
PetscErrorCode MatCSRKMultKernel(const MatCSRKStructure *st, const PetscScalar *x, const PetscScalar *z, PetscScalar *y, PetscLogDouble *tpart)
{
  PetscFunctionBegin;
  if (st->sval && st->rfill < st->m) {
    PetscCall(CSRKMultFilling(st, x, z, y, tpart));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#if defined(_OPENMP)
  #pragma omp parallel num_threads((int)st->nthreads)
#endif
  {
    PetscInt                    t = 0, r0, r1;
    const CSRKIdx *restrict     rp = st->rowptr, *restrict cj = st->colidx, *restrict perm = st->perm;
    const int16_t *restrict     co = st->coloff;
    const uint16_t *restrict    rowpat = st->rowpat;
    const CSRKIdx *restrict     pp     = st->patptr;
    const int32_t *restrict     po     = st->patoff;
    const PetscScalar *restrict va = st->val, *restrict xx = x;
    /* a reordered copy forms the product in the internal order, in ywork, and adds z when it gathers it into y */
    PetscScalar *restrict       out = st->ywork ? st->ywork : y;
    const PetscScalar *restrict zz  = st->ywork ? NULL : z;
#if defined(_OPENMP)
    t = omp_get_thread_num();
#endif
    CSRKThreadRows(st, t, &r0, &r1);
    if (st->xwork) {
      /* reordered copy: x in the internal order; every thread needs all of it */
      for (PetscInt r = r0; r < r1; r++) {
        if (r + CSRK_GATHER_AHEAD < r1) __builtin_prefetch(x + perm[r + CSRK_GATHER_AHEAD]);
        st->xwork[r] = x[perm[r]];
      }
#if defined(_OPENMP)
  #pragma omp barrier
#endif
      xx = st->xwork;
    }
    if (st->nodesz && !st->nodesoff) MatCSRKNodeRows(st, xx, zz, out); /* one thread: all rows */
    else if (st->sval) {
      PetscInt q = rp[r0]; /* the slices' values of the thread's rows, read in order from its first row's (csrkslices.c) */
      CSRK_NEST(CSRK_SLICE_ROWS, sum, 0);
    }
    else if (rowpat) CSRK_OUTPUTS(CSRK_PATTERN_ROWS, 0);
    else if (co) CSRK_OUTPUTS(CSRK_ROWS, 1, int16_t, co);
    else CSRK_OUTPUTS(CSRK_ROWS, 0, CSRKIdx, cj);
    if (st->ywork) {
      /* y in the user's order: this thread's share of the user's rows, each read from its internal row */
      const CSRKIdx *restrict     ip = st->iperm;
      const PetscScalar *restrict yw = st->ywork;
#if defined(_OPENMP)
  #pragma omp barrier
#endif
      for (PetscInt i = r0; i < r1; i++) {
        if (i + CSRK_GATHER_AHEAD < r1) __builtin_prefetch(yw + ip[i + CSRK_GATHER_AHEAD]);
        y[i] = z ? z[i] + yw[ip[i]] : yw[ip[i]];
      }
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
