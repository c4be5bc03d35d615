/*
   The sliced kernel of MATCSRKCUDA (an entry of the plan, csrkcudaplan.cu): each 32-row super-row stored column by
   column, padded to its longest row, a warp per super-row, a thread per row; the column indices are row patterns (an
   offset list per distinct row) where the rows fit the dictionary, else 32-bit columns laid out as the values. The
   patterns are found on the device by hashing each row's column - row offsets, a stable radix sort by hash and a check
   of every row against its pattern's first row (a hash collision costs the patterns, never a wrong product).
*/
#include "../csrkimpl.h"
#include "csrkcuda.h"
#include "csrkcudautil.cuh"
#include "csrkcudaslices.cuh"

/* sliced kernels: super-rows of a warp's CSRK_SLICE_ROWS rows (csrkcudaslices.cuh); auto takes them only where the
   padding stays within 25 % */
#define CSRK_SLICED_MAX_PADDING 1.25
/* the longest row under auto: at most the block's nonzeros over this many a multiprocessor. A thread walks its row
   alone, a gather of x after each column load, so a row much longer than the others ends long after the rest of the
   grid (snes ex13's P2 in DMPlex's numbering: rows of up to 235 entries among 28.7 on average, 394 k rows) */
#define CSRK_SLICED_TAIL_NNZ_PER_SM 2048
/* rows a multiprocessor from which a block of the sliced kernel takes 16 super-rows instead of 4 */
#define CSRK_SLICED_LONG_ROWS_PER_SM 32768
/* row patterns: 16-bit numbers, all offsets together in 32 KiB (the dictionary stays in L1, as on the CPU) */
#define CSRK_PATTERN_MAX         65536
#define CSRK_PATTERN_MAX_ENTRIES 8192

/* the sliced storage (d->data): super-row s stored column by column from sliceptr[s], padded to its longest row
   (pnnz entries), with the columns laid out as the values (scol) or row patterns: the offsets from the diagonal of
   row r are patoff[patptr[rowpat[r]] .. patptr[rowpat[r] + 1]) */
typedef struct {
  CSRKIdx     *sliceptr, *scol, *patptr;
  PetscScalar *sval;
  uint16_t    *rowpat;
  int32_t     *patoff;
  PetscInt     pnnz;
} CSRKSliced;

/* padded size of each slice of 32 (block) rows of bs rows (entry nsr: 0, for the scan): block row i's length is its
   first row's over bs (bs 1: the sliced storage; 2-6: the block-sliced one, csrkcudabsliced.cu) */
__global__ void CSRKSliceSizeKernel(PetscInt64 n, int bs, const CSRKIdx *__restrict__ rowptr, CSRKIdx *__restrict__ size)
{
  const PetscInt64 nsr = (n + CSRK_SLICE_ROWS - 1) / CSRK_SLICE_ROWS;
  CSRK_GRIDSTRIDE(s, nsr + 1)
  {
    if (s == nsr) size[s] = 0;
    else {
      const PetscInt64 r0 = s * CSRK_SLICE_ROWS, h = min((PetscInt64)CSRK_SLICE_ROWS, n - r0);
      CSRKIdx          w  = 0;
      for (PetscInt64 r = r0; r < r0 + h; r++) w = max(w, (rowptr[bs * r + 1] - rowptr[bs * r]) / bs);
      size[s] = (CSRKIdx)(((PetscInt64)w * h + 31) / 32 * 32);
    }
  }
}

/* CSRKSlicePointers - where each slice of 32 (block) rows of bs rows starts in a storage that pads each to its longest
   (block) row, in entries (blocks), from the row pointers of the n bs rows; total: the padded entries */
PetscErrorCode CSRKSlicePointers(PetscInt n, PetscInt bs, const CSRKIdx *rowptr, CSRKIdx *sliceptr, CSRKIdx *total, cudaStream_t stream)
{
  const PetscInt nsr = (n + CSRK_SLICE_ROWS - 1) / CSRK_SLICE_ROWS;

  PetscFunctionBegin;
  CSRKSliceSizeKernel<<<CSRKGrid(nsr + 1), 256, 0, stream>>>(n, (int)bs, rowptr, sliceptr);
  PetscCallCUDA(cudaGetLastError());
  PetscCall(CSRKExclusiveSum(sliceptr, sliceptr, nsr + 1, stream));
  PetscCall(CSRKReadBack(total, sliceptr + nsr, 1, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
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

/* Entries a thread loads before it multiplies: its values and indices first, then the x they point to, so that a
   batch costs two memory round trips whatever its length (a row of 7 entries is one batch) */
#ifndef CSRK_SLICED_BATCH
  #define CSRK_SLICED_BATCH 4
#endif
/* mean row length above which the sliced kernel over row patterns loads in batches (docs/tuning.md) */
#ifndef CSRK_SLICED_PLAIN_MAX_MEAN
  #define CSRK_SLICED_PLAIN_MAX_MEAN 12
#endif
/* blocks of 128 threads an SM must hold: caps the registers of the sliced kernel (occupancy against batch depth) */
#ifndef CSRK_SLICED_MINBLOCKS
  #define CSRK_SLICED_MINBLOCKS 10
#endif

/* Sliced kernel over plain 32-bit columns laid out as the values (column of entry p at scol[sliceptr[s] + p]): a block
   per unit, a warp per super-row (blockDim.y super-rows at a time), a thread per row. Entry j of row i of super-row s
   is at sliceptr[s] + j h + i (h = rows of s); a thread stops at its own row length, so the padding is never read or
   multiplied (an Inf or NaN in x cannot leak into other rows through it). */
template <bool GENERAL>
__global__ void CSRKSlicedPlainKernel(const CSRKGroups g, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ sliceptr, const CSRKIdx *__restrict__ scol, const PetscScalar *__restrict__ sval, const CSRKIdx *__restrict__ perm, const PetscScalar *__restrict__ x, const PetscScalar *__restrict__ z, PetscScalar *__restrict__ y)
{
  CSRKIdx s0, s1, r0, r1;
  CSRKUnitSuperRows(g, blockIdx.x, &s0, &s1);
  for (CSRKIdx s = s0 + threadIdx.y; s < s1; s += blockDim.y) {
    CSRKSuperRowRows(g, s, &r0, &r1);
    const CSRKIdx h = r1 - r0, base = sliceptr[s];
    for (CSRKIdx i = threadIdx.x; i < h; i += blockDim.x) {
      const CSRKIdx len = rowptr[r0 + i + 1] - rowptr[r0 + i];
      PetscScalar   sum = 0.0;
      CSRKIdx       q   = base + i;
      /* unrolled so that several loads of a thread are in flight at once */
#pragma unroll 4
      for (CSRKIdx j = 0; j < len; j++, q += h) sum += CSRKStreamedProduct(sval, scol, x, q);
      CSRKStore<GENERAL>(r0 + i, perm, z, y, sum);
    }
  }
}

/* The sliced kernel over row patterns (MAT_CSRK_ROW_PATTERNS): the offsets from the diagonal of row r are pattern
   rowpat[r] of a small dictionary that the warps read through the L1 cache, where the 32 rows of a super-row of a
   stencil mostly share one pattern (a broadcast). No column index or row pointer is read: 2 bytes per row instead of
   4 per entry (plain columns) plus 4 of row pointer. BATCHED: loads in batches of CSRK_SLICED_BATCH entries (rows
   longer than CSRK_SLICED_PLAIN_MAX_MEAN on average); else the loop of CSRKSlicedPlainKernel. */
template <bool BATCHED>
__global__ void __launch_bounds__(128, CSRK_SLICED_MINBLOCKS) CSRKSlicedPatternKernel(const CSRKGroups g, const CSRKIdx *__restrict__ sliceptr, const uint16_t *__restrict__ rowpat, const CSRKIdx *__restrict__ patptr, const int32_t *__restrict__ patoff, const PetscScalar *__restrict__ sval, const CSRKIdx *__restrict__ perm, const PetscScalar *__restrict__ x, const PetscScalar *__restrict__ z, PetscScalar *__restrict__ y)
{
  CSRKIdx s0, s1, r0, r1;
  CSRKUnitSuperRows(g, blockIdx.x, &s0, &s1);
  for (CSRKIdx s = s0 + threadIdx.y; s < s1; s += blockDim.y) {
    CSRKSuperRowRows(g, s, &r0, &r1);
    const CSRKIdx      h = r1 - r0;
    const PetscScalar *v  = sval + sliceptr[s];
    for (CSRKIdx i = threadIdx.x; i < h; i += blockDim.x) {
      const CSRKIdx      r = r0 + i, p = (CSRKIdx)__ldcs(rowpat + r), p0 = __ldg(patptr + p), len = __ldg(patptr + p + 1) - p0;
      const int32_t     *off = patoff + p0;
      const PetscScalar *xr  = x + r;
      PetscScalar        sum = 0.0;
      if (BATCHED) {
        for (CSRKIdx j0 = 0; j0 < len; j0 += CSRK_SLICED_BATCH) {
          PetscScalar a[CSRK_SLICED_BATCH];
          CSRKIdx     c[CSRK_SLICED_BATCH];
#pragma unroll
          for (int k = 0; k < CSRK_SLICED_BATCH; k++)
            if (j0 + k < len) {
              a[k] = CSRKLoadStreamed(v + i + (j0 + k) * h);
              c[k] = __ldg(off + j0 + k);
            }
#pragma unroll
          for (int k = 0; k < CSRK_SLICED_BATCH; k++)
            if (j0 + k < len) sum += a[k] * xr[c[k]];
        }
      } else {
#pragma unroll 4
        for (CSRKIdx j = 0; j < len; j++) sum += CSRKLoadStreamed(v + i + j * h) * xr[__ldg(off + j)];
      }
      CSRKStore(r, perm, z, y, sum);
    }
  }
}

/* the same over the sliced storage: entry j of row r = 32 s + i lies at sliceptr[s] + j h + i; its column is read
   from the row's pattern (offset 0) or from the plain columns */
template <bool SHIFT>
__global__ void CSRKSlicedDiagonalKernel(PetscInt m, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ sliceptr, const CSRKIdx *__restrict__ scol, const uint16_t *__restrict__ rowpat, const CSRKIdx *__restrict__ patptr, const int32_t *__restrict__ patoff, PetscScalar *__restrict__ sval, PetscScalar *__restrict__ y, PetscScalar a)
{
  for (PetscInt r = blockIdx.x * (PetscInt)blockDim.x + threadIdx.x; r < m; r += (PetscInt)blockDim.x * gridDim.x) {
    const PetscInt s = r / 32, i = r % 32, h = PetscMin(32, m - 32 * s);
    PetscInt       q = -1;
    if (rowpat) {
      const CSRKIdx p0 = patptr[rowpat[r]], len = patptr[rowpat[r] + 1] - p0;
      for (CSRKIdx j = 0; j < len; j++)
        if (!patoff[p0 + j]) {
          q = sliceptr[s] + j * h + i;
          break;
        }
    } else {
      const CSRKIdx len = rowptr[r + 1] - rowptr[r];
      for (CSRKIdx j = 0; j < len; j++)
        if (scol[sliceptr[s] + j * h + i] == (CSRKIdx)r) {
          q = sliceptr[s] + j * h + i;
          break;
        }
    }
    if (SHIFT) {
      if (q >= 0) sval[q] += a;
    } else y[r] = q >= 0 ? sval[q] : 0.0;
  }
}

/* Row patterns of d's rows (rowptr, colidx on the device) when they fit the dictionary: the sliced storage (d->data)
   begun with them, d->npat their number; nothing if not */
static PetscErrorCode CSRKFindPatterns(Mat A, CSRKDevice *d, size_t *bytes, cudaStream_t stream)
{
  const PetscInt m = d->m;
  CSRKULL       *key, *skey;
  CSRKIdx       *row, *srow, *rep = NULL, *plen = NULL;
  int           *head, *id, *bad, hbad = 0, last[2];
  PetscInt       npat, nent = 0;
  uint16_t      *rowpat = NULL;
  CSRKIdx       *patptr = NULL;
  int32_t       *patoff = NULL;
  CSRKSliced    *sl;

  PetscFunctionBegin;
  if (!m) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CSRKScratch(&key, 2 * (PetscInt64)m, stream));
  PetscCall(CSRKScratch(&row, 2 * (PetscInt64)m, stream));
  skey = key + m;
  srow = row + m;
  CSRKRowHashKernel<<<CSRKGrid(m), 256, 0, stream>>>(m, d->rowptr, d->colidx, key, row);
  PetscCallCUDA(cudaGetLastError());
  PetscCall(CSRKSortPairs(key, skey, row, srow, m, 64, stream));
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
    PetscCall(CSRKMalloc(&patptr, npat + 1, NULL));
    PetscCall(CSRKExclusiveSum(plen, patptr, npat + 1, stream));
    {
      CSRKIdx n;
      PetscCall(CSRKReadBack(&n, patptr + npat, 1, stream));
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
    CSRKCudaFree(patptr);
    if (plen) {
      CSRKScratchFree(rep, stream);
      CSRKScratchFree(plen, stream);
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(CSRKMalloc(&patoff, nent, NULL));
  CSRKFillPatternKernel<<<CSRKGrid(npat), 256, 0, stream>>>(npat, rep, patptr, d->rowptr, d->colidx, patoff);
  PetscCallCUDA(cudaGetLastError());
  PetscCall(CSRKScratch(&bad, 1, stream));
  PetscCallCUDA(cudaMemsetAsync(bad, 0, sizeof(int), stream));
  CSRKCheckPatternKernel<<<CSRKGrid(m), 256, 0, stream>>>(m, rowpat, patptr, patoff, d->rowptr, d->colidx, bad);
  PetscCallCUDA(cudaGetLastError());
  PetscCall(CSRKReadBack(&hbad, bad, 1, stream));
  CSRKScratchFree(bad, stream);
  CSRKScratchFree(rep, stream);
  CSRKScratchFree(plen, stream);
  if (hbad) {
    PetscCall(PetscInfo(A, "Row patterns: two distinct rows with one hash: 32-bit columns\n"));
    CSRKCudaFree(rowpat);
    CSRKCudaFree(patptr);
    CSRKCudaFree(patoff);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscNew(&sl));
  *sl     = (CSRKSliced){.patptr = patptr, .rowpat = rowpat, .patoff = patoff};
  d->data = sl;
  d->npat = npat;
  *bytes += sizeof(uint16_t) * m + sizeof(CSRKIdx) * (npat + 1) + sizeof(int32_t) * nent;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The sliced storage: 32-row super-rows column by column, with the row patterns that CSRKFindPatterns() found or plain
   columns (the kernels and the refresh need only the CSR row pointers: the plan frees the columns and values) */
static PetscErrorCode CSRKBuildSliced(CSRKDevice *d, size_t *bytes, cudaStream_t stream)
{
  const PetscInt nsr = (d->m + CSRK_SLICE_ROWS - 1) / CSRK_SLICE_ROWS;
  CSRKSliced    *sl  = (CSRKSliced *)d->data;
  CSRKIdx        total;

  PetscFunctionBegin;
  PetscCall(CSRKMalloc(&sl->sliceptr, nsr + 1, bytes));
  PetscCall(CSRKSlicePointers(d->m, 1, d->rowptr, sl->sliceptr, &total, stream));
  PetscCheck(total == sl->pnnz, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Sliced storage of %" PetscInt_FMT " entries, %" PetscInt_FMT " counted", (PetscInt)total, sl->pnnz);
  PetscCall(CSRKMalloc(&sl->sval, sl->pnnz, bytes));
  PetscCallCUDA(cudaMemsetAsync(sl->sval, 0, sizeof(PetscScalar) * PetscMax(sl->pnnz, 1), stream));
  if (!d->npat) {
    PetscCall(CSRKMalloc(&sl->scol, sl->pnnz, bytes));
    PetscCallCUDA(cudaMemsetAsync(sl->scol, 0, sizeof(CSRKIdx) * PetscMax(sl->pnnz, 1), stream));
  }
  CSRKSliceMoveKernel<false><<<CSRKGrid(d->m), 256, 0, stream>>>(d->m, 1, d->rowptr, sl->sliceptr, d->colidx, d->val, sl->scol, sl->sval);
  PetscCallCUDA(cudaGetLastError());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The sliced kernel's rule: forced, or under auto rows of nearly equal length whose padding stays within
   CSRK_SLICED_MAX_PADDING (st->sliced, which the stream entry reads too) in a block of at least
   CSRK_GPU_MIN_ROWS_PER_SM rows a multiprocessor (st->fill) and no row too long for its nonzeros
   (CSRK_SLICED_TAIL_NNZ_PER_SM), in any numbering: there its coalesced loads and a thread
   per row beat the row kernels, with row patterns or plain columns (finite-element meshes in their own or a random
   numbering; rows in nodes without patterns, bs 3, take the block kernel first). In such a block it also takes rows
   whose lengths vary over the block (cv up to CSRK_MERGE_MIN_CV) but not inside its 32-row slices (the same padding
   bound) and no row of which is long (CSRKLongRowLength): P2 meshes, vertex rows of 65 entries numbered apart from
   edge rows of 19-27 (cv 0.49, padding 12.7 %). The row patterns are looked for on every block the kernel may take, as
   the block rule reads them (a small stencil takes the stream kernel, not nodes) */
PetscErrorCode CSRKSlicedPrepare(Mat A, CSRKDevice *d, const MatCSRKOptions *opt, CSRKPlanStats *st, size_t *bytes, cudaStream_t stream)
{
  const MatCSRKCUDAKernel kern   = opt->cuda_kernel;
  const PetscBool         padded  = (PetscBool)(kern == MAT_CSRK_CUDA_KERNEL_AUTO && d->mean > 0 && (PetscReal)st->pnnz <= CSRK_SLICED_MAX_PADDING * (PetscReal)d->nnz);
  const PetscBool         regular = (PetscBool)(padded && st->fill && (st->cv <= CSRK_GPU_SLICED_MAX_CV || (st->cv <= CSRK_MERGE_MIN_CV && CSRKLongRowLength(d->mean, d->maxlen) == CSRK_IDX_MAX)));
  const PetscBool         tail    = (PetscBool)((PetscInt64)d->maxlen * CSRK_SLICED_TAIL_NNZ_PER_SM * st->sms > (PetscInt64)d->nnz);
  size_t                  pbytes  = 0;

  PetscFunctionBegin;
  if (regular && tail) PetscCall(PetscInfo(A, "Sliced kernel not taken: a row of %" PetscInt_FMT " entries, beyond %g nonzeros a multiprocessor / %d\n", d->maxlen, (double)d->nnz / st->sms, CSRK_SLICED_TAIL_NNZ_PER_SM));
  st->sliced = (PetscBool)(kern == MAT_CSRK_CUDA_KERNEL_SLICED || (padded && st->cv <= CSRK_GPU_SLICED_MAX_CV));
  if ((st->sliced || regular) && opt->feature[MAT_CSRK_COMPRESS_INDICES] && opt->feature[MAT_CSRK_ROW_PATTERNS]) PetscCall(CSRKFindPatterns(A, d, &pbytes, stream));
  st->npat       = d->npat;
  st->slicedtake = (PetscBool)(kern == MAT_CSRK_CUDA_KERNEL_SLICED || (regular && !tail));
  if (st->slicedtake) *bytes += pbytes;
  else if (d->data) {
    /* row patterns of a block that another kernel takes */
    PetscCall(CSRKLayoutFree(&CSRKVariantSliced, d));
    d->npat = 0;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A block of 4 warps, a warp a super-row at a time: a unit of 4 super-rows (128 rows), so that the last wave of blocks
   is short and every multiprocessor holds many warps, and of 16 (each warp taking 4 in turn) on blocks of at least
   CSRK_SLICED_LONG_ROWS_PER_SM rows a multiprocessor, where the waves are many and the longer units a few percent
   faster (-mat_csrk_ssr_size sets it); one super-row at k < 3 */
static PetscErrorCode CSRKSlicedSetUp(Mat A, CSRKDevice *d, const MatCSRKOptions *opt, CSRKPlanStats *st, size_t *bytes, cudaStream_t stream)
{
  PetscInt    sr;
  CSRKSliced *sl;

  PetscFunctionBegin;
  if (!st->slicedtake) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(st->pnnz <= (PetscInt64)CSRK_IDX_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "The padded storage of the sliced kernel has %" PetscInt64_FMT " entries, beyond 32-bit indices: use another kernel (-mat_csrk_cuda_kernel)", st->pnnz);
  if (!d->data) PetscCall(PetscNew(&sl)); /* no row patterns */
  else sl = (CSRKSliced *)d->data;
  d->data   = sl;
  d->kernel = MAT_CSRK_CUDA_KERNEL_SLICED;
  d->ymap   = d->perm;
  sl->pnnz  = (PetscInt)st->pnnz;
  d->width  = 1;
  d->sr     = CSRK_SLICE_ROWS;
  MatCSRKGPUSizes(opt->cuda_kernel, PETSC_TRUE, d->mean, &sr, &d->ssr);
  if (d->m < (PetscInt64)CSRK_SLICED_LONG_ROWS_PER_SM * st->sms) d->ssr = 4;
  if (opt->ssr_size > 0) d->ssr = opt->ssr_size;
  if (opt->k < 3) d->ssr = 1;
  d->bx = 32;
  while (d->bx > 1 && (PetscInt)d->bx / 2 >= PetscMin(d->m, CSRK_SLICE_ROWS)) d->bx /= 2;
  d->by = opt->k == 3 ? PetscMax(1, 128 / d->bx) : 1;
  d->bz = 1;
  CSRKGroupCounts(d);
  PetscCall(CSRKBuildSliced(d, bytes, stream));
  if (d->npat) PetscCall(PetscInfo(A, "Sliced kernel over row patterns: %" PetscInt_FMT " distinct rows\n", d->npat));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CSRKSlicedRefresh(CSRKDevice *d, const PetscScalar *v, cudaStream_t stream)
{
  CSRKSliced *sl = (CSRKSliced *)d->data;

  PetscFunctionBegin;
  CSRKSliceMoveKernel<false><<<CSRKGrid(d->m), 256, 0, stream>>>(d->m, 1, d->rowptr, sl->sliceptr, NULL, (PetscScalar *)v, NULL, sl->sval);
  PetscCallCUDA(cudaGetLastError());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the CSR columns and values back from the storage over plain columns (over row patterns it keeps no columns, and the
   plan keeps the CSR arrays beside it) */
static PetscErrorCode CSRKSlicedToCSR(const CSRKDevice *d, CSRKIdx *colidx, PetscScalar *val, cudaStream_t stream)
{
  const CSRKSliced *sl = (const CSRKSliced *)d->data;

  PetscFunctionBegin;
  PetscCheck(sl->scol, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The sliced storage over row patterns keeps no columns");
  CSRKSliceMoveKernel<true><<<CSRKGrid(d->m), 256, 0, stream>>>(d->m, 1, d->rowptr, sl->sliceptr, colidx, val, sl->scol, sl->sval);
  PetscCallCUDA(cudaGetLastError());
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CSRKSlicedMult(const CSRKDevice *d, const PetscScalar *x, const PetscScalar *z, PetscScalar *y, cudaStream_t stream)
{
  const CSRKSliced *sl = (const CSRKSliced *)d->data;
  const dim3        block(d->bx, d->by, d->bz);
  const unsigned    grid = (unsigned)d->nunits;
  const CSRKGroups  g    = {(CSRKIdx)d->m, (CSRKIdx)d->sr, (CSRKIdx)d->ssr};
  const bool        general = d->ymap || z; /* else y = A x in y's own order: the plain store */

  PetscFunctionBegin;
  if (!d->nunits) PetscFunctionReturn(PETSC_SUCCESS);
  if (sl->rowpat) (d->mean > CSRK_SLICED_PLAIN_MAX_MEAN ? CSRKSlicedPatternKernel<true> : CSRKSlicedPatternKernel<false>)<<<grid, block, 0, stream>>>(g, sl->sliceptr, sl->rowpat, sl->patptr, sl->patoff, sl->sval, d->ymap, x, z, y);
  else (general ? CSRKSlicedPlainKernel<true> : CSRKSlicedPlainKernel<false>)<<<grid, block, 0, stream>>>(g, d->rowptr, sl->sliceptr, sl->scol, sl->sval, d->ymap, x, z, y);
  PetscCallCUDA(cudaGetLastError());
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CSRKSlicedDiagonal(CSRKDevice *d, PetscBool shift, PetscScalar a, PetscScalar *v, cudaStream_t stream)
{
  const CSRKSliced *sl = (const CSRKSliced *)d->data;

  PetscFunctionBegin;
  (shift ? CSRKSlicedDiagonalKernel<true> : CSRKSlicedDiagonalKernel<false>)<<<CSRKGrid(d->m), 256, 0, stream>>>(d->m, d->rowptr, sl->sliceptr, sl->scol, sl->rowpat, sl->patptr, sl->patoff, sl->sval, v, a);
  PetscCallCUDA(cudaGetLastError());
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CSRKSlicedScale(CSRKDevice *d, PetscScalar a, cudaStream_t stream)
{
  const CSRKSliced *sl = (const CSRKSliced *)d->data;

  PetscFunctionBegin;
  PetscCall(CSRKScaleValues(sl->sval, sl->pnnz, a, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void CSRKSlicedView(const CSRKDevice *d, char *buf, size_t len)
{
  const CSRKSliced *sl = (const CSRKSliced *)d->data;

  if (d->npat) snprintf(buf, len, "32-row slices column by column, row patterns (%" PetscInt_FMT " distinct rows), %" PetscInt_FMT " padded entries", d->npat, sl->pnnz);
  else snprintf(buf, len, "32-row slices column by column, 32-bit columns, %" PetscInt_FMT " padded entries", sl->pnnz);
}

const CSRKVariant CSRKVariantSliced = {MAT_CSRK_CUDA_KERNEL_SLICED, CSRK_CSR_ROWPTR, CSRKSlicedSetUp, CSRKSlicedRefresh, CSRKSlicedMult, CSRKSlicedDiagonal, CSRKSlicedScale, CSRKSlicedView, {offsetof(CSRKSliced, sliceptr), offsetof(CSRKSliced, sval), offsetof(CSRKSliced, scol), offsetof(CSRKSliced, rowpat), offsetof(CSRKSliced, patptr), offsetof(CSRKSliced, patoff)}, CSRKSlicedToCSR};
