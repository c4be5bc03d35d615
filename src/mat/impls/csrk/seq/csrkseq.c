/*
   MATSEQCSRK ("seqaijcsrk"): a SeqAIJ subclass whose MatMult/MatMultAdd run through the CSR-k structure.

   The AIJ arrays stay the master copy, so every inherited AIJ operation (MatGetRow, factorizations, MatView,
   MatMultTranspose, ...) sees the user's matrix. The CSR-k structure is keyed on A->nonzerostate (pattern:
   ordering and pointers are rebuilt) and on the object state (values: one refresh pass, no re-ordering), and
   is brought up to date lazily by the products.
*/
#include "../csrkimpl.h"

/* MatConvert() looks for "MatConvert_<from>_<to as typed, with or without the seq prefix>_C" on the source, then on
   a new matrix of the target type: these are the names for conversions from and to AIJ */
static const char *const SeqCSRKFromAIJ[] = {"MatConvert_seqaij_seqaijcsrk_C", "MatConvert_seqaij_csrk_C", NULL};
static const char *const SeqCSRKToAIJ[]   = {"MatConvert_seqaijcsrk_seqaij_C", NULL};

static PetscErrorCode MatSeqCSRKGetSpptr(Mat A, Mat_SeqCSRK **sp)
{
  PetscFunctionBegin;
  *sp = (Mat_SeqCSRK *)A->spptr;
  PetscCheck(*sp, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Matrix of type %s has no CSR-k data", ((PetscObject)A)->type_name);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The structure for the current pattern, options and values of A */
PetscErrorCode MatSeqCSRKGetUpToDateStructure(Mat A, MatCSRKStructure **st)
{
  Mat_SeqCSRK     *sp;
  PetscObjectState state;

  PetscFunctionBegin;
  PetscCall(MatSeqCSRKGetSpptr(A, &sp));
  PetscCheck(A->assembled, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "Not for unassembled matrix");
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  if (!sp->st || sp->stale || sp->nzstate != A->nonzerostate) {
    PetscCall(MatCSRKStructureDestroy(&sp->st));
    PetscCall(MatCSRKStructureBuild(A, &sp->opt, &sp->st));
    sp->nzstate = A->nonzerostate;
    sp->state   = state;
    sp->stale   = PETSC_FALSE;
    sp->nbuilds++;
  } else if (sp->state != state) {
    PetscCall(PetscLogEventBegin(MAT_CSRKBuild, A, 0, 0, 0));
    PetscCall(MatCSRKStructureRefreshValues(A, sp->st));
    PetscCall(PetscLogEventEnd(MAT_CSRKBuild, A, 0, 0, 0));
    sp->state = state;
    sp->nrefresh++;
  }
  PetscCall(MatCSRKStructureAttach(A, sp->st));
  *st = sp->st;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatMult_SeqCSRK(Mat A, Vec xx, Vec yy)
{
  MatCSRKStructure  *st;
  const PetscScalar *x;
  PetscScalar       *y;

  PetscFunctionBegin;
  PetscCall(MatSeqCSRKGetUpToDateStructure(A, &st));
  PetscCall(VecGetArrayRead(xx, &x));
  PetscCall(VecGetArrayWrite(yy, &y));
  PetscCall(MatCSRKMultKernel(st, x, NULL, y));
  PetscCall(VecRestoreArrayRead(xx, &x));
  PetscCall(VecRestoreArrayWrite(yy, &y));
  PetscCall(PetscLogFlops(2.0 * st->nnz - st->nonzerorows));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatMultAdd_SeqCSRK(Mat A, Vec xx, Vec yy, Vec zz)
{
  MatCSRKStructure  *st;
  const PetscScalar *x, *y;
  PetscScalar       *z;

  PetscFunctionBegin;
  PetscCall(MatSeqCSRKGetUpToDateStructure(A, &st));
  PetscCall(VecGetArrayRead(xx, &x));
  if (yy == zz) {
    PetscCall(VecGetArray(zz, &z));
    y = z;
  } else {
    PetscCall(VecGetArrayRead(yy, &y));
    PetscCall(VecGetArrayWrite(zz, &z));
  }
  PetscCall(MatCSRKMultKernel(st, x, y, z));
  PetscCall(VecRestoreArrayRead(xx, &x));
  if (yy == zz) PetscCall(VecRestoreArray(zz, &z));
  else {
    PetscCall(VecRestoreArrayRead(yy, &y));
    PetscCall(VecRestoreArrayWrite(zz, &z));
  }
  PetscCall(PetscLogFlops(2.0 * st->nnz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MPIAIJ scales its blocks through the method table, bypassing MatDiagonalScale() and its state increase */
static PetscErrorCode MatDiagonalScale_SeqCSRK(Mat A, Vec ll, Vec rr)
{
  const struct _MatOps *base;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetBaseOps(PETSC_FALSE, &base));
  PetscCall((*base->diagonalscale)(A, ll, rr));
  PetscCall(PetscObjectStateIncrease((PetscObject)A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetFromOptions_SeqCSRK(Mat A, CSRKOptionItems PetscOptionsObject)
{
  const struct _MatOps *base;
  Mat_SeqCSRK          *sp;
  MatCSRKOptions        opt;
  PetscBool             changed, cuda;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetBaseOps(PETSC_FALSE, &base));
  if (base->setfromoptions) PetscCall((*base->setfromoptions)(A, PetscOptionsObject));
  PetscCall(MatSeqCSRKGetSpptr(A, &sp));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQCSRKCUDA, &cuda));
  opt = sp->opt;
  PetscCall(MatCSRKOptionsFromDatabase(PetscOptionsObject, ((PetscObject)A)->prefix, cuda, &opt, &changed));
  if (changed) PetscCall(MatSeqCSRKSetOptions(A, &opt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatView_SeqCSRK(Mat A, PetscViewer viewer)
{
  PetscFunctionBegin;
  PetscCall(MatView_CSRK(A, viewer, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSeqCSRKGetInfo_SeqCSRK(Mat A, MatCSRKInfo *info)
{
  Mat_SeqCSRK      *sp;
  MatCSRKStructure *st = NULL;

  PetscFunctionBegin;
  PetscCall(MatSeqCSRKGetSpptr(A, &sp));
  PetscCall(PetscMemzero(info, sizeof(*info)));
  if (A->assembled) PetscCall(MatSeqCSRKGetUpToDateStructure(A, &st));
  info->k        = sp->opt.k;
  info->ordering = sp->opt.ordering;
  info->layout   = sp->opt.layout;
  if (st) {
    info->k          = st->k;
    info->sr_size    = st->sr_size;
    info->ssr_size   = st->ssr_size;
    info->nsr        = st->nsr;
    info->nssr       = st->nssr;
    info->ordering   = st->ordering;
    info->layout     = st->layout;
    info->bw_before  = st->bw_before;
    info->bw_after   = st->bw_after;
    info->nthreads   = st->nthreads;
    info->build_time = st->build_time;
    info->bytes      = st->bytes;
    info->tuning      = st->tuning;
    info->ncandidates = st->ncand;
    info->index_bytes = st->index_bytes;
    info->npatterns   = st->rowpat ? st->npat : 0;
    info->nsliced     = st->sval ? st->nsliced : 0;
    info->nnoderows   = st->nodesz ? st->nnoderows : 0;
  }
  info->nbuilds  = sp->nbuilds;
  info->nrefresh = sp->nrefresh;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCSRKGetOptions_SeqCSRK(Mat A, MatCSRKOptions *opt)
{
  Mat_SeqCSRK *sp;

  PetscFunctionBegin;
  PetscCall(MatSeqCSRKGetSpptr(A, &sp));
  *opt = sp->opt;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* New options: the structure is rebuilt at the next product, and only if they changed */
PetscErrorCode MatSeqCSRKSetOptions(Mat A, const MatCSRKOptions *opt)
{
  Mat_SeqCSRK *sp;

  PetscFunctionBegin;
  PetscCall(MatSeqCSRKGetSpptr(A, &sp));
  if (!MatCSRKOptionsEqual(&sp->opt, opt)) {
    sp->opt   = *opt;
    sp->stale = PETSC_TRUE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSeqCSRKClear(Mat A)
{
  Mat_SeqCSRK *sp = (Mat_SeqCSRK *)A->spptr;

  PetscFunctionBegin;
  /* spptr can be NULL after MatHeaderMerge() */
  if (sp) {
    PetscCall(MatCSRKStructureDestroy(&sp->st));
    PetscCall(PetscFree(A->spptr));
  }
  PetscCall(MatCSRKComposeConverters(A, SeqCSRKFromAIJ, NULL));
  PetscCall(MatCSRKComposeConverters(A, SeqCSRKToAIJ, NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatCSRKGetOptions_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatCSRKSetOptions_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatCSRKGetInfo_C", NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatDestroy_SeqCSRK(Mat A)
{
  const struct _MatOps *base;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetBaseOps(PETSC_FALSE, &base));
  PetscCall(MatSeqCSRKClear(A));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATSEQAIJ));
  PetscCall((*base->destroy)(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDuplicate_SeqCSRK(Mat A, MatDuplicateOption op, Mat *M)
{
  const struct _MatOps *base;
  Mat_SeqCSRK          *sp, *sm;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetBaseOps(PETSC_FALSE, &base));
  PetscCall((*base->duplicate)(A, op, M)); /* creates *M with A's type name, hence with an empty CSR-k part */
  PetscCall(MatSeqCSRKGetSpptr(A, &sp));
  PetscCall(MatSeqCSRKGetSpptr(*M, &sm));
  sm->opt = sp->opt;
  if (sp->st && !sp->stale && sp->nzstate == A->nonzerostate) {
    /* same pattern: keep the ordering, refresh the values at the first product */
    PetscCall(MatCSRKStructureDuplicate(sp->st, &sm->st));
    sm->nzstate = (*M)->nonzerostate;
    sm->state   = -1;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatConvert_SeqCSRK_SeqAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat                   B = *newmat;
  const struct _MatOps *base;

  PetscFunctionBegin;
  (void)type;
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
  else if (reuse == MAT_REUSE_MATRIX) PetscCall(MatCopy(A, B, SAME_NONZERO_PATTERN));
  if (reuse != MAT_REUSE_MATRIX) {
    PetscCall(MatCSRKGetBaseOps(PETSC_FALSE, &base));
    B->ops->destroy        = base->destroy;
    B->ops->duplicate      = base->duplicate;
    B->ops->mult           = base->mult;
    B->ops->multadd        = base->multadd;
    B->ops->diagonalscale  = base->diagonalscale;
    B->ops->setfromoptions = base->setfromoptions;
    B->ops->view           = base->view;
    PetscCall(MatSeqCSRKClear(B));
    PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATSEQAIJ));
  }
  *newmat = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The conversion that MatConvert() finds: the converter, then the -mat_csrk_* options (the internal conversions, of
   MatCreate_SeqCSRK() and of the MPI blocks, take their options from their caller) */
static PetscErrorCode MatConvert_SeqAIJ_SeqCSRK_Options(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  PetscFunctionBegin;
  PetscCall(MatConvert_SeqAIJ_SeqCSRK(A, type, reuse, newmat));
  PetscCall(MatCSRKConvertFromOptions(A, *newmat));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatConvert_SeqAIJ_SeqCSRK - converts a SeqAIJ matrix to MATSEQCSRK: keeps the AIJ storage and installs the CSR-k methods
*/
PetscErrorCode MatConvert_SeqAIJ_SeqCSRK(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat          B = *newmat;
  Mat_SeqCSRK *sp;
  PetscBool    same;

  PetscFunctionBegin;
  (void)type;
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
  else if (reuse == MAT_REUSE_MATRIX) PetscCall(MatCopy(A, B, SAME_NONZERO_PATTERN));
  PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQCSRK, &same));
  if (same) {
    *newmat = B;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscNew(&sp));
  PetscCall(MatCSRKOptionsDefault(&sp->opt));
  sp->nzstate = -1;
  sp->state   = -1;
  B->spptr    = sp;

  B->ops->mult           = MatMult_SeqCSRK;
  B->ops->multadd        = MatMultAdd_SeqCSRK;
  B->ops->destroy        = MatDestroy_SeqCSRK;
  B->ops->duplicate      = MatDuplicate_SeqCSRK;
  B->ops->diagonalscale  = MatDiagonalScale_SeqCSRK;
  B->ops->setfromoptions = MatSetFromOptions_SeqCSRK;
  B->ops->view           = MatView_SeqCSRK;
  PetscCall(MatCSRKComposeConverters(B, SeqCSRKToAIJ, MatConvert_SeqCSRK_SeqAIJ));
  PetscCall(MatCSRKComposeConverters(B, SeqCSRKFromAIJ, MatConvert_SeqAIJ_SeqCSRK_Options));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatCSRKGetOptions_C", MatCSRKGetOptions_SeqCSRK));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatCSRKSetOptions_C", MatSeqCSRKSetOptions));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatCSRKGetInfo_C", MatSeqCSRKGetInfo_SeqCSRK));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATSEQCSRK));
  *newmat = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   MATSEQCSRK - MATSEQCSRK = "seqaijcsrk" - the sequential CSR-k matrix type, a `MATSEQAIJ` subclass.

   MatMult() and MatMultAdd() run OpenMP kernels over a reordered copy of the matrix grouped into super-rows
   (k = 2) and super-super-rows (k = 3); all other operations are those of `MATSEQAIJ`.

   Options Database Keys:
+  -mat_type csrk - selects this type on one process (the root name "csrk")
.  -mat_csrk_k <2> - levels: 1 (CSR), 2 or 3
.  -mat_csrk_sr_size <n> - rows per super-row (default from the tuning rule)
.  -mat_csrk_ssr_size <n> - super-rows per super-super-row
.  -mat_csrk_ordering <auto,natural,rcm,bandk> - row ordering of the structure
.  -mat_csrk_layout <renumbered,rowperm> - storage of a reordered matrix
.  -mat_csrk_tune <model,search> - sizes from the model or from timed candidates
.  -mat_csrk_compress_indices <bool> - column indices as 16-bit offsets from the diagonal where they fit
-  -mat_csrk_threads <n> - OpenMP threads of the kernels

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
