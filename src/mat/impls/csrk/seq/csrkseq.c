/*
   MATSEQCSRK ("seqaijcsrk"): a SeqAIJ subclass whose MatMult/MatMultAdd run through the CSR-k structure.

   The AIJ arrays stay the master copy, so every inherited AIJ operation (MatGetRow, factorizations, MatView,
   MatMultTranspose, ...) sees the user's matrix. The CSR-k structure is keyed on A->nonzerostate (pattern:
   ordering and pointers are rebuilt) and on the object state (values: one refresh pass, no re-ordering; also after
   MatRetrieveValues(), which bypasses the state), and is brought up to date lazily by the products when the set-up
   budget allows it (csrksetup.c); until then they run AIJ's kernel (docs/design.md, "Value changes", "Set-up budget").
*/
#include "../csrkimpl.h"

/* zz = A xx + yy (yy NULL: MatMult()): with the structure once built and current, else through the set-up (csrksetup.c),
   which counts the product and may build or refresh it; without one, AIJ's kernel */
PetscErrorCode MatMultAdd_SeqCSRK(Mat A, Vec xx, Vec yy, Vec zz)
{
  Mat_SeqCSRK          *sp = (Mat_SeqCSRK *)A->spptr;
  MatCSRKStructure     *st = sp->st;
  const PetscScalar    *x, *y = NULL;
  PetscScalar          *z;
  const struct _MatOps *base;
  PetscObjectState      state;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  if (!st || sp->state != state || sp->nzstate != A->nonzerostate || sp->stale || sp->offdiag) PetscCall(MatSeqCSRKSetUp(A, PETSC_TRUE, &st));
  if (!st) {
    sp->budget.nbase++;
    PetscCall(MatCSRKGetBaseOps(PETSC_FALSE, &base));
    if (yy) PetscCall((*base->multadd)(A, xx, yy, zz));
    else PetscCall((*base->mult)(A, xx, zz));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  sp->budget.nfast++; /* (a structure over the AIJ arrays was attached to them at the state it was made current for) */
  PetscCall(VecGetArrayRead(xx, &x));
  if (yy == zz) {
    PetscCall(VecGetArray(zz, &z));
    y = z;
  } else {
    if (yy) PetscCall(VecGetArrayRead(yy, &y));
    PetscCall(VecGetArrayWrite(zz, &z));
  }
  MatCSRKMultKernel(st, x, y, z);
  PetscCall(VecRestoreArrayRead(xx, &x));
  if (yy == zz) PetscCall(VecRestoreArray(zz, &z));
  else {
    if (yy) PetscCall(VecRestoreArrayRead(yy, &y));
    PetscCall(VecRestoreArrayWrite(zz, &z));
  }
  PetscCall(PetscLogFlops(2.0 * st->nnz - (yy ? 0 : st->nonzerorows)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatMult_SeqCSRK(Mat A, Vec xx, Vec yy)
{
  PetscFunctionBegin;
  PetscCall(MatMultAdd_SeqCSRK(A, xx, NULL, yy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatRetrieveValues() copies the stored values back into the AIJ array without increasing the object state in PETSc
   3.18 (MatRetrieveValues_SeqAIJ; newer releases increase it in MatRetrieveValues()), so the copy is refreshed on the
   next product whatever the state says. The state itself is left as aij leaves it: a preconditioner keyed on it is
   then rebuilt, or kept, exactly as with aij. MPIAIJ's MatRetrieveValues() calls MatRetrieveValues() on its blocks,
   so the MPI types (csrkcuda's too) need nothing of their own. */
static PetscErrorCode (*MatRetrieveValues_AIJ)(Mat);

static PetscErrorCode MatRetrieveValues_SeqCSRK(Mat A)
{
  Mat_SeqCSRK *sp;

  PetscFunctionBegin;
  PetscCall((*MatRetrieveValues_AIJ)(A));
  PetscCall(MatCSRKGetSpptr(A, &sp));
  sp->state = -1; /* no object state: the values are copied at the next product */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSeqCSRKGetInfo_SeqCSRK(Mat A, MatCSRKInfo *info)
{
  Mat_SeqCSRK      *sp;
  MatCSRKStructure *st = NULL;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetSpptr(A, &sp));
  PetscCall(PetscMemzero(info, sizeof(*info)));
  /* eager: what the next product would use; else what the block has now, without spending on it */
  if (A->assembled && sp->opt.setup == MAT_CSRK_SETUP_EAGER) PetscCall(MatSeqCSRKSetUp(A, PETSC_FALSE, &st));
  else if (A->assembled && sp->st && !sp->stale && sp->nzstate == A->nonzerostate) st = sp->st;
  info->k        = sp->opt.k;
  info->ordering = sp->opt.ordering;
  if (st) {
    PetscCall(MatCSRKStructureComputeBandwidth(A, st));
    info->k          = st->k;
    info->sr_size    = st->sr_size;
    info->ssr_size   = st->ssr_size;
    info->nsr        = st->nsr;
    info->nssr       = st->nssr;
    info->ordering   = st->ordering;
    info->bw_before  = st->bw_before;
    info->bw_after   = st->bw_after;
    info->nthreads   = st->nthreads;
    info->bytes      = st->bytes;
    info->index_bytes = st->rowpat ? 0 : (st->coloff ? (PetscInt)sizeof(int16_t) : (PetscInt)sizeof(CSRKIdx));
    info->npatterns   = st->rowpat ? st->npat : 0;
    info->nsliced     = st->sval ? st->nsliced : 0;
    info->nnoderows   = st->nodesz ? st->nnoderows : 0;
    info->nvalued     = st->sval || st->nodesrc ? st->nvalued : 0;
    PetscCall(PetscStrncpy(info->variant, st->variant->name, sizeof(info->variant)));
  } else if (A->assembled) { /* the threads the kernels will run */
    MatInfo ainfo;
    PetscCall(MatGetInfo(A, MAT_LOCAL, &ainfo));
    info->nthreads = MatCSRKKernelThreads(&sp->opt, (PetscInt)ainfo.nz_used);
  }
  if (A->assembled && !sp->offdiag) PetscCall(MatSeqCSRKExpected(A, info->expected, sizeof(info->expected), &info->wait));
  else info->wait = -1;
  info->build_time = sp->setup_time;
  info->nbuilds  = sp->nbuilds;
  info->nrefresh = sp->nrefresh;
  info->nbase    = sp->budget.nbase;
  info->nfast    = sp->budget.nfast;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* New options: the structure is expected and built again, and only if they changed */
PetscErrorCode MatSeqCSRKSetOptions(Mat A, const MatCSRKOptions *opt)
{
  Mat_SeqCSRK *sp;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetSpptr(A, &sp));
  if (!MatCSRKOptionsEqual(&sp->opt, opt) || sp->opt.setup != opt->setup) sp->stale = PETSC_TRUE; /* (the set-up rule: what is expected changes) */
  sp->opt = *opt;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatDuplicate_SeqCSRK(Mat A, MatDuplicateOption op, Mat *M)
{
  const struct _MatOps *base;
  Mat_SeqCSRK          *sp, *sm;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetBaseOps(PETSC_FALSE, &base));
  PetscCall((*base->duplicate)(A, op, M)); /* creates *M with A's type name, hence with an empty CSR-k part */
  PetscCall(MatCSRKGetSpptr(A, &sp));
  PetscCall(MatCSRKGetSpptr(*M, &sm));
  sm->opt = sp->opt;
  if (sp->st && !sp->stale && sp->nzstate == A->nonzerostate) {
    /* same pattern: keep the structure and its expectation, refresh the values at the first product */
    PetscCall(MatCSRKStructureDuplicate(sp->st, &sm->st));
    sm->budget  = sp->budget;
    sm->budget.nbase = sm->budget.nfast = 0;
    sm->nzstate = (*M)->nonzerostate;
    sm->state   = -1;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Frees the CSR-k data of A (MatCSRKSetMethods() takes its methods away) */
static PetscErrorCode MatSeqCSRKClear(Mat A)
{
  Mat_SeqCSRK *sp = (Mat_SeqCSRK *)A->spptr;

  PetscFunctionBegin;
  /* spptr can be NULL after MatHeaderMerge() */
  if (sp) {
    PetscCall(MatCSRKStructureDestroy(&sp->st));
    PetscCall(PetscFree(A->spptr));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The SeqAIJ methods this type replaces and the functions composed on it: the options, the summary, and the conversions
   from and to AIJ under the names MatConvert() looks up, "MatConvert_<from>_<to as typed, with or without the seq
   prefix>_C", on the source and then on a new matrix of the target type */
const MatCSRKMethods SeqCSRKMethods = {
  PETSC_FALSE,
  MATSEQCSRK,
  MATSEQAIJ,
  {CSRK_METHOD(MATOP_MULT, MatMult_SeqCSRK), CSRK_METHOD(MATOP_MULT_ADD, MatMultAdd_SeqCSRK), CSRK_METHOD(MATOP_DESTROY, MatDestroy_SeqCSRK), CSRK_METHOD(MATOP_DUPLICATE, MatDuplicate_SeqCSRK),
   CSRK_METHOD(MATOP_SET_FROM_OPTIONS, MatSetFromOptions_CSRK), CSRK_METHOD(MATOP_VIEW, MatView_CSRK)},
  {CSRK_COMPOSED("MatConvert_seqaij_seqaijcsrk_C", MatConvert_SeqAIJ_SeqCSRK), CSRK_COMPOSED("MatConvert_seqaij_csrk_C", MatConvert_SeqAIJ_SeqCSRK), CSRK_COMPOSED("MatConvert_seqaijcsrk_seqaij_C", MatConvert_SeqCSRK_SeqAIJ),
   CSRK_COMPOSED("MatCSRKGetOptions_C", MatCSRKGetOptions_CSRK), CSRK_COMPOSED("MatCSRKSetOptions_C", MatSeqCSRKSetOptions), CSRK_COMPOSED("MatCSRKGetInfo_C", MatSeqCSRKGetInfo_SeqCSRK)}
};

PetscErrorCode MatDestroy_SeqCSRK(Mat A)
{
  const struct _MatOps *base;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetBaseOps(PETSC_FALSE, &base));
  PetscCall(MatSeqCSRKClear(A));
  PetscCall(MatCSRKSetMethods(A, &SeqCSRKMethods, PETSC_FALSE));
  PetscCall((*base->destroy)(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatConvert_SeqCSRK_SeqAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  PetscFunctionBegin;
  PetscCall(MatCSRKConvertTarget(A, reuse, newmat));
  if (reuse == MAT_REUSE_MATRIX) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatSeqCSRKClear(*newmat));
  PetscCall(MatCSRKSetMethods(*newmat, &SeqCSRKMethods, PETSC_FALSE));
  PetscCall(PetscObjectComposeFunction((PetscObject)*newmat, "MatRetrieveValues_C", MatRetrieveValues_AIJ));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatConvert_SeqAIJ_SeqCSRK - converts a SeqAIJ matrix to MATSEQCSRK: keeps the AIJ storage and installs the CSR-k methods
*/
PetscErrorCode MatConvert_SeqAIJ_SeqCSRK(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat_SeqCSRK *sp;
  PetscBool    same;

  PetscFunctionBegin;
  PetscCall(MatCSRKConvertTarget(A, reuse, newmat));
  PetscCall(PetscObjectTypeCompare((PetscObject)*newmat, MATSEQCSRK, &same));
  if (same) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscNew(&sp));
  PetscCall(MatCSRKOptionsFromMat(A, &sp->opt));
  sp->nzstate      = -1;
  sp->state        = -1;
  (*newmat)->spptr = sp;
  PetscCall(MatCSRKSetMethods(*newmat, &SeqCSRKMethods, PETSC_TRUE));
  if (!MatRetrieveValues_AIJ) PetscCall(PetscObjectQueryFunction((PetscObject)*newmat, "MatRetrieveValues_C", &MatRetrieveValues_AIJ));
  PetscCheck(MatRetrieveValues_AIJ, PETSC_COMM_SELF, PETSC_ERR_PLIB, "SeqAIJ MatRetrieveValues() not found");
  PetscCall(PetscObjectComposeFunction((PetscObject)*newmat, "MatRetrieveValues_C", MatRetrieveValues_SeqCSRK));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   MATSEQCSRK - MATSEQCSRK = "seqaijcsrk" - the sequential CSR-k matrix type, a `MATSEQAIJ` subclass whose `MatMult()`
   and `MatMultAdd()` run the CSR-k kernels (`MATCSRK`); all other operations are those of `MATSEQAIJ`.

   Options Database Keys: those of `MATCSRK`.

   Level: beginner

.seealso: `MATCSRK`, `MATMPICSRK`, `MatCSRKSetOrdering()`, `MatCSRKSetLevels()`
M*/
PetscErrorCode MatCreate_SeqCSRK(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatSetType(A, MATSEQAIJ));
  PetscCall(MatConvert_SeqAIJ_SeqCSRK(A, MATSEQCSRK, MAT_INPLACE_MATRIX, &A));
  PetscFunctionReturn(PETSC_SUCCESS);
}
