/*
   The merge kernel of MATCSRKCUDA (an entry of the plan, csrkcudaplan.cu; kernels in csrkcudamerge.cuh): set-up of its
   tiles and the product. Tiles of CSRK_MERGE_THREADS x CSRK_MERGE_ITEMS path steps and the cache hints (the matrix and
   y streamed, so that x stays in L2) were chosen by the sweep of docs/experiments/mergesweep.cu (docs/tuning.md). The
   fix-up kernel is a programmatic dependent launch where the device and the compiled code allow it.
*/
#include "../csrkimpl.h"
#include "csrkcuda.h"
#include "csrkcudamerge.cuh"
#include "csrkcudautil.cuh"

#define CSRK_MERGE_THREADS 256
#define CSRK_MERGE_ITEMS   4
#define CSRK_MERGE_HINTS   CSRK_MERGE_HINTS_STREAMED

/* the merge kernel's arrays (d->data): where each tile starts (row, nonzero), the row and value of each tile's carry */
typedef struct {
  CSRKIdx     *tile, *carryrow;
  PetscScalar *carryval;
  PetscInt     ntiles;
  PetscBool    pdl; /* the fix-up kernel as a programmatic dependent launch */
} CSRKMerge;

/* The tile coordinates of the merge kernel for the pattern of d (rowptr on the device) and its carry arrays; under
   auto for rows of very different lengths (cv above CSRK_MERGE_MIN_CV: power-law rows, where its even tiles keep a
   long row from serialising a sub-warp), not short rows whose units fit the stream kernel, as long as rows + nonzeros
   fit the 32-bit path coordinates; rows of a few kinds within a few multiples of the mean (finite elements of order
   2) go to the vector kernel, except while the copy waits for its RCM order (d->rcmwait: a numbering that scatters
   the gathers of x), where the merge kernel's even tiles keep more of those gathers in flight than a sub-warp a row */
static PetscErrorCode CSRKMergeSetUp(Mat A, CSRKDevice *d, const MatCSRKOptions *opt, CSRKPlanStats *st, size_t *bytes, cudaStream_t stream)
{
  const PetscInt64 steps = (PetscInt64)d->m + d->nnz, tilesize = CSRK_MERGE_THREADS * CSRK_MERGE_ITEMS;
  PetscBool        fits  = PETSC_FALSE;
  CSRKMerge       *mg;

  PetscFunctionBegin;
  if (!st->forced && st->cv > CSRK_MERGE_MIN_CV && d->mean <= 8) PetscCall(CSRKPlanFits(d, st, &fits, stream));
  if (!st->forced && !((st->cv > CSRK_MERGE_MIN_CV || (d->rcmwait && st->cv > CSRK_GPU_SLICED_MAX_CV)) && !(fits && d->mean <= 8) && 2 * d->nonzerorows > d->m && (PetscInt64)d->m + d->nnz <= CSRK_IDX_MAX / 2)) PetscFunctionReturn(PETSC_SUCCESS);
  d->kernel = MAT_CSRK_CUDA_KERNEL_MERGE;
  d->width  = 0;
  PetscCheck(steps <= CSRK_IDX_MAX - tilesize, PETSC_COMM_SELF, PETSC_ERR_SUP, "The merge kernel needs rows + nonzeros (%" PetscInt64_FMT ") within 32-bit indices: use another kernel (-mat_csrk_cuda_kernel)", steps);
  PetscCall(PetscNew(&mg));
  d->data    = mg;
  mg->ntiles = (PetscInt)((steps + tilesize - 1) / tilesize);
  PetscCall(CSRKMalloc(&mg->tile, 2 * (mg->ntiles + 1), bytes));
  PetscCall(CSRKMalloc(&mg->carryrow, mg->ntiles, bytes));
  PetscCall(CSRKMalloc(&mg->carryval, mg->ntiles, bytes));
  CSRKMergeTilesKernel<<<(unsigned)PetscMax(1, PetscMin((mg->ntiles + 256) / 256, 65535)), 256, 0, stream>>>((CSRKIdx)mg->ntiles, (CSRKIdx)tilesize, (CSRKIdx)d->m, (CSRKIdx)d->nnz, d->rowptr, mg->tile);
  PetscCallCUDA(cudaGetLastError());
  {
    /* programmatic dependent launch: a device of compute capability 9.0 or later running code built for it (the wait
       in the fix-up kernel exists only there) */
    int                dev, major;
    cudaFuncAttributes fa;
    PetscCallCUDA(cudaGetDevice(&dev));
    PetscCallCUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    PetscCallCUDA(cudaFuncGetAttributes(&fa, CSRKMergeFixupKernel));
    mg->pdl = (PetscBool)(CUDART_VERSION >= 11080 && major >= 9 && fa.ptxVersion >= 90);
  }
  d->bx = CSRK_MERGE_THREADS;
  d->by = d->bz = 1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = A x (+ z) with the merge kernel: the tiles, then the rows that cross tiles */
static PetscErrorCode CSRKMergeMult(const CSRKDevice *d, const PetscScalar *x, const PetscScalar *z, PetscScalar *y, cudaStream_t stream)
{
  const CSRKMerge *mg = (const CSRKMerge *)d->data;

  PetscFunctionBegin;
  if (!mg->ntiles) PetscFunctionReturn(PETSC_SUCCESS);
  CSRKMergeKernel<CSRK_MERGE_THREADS, CSRK_MERGE_ITEMS, CSRK_MERGE_HINTS><<<(unsigned)mg->ntiles, CSRK_MERGE_THREADS, 0, stream>>>((CSRKIdx)d->m, mg->tile, d->rowptr, d->colidx, d->val, x, z, y, mg->carryrow, mg->carryval);
  PetscCallCUDA(cudaGetLastError());
  PetscCallCUDA(CSRKMergeLaunchFixup((CSRKIdx)mg->ntiles, (CSRKIdx)d->m, mg->carryrow, mg->carryval, y, stream, mg->pdl));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void CSRKMergeView(const CSRKDevice *d, char *buf, size_t len)
{
  const CSRKMerge *mg = (const CSRKMerge *)d->data;

  snprintf(buf, len, "CSR arrays, %" PetscInt_FMT " tiles of %d rows and nonzeros%s", mg->ntiles, CSRK_MERGE_THREADS * CSRK_MERGE_ITEMS, mg->pdl ? ", fix-up as a programmatic dependent launch" : "");
}

const CSRKVariant CSRKVariantMerge = {MAT_CSRK_CUDA_KERNEL_MERGE, CSRK_CSR_ALL, CSRKMergeSetUp, NULL, CSRKMergeMult, CSRKDiagonalCSR, NULL, CSRKMergeView, {offsetof(CSRKMerge, tile), offsetof(CSRKMerge, carryrow), offsetof(CSRKMerge, carryval)}};
