/*
   The block kernel of MATCSRKCUDA (an entry of the plan, csrkcudaplan.cu; docs/design.md, "GPU block kernel"): nodes
   of up to CSRK_BLOCK_NODE_MAX consecutive rows with one column list (AIJ's inodes), ONE column index per node entry
   (a 16-bit offset from the node's smallest column where every node spans fewer than 65536 columns, else 32-bit), the
   values in CSR order (node-major, row-major inside a node), so that a refresh is the plain upload of the CSR kernels
   and every load of a sub-warp (a node) is coalesced. Nodes are found on the device from the uploaded CSR arrays (a
   row starts a run where its column list differs from the previous row's); the plan then frees the CSR columns and row
   pointers. The h sums of a node are reduced with shuffles in a fixed order, so the results are the same run to run.
*/
#include "../csrkimpl.h"
#include "csrkcuda.h"
#include "csrkcudautil.cuh"
#include "csrkcudablock.cuh"

/* auto: the share of the rows that must lie in nodes of two or more rows */
#define CSRK_BLOCK_MIN_NODE_ROWS 0.75

/* the block layout (d->data): the first row, column entry and value of each node (CSR order: the node's rows one after
   the other), the node's columns as 32-bit or as 16-bit offsets from its base column */
typedef struct {
  CSRKIdx   *nodeptr, *colptr, *valptr, *base, *col;
  uint16_t  *off;
  PetscInt   nnodes, noderows, colent; /* nodes, rows in nodes of two or more, column entries */
  PetscInt64 span;                     /* the widest column range of a node (max - min column) */
} CSRKBlock;

/* the nodes of d's rows (from its CSR arrays on the device) into b->nodeptr, nodecolptr, nodevalptr, nodebase, with
   their counts; nothing is counted in d's bytes until CSRKBlockSetUp() keeps them */
static PetscErrorCode CSRKBlockFindNodes(CSRKDevice *d, cudaStream_t stream)
{
  const PetscInt  m = d->m;
  CSRKIdx        *head, *runid, *runstart, *nhead, *nid, nn = 0, ncolent = 0;
  CSRKBlockStats *dst, st = {0, 0};
  CSRKBlock      *b;

  PetscFunctionBegin;
  PetscCall(PetscNew(&b));
  d->data = b;
  PetscCall(CSRKScratch(&head, 5 * ((PetscInt64)m + 1), stream));
  runid    = head + (m + 1);
  runstart = runid + (m + 1);
  nhead    = runstart + (m + 1);
  nid      = nhead + (m + 1);
  CSRKBlockHeadKernel<<<CSRKGrid(m + 1), 256, 0, stream>>>(m, d->rowptr, d->colidx, head);
  PetscCallCUDA(cudaGetLastError());
  PetscCall(CSRKExclusiveSum(head, runid, m + 1, stream));
  CSRKBlockRunStartKernel<<<CSRKGrid(m + 1), 256, 0, stream>>>(m, head, runid, runstart);
  PetscCallCUDA(cudaGetLastError());
  CSRKBlockNodeHeadKernel<<<CSRKGrid(m + 1), 256, 0, stream>>>(m, head, runid, runstart, nhead);
  PetscCallCUDA(cudaGetLastError());
  PetscCall(CSRKExclusiveSum(nhead, nid, m + 1, stream));
  PetscCall(CSRKReadBack(&nn, nid + m, 1, stream));
  PetscCall(CSRKMalloc(&b->nodeptr, (PetscInt64)nn + 1, NULL));
  PetscCall(CSRKMalloc(&b->colptr, (PetscInt64)nn + 1, NULL));
  PetscCall(CSRKMalloc(&b->valptr, (PetscInt64)nn + 1, NULL));
  PetscCall(CSRKMalloc(&b->base, (PetscInt64)nn + 1, NULL));
  PetscCall(CSRKScratch(&dst, 1, stream));
  PetscCallCUDA(cudaMemsetAsync(dst, 0, sizeof(*dst), stream));
  if (!m) {
    /* no rows: the sentinels only */
    PetscCallCUDA(cudaMemsetAsync(b->nodeptr, 0, sizeof(CSRKIdx), stream));
    PetscCallCUDA(cudaMemsetAsync(b->colptr, 0, sizeof(CSRKIdx), stream));
    PetscCallCUDA(cudaMemsetAsync(b->valptr, 0, sizeof(CSRKIdx), stream));
    PetscCallCUDA(cudaMemsetAsync(b->base, 0, sizeof(CSRKIdx), stream));
  } else {
    CSRKBlockNodesKernel<<<CSRKGrid(m), 256, 0, stream>>>(m, d->nnz, nn, d->rowptr, d->colidx, nhead, nid, b->nodeptr, b->colptr, b->valptr, b->base, dst);
    PetscCallCUDA(cudaGetLastError());
    PetscCall(CSRKExclusiveSum(b->colptr, b->colptr, (PetscInt)nn + 1, stream));
  }
  PetscCall(CSRKReadBack(&ncolent, b->colptr + nn, 1, stream));
  PetscCall(CSRKReadBack(&st, dst, 1, stream));
  CSRKScratchFree(dst, stream);
  CSRKScratchFree(head, stream);
  b->nnodes   = nn;
  b->colent   = ncolent;
  b->noderows = st.noderows;
  b->span     = (PetscInt64)st.span;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* device memory of the block layout of d: values, node columns (16-bit offsets or 32-bit), the node arrays */
static size_t CSRKBlockBytes(const CSRKDevice *d, PetscBool offsets)
{
  const CSRKBlock *b = (const CSRKBlock *)d->data;

  return sizeof(PetscScalar) * (size_t)PetscMax(d->nnz, 1) + (offsets ? sizeof(uint16_t) : sizeof(CSRKIdx)) * (size_t)PetscMax(b->colent, 1) + (offsets ? 4 : 3) * sizeof(CSRKIdx) * (size_t)(b->nnodes + 1);
}

/* The block layout from the nodes: the node columns, the launch shape (the kernel reads the CSR values only).
   Auto takes it where the rows have no row patterns, most rows are non-empty, none is a long row (a node is
   one sub-warp's), at least CSRK_BLOCK_MIN_NODE_ROWS of the rows lie in nodes of two or more rows, the layout
   takes less device memory than the CSR arrays (aijcusparse's), and the sliced kernel does not take the rows of a
   block of CSRK_GPU_SLICES_MIN_ROWS_PER_SM rows a multiprocessor or more */
static PetscErrorCode CSRKBlockSetUp(Mat A, CSRKDevice *d, const MatCSRKOptions *opt, CSRKPlanStats *st, size_t *bytes, cudaStream_t stream)
{
  const size_t    csrbytes = (sizeof(PetscScalar) + sizeof(CSRKIdx)) * (size_t)PetscMax(d->nnz, 1) + sizeof(CSRKIdx) * ((size_t)d->m + 1);
  PetscBool       offsets;
  PetscReal       lbar;
  PetscInt        w = opt->sr_size;
  CSRKBlock      *b;

  PetscFunctionBegin;
  if (!st->forced && (st->npat || 2 * d->nonzerorows <= d->m || CSRKLongRowLength(d->mean, d->maxlen) != CSRK_IDX_MAX || (st->slicedtake && d->m >= (PetscInt64)CSRK_GPU_SLICES_MIN_ROWS_PER_SM * st->sms))) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CSRKBlockFindNodes(d, stream));
  b       = (CSRKBlock *)d->data;
  offsets = (PetscBool)(opt->feature[MAT_CSRK_COMPRESS_INDICES] && b->span < 65536);
  if (!st->forced && !((PetscReal)b->noderows >= CSRK_BLOCK_MIN_NODE_ROWS * d->m && CSRKBlockBytes(d, offsets) < csrbytes)) {
    PetscCall(PetscInfo(A, "Block kernel not taken: %" PetscInt_FMT " of %" PetscInt_FMT " rows in nodes of two or more (%g %% needed), %g MB against %g MB of CSR arrays\n", b->noderows, d->m, 100.0 * CSRK_BLOCK_MIN_NODE_ROWS, CSRKBlockBytes(d, offsets) / 1048576.0, csrbytes / 1048576.0));
    PetscCall(CSRKLayoutFree(&CSRKVariantBlock, d));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  lbar = b->nnodes ? (PetscReal)b->colent / b->nnodes : 0;
  if (offsets) {
    PetscCall(CSRKMalloc(&b->off, b->colent, bytes));
    CSRKBlockColumnsKernel<uint16_t><<<CSRKGrid(b->nnodes), 256, 0, stream>>>(b->nnodes, b->colptr, b->valptr, b->base, d->colidx, b->off);
  } else {
    CSRKCudaFree(b->base);
    PetscCall(CSRKMalloc(&b->col, b->colent, bytes));
    CSRKBlockColumnsKernel<CSRKIdx><<<CSRKGrid(b->nnodes), 256, 0, stream>>>(b->nnodes, b->colptr, b->valptr, NULL, d->colidx, b->col);
  }
  PetscCallCUDA(cudaGetLastError());
  *bytes += (offsets ? 4 : 3) * sizeof(CSRKIdx) * (size_t)(b->nnodes + 1);
  d->kernel = MAT_CSRK_CUDA_KERNEL_BLOCK;
  /* lanes per node from the mean columns per node (a few columns per lane, so that a warp holds several nodes and
     the tail of a node idles few lanes); -mat_csrk_sr_size sets them */
  d->width = lbar <= 16 ? 4 : lbar <= 64 ? 8 : lbar <= 128 ? 16 : 32;
  if (w >= 2 && w <= 32 && !(w & (w - 1))) d->width = w;
  d->bx     = CSRK_BLOCK_THREADS;
  d->by = d->bz = 1;
  d->sr     = CSRK_BLOCK_NODE_MAX;
  d->nsr    = b->nnodes;
  d->ssr    = CSRK_BLOCK_THREADS / d->width;
  d->nunits = (b->nnodes + d->ssr - 1) / d->ssr;
  PetscCall(PetscInfo(A, "Block kernel: %" PetscInt_FMT " nodes of up to %d rows (%" PetscInt_FMT " rows in nodes of two or more), %" PetscInt_FMT " column entries (%g per node) as %s, %" PetscInt_FMT " lanes per node\n", b->nnodes, CSRK_BLOCK_NODE_MAX, b->noderows, b->colent, (double)lbar, offsets ? "16-bit offsets from each node's base" : "32-bit columns", d->width));
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <int W>
static void CSRKBlockLaunch(const CSRKDevice *d, const PetscScalar *x, const PetscScalar *z, PetscScalar *y, cudaStream_t stream)
{
  const CSRKBlock *b    = (const CSRKBlock *)d->data;
  const unsigned   grid = (unsigned)PetscMax(1, d->nunits);
  if (b->off) CSRKBlockKernel<W, uint16_t><<<grid, CSRK_BLOCK_THREADS, 0, stream>>>(b->nnodes, b->nodeptr, b->colptr, b->valptr, b->base, b->off, d->val, x, z, y);
  else CSRKBlockKernel<W, CSRKIdx><<<grid, CSRK_BLOCK_THREADS, 0, stream>>>(b->nnodes, b->nodeptr, b->colptr, b->valptr, NULL, b->col, d->val, x, z, y);
}

/* y = A x (+ z) with the block kernel */
static PetscErrorCode CSRKBlockMult(const CSRKDevice *d, const PetscScalar *x, const PetscScalar *z, PetscScalar *y, cudaStream_t stream)
{
  const CSRKBlock *b = (const CSRKBlock *)d->data;

  PetscFunctionBegin;
  if (!b->nnodes) PetscFunctionReturn(PETSC_SUCCESS);
  (d->width == 2 ? CSRKBlockLaunch<2> : d->width == 4 ? CSRKBlockLaunch<4> : d->width == 8 ? CSRKBlockLaunch<8> : d->width == 16 ? CSRKBlockLaunch<16> : CSRKBlockLaunch<32>)(d, x, z, y, stream);
  PetscCallCUDA(cudaGetLastError());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* v = diag(A) (shift false), or diag(A) += a (shift true), over the block layout */
static PetscErrorCode CSRKBlockDiagonal(CSRKDevice *d, PetscBool shift, PetscScalar a, PetscScalar *v, cudaStream_t stream)
{
  const CSRKBlock *b = (const CSRKBlock *)d->data;

  PetscFunctionBegin;
  if (!b->nnodes) PetscFunctionReturn(PETSC_SUCCESS);
  if (b->off) (shift ? CSRKBlockDiagonalKernel<true, uint16_t> : CSRKBlockDiagonalKernel<false, uint16_t>)<<<CSRKGrid(b->nnodes), 256, 0, stream>>>(b->nnodes, b->nodeptr, b->colptr, b->valptr, b->base, b->off, d->val, v, a);
  else (shift ? CSRKBlockDiagonalKernel<true, CSRKIdx> : CSRKBlockDiagonalKernel<false, CSRKIdx>)<<<CSRKGrid(b->nnodes), 256, 0, stream>>>(b->nnodes, b->nodeptr, b->colptr, b->valptr, NULL, b->col, d->val, v, a);
  PetscCallCUDA(cudaGetLastError());
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void CSRKBlockView(const CSRKDevice *d, char *buf, size_t len)
{
  const CSRKBlock *b = (const CSRKBlock *)d->data;

  snprintf(buf, len, "%" PetscInt_FMT " nodes of up to %d rows with one column list (%" PetscInt_FMT " rows in nodes of two or more), a column index per node entry as %s, %" PetscInt_FMT " lanes per node", b->nnodes, CSRK_BLOCK_NODE_MAX, b->noderows, b->off ? "16-bit offsets" : "32-bit columns", d->width);
}

const CSRKVariant CSRKVariantBlock = {MAT_CSRK_CUDA_KERNEL_BLOCK, CSRK_CSR_VAL, CSRKBlockSetUp, NULL, CSRKBlockMult, CSRKBlockDiagonal, NULL, CSRKBlockView, {offsetof(CSRKBlock, nodeptr), offsetof(CSRKBlock, colptr), offsetof(CSRKBlock, valptr), offsetof(CSRKBlock, base), offsetof(CSRKBlock, col), offsetof(CSRKBlock, off)}};
