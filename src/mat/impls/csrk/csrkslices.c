/*
   Row slices of the CPU pattern kernel: runs of CSRK_SLICE consecutive rows with the same row pattern (a stencil's
   interior rows along the fastest grid direction) are multiplied together, one row per vector lane. Entry j of the 8
   rows is then 8 consecutive values (stored interleaved, sval) times 8 consecutive entries of x (x[r + off_j ..
   r + off_j + 7]): two vector loads, a multiply and an add, with no index per entry and no gather. The rows' sums
   become 8 independent chains instead of one per row, which is what bounds the scalar pattern loop (an addition
   waiting for the previous one: the floating-point add latency per nonzero; docs/history/experiments.md, "CPU row slices").

   Each lane sums its row's entries in the row's order with a separate multiply and add, as the scalar loops and
   PETSc's AIJ kernel do: the products are bitwise those of the other CSR-k kernels. The multiply and add must not be
   contracted into a fused multiply-add, which the AVX-512 and AVX2 clones could otherwise emit.

   A slice never crosses the row blocks the kernel walks (super-rows, or the thread's rows for k = 1); the fill of sval
   and the kernel find the slices with the same greedy scan, CSRKSliceAt().

   Value lists (one thread): a slice whose 8 rows repeat one list of values, as the interior rows of a stencil with
   constant coefficients do, keeps that list once in a small dictionary (MatCSRKRowValues) instead of 8 interleaved
   copies in sval, and its rows' pattern numbers become CSRK_VALUED + the list's number. Entry j of the 8 rows is then
   one value times 8 entries of x: the slice reads no values from memory, and the product of such rows streams x, y and
   2 bytes per row. The lists are the same bits as the values (compared bitwise), so the products are too. Renumbering
   the slice's rows keeps the greedy scan of the kernel the fill's: a list belongs to one pattern, so rows of different
   patterns stay different, and rows of one slice stay alike.

   Tails: the last L < 8 rows of a run of one pattern, right after a slice of it, would take the scalar loop (a line of
   a stencil whose length is not a multiple of 8, as on most ranks of a DMDA). Where the slice of the 8 rows ending at
   them repeats a list, they are multiplied as that slice, and only their L lanes stored: the rows before them, which
   the previous slice gave, are not written again (MatMultAdd() may add in place). Such rows are numbered
   CSRK_VALUED_TAIL + the list's number; they take no values in sval.

   sval holds the values of the other slices and rows in the order the kernel reads them, without gaps where slices
   keep a list: the kernel and the fill walk it with a running position from the first row of a thread (with several
   threads, where there are no lists, that is each row's row pointer). Values at their row pointers would leave the
   rows between such slices scattered reads, each a cache miss that the hardware's prefetcher does not foresee.
*/
#include "csrkimpl.h"
#include <string.h>

#if defined(__clang__)
  #pragma clang fp contract(off)
#elif defined(__GNUC__)
  #pragma GCC optimize("fp-contract=off")
#endif

/* vector clones where the compiler and loader support them (GCC, ifunc): the widest the CPU has is chosen at load
   time. Not with clang: its clones' resolver crashed the ThreadSanitizer build of the race tests at load (clang 14),
   and clang builds take the baseline vector code */
#if defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 6 && !defined(CSRK_NO_TARGET_CLONES)
  #define CSRK_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
  #define CSRK_VECTOR_CLONES
#endif

/* the slice's product inlined into each vector clone of the kernel, compiled for its instruction set */
#if defined(__GNUC__) || defined(__clang__)
  #define CSRK_ALWAYS_INLINE __attribute__((always_inline))
#else
  #define CSRK_ALWAYS_INLINE
#endif

/* real scalars: the compiler's vector type (complex ones take the lane loop) */
#if !defined(PETSC_USE_COMPLEX) && (defined(__GNUC__) || defined(__clang__)) && CSRK_SLICE == 8
  #define CSRK_VEC4
typedef PetscScalar CSRKVec4 __attribute__((vector_size(4 * sizeof(PetscScalar))));
#endif

/* whether a slice starts at row r of a block ending at r1: CSRK_SLICE rows in the block with r's pattern */
static inline PetscBool CSRKSliceAt(const uint16_t *rowpat, PetscInt r, PetscInt r1)
{
  PetscBool same = PETSC_TRUE;
  if (r + CSRK_SLICE > r1) return PETSC_FALSE;
  for (int l = 1; l < CSRK_SLICE; l++) same = (PetscBool)(same & (rowpat[r + l] == rowpat[r]));
  return same;
}

/* whether the CSRK_SLICE consecutive rows of nz values each from val repeat the first one's (bitwise): each row
   equals the next, one comparison of the rows with themselves shifted by a row */
static inline PetscBool CSRKRowsRepeatValues(const PetscScalar *val, CSRKIdx nz)
{
  return (PetscBool)!memcmp(val, val + nz, sizeof(PetscScalar) * (size_t)nz * (CSRK_SLICE - 1));
}

static inline uint32_t CSRKValuesHash(uint16_t p, const PetscScalar *val, CSRKIdx nz)
{
  const unsigned char *b = (const unsigned char *)val;
  uint32_t             h = 2166136261u ^ p;
  for (size_t i = 0; i < sizeof(PetscScalar) * (size_t)nz; i++) h = (h ^ b[i]) * 16777619u;
  return h;
}

static inline PetscBool CSRKValuesAre(const MatCSRKRowValues *rv, PetscInt v, uint16_t p, const PetscScalar *val, CSRKIdx nz)
{
  return (PetscBool)(rv->pat[v] == p && rv->start[v + 1] - rv->start[v] == nz && !memcmp(rv->val + rv->start[v], val, sizeof(PetscScalar) * (size_t)nz));
}

/* the number of the list val[0..nz) of pattern p in rv, added if new; -1 when rv is full */
static PetscInt CSRKValuesFind(MatCSRKRowValues *rv, uint16_t p, const PetscScalar *val, CSRKIdx nz)
{
  uint32_t s;

  if (rv->last >= 0 && CSRKValuesAre(rv, rv->last, p, val, nz)) return rv->last;
  for (s = CSRKValuesHash(p, val, nz) & (CSRK_VALUES_SLOTS - 1);; s = (s + 1) & (CSRK_VALUES_SLOTS - 1)) {
    const PetscInt v = (PetscInt)rv->slot[s] - 1;
    if (v < 0) break;
    if (CSRKValuesAre(rv, v, p, val, nz)) return rv->last = v;
  }
  if (rv->n == CSRK_VALUES_MAX || rv->start[rv->n] + nz > CSRK_VALUES_MAX_ENTRIES) return -1;
  memcpy(rv->val + rv->start[rv->n], val, sizeof(PetscScalar) * (size_t)nz);
  rv->pat[rv->n]       = p;
  rv->start[rv->n + 1] = rv->start[rv->n] + nz;
  rv->slot[s]          = (uint16_t)(rv->n + 1);
  return rv->last = rv->n++;
}

/* the rows [r0, r1) get their row patterns back where an earlier fill gave them a value list, whose entry is still in
   the dictionary (MatCSRKStructureBeginRowValues()) */
static inline void CSRKRowsUnlist(const MatCSRKStructure *st, PetscInt r0, PetscInt r1)
{
  for (PetscInt i = r0; i < r1; i++)
    if (st->rowpat[i] >= CSRK_VALUED) st->rowpat[i] = st->rowvals->pat[CSRK_VALUED_LIST(st->rowpat[i])];
}

/* the rows of the run of row r's pattern p from r in a block ending at r1, fewer than CSRK_SLICE where no slice
   starts at r */
static inline PetscInt CSRKRunRows(const uint16_t *rowpat, PetscInt r, PetscInt r1)
{
  PetscInt L = 1;
  while (L < CSRK_SLICE && r + L < r1 && rowpat[r + L] == rowpat[r]) L++;
  return L;
}

/* the rows of block [r0, r1) into sval (when not NULL): a slice's 8 x nz values transposed (entry j of its rows
   together), or, when its rows repeat one list of values and st has value lists, that list's number in their
   patterns, as for a tail whose slice does; other rows copied; from and to position *q of sval. Returns the rows in
   slices and tails, and adds those of one list to *nvalued */
static PetscInt CSRKSliceFillRange(const MatCSRKStructure *st, PetscInt r0, PetscInt r1, const PetscScalar *restrict val, PetscScalar *restrict sval, PetscInt *q, PetscInt *nvalued)
{
  const CSRKIdx    *rp = st->rowptr;
  MatCSRKRowValues *rv = sval ? st->rowvals : NULL;
  PetscInt          r = r0, nsliced = 0, prev = -1; /* prev: the pattern of a slice that ended at r */

  while (r < r1) {
    const CSRKIdx q0 = rp[r];
    const CSRKIdx nz = rp[r + 1] - q0;
    if (st->rowvals && st->rowvals->n) CSRKRowsUnlist(st, r, PetscMin(r + CSRK_SLICE, r1)); /* the rows the scan compares */
    /* L rows from r multiplied as the slice of the 8 rows ending at their last: a slice, or a tail after one */
    const PetscInt L = CSRKSliceAt(st->rowpat, r, r1) ? CSRK_SLICE : (rv && st->rowpat[r] == prev ? CSRKRunRows(st->rowpat, r, r1) : 0);
    if (L) {
      const uint16_t p  = st->rowpat[r];
      const CSRKIdx  s0 = rp[r + L - CSRK_SLICE];
      PetscInt       v  = -1;
      if (rv && CSRKRowsRepeatValues(val + s0, nz)) v = CSRKValuesFind(rv, p, val + s0, nz);
      if (v >= 0) {
        for (PetscInt l = 0; l < L; l++) st->rowpat[r + l] = (uint16_t)((L == CSRK_SLICE ? CSRK_VALUED : CSRK_VALUED_TAIL) + v);
        *nvalued += L;
      } else if (L == CSRK_SLICE) {
        if (sval)
          for (CSRKIdx j = 0; j < nz; j++)
            for (int l = 0; l < CSRK_SLICE; l++) sval[*q + CSRK_SLICE * j + l] = val[q0 + l * nz + j];
        *q += CSRK_SLICE * nz;
      }
      if (v >= 0 || L == CSRK_SLICE) {
        prev = L == CSRK_SLICE ? p : -1;
        r += L;
        nsliced += L;
        continue;
      }
    }
    prev = -1;
    if (sval) memcpy(sval + *q, val + q0, sizeof(PetscScalar) * (size_t)nz);
    *q += nz;
    r++;
  }
  return nsliced;
}

/*
  MatCSRKStructureBeginRowValues - a fill of st's slices from row 0 (new values, or the first), whose first m rows have
  row patterns (all of them, unless a search by parts is under way). The rows keep the list
  numbers of the last fill, and its lists stay in the dictionary: the scan gives each row its row pattern back as it
  reaches it (CSRKRowsUnlist()), and new values equal to a list kept find it again. Only a dictionary more than half
  full is emptied, after a pass that gives every row its row pattern back: a pass over the rows at each change of
  values would cost a third of a product on a 5-point stencil, and the fill's first part, which paid for it, was then
  estimated three times dearer and the fill slowed down (snes ex5 with multigrid, docs/design.md, "Value lists").
*/
static PetscErrorCode MatCSRKStructureBeginRowValues(MatCSRKStructure *st, PetscInt m)
{
  MatCSRKRowValues *rv = st->rowvals;

  PetscFunctionBegin;
  st->nvalued = 0;
  if (!rv || (2 * rv->n <= CSRK_VALUES_MAX && 2 * rv->start[rv->n] <= CSRK_VALUES_MAX_ENTRIES)) PetscFunctionReturn(PETSC_SUCCESS);
  CSRKRowsUnlist(st, 0, m);
  PetscCall(PetscInfo(NULL, "Value lists: %" PetscInt_FMT " lists of %" PetscInt_FMT " values, more than half the dictionary: emptied\n", rv->n, (PetscInt)rv->start[rv->n]));
  PetscCall(PetscMemzero(rv->slot, sizeof(rv->slot)));
  rv->n    = 0;
  rv->last = -1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the rows of a block [R0, R1) of the thread's rows (CSRK_NEST) into sval (when not NULL), those in slices counted */
#define CSRK_SLICE_FILL(R0, R1, OUT, UNUSED) total += CSRKSliceFillRange(st, (R0), (R1), st->val, st->sval, &q, &nvalued)

/*
  MatCSRKStructureFillSlices - (re)writes st->sval (and the value lists) from st->val, each thread its own rows (the
  rows it multiplies and first touches), or with st->sval NULL only counts; *nsliced: the rows in slices (may be NULL)
*/
static PetscErrorCode MatCSRKStructureFillSlices(MatCSRKStructure *st, PetscInt *nsliced)
{
  PetscInt total = 0, nvalued = 0;

  PetscFunctionBegin;
  PetscCheck(!st->rowvals || st->nthreads == 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Value lists of row slices need one thread");
  if (st->sval) PetscCall(MatCSRKStructureBeginRowValues(st, st->m));
#if defined(_OPENMP)
  #pragma omp parallel num_threads((int)st->nthreads) reduction(+ : total, nvalued)
#endif
  {
    PetscInt r0, r1, t = MatCSRKThreadRows(st, &r0, &r1), q = st->rowptr[r0];

    CSRK_NEST(CSRK_SLICE_FILL, 0, 0);
  }
  if (nsliced) *nsliced = total;
  if (st->sval) st->nvalued = nvalued;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* out[r..r+CSRK_SLICE) = (zz +) a slice of nz entries at offsets ix from its rows: v[CSRK_SLICE * j + l] the value of
   entry j of its row l, or with vstep 0 (value lists) v[j] that of all its rows */
static inline CSRK_ALWAYS_INLINE void CSRKSliceRow8(const int32_t *restrict ix, CSRKIdx nz, const PetscScalar *restrict v, PetscInt vstep, const PetscScalar *restrict xr, const PetscScalar *restrict zr, PetscScalar *restrict outr)
{
#if defined(CSRK_VEC4)
  /* two vectors of 4 lanes: registers in the AVX2 and AVX-512 clones (a vector of 8 goes through the stack in AVX2) */
  CSRKVec4 a0 = {0}, a1 = {0};
  if (!vstep)
    for (CSRKIdx j = 0; j < nz; j++) {
      const PetscScalar *xj = xr + ix[j];
      CSRKVec4           x0, x1;
      memcpy(&x0, xj, sizeof(x0));
      memcpy(&x1, xj + 4, sizeof(x1));
      a0 += v[j] * x0;
      a1 += v[j] * x1;
    }
  else
    for (CSRKIdx j = 0; j < nz; j++) {
      const PetscScalar *xj = xr + ix[j], *vj = v + CSRK_SLICE * j;
      CSRKVec4           x0, x1, v0, v1;
      memcpy(&x0, xj, sizeof(x0));
      memcpy(&x1, xj + 4, sizeof(x1));
      memcpy(&v0, vj, sizeof(v0));
      memcpy(&v1, vj + 4, sizeof(v1));
      a0 += v0 * x0;
      a1 += v1 * x1;
    }
  if (zr) {
    CSRKVec4 z0, z1;
    memcpy(&z0, zr, sizeof(z0));
    memcpy(&z1, zr + 4, sizeof(z1));
    a0 = z0 + a0;
    a1 = z1 + a1;
  }
  memcpy(outr, &a0, sizeof(a0));
  memcpy(outr + 4, &a1, sizeof(a1));
#else
  PetscScalar acc[CSRK_SLICE] = {0};
  for (CSRKIdx j = 0; j < nz; j++) {
    const PetscScalar *xj = xr + ix[j], *vj = v + vstep * j;
    for (int l = 0; l < CSRK_SLICE; l++) acc[l] += vj[vstep ? l : 0] * xj[l];
  }
  for (int l = 0; l < CSRK_SLICE; l++) outr[l] = zr ? zr[l] + acc[l] : acc[l];
#endif
}

/* the kernel, in vector clones where they are built */
CSRK_VECTOR_CLONES static PetscInt CSRKSliceRows(const MatCSRKStructure *st, PetscInt r0, PetscInt r1, PetscInt q, const PetscScalar *restrict xx, const PetscScalar *restrict zz, PetscScalar *restrict out)
{
  const uint16_t *restrict         rowpat = st->rowpat;
  const CSRKIdx *restrict          pp     = st->patptr;
  const int32_t *restrict          po     = st->patoff;
  const PetscScalar *restrict      sv     = st->sval;
  const MatCSRKRowValues *restrict rv     = st->rowvals;
  PetscInt                         r      = r0;

  while (r < r1) {
    const PetscScalar *xr = xx + r, *zr = zz ? zz + r : NULL;
    if (rowpat[r] >= CSRK_VALUED) { /* one list of values: a slice, or a tail whose lanes of its own are stored */
      const PetscInt v = CSRK_VALUED_LIST(rowpat[r]), p = rv->pat[v], L = rowpat[r] < CSRK_VALUED_TAIL ? CSRK_SLICE : CSRKRunRows(rowpat, r, r1), s = r + L - CSRK_SLICE;
      PetscScalar    lanes[CSRK_SLICE], *o = L == CSRK_SLICE ? out + r : lanes;
      CSRKSliceRow8(po + pp[p], pp[p + 1] - pp[p], rv->val + rv->start[v], 0, xx + s, zz ? zz + s : NULL, o);
      if (o == lanes)
        for (PetscInt l = 0; l < L; l++) out[r + l] = lanes[CSRK_SLICE - L + l];
      r += L;
    } else {
      const CSRKIdx      p0 = pp[rowpat[r]], nz = pp[rowpat[r] + 1] - p0;
      const int32_t     *ix = po + p0;
      const PetscScalar *v  = sv + q;
      if (CSRKSliceAt(rowpat, r, r1)) {
        CSRKSliceRow8(ix, nz, v, CSRK_SLICE, xr, zr, out + r);
        r += CSRK_SLICE;
        q += CSRK_SLICE * nz;
      } else {
        PetscScalar sum = 0.0;
        for (CSRKIdx j = 0; j < nz; j++) sum += v[j] * xr[ix[j]];
        out[r] = zz ? zz[r] + sum : sum;
        r++;
        q += nz;
      }
    }
  }
  return q;
}

/* The row loop of a structure with row slices: each block of the thread's rows reads its values in order from sval,
   from its first row's row pointer (the fill's order) */
#define CSRK_SLICE_ROWS(R0, R1, OUT, UNUSED) q = CSRKSliceRows(st, (R0), (R1), q, xx, zz, out)
static void CSRKSlicesMult(const MatCSRKStructure *st, PetscInt t, PetscInt r0, PetscInt r1, const PetscScalar *restrict xx, const PetscScalar *restrict zz, PetscScalar *restrict out)
{
  PetscInt q = st->rowptr[r0];

  CSRK_NEST(CSRK_SLICE_ROWS, sum, 0);
}

/* by rule (no column indices) where half of the probed rows make slices */
static MatCSRKExpectRule CSRKSlicesExpect(const MatCSRKProbe *p)
{
  return MatCSRKPlanSlicesOn(p->opt) && 2 * p->slicerows >= p->rows ? CSRK_EXPECT_RULE : CSRK_EXPECT_NO;
}

/* with row patterns: on one thread in the natural order they are searched for only for the slices */
static PetscBool CSRKSlicesApplies(const MatCSRKPlan *plan, const MatCSRKStructure *st)
{
  return (PetscBool)(plan->patterns && plan->opt->feature[MAT_CSRK_ROW_SLICES]);
}

/* Row slices where at least half of the rows make them (a counting pass first), with value lists on one thread where
   the options take them. One thread in the natural order without slices drops its patterns (the AIJ loop is faster
   there). The pages of sval are placed by the fill that writes them (the threads' own rows); one thread has those it
   will write faulted in at once, faster than page by page: all of them without lists, and with lists about the share
   of the rows outside slices (the slices' values mostly go to lists). */
static PetscErrorCode CSRKSlicesBuild(Mat A, MatCSRKPlan *plan, MatCSRKStructure *st, PetscBool *built)
{
  PetscInt       nsliced = 0;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  plan->searched = PETSC_TRUE;
  PetscCall(MatCSRKStructureFindPatterns(A, st, st->perm ? NULL : plan->aj, plan->onethread));
  if (!st->rowpat) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscTime(&t0));
  PetscCall(MatCSRKStructureFillSlices(st, &nsliced));
  *built = (PetscBool)(2 * nsliced >= st->m);
  if (*built) {
    PetscCall(PetscMalloc1(st->nnz, &st->sval));
    if (plan->opt->feature[MAT_CSRK_ROW_VALUES] && st->nthreads == 1) {
      PetscCall(PetscNew(&st->rowvals));
      st->rowvals->last = -1;
      MatCSRKPopulate(st->sval, sizeof(PetscScalar) * (size_t)((double)st->nnz * (st->m - nsliced) / st->m));
    } else if (st->nthreads == 1) MatCSRKPopulate(st->sval, sizeof(PetscScalar) * (size_t)st->nnz);
    PetscCall(MatCSRKStructureFillSlices(st, &st->nsliced));
  } else if (plan->onethread) PetscCall(MatCSRKVariantFree(&MatCSRKVariantPatterns, st));
  PetscCall(PetscTime(&t1));
  PetscCall(PetscInfo(A, "Row slices: %" PetscInt_FMT " of %" PetscInt_FMT " rows in runs of %d with one pattern or their tails%s, %" PetscInt_FMT " of them with one list of values kept once (%g s)\n", *built ? st->nsliced : nsliced, st->m, CSRK_SLICE, *built ? ", multiplied a row per vector lane" : "; too few, not used", st->nvalued, t1 - t0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CSRKSlicesRefresh(MatCSRKStructure *st)
{
  PetscFunctionBegin;
  PetscCall(MatCSRKStructureFillSlices(st, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

const MatCSRKVariant MatCSRKVariantSlices = {"slices", CSRKSlicesExpect, CSRKSlicesApplies, CSRKSlicesBuild, CSRKSlicesMult, CSRKSlicesRefresh, {CSRK_ARRAY(sval, CSRK_LEN_NNZ, PETSC_FALSE), CSRK_ARRAY(rowvals, CSRK_LEN_ONE, PETSC_FALSE)}, 6.0, 1.0, NULL};
