/*
   Set-up and value refresh of the device layout of MATSEQCSRKCUDA, on the device.

   The host sends what aijcusparse sends, the AIJ arrays (row pointers, columns, values) once; everything else is made
   from them on the device: the row-length statistics the kernel is chosen from (one pass, a few numbers read back),
   the launch grouping, and the layout of the chosen kernel. The sliced kernel's row patterns are found by hashing each
   row's list of column - row offsets, sorting the rows by hash (CUB's radix sort, stable, so the numbering is the
   same run to run) and checking every row against its pattern's first row, so a hash collision costs the patterns,
   never a wrong product. The rows stay in the user's ordering.

   A value refresh (same pattern) uploads the values once; the CSR kernels read them where they land, the sliced ones
   get them scattered into their layout by a kernel (the row pointers and the slice offsets are the position map).
*/
#include "../csrkimpl.h"
#include "csrkcuda.h"
#include "csrkcudautil.cuh"

/* sliced kernels: super-rows of a warp's 32 rows; auto takes them only where the padding stays within 25 % */
#define CSRK_SLICED_SR          32
#define CSRK_SLICED_MAX_PADDING 1.25
/* row patterns: 16-bit numbers, all offsets together in 32 KiB (the dictionary stays in L1, as on the CPU) */
#define CSRK_PATTERN_MAX         65536
#define CSRK_PATTERN_MAX_ENTRIES 8192
/* launch groupings of plain row lists */
#define CSRK_COMPRESSED_ROWS_PER_BLOCK 128
#define CSRK_TRANSPOSE_ROWS_PER_BLOCK  32
/* block kernel under auto: the share of the rows that must lie in nodes of two or more rows */
#define CSRK_BLOCK_MIN_NODE_ROWS 0.75

typedef unsigned long long CSRKULL;

/* row-length statistics of a row pointer, accumulated with integer atomics (exact, so the choice is reproducible);
   pnnz: the padded size of the sliced storage */
typedef struct {
  CSRKULL sumsq, pnnz;
  int     maxlen, nzrows;
} CSRKRowStats;

/* ------------------------------------------------------------------------------------------------ kernels */

template <typename T>
__global__ void CSRKToIdxKernel(PetscInt64 n, const T *__restrict__ in, CSRKIdx *__restrict__ out)
{
  CSRK_GRIDSTRIDE(i, n) out[i] = (CSRKIdx)in[i];
}

/* a thread per row, a warp per 32-row super-row (blocks of a multiple of 32 threads: the warps are aligned) */
__global__ void CSRKRowStatsKernel(PetscInt64 m, const CSRKIdx *__restrict__ rowptr, CSRKRowStats *st)
{
  for (PetscInt64 base = blockIdx.x * (PetscInt64)blockDim.x; base < m; base += (PetscInt64)blockDim.x * gridDim.x) {
    const PetscInt64 r   = base + threadIdx.x;
    const int        len = r < m ? rowptr[r + 1] - rowptr[r] : 0;
    int              w   = len;
    CSRKULL          sq  = (CSRKULL)len * (CSRKULL)len;
    const unsigned   nz  = __popc(__ballot_sync(0xffffffffu, len > 0));
    for (int o = 16; o > 0; o >>= 1) {
      w = max(w, __shfl_down_sync(0xffffffffu, w, o));
      sq += __shfl_down_sync(0xffffffffu, sq, o);
    }
    if (!(threadIdx.x & 31u) && r < m) {
      const CSRKULL h = (CSRKULL)min((PetscInt64)32, m - r);
      atomicMax(&st->maxlen, w);
      atomicAdd(&st->nzrows, (int)nz);
      atomicAdd(&st->sumsq, sq);
      atomicAdd(&st->pnnz, ((CSRKULL)w * h + 31) / 32 * 32);
    }
  }
}

/* the most nonzeros in a run of `rows` consecutive rows (a launch unit of the stream kernel) */
__global__ void CSRKMaxUnitKernel(PetscInt64 m, PetscInt64 rows, const CSRKIdx *__restrict__ rowptr, int *maxu)
{
  CSRK_GRIDSTRIDE(u, (m + rows - 1) / rows) atomicMax(maxu, rowptr[min(m, (u + 1) * rows)] - rowptr[u * rows]);
}

/* uniform grouping: super-row s is rows [s sr, (s + 1) sr), unit u is super-rows [u ssr, (u + 1) ssr) */
__global__ void CSRKGroupKernel(PetscInt64 nrows, PetscInt64 sr, PetscInt64 nsr, PetscInt64 ssr, PetscInt64 nunits, CSRKIdx *__restrict__ srptr, CSRKIdx *__restrict__ unitptr)
{
  CSRK_GRIDSTRIDE(i, PetscMax(nsr, nunits) + 1)
  {
    if (i <= nsr) srptr[i] = (CSRKIdx)min(i * sr, nrows);
    if (i <= nunits) unitptr[i] = (CSRKIdx)min(i * ssr, nsr);
  }
}

/* padded size of each 32-row super-row of the sliced storage (entry nsr: 0, for the scan) */
__global__ void CSRKSliceSizeKernel(PetscInt64 m, const CSRKIdx *__restrict__ rowptr, CSRKIdx *__restrict__ size)
{
  const PetscInt64 nsr = (m + CSRK_SLICED_SR - 1) / CSRK_SLICED_SR;
  CSRK_GRIDSTRIDE(s, nsr + 1)
  {
    if (s == nsr) size[s] = 0;
    else {
      const PetscInt64 r0 = s * CSRK_SLICED_SR, h = min((PetscInt64)CSRK_SLICED_SR, m - r0);
      CSRKIdx          w  = 0;
      for (PetscInt64 r = r0; r < r0 + h; r++) w = max(w, rowptr[r + 1] - rowptr[r]);
      size[s] = (CSRKIdx)(((PetscInt64)w * h + 31) / 32 * 32);
    }
  }
}

/* row r's entries into the sliced storage: entry j at sliceptr[r / 32] + j h + r % 32 (h: rows of the super-row). Also
   the value refresh of the sliced kernels. */
__global__ void CSRKSliceScatterKernel(PetscInt64 m, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ sliceptr, const CSRKIdx *__restrict__ colidx, const PetscScalar *__restrict__ val, CSRKIdx *__restrict__ scol, PetscScalar *__restrict__ sval)
{
  CSRK_GRIDSTRIDE(r, m)
  {
    const PetscInt64 s = r / CSRK_SLICED_SR, h = min((PetscInt64)CSRK_SLICED_SR, m - s * CSRK_SLICED_SR);
    PetscInt64       p = sliceptr[s] + r % CSRK_SLICED_SR;
    for (CSRKIdx q = rowptr[r]; q < rowptr[r + 1]; q++, p += h) {
      if (scol) scol[p] = colidx[q];
      if (sval) sval[p] = val[q];
    }
  }
}

/* 64-bit hash of a row's length and offsets column - row (FNV-1a over 32-bit words, then a final mix) */
__global__ void CSRKRowHashKernel(PetscInt64 m, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ colidx, CSRKULL *__restrict__ key, CSRKIdx *__restrict__ row)
{
  CSRK_GRIDSTRIDE(r, m)
  {
    CSRKULL h = 0xcbf29ce484222325ull ^ (CSRKULL)(rowptr[r + 1] - rowptr[r]);
    for (CSRKIdx q = rowptr[r]; q < rowptr[r + 1]; q++) h = (h ^ (CSRKULL)(uint32_t)(colidx[q] - (CSRKIdx)r)) * 0x100000001b3ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    key[r] = h;
    row[r] = (CSRKIdx)r;
  }
}

/* 1 where a run of equal hashes starts in the sorted order */
__global__ void CSRKRunHeadKernel(PetscInt64 m, const CSRKULL *__restrict__ key, int *__restrict__ head)
{
  CSRK_GRIDSTRIDE(i, m) head[i] = (i == 0 || key[i] != key[i - 1]) ? 1 : 0;
}

/* pattern of each row (its run's number), the first row of each run as the pattern's representative, its length */
__global__ void CSRKAssignPatternKernel(PetscInt64 m, const int *__restrict__ head, const int *__restrict__ id, const CSRKIdx *__restrict__ row, const CSRKIdx *__restrict__ rowptr, uint16_t *__restrict__ rowpat, CSRKIdx *__restrict__ rep, CSRKIdx *__restrict__ plen)
{
  CSRK_GRIDSTRIDE(i, m)
  {
    const int p = id[i] + head[i] - 1; /* id: exclusive sum of head */
    rowpat[row[i]] = (uint16_t)p;
    if (head[i]) {
      rep[p]  = row[i];
      plen[p] = rowptr[row[i] + 1] - rowptr[row[i]];
    }
  }
}

__global__ void CSRKFillPatternKernel(PetscInt64 npat, const CSRKIdx *__restrict__ rep, const CSRKIdx *__restrict__ patptr, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ colidx, int32_t *__restrict__ patoff)
{
  CSRK_GRIDSTRIDE(p, npat)
  {
    const CSRKIdx r = rep[p];
    for (CSRKIdx j = 0; j < patptr[p + 1] - patptr[p]; j++) patoff[patptr[p] + j] = colidx[rowptr[r] + j] - r;
  }
}

/* every row against its pattern: bad is set on any difference (a hash collision) */
__global__ void CSRKCheckPatternKernel(PetscInt64 m, const uint16_t *__restrict__ rowpat, const CSRKIdx *__restrict__ patptr, const int32_t *__restrict__ patoff, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ colidx, int *bad)
{
  CSRK_GRIDSTRIDE(r, m)
  {
    const CSRKIdx p0 = patptr[rowpat[r]], len = patptr[rowpat[r] + 1] - p0, q0 = rowptr[r];
    PetscBool     ok = (PetscBool)(len == rowptr[r + 1] - q0);
    for (CSRKIdx j = 0; ok && j < len; j++) ok = (PetscBool)(colidx[q0 + j] - (CSRKIdx)r == patoff[p0 + j]);
    if (!ok) atomicOr(bad, 1);
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

/* transpose: the row of each entry, the entry numbers, the transpose's rows (lower bounds in the sorted columns) */
__global__ void CSRKRowOfEntryKernel(PetscInt64 m, const CSRKIdx *__restrict__ rowptr, CSRKIdx *__restrict__ rowof)
{
  CSRK_GRIDSTRIDE(r, m)
  for (CSRKIdx q = rowptr[r]; q < rowptr[r + 1]; q++) rowof[q] = (CSRKIdx)r;
}

__global__ void CSRKIotaKernel(PetscInt64 n, CSRKIdx *__restrict__ v)
{
  CSRK_GRIDSTRIDE(i, n) v[i] = (CSRKIdx)i;
}

__global__ void CSRKLowerBoundKernel(PetscInt64 n, PetscInt64 nnz, const CSRKIdx *__restrict__ sorted, CSRKIdx *__restrict__ tp)
{
  CSRK_GRIDSTRIDE(c, n + 1)
  {
    PetscInt64 lo = 0, hi = nnz;
    while (lo < hi) {
      const PetscInt64 mid = (lo + hi) / 2;
      if (sorted[mid] < (CSRKIdx)c) lo = mid + 1;
      else hi = mid;
    }
    tp[c] = (CSRKIdx)lo;
  }
}

/* w[i] = v[map[i]] */
__global__ void CSRKMapKernel(PetscInt64 n, const CSRKIdx *__restrict__ map, const CSRKIdx *__restrict__ v, CSRKIdx *__restrict__ w)
{
  CSRK_GRIDSTRIDE(i, n) w[i] = v[map[i]];
}

__global__ void CSRKMapValuesKernel(PetscInt64 n, const CSRKIdx *__restrict__ map, const PetscScalar *__restrict__ v, PetscScalar *__restrict__ w)
{
  CSRK_GRIDSTRIDE(i, n) w[i] = v[map[i]];
}

/* ------------------------------------------------------------------------------------------------ set-up steps */

/* dst (device, n entries) from host indices of PetscInt */
static PetscErrorCode CSRKUploadIdx(CSRKIdx *dst, const PetscInt *src, PetscInt64 n, cudaStream_t stream)
{
  PetscFunctionBegin;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  if (sizeof(PetscInt) == sizeof(CSRKIdx)) PetscCallCUDA(cudaMemcpyAsync(dst, src, sizeof(CSRKIdx) * n, cudaMemcpyHostToDevice, stream));
  else {
    PetscInt *tmp;
    PetscCall(CSRKScratch(&tmp, n, stream));
    PetscCallCUDA(cudaMemcpyAsync(tmp, src, sizeof(PetscInt) * n, cudaMemcpyHostToDevice, stream));
    CSRKToIdxKernel<<<CSRKGrid(n), 256, 0, stream>>>(n, tmp, dst);
    PetscCallCUDA(cudaGetLastError());
    CSRKScratchFree(tmp, stream);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CSRKRowStatsCompute(PetscInt m, const CSRKIdx *rowptr, CSRKRowStats *st, cudaStream_t stream)
{
  CSRKRowStats *dst;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(st, sizeof(*st)));
  if (!m) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CSRKScratch(&dst, 1, stream));
  PetscCallCUDA(cudaMemsetAsync(dst, 0, sizeof(*dst), stream));
  CSRKRowStatsKernel<<<CSRKGrid(m), 256, 0, stream>>>(m, rowptr, dst);
  PetscCallCUDA(cudaGetLastError());
  PetscCall(CSRKReadBack(st, dst, 1, stream));
  CSRKScratchFree(dst, stream);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CSRKMaxUnitNonzeros(const CSRKDevice *d, PetscInt rows, PetscInt *maxu, cudaStream_t stream)
{
  int *dmax, h = 0;

  PetscFunctionBegin;
  if (d->m) {
    PetscCall(CSRKScratch(&dmax, 1, stream));
    PetscCallCUDA(cudaMemsetAsync(dmax, 0, sizeof(int), stream));
    CSRKMaxUnitKernel<<<CSRKGrid((d->m + rows - 1) / rows), 256, 0, stream>>>(d->m, rows, d->rowptr, dmax);
    PetscCallCUDA(cudaGetLastError());
    PetscCall(CSRKReadBack(&h, dmax, 1, stream));
    CSRKScratchFree(dmax, stream);
  }
  *maxu = h;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* unitptr and srptr of the uniform grouping of d's sizes over nrows rows */
static PetscErrorCode CSRKBuildGroups(PetscInt nrows, PetscInt sr, PetscInt ssr, CSRKIdx **srptr, CSRKIdx **unitptr, PetscInt *nsr, PetscInt *nunits, size_t *bytes, cudaStream_t stream)
{
  PetscFunctionBegin;
  *nsr    = (nrows + sr - 1) / sr;
  *nunits = (*nsr + ssr - 1) / ssr;
  PetscCall(CSRKMalloc(srptr, *nsr + 1, bytes));
  PetscCall(CSRKMalloc(unitptr, *nunits + 1, bytes));
  CSRKGroupKernel<<<CSRKGrid(PetscMax(*nsr, *nunits) + 1), 256, 0, stream>>>(nrows, sr, *nsr, ssr, *nunits, *srptr, *unitptr);
  PetscCallCUDA(cudaGetLastError());
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

/* Rows longer than this go to the long-row kernels (CSRK_IDX_MAX: none is): far beyond the mean, where one sub-warp
   or thread would serialise a whole block */
static inline PetscInt CSRKLongRowLength(PetscReal mean, PetscInt maxlen)
{
  const PetscInt len = PetscMax(512, (PetscInt)(16 * mean));
  return maxlen <= len ? CSRK_IDX_MAX : len;
}

/* The rows of d longer than d->longlen, cut into chunks of CSRK_LONG_CHUNK entries */
static PetscErrorCode CSRKBuildLongRows(CSRKDevice *d, size_t *bytes, cudaStream_t stream)
{
  CSRKIdx *cnt;

  PetscFunctionBegin;
  PetscCall(CSRKSelectRows(d->m, d->rowptr, (CSRKIdx)d->longlen, &d->longrows, NULL, &d->nlong, bytes, stream));
  PetscCall(CSRKMalloc(&d->longrowchunk, d->nlong + 1, bytes));
  PetscCall(CSRKScratch(&cnt, d->nlong + 1, stream));
  CSRKLongCountKernel<<<CSRKGrid(d->nlong + 1), 256, 0, stream>>>(d->nlong, d->longrows, d->rowptr, cnt);
  PetscCallCUDA(cudaGetLastError());
  PetscCall(CSRKExclusiveSum(cnt, d->longrowchunk, d->nlong + 1, stream));
  CSRKScratchFree(cnt, stream);
  {
    CSRKIdx nc;
    PetscCall(CSRKReadBack(&nc, d->longrowchunk + d->nlong, 1, stream));
    d->nlongchunks = nc;
  }
  PetscCall(CSRKMalloc(&d->longchunkq, 2 * d->nlongchunks, bytes));
  PetscCall(CSRKMalloc(&d->longpart, d->nlongchunks, bytes));
  CSRKLongChunksKernel<<<CSRKGrid(d->nlong), 256, 0, stream>>>(d->nlong, d->longrows, d->rowptr, d->longrowchunk, d->longchunkq);
  PetscCallCUDA(cudaGetLastError());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Launch grouping over the non-empty rows of a block in which most rows are empty (the off-process block of an MPI
   matrix). The CSR arrays stay as they are: the entries of consecutive non-empty rows are contiguous, so row i of the
   grouping spans [crowptr[i], crowptr[i + 1]) and the kernels write through crows as through a row permutation. */
static PetscErrorCode CSRKBuildCompressed(CSRKDevice *d, size_t *bytes, cudaStream_t stream)
{
  PetscInt nsr;

  PetscFunctionBegin;
  PetscCall(CSRKSelectRows(d->m, d->rowptr, 0, &d->crows, &d->crowptr, &d->nc, bytes, stream));
  {
    const CSRKIdx nnz = (CSRKIdx)d->nnz;
    PetscCallCUDA(cudaMemcpyAsync(d->crowptr + d->nc, &nnz, sizeof(CSRKIdx), cudaMemcpyHostToDevice, stream));
    PetscCallCUDA(cudaStreamSynchronize(stream)); /* nnz lives on the host stack */
  }
  d->cwidth = d->nc ? ((PetscReal)d->nnz / d->nc <= 8 ? 1 : (PetscReal)d->nnz / d->nc <= 16 ? 4 : (PetscReal)d->nnz / d->nc <= 32 ? 8 : (PetscReal)d->nnz / d->nc <= 64 ? 16 : 32) : 1;
  PetscCall(CSRKBuildGroups(d->nc, CSRK_COMPRESSED_ROWS_PER_BLOCK, 1, &d->csrptr, &d->cunitptr, &nsr, &d->cnunits, bytes, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Row patterns of d's rows (rowptr, colidx on the device) when they fit the dictionary; d->rowpat stays NULL if not */
static PetscErrorCode CSRKFindPatterns(Mat A, CSRKDevice *d, size_t *bytes, cudaStream_t stream)
{
  const PetscInt m = d->m;
  CSRKULL       *key, *skey;
  CSRKIdx       *row, *srow, *rep = NULL, *plen = NULL;
  int           *head, *id, *bad, hbad = 0, last[2];
  void          *tmp = NULL;
  size_t         tb  = 0;
  PetscInt       npat, nent = 0;
  uint16_t      *rowpat = NULL;

  PetscFunctionBegin;
  if (!m) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CSRKScratch(&key, 2 * (PetscInt64)m, stream));
  PetscCall(CSRKScratch(&row, 2 * (PetscInt64)m, stream));
  skey = key + m;
  srow = row + m;
  CSRKRowHashKernel<<<CSRKGrid(m), 256, 0, stream>>>(m, d->rowptr, d->colidx, key, row);
  PetscCallCUDA(cudaGetLastError());
  PetscCallCUDA(cub::DeviceRadixSort::SortPairs(tmp, tb, key, skey, row, srow, (int)m, 0, 64, stream));
  PetscCallCUDA(cudaMallocAsync(&tmp, PetscMax(tb, 1), stream));
  PetscCallCUDA(cub::DeviceRadixSort::SortPairs(tmp, tb, key, skey, row, srow, (int)m, 0, 64, stream));
  PetscCallCUDA(cudaFreeAsync(tmp, stream));
  PetscCall(CSRKScratch(&head, 2 * (PetscInt64)m, stream));
  id = head + m;
  CSRKRunHeadKernel<<<CSRKGrid(m), 256, 0, stream>>>(m, skey, head);
  PetscCallCUDA(cudaGetLastError());
  PetscCall(CSRKExclusiveSum(head, id, m, stream));
  PetscCall(CSRKReadBack(last, id + m - 1, 1, stream));
  PetscCall(CSRKReadBack(last + 1, head + m - 1, 1, stream));
  npat = last[0] + last[1];
  if (npat <= CSRK_PATTERN_MAX) {
    PetscCall(CSRKMalloc(&rowpat, m, NULL));
    PetscCall(CSRKScratch(&rep, npat, stream));
    PetscCall(CSRKScratch(&plen, npat + 1, stream));
    PetscCallCUDA(cudaMemsetAsync(plen + npat, 0, sizeof(CSRKIdx), stream));
    CSRKAssignPatternKernel<<<CSRKGrid(m), 256, 0, stream>>>(m, head, id, srow, d->rowptr, rowpat, rep, plen);
    PetscCallCUDA(cudaGetLastError());
    PetscCall(CSRKMalloc(&d->patptr, npat + 1, NULL));
    PetscCall(CSRKExclusiveSum(plen, d->patptr, npat + 1, stream));
    {
      CSRKIdx n;
      PetscCall(CSRKReadBack(&n, d->patptr + npat, 1, stream));
      nent = n;
    }
  }
  CSRKScratchFree(key, stream);
  CSRKScratchFree(row, stream);
  CSRKScratchFree(head, stream);
  /* as on the CPU: the offsets must fit the dictionary and, with 2 bytes per row, save bytes against 32-bit columns */
  if (npat > CSRK_PATTERN_MAX || nent > CSRK_PATTERN_MAX_ENTRIES || 2.0 * m + 4.0 * (nent + npat) >= 4.0 * d->nnz) {
    PetscCall(PetscInfo(A, "Row patterns: %" PetscInt_FMT " distinct rows with %" PetscInt_FMT " offsets do not fit the dictionary (%d rows, %d offsets): 32-bit columns\n", npat, nent, CSRK_PATTERN_MAX, CSRK_PATTERN_MAX_ENTRIES));
    CSRKCudaFree(rowpat);
    CSRKCudaFree(d->patptr);
    if (plen) {
      CSRKScratchFree(rep, stream);
      CSRKScratchFree(plen, stream);
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(CSRKMalloc(&d->patoff, nent, NULL));
  CSRKFillPatternKernel<<<CSRKGrid(npat), 256, 0, stream>>>(npat, rep, d->patptr, d->rowptr, d->colidx, d->patoff);
  PetscCallCUDA(cudaGetLastError());
  PetscCall(CSRKScratch(&bad, 1, stream));
  PetscCallCUDA(cudaMemsetAsync(bad, 0, sizeof(int), stream));
  CSRKCheckPatternKernel<<<CSRKGrid(m), 256, 0, stream>>>(m, rowpat, d->patptr, d->patoff, d->rowptr, d->colidx, bad);
  PetscCallCUDA(cudaGetLastError());
  PetscCall(CSRKReadBack(&hbad, bad, 1, stream));
  CSRKScratchFree(bad, stream);
  CSRKScratchFree(rep, stream);
  CSRKScratchFree(plen, stream);
  if (hbad) {
    PetscCall(PetscInfo(A, "Row patterns: two distinct rows with one hash: 32-bit columns\n"));
    CSRKCudaFree(rowpat);
    CSRKCudaFree(d->patptr);
    CSRKCudaFree(d->patoff);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  d->rowpat = rowpat;
  d->npat   = npat;
  *bytes += sizeof(uint16_t) * m + sizeof(CSRKIdx) * (npat + 1) + sizeof(int32_t) * nent;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The sliced storage: 32-row super-rows column by column, with the row patterns that CSRKFindPatterns() found (the CSR
   columns and values are freed then: the kernels and the refresh need only the row pointers) or plain columns */
static PetscErrorCode CSRKBuildSliced(CSRKDevice *d, size_t *bytes, cudaStream_t stream)
{
  const PetscInt nsr = (d->m + CSRK_SLICED_SR - 1) / CSRK_SLICED_SR;

  PetscFunctionBegin;
  PetscCall(CSRKMalloc(&d->sliceptr, nsr + 1, bytes));
  CSRKSliceSizeKernel<<<CSRKGrid(nsr + 1), 256, 0, stream>>>(d->m, d->rowptr, d->sliceptr);
  PetscCallCUDA(cudaGetLastError());
  PetscCall(CSRKExclusiveSum(d->sliceptr, d->sliceptr, nsr + 1, stream));
  PetscCall(CSRKMalloc(&d->sval, d->pnnz, bytes));
  PetscCallCUDA(cudaMemsetAsync(d->sval, 0, sizeof(PetscScalar) * PetscMax(d->pnnz, 1), stream));
  if (!d->rowpat) {
    PetscCall(CSRKMalloc(&d->scol, d->pnnz, bytes));
    PetscCallCUDA(cudaMemsetAsync(d->scol, 0, sizeof(CSRKIdx) * PetscMax(d->pnnz, 1), stream));
  }
  CSRKSliceScatterKernel<<<CSRKGrid(d->m), 256, 0, stream>>>(d->m, d->rowptr, d->sliceptr, d->colidx, d->val, d->scol, d->sval);
  PetscCallCUDA(cudaGetLastError());
  /* the sliced kernels read neither the CSR columns nor the CSR values */
  CSRKCudaFree(d->val);
  CSRKCudaFree(d->colidx);
  *bytes -= (sizeof(CSRKIdx) + sizeof(PetscScalar)) * (size_t)PetscMax(d->nnz, 1);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* lanes per row of the vector kernel for a mean row length (a thread per row up to 8 entries) */
static inline PetscInt CSRKWidthForMean(PetscReal mean)
{
  return mean <= 8 ? 1 : mean <= 16 ? 4 : mean <= 32 ? 8 : mean <= 64 ? 16 : 32;
}

/* Sizes of the row-grouped kernels (the model of docs/tuning.md): the stream kernel's 8 x 2 for auto, with a kernel
   forced 8 x 8 for short rows, 16 x 2 up to 32 entries, 8 x 2 above; -mat_csrk_sr_size and -mat_csrk_ssr_size win */
static void CSRKGroupSizes(const MatCSRKOptions *opt, PetscReal mean, PetscInt *sr, PetscInt *ssr)
{
  if (opt->cuda_kernel == MAT_CSRK_CUDA_KERNEL_AUTO || mean > 32) *sr = 8, *ssr = 2;
  else if (mean <= 8) *sr = 8, *ssr = 8;
  else *sr = 16, *ssr = 2;
  if (opt->sr_size > 0) *sr = opt->sr_size;
  if (opt->ssr_size > 0) *ssr = opt->ssr_size;
  if (opt->k < 3) *ssr = 1;
}

/* Kernel and launch shape from the row statistics (the constant-time rule of docs/tuning.md), and its layout */
static PetscErrorCode CSRKChooseAndBuild(Mat A, CSRKDevice *d, const MatCSRKOptions *opt, const CSRKRowStats *rs, size_t *bytes, cudaStream_t stream)
{
  const MatCSRKCUDAKernel kern = opt->cuda_kernel;
  const PetscReal         mean = d->m ? (PetscReal)d->nnz / d->m : 0;
  PetscReal               var, cv;
  PetscInt                maxu = 0;
  PetscBool               fits, sliced;

  PetscFunctionBegin;
  var            = d->m ? PetscMax(0.0, (PetscReal)rs->sumsq / d->m - mean * mean) : 0;
  cv             = mean > 0 ? PetscSqrtReal(var) / mean : 0;
  d->mean        = mean;
  d->var         = var;
  d->maxlen      = rs->maxlen;
  d->nonzerorows = rs->nzrows;
  d->longlen     = CSRK_IDX_MAX;
  sliced         = (PetscBool)(kern == MAT_CSRK_CUDA_KERNEL_SLICED || (kern == MAT_CSRK_CUDA_KERNEL_AUTO && mean > 0 && cv <= CSRK_GPU_SLICED_MAX_CV && (PetscReal)rs->pnnz <= CSRK_SLICED_MAX_PADDING * (PetscReal)d->nnz));
  /* row patterns first: where the rows have them (stencils in natural order) the sliced kernel over them beats the
     others, the block kernel included */
  if (sliced && opt->compress && opt->patterns) PetscCall(CSRKFindPatterns(A, d, bytes, stream));
  /* The block kernel: forced, or under auto where the sliced kernel has no row patterns, most rows are non-empty,
     none is a long row (a node is one sub-warp's), at least CSRK_BLOCK_MIN_NODE_ROWS of the rows lie in nodes of two
     or more rows, and the layout takes less device memory than the CSR arrays (aijcusparse's) */
  if (kern == MAT_CSRK_CUDA_KERNEL_BLOCK || (kern == MAT_CSRK_CUDA_KERNEL_AUTO && !d->rowpat && 2 * d->nonzerorows > d->m && CSRKLongRowLength(mean, d->maxlen) == CSRK_IDX_MAX)) {
    const size_t csrbytes = (sizeof(PetscScalar) + sizeof(CSRKIdx)) * (size_t)PetscMax(d->nnz, 1) + sizeof(CSRKIdx) * ((size_t)d->m + 1);
    size_t       blkbytes;

    PetscCall(MatCSRKCUDABlockFindNodes(d, stream));
    blkbytes = MatCSRKCUDABlockBytes(d, (PetscBool)(opt->compress && d->nodespan < 65536));
    if (kern == MAT_CSRK_CUDA_KERNEL_BLOCK || ((PetscReal)d->nnoderows >= CSRK_BLOCK_MIN_NODE_ROWS * d->m && blkbytes < csrbytes)) {
      PetscCall(MatCSRKCUDABlockBuild(A, d, opt, bytes, stream));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(PetscInfo(A, "Block kernel not taken: %" PetscInt_FMT " of %" PetscInt_FMT " rows in nodes of two or more (%g %% needed), %g MB against %g MB of CSR arrays\n", d->nnoderows, d->m, 100.0 * CSRK_BLOCK_MIN_NODE_ROWS, blkbytes / 1048576.0, csrbytes / 1048576.0));
    PetscCall(MatCSRKCUDABlockFree(d));
  }
  if (sliced) {
    PetscCheck(rs->pnnz <= (CSRKULL)CSRK_IDX_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "The padded storage of the sliced kernel has %llu entries, beyond 32-bit indices: use another kernel (-mat_csrk_cuda_kernel)", rs->pnnz);
    d->kernel = MAT_CSRK_CUDA_KERNEL_SLICED;
    d->pnnz   = (PetscInt)rs->pnnz;
    d->width  = 1;
    d->sr     = CSRK_SLICED_SR;
    d->ssr    = opt->ssr_size > 0 ? opt->ssr_size : 16;
    if (opt->k < 3) d->ssr = 1;
    d->bx = 32;
    while (d->bx > 1 && (PetscInt)d->bx / 2 >= PetscMin(d->m, CSRK_SLICED_SR)) d->bx /= 2;
    d->by = opt->k == 3 ? PetscMax(1, 128 / d->bx) : 1;
    d->bz = 1;
    PetscCall(CSRKBuildGroups(d->m, d->sr, d->ssr, &d->srptr, &d->unitptr, &d->nsr, &d->nunits, bytes, stream));
    PetscCall(CSRKBuildSliced(d, bytes, stream));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  CSRKGroupSizes(opt, mean, &d->sr, &d->ssr);
  PetscCall(CSRKMaxUnitNonzeros(d, d->sr * d->ssr, &maxu, stream));
  fits = (PetscBool)((size_t)maxu * sizeof(PetscScalar) <= CSRK_STREAM_SMEM_MAX);
  /* irregular rows: the merge kernel, as long as rows + nonzeros fit its 32-bit path coordinates; not where the stream
     kernel holds short rows, nor for blocks of mostly empty rows (the compressed rows below) */
  if (kern == MAT_CSRK_CUDA_KERNEL_MERGE || (kern == MAT_CSRK_CUDA_KERNEL_AUTO && cv > CSRK_GPU_SLICED_MAX_CV && !(fits && mean <= 8) && 2 * d->nonzerorows > d->m && (PetscInt64)d->m + d->nnz <= CSRK_IDX_MAX / 2)) {
    d->kernel = MAT_CSRK_CUDA_KERNEL_MERGE;
    d->width  = 0;
    PetscCall(MatCSRKCUDAMergeSetUp(d, bytes));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (kern == MAT_CSRK_CUDA_KERNEL_CUSPARSE || (kern == MAT_CSRK_CUDA_KERNEL_AUTO && cv > CSRK_GPU_SLICED_MAX_CV && !fits)) {
    d->kernel = MAT_CSRK_CUDA_KERNEL_CUSPARSE;
    d->width  = 0;
    d->bx = d->by = d->bz = 1;
    PetscCall(MatCSRKCUDACusparseCreate(d, bytes));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  d->longlen = CSRKLongRowLength(mean, d->maxlen);
  if (kern == MAT_CSRK_CUDA_KERNEL_STREAM || (kern == MAT_CSRK_CUDA_KERNEL_AUTO && (mean > 8 || cv > CSRK_GPU_SLICED_MAX_CV) && fits)) {
    PetscCheck(fits, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "The stream kernel needs the nonzeros of a super-super-row (%" PetscInt_FMT ") in shared memory: use smaller sizes (-mat_csrk_sr_size, -mat_csrk_ssr_size)", maxu);
    d->kernel = MAT_CSRK_CUDA_KERNEL_STREAM;
    d->width  = 0;
    d->smem   = (size_t)PetscMax(maxu, 1) * sizeof(PetscScalar);
    d->bx     = 128;
    d->by = d->bz = 1;
  } else {
    d->width = CSRKWidthForMean(mean);
    if (kern == MAT_CSRK_CUDA_KERNEL_VECTOR) d->width = PetscMax(2, d->width);
    if (kern == MAT_CSRK_CUDA_KERNEL_SCALAR) d->width = 1;
    d->kernel = d->width == 1 ? MAT_CSRK_CUDA_KERNEL_SCALAR : MAT_CSRK_CUDA_KERNEL_VECTOR;
    /* threads per block: the paper's shapes (x = rows or lanes, y = rows or super-rows, z = super-rows), which the
       loops stride over when the groups are larger */
    if (d->width == 1) {
      d->bx = 8;
      d->by = 12;
      d->bz = 1;
    } else {
      d->bx = (unsigned)d->width;
      d->by = 8;
      d->bz = d->width == 4 ? 12 : d->width == 8 ? 8 : d->width == 16 ? 4 : (unsigned)(512 / (d->width * 8));
    }
    if (opt->k < 3) {
      /* one super-row per block: all threads along the rows */
      if (d->width == 1) d->bx *= 12, d->by = 1;
      else d->by *= d->bz;
      d->bz = 1;
    }
  }
  PetscCall(CSRKBuildGroups(d->m, d->sr, d->ssr, &d->srptr, &d->unitptr, &d->nsr, &d->nunits, bytes, stream));
  if (d->longlen < CSRK_IDX_MAX) PetscCall(CSRKBuildLongRows(d, bytes, stream));
  /* mostly empty rows (the off-process block of an MPI matrix): the products run over the non-empty rows */
  if (d->m >= 1024 && 2 * d->nonzerorows <= d->m) PetscCall(CSRKBuildCompressed(d, bytes, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatCSRKCUDADeviceSetUp - the device layout of the SeqAIJ (sub)matrix A: its AIJ arrays uploaded, the rest built
   on the device
*/
PetscErrorCode MatCSRKCUDADeviceSetUp(Mat A, const MatCSRKOptions *opt, CSRKDevice **dev)
{
  const PetscInt *ai, *aj;
  PetscScalar    *aa;
  PetscMemType    mt;
  CSRKDevice     *d;
  CSRKRowStats    rs;
  cudaStream_t    stream;
  size_t          bytes = 0;

  PetscFunctionBegin;
  PetscCall(MatCSRKCUDADeviceDestroy(dev));
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, &mt));
  PetscCheck(!PetscMemTypeDevice(mt), PETSC_COMM_SELF, PETSC_ERR_PLIB, "Expected the host AIJ arrays");
  PetscCheck(A->rmap->n <= CSRK_IDX_MAX && A->cmap->n <= CSRK_IDX_MAX && ai[A->rmap->n] <= CSRK_IDX_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "MATSEQCSRKCUDA needs rows, columns and nonzeros of a block within 32-bit indices");
  PetscCall(MatCSRKCUDAStreamKernelInit());
  PetscCall(CSRKGetStream(&stream));
  PetscCall(PetscNew(&d));
  d->m   = A->rmap->n;
  d->n   = A->cmap->n;
  d->nnz = ai[d->m];
  d->k   = opt->k;
  /* what aijcusparse uploads: row pointers, columns, values */
  PetscCall(CSRKMalloc(&d->rowptr, (PetscInt64)d->m + 1, &bytes));
  PetscCall(CSRKMalloc(&d->colidx, d->nnz, &bytes));
  PetscCall(CSRKMalloc(&d->val, d->nnz, &bytes));
  PetscCall(CSRKUploadIdx(d->rowptr, ai, (PetscInt64)d->m + 1, stream));
  PetscCall(CSRKUploadIdx(d->colidx, aj, d->nnz, stream));
  if (d->nnz) PetscCallCUDA(cudaMemcpyAsync(d->val, aa, sizeof(PetscScalar) * d->nnz, cudaMemcpyHostToDevice, stream));
  PetscCall(PetscLogCpuToGpu(sizeof(PetscInt) * (d->m + 1.0 + d->nnz) + sizeof(PetscScalar) * (PetscLogDouble)d->nnz));
  PetscCall(CSRKRowStatsCompute(d->m, d->rowptr, &rs, stream));
  PetscCall(CSRKChooseAndBuild(A, d, opt, &rs, &bytes, stream));
  d->bytes = bytes;
  *dev     = d;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatCSRKCUDADeviceRefresh - the values of A (same pattern) into the device layout: one upload, then a scatter for
   the sliced storage and a gather for the stored transpose
*/
PetscErrorCode MatCSRKCUDADeviceRefresh(Mat A, CSRKDevice *d)
{
  const PetscInt *ai, *aj;
  PetscScalar    *aa, *v = d->val;
  PetscMemType    mt;
  cudaStream_t    stream;

  PetscFunctionBegin;
  if (!d->nnz) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, &mt));
  PetscCall(CSRKGetStream(&stream));
  if (!v) PetscCall(CSRKScratch(&v, d->nnz, stream));
  PetscCallCUDA(cudaMemcpyAsync(v, aa, sizeof(PetscScalar) * d->nnz, cudaMemcpyHostToDevice, stream));
  PetscCall(PetscLogCpuToGpu(sizeof(PetscScalar) * (PetscLogDouble)d->nnz));
  if (d->sval) {
    CSRKSliceScatterKernel<<<CSRKGrid(d->m), 256, 0, stream>>>(d->m, d->rowptr, d->sliceptr, NULL, v, NULL, d->sval);
    PetscCallCUDA(cudaGetLastError());
  }
  if (d->t) {
    CSRKMapValuesKernel<<<CSRKGrid(d->nnz), 256, 0, stream>>>(d->nnz, d->tmap, v, d->t->val);
    PetscCallCUDA(cudaGetLastError());
  }
  if (v != d->val) CSRKScratchFree(v, stream);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatCSRKCUDADeviceBuildTranspose - the transpose S^T of d as a device matrix of its own (rows in blocks of 32, a
   thread or 8 lanes per row, long rows chunked as in the forward product), from the CSR arrays: d's own, or those of
   A uploaded again where the sliced or block kernels freed them. The entries are sorted by column with CUB's stable radix
   sort, so each row of S^T lists its entries in the order of S's rows, as a CPU transpose does.
*/
PetscErrorCode MatCSRKCUDADeviceBuildTranspose(Mat A, CSRKDevice *d)
{
  const PetscInt *ai, *aj;
  PetscScalar    *aa, *val = d->val;
  PetscMemType    mt;
  CSRKIdx        *colidx = d->colidx, *rowptr = d->rowptr, *rowof, *iota, *skey;
  CSRKDevice     *t;
  CSRKRowStats    rs;
  cudaStream_t    stream;
  size_t          bytes = 0, tb = 0;
  void           *tmp = NULL;
  int             bits = 1;
  PetscInt        nsr;

  PetscFunctionBegin;
  if (d->t) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CSRKGetStream(&stream));
  PetscCall(PetscNew(&t));
  t->m   = d->n;
  t->n   = d->m;
  t->nnz = d->nnz;
  t->k   = 1;
  if (!colidx || !val || !rowptr) PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, &mt));
  if (!rowptr) {
    PetscCall(CSRKScratch(&rowptr, (PetscInt64)d->m + 1, stream));
    PetscCall(CSRKUploadIdx(rowptr, ai, (PetscInt64)d->m + 1, stream));
    PetscCall(PetscLogCpuToGpu(sizeof(PetscInt) * (d->m + 1.0)));
  }
  if (!colidx) {
    PetscCall(CSRKScratch(&colidx, d->nnz, stream));
    PetscCall(CSRKUploadIdx(colidx, aj, d->nnz, stream));
    PetscCall(PetscLogCpuToGpu(sizeof(PetscInt) * (PetscLogDouble)d->nnz));
  }
  if (!val) {
    PetscCall(CSRKScratch(&val, d->nnz, stream));
    if (d->nnz) PetscCallCUDA(cudaMemcpyAsync(val, aa, sizeof(PetscScalar) * d->nnz, cudaMemcpyHostToDevice, stream));
    PetscCall(PetscLogCpuToGpu(sizeof(PetscScalar) * (PetscLogDouble)d->nnz));
  }
  while (bits < 31 && ((PetscInt64)1 << bits) <= d->n) bits++;
  PetscCall(CSRKScratch(&rowof, d->nnz, stream));
  PetscCall(CSRKScratch(&iota, d->nnz, stream));
  PetscCall(CSRKScratch(&skey, d->nnz, stream));
  PetscCall(CSRKMalloc(&d->tmap, d->nnz, &bytes));
  CSRKRowOfEntryKernel<<<CSRKGrid(d->m), 256, 0, stream>>>(d->m, rowptr, rowof);
  PetscCallCUDA(cudaGetLastError());
  CSRKIotaKernel<<<CSRKGrid(d->nnz), 256, 0, stream>>>(d->nnz, iota);
  PetscCallCUDA(cudaGetLastError());
  if (d->nnz) {
    PetscCallCUDA(cub::DeviceRadixSort::SortPairs(tmp, tb, colidx, skey, iota, d->tmap, (int)d->nnz, 0, bits, stream));
    PetscCallCUDA(cudaMallocAsync(&tmp, PetscMax(tb, 1), stream));
    PetscCallCUDA(cub::DeviceRadixSort::SortPairs(tmp, tb, colidx, skey, iota, d->tmap, (int)d->nnz, 0, bits, stream));
    PetscCallCUDA(cudaFreeAsync(tmp, stream));
  }
  PetscCall(CSRKMalloc(&t->rowptr, (PetscInt64)t->m + 1, &bytes));
  PetscCall(CSRKMalloc(&t->colidx, t->nnz, &bytes));
  PetscCall(CSRKMalloc(&t->val, t->nnz, &bytes));
  CSRKLowerBoundKernel<<<CSRKGrid(t->m + 1), 256, 0, stream>>>(t->m, t->nnz, skey, t->rowptr);
  PetscCallCUDA(cudaGetLastError());
  CSRKMapKernel<<<CSRKGrid(t->nnz), 256, 0, stream>>>(t->nnz, d->tmap, rowof, t->colidx);
  PetscCallCUDA(cudaGetLastError());
  CSRKMapValuesKernel<<<CSRKGrid(t->nnz), 256, 0, stream>>>(t->nnz, d->tmap, val, t->val);
  PetscCallCUDA(cudaGetLastError());
  CSRKScratchFree(rowof, stream);
  CSRKScratchFree(iota, stream);
  CSRKScratchFree(skey, stream);
  if (colidx != d->colidx) CSRKScratchFree(colidx, stream);
  if (rowptr != d->rowptr) CSRKScratchFree(rowptr, stream);
  if (val != d->val) CSRKScratchFree(val, stream);
  PetscCall(CSRKRowStatsCompute(t->m, t->rowptr, &rs, stream));
  t->mean    = (PetscReal)t->nnz / PetscMax(t->m, 1);
  t->maxlen  = rs.maxlen;
  t->longlen = CSRKLongRowLength(t->mean, t->maxlen);
  t->width   = t->mean <= 8 ? 1 : 8;
  t->kernel  = t->width == 1 ? MAT_CSRK_CUDA_KERNEL_SCALAR : MAT_CSRK_CUDA_KERNEL_VECTOR;
  t->bx      = t->width == 1 ? CSRK_TRANSPOSE_ROWS_PER_BLOCK : (unsigned)t->width;
  t->by      = t->width == 1 ? 1 : (unsigned)(256 / t->width);
  t->bz      = 1;
  PetscCall(CSRKBuildGroups(t->m, CSRK_TRANSPOSE_ROWS_PER_BLOCK, 1, &t->srptr, &t->unitptr, &nsr, &t->nunits, &bytes, stream));
  if (t->longlen < CSRK_IDX_MAX) PetscCall(CSRKBuildLongRows(t, &bytes, stream));
  t->bytes = bytes;
  d->t     = t;
  PetscCall(PetscInfo(A, "CSR-k stored transpose built on the device: %" PetscInt_FMT " rows, %" PetscInt_FMT " lanes per row, %" PetscInt_FMT " long rows in %" PetscInt_FMT " chunks\n", t->m, t->width, t->nlong, t->nlongchunks));
  PetscFunctionReturn(PETSC_SUCCESS);
}
