/*
   The symmetric half of the one-thread CPU kernel: a square block whose values are symmetric to rounding
   (CSRK_SYMMETRIC_ULPS below; the operators of most finite-element and finite-volume discretizations: Poisson,
   elasticity, where the boundary rows keep it so) keeps its diagonal and its strictly upper triangle only, and one
   pass over them forms y = A x: row r adds a(r,c) x(c) to y(r) and a(r,c) x(r) to y(c). About half the bytes of the
   AIJ loop are streamed (its values and column indices once for two entries); the second update is a read and a write
   of y at c, which lies where x(c) was read. This is the storage of PETSc's SBAIJ, kept here as a shadow copy for a
   user who assembled AIJ (docs/design.md, "The symmetric half").

   Sums are in another order than the AIJ loop's (y(c) gathers its lower entries as the rows above it pass), and a
   lower entry is taken as its upper mirror, which may differ from it by rounding: the products agree with AIJ's to
   rounding, not bit for bit. The symmetry is checked, not assumed, at the build and at every change of the values;
   values that are no longer symmetric drop the half (csrksetup.c).
*/
#include "csrkimpl.h"

/* entries a(r,c) and a(c,r) count as one where they differ by at most this many units of rounding of the diagonal's
   scale, sqrt(|a(r,r) a(c,c)|): an assembled operator is symmetric to rounding only (element matrices and sums of
   them formed in another order for (r,c) than for (c,r)), by at most 1.5 such units in the finite-element matrices of
   docs/performance.md; a product rounds each entry's contribution at that scale anyway */
#define CSRK_SYMMETRIC_ULPS 8.0

/* whether a(r,c) = a and its mirror a(c,r) = b agree, to rounding of the diagonals dr = a(r,r) and dc = a(c,c) */
static inline PetscBool CSRKMirrorsAgree(PetscScalar a, PetscScalar b, PetscScalar dr, PetscScalar dc)
{
  return (PetscBool)(a == b || PetscAbsScalar(a - b) <= CSRK_SYMMETRIC_ULPS * PETSC_MACHINE_EPSILON * PetscSqrtReal(PetscAbsScalar(dr) * PetscAbsScalar(dc)));
}

/*
  CSRKSymmetricFill - checks that the block (st's rowptr, colidx, val: the AIJ arrays or a copy of them) is symmetric,
  its pattern exactly and its values to rounding (CSRK_SYMMETRIC_ULPS), and writes the half: its diagonal (0 where
  there is none), its strictly upper entries and where their mirrors are. Row r's upper entries (r, c) are matched
  with the lower entries (c, r) of row c, which come in the order of r, through a cursor per row (as PETSc's
  MatIsTranspose_SeqAIJ does). Stops at the first mismatch: an unsymmetric block costs little.
*/
static PetscErrorCode CSRKSymmetricFill(MatCSRKStructure *st, PetscBool *symmetric)
{
  const CSRKIdx *restrict     rp = st->rowptr, *restrict cj = st->colidx;
  const PetscScalar *restrict va = st->val;
  PetscScalar *restrict       ud = st->udiag;
  const PetscInt              m  = st->m;
  const CSRKIdx               cap = (CSRKIdx)((st->nnz + 1) / 2); /* a symmetric block has at most this many */
  CSRKIdx                    *cur, nu = 0;

  PetscFunctionBegin;
  *symmetric = PETSC_FALSE;
  PetscCall(PetscMalloc1(m, &cur));
  /* the diagonal first (the tolerance of an entry needs that of its column's row); cur[r]: row r's first entry */
  for (PetscInt r = 0; r < m; r++) {
    CSRKIdx q = rp[r];

    while (q < rp[r + 1] && cj[q] < r) q++;
    ud[r]  = (q < rp[r + 1] && cj[q] == r) ? va[q] : 0.0;
    cur[r] = rp[r];
  }
  st->uptr[0] = 0;
  for (PetscInt r = 0; r < m; r++) {
    CSRKIdx q = rp[r];

    /* the lower entries of row r were all matched by the rows above (else the pattern is not symmetric) */
    while (q < rp[r + 1] && cj[q] < r) q++;
    if (cur[r] != q) goto done;
    if (q < rp[r + 1] && cj[q] == r) q++;
    for (; q < rp[r + 1]; q++) {
      const CSRKIdx c = cj[q], p = cur[c];

      if (p >= rp[c + 1] || cj[p] != r || nu == cap || !CSRKMirrorsAgree(va[q], va[p], ud[r], ud[c])) goto done;
      cur[c]          = p + 1;
      st->ucol[nu]    = c;
      st->umirror[nu] = p;
      st->uval[nu++]  = va[q];
    }
    st->uptr[r + 1] = nu;
  }
  *symmetric = PETSC_TRUE;
  st->nnzu   = nu;
done:
  PetscCall(PetscFree(cur));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  CSRKSymmetricRefill - the same check and copy for new values of the same pattern, through the mirrors found at the
  build: row r's upper entries are the last of its row, its diagonal the entry before them, and the loads of the
  mirrors do not wait on one another (the build's cursors do)
*/
static PetscErrorCode CSRKSymmetricRefill(MatCSRKStructure *st, PetscBool *symmetric)
{
  const CSRKIdx *restrict     rp = st->rowptr, *restrict cj = st->colidx, *restrict up = st->uptr, *restrict uc = st->ucol, *restrict mi = st->umirror;
  const PetscScalar *restrict va = st->val;
  PetscScalar *restrict       ud = st->udiag, *restrict uv = st->uval;

  PetscFunctionBegin;
  *symmetric = PETSC_FALSE;
  for (PetscInt r = 0; r < st->m; r++) {
    const CSRKIdx q0 = rp[r + 1] - (up[r + 1] - up[r]);

    ud[r] = (q0 > rp[r] && cj[q0 - 1] == r) ? va[q0 - 1] : 0.0;
  }
  for (PetscInt r = 0; r < st->m; r++) {
    const PetscScalar *v = va + rp[r + 1] - (up[r + 1] - up[r]) - up[r]; /* v[k]: the value of upper entry k */

    for (CSRKIdx k = up[r]; k < up[r + 1]; k++) {
      if (!CSRKMirrorsAgree(v[k], va[mi[k]], ud[r], ud[uc[k]])) PetscFunctionReturn(PETSC_SUCCESS);
      uv[k] = v[k];
    }
  }
  *symmetric = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* out = A x (+ zz) from the half, all rows (one thread): out starts as zz (or 0) and gathers each row's lower entries
   as the rows above pass */
static void CSRKSymmetricMult(const MatCSRKStructure *st, PetscInt t, PetscInt r0, PetscInt r1, const PetscScalar *restrict xx, const PetscScalar *restrict zz, PetscScalar *restrict out)
{
  const CSRKIdx *restrict     up = st->uptr, *restrict uc = st->ucol;
  const PetscScalar *restrict uv = st->uval, *restrict ud = st->udiag;

  /* (MatMultAdd() may pass y as z: out is then zz already, read only through out below) */
  if (!zz) for (PetscInt r = r0; r < r1; r++) out[r] = 0.0;
  else if ((const PetscScalar *)out != zz) for (PetscInt r = r0; r < r1; r++) out[r] = zz[r];
  for (PetscInt r = r0; r < r1; r++) {
    const PetscScalar  xr = xx[r];
    const CSRKIdx      q0 = up[r], nz = up[r + 1] - q0;
    const CSRKIdx     *c  = uc + q0;
    const PetscScalar *v  = uv + q0;
    PetscScalar        sum = out[r] + ud[r] * xr;

    for (CSRKIdx j = 0; j < nz; j++) {
      sum += v[j] * xx[c[j]];
      out[c[j]] += v[j] * xr;
    }
    out[r] = sum;
  }
}

/* MatCSRKSymmetricMayApply - whether a block with these options and sizes may keep its symmetric half: one thread in
   the natural order of a square block (the plan's expectation asks before anything is built) */
PetscBool MatCSRKSymmetricMayApply(const MatCSRKOptions *opt, PetscInt m, PetscInt n)
{
  return (PetscBool)(opt->feature[MAT_CSRK_SYMMETRIC_HALF] && m == n && m > 0);
}

/* as many bytes as AIJ's kernel: a rival of it, where the block may keep its half */
static MatCSRKExpectRule CSRKSymmetricExpect(const MatCSRKProbe *p)
{
  return MatCSRKSymmetricMayApply(p->opt, p->m, p->n) ? CSRK_EXPECT_RIVAL : CSRK_EXPECT_NO;
}

/* one thread in the natural order, over 32-bit columns (the AIJ arrays, or their copy) */
static PetscBool CSRKSymmetricApplies(const MatCSRKPlan *plan, const MatCSRKStructure *st)
{
  return (PetscBool)(plan->onethread && st->colidx && MatCSRKSymmetricMayApply(plan->opt, st->m, st->n));
}

static PetscErrorCode CSRKSymmetricBuild(Mat A, MatCSRKPlan *plan, MatCSRKStructure *st, PetscBool *built)
{
  PetscBool      repeat = PETSC_FALSE, symmetric;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  /* room for the most upper entries a symmetric block has; the check stops where a block needs more */
  PetscCall(PetscMalloc1(st->m + 1, &st->uptr));
  PetscCall(PetscMalloc1((st->nnz + 1) / 2, &st->ucol));
  PetscCall(PetscMalloc1((st->nnz + 1) / 2, &st->uval));
  PetscCall(PetscMalloc1((st->nnz + 1) / 2, &st->umirror));
  PetscCall(PetscMalloc1(st->m, &st->udiag));
  PetscCall(CSRKSymmetricFill(st, &symmetric));
  if (symmetric && st->nnzu > 0) { /* the room the diagonal did not take given back */
    PetscCall(PetscRealloc(sizeof(*st->ucol) * (size_t)st->nnzu, &st->ucol));
    PetscCall(PetscRealloc(sizeof(*st->uval) * (size_t)st->nnzu, &st->uval));
    PetscCall(PetscRealloc(sizeof(*st->umirror) * (size_t)st->nnzu, &st->umirror));
  }
  PetscCall(PetscTime(&t1));
  /* row nodes that multiply an earlier node's values stream fewer bytes than the half: they go first */
  if (symmetric) PetscCall(MatCSRKNodeValuesRepeat(plan, st, &repeat));
  if (!symmetric || repeat) PetscCall(MatCSRKVariantFree(&MatCSRKVariantSymmetric, st));
  PetscCall(PetscInfo(A, "Symmetric half: %s (%g s)\n", !symmetric ? "the block is not symmetric" : repeat ? "not kept, row nodes repeat their values" : "the block is symmetric, its diagonal and upper triangle kept", t1 - t0));
  *built = (PetscBool)(symmetric && !repeat);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* new values: the half copied again where they are still symmetric, else dropped (the structure then runs its index
   loop, which the set-up drops in turn for AIJ's kernel where that is AIJ's own loop) */
static PetscErrorCode CSRKSymmetricRefresh(MatCSRKStructure *st)
{
  PetscBool symmetric;

  PetscFunctionBegin;
  PetscCall(CSRKSymmetricRefill(st, &symmetric));
  if (!symmetric) {
    PetscCall(MatCSRKVariantFree(&MatCSRKVariantSymmetric, st));
    st->variant = MatCSRKVariantIndexLoop(st);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

const MatCSRKVariant MatCSRKVariantSymmetric = {"symmetric", CSRKSymmetricExpect, CSRKSymmetricApplies, CSRKSymmetricBuild, CSRKSymmetricMult, CSRKSymmetricRefresh, {CSRK_ARRAY(uptr, CSRK_LEN_M1, PETSC_FALSE), CSRK_ARRAY(ucol, CSRK_LEN_NNZU, PETSC_FALSE), CSRK_ARRAY(uval, CSRK_LEN_NNZU, PETSC_FALSE), CSRK_ARRAY(umirror, CSRK_LEN_NNZU, PETSC_FALSE), CSRK_ARRAY(udiag, CSRK_LEN_M, PETSC_FALSE)}, 30.0, 4.0, "symmetric_half"};
