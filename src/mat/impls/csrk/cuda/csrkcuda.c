/*
   MATSEQCSRKCUDA ("seqaijcsrkcuda"): the sequential CSR-k type with the products on an NVIDIA GPU.

   A MATSEQCSRKCUDA is a MATSEQCSRK (same AIJ master copy, same option handling) whose products run on a device copy
   made from the AIJ arrays on the device itself (csrkcudasetup.cu), in the user's ordering; the host CSR-k structure
   is built only for products with host vectors or while the matrix is bound to the CPU. The device copy follows the
   nonzero state (a new layout) and the object state (new values, uploaded once at the next device operation), so
   nothing crosses between host and device while they do not change. The MPI type (csrkcudampi.c) is MATMPICSRK with
   these blocks.
*/
#include "csrkcuda.h"
#include <petscdevice.h>

static const char *const SeqCUDAFrom[]    = {"MatConvert_seqaij_seqaijcsrkcuda_C", "MatConvert_seqaij_csrkcuda_C", "MatConvert_seqaijcsrk_seqaijcsrkcuda_C", "MatConvert_seqaijcsrk_csrkcuda_C", "MatConvert_seqaijcusparse_seqaijcsrkcuda_C", "MatConvert_seqaijcusparse_csrkcuda_C", NULL};
static const char *const SeqCUDAToAIJ[]   = {"MatConvert_seqaijcsrkcuda_seqaij_C", "MatConvert_seqaijcsrkcuda_seqaijcusparse_C", "MatConvert_seqaijcsrkcuda_aijcusparse_C", NULL};
static const char *const SeqCUDAToCSRK[]  = {"MatConvert_seqaijcsrkcuda_seqaijcsrk_C", "MatConvert_seqaijcsrkcuda_csrk_C", NULL};

static Mat_SeqCSRKCUDA *MatSeqCSRKCUDAGetData(Mat A)
{
  return (Mat_SeqCSRKCUDA *)((Mat_SeqCSRK *)A->spptr)->cuda;
}

/* the options that shape the device layout */
static PetscBool MatSeqCSRKCUDAOptionsEqual(const MatCSRKOptions *a, const MatCSRKOptions *b)
{
  return (PetscBool)(a->k == b->k && a->sr_size == b->sr_size && a->ssr_size == b->ssr_size && a->compress == b->compress && a->patterns == b->patterns && a->cuda_kernel == b->cuda_kernel);
}

/* The device copy for the current pattern, options and values of A: built on the device from the AIJ arrays when the
   pattern or the options changed, the values uploaded once when only they changed (the object state moved) */
static PetscErrorCode MatSeqCSRKCUDACopyToGPU(Mat A, CSRKDevice **dev)
{
  Mat_SeqCSRK     *sp = (Mat_SeqCSRK *)A->spptr;
  Mat_SeqCSRKCUDA *c  = MatSeqCSRKCUDAGetData(A);
  PetscObjectState state;

  PetscFunctionBegin;
  PetscCheck(A->assembled, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "Not for unassembled matrix");
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  if (c->offloadmask == PETSC_OFFLOAD_BOTH && c->state != state) c->offloadmask = PETSC_OFFLOAD_CPU;
  if (!c->dev || c->nzstate != A->nonzerostate || !MatSeqCSRKCUDAOptionsEqual(&c->opt, &sp->opt)) {
    const CSRKDevice *d;

    PetscCall(PetscLogEventBegin(MAT_CSRKBuild, A, 0, 0, 0));
    PetscCall(MatCSRKCUDADeviceSetUp(A, &sp->opt, &c->dev));
    PetscCall(PetscLogEventEnd(MAT_CSRKBuild, A, 0, 0, 0));
    c->nsetups++;
    c->nzstate = A->nonzerostate;
    c->opt     = sp->opt;
    d          = c->dev;
    PetscCall(PetscInfo(A, "CSR-k set up on the device: kernel %s, %" PetscInt_FMT " lanes per row, block %ux%ux%u, %" PetscInt_FMT " long rows, %" PetscInt_FMT " padded entries, %g MB of device memory (row length mean %g, variance %g, max %" PetscInt_FMT ")\n", MatCSRKCUDAKernels[d->kernel], d->width, d->bx, d->by, d->bz, d->nlong, d->pnnz, d->bytes / 1048576.0, (double)d->mean, (double)d->var, d->maxlen));
    if (d->rowpat) PetscCall(PetscInfo(A, "Sliced kernel over row patterns: %" PetscInt_FMT " distinct rows\n", d->npat));
    if (d->crows) PetscCall(PetscInfo(A, "Products over the %" PetscInt_FMT " non-empty rows of %" PetscInt_FMT "\n", d->nc, d->m));
  } else if (c->offloadmask != PETSC_OFFLOAD_BOTH) {
    PetscCall(PetscLogEventBegin(MAT_CSRKBuild, A, 0, 0, 0));
    PetscCall(MatCSRKCUDADeviceRefresh(A, c->dev));
    PetscCall(PetscLogEventEnd(MAT_CSRKBuild, A, 0, 0, 0));
    c->nrefresh++;
  }
  c->state       = state;
  c->offloadmask = PETSC_OFFLOAD_BOTH;
  *dev           = c->dev;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The off-diagonal block reads the MPI matrix's ghost vector: when a matrix assembled on the host was converted,
   that vector is still a host vector; make it a device one once, so that the halo exchange stays on the device. */
static PetscErrorCode MatSeqCSRKCUDAPrepareInput(Mat A, Vec xx)
{
  Mat_SeqCSRK *sp = (Mat_SeqCSRK *)A->spptr;
  PetscBool    iscuda;

  PetscFunctionBegin;
  if (!sp->offdiag) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompareAny((PetscObject)xx, &iscuda, VECSEQCUDA, VECMPICUDA, ""));
  if (!iscuda) PetscCall(VecSetType(xx, VECSEQCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* z = op(A) x + y (y may be NULL; op: A or A^T) on the device when the output vector lives there, else on the host
   with the host views of the inputs */
static PetscErrorCode MatProduct_SeqCSRKCUDA(Mat A, PetscBool transpose, Vec xx, Vec yy, Vec zz)
{
  CSRKDevice           *d = NULL;
  const PetscScalar    *x, *y = NULL, *xd;
  PetscScalar          *z;
  PetscMemType          xmt, ymt, zmt;
  const struct _MatOps *base;

  PetscFunctionBegin;
  if (!transpose) PetscCall(MatSeqCSRKCUDAPrepareInput(A, xx));
  if (yy == zz) PetscCall(VecGetArrayAndMemType(zz, &z, &zmt));
  else PetscCall(VecGetArrayWriteAndMemType(zz, &z, &zmt));
  if (!PetscMemTypeDevice(zmt)) {
    if (yy == zz) PetscCall(VecRestoreArrayAndMemType(zz, &z));
    else PetscCall(VecRestoreArrayWriteAndMemType(zz, &z));
    PetscCall(MatCSRKGetBaseOps(PETSC_FALSE, &base));
    if (!transpose && yy) PetscCall(MatMultAdd_SeqCSRK(A, xx, yy, zz));
    else if (!transpose) PetscCall(MatMult_SeqCSRK(A, xx, zz));
    else if (yy) PetscCall((*base->multtransposeadd)(A, xx, yy, zz));
    else PetscCall((*base->multtranspose)(A, xx, zz));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatSeqCSRKCUDACopyToGPU(A, &d));
  if (transpose && !d->t) PetscCall(MatCSRKCUDADeviceBuildTranspose(A, d));
  PetscCall(VecGetArrayReadAndMemType(xx, &x, &xmt));
  xd = x;
  if (!PetscMemTypeDevice(xmt)) PetscCall(MatCSRKCUDADeviceStage(d, x, transpose ? d->m : d->n, &xd));
  if (yy && yy != zz) {
    PetscCall(VecGetArrayReadAndMemType(yy, &y, &ymt));
    PetscCheck(PetscMemTypeDevice(ymt), PETSC_COMM_SELF, PETSC_ERR_SUP, "A product adding a host vector y into a device vector z is not supported: use vectors of one kind");
  } else if (yy) y = z;
  PetscCall(PetscLogGpuTimeBegin());
  if (transpose) PetscCall(MatCSRKCUDADeviceMultTranspose(d, xd, y, z));
  else PetscCall(MatCSRKCUDADeviceMult(d, xd, y, z));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops(yy || transpose ? 2.0 * d->nnz : 2.0 * d->nnz - d->nonzerorows));
  PetscCall(VecRestoreArrayReadAndMemType(xx, &x));
  if (yy && yy != zz) PetscCall(VecRestoreArrayReadAndMemType(yy, &y));
  if (yy == zz) PetscCall(VecRestoreArrayAndMemType(zz, &z));
  else PetscCall(VecRestoreArrayWriteAndMemType(zz, &z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMult_SeqCSRKCUDA(Mat A, Vec xx, Vec yy)
{
  PetscFunctionBegin;
  PetscCall(MatProduct_SeqCSRKCUDA(A, PETSC_FALSE, xx, NULL, yy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultAdd_SeqCSRKCUDA(Mat A, Vec xx, Vec yy, Vec zz)
{
  PetscFunctionBegin;
  PetscCall(MatProduct_SeqCSRKCUDA(A, PETSC_FALSE, xx, yy, zz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the transposes run through a stored transpose of the device copy, built at the first use */
static PetscErrorCode MatMultTranspose_SeqCSRKCUDA(Mat A, Vec xx, Vec yy)
{
  PetscFunctionBegin;
  PetscCall(MatProduct_SeqCSRKCUDA(A, PETSC_TRUE, xx, NULL, yy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultTransposeAdd_SeqCSRKCUDA(Mat A, Vec xx, Vec yy, Vec zz)
{
  PetscFunctionBegin;
  PetscCall(MatProduct_SeqCSRKCUDA(A, PETSC_TRUE, xx, yy, zz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatGetDiagonal() on the device when v lives there (Jacobi preconditioners call it at every set-up) */
static PetscErrorCode MatGetDiagonal_SeqCSRKCUDA(Mat A, Vec v)
{
  CSRKDevice  *d;
  PetscScalar *a;
  PetscMemType mt;

  PetscFunctionBegin;
  PetscCall(VecGetArrayWriteAndMemType(v, &a, &mt));
  if (!PetscMemTypeDevice(mt)) {
    const struct _MatOps *base;

    PetscCall(VecRestoreArrayWriteAndMemType(v, &a));
    PetscCall(MatCSRKGetBaseOps(PETSC_FALSE, &base));
    PetscCall((*base->getdiagonal)(A, v));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatSeqCSRKCUDACopyToGPU(A, &d));
  PetscCall(MatCSRKCUDADeviceGetDiagonal(d, a));
  PetscCall(VecRestoreArrayWriteAndMemType(v, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   Value operations with the device copy kept current. The AIJ arrays on the host stay the master copy, so PETSc's AIJ
   operation runs on them; where the device copy held A's values before, the same operation is then applied to it on
   the device instead of uploading every value again at the next product. MatScale(), MatShift() and MatZeroEntries()
   increase the object state once more after the type's method returns (PETSc 3.18 to 3.26, the only callers of these
   methods): the device copy is recorded current for that state.
*/
static PetscErrorCode MatSeqCSRKCUDADeviceCurrent(Mat A, PetscBool *current)
{
  Mat_SeqCSRK     *sp = (Mat_SeqCSRK *)A->spptr;
  Mat_SeqCSRKCUDA *c  = MatSeqCSRKCUDAGetData(A);
  PetscObjectState state;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  *current = (PetscBool)(c->dev && c->offloadmask == PETSC_OFFLOAD_BOTH && c->nzstate == A->nonzerostate && MatSeqCSRKCUDAOptionsEqual(&c->opt, &sp->opt) && c->state == state);
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef enum {
  CSRK_VALUES_SCALE,
  CSRK_VALUES_SHIFT,
  CSRK_VALUES_ZERO
} CSRKValuesOp;

static PetscErrorCode MatSeqCSRKCUDAValuesOp(Mat A, CSRKValuesOp op, PetscScalar a)
{
  Mat_SeqCSRKCUDA      *c = MatSeqCSRKCUDAGetData(A);
  const struct _MatOps *base;
  PetscObjectState      state;
  PetscBool             current = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(MatSeqCSRKCUDADeviceCurrent(A, &current)); /* before the base operation changes the state */
  PetscCall(MatCSRKGetBaseOps(PETSC_FALSE, &base));
  if (op == CSRK_VALUES_SCALE) PetscCall((*base->scale)(A, a));
  else if (op == CSRK_VALUES_SHIFT) PetscCall((*base->shift)(A, a));
  else PetscCall((*base->zeroentries)(A));
  if (!current || c->nzstate != A->nonzerostate) PetscFunctionReturn(PETSC_SUCCESS); /* uploaded at the next use */
  if (op == CSRK_VALUES_SHIFT) PetscCall(MatCSRKCUDADeviceShift(c->dev, a));
  else PetscCall(MatCSRKCUDADeviceScale(c->dev, op == CSRK_VALUES_SCALE ? a : 0.0));
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  c->state = state + 1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatScale_SeqCSRKCUDA(Mat A, PetscScalar a)
{
  PetscFunctionBegin;
  PetscCall(MatSeqCSRKCUDAValuesOp(A, CSRK_VALUES_SCALE, a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatShift_SeqCSRKCUDA(Mat A, PetscScalar a)
{
  PetscFunctionBegin;
  PetscCall(MatSeqCSRKCUDAValuesOp(A, CSRK_VALUES_SHIFT, a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatZeroEntries_SeqCSRKCUDA(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatSeqCSRKCUDAValuesOp(A, CSRK_VALUES_ZERO, 0.0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatSetPreallocationCOO() of the AIJ base type; the count of entries is kept for MatSetValuesCOO() */
PetscErrorCode MatCSRKCUDACOOPreallocation(Mat A, MatCSRKCOO *coo, PetscCount ncoo, PetscInt coo_i[], PetscInt coo_j[])
{
  PetscFunctionBegin;
  PetscCall((*coo->preallocation)(A, ncoo, coo_i, coo_j));
  coo->ncoo = ncoo;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatSetValuesCOO() of the AIJ base type, which reads the values on the host: values in device memory (a GPU
   assembly's) are copied to the host first, in one transfer */
PetscErrorCode MatCSRKCUDACOOSetValues(Mat A, MatCSRKCOO *coo, const PetscScalar v[], InsertMode imode)
{
  PetscMemType mt = PETSC_MEMTYPE_HOST;
  PetscScalar *h;

  PetscFunctionBegin;
  if (v) PetscCall(PetscGetMemType(v, &mt));
  if (!PetscMemTypeDevice(mt)) {
    PetscCall((*coo->values)(A, v, imode));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscMalloc1(coo->ncoo, &h));
  PetscCall(MatCSRKCUDACopyToHost(h, v, coo->ncoo));
  PetscCall((*coo->values)(A, h, imode));
  PetscCall(PetscFree(h));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetPreallocationCOO_SeqCSRKCUDA(Mat A, PetscCount ncoo, PetscInt coo_i[], PetscInt coo_j[])
{
  PetscFunctionBegin;
  PetscCall(MatCSRKCUDACOOPreallocation(A, &((Mat_SeqCSRK *)A->spptr)->coo, ncoo, coo_i, coo_j));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetValuesCOO_SeqCSRKCUDA(Mat A, const PetscScalar v[], InsertMode imode)
{
  PetscFunctionBegin;
  PetscCall(MatCSRKCUDACOOSetValues(A, &((Mat_SeqCSRK *)A->spptr)->coo, v, imode));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatCSRKGetInfo(): the device copy's summary (the host structure's while bound to the CPU) */
static PetscErrorCode MatCSRKGetInfo_SeqCSRKCUDA(Mat A, MatCSRKInfo *info)
{
  Mat_SeqCSRKCUDA *c = MatSeqCSRKCUDAGetData(A);
  CSRKDevice      *d = NULL;

  PetscFunctionBegin;
  if (A->boundtocpu) {
    PetscCall((*c->hostinfo)(A, info));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscMemzero(info, sizeof(*info)));
  if (A->assembled) PetscCall(MatSeqCSRKCUDACopyToGPU(A, &d));
  info->k        = ((Mat_SeqCSRK *)A->spptr)->opt.k;
  info->ordering = MAT_CSRK_ORDERING_NATURAL;
  info->index_bytes = 4;
  if (d) {
    info->sr_size     = d->sr;
    info->ssr_size    = d->ssr;
    info->nsr         = d->nsr;
    info->nssr        = d->nunits;
    info->bytes       = (PetscLogDouble)d->bytes;
    info->npatterns   = d->rowpat ? d->npat : 0;
    info->index_bytes = d->rowpat ? 0 : 4;
  }
  info->nbuilds  = c->nsetups;
  info->nrefresh = c->nrefresh;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatBindToCPU(): the operations of MATSEQCSRK (OpenMP, over the host structure) or those of the device; the AIJ
   arrays on the host are always current, so binding copies nothing back */
static PetscErrorCode MatBindToCPU_SeqCSRKCUDA(Mat A, PetscBool flg)
{
  const struct _MatOps *base;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetBaseOps(PETSC_FALSE, &base));
  A->boundtocpu            = flg;
  A->ops->mult             = flg ? MatMult_SeqCSRK : MatMult_SeqCSRKCUDA;
  A->ops->multadd          = flg ? MatMultAdd_SeqCSRK : MatMultAdd_SeqCSRKCUDA;
  A->ops->multtranspose    = flg ? base->multtranspose : MatMultTranspose_SeqCSRKCUDA;
  A->ops->multtransposeadd = flg ? base->multtransposeadd : MatMultTransposeAdd_SeqCSRKCUDA;
  A->ops->getdiagonal      = flg ? base->getdiagonal : MatGetDiagonal_SeqCSRKCUDA;
  A->ops->scale            = flg ? base->scale : MatScale_SeqCSRKCUDA;
  A->ops->shift            = flg ? base->shift : MatShift_SeqCSRKCUDA;
  A->ops->zeroentries      = flg ? base->zeroentries : MatZeroEntries_SeqCSRKCUDA;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSeqCSRKCUDAClear(Mat A)
{
  Mat_SeqCSRK *sp = (Mat_SeqCSRK *)A->spptr;

  PetscFunctionBegin;
  if (sp && sp->cuda) {
    Mat_SeqCSRKCUDA *c = (Mat_SeqCSRKCUDA *)sp->cuda;
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatCSRKGetInfo_C", c->hostinfo));
    if (sp->coo.values) {
      PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetPreallocationCOO_C", sp->coo.preallocation));
      PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetValuesCOO_C", sp->coo.values));
      sp->coo.values = NULL;
    }
    PetscCall(MatCSRKCUDADeviceDestroy(&c->dev));
    PetscCall(PetscFree(sp->cuda));
  }
  PetscCall(MatCSRKComposeConverters(A, SeqCUDAFrom, NULL));
  PetscCall(MatCSRKComposeConverters(A, SeqCUDAToAIJ, NULL));
  PetscCall(MatCSRKComposeConverters(A, SeqCUDAToCSRK, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_SeqCSRKCUDA(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatSeqCSRKCUDAClear(A));
  PetscCall(MatDestroy_SeqCSRK(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* back to MATSEQCSRK: the host structure stays */
PetscErrorCode MatConvert_SeqCSRKCUDA_SeqCSRK(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat B = *newmat;

  PetscFunctionBegin;
  (void)type;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, B, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
  PetscCall(MatBindToCPU_SeqCSRKCUDA(B, PETSC_TRUE));
  B->boundtocpu        = PETSC_FALSE;
  {
    MatCSRKOptions opt = ((Mat_SeqCSRK *)B->spptr)->opt;
    opt.target         = MAT_CSRK_TARGET_CPU;
    PetscCall(MatSeqCSRKSetOptions(B, &opt));
  }
  B->ops->destroy      = MatDestroy_SeqCSRK;
  B->ops->bindtocpu    = NULL;
  PetscCall(MatSeqCSRKCUDAClear(B));
  PetscCall(MatSetVecType(B, VECSTANDARD));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATSEQCSRK));
  *newmat = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* to SeqAIJ (and from there to another AIJ subclass such as aijcusparse when that was asked for) */
static PetscErrorCode MatConvert_SeqCSRKCUDA_SeqAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat       B = *newmat;
  PetscBool isaij;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, B, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatConvert_SeqCSRKCUDA_SeqCSRK(A, MATSEQCSRK, reuse, &B));
  PetscCall(MatConvert_SeqCSRK_SeqAIJ(B, MATSEQAIJ, MAT_INPLACE_MATRIX, &B));
  PetscCall(PetscStrcmp(type, MATSEQAIJ, &isaij));
  if (!isaij) PetscCall(MatConvert(B, type, MAT_INPLACE_MATRIX, &B));
  *newmat = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatConvert_SeqAIJ_SeqCSRKCUDA - from MATSEQAIJ, MATSEQCSRK or another SeqAIJ subclass (aijcusparse) to MATSEQCSRKCUDA
*/
PetscErrorCode MatConvert_SeqAIJ_SeqCSRKCUDA(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat       B = *newmat;
  PetscBool isaij, iscsrk;

  PetscFunctionBegin;
  (void)type;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, B, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQCSRKCUDA, &iscsrk));
  if (iscsrk) {
    if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJ, &isaij));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQCSRK, &iscsrk));
  if (isaij || iscsrk) {
    if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
    else B = A;
  } else PetscCall(MatConvert(A, MATSEQAIJ, reuse == MAT_INITIAL_MATRIX ? MAT_INITIAL_MATRIX : MAT_INPLACE_MATRIX, &B));
  if (!iscsrk) PetscCall(MatConvert_SeqAIJ_SeqCSRK(B, MATSEQCSRK, MAT_INPLACE_MATRIX, &B));
  {
    /* CSR-3 and the GPU size model by default */
    Mat_SeqCSRK   *sp  = (Mat_SeqCSRK *)B->spptr;
    MatCSRKOptions opt = sp->opt;
    if (opt.target == MAT_CSRK_TARGET_CPU && opt.k == 2) opt.k = 3;
    opt.target = MAT_CSRK_TARGET_GPU;
    PetscCall(MatSeqCSRKSetOptions(B, &opt));
    if (!sp->cuda) {
      Mat_SeqCSRKCUDA *c;
      PetscCall(PetscNew(&c));
      c->offloadmask = PETSC_OFFLOAD_CPU;
      c->nzstate     = -1;
      c->state       = -1;
      PetscCall(PetscObjectQueryFunction((PetscObject)B, "MatCSRKGetInfo_C", &c->hostinfo));
      PetscCall(PetscObjectQueryFunction((PetscObject)B, "MatSetPreallocationCOO_C", &sp->coo.preallocation));
      PetscCall(PetscObjectQueryFunction((PetscObject)B, "MatSetValuesCOO_C", &sp->coo.values));
      sp->cuda = c;
      PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatCSRKGetInfo_C", MatCSRKGetInfo_SeqCSRKCUDA));
      if (sp->coo.preallocation && sp->coo.values) {
        PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatSetPreallocationCOO_C", MatSetPreallocationCOO_SeqCSRKCUDA));
        PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatSetValuesCOO_C", MatSetValuesCOO_SeqCSRKCUDA));
      } else sp->coo.values = NULL;
    }
  }
  PetscCall(MatBindToCPU_SeqCSRKCUDA(B, PETSC_FALSE));
  B->ops->bindtocpu = MatBindToCPU_SeqCSRKCUDA;
  B->ops->destroy   = MatDestroy_SeqCSRKCUDA;
  PetscCall(MatSetVecType(B, VECCUDA));
  PetscCall(MatCSRKComposeConverters(B, SeqCUDAFrom, MatConvert_SeqAIJ_SeqCSRKCUDA));
  PetscCall(MatCSRKComposeConverters(B, SeqCUDAToAIJ, MatConvert_SeqCSRKCUDA_SeqAIJ));
  PetscCall(MatCSRKComposeConverters(B, SeqCUDAToCSRK, MatConvert_SeqCSRKCUDA_SeqCSRK));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATSEQCSRKCUDA));
  *newmat = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   MATCSRKCUDA - MATCSRKCUDA = "csrkcuda" - A matrix type whose products run CSR-k kernels on an NVIDIA GPU:
   `MATSEQCSRKCUDA` on one process, `MATMPICSRKCUDA` otherwise.

   A subclass of `MATAIJ` whose vectors are `VECCUDA`. The AIJ arrays on the host stay the matrix; the products run on
   a device copy made on the GPU from them at the first product, in the user's ordering, with rows grouped into
   super-rows and super-super-rows (k = 3 by default) and a kernel chosen from the row statistics. The copy is kept
   while the nonzero pattern and the values do not change; new values are uploaded once, at the next product.

   Options Database Keys:
+  -mat_type csrkcuda - selects the type, with `-vec_type cuda` (or `-dm_mat_type csrkcuda -dm_vec_type cuda` for DM programs)
.  -mat_csrk_cuda_kernel <auto,scalar,vector,stream,sliced,cusparse,merge> - the kernel, see `MatCSRKSetCUDAKernel()`
.  -mat_csrk_cuda_halo_pinned <bool> - the ghost values' exchange of the MPI product, see `MatCSRKSetCUDAPinnedHalo()`
.  -mat_csrk_k <1,2,3> - levels of the device copy, see `MatCSRKSetLevels()`
.  -mat_csrk_sr_size <n> - rows per super-row, 0 for the GPU model's, see `MatCSRKSetSizes()`
-  -mat_csrk_row_patterns <bool> - row patterns in the sliced kernel where the rows allow, see `MatCSRKSetRowPatterns()`

   Level: beginner

   Note:
   `-mat_csrk_ordering` and the other options of `MATCSRK` apply to the host products: with host vectors, or with the
   matrix bound to the CPU by `MatBindToCPU()`, which then runs the kernels of `MATCSRK`.

.seealso: `MATSEQCSRKCUDA`, `MATMPICSRKCUDA`, `MATCSRK`, `MATAIJCUSPARSE`, `MatBindToCPU()`
M*/

/*MC
   MATSEQCSRKCUDA - MATSEQCSRKCUDA = "seqaijcsrkcuda" - the sequential CSR-k type with the products on an NVIDIA GPU
   (CSR-3 by default), a `MATSEQAIJ` subclass whose vectors are `VECCUDA`.

   Options Database Keys: those of `MATSEQCSRK`, and
+  -mat_type csrkcuda - selects it (with -vec_type cuda, or -dm_vec_type cuda for DM programs)
.  -mat_csrk_cuda_kernel <auto,scalar,vector,stream,sliced,cusparse,merge,block> - the kernel
-  -mat_csrk_row_patterns <bool> - row patterns in the sliced kernel where the rows fit the dictionary

   Notes:
   The device copy is made on the device from the AIJ arrays (what `MATSEQAIJCUSPARSE` uploads), in the user's
   ordering: `-mat_csrk_ordering` applies only to the host products (host vectors, or the matrix bound to the CPU with
   `MatBindToCPU()`).

   Level: beginner

.seealso: `MATCSRKCUDA`, `MATSEQCSRK`, `MatBindToCPU()`
M*/
PetscErrorCode MatCreate_SeqCSRKCUDA(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatSetType(A, MATSEQAIJ));
  PetscCall(MatConvert_SeqAIJ_SeqCSRKCUDA(A, MATSEQCSRKCUDA, MAT_INPLACE_MATRIX, &A));
  PetscFunctionReturn(PETSC_SUCCESS);
}
