/*
   Building the CSR-k structure of a sequential AIJ block: ordering, row/super-row/super-super-row pointers, the column
   indices (row patterns, 16-bit offsets from the diagonal where they fit, else 32-bit columns) and a value copy laid
   out for the kernels (csrkmult.c), or the AIJ arrays themselves in the natural order; also the value refresh, the
   duplicate and the destruction of a structure.

   This is the one structure build shared by the sequential, MPI and CUDA types.
*/
#include "csrkimpl.h"
#include <string.h>
#include <sys/mman.h>

/*
  MatCSRKStructureAttach - points a structure that shares the AIJ arrays at them again (they move with some AIJ
  operations); a no-op for other structures
*/
PetscErrorCode MatCSRKStructureAttach(Mat A, MatCSRKStructure *st)
{
  const PetscInt *ai, *aj;
  PetscScalar    *aa;

  PetscFunctionBegin;
  if (!st->shared) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, NULL));
  PetscCheck(ai[st->m] == st->nnz, PETSC_COMM_SELF, PETSC_ERR_PLIB, "CSR-k structure with a changed pattern");
  st->rowptr = (CSRKIdx *)ai;
  st->colidx = (CSRKIdx *)aj;
  st->val    = aa;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Splits the top-level units (rows, super-rows or super-super-rows) into nthreads contiguous ranges of
   about equal cost (nonzeros + rows): a static schedule that also decides which thread first touches
   which part of the arrays. */
static PetscErrorCode CSRKPartitionThreads(MatCSRKStructure *st)
{
  PetscInt  nunits, T = st->nthreads, u, t;
  PetscReal total, target, acc = 0;

  PetscFunctionBegin;
  nunits = st->k == 1 ? st->m : (st->k == 2 ? st->nsr : st->nssr);
  PetscCall(PetscMalloc1(T + 1, &st->tstart));
  total       = (PetscReal)st->nnz + (PetscReal)st->m;
  st->tstart[0] = 0;
  for (t = 1, u = 0; t < T; t++) {
    target = total * (PetscReal)t / (PetscReal)T;
    while (u < nunits && acc < target) {
      PetscInt r0, r1;
      MatCSRKUnitRows(st, u, u + 1, &r0, &r1);
      acc += (PetscReal)(st->rowptr[r1] - st->rowptr[r0]) + (PetscReal)(r1 - r0);
      u++;
    }
    st->tstart[t] = u;
  }
  st->tstart[T] = nunits;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Cuts [0, n) into chunks of at most size items that do not cross the group boundaries bnd[0..nb] (n, n = one group) */
static PetscErrorCode CSRKChunk(PetscInt n, PetscInt size, PetscInt nb, const PetscInt *bnd, PetscInt *nchunks, CSRKIdx **ptr)
{
  PetscInt c = 0;

  PetscFunctionBegin;
  size = PetscMax(size, 1);
  *nchunks = 0;
  for (PetscInt b = 0; b < nb; b++) *nchunks += (bnd[b + 1] - bnd[b] + size - 1) / size;
  PetscCall(PetscMalloc1(*nchunks + 1, ptr));
  for (PetscInt b = 0; b < nb; b++)
    for (PetscInt i = bnd[b]; i < bnd[b + 1]; i += size) (*ptr)[c++] = (CSRKIdx)i;
  (*ptr)[c] = (CSRKIdx)n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The super-rows (and super-super-rows) of st->k, st->sr_size, st->ssr_size, cut inside the ngroups groups of rows
   groupptr[] (replacing those there were) */
static PetscErrorCode CSRKLevels(MatCSRKStructure *st, PetscInt ngroups, const PetscInt *groupptr)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(st->srptr));
  PetscCall(PetscFree(st->ssrptr));
  st->nssr = 0;
  PetscCall(CSRKChunk(st->m, st->sr_size, ngroups, groupptr, &st->nsr, &st->srptr));
  if (st->k == 3) {
    /* the group boundaries in super-row numbers */
    PetscInt *sg;
    PetscCall(PetscMalloc1(ngroups + 1, &sg));
    for (PetscInt g = 0, s = 0; g <= ngroups; g++) {
      while (s < st->nsr && st->srptr[s] < groupptr[g]) s++;
      sg[g] = s;
    }
    PetscCall(CSRKChunk(st->nsr, st->ssr_size, ngroups, sg, &st->nssr, &st->ssrptr));
    PetscCall(PetscFree(sg));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Rows ahead that a gather of whole rows from random places prefetches: about 4 KiB of values */
static inline PetscInt CSRKPrefetchRows(const MatCSRKStructure *st)
{
  const PetscInt rowbytes = (PetscInt)sizeof(PetscScalar) * (st->nnz / PetscMax(st->m, 1) + 1);
  return PetscMax(4, PetscMin(64, 4096 / rowbytes));
}

/* Copies column indices and values of the user's CSR into the internal order, each thread touching the rows it will
   later multiply (which places the pages), prefetching the rows of a reordered copy some rows ahead; saves the start of
   each reordered row for the value refresh and gives the bandwidth after the ordering (iperm: the internal number of
   each user's row, NULL for the natural ordering). A reordered copy with st->coloff allocated (and no st->colidx)
   stores the 16-bit offsets from the diagonal directly, meaningful only if the bandwidth it gives fits. */
static void CSRKFill(MatCSRKStructure *st, const PetscInt *ai, const PetscInt *aj, const PetscScalar *aa, const CSRKIdx *iperm)
{
  const PetscInt ahead = CSRKPrefetchRows(st);
  PetscInt       bw    = 0;

#if defined(_OPENMP)
  #pragma omp parallel num_threads((int)st->nthreads) reduction(max : bw)
#endif
  {
    PetscInt                r0, r1;
    const CSRKIdx *restrict perm = st->perm, *restrict rp = st->rowptr;
    CSRKIdx *restrict       cj = st->colidx, *restrict sp = st->srcptr;
    int16_t *restrict       co = st->coloff;
    PetscScalar *restrict   v = st->val, *restrict xw = st->xwork;
    MatCSRKThreadRows(st, &r0, &r1);
    if (!perm) {
      if (rp[r1] > rp[r0]) memcpy(v + rp[r0], aa + rp[r0], sizeof(PetscScalar) * (size_t)(rp[r1] - rp[r0])); /* empty blocks have no arrays */
      if (cj)                                                                                                   /* else 16-bit offsets only */
        for (CSRKIdx q = rp[r0]; q < rp[r1]; q++) cj[q] = (CSRKIdx)aj[q];
    } else {
      for (PetscInt r = r0; r < r1; r++) {
        const PetscInt  s = ai[perm[r]], len = rp[r + 1] - rp[r];
        const PetscInt *sj  = aj + s;
        const CSRKIdx   dst = rp[r];
        if (r + 2 * ahead < r1) __builtin_prefetch(ai + perm[r + 2 * ahead]);
        if (r + ahead < r1) {
          const PetscInt na = ai[perm[r + ahead]], nlen = rp[r + ahead + 1] - rp[r + ahead];
          for (PetscInt q = 0; q < nlen; q += 8) __builtin_prefetch(aa + na + q);
          for (PetscInt q = 0; q < nlen; q += 64 / (PetscInt)sizeof(PetscInt)) __builtin_prefetch(aj + na + q);
          if (nlen) {
            __builtin_prefetch(aa + na + nlen - 1);
            __builtin_prefetch(aj + na + nlen - 1);
          }
        }
        if (r + ahead / 2 < r1) {
          const PetscInt nb = ai[perm[r + ahead / 2]], blen = rp[r + ahead / 2 + 1] - rp[r + ahead / 2];
          for (PetscInt q = 0; q < blen; q++) __builtin_prefetch(iperm + aj[nb + q]);
        }
        sp[r] = (CSRKIdx)s;
        for (PetscInt q = 0; q < len; q++) v[dst + q] = aa[s + q];
        if (co)
          for (PetscInt q = 0; q < len; q++) {
            const PetscInt d = (PetscInt)iperm[sj[q]] - r;
            co[dst + q]      = (int16_t)d;
            bw               = PetscMax(bw, PetscAbsInt(d));
          }
        else
          for (PetscInt q = 0; q < len; q++) {
            const CSRKIdx c = iperm[sj[q]];
            cj[dst + q]     = c;
            bw              = PetscMax(bw, PetscAbsInt(r - (PetscInt)c));
          }
        if (xw) xw[r] = 0.0;
      }
    }
  }
  st->bw_after = st->perm ? bw : st->bw_before;
}

/* Mean |i-j| of the nonzeros in the internal numbering given by perm (internal row r is user row perm[r]), estimated on
   every stride-th internal row (about 65,536 of them): enough for the decision it serves, where the full pass, with
   its random reads of rows and of iperm[], would cost about a product. Prefetched as the fill is. */
static PetscReal CSRKPermutedMeanDistance(PetscInt m, const PetscInt *ai, const PetscInt *aj, const CSRKIdx *perm, const CSRKIdx *iperm, PetscInt nthreads)
{
  const PetscInt stride = PetscMax(1, m / 65536), nrows = (m + stride - 1) / stride;
  PetscReal      sum = 0, cnt = 0;

#if defined(_OPENMP)
  #pragma omp parallel for num_threads((int)nthreads) schedule(static) reduction(+ : sum, cnt)
#endif
  for (PetscInt k = 0; k < nrows; k++) {
    const PetscInt r = k * stride;
    PetscInt64     s = 0; /* a dense row's sum does not fit 32 bits */
    if (k + 16 < nrows) __builtin_prefetch(ai + perm[r + 16 * stride]);
    if (k + 8 < nrows) __builtin_prefetch(aj + ai[perm[r + 8 * stride]]);
    for (PetscInt q = ai[perm[r]]; q < ai[perm[r] + 1]; q++) s += PetscAbsInt(r - (PetscInt)iperm[aj[q]]);
    sum += (PetscReal)s;
    cnt += (PetscReal)(ai[perm[r] + 1] - ai[perm[r]]);
  }
  return sum / PetscMax(cnt, 1.0);
}

/* Asks for transparent huge pages on the 2 MiB-aligned part of a fresh allocation (where the kernel grants them only
   on request): the vectors in the internal order, xwork and ywork, are read at random through the permutation at every
   product, and with 4 KiB pages nearly every such read of a vector of millions of entries also misses the TLB
   (measurements in docs/history/experiments.md) */
static void CSRKAdviseHuge(void *p, size_t bytes)
{
#if defined(MADV_HUGEPAGE)
  const uintptr_t huge = (uintptr_t)2 << 20, a = ((uintptr_t)p + huge - 1) & ~(huge - 1), e = ((uintptr_t)p + bytes) & ~(huge - 1);
  if (e > a) (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#endif
}

/* Maps the pages of a fresh allocation that is about to be written whole, in one call, instead of a page fault at the
   first write to each 4 KiB page: the faults were most of the cost of the row slices' copy of the values, itself most
   of a natural-order build (docs/design.md, "Set-up budget"). A kernel older than Linux 5.14 refuses the advice and the
   pages fault in as before. */
void MatCSRKPopulate(void *p, size_t bytes)
{
#if defined(MADV_POPULATE_WRITE)
  const uintptr_t page = 4096, a = ((uintptr_t)p + page - 1) & ~(page - 1), e = ((uintptr_t)p + bytes) & ~(page - 1);
  if (e > a) (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#endif
}

/* The ordering to build in: the one asked for, natural for a block that is not square, and for auto RCM where the
   nonzeros lie far from the diagonal on average (a random permutation gives m/3: x reads then miss the cache). RCM
   measured faster to build and to multiply than Band-k on this path (docs/design.md); *autorcm tells that auto
   proposed it, to be checked on the matrix later. The auto test also gives the bandwidth in the user's ordering. */
static PetscErrorCode CSRKChooseOrdering(Mat A, MatCSRKStructure *st, const PetscInt *ai, const PetscInt *aj, PetscReal *autodist, PetscBool *autorcm)
{
  const PetscInt m = st->m;

  PetscFunctionBegin;
  *autodist = 0;
  *autorcm  = PETSC_FALSE;
  if (m != st->n && st->ordering != MAT_CSRK_ORDERING_NATURAL) {
    PetscCall(PetscInfo(A, "Block is %" PetscInt_FMT " x %" PetscInt_FMT ", not square: ordering %s replaced by natural\n", m, st->n, MatCSRKOrderings[st->ordering]));
    st->ordering = MAT_CSRK_ORDERING_NATURAL;
  }
  if (st->ordering == MAT_CSRK_ORDERING_AUTO) {
    st->ordering = MatCSRKAutoReorders(m, st->n, ai, aj, autodist, NULL) ? MAT_CSRK_ORDERING_RCM : MAT_CSRK_ORDERING_NATURAL;
    *autorcm = (PetscBool)(st->ordering == MAT_CSRK_ORDERING_RCM);
    PetscCall(PetscInfo(A, "Mean |i-j| of the nonzeros %g for %" PetscInt_FMT " rows: ordering %s\n", (double)*autodist, m, MatCSRKOrderings[st->ordering]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* k's super-row and super-super-row sizes: the model's (tuning.c), or the user's */
static void CSRKLevelSizes(const MatCSRKOptions *opt, MatCSRKStructure *st, PetscInt bs)
{
  MatCSRKChooseSizes(st->k, st->m, bs, st->nthreads, &st->sr_size, &st->ssr_size);
  if (opt->sr_size > 0) st->sr_size = opt->sr_size;
  if (opt->ssr_size > 0) st->ssr_size = opt->ssr_size;
}

/* The permutation of st->ordering: st->perm (NULL for the natural order) and its inverse *iperm, and the groups of
   rows the super-rows must not cross (Band-k's; else one group). An RCM that auto proposed (autorcm) is dropped at
   once where it leaves the mean |i-j| above half of what it was (autodist): RCM finds no band in matrices such as
   random or power-law graphs. */
static PetscErrorCode CSRKOrder(Mat A, MatCSRKStructure *st, PetscInt bs, const PetscInt *ai, const PetscInt *aj, PetscBool autorcm, PetscReal autodist, CSRKIdx **iperm, PetscInt *ngroups, PetscInt **groupptr)
{
  const PetscInt m    = st->m;
  PetscInt      *perm = NULL;

  PetscFunctionBegin;
  *iperm    = NULL;
  *ngroups  = 0;
  *groupptr = NULL;
  if (st->ordering != MAT_CSRK_ORDERING_NATURAL && m > 1) {
    PetscCall(PetscLogEventBegin(MAT_CSRKOrder, A, 0, 0, 0));
    PetscCall(MatCSRKComputeOrdering(A, st->ordering, bs, MatCSRKBandKGroupRows(m, st->nnz, bs, st->nthreads), st->nthreads, &perm, ngroups, groupptr));
    PetscCall(PetscLogEventEnd(MAT_CSRKOrder, A, 0, 0, 0));
  }
  if (!*groupptr) {
    *ngroups = 1;
    PetscCall(PetscMalloc1(2, groupptr));
    (*groupptr)[0] = 0;
    (*groupptr)[1] = m;
  }
  if (!perm) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscMalloc1(m, &st->perm));
  PetscCall(PetscMalloc1(m, iperm));
#if defined(_OPENMP)
  #pragma omp parallel for num_threads((int)st->nthreads) schedule(static)
#endif
  for (PetscInt r = 0; r < m; r++) {
    st->perm[r]        = (CSRKIdx)perm[r];
    (*iperm)[perm[r]] = (CSRKIdx)r;
  }
  PetscCall(PetscFree(perm));
  if (autorcm) {
    const PetscReal after = CSRKPermutedMeanDistance(m, ai, aj, st->perm, *iperm, st->nthreads);
    if (after > 0.5 * autodist) {
      PetscCall(PetscInfo(A, "RCM leaves the mean |i-j| at %g (from %g): natural ordering kept\n", (double)after, (double)autodist));
      PetscCall(PetscFree(st->perm));
      PetscCall(PetscFree(*iperm));
      st->ordering = MAT_CSRK_ORDERING_NATURAL;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Row pointers in the internal order and the count of rows with entries. A natural-order structure may use the AIJ
   arrays themselves (MatCSRKShareNatural()). */
static PetscErrorCode CSRKRowPointers(Mat A, MatCSRKStructure *st, const PetscInt *ai)
{
  const PetscInt m   = st->m;
  PetscInt       nzr = 0;

  PetscFunctionBegin;
  st->shared = (PetscBool)(!st->perm && MatCSRKShareNatural(st->nthreads));
  if (st->shared) {
    PetscCall(MatCSRKStructureAttach(A, st));
    for (PetscInt r = 0; r < m; r++) nzr += ai[r + 1] > ai[r];
    st->nonzerorows = nzr;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscMalloc1(m + 1, &st->rowptr));
  st->rowptr[0] = 0;
  if (st->perm) {
#if defined(_OPENMP)
  #pragma omp parallel for num_threads((int)st->nthreads) schedule(static) reduction(+ : nzr)
#endif
    for (PetscInt r = 0; r < m; r++) {
      const PetscInt src = st->perm[r];
      if (r + 32 < m) __builtin_prefetch(ai + st->perm[r + 32]);
      st->rowptr[r + 1] = (CSRKIdx)(ai[src + 1] - ai[src]);
      nzr += st->rowptr[r + 1] > 0;
    }
    for (PetscInt r = 0; r < m; r++) st->rowptr[r + 1] += st->rowptr[r];
  } else {
    for (PetscInt r = 0; r < m; r++) {
      st->rowptr[r + 1] = (CSRKIdx)ai[r + 1];
      nzr += ai[r + 1] > ai[r];
    }
  }
  st->nonzerorows = nzr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  MatCSRKStructureComputeBandwidth - the bandwidth of a structure (bw_before, bw_after), computed now from the AIJ
  arrays of A where the build did not need it (natural order)
*/
PetscErrorCode MatCSRKStructureComputeBandwidth(Mat A, MatCSRKStructure *st)
{
  const PetscInt *ai, *aj;
  PetscReal       dist;

  PetscFunctionBegin;
  if (st->bw_before >= 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(!st->perm, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A reordered structure knows its bandwidth from its build");
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, NULL, NULL));
  MatCSRKDistances(st->m, ai, aj, st->nthreads, &st->bw_before, &dist);
  st->bw_after = st->bw_before;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The arrays the kernels read where they are not the AIJ's own, first touched by the thread that multiplies with them
   (CSRKFill()), and x and y in the internal order for a reordered copy; *iperm is handed to the structure where
   the product needs it, else freed. Also the bandwidth in the stored numbering. */
static PetscErrorCode CSRKFillArrays(Mat A, MatCSRKStructure *st, const MatCSRKPlan *plan, const PetscInt *ai, const PetscInt *aj, const PetscScalar *aa, CSRKIdx **iperm)
{
  PetscFunctionBegin;
  if (!st->shared) {
    /* No 32-bit copy where the offsets are expected to fit: the natural order knows its bandwidth already (the offsets
       come from the AIJ columns later), a renumbered copy stores them during its fill (a reordering is there to narrow
       the band, and a 32-bit copy would be fresh pages and a second pass) and is filled again with 32-bit columns in
       the rare case where they do not fit */
    const PetscBool direct = (PetscBool)(plan->compress && st->perm);
    if (direct) PetscCall(PetscMalloc1(st->nnz, &st->coloff));
    else if (!plan->compress || st->bw_before > CSRK_COLOFF_MAX) PetscCall(PetscMalloc1(st->nnz, &st->colidx));
    PetscCall(PetscMalloc1(st->nnz, &st->val));
    if (st->perm) {
      PetscCall(PetscMalloc1(st->n, &st->xwork));
      CSRKAdviseHuge(st->xwork, sizeof(PetscScalar) * (size_t)st->n);
      PetscCall(PetscMalloc1(st->m, &st->srcptr));
    }
    CSRKFill(st, ai, aj, aa, *iperm);
    if (direct && st->bw_after > CSRK_COLOFF_MAX) {
      PetscCall(PetscInfo(A, "Bandwidth %" PetscInt_FMT " after the ordering exceeds the 16-bit offsets: filled again with 32-bit columns\n", st->bw_after));
      PetscCall(PetscFree(st->coloff));
      PetscCall(PetscMalloc1(st->nnz, &st->colidx));
      CSRKFill(st, ai, aj, aa, *iperm);
    }
    if (st->xwork) {
      /* the product is formed in the internal order and gathered into y through iperm: random reads, which overlap,
         instead of random writes, which queue behind each other's cache misses */
      PetscCall(PetscMalloc1(st->m, &st->ywork));
      CSRKAdviseHuge(st->ywork, sizeof(PetscScalar) * (size_t)st->m);
      st->iperm = *iperm;
      *iperm    = NULL;
    }
  } else st->bw_after = st->bw_before;
  PetscCall(PetscFree(*iperm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* How the CPU kernels may read the column indices, decided before the arrays are filled: 16-bit offsets and row
   patterns save bytes where the threads together are bound by the memory; one thread in the natural order runs the
   AIJ loop over the AIJ arrays instead, measured faster there, unless the rows make slices (ex->slices). Measurements:
   docs/design.md, "Column indices", docs/performance.md. */
static void CSRKPlanIndices(const MatCSRKStructure *st, const PetscInt *aj, const MatCSRKExpect *ex, MatCSRKPlan *plan)
{
  const PetscBool *on = plan->opt->feature;

  plan->aj        = aj;
  plan->onethread = (PetscBool)(!st->perm && st->nthreads == 1);
  plan->compress  = (PetscBool)(on[MAT_CSRK_COMPRESS_INDICES] && !plan->onethread);
  plan->patterns  = (PetscBool)(on[MAT_CSRK_ROW_PATTERNS] && (plan->compress || (plan->onethread && ex->slices)));
}

/* The first entry of the plan that applies and builds becomes the structure's row loop; none: st->variant stays NULL */
static PetscErrorCode CSRKChooseLoop(Mat A, MatCSRKPlan *plan, MatCSRKStructure *st)
{
  PetscFunctionBegin;
  st->variant = NULL;
  for (const MatCSRKVariant *const *v = plan->order; *v && !st->variant; v++) {
    PetscBool built = PETSC_FALSE;

    if ((*v)->applies && !(*v)->applies(plan, st)) continue;
    PetscCall((*v)->build(A, plan, st, &built));
    if (built) st->variant = *v;
  }
  PetscCall(PetscInfo(A, "Row loop: %s\n", st->variant ? st->variant->name : "none of those expected, AIJ's kernel"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatCSRKStructureBuild - builds the CSR-k structure of an assembled sequential AIJ matrix A with the options opt: its
   stages in order, each of one job; the ordering and the arrays are timed apart (st->order_time, st->fill_time) for
   the view. ex: the entries of the plan's table to try and the threads (MatCSRKPlanExpect()). A build whose entries
   all decline gives no structure (*out NULL): the caller keeps AIJ's kernel.
*/
PetscErrorCode MatCSRKStructureBuild(Mat A, const MatCSRKOptions *opt, const MatCSRKExpect *ex, MatCSRKStructure **out)
{
  MatCSRKStructure *st;
  const PetscInt   *ai, *aj;
  PetscScalar      *aa;
  PetscInt          m, n, bs, ngroups, *groupptr;
  CSRKIdx          *iperm;
  MatCSRKPlan       plan = {.opt = opt};
  PetscLogDouble    t0, to, tf, t1;
  PetscReal         autodist, dist;
  PetscBool         autorcm;
  char              bw[64] = "not computed";

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  PetscCall(MatGetSize(A, &m, &n));
  PetscCall(MatGetBlockSize(A, &bs));
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, NULL));
  PetscCheck(m <= CSRK_IDX_MAX && n <= CSRK_IDX_MAX && ai[m] <= CSRK_IDX_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP,
             "CSR-k block of %" PetscInt_FMT " x %" PetscInt_FMT " with %" PetscInt_FMT " nonzeros exceeds the 32-bit local indices of the kernels; use more MPI ranks", m, n, ai[m]);
  PetscCall(PetscNew(&st));
  st->m         = m;
  st->n         = n;
  st->nnz       = ai[m];
  st->k         = opt->k;
  st->ordering  = opt->ordering;
  st->nthreads  = ex->nthreads;
  st->bw_before = -1;
  if (bs > 1 && m % bs) bs = 1;

  PetscCall(PetscArraycpy(plan.order, ex->order, CSRK_MAX_VARIANTS + 1));
  PetscCall(CSRKChooseOrdering(A, st, ai, aj, &autodist, &autorcm));
  CSRKLevelSizes(opt, st, bs);
  PetscCall(PetscTime(&to));
  PetscCall(CSRKOrder(A, st, bs, ai, aj, autorcm, autodist, &iperm, &ngroups, &groupptr));
  PetscCall(PetscTime(&tf));
  PetscCall(CSRKLevels(st, ngroups, groupptr));
  PetscCall(CSRKRowPointers(A, st, ai));
  PetscCall(CSRKPartitionThreads(st));
  CSRKPlanIndices(st, aj, ex, &plan);
  /* the bandwidth in the user's ordering where the build needs it before the fill, for the 16-bit offsets and with a
     reordering; a natural-order structure learns it from its row patterns, or when asked (a pass saved) */
  if (st->bw_before < 0 && (plan.compress || st->perm)) MatCSRKDistances(st->m, ai, aj, st->nthreads, &st->bw_before, &dist);
  PetscCall(CSRKFillArrays(A, st, &plan, ai, aj, aa, &iperm));
  PetscCall(CSRKChooseLoop(A, &plan, st));
  PetscCall(PetscTime(&t1));
  st->order_time = tf - to;
  st->fill_time  = t1 - tf;
  PetscCall(PetscFree(groupptr));
  MatCSRKStructureCountBytes(st);

  PetscCall(PetscTime(&t1));
  st->build_time = t1 - t0;
  if (st->bw_before >= 0) PetscCall(PetscSNPrintf(bw, sizeof(bw), "%" PetscInt_FMT " -> %" PetscInt_FMT, st->bw_before, st->bw_after));
  PetscCall(PetscInfo(A, "CSR-%" PetscInt_FMT " built: %" PetscInt_FMT " rows, %" PetscInt_FMT " super-rows, %" PetscInt_FMT " super-super-rows, ordering %s, bandwidth %s, %d threads, %g s (ordering %g s, arrays %g s)\n", st->k, m, st->nsr, st->nssr,
                      MatCSRKOrderings[st->ordering], bw, (int)st->nthreads, st->build_time, st->order_time, st->fill_time));
  if (!st->variant) PetscCall(MatCSRKStructureDestroy(&st));
  *out = st;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The values of a structure with a copy of its own: a gather into the internal order, each thread its own rows (those
   it multiplies and first touched). The AIJ row starts saved at the build give the source of each row without reading
   the AIJ row pointers, so the rows a few KiB ahead can be prefetched: the loads of a reordered matrix come from random
   places and one row at a time would wait for each. Contiguous writes, no allocation. */
static PetscErrorCode CSRKGatherValues(Mat A, MatCSRKStructure *st)
{
  const PetscInt *ai;
  PetscScalar    *aa;
  const PetscInt  ahead = CSRKPrefetchRows(st);

  PetscFunctionBegin;
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, NULL, &aa, NULL));
  PetscCheck(ai[st->m] == st->nnz, PETSC_COMM_SELF, PETSC_ERR_PLIB, "CSR-k value refresh with a changed pattern");
#if defined(_OPENMP)
  #pragma omp parallel num_threads((int)st->nthreads)
#endif
  {
    PetscInt                    r0, r1;
    const CSRKIdx *restrict     rp = st->rowptr, *restrict sp = st->srcptr;
    const PetscScalar *restrict a  = aa;
    PetscScalar *restrict       v  = st->val;
    MatCSRKThreadRows(st, &r0, &r1);
    if (!sp) {
      if (rp[r1] > rp[r0]) memcpy(v + rp[r0], a + rp[r0], sizeof(PetscScalar) * (size_t)(rp[r1] - rp[r0])); /* rows in the AIJ order */
    } else {
      for (PetscInt r = r0; r < r1; r++) {
        const PetscScalar *restrict src = a + sp[r];
        PetscScalar *restrict       dst = v + rp[r];
        const CSRKIdx               len = rp[r + 1] - rp[r];
        if (r + ahead < r1) {
          const PetscScalar *next = a + sp[r + ahead];
          const CSRKIdx      nlen = rp[r + ahead + 1] - rp[r + ahead];
          for (CSRKIdx q = 0; q < nlen; q += 8) __builtin_prefetch(next + q);
          if (nlen) __builtin_prefetch(next + nlen - 1);
        }
        for (CSRKIdx q = 0; q < len; q++) dst[q] = src[q];
      }
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Same pattern, new values: those of a copy gathered (a structure over the AIJ arrays has them already), then what
   derives from them, the row slices' values and lists and the row nodes' value lists. A refresh that changes the loop
   over the AIJ arrays (a symmetric half whose values stopped being symmetric falls back to its index loop) keeps it only
   where the plan would build it: a loop that the expectation ex leaves out gives way to AIJ's kernel (*st NULL), for
   this pattern. */
PetscErrorCode MatCSRKStructureRefreshValues(Mat A, const MatCSRKExpect *ex, MatCSRKStructure **st)
{
  MatCSRKStructure            *s     = *st;
  const MatCSRKVariant        *built = s->variant;
  const MatCSRKVariant *const *v     = ex->order;

  PetscFunctionBegin;
  /* the structure's own file first, then the value copy, whose threads' rows come from the product's file */
  if (s->shared) {
    PetscCall(MatCSRKStructureAttach(A, s));
    if (built->refresh) PetscCall(built->refresh(s));
    while (*v && *v != s->variant) v++;
    if (s->variant != built && !*v) {
      PetscCall(PetscInfo(A, "Set-up: with the new values the %s loop fell back to the %s loop, which the plan does not build here: AIJ's kernel for this pattern\n", built->name, s->variant->name));
      PetscCall(MatCSRKStructureDestroy(st));
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(CSRKGatherValues(A, s));
  if (built->refresh) PetscCall(built->refresh(s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The arrays of every structure, beside those of the variants */
static const MatCSRKArray CSRKCommon[] = {CSRK_ARRAY(rowptr, CSRK_LEN_M1, PETSC_TRUE), CSRK_ARRAY(val, CSRK_LEN_NNZ, PETSC_TRUE), CSRK_ARRAY(srptr, CSRK_LEN_NSR1, PETSC_FALSE), CSRK_ARRAY(ssrptr, CSRK_LEN_NSSR1, PETSC_FALSE), CSRK_ARRAY(perm, CSRK_LEN_M, PETSC_FALSE), CSRK_ARRAY(srcptr, CSRK_LEN_M, PETSC_FALSE), CSRK_ARRAY(xwork, CSRK_LEN_N, PETSC_FALSE), CSRK_ARRAY(ywork, CSRK_LEN_M, PETSC_FALSE), CSRK_ARRAY(iperm, CSRK_LEN_M, PETSC_FALSE), CSRK_ARRAY(tstart, CSRK_LEN_THREADS1, PETSC_FALSE), {0, 0, CSRK_LEN_ONE, PETSC_FALSE}};

static size_t CSRKArrayLength(const MatCSRKStructure *st, MatCSRKLength len)
{
  return (size_t)(PetscInt[]){st->nnz, st->m, st->m + 1, st->n, st->nsr + 1, st->nssr + 1, st->nthreads + 1, st->nnodes, st->npat + 1, st->patptr ? PetscMax(st->patptr[st->npat], 1) : 1, st->nnzu, 1}[len];
}

#define CSRKArrayAt(st, a) ((void **)((char *)(st) + (a)->field))
#define CSRKArrayOwn(st, a) (!((a)->aij && (st)->shared)) /* not the AIJ array itself */

/* the arrays of the list a of st: counted (bytes, if not NULL), copied from src (if not NULL), or freed */
static PetscErrorCode CSRKArrays(const MatCSRKArray *a, MatCSRKStructure *st, const MatCSRKStructure *src, PetscLogDouble *bytes)
{
  PetscFunctionBegin;
  for (; a->size; a++) {
    void **p = CSRKArrayAt(st, a);
    if (bytes) {
      if (*p && CSRKArrayOwn(st, a)) *bytes += (PetscLogDouble)(a->size * CSRKArrayLength(st, a->len));
    } else if (src) {
      void *const *q = CSRKArrayAt(src, a);
      *p             = NULL; /* shared: attached to the new matrix's AIJ arrays at its first use */
      if (*q && CSRKArrayOwn(src, a)) {
        PetscCall(PetscMalloc(a->size * CSRKArrayLength(src, a->len), p));
        PetscCall(PetscMemcpy(*p, *q, a->size * CSRKArrayLength(src, a->len)));
      }
    } else if (CSRKArrayOwn(st, a)) PetscCall(PetscFree(*p));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatCSRKVariantFree - frees the arrays of a variant (its loop dropped, csrksetup.c) */
PetscErrorCode MatCSRKVariantFree(const MatCSRKVariant *v, MatCSRKStructure *st)
{
  PetscFunctionBegin;
  PetscCall(CSRKArrays(v->arrays, st, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The memory of the structure beyond the AIJ arrays (MatView(), MatCSRKGetInfo()) */
void MatCSRKStructureCountBytes(MatCSRKStructure *st)
{
  st->bytes = 0;
  (void)CSRKArrays(CSRKCommon, st, NULL, &st->bytes);
  for (const MatCSRKVariant *const *v = MatCSRKVariants; *v; v++) (void)CSRKArrays((*v)->arrays, st, NULL, &st->bytes);
}

PetscErrorCode MatCSRKStructureDuplicate(const MatCSRKStructure *src, MatCSRKStructure **out)
{
  MatCSRKStructure *st;

  PetscFunctionBegin;
  PetscCall(PetscNew(&st));
  *st = *src;
  PetscCall(CSRKArrays(CSRKCommon, st, src, NULL));
  for (const MatCSRKVariant *const *v = MatCSRKVariants; *v; v++) PetscCall(CSRKArrays((*v)->arrays, st, src, NULL));
  *out = st;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCSRKStructureDestroy(MatCSRKStructure **st)
{
  PetscFunctionBegin;
  if (!*st) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CSRKArrays(CSRKCommon, *st, NULL, NULL));
  for (const MatCSRKVariant *const *v = MatCSRKVariants; *v; v++) PetscCall(CSRKArrays((*v)->arrays, *st, NULL, NULL));
  PetscCall(PetscFree(*st));
  PetscFunctionReturn(PETSC_SUCCESS);
}
