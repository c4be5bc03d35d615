/*
   Row slices of the CPU pattern kernel: runs of CSRK_SLICE consecutive rows with the same row pattern (a stencil's
   interior rows along the fastest grid direction) are multiplied together, one row per vector lane. Entry j of the 8
   rows is then 8 consecutive values (stored interleaved, sval) times 8 consecutive entries of x (x[r + off_j ..
   r + off_j + 7]): two vector loads, a multiply and an add, with no index per entry and no gather. The rows' sums
   become 8 independent chains instead of one per row, which is what bounds the scalar pattern loop (an addition
   waiting for the previous one: the floating-point add latency per nonzero; docs/history/sessions.md, "CPU row slices").

   Each lane sums its row's entries in the row's order with a separate multiply and add, as the scalar loops and
   PETSc's AIJ kernel do: the products are bitwise those of the other CSR-k kernels. The multiply and add must not be
   contracted into a fused multiply-add, which the AVX-512 and AVX2 clones could otherwise emit.

   A slice never crosses the row blocks the kernel walks (super-rows, or the thread's rows for k = 1); the fill of sval
   and the kernel find the slices with the same greedy scan, CSRKSliceAt().
*/
#include "csrkimpl.h"
#include <string.h>
#if defined(_OPENMP)
  #include <omp.h>
#endif

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

/* the rows of block [r0, r1) from row r0, a row where the block's scan for slices stops, until the scan reaches rstop
   (or r1), into sval (when not NULL): a slice's 8 x nz values transposed (entry j of its rows together), other rows
   copied; returns the rows in slices and in *rend the row where the scan stopped (the start of the next slice or row) */
static PetscInt CSRKSliceFillRange(const MatCSRKStructure *st, PetscInt r0, PetscInt r1, PetscInt rstop, const PetscScalar *restrict val, PetscScalar *restrict sval, PetscInt *rend)
{
  const CSRKIdx *rp = st->rowptr;
  PetscInt       r = r0, nsliced = 0;

  while (r < PetscMin(r1, rstop)) {
    const CSRKIdx q0 = rp[r];
    if (CSRKSliceAt(st->rowpat, r, r1)) {
      const CSRKIdx nz = rp[r + 1] - q0;
      if (sval)
        for (CSRKIdx j = 0; j < nz; j++)
          for (int l = 0; l < CSRK_SLICE; l++) sval[q0 + CSRK_SLICE * j + l] = val[q0 + l * nz + j];
      r += CSRK_SLICE;
      nsliced += CSRK_SLICE;
    } else {
      if (sval)
        for (CSRKIdx q = q0; q < rp[r + 1]; q++) sval[q] = val[q];
      r++;
    }
  }
  *rend = r;
  return nsliced;
}

/* the rows of block [r0, r1) into sval (when not NULL); returns the rows in slices */
static PetscInt CSRKSliceFillBlock(const MatCSRKStructure *st, PetscInt r0, PetscInt r1, const PetscScalar *val, PetscScalar *sval)
{
  PetscInt rend;
  return CSRKSliceFillRange(st, r0, r1, r1, val, sval, &rend);
}

/*
  MatCSRKStructureFillSlices - (re)writes st->sval from st->val, each thread its own rows (the rows it multiplies and
  first touches), or with st->sval NULL only counts; *nsliced: the rows in slices (may be NULL)
*/
PetscErrorCode MatCSRKStructureFillSlices(MatCSRKStructure *st, PetscInt *nsliced)
{
  PetscInt total = 0;

  PetscFunctionBegin;
#if defined(_OPENMP)
  #pragma omp parallel num_threads((int)st->nthreads) reduction(+ : total)
#endif
  {
    PetscInt t = 0, r0, r1;
#if defined(_OPENMP)
    t = omp_get_thread_num();
#endif
    CSRKThreadRows(st, t, &r0, &r1);
    if (st->k == 1) total += CSRKSliceFillBlock(st, r0, r1, st->val, st->sval);
    else {
      /* the thread's super-rows: its units, or the super-rows of its super-super-rows */
      const PetscInt s0 = st->k == 2 ? st->tstart[t] : st->ssrptr[st->tstart[t]], s1 = st->k == 2 ? st->tstart[t + 1] : st->ssrptr[st->tstart[t + 1]];
      for (PetscInt s = s0; s < s1; s++) total += CSRKSliceFillBlock(st, st->srptr[s], st->srptr[s + 1], st->val, st->sval);
    }
  }
  if (nsliced) *nsliced = total;
  if (st->sval) st->rfill = st->m;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  MatCSRKStructureFillSlicesTo - continues the fill of st->sval (one thread) from row st->rfill to row rows or a little
  past it (the end of a slice), block by block in the order of the kernel, which runs the filled rows from the slices
  and the others with the AIJ loop (MatCSRKMultKernel()): a fill spread over the products instead of one before them
  (csrksetup.c). A row-pattern search under way numbers the rows first (the slices' scan reads the patterns of the
  CSRK_SLICE rows from each row) and counts the rows in slices; *fits: PETSC_FALSE when the rows do not fit its
  dictionary (nothing filled then).
*/
PetscErrorCode MatCSRKStructureFillSlicesTo(MatCSRKStructure *st, PetscInt rows, PetscBool *fits)
{
  PetscInt s = 0;

  PetscFunctionBegin;
  PetscCheck(st->sval && st->nthreads == 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A fill of row slices by parts needs slices and one thread");
  rows  = PetscMin(rows, st->m);
  *fits = PETSC_TRUE;
  if (st->patsearch) {
    PetscCall(MatCSRKPatternsExtend(st, rows + CSRK_SLICE, fits));
    if (!*fits) PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (st->k > 1) /* the super-row of row rfill (one thread runs them all, in order, whatever k) */
    while (s < st->nsr && st->srptr[s + 1] <= st->rfill) s++;
  while (st->rfill < rows) {
    const PetscInt b1 = st->k == 1 ? st->m : st->srptr[s + 1];
    PetscInt       rend, n;
    n = CSRKSliceFillRange(st, st->rfill, b1, rows, st->val, st->sval, &rend);
    if (st->patsearch) st->nsliced += n;
    st->rfill = rend;
    s++;
  }
  if (st->patsearch && st->rfill == st->m) PetscCall(MatCSRKPatternsEnd(st));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the kernel, in vector clones where they are built */
CSRK_VECTOR_CLONES static void CSRKSliceRows(const MatCSRKStructure *st, PetscInt r0, PetscInt r1, const PetscScalar *restrict xx, const PetscScalar *restrict zz, PetscScalar *restrict out)
{
  const uint16_t *restrict    rowpat = st->rowpat;
  const CSRKIdx *restrict     pp = st->patptr, *restrict rp = st->rowptr;
  const int32_t *restrict     po = st->patoff;
  const PetscScalar *restrict sv = st->sval;
  PetscInt                    r  = r0;

  while (r < r1) {
    const CSRKIdx      p0 = pp[rowpat[r]], nz = pp[rowpat[r] + 1] - p0;
    const int32_t     *ix = po + p0;
    const PetscScalar *v  = sv + rp[r], *xr = xx + r;
    if (CSRKSliceAt(rowpat, r, r1)) {
#if defined(CSRK_VEC4)
      /* two vectors of 4 lanes: registers in the AVX2 and AVX-512 clones (a vector of 8 goes through the stack in AVX2) */
      CSRKVec4 a0 = {0}, a1 = {0};
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
      if (zz) {
        CSRKVec4 z0, z1;
        memcpy(&z0, zz + r, sizeof(z0));
        memcpy(&z1, zz + r + 4, sizeof(z1));
        a0 = z0 + a0;
        a1 = z1 + a1;
      }
      memcpy(out + r, &a0, sizeof(a0));
      memcpy(out + r + 4, &a1, sizeof(a1));
#else
      PetscScalar acc[CSRK_SLICE] = {0};
      for (CSRKIdx j = 0; j < nz; j++) {
        const PetscScalar *xj = xr + ix[j], *vj = v + CSRK_SLICE * j;
        for (int l = 0; l < CSRK_SLICE; l++) acc[l] += vj[l] * xj[l];
      }
      for (int l = 0; l < CSRK_SLICE; l++) out[r + l] = zz ? zz[r + l] + acc[l] : acc[l];
#endif
      r += CSRK_SLICE;
    } else {
      PetscScalar sum = 0.0;
      for (CSRKIdx j = 0; j < nz; j++) sum += v[j] * xr[ix[j]];
      out[r] = zz ? zz[r] + sum : sum;
      r++;
    }
  }
}

/*
  MatCSRKSliceRows - out[r] = (zz[r] +) row r of A times x for the rows of block [r0, r1) of a structure with row
  patterns and slices (the natural or renumbered order: out and zz in the structure's row order, x its columns)
*/
void MatCSRKSliceRows(const MatCSRKStructure *st, PetscInt r0, PetscInt r1, const PetscScalar *xx, const PetscScalar *zz, PetscScalar *out)
{
  CSRKSliceRows(st, r0, r1, xx, zz, out);
}
