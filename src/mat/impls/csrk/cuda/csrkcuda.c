/*
   MATSEQCSRKCUDA ("seqaijcsrkcuda"): the sequential CSR-k type with the products on an NVIDIA GPU.

   A MATSEQCSRKCUDA is a MATSEQCSRK (same host structure build, same AIJ master copy, same option handling) whose
   products run on the device copy of the structure. The device copy follows the host structure's build and
   refresh counters, so values changed on the host are uploaded once, at the next product, and nothing crosses
   between host and device while they do not change. The MPI type (csrkcudampi.c) is MATMPICSRK with these blocks.
*/
#include "csrkcuda.h"
#include <petscdevice.h>

static const char *const SeqCUDAFrom[]    = {"MatConvert_seqaij_seqaijcsrkcuda_C", "MatConvert_seqaij_csrkcuda_C", "MatConvert_seqaijcsrk_seqaijcsrkcuda_C", "MatConvert_seqaijcsrk_csrkcuda_C", "MatConvert_seqaijcusparse_seqaijcsrkcuda_C", "MatConvert_seqaijcusparse_csrkcuda_C", NULL};
static const char *const SeqCUDAToAIJ[]   = {"MatConvert_seqaijcsrkcuda_seqaij_C", "MatConvert_seqaijcsrkcuda_seqaijcusparse_C", "MatConvert_seqaijcsrkcuda_aijcusparse_C", NULL};
static const char *const SeqCUDAToCSRK[]  = {"MatConvert_seqaijcsrkcuda_seqaijcsrk_C", "MatConvert_seqaijcsrkcuda_csrk_C", NULL};

/* The device copy for the current pattern, options and values of A */
static PetscErrorCode MatSeqCSRKCUDAGetDevice(Mat A, CSRKDevice **dev, MatCSRKStructure **st)
{
  Mat_SeqCSRK *sp = (Mat_SeqCSRK *)A->spptr;

  PetscFunctionBegin;
  PetscCall(MatSeqCSRKGetUpToDateStructure(A, st));
  if (!sp->device || sp->dev_nbuilds != sp->nbuilds) {
    PetscCall(MatCSRKCUDADeviceUpload(*st, &sp->opt, PETSC_TRUE, (CSRKDevice **)&sp->device));
    sp->dev_nbuilds  = sp->nbuilds;
    sp->dev_nrefresh = sp->nrefresh;
    {
      const CSRKDevice *d = (CSRKDevice *)sp->device;
      PetscCall(PetscInfo(A, "CSR-k uploaded: kernel %s, %" PetscInt_FMT " lanes per row, block %ux%ux%u, %" PetscInt_FMT " long rows, %" PetscInt_FMT " padded entries (row length mean %g, variance %g, max %" PetscInt_FMT ")\n", MatCSRKCUDAKernels[d->kernel], d->width, d->bx, d->by, d->bz, d->nlong,
                          d->pnnz, (double)d->mean, (double)d->var, d->maxlen));
      if (d->kernel == MAT_CSRK_CUDA_KERNEL_SLICED && d->rowpat) PetscCall(PetscInfo(A, "Sliced kernel over row patterns: %" PetscInt_FMT " distinct rows\n", d->npat));
      else if (d->kernel == MAT_CSRK_CUDA_KERNEL_SLICED)
        PetscCall(PetscInfo(A, "Sliced column indices: %g bytes per padded entry; super-rows with 8-bit offsets %" PetscInt_FMT ", 16-bit offsets %" PetscInt_FMT ", 32-bit columns %" PetscInt_FMT "\n", (double)d->index_bytes, d->nslices[0], d->nslices[1], d->nslices[2]));
    }
  } else if (sp->dev_nrefresh != sp->nrefresh) {
    PetscCall(MatCSRKCUDADeviceUpload(*st, &sp->opt, PETSC_FALSE, (CSRKDevice **)&sp->device));
    sp->dev_nrefresh = sp->nrefresh;
  }
  *dev = (CSRKDevice *)sp->device;
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
  MatCSRKStructure     *st;
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
  PetscCall(MatSeqCSRKCUDAGetDevice(A, &d, &st));
  PetscCall(VecGetArrayReadAndMemType(xx, &x, &xmt));
  xd = x;
  if (!PetscMemTypeDevice(xmt)) PetscCall(MatCSRKCUDADeviceStage(d, x, transpose ? d->m : d->n, &xd));
  if (yy && yy != zz) {
    PetscCall(VecGetArrayReadAndMemType(yy, &y, &ymt));
    PetscCheck(PetscMemTypeDevice(ymt), PETSC_COMM_SELF, PETSC_ERR_SUP, "A product adding a host vector y into a device vector z is not supported: use vectors of one kind");
  } else if (yy) y = z;
  PetscCall(PetscLogGpuTimeBegin());
  if (transpose) PetscCall(MatCSRKCUDADeviceMultTranspose(d, st, xd, y, z));
  else PetscCall(MatCSRKCUDADeviceMult(d, xd, y, z));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops(yy || transpose ? 2.0 * st->nnz : 2.0 * st->nnz - st->nonzerorows));
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
  CSRKDevice       *d;
  MatCSRKStructure *st;
  PetscScalar      *a;
  PetscMemType      mt;

  PetscFunctionBegin;
  PetscCall(VecGetArrayWriteAndMemType(v, &a, &mt));
  if (!PetscMemTypeDevice(mt)) {
    const struct _MatOps *base;

    PetscCall(VecRestoreArrayWriteAndMemType(v, &a));
    PetscCall(MatCSRKGetBaseOps(PETSC_FALSE, &base));
    PetscCall((*base->getdiagonal)(A, v));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatSeqCSRKCUDAGetDevice(A, &d, &st));
  PetscCall(MatCSRKCUDADeviceGetDiagonal(d, st, a));
  PetscCall(VecRestoreArrayWriteAndMemType(v, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatBindToCPU(): the products of MATSEQCSRK (OpenMP) or those of the device */
static PetscErrorCode MatBindToCPU_SeqCSRKCUDA(Mat A, PetscBool flg)
{
  const struct _MatOps *base;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetBaseOps(PETSC_FALSE, &base));
  A->boundtocpu                = flg;
  A->ops->mult                 = flg ? MatMult_SeqCSRK : MatMult_SeqCSRKCUDA;
  A->ops->multadd              = flg ? MatMultAdd_SeqCSRK : MatMultAdd_SeqCSRKCUDA;
  A->ops->multtranspose        = flg ? base->multtranspose : MatMultTranspose_SeqCSRKCUDA;
  A->ops->multtransposeadd     = flg ? base->multtransposeadd : MatMultTransposeAdd_SeqCSRKCUDA;
  A->ops->getdiagonal          = flg ? base->getdiagonal : MatGetDiagonal_SeqCSRKCUDA;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSeqCSRKCUDAClear(Mat A)
{
  Mat_SeqCSRK *sp = (Mat_SeqCSRK *)A->spptr;

  PetscFunctionBegin;
  if (sp) PetscCall(MatCSRKCUDADeviceDestroy((CSRKDevice **)&sp->device));
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
    opt.gpu            = PETSC_FALSE;
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
    if (!opt.gpu && opt.k == 2) opt.k = 3;
    opt.gpu = PETSC_TRUE;
    PetscCall(MatSeqCSRKSetOptions(B, &opt));
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
   MATSEQCSRKCUDA - MATSEQCSRKCUDA = "seqaijcsrkcuda" - the sequential CSR-k type with the products on an NVIDIA GPU
   (CSR-3 by default), a `MATSEQAIJ` subclass whose vectors are `VECCUDA`.

   Options Database Keys: those of `MATSEQCSRK`, and
+  -mat_type csrkcuda - selects it (with -vec_type cuda, or -dm_vec_type cuda for DM programs)
.  -mat_csrk_cuda_kernel <auto,scalar,vector,stream,sliced,adaptive,cusparse,merge> - the kernel
.  -mat_csrk_cuda_width <n> - lanes per row of the vector kernel
.  -mat_csrk_cuda_long <n> - rows longer than this go to the block-per-row kernel
-  -mat_csrk_compress_indices <bool> - 8- or 16-bit column offsets in the sliced kernel where they fit

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
