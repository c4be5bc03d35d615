/*
   MATSEQCSRKCUDA ("seqaijcsrkcuda"): a MATSEQCSRK (same AIJ master copy, same options) whose products run on a device
   copy made from the AIJ arrays on the device itself by its plan (csrkcudaplan.cu), in the user's ordering; the host
   CSR-k structure serves host vectors and the matrix bound to the CPU. The device copy follows the nonzero state (a new
   layout) and the object state (new values, uploaded once at the next device operation). The MPI type
   (csrkcudampi.c) is MATMPICSRK with these blocks.
*/
#include "csrkcuda.h"
#include <petscdevice.h>

static Mat_SeqCSRKCUDA *MatSeqCSRKCUDAGetData(Mat A)
{
  return (Mat_SeqCSRKCUDA *)A->spptr;
}

/* MatCSRKCUDAResizeSpptr - the spptr of A as one of size bytes whose first keep bytes are the old one's: a host type's
   data grown to its CUDA type's (which begins with it), or the CUDA type's shrunk back to the host type's */
PetscErrorCode MatCSRKCUDAResizeSpptr(Mat A, size_t keep, size_t size)
{
  void *sp;

  PetscFunctionBegin;
  PetscCall(PetscCalloc(size, &sp));
  PetscCall(PetscMemcpy(sp, A->spptr, keep));
  PetscCall(PetscFree(A->spptr));
  A->spptr = sp;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the options that shape the device layout */
static PetscBool MatSeqCSRKCUDAOptionsEqual(const MatCSRKOptions *a, const MatCSRKOptions *b)
{
  return (PetscBool)(a->k == b->k && a->sr_size == b->sr_size && a->ssr_size == b->ssr_size && a->feature[MAT_CSRK_COMPRESS_INDICES] == b->feature[MAT_CSRK_COMPRESS_INDICES] && a->feature[MAT_CSRK_ROW_PATTERNS] == b->feature[MAT_CSRK_ROW_PATTERNS] && a->cuda_kernel == b->cuda_kernel);
}

/* A->offloadmask as aijcusparse keeps it: UNALLOCATED while no device copy matches the pattern and the options, CPU
   while the host values are newer, BOTH while the device copy holds them. The host AIJ arrays are written through
   PETSc's own SeqAIJ routines, which have no hook here, so a change of the object state since the device copy was made
   current marks the mask CPU. */
static PetscErrorCode MatSeqCSRKCUDAUpdateMask(Mat A)
{
  Mat_SeqCSRK     *sp = (Mat_SeqCSRK *)A->spptr;
  Mat_SeqCSRKCUDA *c  = MatSeqCSRKCUDAGetData(A);
  PetscObjectState state;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  if (!c->dev || c->nzstate != A->nonzerostate || !MatSeqCSRKCUDAOptionsEqual(&c->opt, &sp->opt)) A->offloadmask = PETSC_OFFLOAD_UNALLOCATED;
  else if (A->offloadmask != PETSC_OFFLOAD_BOTH || c->state != state) A->offloadmask = PETSC_OFFLOAD_CPU;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The device copy for the current pattern, options and values of A: set up on the device from the AIJ arrays
   (UNALLOCATED), or the values uploaded once (CPU) */
static PetscErrorCode MatSeqCSRKCUDACopyToGPU(Mat A, CSRKDevice **dev)
{
  Mat_SeqCSRK     *sp = (Mat_SeqCSRK *)A->spptr;
  Mat_SeqCSRKCUDA *c  = MatSeqCSRKCUDAGetData(A);
  PetscObjectState state;

  PetscFunctionBegin;
  PetscCheck(A->assembled, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "Not for unassembled matrix");
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  PetscCall(MatSeqCSRKCUDAUpdateMask(A));
  if (A->offloadmask != PETSC_OFFLOAD_BOTH) {
    PetscCall(PetscLogEventBegin(MAT_CSRKBuild, A, 0, 0, 0));
    if (A->offloadmask == PETSC_OFFLOAD_UNALLOCATED) {
      PetscCall(MatCSRKCUDADeviceSetUp(A, &sp->opt, &c->dev));
      c->nsetups++;
      c->nproducts = 0;
      c->nzstate = A->nonzerostate;
      c->opt     = sp->opt;
    } else {
      PetscCall(MatCSRKCUDADeviceRefresh(A, c->dev));
      c->nrefresh++;
    }
    PetscCall(PetscLogEventEnd(MAT_CSRKBuild, A, 0, 0, 0));
    c->state       = state;
    A->offloadmask = PETSC_OFFLOAD_BOTH;
  }
  *dev = c->dev;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The device copy made again in RCM order once the products the auto ordering's rule waited for have run (a count,
   so that every run changes order at the same product); the host arrays hold the values of the copy it replaces */
static PetscErrorCode MatSeqCSRKCUDAReorder(Mat A, CSRKDevice **dev)
{
  Mat_SeqCSRK     *sp = (Mat_SeqCSRK *)A->spptr;
  Mat_SeqCSRKCUDA *c  = MatSeqCSRKCUDAGetData(A);

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(MAT_CSRKBuild, A, 0, 0, 0));
  PetscCall(MatCSRKCUDADeviceReorder(A, &sp->opt, &c->dev));
  PetscCall(PetscLogEventEnd(MAT_CSRKBuild, A, 0, 0, 0));
  c->nsetups++;
  *dev = c->dev;
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
  Mat_SeqCSRKCUDA      *c = MatSeqCSRKCUDAGetData(A);
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
  if (d->rcmwait && ++c->nproducts == d->rcmwait) PetscCall(MatSeqCSRKCUDAReorder(A, &d));
  if (transpose && !d->t) PetscCall(MatCSRKCUDADeviceBuildTranspose(A, d));
  PetscCall(VecGetArrayReadAndMemType(xx, &x, &xmt));
  xd = x;
  if (!PetscMemTypeDevice(xmt)) PetscCall(MatCSRKCUDADeviceStage(d, x, transpose ? d->m : d->n, &xd));
  if (yy && yy != zz) {
    PetscCall(VecGetArrayReadAndMemType(yy, &y, &ymt));
    PetscCheck(PetscMemTypeDevice(ymt), PETSC_COMM_SELF, PETSC_ERR_SUP, "A product adding a host vector y into a device vector z is not supported: use vectors of one kind");
  } else if (yy) y = z;
  PetscCall(PetscLogGpuTimeBegin());
  PetscCall(MatCSRKCUDADeviceMult(d, transpose, xd, y, z));
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
  PetscCall(MatCSRKCUDADeviceDiagonal(d, PETSC_FALSE, 0.0, a));
  PetscCall(VecRestoreArrayWriteAndMemType(v, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Value operations: PETSc's AIJ operation on the host arrays (the master copy), and where the device copy held A's
   values, the same operation on it instead of an upload at the next product. MatScale(), MatShift() and MatZeroEntries()
   increase the object state once more after the type's method returns (PETSc 3.18 to 3.26, their only callers): the
   device copy is recorded current for that state. */
static PetscErrorCode MatSeqCSRKCUDAValuesOp(Mat A, MatOperation op, PetscScalar a)
{
  Mat_SeqCSRKCUDA      *c = MatSeqCSRKCUDAGetData(A);
  const struct _MatOps *base;
  PetscObjectState      state;
  PetscBool             current;

  PetscFunctionBegin;
  PetscCall(MatSeqCSRKCUDAUpdateMask(A)); /* before the base operation changes the state */
  current = (PetscBool)(A->offloadmask == PETSC_OFFLOAD_BOTH);
  PetscCall(MatCSRKGetBaseOps(PETSC_FALSE, &base));
  if (op == MATOP_SCALE) PetscCall((*base->scale)(A, a));
  else if (op == MATOP_SHIFT) PetscCall((*base->shift)(A, a));
  else PetscCall((*base->zeroentries)(A));
  if (!current || c->nzstate != A->nonzerostate) PetscFunctionReturn(PETSC_SUCCESS); /* uploaded at the next use */
  if (op == MATOP_SHIFT) PetscCall(MatCSRKCUDADeviceDiagonal(c->dev, PETSC_TRUE, a, NULL));
  else PetscCall(MatCSRKCUDADeviceScale(c->dev, op == MATOP_SCALE ? a : 0.0));
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  c->state = state + 1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatScale_SeqCSRKCUDA(Mat A, PetscScalar a)
{
  PetscFunctionBegin;
  PetscCall(MatSeqCSRKCUDAValuesOp(A, MATOP_SCALE, a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatShift_SeqCSRKCUDA(Mat A, PetscScalar a)
{
  PetscFunctionBegin;
  PetscCall(MatSeqCSRKCUDAValuesOp(A, MATOP_SHIFT, a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatZeroEntries_SeqCSRKCUDA(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatSeqCSRKCUDAValuesOp(A, MATOP_ZERO_ENTRIES, 0.0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The COO assembly of the AIJ base type of a MATSEQCSRKCUDA or MATMPICSRKCUDA, whose functions the type's replace (on:
   found, off: given back) */
PetscErrorCode MatCSRKCUDACOO(Mat A, PetscBool on, MatCSRKCOO **coo)
{
  PetscBool mpi;

  PetscFunctionBegin;
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)A, MATMPIAIJ, &mpi));
  *coo = mpi ? &((Mat_MPICSRKCUDA *)A->spptr)->coo : &((Mat_SeqCSRKCUDA *)A->spptr)->coo;
  if (on && !(*coo)->values) {
    PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatSetPreallocationCOO_C", &(*coo)->preallocation));
    PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatSetValuesCOO_C", &(*coo)->values));
    PetscCheck((*coo)->preallocation && (*coo)->values && (*coo)->values != MatSetValuesCOO_CSRKCUDA, PETSC_COMM_SELF, PETSC_ERR_PLIB, "AIJ COO assembly not found");
  } else if (!on) {
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetPreallocationCOO_C", (*coo)->preallocation));
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetValuesCOO_C", (*coo)->values));
    (*coo)->values = NULL;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatSetPreallocationCOO() of the AIJ base type; the count of entries is kept for MatSetValuesCOO() */
PetscErrorCode MatSetPreallocationCOO_CSRKCUDA(Mat A, PetscCount ncoo, PetscInt coo_i[], PetscInt coo_j[])
{
  MatCSRKCOO *coo = NULL;

  PetscFunctionBegin;
  PetscCall(MatCSRKCUDACOO(A, PETSC_TRUE, &coo));
  PetscCall((*coo->preallocation)(A, ncoo, coo_i, coo_j));
  coo->ncoo = ncoo;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatSetValuesCOO() of the AIJ base type, which reads the values on the host: values in device memory (a GPU
   assembly's) are copied to the host first, in one transfer */
PetscErrorCode MatSetValuesCOO_CSRKCUDA(Mat A, const PetscScalar v[], InsertMode imode)
{
  PetscMemType mt = PETSC_MEMTYPE_HOST;
  PetscScalar *h;
  MatCSRKCOO  *coo = NULL;

  PetscFunctionBegin;
  PetscCall(MatCSRKCUDACOO(A, PETSC_TRUE, &coo));
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
  info->k           = ((Mat_SeqCSRK *)A->spptr)->opt.k;
  info->ordering    = d && d->perm ? MAT_CSRK_ORDERING_RCM : MAT_CSRK_ORDERING_NATURAL;
  info->index_bytes = d && d->npat ? 0 : 4;
  if (d) {
    info->sr_size   = d->sr;
    info->ssr_size  = d->ssr;
    info->nsr       = d->nsr;
    info->nssr      = d->nunits;
    info->bytes     = (PetscLogDouble)d->bytes;
    info->npatterns = d->npat;
  }
  info->nbuilds  = c->nsetups;
  info->nrefresh = c->nrefresh;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The view's lines of a device block with ASCII_INFO (of = where it belongs, for a block of an MPI matrix): what k
   means on the GPU, and the plan of its device copy */
PetscErrorCode MatSeqCSRKCUDAViewPlan(Mat A, PetscViewer viewer, const char *of)
{
  Mat_SeqCSRKCUDA  *c = MatSeqCSRKCUDAGetData(A);
  PetscInt          k = ((Mat_SeqCSRK *)A->spptr)->opt.k;
  PetscBool         isascii;
  PetscViewerFormat format;
  char              what[256];

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  PetscCall(PetscViewerGetFormat(viewer, &format));
  if (!isascii || !A->assembled || (format != PETSC_VIEWER_ASCII_INFO && format != PETSC_VIEWER_ASCII_INFO_DETAIL)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerASCIIPrintf(viewer, "GPU levels: k = %" PetscInt_FMT ", %s\n", k, k == 3 ? "a thread block per super-super-row of the row and sliced kernels (the GPU default: a k = 2 of MATCSRK becomes 3 at the conversion)" : "a thread block per super-row of the row and sliced kernels (k = 1 and 2 are the same on the GPU)"));
  if (!c->dev || A->boundtocpu) PetscFunctionReturn(PETSC_SUCCESS);
  MatCSRKCUDADeviceView(c->dev, what, sizeof(what));
  PetscCall(PetscViewerASCIIPrintf(viewer, "GPU plan%s: kernel %s, %s, %g MB of device memory\n", of, MatCSRKCUDAKernels[c->dev->kernel], what, c->dev->bytes / 1048576.0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The view of both CUDA types: MATCSRK's, and with ASCII_INFO the halo exchange of the MPI type and the plan of the
   device block (the first rank's diagonal block for the MPI type) */
PetscErrorCode MatView_CSRKCUDA(Mat A, PetscViewer viewer)
{
  Mat               Ad = A;
  PetscBool         mpi, cuda = PETSC_FALSE, isascii;
  PetscViewerFormat format;

  PetscFunctionBegin;
  PetscCall(MatView_CSRK(A, viewer));
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)A, MATMPIAIJ, &mpi));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  PetscCall(PetscViewerGetFormat(viewer, &format));
  if (mpi && isascii && A->assembled && (format == PETSC_VIEWER_ASCII_INFO || format == PETSC_VIEWER_ASCII_INFO_DETAIL)) {
    PetscCall(PetscViewerASCIIPushTab(viewer));
    PetscCall(PetscViewerASCIIPrintf(viewer, "MatMult halo exchange: %s\n", ((Mat_MPICSRK *)A->spptr)->opt.feature[MAT_CSRK_CUDA_HALO_PINNED] ? "pinned host buffers, beside the local product" : "MPIAIJ's VecScatter"));
    PetscCall(PetscViewerASCIIPopTab(viewer));
  }
  if (mpi) PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, NULL, NULL));
  if (Ad) PetscCall(PetscObjectTypeCompare((PetscObject)Ad, MATSEQCSRKCUDA, &cuda));
  if (cuda && A->assembled) PetscCall(MatSeqCSRKCUDAViewPlan(Ad, viewer, mpi ? " of the first rank's diagonal block" : ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatBindToCPU_SeqCSRKCUDA(Mat, PetscBool);
static PetscErrorCode MatDestroy_SeqCSRKCUDA(Mat);
static PetscErrorCode MatDuplicate_SeqCSRKCUDA(Mat, MatDuplicateOption, Mat *);

/* The SeqCSRK methods this type replaces (MatBindToCPU() swaps the device ones for the host ones: MATSEQCSRK's
   products over the host structure, AIJ's others) and the functions composed on it: the conversions from AIJ, CSR-k
   and aijcusparse and back, the summary, the COO assembly */
static const MatCSRKMethods SeqCSRKCUDAMethods = {
  PETSC_FALSE,
  MATSEQCSRKCUDA,
  MATSEQCSRK,
  {CSRK_DEVICE_METHOD(MATOP_MULT, MatMult_SeqCSRKCUDA), CSRK_DEVICE_METHOD(MATOP_MULT_ADD, MatMultAdd_SeqCSRKCUDA), CSRK_DEVICE_METHOD(MATOP_MULT_TRANSPOSE, MatMultTranspose_SeqCSRKCUDA),
   CSRK_DEVICE_METHOD(MATOP_MULT_TRANSPOSE_ADD, MatMultTransposeAdd_SeqCSRKCUDA), CSRK_DEVICE_METHOD(MATOP_GET_DIAGONAL, MatGetDiagonal_SeqCSRKCUDA), CSRK_DEVICE_METHOD(MATOP_SCALE, MatScale_SeqCSRKCUDA),
   CSRK_DEVICE_METHOD(MATOP_SHIFT, MatShift_SeqCSRKCUDA), CSRK_DEVICE_METHOD(MATOP_ZERO_ENTRIES, MatZeroEntries_SeqCSRKCUDA), CSRK_METHOD(MATOP_BIND_TO_CPU, MatBindToCPU_SeqCSRKCUDA),
   CSRK_METHOD(MATOP_DESTROY, MatDestroy_SeqCSRKCUDA), CSRK_METHOD(MATOP_DUPLICATE, MatDuplicate_SeqCSRKCUDA), CSRK_METHOD(MATOP_VIEW, MatView_CSRKCUDA)},
  {CSRK_COMPOSED("MatConvert_seqaij_seqaijcsrkcuda_C", MatConvert_SeqAIJ_SeqCSRKCUDA), CSRK_COMPOSED("MatConvert_seqaij_csrkcuda_C", MatConvert_SeqAIJ_SeqCSRKCUDA), CSRK_COMPOSED("MatConvert_seqaijcsrk_seqaijcsrkcuda_C", MatConvert_SeqAIJ_SeqCSRKCUDA),
   CSRK_COMPOSED("MatConvert_seqaijcsrk_csrkcuda_C", MatConvert_SeqAIJ_SeqCSRKCUDA), CSRK_COMPOSED("MatConvert_seqaijcusparse_seqaijcsrkcuda_C", MatConvert_SeqAIJ_SeqCSRKCUDA), CSRK_COMPOSED("MatConvert_seqaijcusparse_csrkcuda_C", MatConvert_SeqAIJ_SeqCSRKCUDA),
   CSRK_COMPOSED("MatConvert_seqaijcsrkcuda_seqaij_C", MatConvert_CSRKCUDA_AIJ), CSRK_COMPOSED("MatConvert_seqaijcsrkcuda_seqaijcusparse_C", MatConvert_CSRKCUDA_AIJ), CSRK_COMPOSED("MatConvert_seqaijcsrkcuda_aijcusparse_C", MatConvert_CSRKCUDA_AIJ),
   CSRK_COMPOSED("MatConvert_seqaijcsrkcuda_seqaijcsrk_C", MatConvert_SeqCSRKCUDA_SeqCSRK), CSRK_COMPOSED("MatConvert_seqaijcsrkcuda_csrk_C", MatConvert_SeqCSRKCUDA_SeqCSRK), CSRK_COMPOSED("MatCSRKGetInfo_C", MatCSRKGetInfo_SeqCSRKCUDA),
   CSRK_COMPOSED("MatSetPreallocationCOO_C", MatSetPreallocationCOO_CSRKCUDA), CSRK_COMPOSED("MatSetValuesCOO_C", MatSetValuesCOO_CSRKCUDA)}
};

/* MatBindToCPU(): the AIJ arrays on the host are always current, so binding copies nothing back */
static PetscErrorCode MatBindToCPU_SeqCSRKCUDA(Mat A, PetscBool flg)
{
  PetscFunctionBegin;
  A->boundtocpu = flg;
  PetscCall(MatCSRKExtendMethods(A, &SeqCSRKMethods, &SeqCSRKCUDAMethods, (PetscBool)!flg, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Frees the device data of A and gives the AIJ COO assembly back (the caller took the table's functions away) */
static PetscErrorCode MatSeqCSRKCUDAClear(Mat A)
{
  MatCSRKCOO *coo = NULL;

  PetscFunctionBegin;
  if (!A->spptr) PetscFunctionReturn(PETSC_SUCCESS); /* (after MatHeaderMerge()) */
  PetscCall(MatCSRKCUDACOO(A, PETSC_FALSE, &coo));
  PetscCall(MatCSRKCUDADeviceDestroy(&MatSeqCSRKCUDAGetData(A)->dev));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MATSEQCSRK's duplicate, with A's COO map */
static PetscErrorCode MatDuplicate_SeqCSRKCUDA(Mat A, MatDuplicateOption op, Mat *M)
{
  PetscFunctionBegin;
  PetscCall(MatDuplicate_SeqCSRK(A, op, M));
  MatSeqCSRKCUDAGetData(*M)->coo.ncoo = MatSeqCSRKCUDAGetData(A)->coo.ncoo;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_SeqCSRKCUDA(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatCSRKSetMethods(A, &SeqCSRKCUDAMethods, PETSC_FALSE));
  PetscCall(MatSeqCSRKCUDAClear(A));
  PetscCall(MatDestroy_SeqCSRK(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* back to MATSEQCSRK: the host structure stays */
PetscErrorCode MatConvert_SeqCSRKCUDA_SeqCSRK(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat B;

  PetscFunctionBegin;
  PetscCall(MatCSRKConvertTarget(A, reuse, newmat));
  if (reuse == MAT_REUSE_MATRIX) PetscFunctionReturn(PETSC_SUCCESS);
  B = *newmat;
  PetscCall(MatCSRKExtendMethods(B, &SeqCSRKMethods, &SeqCSRKCUDAMethods, PETSC_FALSE, PETSC_FALSE));
  PetscCall(MatSeqCSRKCUDAClear(B)); /* after the table's functions went: the AIJ COO assembly back */
  PetscCall(MatCSRKCUDAResizeSpptr(B, sizeof(Mat_SeqCSRK), sizeof(Mat_SeqCSRK)));
  B->boundtocpu = PETSC_FALSE;
  PetscCall(MatSetVecType(B, VECSTANDARD));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* to AIJ through CSR-k (and from there to another AIJ subclass such as aijcusparse when that was asked for) */
PetscErrorCode MatConvert_CSRKCUDA_AIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat       B = *newmat;
  PetscBool mpi, isaij;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, B, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)A, MATMPIAIJ, &mpi));
  PetscCall(mpi ? MatConvert_MPICSRKCUDA_MPICSRK(A, MATMPICSRK, reuse, &B) : MatConvert_SeqCSRKCUDA_SeqCSRK(A, MATSEQCSRK, reuse, &B));
  PetscCall(mpi ? MatConvert_MPICSRK_MPIAIJ(B, MATMPIAIJ, MAT_INPLACE_MATRIX, &B) : MatConvert_SeqCSRK_SeqAIJ(B, MATSEQAIJ, MAT_INPLACE_MATRIX, &B));
  PetscCall(PetscStrcmp(type, mpi ? MATMPIAIJ : MATSEQAIJ, &isaij));
  if (!isaij) PetscCall(MatConvert(B, type, MAT_INPLACE_MATRIX, &B));
  *newmat = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The part of a conversion of A to the sequential or MPI CUDA type that both share: *B is A or its copy as a CSR-k
   matrix (through AIJ from another AIJ subclass) with the GPU's options, CSR-3 and the GPU size model by default; NULL
   where the conversion is complete (MAT_REUSE_MATRIX, or A of the CUDA type already) */
PetscErrorCode MatCSRKCUDAConvertBegin(Mat A, PetscBool mpi, MatReuse reuse, Mat *newmat, Mat *B)
{
  MatCSRKOptions opt;
  PetscBool      isaij, iscsrk;

  PetscFunctionBegin;
  *B = NULL;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, mpi ? MATMPICSRKCUDA : MATSEQCSRKCUDA, &iscsrk));
  if (iscsrk) {
    if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscObjectTypeCompare((PetscObject)A, mpi ? MATMPIAIJ : MATSEQAIJ, &isaij));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, mpi ? MATMPICSRK : MATSEQCSRK, &iscsrk));
  *B = A;
  if (isaij || iscsrk) {
    if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, B));
  } else PetscCall(MatConvert(A, mpi ? MATMPIAIJ : MATSEQAIJ, reuse == MAT_INITIAL_MATRIX ? MAT_INITIAL_MATRIX : MAT_INPLACE_MATRIX, B));
  if (!iscsrk) PetscCall(mpi ? MatConvert_MPIAIJ_MPICSRK(*B, MATMPICSRK, MAT_INPLACE_MATRIX, B) : MatConvert_SeqAIJ_SeqCSRK(*B, MATSEQCSRK, MAT_INPLACE_MATRIX, B));
  PetscCall(MatCSRKGetOptions_CSRK(*B, &opt));
  if (opt.k == 2) {
    PetscCall(PetscInfo(*B, "k = 2 (MATCSRK's default) becomes 3 on the GPU: MatCSRKSetLevels() after the conversion keeps 2\n"));
    opt.k = 3;
  }
  if (mpi) ((Mat_MPICSRK *)(*B)->spptr)->opt = opt;
  else PetscCall(MatSeqCSRKSetOptions(*B, &opt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatConvert_SeqAIJ_SeqCSRKCUDA - from MATSEQAIJ, MATSEQCSRK or another SeqAIJ subclass (aijcusparse) to MATSEQCSRKCUDA
*/
PetscErrorCode MatConvert_SeqAIJ_SeqCSRKCUDA(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  Mat              B;
  Mat_SeqCSRKCUDA *c;
  MatCSRKCOO      *coo = NULL;

  PetscFunctionBegin;
  PetscCall(MatCSRKCUDAConvertBegin(A, PETSC_FALSE, reuse, newmat, &B));
  if (!B) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatCSRKCUDAResizeSpptr(B, sizeof(Mat_SeqCSRK), sizeof(Mat_SeqCSRKCUDA)));
  c          = MatSeqCSRKCUDAGetData(B);
  c->nzstate = -1;
  c->state   = -1;
  /* what the table replaces: MATSEQCSRK's summary (for the matrix bound to the CPU), the AIJ COO assembly */
  PetscCall(PetscObjectQueryFunction((PetscObject)B, "MatCSRKGetInfo_C", &c->hostinfo));
  PetscCall(MatCSRKCUDACOO(B, PETSC_TRUE, &coo));
  PetscCall(MatCSRKExtendMethods(B, &SeqCSRKMethods, &SeqCSRKCUDAMethods, PETSC_TRUE, PETSC_FALSE));
  B->boundtocpu   = PETSC_FALSE;
  B->offloadmask  = PETSC_OFFLOAD_UNALLOCATED;
  PetscCall(MatSetVecType(B, VECCUDA));
  *newmat = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   MATCSRKCUDA - MATCSRKCUDA = "csrkcuda" - A matrix type whose products run CSR-k kernels on an NVIDIA GPU:
   `MATSEQCSRKCUDA` on one process, `MATMPICSRKCUDA` otherwise.

   A subclass of `MATAIJ` whose vectors are `VECCUDA`. The AIJ arrays on the host stay the matrix; the products run on
   a device copy made on the GPU from them at the first product, with rows grouped into super-rows and super-super-rows
   and a kernel chosen once from the row statistics. The copy is kept while the nonzero pattern and the values do not
   change; new values are uploaded once, at the next product. Results are always in the user's ordering.

   Options Database Keys:
+  -mat_type csrkcuda - selects the type, with `-vec_type cuda` (or `-dm_mat_type csrkcuda -dm_vec_type cuda` for DM programs)
.  -mat_csrk_cuda_kernel <auto,scalar,vector,stream,sliced,merge,block,bsliced> - the kernel, see `MatCSRKSetCUDAKernel()`
.  -mat_csrk_cuda_halo_pinned <bool> - the ghost values' exchange of the MPI product, see `MatCSRKSetFeature()`
.  -mat_csrk_k <1,2,3> - levels of the device copy (3 by default), see `MatCSRKSetLevels()` and the note on levels
.  -mat_csrk_sr_size <n> - rows per super-row, 0 for the GPU model's, see `MatCSRKSetSizes()`
.  -mat_csrk_row_patterns <bool> - row patterns in the sliced kernel where the rows allow, see `MatCSRKSetFeature()`
-  -mat_csrk_ordering <auto,natural,rcm,bandk> - the order of the device copy's rows, see the note on orderings

   Level: beginner

   Notes:
   Levels on the GPU: with k = 3 a thread block of the row kernels (scalar, vector, stream) and of the sliced kernel
   takes a super-super-row; with k = 1 or 2, the same on the GPU, a single super-row. The block and merge
   kernels do not use the levels. A matrix converted from `MATCSRK` (or AIJ) whose k is 2, the CPU default, becomes
   k = 3: set k = 2 after the conversion (`MatCSRKSetLevels()`, or `-mat_csrk_k 2` read by `MatSetFromOptions()`).
   `-mat_view ::ascii_info` and `-info` show the levels and the kernel in effect.

   Orderings on the GPU: where the numbering of a diagonal block scatters the gathers of x (the steps of its 32-row
   slices touch more than 0.8 distinct 32-byte sectors of x a nonzero: about 1 in a random numbering row by row,
   0.25-0.6 in a mesh's, DMPlex's included) and the block has at least 2048 rows a multiprocessor, the auto ordering
   makes the device copy again in an RCM order found on the device, once the products that pay for it within the
   set-up budget have run (a count, so the bits are the same every run; at the first product under
   `-mat_csrk_setup eager`); x is permuted in and y out.
   `rcm` and `bandk` (whose METIS coarsening runs on the host only) make the copy in that order at once; `natural`
   never. `-info` says which, and why.

   Memory: the device copy takes about the device memory of `MATAIJCUSPARSE` (the block kernel's layout less), and while
   it waits for its RCM order a layout that cannot give back the CSR arrays (block kernel, row patterns) keeps them
   beside it. Arrays of 16 MB or more go up through two pinned host buffers of 8 MB, filled by up to 8 OpenMP threads
   (at most `OMP_NUM_THREADS`) and freed at `PetscFinalize()`.

   The other options of `MATCSRK` apply to the host products: with host vectors, or with the matrix bound to the CPU
   by `MatBindToCPU()`, which then runs the kernels of `MATCSRK`, in their own ordering.

.seealso: `MATSEQCSRKCUDA`, `MATMPICSRKCUDA`, `MATCSRK`, `MATAIJCUSPARSE`, `MatBindToCPU()`
M*/

/*MC
   MATSEQCSRKCUDA - MATSEQCSRKCUDA = "seqaijcsrkcuda" - the sequential CSR-k type with the products on an NVIDIA GPU,
   a `MATSEQAIJ` subclass whose vectors are `VECCUDA`; see `MATCSRKCUDA` for its options and levels

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
