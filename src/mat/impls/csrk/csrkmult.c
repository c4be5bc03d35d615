/*
   The OpenMP product kernel of the CSR-k structure, y = A x (+ z) in the user's ordering: each thread gathers x for a
   reordered copy, runs the row loop the plan chose (csrkplan.c) over its rows, and scatters y. Also the two plain row
   loops of the table, over 16-bit offsets from the diagonal and over 32-bit columns.
*/
#include "csrkimpl.h"

/* One thread's rows R0..R1 with the output fixed at compile time: out[r] = OUT (out is y, or the product in the
   internal order of a reordered copy). Entry j of a row is xr[ix[j]] of the index array IDX of type ITYPE: xr = xx and
   32-bit columns (XSTEP 0), or xr advancing with the row and 16-bit offsets from the diagonal (XSTEP 1), which the
   compiler then addresses directly. The loop has the shape of PETSc's AIJ kernel (docs/history/experiments.md). */
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
/* rows ahead that the gathers through a permutation prefetch: the distance must cover a memory latency once x and y
   exceed the caches (docs/history/experiments.md) */
#define CSRK_GATHER_AHEAD 128

/* MatCSRKUnitRows - first and last+1 row of the top-level units [u0, u1) (rows, super-rows or super-super-rows) */
void MatCSRKUnitRows(const MatCSRKStructure *st, PetscInt u0, PetscInt u1, PetscInt *r0, PetscInt *r1)
{
  if (st->k == 1) {
    *r0 = u0;
    *r1 = u1;
  } else if (st->k == 2) {
    *r0 = st->srptr[u0];
    *r1 = st->srptr[u1];
  } else {
    *r0 = st->srptr[st->ssrptr[u0]];
    *r1 = st->srptr[st->ssrptr[u1]];
  }
}

/* MatCSRKThreadRows - the calling thread of a parallel region of the structure's threads: its number t, returned,
   and the first and last+1 row it multiplies (static schedule over the top-level units). The fills and the value
   refresh write each row from the thread that multiplies it, so that first touch places its pages there. */
PetscInt MatCSRKThreadRows(const MatCSRKStructure *st, PetscInt *r0, PetscInt *r1)
{
#if defined(_OPENMP)
  const PetscInt t = omp_get_thread_num();
#else
  const PetscInt t = 0;
#endif
  MatCSRKUnitRows(st, st->tstart[t], st->tstart[t + 1], r0, r1);
  return t;
}

/* y = A x (+ z) in the user's ordering. The threads' first-touch placement also fixed their row ranges: the
   kernel uses the same ones. */
void MatCSRKMultKernel(const MatCSRKStructure *st, const PetscScalar *x, const PetscScalar *z, PetscScalar *y)
{
#if defined(_OPENMP)
  #pragma omp parallel num_threads((int)st->nthreads)
#endif
  {
    PetscInt                    r0, r1, t = MatCSRKThreadRows(st, &r0, &r1);
    const CSRKIdx *restrict     perm = st->perm;
    const PetscScalar *restrict xx   = x;
    /* a reordered copy forms the product in the internal order, in ywork, and adds z when it gathers it into y */
    PetscScalar *restrict       out = st->ywork ? st->ywork : y;
    const PetscScalar *restrict zz  = st->ywork ? NULL : z;
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
    st->variant->mult(st, t, r0, r1, xx, zz, out);
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
}

/* 32-bit columns: the AIJ loop (over the AIJ arrays themselves for one thread in the natural order) */
static void CSRKColumnsMult(const MatCSRKStructure *st, PetscInt t, PetscInt r0, PetscInt r1, const PetscScalar *restrict xx, const PetscScalar *restrict zz, PetscScalar *restrict out)
{
  const CSRKIdx *restrict     rp = st->rowptr, *restrict cj = st->colidx;
  const PetscScalar *restrict va = st->val;

  CSRK_OUTPUTS(CSRK_ROWS, 0, CSRKIdx, cj);
}

/* one thread over the AIJ arrays is AIJ's own loop, unless AIJ runs its inode kernel: then a rival of it */
static MatCSRKExpectRule CSRKColumnsExpect(const MatCSRKProbe *p)
{
  return p->inodes ? CSRK_EXPECT_RIVAL : CSRK_EXPECT_NO;
}

static PetscErrorCode CSRKColumnsBuild(Mat A, MatCSRKPlan *plan, MatCSRKStructure *st, PetscBool *built)
{
  PetscFunctionBegin;
  if (plan->onethread && plan->opt->feature[MAT_CSRK_COMPRESS_INDICES]) PetscCall(PetscInfo(A, "Column indices kept 32-bit: one thread in the natural order runs over the AIJ arrays\n"));
  *built = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

const MatCSRKVariant MatCSRKVariantColumns32 = {"columns32", CSRKColumnsExpect, NULL, CSRKColumnsBuild, CSRKColumnsMult, NULL, {CSRK_ARRAY(colidx, CSRK_LEN_NNZ, PETSC_TRUE)}, 1.0, 1.0, "plain_loop"};

/* 16-bit offsets from the diagonal: xr[co[q]] with xr advancing with the row (CSRK_ROWS) */
static void CSRKOffsetsMult(const MatCSRKStructure *st, PetscInt t, PetscInt r0, PetscInt r1, const PetscScalar *restrict xx, const PetscScalar *restrict zz, PetscScalar *restrict out)
{
  const CSRKIdx *restrict     rp = st->rowptr;
  const int16_t *restrict     co = st->coloff;
  const PetscScalar *restrict va = st->val;

  CSRK_OUTPUTS(CSRK_ROWS, 1, int16_t, co);
}

static PetscBool CSRKOffsetsApplies(const MatCSRKPlan *plan, const MatCSRKStructure *st)
{
  return plan->compress;
}

/* coloff[q] = column - row of every entry of the natural order, from the AIJ columns aj (the same positions), each
   thread its own rows (the pages it multiplies with, as in CSRKFill(); a reordered copy stores its offsets there) */
static void CSRKFillOffsets(MatCSRKStructure *st, const PetscInt *aj)
{
#if defined(_OPENMP)
  #pragma omp parallel num_threads((int)st->nthreads)
#endif
  {
    PetscInt                r0, r1;
    const CSRKIdx *restrict rp = st->rowptr;
    int16_t *restrict       co = st->coloff;
    MatCSRKThreadRows(st, &r0, &r1);
    for (PetscInt r = r0; r < r1; r++)
      for (CSRKIdx q = rp[r]; q < rp[r + 1]; q++) co[q] = (int16_t)(aj[q] - r);
  }
}


/* the offsets where the bandwidth lets them: a reordered copy stored them at its fill, the natural order takes them
   from the AIJ columns now */
static PetscErrorCode CSRKOffsetsBuild(Mat A, MatCSRKPlan *plan, MatCSRKStructure *st, PetscBool *built)
{
  PetscFunctionBegin;
  *built = (PetscBool)(st->bw_after <= CSRK_COLOFF_MAX);
  if (!*built) {
    PetscCall(PetscInfo(A, "Column indices kept 32-bit: bandwidth %" PetscInt_FMT " exceeds %d\n", st->bw_after, CSRK_COLOFF_MAX));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!st->coloff) {
    PetscCall(PetscMalloc1(st->nnz, &st->coloff));
    CSRKFillOffsets(st, plan->aj);
  }
  PetscCall(PetscInfo(A, "Column indices as 16-bit offsets from the diagonal (bandwidth %" PetscInt_FMT "): 2 bytes per nonzero instead of 4\n", st->bw_after));
  PetscFunctionReturn(PETSC_SUCCESS);
}

const MatCSRKVariant MatCSRKVariantOffsets16 = {"offsets16", NULL, CSRKOffsetsApplies, CSRKOffsetsBuild, CSRKOffsetsMult, NULL, {CSRK_ARRAY(coloff, CSRK_LEN_NNZ, PETSC_FALSE)}, 7.0, 1.0, NULL};
