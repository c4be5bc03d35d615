/*
   The block-sliced kernel of MATCSRKCUDA (an entry of the plan, csrkcudaplan.cu; docs/design.md, "Fewer bytes on block
   rows"): where the rows come in block rows of bs = 2-6 (the matrix's block size) whose entries are dense bs x bs
   blocks, as in elasticity and other multi-field finite elements, it stores ONE 32-bit column index a block (4 / bs^2
   bytes a nonzero instead of 4) and the values of 32 block rows (a slice) block column by block column, padded to the
   slice's longest block row, so that every load of a warp is coalesced. A thread takes a block row: it gathers the bs
   values of x of a block once for its bs rows. The blocks are checked and the layout built on the device from the
   uploaded CSR arrays; the plan then keeps only the row pointers, from which a value refresh scatters the new values.
*/
#include "../csrkimpl.h"
#include "csrkcuda.h"
#include "csrkcudautil.cuh"
#include "csrkcudabsliced.cuh"

/* auto: the padded layout at most this many times the nonzeros, as the sliced kernel's */
#define CSRK_BSLICED_MAX_PADDING 1.25
/* auto: the largest block size it takes; at bs 6 it ran the product as fast as the sliced kernel, no faster
   (docs/tuning.md), so the simpler sliced layout keeps those rows */
#define CSRK_BSLICED_AUTO_MAX_BS 5

/* the block-sliced layout (d->data): slice s's blocks from sliceptr[s] (in blocks), their columns in block units, the
   blocks of each block row, the values (bs^2 a block) */
typedef struct {
  CSRKIdx     *sliceptr, *blen, *bcol;
  PetscScalar *bval;
  PetscInt     bs, nn;   /* block size, block rows */
  PetscInt64   pblocks;  /* blocks of the layout, padding included */
} CSRKBSliced;

/* The layout, where its rule holds: the rows in dense blocks of the matrix's block size (checked on the device),
   forced, or under auto bs 2-5 (CSRK_BSLICED_AUTO_MAX_BS), no row patterns (a stencil in its own numbering: the sliced kernel over them reads
   fewer bytes), a block of at least CSRK_GPU_SLICES_MIN_ROWS_PER_SM rows a multiprocessor (below it the block kernel's
   nodes win in a solve), no long row and the padding within CSRK_BSLICED_MAX_PADDING, so that the layout stays
   smaller than the CSR arrays (aijcusparse's). Forced on rows that are not in such blocks, it declines (the plan then
   takes the auto rule's kernel: an MPI matrix's off-diagonal block seldom is in blocks) */
static PetscErrorCode CSRKBSlicedSetUp(Mat A, CSRKDevice *d, const MatCSRKOptions *opt, CSRKPlanStats *st, size_t *bytes, cudaStream_t stream)
{
  const PetscInt  bs = A->rmap->bs, nn = d->m / bs, nsl = (nn + CSRK_SLICE_ROWS - 1) / CSRK_SLICE_ROWS;
  const PetscBool sizes = (PetscBool)(bs >= 2 && bs <= 6 && d->m % bs == 0 && d->n % bs == 0);
  CSRKBSliced    *b;
  CSRKIdx         pb = 0;
  int            *bad, hbad = 0;
  PetscReal       pad;

  PetscFunctionBegin;
  if (!st->forced && (!sizes || bs > CSRK_BSLICED_AUTO_MAX_BS || st->npat || d->m < (PetscInt64)CSRK_GPU_SLICES_MIN_ROWS_PER_SM * st->sms || CSRKLongRowLength(d->mean, d->maxlen) != CSRK_IDX_MAX)) PetscFunctionReturn(PETSC_SUCCESS);
  if (!sizes) {
    PetscCall(PetscInfo(A, "Block-sliced kernel not taken: block size %" PetscInt_FMT " (2 to 6 needed) with %" PetscInt_FMT " x %" PetscInt_FMT " rows and columns\n", bs, d->m, d->n));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscNew(&b));
  d->data = b;
  b->bs   = bs;
  b->nn   = nn;
  PetscCall(CSRKMalloc(&b->blen, nn, NULL));
  PetscCall(CSRKScratch(&bad, 1, stream));
  PetscCallCUDA(cudaMemsetAsync(bad, 0, sizeof(int), stream));
  CSRKBSlicedCheckKernel<<<CSRKGrid(nn), 256, 0, stream>>>(nn, (int)bs, d->rowptr, d->colidx, b->blen, bad);
  PetscCallCUDA(cudaGetLastError());
  PetscCall(CSRKReadBack(&hbad, bad, 1, stream));
  CSRKScratchFree(bad, stream);
  if (!hbad) {
    PetscCall(CSRKMalloc(&b->sliceptr, nsl + 1, NULL));
    PetscCall(CSRKSlicePointers(nn, bs, d->rowptr, b->sliceptr, &pb, stream));
  }
  pad = d->nnz ? (PetscReal)pb * bs * bs / d->nnz : 1;
  if (hbad || (!st->forced && pad > CSRK_BSLICED_MAX_PADDING) || (PetscInt64)pb * bs * bs > (PetscInt64)CSRK_IDX_MAX) {
    if (hbad) PetscCall(PetscInfo(A, "Block-sliced kernel not taken: the rows are not in dense %" PetscInt_FMT " x %" PetscInt_FMT " blocks\n", bs, bs));
    else PetscCall(PetscInfo(A, "Block-sliced kernel not taken: padding %g (at most %g) or %" PetscInt64_FMT " values (32-bit indices)\n", (double)pad, CSRK_BSLICED_MAX_PADDING, (PetscInt64)pb * bs * bs));
    PetscCall(CSRKLayoutFree(&CSRKVariantBSliced, d));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  b->pblocks = pb;
  *bytes += sizeof(CSRKIdx) * ((size_t)PetscMax(nn, 1) + (size_t)nsl + 1);
  PetscCall(CSRKMalloc(&b->bcol, pb, bytes));
  PetscCall(CSRKMalloc(&b->bval, (PetscInt64)pb * bs * bs, bytes));
  /* the padding is never read; zeros keep the layout's bytes the same every run */
  PetscCallCUDA(cudaMemsetAsync(b->bcol, 0, sizeof(CSRKIdx) * PetscMax(pb, 1), stream));
  PetscCallCUDA(cudaMemsetAsync(b->bval, 0, sizeof(PetscScalar) * PetscMax((PetscInt64)pb * bs * bs, 1), stream));
  CSRKSliceMoveKernel<false><<<CSRKGrid(d->m), 256, 0, stream>>>(d->m, (int)bs, d->rowptr, b->sliceptr, d->colidx, d->val, b->bcol, b->bval);
  PetscCallCUDA(cudaGetLastError());
  d->kernel = MAT_CSRK_CUDA_KERNEL_BSLICED;
  d->width  = 1;
  d->bx     = CSRK_BSLICED_THREADS;
  d->by = d->bz = 1;
  d->sr         = CSRK_SLICE_ROWS * bs;
  d->ssr        = CSRK_BSLICED_THREADS / CSRK_SLICE_ROWS;
  d->nsr        = nsl;
  d->nunits     = (nn + CSRK_BSLICED_THREADS - 1) / CSRK_BSLICED_THREADS;
  PetscCall(PetscInfo(A, "Block-sliced kernel: %" PetscInt_FMT " block rows of %" PetscInt_FMT " in slices of %d, %" PetscInt64_FMT " dense blocks with padding (%g of the nonzeros), one 32-bit column a block\n", nn, bs, CSRK_SLICE_ROWS, (PetscInt64)pb, (double)pad));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CSRKBSlicedRefresh(CSRKDevice *d, const PetscScalar *v, cudaStream_t stream)
{
  CSRKBSliced *b = (CSRKBSliced *)d->data;

  PetscFunctionBegin;
  CSRKSliceMoveKernel<false><<<CSRKGrid(d->m), 256, 0, stream>>>(d->m, (int)b->bs, d->rowptr, b->sliceptr, NULL, (PetscScalar *)v, NULL, b->bval);
  PetscCallCUDA(cudaGetLastError());
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CSRKBSlicedToCSR(const CSRKDevice *d, CSRKIdx *colidx, PetscScalar *val, cudaStream_t stream)
{
  const CSRKBSliced *b = (const CSRKBSliced *)d->data;

  PetscFunctionBegin;
  CSRKSliceMoveKernel<true><<<CSRKGrid(d->m), 256, 0, stream>>>(d->m, (int)b->bs, d->rowptr, b->sliceptr, colidx, val, b->bcol, b->bval);
  PetscCallCUDA(cudaGetLastError());
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <int BS>
static void CSRKBSlicedLaunch(const CSRKDevice *d, const PetscScalar *x, const PetscScalar *z, PetscScalar *y, cudaStream_t stream)
{
  const CSRKBSliced *b = (const CSRKBSliced *)d->data;

  (z ? CSRKBSlicedKernel<BS, true> : CSRKBSlicedKernel<BS, false>)<<<(unsigned)d->nunits, CSRK_BSLICED_THREADS, 0, stream>>>((CSRKIdx)b->nn, b->sliceptr, b->blen, b->bcol, b->bval, x, z, y);
}

/* y = A x (+ z); the plain store where there is no z (the layout keeps the user's order: no row map) */
static PetscErrorCode CSRKBSlicedMult(const CSRKDevice *d, const PetscScalar *x, const PetscScalar *z, PetscScalar *y, cudaStream_t stream)
{
  const CSRKBSliced *b = (const CSRKBSliced *)d->data;

  PetscFunctionBegin;
  if (!b->nn) PetscFunctionReturn(PETSC_SUCCESS);
  switch (b->bs) {
  case 2:
    CSRKBSlicedLaunch<2>(d, x, z, y, stream);
    break;
  case 3:
    CSRKBSlicedLaunch<3>(d, x, z, y, stream);
    break;
  case 4:
    CSRKBSlicedLaunch<4>(d, x, z, y, stream);
    break;
  case 5:
    CSRKBSlicedLaunch<5>(d, x, z, y, stream);
    break;
  default:
    CSRKBSlicedLaunch<6>(d, x, z, y, stream);
  }
  PetscCallCUDA(cudaGetLastError());
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CSRKBSlicedDiagonal(CSRKDevice *d, PetscBool shift, PetscScalar a, PetscScalar *v, cudaStream_t stream)
{
  const CSRKBSliced *b = (const CSRKBSliced *)d->data;

  PetscFunctionBegin;
  (shift ? CSRKBSlicedDiagonalKernel<true> : CSRKBSlicedDiagonalKernel<false>)<<<CSRKGrid(d->m), 256, 0, stream>>>(d->m, (int)b->bs, b->sliceptr, b->blen, b->bcol, b->bval, v, a);
  PetscCallCUDA(cudaGetLastError());
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CSRKBSlicedScale(CSRKDevice *d, PetscScalar a, cudaStream_t stream)
{
  const CSRKBSliced *b = (const CSRKBSliced *)d->data;

  PetscFunctionBegin;
  PetscCall(CSRKScaleValues(b->bval, b->pblocks * b->bs * b->bs, a, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void CSRKBSlicedView(const CSRKDevice *d, char *buf, size_t len)
{
  const CSRKBSliced *b = (const CSRKBSliced *)d->data;

  snprintf(buf, len, "slices of %d block rows of %" PetscInt_FMT " block column by block column, a 32-bit column a dense %" PetscInt_FMT " x %" PetscInt_FMT " block, %" PetscInt64_FMT " blocks with padding", CSRK_SLICE_ROWS, b->bs, b->bs, b->bs, b->pblocks);
}

const CSRKVariant CSRKVariantBSliced = {MAT_CSRK_CUDA_KERNEL_BSLICED, CSRK_CSR_ROWPTR, CSRKBSlicedSetUp, CSRKBSlicedRefresh, CSRKBSlicedMult, CSRKBSlicedDiagonal, CSRKBSlicedScale, CSRKBSlicedView, {offsetof(CSRKBSliced, sliceptr), offsetof(CSRKBSliced, blen), offsetof(CSRKBSliced, bcol), offsetof(CSRKBSliced, bval)}, CSRKBSlicedToCSR};
