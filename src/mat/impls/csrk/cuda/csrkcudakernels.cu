/*
   The row kernels of MATCSRKCUDA (entries of the plan, csrkcudaplan.cu) over the CSR arrays and a launch grouping of
   super-rows (sr rows) into units (ssr super-rows, a thread block each; one super-row at k < 3): scalar (GPUSpMV-3, a
   thread per row), vector (GPUSpMV-3.5, a sub-warp of w lanes per row), stream (a unit's products formed with coalesced
   loads in shared memory, then a thread per row sums them); rows far longer than the mean cut into chunks of 4096
   entries, a block each; blocks of mostly empty rows run over the non-empty rows. Every reduction has a fixed order,
   so results are bitwise reproducible run to run.
*/
#include "../csrkimpl.h"
#include "csrkcuda.h"
#include "csrkcudautil.cuh"

#define CSRK_LONG_BLOCK                256
#define CSRK_COMPRESSED_ROWS_PER_BLOCK 128
#define CSRK_STREAM_BATCH              4
#define CSRK_VECTOR_THREADS            128 /* threads a block of the vector and scalar kernels */
#define CSRK_VECTOR_UNIT               16  /* rows a block of the vector kernel under auto: a row per sub-warp */

/* what the row kernels keep beside the launch grouping (d->data): the rows longer than longlen, cut into chunks
   [longrowchunk[i], longrowchunk[i + 1]) of long row i, chunk c over entries [longchunkq[2c], longchunkq[2c + 1]) with
   its partial sum in longpart[c]; and, for blocks of mostly empty rows (the off-process block of an MPI matrix), the
   nc non-empty rows crows, whose entries start at crowptr, grouped in cnunits units */
typedef struct {
  CSRKIdx      longlen, *longrows, *longrowchunk, *longchunkq;
  PetscScalar *longpart;
  PetscInt     nlong, nlongchunks;
  size_t       smem; /* dynamic shared memory of the stream kernel */
  CSRKIdx     *crows, *crowptr;
  PetscInt     nc, cnunits, cwidth;
} CSRKRows;

/* GPUSpMV-3: thread per row */
__global__ void CSRKScalarKernel(const CSRKGroups g, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ colidx, const PetscScalar *__restrict__ val, const CSRKIdx *__restrict__ perm, CSRKIdx longlen, const PetscScalar *__restrict__ x, const PetscScalar *__restrict__ z, PetscScalar *__restrict__ y)
{
  CSRKIdx s0, s1, r0, r1;
  CSRKUnitSuperRows(g, blockIdx.x, &s0, &s1);
  for (CSRKIdx s = s0 + threadIdx.y; s < s1; s += blockDim.y) {
    CSRKSuperRowRows(g, s, &r0, &r1);
    for (CSRKIdx r = r0 + threadIdx.x; r < r1; r += blockDim.x) {
      const CSRKIdx q0 = rowptr[r], q1 = rowptr[r + 1];
      if (q1 - q0 > longlen) continue;
      CSRKStore(r, perm, z, y, CSRKRowLanePart<1>(val, colidx, x, q0, q1, 0));
    }
  }
}

/* GPUSpMV-3.5: a sub-warp of W lanes per row. The shuffles only involve the W lanes of one row, which all take
   the same path through the loops, so the partial mask is exact on Volta and later. */
template <int W>
__global__ void CSRKVectorKernel(const CSRKGroups g, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ colidx, const PetscScalar *__restrict__ val, const CSRKIdx *__restrict__ perm, CSRKIdx longlen, const PetscScalar *__restrict__ x, const PetscScalar *__restrict__ z, PetscScalar *__restrict__ y)
{
  const unsigned lane = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u;
  const unsigned mask = (W == 32 ? 0xffffffffu : ((1u << W) - 1u) << (lane & ~(unsigned)(W - 1)));
  CSRKIdx        s0, s1, r0, r1;
  CSRKUnitSuperRows(g, blockIdx.x, &s0, &s1);
  for (CSRKIdx s = s0 + threadIdx.z; s < s1; s += blockDim.z) {
    CSRKSuperRowRows(g, s, &r0, &r1);
    for (CSRKIdx r = r0 + threadIdx.y; r < r1; r += blockDim.y) {
      const CSRKIdx q0 = rowptr[r], q1 = rowptr[r + 1];
      if (q1 - q0 > longlen) continue; /* the same for the W lanes of the row */
      PetscScalar sum = CSRKRowLanePart<W>(val, colidx, x, q0, q1, threadIdx.x);
#pragma unroll
      for (int d = W / 2; d > 0; d >>= 1) sum += CSRKShfl<false>(mask, sum, d, W);
      if (threadIdx.x == 0) CSRKStore(r, perm, z, y, sum);
    }
  }
}

/* Stream kernel for regular rows of moderate length: the block's super-super-row is contiguous in the CSR arrays, so
   its products val[q] * x[col[q]] are formed with fully coalesced loads into shared memory, then each thread sums
   one row from there in order (deterministic). It avoids the idle lanes a fixed sub-warp leaves on rows of, e.g.,
   27 entries, and the uncoalesced loads of a thread per row. A thread loads CSRK_STREAM_BATCH values and columns
   before it gathers x, so that a batch costs two memory round trips, as in the sliced kernels. */
__global__ void CSRKStreamKernel(const CSRKGroups g, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ colidx, const PetscScalar *__restrict__ val, const CSRKIdx *__restrict__ perm, CSRKIdx longlen, const PetscScalar *__restrict__ x, const PetscScalar *__restrict__ z, PetscScalar *__restrict__ y)
{
  extern __shared__ unsigned char csrk_smem[];
  PetscScalar  *prod = (PetscScalar *)csrk_smem;
  const CSRKIdx r0 = (CSRKIdx)blockIdx.x * g.ssr * g.sr, r1 = min(r0 + g.ssr * g.sr, g.m), q0 = rowptr[r0], q1 = rowptr[r1];
  const unsigned nt = blockDim.x;
  for (CSRKIdx q = q0 + threadIdx.x; q < q1; q += CSRK_STREAM_BATCH * nt) {
    PetscScalar a[CSRK_STREAM_BATCH];
    CSRKIdx     c[CSRK_STREAM_BATCH];
#pragma unroll
    for (int k = 0; k < CSRK_STREAM_BATCH; k++)
      if (q + k * nt < q1) {
        a[k] = CSRKLoadStreamed(val + q + k * nt);
        c[k] = __ldcs(colidx + q + k * nt);
      }
#pragma unroll
    for (int k = 0; k < CSRK_STREAM_BATCH; k++)
      if (q + k * nt < q1) prod[q + k * nt - q0] = a[k] * x[c[k]];
  }
  __syncthreads();
  for (CSRKIdx r = r0 + threadIdx.x; r < r1; r += nt) {
    const CSRKIdx a = rowptr[r] - q0, b = rowptr[r + 1] - q0;
    PetscScalar   sum = 0.0;
    if (b - a > longlen) continue;
    for (CSRKIdx q = a; q < b; q++) sum += prod[q];
    CSRKStore(r, perm, z, y, sum);
  }
}

/* Long rows are cut into chunks of CSRK_LONG_CHUNK entries, a block per chunk (so that one row of a million entries
   is spread over the whole GPU): warp shuffles, then a fixed-order sum of the warp results into part[c]. A second
   kernel adds the chunks of each row in order, so the result does not depend on the scheduling. */
__global__ void CSRKLongChunkKernel(const CSRKIdx *__restrict__ chunkq, const CSRKIdx *__restrict__ colidx, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, PetscScalar *__restrict__ part)
{
  __shared__ PetscScalar warpsum[CSRK_LONG_BLOCK / 32];
  const CSRKIdx          q0 = chunkq[2 * blockIdx.x], q1 = chunkq[2 * blockIdx.x + 1];
  PetscScalar            sum = CSRKRowLanePart<CSRK_LONG_BLOCK>(val, colidx, x, q0, q1, threadIdx.x);
  for (int d = 16; d > 0; d >>= 1) sum += CSRKShfl<false>(0xffffffffu, sum, d, 32);
  if ((threadIdx.x & 31) == 0) warpsum[threadIdx.x >> 5] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    PetscScalar total = 0.0;
    for (int w = 0; w < CSRK_LONG_BLOCK / 32; w++) total += warpsum[w];
    part[blockIdx.x] = total;
  }
}

__global__ void CSRKLongSumKernel(PetscInt nlong, const CSRKIdx *__restrict__ rows, const CSRKIdx *__restrict__ rowchunk, const PetscScalar *__restrict__ part, const CSRKIdx *__restrict__ perm, const PetscScalar *__restrict__ z, PetscScalar *__restrict__ y)
{
  for (PetscInt i = blockIdx.x * (PetscInt)blockDim.x + threadIdx.x; i < nlong; i += (PetscInt)blockDim.x * gridDim.x) {
    PetscScalar total = 0.0;
    for (CSRKIdx c = rowchunk[i]; c < rowchunk[i + 1]; c++) total += part[c];
    CSRKStore(rows[i], perm, z, y, total);
  }
}

/* y = diag(A), or diag(A) += a (SHIFT): a scan of each CSR row for its diagonal column */
template <bool SHIFT>
__global__ void CSRKDiagonalKernel(PetscInt m, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ colidx, PetscScalar *__restrict__ val, PetscScalar *__restrict__ y, PetscScalar a)
{
  for (PetscInt i = blockIdx.x * (PetscInt)blockDim.x + threadIdx.x; i < m; i += (PetscInt)blockDim.x * gridDim.x) {
    PetscScalar v = 0.0;
    for (CSRKIdx q = rowptr[i]; q < rowptr[i + 1]; q++)
      if (colidx[q] == (CSRKIdx)i) {
        if (SHIFT) val[q] += a;
        else v = val[q];
        break;
      }
    if (!SHIFT) y[i] = v;
  }
}

/* flag[r] = 1 for rows longer than minlen (entry m: 0, for the scan) */
__global__ void CSRKRowFlagKernel(PetscInt64 m, const CSRKIdx *__restrict__ rowptr, CSRKIdx minlen, CSRKIdx *__restrict__ flag)
{
  CSRK_GRIDSTRIDE(r, m + 1) flag[r] = r < m && rowptr[r + 1] - rowptr[r] > minlen ? 1 : 0;
}

/* rows[pos[r]] = r for the flagged rows (pos: exclusive sum of the flags) and their first entries */
__global__ void CSRKRowCompactKernel(PetscInt64 m, const CSRKIdx *__restrict__ rowptr, CSRKIdx minlen, const CSRKIdx *__restrict__ pos, CSRKIdx *__restrict__ rows, CSRKIdx *__restrict__ rowstart)
{
  CSRK_GRIDSTRIDE(r, m)
  {
    if (rowptr[r + 1] - rowptr[r] > minlen) {
      rows[pos[r]] = (CSRKIdx)r;
      if (rowstart) rowstart[pos[r]] = rowptr[r];
    }
  }
}

/* chunks of each long row (entry nlong: 0, for the scan), then the entry range of each chunk */
__global__ void CSRKLongCountKernel(PetscInt64 nlong, const CSRKIdx *__restrict__ rows, const CSRKIdx *__restrict__ rowptr, CSRKIdx *__restrict__ cnt)
{
  CSRK_GRIDSTRIDE(i, nlong + 1) cnt[i] = i < nlong ? (rowptr[rows[i] + 1] - rowptr[rows[i]] + CSRK_LONG_CHUNK - 1) / CSRK_LONG_CHUNK : 0;
}

__global__ void CSRKLongChunksKernel(PetscInt64 nlong, const CSRKIdx *__restrict__ rows, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ rowchunk, CSRKIdx *__restrict__ chunkq)
{
  CSRK_GRIDSTRIDE(i, nlong)
  {
    CSRKIdx q = rowptr[rows[i]];
    for (CSRKIdx c = rowchunk[i]; c < rowchunk[i + 1]; c++, q += CSRK_LONG_CHUNK) {
      chunkq[2 * c]     = q;
      chunkq[2 * c + 1] = min(q + CSRK_LONG_CHUNK, rowptr[rows[i] + 1]);
    }
  }
}

/* The kernels over the uniform grouping of d's sizes over m rows, d->nunits units; perm: the row each grouped row
   stands for (the compressed rows), or NULL */
static PetscErrorCode CSRKLaunch(const CSRKDevice *d, PetscInt m, const CSRKIdx *rowptr, const CSRKIdx *perm, const PetscScalar *x, const PetscScalar *z, PetscScalar *y, cudaStream_t stream)
{
  const CSRKGroups   g      = {(CSRKIdx)m, (CSRKIdx)d->sr, (CSRKIdx)d->ssr};
  const CSRKRows    *rw     = (const CSRKRows *)d->data;
  const CSRKIdx     *colidx = d->colidx;
  const PetscScalar *val    = d->val;
  const dim3         block(d->bx, d->by, d->bz);
  const PetscBool    st = (PetscBool)(d->kernel == MAT_CSRK_CUDA_KERNEL_STREAM);
  /* the three kernels take the same arguments: the stream kernel, the scalar one, or the vector one of d->width lanes */
  void (*kern)(const CSRKGroups, const CSRKIdx *, const CSRKIdx *, const PetscScalar *, const CSRKIdx *, CSRKIdx, const PetscScalar *, const PetscScalar *, PetscScalar *) = st ? CSRKStreamKernel : d->width == 1 ? CSRKScalarKernel : d->width == 2 ? CSRKVectorKernel<2> : d->width == 4 ? CSRKVectorKernel<4> : d->width == 8 ? CSRKVectorKernel<8> : d->width == 16 ? CSRKVectorKernel<16> : CSRKVectorKernel<32>;

  PetscFunctionBegin;
  if (!d->nunits) PetscFunctionReturn(PETSC_SUCCESS);
  kern<<<(unsigned)d->nunits, block, st ? rw->smem : 0, stream>>>(g, rowptr, colidx, val, perm, rw->longlen, x, z, y);
  PetscCallCUDA(cudaGetLastError());
  if (rw->nlong) {
    CSRKLongChunkKernel<<<(unsigned)rw->nlongchunks, CSRK_LONG_BLOCK, 0, stream>>>(rw->longchunkq, colidx, val, x, rw->longpart);
    PetscCallCUDA(cudaGetLastError());
    CSRKLongSumKernel<<<CSRKGrid(rw->nlong), 256, 0, stream>>>(rw->nlong, rw->longrows, rw->longrowchunk, rw->longpart, perm, z, y);
    PetscCallCUDA(cudaGetLastError());
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the rows of rowptr (m rows) longer than minlen: their numbers (and first entries, if rowstart), their count */
static PetscErrorCode CSRKSelectRows(PetscInt m, const CSRKIdx *rowptr, CSRKIdx minlen, CSRKIdx **rows, CSRKIdx **rowstart, PetscInt *nrows, size_t *bytes, cudaStream_t stream)
{
  CSRKIdx *pos, cnt;

  PetscFunctionBegin;
  PetscCall(CSRKScratch(&pos, (PetscInt64)m + 1, stream));
  CSRKRowFlagKernel<<<CSRKGrid(m + 1), 256, 0, stream>>>(m, rowptr, minlen, pos);
  PetscCallCUDA(cudaGetLastError());
  PetscCall(CSRKExclusiveSum(pos, pos, m + 1, stream));
  PetscCall(CSRKReadBack(&cnt, pos + m, 1, stream));
  *nrows = cnt;
  PetscCall(CSRKMalloc(rows, cnt, bytes));
  if (rowstart) PetscCall(CSRKMalloc(rowstart, (PetscInt64)cnt + 1, bytes));
  CSRKRowCompactKernel<<<CSRKGrid(m), 256, 0, stream>>>(m, rowptr, minlen, pos, *rows, rowstart ? *rowstart : NULL);
  PetscCallCUDA(cudaGetLastError());
  CSRKScratchFree(pos, stream);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The rows of d longer than rw->longlen, cut into chunks of CSRK_LONG_CHUNK entries */
static PetscErrorCode CSRKBuildLongRows(const CSRKDevice *d, CSRKRows *rw, size_t *bytes, cudaStream_t stream)
{
  CSRKIdx *cnt;

  PetscFunctionBegin;
  PetscCall(CSRKSelectRows(d->m, d->rowptr, rw->longlen, &rw->longrows, NULL, &rw->nlong, bytes, stream));
  PetscCall(CSRKMalloc(&rw->longrowchunk, rw->nlong + 1, bytes));
  PetscCall(CSRKScratch(&cnt, rw->nlong + 1, stream));
  CSRKLongCountKernel<<<CSRKGrid(rw->nlong + 1), 256, 0, stream>>>(rw->nlong, rw->longrows, d->rowptr, cnt);
  PetscCallCUDA(cudaGetLastError());
  PetscCall(CSRKExclusiveSum(cnt, rw->longrowchunk, rw->nlong + 1, stream));
  CSRKScratchFree(cnt, stream);
  {
    CSRKIdx nc;
    PetscCall(CSRKReadBack(&nc, rw->longrowchunk + rw->nlong, 1, stream));
    rw->nlongchunks = nc;
  }
  PetscCall(CSRKMalloc(&rw->longchunkq, 2 * rw->nlongchunks, bytes));
  PetscCall(CSRKMalloc(&rw->longpart, rw->nlongchunks, bytes));
  CSRKLongChunksKernel<<<CSRKGrid(rw->nlong), 256, 0, stream>>>(rw->nlong, rw->longrows, d->rowptr, rw->longrowchunk, rw->longchunkq);
  PetscCallCUDA(cudaGetLastError());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Launch grouping over the non-empty rows of a block in which most rows are empty (the off-process block of an MPI
   matrix). The CSR arrays stay as they are: the entries of consecutive non-empty rows are contiguous, so row i of the
   grouping spans [crowptr[i], crowptr[i + 1]) and the kernels write through crows as through a row permutation. */
static PetscErrorCode CSRKBuildCompressed(const CSRKDevice *d, CSRKRows *rw, size_t *bytes, cudaStream_t stream)
{
  PetscFunctionBegin;
  PetscCall(CSRKSelectRows(d->m, d->rowptr, 0, &rw->crows, &rw->crowptr, &rw->nc, bytes, stream));
  {
    const CSRKIdx nnz = (CSRKIdx)d->nnz;
    PetscCallCUDA(cudaMemcpyAsync(rw->crowptr + rw->nc, &nnz, sizeof(CSRKIdx), cudaMemcpyHostToDevice, stream));
    PetscCallCUDA(cudaStreamSynchronize(stream)); /* nnz lives on the host stack */
  }
  rw->cwidth = rw->nc ? CSRKVectorWidth((PetscReal)d->nnz / rw->nc) : 1;
  rw->cnunits = (rw->nc + CSRK_COMPRESSED_ROWS_PER_BLOCK - 1) / CSRK_COMPRESSED_ROWS_PER_BLOCK;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* lanes per row of the vector kernel for a mean row length (a thread per row up to 8 entries; 8 lanes for the rows of
   9-32 entries of unstructured P1 and P2 meshes, where 4 and 16 were slower) */
PetscInt CSRKVectorWidth(PetscReal mean)
{
  return mean <= 8 ? 1 : mean <= 32 ? 8 : mean <= 64 ? 16 : 32;
}

/* CSRKRowsBuild - the row kernels' data of d (d->data): the counts of the grouping of d's sizes, the rows longer than
   longlen and, if compressed, the non-empty rows; the stored transpose is built with it too */
PetscErrorCode CSRKRowsBuild(CSRKDevice *d, PetscInt longlen, PetscBool compressed, size_t smem, size_t *bytes, cudaStream_t stream)
{
  CSRKRows *rw;

  PetscFunctionBegin;
  PetscCall(PetscNew(&rw));
  d->data      = rw;
  rw->longlen  = (CSRKIdx)longlen;
  rw->smem     = smem;
  CSRKGroupCounts(d);
  if (longlen < CSRK_IDX_MAX) PetscCall(CSRKBuildLongRows(d, rw, bytes, stream));
  if (compressed) PetscCall(CSRKBuildCompressed(d, rw, bytes, stream));
  d->ymap = rw->crows ? NULL : d->perm; /* the compressed rows write through their own row list */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* mostly empty rows (the off-process block of an MPI matrix): the products run over the non-empty rows */
static inline PetscBool CSRKRowsCompressed(const CSRKDevice *d)
{
  return (PetscBool)(d->m >= 1024 && 2 * d->nonzerorows <= d->m);
}

/* Under auto the stream kernel takes short rows (8 or fewer on average) that are irregular or that the sliced kernel
   declined, and regular rows of blocks too small to fill the device (st->fill false), where a unit's nonzeros fit in
   shared memory (up to CSRK_STREAM_SMEM_MAX, more than the default 48 KB); on regular rows with the sizes it takes
   when forced (32 rows a unit for rows of 9-32 entries), which the rows of irregular blocks do not */
static PetscErrorCode CSRKStreamSetUp(Mat A, CSRKDevice *d, const MatCSRKOptions *opt, CSRKPlanStats *st, size_t *bytes, cudaStream_t stream)
{
  PetscBool fits;

  PetscFunctionBegin;
  if (!st->forced && st->sliced) {
    CSRKPlanSizes(d, MAT_CSRK_CUDA_KERNEL_STREAM, opt);
    st->maxu = -1;
  }
  PetscCall(CSRKPlanFits(d, st, &fits, stream));
  if (!st->forced && !(fits && (d->mean <= 8 ? st->cv > CSRK_GPU_SLICED_MAX_CV || st->sliced : st->sliced && !st->fill))) {
    if (st->sliced) CSRKPlanSizes(d, opt->cuda_kernel, opt); /* the auto sizes back, for the vector entry */
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCallCUDA(cudaFuncSetAttribute(CSRKStreamKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, CSRK_STREAM_SMEM_MAX));
  PetscCheck(fits, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "The stream kernel needs the nonzeros of a super-super-row (%" PetscInt_FMT ") in shared memory: use smaller sizes (-mat_csrk_sr_size, -mat_csrk_ssr_size)", st->maxu);
  d->kernel = MAT_CSRK_CUDA_KERNEL_STREAM;
  d->width  = 0;
  d->bx     = 128;
  d->by = d->bz = 1;
  PetscCall(CSRKRowsBuild(d, CSRKLongRowLength(d->mean, d->maxlen), CSRKRowsCompressed(d), (size_t)PetscMax(st->maxu, 1) * sizeof(PetscScalar), bytes, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The vector entry takes what no other variant took under auto, and runs the scalar kernel too (a lane per row, for
   short rows or forced): lanes per row from the mean row length, at least 2 when the vector kernel is forced. A block
   has CSRK_VECTOR_THREADS threads, a sub-warp a row (x: lanes, or rows for the scalar kernel; y: rows of a super-row,
   or super-rows; z: super-rows), and strides over its unit; under auto (no sizes given) a unit is CSRK_VECTOR_UNIT
   rows or the rows in flight if more, in super-rows of 8 */
static PetscErrorCode CSRKVectorSetUp(Mat A, CSRKDevice *d, const MatCSRKOptions *opt, CSRKPlanStats *st, size_t *bytes, cudaStream_t stream)
{
  PetscInt rows;

  PetscFunctionBegin;
  d->width = CSRKVectorWidth(d->mean);
  if (opt->cuda_kernel == MAT_CSRK_CUDA_KERNEL_VECTOR) d->width = PetscMax(2, d->width);
  if (opt->cuda_kernel == MAT_CSRK_CUDA_KERNEL_SCALAR) d->width = 1;
  d->kernel = d->width == 1 ? MAT_CSRK_CUDA_KERNEL_SCALAR : MAT_CSRK_CUDA_KERNEL_VECTOR;
  rows      = CSRK_VECTOR_THREADS / d->width; /* rows in flight */
  if (!st->forced && opt->sr_size <= 0 && opt->ssr_size <= 0) {
    d->sr  = opt->k < 3 ? PetscMax(rows, CSRK_VECTOR_UNIT) : 8;
    d->ssr = opt->k < 3 ? 1 : PetscMax(rows, CSRK_VECTOR_UNIT) / 8;
  }
  if (d->width == 1) {
    d->bx = (unsigned)PetscMin(d->sr, rows);
    d->by = (unsigned)PetscMin(d->ssr, rows / (PetscInt)d->bx);
    d->bz = 1;
  } else {
    d->bx = (unsigned)d->width;
    d->by = (unsigned)PetscMin(d->sr, rows);
    d->bz = (unsigned)PetscMin(d->ssr, PetscMax(1, rows / (PetscInt)d->by));
  }
  PetscCall(CSRKRowsBuild(d, CSRKLongRowLength(d->mean, d->maxlen), CSRKRowsCompressed(d), 0, bytes, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CSRKRowsMult(const CSRKDevice *d, const PetscScalar *x, const PetscScalar *z, PetscScalar *y, cudaStream_t stream)
{
  const CSRKRows *rw = (const CSRKRows *)d->data;

  PetscFunctionBegin;
  if (rw->crows) {
    /* the empty rows get z (or 0), then the non-empty ones add their products in place, with no long rows */
    CSRKDevice c  = *d;
    CSRKRows   cr = *rw;
    if (!z) PetscCallCUDA(cudaMemsetAsync(y, 0, sizeof(PetscScalar) * d->m, stream));
    else if (z != y) PetscCallCUDA(cudaMemcpyAsync(y, z, sizeof(PetscScalar) * d->m, cudaMemcpyDeviceToDevice, stream));
    c.kernel   = rw->cwidth == 1 ? MAT_CSRK_CUDA_KERNEL_SCALAR : MAT_CSRK_CUDA_KERNEL_VECTOR;
    c.width    = rw->cwidth;
    c.bx       = rw->cwidth == 1 ? 128 : (unsigned)rw->cwidth;
    c.by       = rw->cwidth == 1 ? 1 : (unsigned)PetscMax(1, 256 / rw->cwidth);
    c.bz       = 1;
    c.nunits   = rw->cnunits;
    c.sr       = CSRK_COMPRESSED_ROWS_PER_BLOCK;
    c.ssr      = 1;
    c.data     = &cr;
    cr.nlong   = 0;
    cr.longlen = CSRK_IDX_MAX;
    PetscCall(CSRKLaunch(&c, rw->nc, rw->crowptr, rw->crows, x, y, y, stream));
  } else PetscCall(CSRKLaunch(d, d->m, d->rowptr, d->ymap, x, z, y, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = diag(A), or diag(A) += a: a scan of each CSR row (also the merge kernel's and the transpose's) */
PetscErrorCode CSRKDiagonalCSR(CSRKDevice *d, PetscBool shift, PetscScalar a, PetscScalar *v, cudaStream_t stream)
{
  PetscFunctionBegin;
  (shift ? CSRKDiagonalKernel<true> : CSRKDiagonalKernel<false>)<<<CSRKGrid(d->m), 256, 0, stream>>>(d->m, d->rowptr, d->colidx, d->val, v, a);
  PetscCallCUDA(cudaGetLastError());
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void CSRKRowsView(const CSRKDevice *d, char *buf, size_t len)
{
  const CSRKRows *rw = (const CSRKRows *)d->data;

  if (d->kernel == MAT_CSRK_CUDA_KERNEL_STREAM) snprintf(buf, len, "CSR arrays, a unit's products in shared memory, %" PetscInt_FMT " long rows", rw->nlong);
  else snprintf(buf, len, "CSR arrays, %" PetscInt_FMT " lanes per row, %" PetscInt_FMT " long rows, over %" PetscInt_FMT " of the %" PetscInt_FMT " rows", d->width, rw->nlong, rw->crows ? rw->nc : d->m, d->m);
}

const CSRKVariant CSRKVariantStream = {MAT_CSRK_CUDA_KERNEL_STREAM, CSRK_CSR_ALL, CSRKStreamSetUp, NULL, CSRKRowsMult, CSRKDiagonalCSR, NULL, CSRKRowsView, {offsetof(CSRKRows, longrows), offsetof(CSRKRows, longrowchunk), offsetof(CSRKRows, longchunkq), offsetof(CSRKRows, longpart), offsetof(CSRKRows, crows), offsetof(CSRKRows, crowptr)}};
const CSRKVariant CSRKVariantVector = {MAT_CSRK_CUDA_KERNEL_VECTOR, CSRK_CSR_ALL, CSRKVectorSetUp, NULL, CSRKRowsMult, CSRKDiagonalCSR, NULL, CSRKRowsView, {offsetof(CSRKRows, longrows), offsetof(CSRKRows, longrowchunk), offsetof(CSRKRows, longchunkq), offsetof(CSRKRows, longpart), offsetof(CSRKRows, crows), offsetof(CSRKRows, crowptr)}};
