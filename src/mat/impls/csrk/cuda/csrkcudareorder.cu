/*
   The device copy in RCM order (csrkcudaplan.cu runs it before the plan chooses its kernel): where a block's numbering
   scatters the gathers of x over the whole vector (a random numbering), every kernel is bound by those gathers; in an
   order that keeps a row's neighbours near it the same kernels run at the rate of a mesh's own numbering. The order is
   found on the device: breadth-first levels grown from one seed per CSRK_RCM_ROWS_PER_SEED rows (so that a block of a
   million rows needs some tens of levels, each a few small kernels), each level listed in the Cuthill-McKee way (the
   children of a vertex together, in the order of its parent's position, claimed with an integer atomicMin, so that the
   order is the same every run), and reversed. The rows of the layout are then rows perm[] of the block, its columns
   renumbered; a product gathers x into that order and scatters y back, and a value refresh moves each row's values
   into their row of the layout (the entries of a row keep their order).
*/
#include "../csrkimpl.h"
#include "csrkcuda.h"
#include "csrkcudautil.cuh"
#include "csrkcudareorder.cuh"

/* one seed per this many rows; levels queued between two looks from the host; the most levels (restarts in other
   components included) before the order is given up */
#ifndef CSRK_RCM_ROWS_PER_SEED
  #define CSRK_RCM_ROWS_PER_SEED 16384
#endif
#define CSRK_RCM_SYNC_LEVELS   8
/* rows of unequal lengths: sorted by length, longest first, inside windows of this many rows of the order (as SELL-C-sigma
   does), so that the 32 rows of a slice of the sliced kernel have nearly one length and stay near one another */
#ifndef CSRK_RCM_SORT_ROWS
  #define CSRK_RCM_SORT_ROWS 1024 /* also in the -info line */
#endif
#define CSRK_RCM_MAX_LEVELS    1024
#define CSRK_RCM_THREADS       256
#define CSRK_RCM_SCAN_THREADS  1024
#define CSRK_RCM_NONE          0x7f7f7f7f /* a vertex not yet reached (the byte 0x7f in every byte, set with a memset) */

struct CSRKMinOp {
  __device__ int operator()(int a, int b) const { return a < b ? a : b; }
};

/* level 0: the seeds, rows s m / nseeds in order */
__global__ void CSRKRcmSeedsKernel(PetscInt64 m, int nseeds, CSRKIdx *__restrict__ order, int *__restrict__ claim, int *__restrict__ lev, CSRKRcmState *st)
{
  CSRK_GRIDSTRIDE(s, nseeds)
  {
    const CSRKIdx v = (CSRKIdx)(s * m / nseeds);
    order[s]        = v;
    claim[v]        = -1;
    if (!s) {
      lev[0]       = 0;
      lev[1]       = nseeds;
      st->needseed = 0;
    }
  }
}

/* one block: the chunks' offsets (exclusive sums of csum), the next level's end, and whether the next level restarts
   from a seed in a component not reached */
__global__ void CSRKRcmScanKernel(int l, PetscInt64 m, int *__restrict__ lev, int *__restrict__ csum, CSRKRcmState *st)
{
  typedef cub::BlockScan<int, CSRK_RCM_SCAN_THREADS> Scan;
  __shared__ typename Scan::TempStorage tmp;
  __shared__ int                        carry;
  const int                             lo = lev[l], hi = lev[l + 1], nc = (hi - lo + CSRK_RCM_CHUNK - 1) / CSRK_RCM_CHUNK;
  if (!threadIdx.x) carry = 0;
  __syncthreads();
  for (int c0 = 0; c0 < nc; c0 += CSRK_RCM_SCAN_THREADS) {
    const int c = c0 + threadIdx.x;
    int       v = c < nc ? csum[c] : 0, total;
    Scan(tmp).ExclusiveSum(v, v, total);
    if (c < nc) csum[c] = carry + v;
    __syncthreads();
    if (!threadIdx.x) carry += total;
    __syncthreads();
  }
  if (!threadIdx.x) {
    lev[l + 2] = hi + carry;
    if (!carry && hi < m) {
      st->needseed = 1;
      st->seed     = CSRK_RCM_NONE;
    }
  }
}

/* where a level has no children and rows are left: the lowest row not reached */
__global__ void CSRKRcmRestartKernel(PetscInt64 m, const int *__restrict__ claim, CSRKRcmState *st)
{
  typedef cub::BlockReduce<int, CSRK_RCM_THREADS> Reduce;
  __shared__ typename Reduce::TempStorage tmp;
  if (!st->needseed) return;
  for (PetscInt64 base = blockIdx.x * (PetscInt64)CSRK_RCM_THREADS; base < m; base += (PetscInt64)CSRK_RCM_THREADS * gridDim.x) {
    const PetscInt64 u = base + threadIdx.x;
    int              s = u < m && claim[u] == CSRK_RCM_NONE ? (int)u : CSRK_RCM_NONE;
    s                  = Reduce(tmp).Reduce(s, CSRKMinOp());
    if (!threadIdx.x && s != CSRK_RCM_NONE) atomicMin(&st->seed, s);
    __syncthreads();
  }
}

/* the order reversed: row i of the layout is row perm[i] of the block */
__global__ void CSRKRcmReverseKernel(PetscInt64 m, const CSRKIdx *__restrict__ order, CSRKIdx *__restrict__ perm)
{
  CSRK_GRIDSTRIDE(i, m) perm[i] = order[m - 1 - i];
}

/* sort keys of the layout's rows: their window of CSRK_RCM_SORT_ROWS rows, then the longest row first */
__global__ void CSRKRcmLengthKeyKernel(PetscInt64 m, const CSRKIdx *__restrict__ perm, const CSRKIdx *__restrict__ rowptr, CSRKULL *__restrict__ key)
{
  CSRK_GRIDSTRIDE(i, m)
  {
    const CSRKIdx v = perm[i];
    key[i]          = ((CSRKULL)(i / CSRK_RCM_SORT_ROWS) << 32) | (CSRKULL)(CSRK_IDX_MAX - (rowptr[v + 1] - rowptr[v]));
  }
}

/* iperm the inverse of perm; where each row of the layout starts in the block's arrays, and its length */
__global__ void CSRKRcmRowsOfPermKernel(PetscInt64 m, const CSRKIdx *__restrict__ perm, const CSRKIdx *__restrict__ rowptr, CSRKIdx *__restrict__ iperm, CSRKIdx *__restrict__ pstart, CSRKIdx *__restrict__ len)
{
  CSRK_GRIDSTRIDE(i, m)
  {
    const CSRKIdx v = perm[i];
    iperm[v]        = (CSRKIdx)i;
    pstart[i]       = rowptr[v];
    len[i]          = rowptr[v + 1] - rowptr[v];
  }
  if (!blockIdx.x && !threadIdx.x) len[m] = 0;
}

__global__ void CSRKInverseKernel(PetscInt64 m, const CSRKIdx *__restrict__ perm, CSRKIdx *__restrict__ iperm)
{
  CSRK_GRIDSTRIDE(i, m) iperm[perm[i]] = (CSRKIdx)i;
}

/* a warp a row of the layout: its entries from row perm[i] of the block's arrays (columns renumbered by iperm) */
__global__ void CSRKRcmRowsKernel(PetscInt64 m, const CSRKIdx *__restrict__ prow, const CSRKIdx *__restrict__ pstart, const CSRKIdx *__restrict__ iperm, const CSRKIdx *__restrict__ colidx, const PetscScalar *__restrict__ val, CSRKIdx *__restrict__ pcol, PetscScalar *__restrict__ pval)
{
  const unsigned lane = threadIdx.x & 31u;
  for (PetscInt64 i = (blockIdx.x * (PetscInt64)blockDim.x + threadIdx.x) / 32; i < m; i += (PetscInt64)blockDim.x * gridDim.x / 32) {
    const CSRKIdx q0 = prow[i], len = prow[i + 1] - q0, s = pstart[i];
    for (CSRKIdx k = (CSRKIdx)lane; k < len; k += 32) {
      if (pcol) pcol[q0 + k] = iperm[colidx[s + k]];
      if (pval) pval[q0 + k] = val[s + k];
    }
  }
}

/* y[perm[i]] = yp[i] (+ z[perm[i]]), as the kernels that write y through the order store it */
__global__ void CSRKRcmScatterKernel(PetscInt64 m, const CSRKIdx *__restrict__ perm, const PetscScalar *__restrict__ yp, const PetscScalar *z, PetscScalar *y)
{
  CSRK_GRIDSTRIDE(i, m) CSRKStore(i, perm, z, y, yp[i]);
}

/* the blocks of a level's kernels: as many as the multiprocessors hold at once (2,048 threads each), so that the
   sub-warps walk a level of some tens of thousands of rows in one wave */
static inline unsigned CSRKRcmGrid(int sms)
{
  return (unsigned)(2048 / CSRK_RCM_THREADS * sms);
}

/* CSRKReorderWhen - the policy: whether the device copy of this block is made in RCM order, and after how many
   products (*wait: -1 never, 0 at this set-up). Forced by -mat_csrk_ordering rcm or bandk (Band-k's METIS coarsening
   runs on the host only: on the device both are this RCM); under auto where the numbering scatters the gathers of x
   (CSRK_GPU_SCATTERED_SECTORS, counted exactly here: the distance from the diagonal does not tell, DMPlex's numbering
   puts most columns far from it and gathers well) in a block that fills the device, after the products that pay for
   it within the set-up's budget (MatCSRKPlanWait, CSRK_GPU_RCM_PASSES and CSRK_GPU_RCM_NNZ) */
PetscErrorCode CSRKReorderWhen(Mat A, const CSRKDevice *d, const MatCSRKOptions *opt, PetscInt *wait, cudaStream_t stream)
{
  Mat_SeqCSRK *sp = (Mat_SeqCSRK *)A->spptr;
  CSRKULL     *dsec, sec = 0;
  PetscReal    perentry;
  int          sms;

  PetscFunctionBegin;
  *wait = -1;
  if (opt->ordering == MAT_CSRK_ORDERING_NATURAL || d->m != d->n || sp->offdiag || d->m < 2) PetscFunctionReturn(PETSC_SUCCESS);
  if (opt->ordering != MAT_CSRK_ORDERING_AUTO) {
    *wait = 0;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(CSRKDeviceSMs(&sms));
  if (!CSRKFillsDevice(d->m, sms) || !d->nnz) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CSRKScratch(&dsec, 1, stream));
  PetscCallCUDA(cudaMemsetAsync(dsec, 0, sizeof(*dsec), stream));
  CSRKSectorCountKernel<<<CSRKGrid(d->m), CSRK_RCM_THREADS, 0, stream>>>(d->m, d->rowptr, d->colidx, dsec);
  PetscCallCUDA(cudaGetLastError());
  PetscCall(CSRKReadBack(&sec, dsec, 1, stream));
  CSRKScratchFree(dsec, stream);
  perentry = (PetscReal)sec / (PetscReal)d->nnz;
  if (perentry > CSRK_GPU_SCATTERED_SECTORS) *wait = MatCSRKPlanWait(opt, CSRK_GPU_RCM_PASSES + CSRK_GPU_RCM_NNZ / PetscMax(d->nnz, 1), d->nnz);
  if (*wait >= 0) PetscCall(PetscInfo(A, "GPU plan: the 32-row slices gather %.3f distinct sectors of x a nonzero: the device copy in RCM order after %" PetscInt_FMT " products\n", (double)perentry, *wait));
  else PetscCall(PetscInfo(A, "GPU plan: the 32-row slices gather %.3f distinct sectors of x a nonzero (at most %g): the device copy keeps the user's numbering\n", (double)perentry, (double)CSRK_GPU_SCATTERED_SECTORS));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the breadth-first levels of d's rows from the seeds into order[] (Cuthill-McKee), or *done false past
   CSRK_RCM_MAX_LEVELS levels */
static PetscErrorCode CSRKRcmLevels(const CSRKDevice *d, CSRKIdx *order, PetscInt *nlevels, PetscBool *done, cudaStream_t stream)
{
  const int     nseeds = (int)PetscMax(1, d->m / CSRK_RCM_ROWS_PER_SEED);
  int          *claim, *cnt, *csum, *lev, end = 0, sms;
  CSRKRcmState *st;
  int           l;

  PetscFunctionBegin;
  PetscCall(CSRKDeviceSMs(&sms));
  PetscCall(CSRKScratch(&claim, d->m, stream));
  PetscCall(CSRKScratch(&cnt, d->m, stream));
  PetscCall(CSRKScratch(&csum, d->m / CSRK_RCM_CHUNK + 2, stream));
  PetscCall(CSRKScratch(&lev, CSRK_RCM_MAX_LEVELS + 2, stream));
  PetscCall(CSRKScratch(&st, 1, stream));
  PetscCallCUDA(cudaMemsetAsync(claim, 0x7f, sizeof(int) * (size_t)d->m, stream));
  CSRKRcmSeedsKernel<<<CSRKGrid(nseeds), 256, 0, stream>>>(d->m, nseeds, order, claim, lev, st);
  PetscCallCUDA(cudaGetLastError());
  *done = PETSC_FALSE;
  for (l = 0; l < CSRK_RCM_MAX_LEVELS && !*done; l++) {
    CSRKRcmClaimKernel<CSRK_RCM_LANES><<<CSRKRcmGrid(sms), CSRK_RCM_THREADS, 0, stream>>>(l, lev, order, d->rowptr, d->colidx, claim, csum);
    CSRKRcmCountKernel<CSRK_RCM_LANES><<<CSRKRcmGrid(sms), CSRK_RCM_THREADS, 0, stream>>>(l, lev, order, d->rowptr, d->colidx, claim, cnt, csum);
    CSRKRcmScanKernel<<<1, CSRK_RCM_SCAN_THREADS, 0, stream>>>(l, d->m, lev, csum, st);
    CSRKRcmRestartKernel<<<CSRKRcmGrid(sms), CSRK_RCM_THREADS, 0, stream>>>(d->m, claim, st);
    CSRKRcmPlaceKernel<CSRK_RCM_LANES><<<CSRKRcmGrid(sms), CSRK_RCM_THREADS, 0, stream>>>(l, lev, order, d->rowptr, d->colidx, claim, cnt, csum, st);
    PetscCallCUDA(cudaGetLastError());
    if ((l + 1) % CSRK_RCM_SYNC_LEVELS == 0 || l + 1 == CSRK_RCM_MAX_LEVELS) {
      PetscCall(CSRKReadBack(&end, lev + l + 2, 1, stream));
      *done = (PetscBool)(end == d->m);
    }
  }
  if (*done) {
    /* the levels: the first whose end is m (the last few queued after it are empty) */
    int h[CSRK_RCM_SYNC_LEVELS + 2];
    int first = PetscMax(0, l - CSRK_RCM_SYNC_LEVELS);

    PetscCall(CSRKReadBack(h, lev + first + 1, l + 1 - first, stream));
    for (int i = 0; i < l + 1 - first; i++)
      if (h[i] == d->m) {
        *nlevels = first + i + 1;
        break;
      }
  }
  CSRKScratchFree(claim, stream);
  CSRKScratchFree(cnt, stream);
  CSRKScratchFree(csum, stream);
  CSRKScratchFree(lev, stream);
  CSRKScratchFree(st, stream);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* CSRKReorderBuild - d's CSR arrays (the block's, in the user's ordering) replaced by those of the layout in RCM order
   (sortlen: rows sorted by length inside windows of CSRK_RCM_SORT_ROWS), with the permutation and the work vectors of
   the products; *done false (d unchanged) where the order was given up */
PetscErrorCode CSRKReorderBuild(Mat A, CSRKDevice *d, PetscBool sortlen, PetscBool *done, size_t *bytes, cudaStream_t stream)
{
  CSRKIdx     *order, *iperm, *len, *pcol;
  PetscScalar *pval;
  PetscInt     nlevels = 0;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(MAT_CSRKOrder, A, 0, 0, 0));
  PetscCall(CSRKScratch(&order, d->m, stream));
  PetscCall(CSRKRcmLevels(d, order, &nlevels, done, stream));
  if (!*done) {
    CSRKScratchFree(order, stream);
    PetscCall(PetscLogEventEnd(MAT_CSRKOrder, A, 0, 0, 0));
    PetscCall(PetscInfo(A, "GPU plan: no RCM order within %d levels: the user's ordering\n", CSRK_RCM_MAX_LEVELS));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* the order's indices in one allocation and its work vectors in another (CSRKReorderFree): an allocation costs more
     than a pass over these arrays */
  PetscCall(CSRKMalloc(&d->perm, 3 * d->m + 1, bytes));
  d->pstart = d->perm + d->m;
  d->prow   = d->pstart + d->m;
  PetscCall(CSRKMalloc(&d->xp, 2 * d->m, bytes));
  d->yp = d->xp + d->m;
  PetscCall(CSRKScratch(&iperm, d->m, stream));
  PetscCall(CSRKScratch(&len, d->m + 1, stream));
  CSRKRcmReverseKernel<<<CSRKGrid(d->m), 256, 0, stream>>>(d->m, order, d->perm);
  PetscCallCUDA(cudaGetLastError());
  if (sortlen) {
    CSRKULL *key, *skey;

    PetscCall(CSRKScratch(&key, d->m, stream));
    PetscCall(CSRKScratch(&skey, d->m, stream));
    CSRKRcmLengthKeyKernel<<<CSRKGrid(d->m), 256, 0, stream>>>(d->m, d->perm, d->rowptr, key);
    PetscCallCUDA(cudaGetLastError());
    PetscCall(CSRKSortPairs(key, skey, d->perm, order, d->m, 64, stream));
    PetscCallCUDA(cudaMemcpyAsync(d->perm, order, sizeof(CSRKIdx) * (size_t)d->m, cudaMemcpyDeviceToDevice, stream));
    CSRKScratchFree(key, stream);
    CSRKScratchFree(skey, stream);
  }
  CSRKRcmRowsOfPermKernel<<<CSRKGrid(d->m), 256, 0, stream>>>(d->m, d->perm, d->rowptr, iperm, d->pstart, len);
  PetscCallCUDA(cudaGetLastError());
  PetscCall(CSRKExclusiveSum(len, d->prow, d->m + 1, stream));
  PetscCall(CSRKMalloc(&pcol, d->nnz, NULL)); /* in place of the block's, the same sizes */
  PetscCall(CSRKMalloc(&pval, d->nnz, NULL));
  CSRKRcmRowsKernel<<<CSRKGrid(32 * d->m), 256, 0, stream>>>(d->m, d->prow, d->pstart, iperm, d->colidx, d->val, pcol, pval);
  PetscCallCUDA(cudaGetLastError());
  /* the layout's arrays in place of the block's; its row pointers copied, since a variant may free d->rowptr */
  PetscCallCUDA(cudaMemcpyAsync(d->rowptr, d->prow, sizeof(CSRKIdx) * ((size_t)d->m + 1), cudaMemcpyDeviceToDevice, stream));
  CSRKCudaFree(d->colidx);
  CSRKCudaFree(d->val);
  d->colidx = pcol;
  d->val    = pval;
  CSRKScratchFree(iperm, stream);
  CSRKScratchFree(len, stream);
  CSRKScratchFree(order, stream);
  d->nlevels = nlevels;
  PetscCallCUDA(cudaStreamSynchronize(stream)); /* the event times the order's kernels, not their launches */
  PetscCall(PetscLogEventEnd(MAT_CSRKOrder, A, 0, 0, 0));
  PetscCall(PetscInfo(A, "GPU plan: RCM order of %" PetscInt_FMT " rows found on the device, %" PetscInt_FMT " levels from %" PetscInt_FMT " seeds%s\n", d->m, nlevels, PetscMax(1, d->m / CSRK_RCM_ROWS_PER_SEED), sortlen ? ", rows sorted by length in windows of 1024" : ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* CSRKReorderArrays - the layout's columns and values (either NULL) from the block's, uploaded in the user's ordering */
PetscErrorCode CSRKReorderArrays(const CSRKDevice *d, const CSRKIdx *colidx, const PetscScalar *val, CSRKIdx *pcol, PetscScalar *pval, cudaStream_t stream)
{
  CSRKIdx *iperm = NULL;

  PetscFunctionBegin;
  if (!d->nnz) PetscFunctionReturn(PETSC_SUCCESS);
  if (pcol) {
    PetscCall(CSRKScratch(&iperm, d->m, stream));
    CSRKInverseKernel<<<CSRKGrid(d->m), 256, 0, stream>>>(d->m, d->perm, iperm);
    PetscCallCUDA(cudaGetLastError());
  }
  CSRKRcmRowsKernel<<<CSRKGrid(32 * d->m), 256, 0, stream>>>(d->m, d->prow, d->pstart, iperm, colidx, val, pcol, pval);
  PetscCallCUDA(cudaGetLastError());
  CSRKScratchFree(iperm, stream);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* CSRKReorderIn - x in the layout's order, in d->xp */
PetscErrorCode CSRKReorderIn(const CSRKDevice *d, const PetscScalar *x, cudaStream_t stream)
{
  PetscFunctionBegin;
  PetscCall(MatCSRKCUDAGather(d->m, d->perm, x, d->xp, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* CSRKReorderOut - y = yp (+ z) in the user's ordering */
PetscErrorCode CSRKReorderOut(const CSRKDevice *d, const PetscScalar *yp, const PetscScalar *z, PetscScalar *y, cudaStream_t stream)
{
  PetscFunctionBegin;
  if (!d->m) PetscFunctionReturn(PETSC_SUCCESS);
  CSRKRcmScatterKernel<<<CSRKGrid(d->m), 256, 0, stream>>>(d->m, d->perm, yp, z, y);
  PetscCallCUDA(cudaGetLastError());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* CSRKReorderFree - the arrays of the order */
PetscErrorCode CSRKReorderFree(CSRKDevice *d)
{
  PetscFunctionBegin;
  CSRKCudaFree(d->perm); /* pstart and prow with it */
  CSRKCudaFree(d->xp);   /* yp with it */
  d->pstart = d->prow = NULL;
  d->yp               = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}
