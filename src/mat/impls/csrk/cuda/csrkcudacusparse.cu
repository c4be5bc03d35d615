/* The cusparse kernel of MATCSRKCUDA (an entry of the plan, csrkcudaplan.cu): cuSPARSE's merge-based CSR SpMV
   (CUSPARSE_SPMV_CSR_ALG2, its deterministic CSR algorithm) over the device CSR arrays */
#include "../csrkimpl.h"
#include "csrkcuda.h"
#include <petscdevice_cuda.h>
#include <cusparse.h>

/* The cusparse kernel: cuSPARSE's handle, the matrix over the device CSR arrays (values updated in place by value
   refreshes) and the vectors, whose pointers are set at each product; preprocessed: the buffer holds the algorithm's
   analysis of the pattern */
struct _n_CSRKCusparse {
  cusparseHandle_t     handle;
  cusparseSpMatDescr_t mat;
  cusparseDnVecDescr_t vx, vy;
  void                *buffer;
  PetscBool            preprocessed;
};

#if defined(PETSC_USE_COMPLEX)
  #define CSRK_CUDA_SCALAR (sizeof(PetscReal) == sizeof(float) ? CUDA_C_32F : CUDA_C_64F)
#else
  #define CSRK_CUDA_SCALAR (sizeof(PetscReal) == sizeof(float) ? CUDA_R_32F : CUDA_R_64F)
#endif

static PetscErrorCode CSRKCusparseCreate(CSRKDevice *d, size_t *bytes)
{
  CSRKCusparse      sp;
  const PetscScalar one = 1.0, zero = 0.0;
  size_t            size;

  PetscFunctionBegin;
  PetscCall(PetscNew(&sp));
  d->sp = sp;
  PetscCallCUSPARSE(cusparseCreate(&sp->handle));
  PetscCallCUSPARSE(cusparseCreateCsr(&sp->mat, d->m, d->n, d->nnz, d->rowptr, d->colidx, d->val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CSRK_CUDA_SCALAR));
  /* each product sets the vectors' pointers; until then they point at the values (the buffer query reads no entry) */
  PetscCallCUSPARSE(cusparseCreateDnVec(&sp->vx, d->n, d->val, CSRK_CUDA_SCALAR));
  PetscCallCUSPARSE(cusparseCreateDnVec(&sp->vy, d->m, d->val, CSRK_CUDA_SCALAR));
  PetscCallCUSPARSE(cusparseSpMV_bufferSize(sp->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, sp->mat, sp->vx, &zero, sp->vy, CSRK_CUDA_SCALAR, CUSPARSE_SPMV_CSR_ALG2, &size));
  PetscCallCUDA(cudaMalloc(&sp->buffer, PetscMax(size, 1)));
  *bytes += size;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CSRKCusparseDestroy(CSRKDevice *d)
{
  CSRKCusparse sp = d->sp;

  PetscFunctionBegin;
  if (!sp) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallCUSPARSE(cusparseDestroyDnVec(sp->vx));
  PetscCallCUSPARSE(cusparseDestroyDnVec(sp->vy));
  PetscCallCUSPARSE(cusparseDestroySpMat(sp->mat));
  PetscCallCUSPARSE(cusparseDestroy(sp->handle));
  CSRKCudaFree(sp->buffer);
  PetscCall(PetscFree(d->sp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = A x (+ z) with cuSPARSE, into y directly (z copied there first and added by beta = 1) */
static PetscErrorCode CSRKCusparseMult(const CSRKDevice *d, const PetscScalar *x, const PetscScalar *z, PetscScalar *y, cudaStream_t stream)
{
  CSRKCusparse      sp  = d->sp;
  const PetscScalar one = 1.0, zero = 0.0;

  PetscFunctionBegin;
  if (z && z != y) PetscCallCUDA(cudaMemcpyAsync(y, z, sizeof(PetscScalar) * d->m, cudaMemcpyDeviceToDevice, stream));
  PetscCallCUSPARSE(cusparseSetStream(sp->handle, stream));
  PetscCallCUSPARSE(cusparseDnVecSetValues(sp->vx, (void *)x));
  PetscCallCUSPARSE(cusparseDnVecSetValues(sp->vy, y));
#if CUDART_VERSION >= 12040
  /* the row partition of ALG2 once per pattern instead of in every product (cuSPARSE 12.4 and later; PETSc's
     aijcusparse does the same for its algorithm); the descriptors have their first real vectors by now */
  if (!sp->preprocessed) {
    PetscCallCUSPARSE(cusparseSpMV_preprocess(sp->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, sp->mat, sp->vx, z ? &one : &zero, sp->vy, CSRK_CUDA_SCALAR, CUSPARSE_SPMV_CSR_ALG2, sp->buffer));
    sp->preprocessed = PETSC_TRUE;
  }
#endif
  PetscCallCUSPARSE(cusparseSpMV(sp->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, sp->mat, sp->vx, z ? &one : &zero, sp->vy, CSRK_CUDA_SCALAR, CUSPARSE_SPMV_CSR_ALG2, sp->buffer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CSRKCusparseSetUp(Mat A, CSRKDevice *d, const MatCSRKOptions *opt, CSRKPlanStats *st, size_t *bytes, cudaStream_t stream)
{
  PetscBool fits;

  PetscFunctionBegin;
  PetscCall(CSRKPlanFits(d, st, &fits, stream));
  if (!st->forced && !(st->cv > CSRK_GPU_SLICED_MAX_CV && !fits)) PetscFunctionReturn(PETSC_SUCCESS);
  d->kernel = MAT_CSRK_CUDA_KERNEL_CUSPARSE;
  d->width  = 0;
  d->bx = d->by = d->bz = 1;
  PetscCall(CSRKCusparseCreate(d, bytes));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void CSRKCusparseView(const CSRKDevice *d, char *buf, size_t len)
{
  snprintf(buf, len, "CSR arrays, cuSPARSE's CSR SpMV (CUSPARSE_SPMV_CSR_ALG2)");
}

const CSRKVariant CSRKVariantCusparse = {MAT_CSRK_CUDA_KERNEL_CUSPARSE, CSRKCusparseSetUp, NULL, CSRKCusparseMult, CSRKDiagonalCSR, CSRKCusparseView, CSRKCusparseDestroy};
