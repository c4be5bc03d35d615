/*
   CSR-k SpMV kernels on NVIDIA GPUs and the device copy of the CSR-k structure.

   The device arrays are the host structure of MatCSRKStructureBuild() uploaded as they are (one structure
   build for every type). Kernels:
     scalar (GPUSpMV-3): a block per super-super-row (per super-row for k = 2), a thread per row; block
                         (x = rows of a super-row, y = super-rows of the super-super-row)
     vector (GPUSpMV-3.5): a sub-warp of w lanes per row, reduced with __shfl_down_sync inside the sub-warp;
                         block (x = w lanes, y = rows, z = super-rows)
     long rows:          rows longer than a threshold are skipped by the kernels above and cut into chunks of
                         4096 entries, a block per chunk, the chunks of a row summed in a fixed order (deterministic)
     stream (auto for rows longer than 8 that the sliced storage would pad too much): a block per super-super-row forms its products with coalesced
                         loads in shared memory, then a thread per row sums them
     sliced (auto for rows of nearly equal length): each super-row is stored column by column, padded to its longest
                         row (the SELL idea inside the CSR-k hierarchy); a warp per super-row, a thread per row, so
                         every load of a warp is coalesced and no lane idles on rows of equal length
     adaptive (forced): blocks of consecutive rows cut by
                         nonzeros, not rows (the launch grouping only: the CSR-k copy is the same); coalesced products
                         in shared memory, then a thread per short row and a warp per longer one, so a row of a few
                         hundred entries does not leave the block's other threads waiting
     merge (auto for irregular rows): rows and nonzeros together cut into equal tiles, a block each, which none of
                         the row-grouped kernels above can do for power-law rows (csrkcudamerge.cu)
     cusparse (forced, or irregular rows beyond the merge kernel's 32-bit coordinates): cuSPARSE's merge-based CSR
                         SpMV (CUSPARSE_SPMV_CSR_ALG2) over the same CSR arrays
   Every reduction has a fixed order, so results are bitwise reproducible run to run (CUSPARSE_SPMV_CSR_ALG2 is
   cuSPARSE's deterministic CSR algorithm).
*/
#include "../csrkimpl.h"
#include "csrkcuda.h"
#include "csrkcudadevice.cuh"
#include <petscdevice_cuda.h>
#include <cusparse.h>
#include <math.h>

#define CSRK_LONG_BLOCK 256
#define CSRK_STREAM_SMEM_MAX (160 * 1024)

PetscErrorCode CSRKGetStream(cudaStream_t *s)
{
  PetscFunctionBegin;
#if PETSC_VERSION_GE(3, 20, 0)
  PetscCall(PetscGetCurrentCUDAStream(s));
#else
  *s = PetscDefaultCudaStream;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* GPUSpMV-3: thread per row */
__global__ void CSRKScalarKernel(const CSRKIdx *__restrict__ unitptr, const CSRKIdx *__restrict__ srptr, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ colidx, const PetscScalar *__restrict__ val, const CSRKIdx *__restrict__ perm, CSRKIdx longlen, const PetscScalar *__restrict__ x, const PetscScalar *__restrict__ z, PetscScalar *__restrict__ y)
{
  const CSRKIdx u = blockIdx.x;
  for (CSRKIdx s = unitptr[u] + threadIdx.y; s < unitptr[u + 1]; s += blockDim.y) {
    for (CSRKIdx r = srptr[s] + threadIdx.x; r < srptr[s + 1]; r += blockDim.x) {
      const CSRKIdx q0 = rowptr[r], q1 = rowptr[r + 1];
      PetscScalar   sum = 0.0;
      if (q1 - q0 > longlen) continue;
      for (CSRKIdx q = q0; q < q1; q++) sum += val[q] * x[colidx[q]];
      CSRKStore(r, perm, z, y, sum);
    }
  }
}

/* GPUSpMV-3.5: a sub-warp of W lanes per row. The shuffles only involve the W lanes of one row, which all take
   the same path through the loops, so the partial mask is exact on Volta and later. */
template <int W>
__global__ void CSRKVectorKernel(const CSRKIdx *__restrict__ unitptr, const CSRKIdx *__restrict__ srptr, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ colidx, const PetscScalar *__restrict__ val, const CSRKIdx *__restrict__ perm, CSRKIdx longlen, const PetscScalar *__restrict__ x, const PetscScalar *__restrict__ z, PetscScalar *__restrict__ y)
{
  const CSRKIdx  u    = blockIdx.x;
  const unsigned lane = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u;
  const unsigned mask = (W == 32 ? 0xffffffffu : ((1u << W) - 1u) << (lane & ~(unsigned)(W - 1)));
  for (CSRKIdx s = unitptr[u] + threadIdx.z; s < unitptr[u + 1]; s += blockDim.z) {
    for (CSRKIdx r = srptr[s] + threadIdx.y; r < srptr[s + 1]; r += blockDim.y) {
      const CSRKIdx q0 = rowptr[r], q1 = rowptr[r + 1];
      PetscScalar   sum = 0.0;
      if (q1 - q0 > longlen) continue; /* the same for the W lanes of the row */
      for (CSRKIdx q = q0 + threadIdx.x; q < q1; q += W) sum += val[q] * x[colidx[q]];
#pragma unroll
      for (int d = W / 2; d > 0; d >>= 1) sum += CSRKShflDown(mask, sum, d, W);
      if (threadIdx.x == 0) CSRKStore(r, perm, z, y, sum);
    }
  }
}

/* Stream kernel for regular rows of moderate length: the block's super-super-row is contiguous in the CSR arrays, so
   its products val[q] * x[col[q]] are formed with fully coalesced loads into shared memory, then each thread sums
   one row from there in order (deterministic). It avoids the idle lanes a fixed sub-warp leaves on rows of, e.g.,
   27 entries, and the uncoalesced loads of a thread per row. */
__global__ void CSRKStreamKernel(const CSRKIdx *__restrict__ unitptr, const CSRKIdx *__restrict__ srptr, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ colidx, const PetscScalar *__restrict__ val, const CSRKIdx *__restrict__ perm, CSRKIdx longlen, const PetscScalar *__restrict__ x, const PetscScalar *__restrict__ z, PetscScalar *__restrict__ y)
{
  extern __shared__ unsigned char csrk_smem[];
  PetscScalar  *prod = (PetscScalar *)csrk_smem;
  const CSRKIdx u = blockIdx.x, r0 = srptr[unitptr[u]], r1 = srptr[unitptr[u + 1]], q0 = rowptr[r0], q1 = rowptr[r1];
  const unsigned nt = blockDim.x;
  for (CSRKIdx q = q0 + threadIdx.x; q < q1; q += nt) prod[q - q0] = val[q] * x[colidx[q]];
  __syncthreads();
  for (CSRKIdx r = r0 + threadIdx.x; r < r1; r += nt) {
    const CSRKIdx a = rowptr[r] - q0, b = rowptr[r + 1] - q0;
    PetscScalar   sum = 0.0;
    if (b - a > longlen) continue;
    for (CSRKIdx q = a; q < b; q++) sum += prod[q];
    CSRKStore(r, perm, z, y, sum);
  }
}

/* Adaptive kernel: unit u is the rows [unitrow[u], unitrow[u + 1]), with at most CSRK_ADAPTIVE_NNZ nonzeros and
   none longer than longlen, or a single row longer than longlen, which the long-row kernels take. The products go to shared memory with coalesced
   loads; rows of up to 32 entries are then summed by a thread each, longer ones by a warp each (strided partial
   sums, then a shuffle reduction): the order of every sum is fixed by the row's length alone. */
#define CSRK_ADAPTIVE_NNZ     1024
#define CSRK_ADAPTIVE_THREADS 128
#define CSRK_ADAPTIVE_ROWS    256
__global__ void __launch_bounds__(CSRK_ADAPTIVE_THREADS) CSRKAdaptiveKernel(const CSRKIdx *__restrict__ unitrow, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ colidx, const PetscScalar *__restrict__ val, const CSRKIdx *__restrict__ perm, CSRKIdx longlen, const PetscScalar *__restrict__ x, const PetscScalar *__restrict__ z, PetscScalar *__restrict__ y)
{
  __shared__ PetscScalar prod[CSRK_ADAPTIVE_NNZ];
  const CSRKIdx  r0 = unitrow[blockIdx.x], r1 = unitrow[blockIdx.x + 1], q0 = rowptr[r0], q1 = rowptr[r1];
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  unsigned       turn = 0;

  if (r1 - r0 == 1 && q1 - q0 > longlen) return; /* a long row alone (uniform over the block) */
  for (CSRKIdx q = q0 + threadIdx.x; q < q1; q += blockDim.x) prod[q - q0] = val[q] * x[colidx[q]];
  __syncthreads();
  for (CSRKIdx r = r0 + threadIdx.x; r < r1; r += blockDim.x) {
    const CSRKIdx a = rowptr[r] - q0, b = rowptr[r + 1] - q0;
    PetscScalar   sum = 0.0;
    if (b - a > 32) continue;
    for (CSRKIdx q = a; q < b; q++) sum += prod[q];
    CSRKStore(r, perm, z, y, sum);
  }
  /* the longer rows, dealt to the warps in turn; every warp scans the same rows, so the turns agree */
  for (CSRKIdx base = r0; base < r1; base += 32) {
    const CSRKIdx r    = base + (CSRKIdx)lane;
    unsigned      mask = __ballot_sync(0xffffffffu, r < r1 && rowptr[r + 1] - rowptr[r] > 32);
    while (mask) {
      const CSRKIdx row = base + (CSRKIdx)(__ffs(mask) - 1);
      mask &= mask - 1;
      if (turn++ % nwarps != warp) continue;
      {
        const CSRKIdx a = rowptr[row] - q0, b = rowptr[row + 1] - q0;
        PetscScalar   sum = 0.0;
        for (CSRKIdx q = a + (CSRKIdx)lane; q < b; q += 32) sum += prod[q];
        for (int d = 16; d > 0; d >>= 1) sum += CSRKShflDown(0xffffffffu, sum, d, 32);
        if (!lane) CSRKStore(row, perm, z, y, sum);
      }
    }
  }
}

/* Column indices of the sliced storage. Super-row s keeps them in one of three codes, fixed per super-row so that a
   warp never diverges on it: 8- or 16-bit offsets from the smallest column of each entry position j (sbase), or
   32-bit columns where the offsets do not fit. On a stencil or a banded matrix the 32 rows of a super-row have
   nearly the same column pattern shifted by one, so entry position j spans a few dozen columns: most super-rows
   take 1 byte per index instead of 4, which cuts the bytes of a nonzero from 12 to about 9. */
#define CSRK_SLICE_U8  0u
#define CSRK_SLICE_U16 1u
#define CSRK_SLICE_U32 2u

template <typename T>
__device__ __forceinline__ CSRKIdx CSRKSliceColumn(const unsigned char *blk, const CSRKIdx *__restrict__ base, CSRKIdx j, CSRKIdx p)
{
  const CSRKIdx v = (CSRKIdx)__ldcs((const T *)blk + p);
  return sizeof(T) == sizeof(CSRKIdx) ? v : base[j] + v;
}

/* Entries a thread loads before it multiplies: its values and indices first, then the x they point to, so that a
   batch costs two memory round trips whatever its length (a row of 7 entries is one batch) */
#ifndef CSRK_SLICED_BATCH
  #define CSRK_SLICED_BATCH 4
#endif
/* blocks of 128 threads an SM must hold: caps the registers of the sliced kernel (occupancy against batch depth) */
#ifndef CSRK_SLICED_MINBLOCKS
  #define CSRK_SLICED_MINBLOCKS 10
#endif

/* entry j of a row lies at p0 + j h of its super-row (h rows), in the values (sval: the super-row's) as in the
   indices; the sum runs in the order of j, as a plain loop would */
template <typename T>
__device__ __forceinline__ PetscScalar CSRKSlicedRowDot(const unsigned char *blk, const CSRKIdx *__restrict__ base, const PetscScalar *__restrict__ sval, CSRKIdx p0, CSRKIdx h, CSRKIdx len, const PetscScalar *__restrict__ x)
{
  PetscScalar sum = 0.0;
  for (CSRKIdx j0 = 0; j0 < len; j0 += CSRK_SLICED_BATCH) {
    PetscScalar v[CSRK_SLICED_BATCH];
    CSRKIdx     c[CSRK_SLICED_BATCH];
#pragma unroll
    for (int k = 0; k < CSRK_SLICED_BATCH; k++) {
      const CSRKIdx j = j0 + k, p = p0 + j * h;
      if (j < len) {
        v[k] = CSRKLoadStreamed(sval + p);
        c[k] = CSRKSliceColumn<T>(blk, base, j, p);
      }
    }
#pragma unroll
    for (int k = 0; k < CSRK_SLICED_BATCH; k++)
      if (j0 + k < len) sum += v[k] * x[c[k]];
  }
  return sum;
}

/* Sliced kernel: a block per super-super-row, a warp per super-row (blockDim.y super-rows at a time), a thread per row.
   Entry j of row i of super-row s is at sliceptr[s] + j h + i (h = rows of s) among the values and at j h + i among
   the super-row's indices; a thread stops at its own row length, so the padding is never read or multiplied (an Inf
   or NaN in x cannot leak into other rows through it). */
__global__ void __launch_bounds__(128, CSRK_SLICED_MINBLOCKS) CSRKSlicedKernel(const CSRKIdx *__restrict__ unitptr, const CSRKIdx *__restrict__ srptr, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ sliceptr, const unsigned *__restrict__ sidxptr, const unsigned char *__restrict__ sidx, const CSRKIdx *__restrict__ sbaseptr, const CSRKIdx *__restrict__ sbase, const PetscScalar *__restrict__ sval, const CSRKIdx *__restrict__ perm, const PetscScalar *__restrict__ x, const PetscScalar *__restrict__ z, PetscScalar *__restrict__ y)
{
  const CSRKIdx u = blockIdx.x;
  for (CSRKIdx s = unitptr[u] + threadIdx.y; s < unitptr[u + 1]; s += blockDim.y) {
    const CSRKIdx        r0 = srptr[s], h = srptr[s + 1] - r0;
    const unsigned       code = sidxptr[s] & 3u;
    const unsigned char *blk  = sidx + 32 * (size_t)(sidxptr[s] >> 2);
    const CSRKIdx       *base = sbase + sbaseptr[s];
    const PetscScalar   *v    = sval + sliceptr[s];
    for (CSRKIdx i = threadIdx.x; i < h; i += blockDim.x) {
      const CSRKIdx len = rowptr[r0 + i + 1] - rowptr[r0 + i];
      PetscScalar   sum;
      if (code == CSRK_SLICE_U8) sum = CSRKSlicedRowDot<unsigned char>(blk, base, v, i, h, len, x);
      else if (code == CSRK_SLICE_U16) sum = CSRKSlicedRowDot<unsigned short>(blk, base, v, i, h, len, x);
      else sum = CSRKSlicedRowDot<CSRKIdx>(blk, base, v, i, h, len, x);
      CSRKStore(r0 + i, perm, z, y, sum);
    }
  }
}

/* The same over plain 32-bit columns laid out as the values (column of entry p at scol[sliceptr[s] + p]): for short
   rows, where the batches of the kernel above buy nothing and its extra registers cost occupancy (7-point stencil on an
   H200, docs/tuning.md) */
__global__ void CSRKSlicedPlainKernel(const CSRKIdx *__restrict__ unitptr, const CSRKIdx *__restrict__ srptr, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ sliceptr, const CSRKIdx *__restrict__ scol, const PetscScalar *__restrict__ sval, const CSRKIdx *__restrict__ perm, const PetscScalar *__restrict__ x, const PetscScalar *__restrict__ z, PetscScalar *__restrict__ y)
{
  const CSRKIdx u = blockIdx.x;
  for (CSRKIdx s = unitptr[u] + threadIdx.y; s < unitptr[u + 1]; s += blockDim.y) {
    const CSRKIdx r0 = srptr[s], h = srptr[s + 1] - r0, base = sliceptr[s];
    for (CSRKIdx i = threadIdx.x; i < h; i += blockDim.x) {
      const CSRKIdx len = rowptr[r0 + i + 1] - rowptr[r0 + i];
      PetscScalar   sum = 0.0;
      CSRKIdx       q   = base + i;
      /* unrolled so that several loads of a thread are in flight at once */
#pragma unroll 4
      for (CSRKIdx j = 0; j < len; j++, q += h) sum += CSRKLoadStreamed(sval + q) * x[__ldcs(scol + q)];
      CSRKStore(r0 + i, perm, z, y, sum);
    }
  }
}

/* The sliced kernel over row patterns (MatCSRKSetRowPatterns()): the offsets from the diagonal of row r are pattern
   rowpat[r] of a small dictionary that the warps read through the L1 cache, where the 32 rows of a super-row of a
   stencil mostly share one pattern (a broadcast). No column index or row pointer is read: 2 bytes per row instead of
   about 1 per entry (codes) or 4 (plain columns), plus 8 of row pointer. BATCHED: loads in batches of
   CSRK_SLICED_BATCH entries, as CSRKSlicedRowDot (rows longer than CSRK_SLICED_PLAIN_MAX_MEAN on average); else the
   loop of CSRKSlicedPlainKernel. */
template <bool BATCHED>
__global__ void __launch_bounds__(128, CSRK_SLICED_MINBLOCKS) CSRKSlicedPatternKernel(const CSRKIdx *__restrict__ unitptr, const CSRKIdx *__restrict__ srptr, const CSRKIdx *__restrict__ sliceptr, const uint16_t *__restrict__ rowpat, const CSRKIdx *__restrict__ patptr, const int32_t *__restrict__ patoff, const PetscScalar *__restrict__ sval, const CSRKIdx *__restrict__ perm, const PetscScalar *__restrict__ x, const PetscScalar *__restrict__ z, PetscScalar *__restrict__ y)
{
  const CSRKIdx u = blockIdx.x;
  for (CSRKIdx s = unitptr[u] + threadIdx.y; s < unitptr[u + 1]; s += blockDim.y) {
    const CSRKIdx      r0 = srptr[s], h = srptr[s + 1] - r0;
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

/* Long rows are cut into chunks of CSRK_LONG_CHUNK entries, a block per chunk (so that one row of a million entries
   is spread over the whole GPU): warp shuffles, then a fixed-order sum of the warp results into part[c]. A second
   kernel adds the chunks of each row in order, so the result does not depend on the scheduling. */
#define CSRK_LONG_CHUNK 4096
__global__ void CSRKLongChunkKernel(const CSRKIdx *__restrict__ chunkq, const CSRKIdx *__restrict__ colidx, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, PetscScalar *__restrict__ part)
{
  __shared__ PetscScalar warpsum[CSRK_LONG_BLOCK / 32];
  const CSRKIdx          q0 = chunkq[2 * blockIdx.x], q1 = chunkq[2 * blockIdx.x + 1];
  PetscScalar            sum = 0.0;
  for (CSRKIdx q = q0 + threadIdx.x; q < q1; q += blockDim.x) sum += val[q] * x[colidx[q]];
  for (int d = 16; d > 0; d >>= 1) sum += CSRKShflDown(0xffffffffu, sum, d, 32);
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

__global__ void CSRKGatherKernel(PetscInt n, const CSRKIdx *__restrict__ perm, const PetscScalar *__restrict__ x, PetscScalar *__restrict__ xp)
{
  for (PetscInt i = blockIdx.x * (PetscInt)blockDim.x + threadIdx.x; i < n; i += (PetscInt)blockDim.x * gridDim.x) xp[i] = x[perm[i]];
}

__global__ void CSRKScatterKernel(PetscInt n, const CSRKIdx *__restrict__ perm, const PetscScalar *__restrict__ yp, const PetscScalar *__restrict__ z, PetscScalar *__restrict__ y)
{
  for (PetscInt i = blockIdx.x * (PetscInt)blockDim.x + threadIdx.x; i < n; i += (PetscInt)blockDim.x * gridDim.x) y[perm[i]] = z ? z[perm[i]] + yp[i] : yp[i];
}

__global__ void CSRKMapValuesKernel(PetscInt n, const CSRKIdx *__restrict__ map, const PetscScalar *__restrict__ v, PetscScalar *__restrict__ w)
{
  for (PetscInt i = blockIdx.x * (PetscInt)blockDim.x + threadIdx.x; i < n; i += (PetscInt)blockDim.x * gridDim.x) w[i] = v[map[i]];
}

__global__ void CSRKPlaceValuesKernel(PetscInt n, const CSRKIdx *__restrict__ pos, const PetscScalar *__restrict__ v, PetscScalar *__restrict__ w)
{
  for (PetscInt i = blockIdx.x * (PetscInt)blockDim.x + threadIdx.x; i < n; i += (PetscInt)blockDim.x * gridDim.x) w[pos[i]] = v[i];
}

/* diag(A) in the user's ordering by a scan of each stored row for its diagonal column: column i of internal row i
   when the columns are renumbered with the rows (or not permuted), column perm[i] when only the rows are */
__global__ void CSRKDiagonalKernel(PetscInt m, PetscBool rowperm, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ colidx, const PetscScalar *__restrict__ val, const CSRKIdx *__restrict__ perm, PetscScalar *__restrict__ y)
{
  for (PetscInt i = blockIdx.x * (PetscInt)blockDim.x + threadIdx.x; i < m; i += (PetscInt)blockDim.x * gridDim.x) {
    const CSRKIdx target = rowperm ? perm[i] : (CSRKIdx)i;
    PetscScalar   v      = 0.0;
    for (CSRKIdx q = rowptr[i]; q < rowptr[i + 1]; q++)
      if (colidx[q] == target) {
        v = val[q];
        break;
      }
    y[perm ? perm[i] : i] = v;
  }
}

/* the same over the sliced storage: a thread per row of each super-row */
__global__ void CSRKSlicedDiagonalKernel(PetscInt nsr, PetscBool rowperm, const CSRKIdx *__restrict__ srptr, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ sliceptr, const unsigned *__restrict__ sidxptr, const unsigned char *__restrict__ sidx, const CSRKIdx *__restrict__ sbaseptr, const CSRKIdx *__restrict__ sbase, const PetscScalar *__restrict__ sval, const CSRKIdx *__restrict__ perm, PetscScalar *__restrict__ y)
{
  for (PetscInt s = blockIdx.x; s < nsr; s += gridDim.x) {
    const CSRKIdx        r0 = srptr[s], h = srptr[s + 1] - r0;
    const unsigned       code = sidxptr[s] & 3u;
    const unsigned char *blk  = sidx + 32 * (size_t)(sidxptr[s] >> 2);
    const CSRKIdx       *base = sbase + sbaseptr[s];
    for (CSRKIdx i = threadIdx.x; i < h; i += blockDim.x) {
      const CSRKIdx r = r0 + i, len = rowptr[r + 1] - rowptr[r], target = rowperm ? perm[r] : r;
      PetscScalar   v = 0.0;
      for (CSRKIdx j = 0, p = i; j < len; j++, p += h) {
        const CSRKIdx c = code == CSRK_SLICE_U8 ? CSRKSliceColumn<unsigned char>(blk, base, j, p) : code == CSRK_SLICE_U16 ? CSRKSliceColumn<unsigned short>(blk, base, j, p) : CSRKSliceColumn<CSRKIdx>(blk, base, j, p);
        if (c == target) {
          v = sval[sliceptr[s] + p];
          break;
        }
      }
      y[perm ? perm[r] : r] = v;
    }
  }
}

static inline unsigned CSRKGrid(PetscInt n)
{
  return (unsigned)PetscMax(1, PetscMin((n + 255) / 256, 65535 * 4));
}

template <typename T>
static PetscErrorCode CSRKUpload(T **d, const T *h, PetscInt n, size_t *bytes)
{
  PetscFunctionBegin;
  PetscCallCUDA(cudaMalloc((void **)d, sizeof(T) * PetscMax(n, 1)));
  if (h && n) PetscCallCUDA(cudaMemcpy(*d, h, sizeof(T) * n, cudaMemcpyHostToDevice));
  *bytes += sizeof(T) * n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define CSRKCudaFree(p) \
  do { \
    if (p) PetscCallCUDA(cudaFree(p)); \
    (p) = NULL; \
  } while (0)

/* The cusparse kernel: cuSPARSE's handle, the matrix over the device CSR arrays (values updated in place by value
   uploads) and the vectors, whose pointers are set at each product; yperm holds A x in the internal order when the
   rows are reordered; preprocessed: the buffer holds the algorithm's analysis of the pattern */
struct _n_CSRKCusparse {
  cusparseHandle_t     handle;
  cusparseSpMatDescr_t mat;
  cusparseDnVecDescr_t vx, vy;
  void                *buffer;
  PetscScalar         *yperm;
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
  if (d->perm) {
    PetscCallCUDA(cudaMalloc((void **)&sp->yperm, sizeof(PetscScalar) * PetscMax(d->m, 1)));
    *bytes += sizeof(PetscScalar) * PetscMax(d->m, 1);
  }
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
  CSRKCudaFree(sp->yperm);
  PetscCall(PetscFree(d->sp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = A x (+ z) with cuSPARSE: into y directly (z copied there first and added by beta = 1), or into yperm and then
   through the row permutation */
static PetscErrorCode CSRKCusparseMult(const CSRKDevice *d, const PetscScalar *x, const PetscScalar *z, PetscScalar *y, cudaStream_t stream)
{
  CSRKCusparse      sp  = d->sp;
  const PetscScalar one = 1.0, zero = 0.0;
  PetscScalar      *out = d->perm ? sp->yperm : y;
  PetscBool         add = (PetscBool)(z && !d->perm);

  PetscFunctionBegin;
  if (add && z != y) PetscCallCUDA(cudaMemcpyAsync(y, z, sizeof(PetscScalar) * d->m, cudaMemcpyDeviceToDevice, stream));
  PetscCallCUSPARSE(cusparseSetStream(sp->handle, stream));
  PetscCallCUSPARSE(cusparseDnVecSetValues(sp->vx, (void *)x));
  PetscCallCUSPARSE(cusparseDnVecSetValues(sp->vy, out));
#if CUDART_VERSION >= 12040
  /* the row partition of ALG2 once per pattern instead of in every product (cuSPARSE 12.4 and later; PETSc's
     aijcusparse does the same for its algorithm); the descriptors have their first real vectors by now */
  if (!sp->preprocessed) {
    PetscCallCUSPARSE(cusparseSpMV_preprocess(sp->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, sp->mat, sp->vx, add ? &one : &zero, sp->vy, CSRK_CUDA_SCALAR, CUSPARSE_SPMV_CSR_ALG2, sp->buffer));
    sp->preprocessed = PETSC_TRUE;
  }
#endif
  PetscCallCUSPARSE(cusparseSpMV(sp->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, sp->mat, sp->vx, add ? &one : &zero, sp->vy, CSRK_CUDA_SCALAR, CUSPARSE_SPMV_CSR_ALG2, sp->buffer));
  if (d->perm) {
    CSRKScatterKernel<<<CSRKGrid(d->m), 256, 0, stream>>>(d->m, d->perm, sp->yperm, z, y);
    PetscCallCUDA(cudaGetLastError());
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCSRKCUDADeviceDestroy(CSRKDevice **dev)
{
  CSRKDevice *d = *dev;

  PetscFunctionBegin;
  if (!d) PetscFunctionReturn(PETSC_SUCCESS);
  CSRKCudaFree(d->rowptr);
  CSRKCudaFree(d->colidx);
  CSRKCudaFree(d->val);
  CSRKCudaFree(d->unitptr);
  CSRKCudaFree(d->srptr);
  CSRKCudaFree(d->perm);
  CSRKCudaFree(d->longrows);
  CSRKCudaFree(d->longrowchunk);
  CSRKCudaFree(d->longchunkq);
  CSRKCudaFree(d->longpart);
  CSRKCudaFree(d->xwork);
  CSRKCudaFree(d->ywork);
  CSRKCudaFree(d->xtwork);
  CSRKCudaFree(d->sliceptr);
  CSRKCudaFree(d->sidxptr);
  CSRKCudaFree(d->sidx);
  CSRKCudaFree(d->sbaseptr);
  CSRKCudaFree(d->sbase);
  CSRKCudaFree(d->spos);
  CSRKCudaFree(d->sval);
  CSRKCudaFree(d->rowpat);
  CSRKCudaFree(d->patptr);
  CSRKCudaFree(d->patoff);
  CSRKCudaFree(d->crows);
  CSRKCudaFree(d->crowptr);
  CSRKCudaFree(d->cunitptr);
  CSRKCudaFree(d->csrptr);
  PetscCall(CSRKCusparseDestroy(d));
  CSRKCudaFree(d->mtile);
  CSRKCudaFree(d->mcarryrow);
  CSRKCudaFree(d->mcarryval);
  CSRKCudaFree(d->tmap);
  PetscCall(MatCSRKCUDADeviceDestroy(&d->t));
  PetscCall(PetscFree(*dev));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* lanes per row of the vector kernel for a mean row length (a thread per row up to 8 entries) */
static inline PetscInt CSRKWidthForMean(PetscReal mean)
{
  return mean <= 8 ? 1 : mean <= 16 ? 4 : mean <= 32 ? 8 : mean <= 64 ? 16 : 32;
}

/* Rows of up to this mean length use the sliced kernel over plain 32-bit columns on a device with at least
   CSRK_SLICED_PLAIN_MIN_BW_PER_SM GB/s of peak memory bandwidth per multiprocessor: there the decode of the 8/16-bit
   codes costs more than the bytes it saves: on the 7-point stencil the H200 ran the plain columns faster and the
   H100 SXM, of less bandwidth per multiprocessor, the codes; longer rows (27-point, elasticity) were faster with the
   codes on both (docs/tuning.md). */
#ifndef CSRK_SLICED_PLAIN_MAX_MEAN
  #define CSRK_SLICED_PLAIN_MAX_MEAN 12
#endif
#ifndef CSRK_SLICED_PLAIN_MIN_BW_PER_SM
  #define CSRK_SLICED_PLAIN_MIN_BW_PER_SM 30.0
#endif

/* Peak memory bandwidth of the current device per multiprocessor in GB/s: memory clock x bus width, two transfers
   a clock */
static PetscErrorCode CSRKDeviceBandwidthPerSM(PetscReal *gbs)
{
  int dev, khz, bits, sms;

  PetscFunctionBegin;
  PetscCallCUDA(cudaGetDevice(&dev));
  PetscCallCUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev));
  PetscCallCUDA(cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, dev));
  PetscCallCUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  *gbs = 2.0 * (PetscReal)khz * 1e3 * (PetscReal)bits / 8.0 / 1e9 / (PetscReal)PetscMax(sms, 1);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Padded size of the sliced storage: super-row s takes (rows of s) x (its longest row) entries, rounded up to 32 so
   that every super-row starts on an aligned segment */
static PetscInt64 CSRKSlicedOffsets(const MatCSRKStructure *st, CSRKIdx *sliceptr, PetscInt *maxh)
{
  PetscInt64 off = 0;

  *maxh = 0;
  for (PetscInt s = 0; s < st->nsr; s++) {
    const PetscInt r0 = st->srptr[s], r1 = st->srptr[s + 1];
    PetscInt       w  = 0;
    for (PetscInt r = r0; r < r1; r++) w = PetscMax(w, (PetscInt)(st->rowptr[r + 1] - st->rowptr[r]));
    if (sliceptr) sliceptr[s] = (CSRKIdx)off;
    off += (((PetscInt64)w * (r1 - r0) + 31) / 32) * 32;
    *maxh = PetscMax(*maxh, r1 - r0);
  }
  if (sliceptr) sliceptr[st->nsr] = (CSRKIdx)off;
  return off;
}

/* Rows longer than this go to the long-row kernels (CSRK_IDX_MAX: none is): far beyond the mean, where one sub-warp
   or thread would serialise a whole block (forced > 0: -mat_csrk_cuda_long) */
static inline PetscInt CSRKLongRowLength(PetscReal mean, PetscInt maxlen, PetscInt forced)
{
  const PetscInt len = forced > 0 ? forced : PetscMax(512, (PetscInt)(16 * mean));
  return maxlen <= len ? CSRK_IDX_MAX : len;
}

/* Kernel and launch shape from the row statistics (the constant-time model of docs/tuning.md) */
static PetscErrorCode CSRKChooseKernel(CSRKDevice *d, const MatCSRKStructure *st, const MatCSRKOptions *opt)
{
  PetscReal mean = st->m ? (PetscReal)st->nnz / st->m : 0, var = 0, cv;
  PetscInt  maxlen = 0, maxu = 0;
  PetscBool fits;

  PetscFunctionBegin;
  for (PetscInt r = 0; r < st->m; r++) {
    const PetscInt len = st->rowptr[r + 1] - st->rowptr[r];
    maxlen             = PetscMax(maxlen, len);
    var += ((PetscReal)len - mean) * ((PetscReal)len - mean);
  }
  var       = st->m ? var / st->m : 0;
  cv        = mean > 0 ? PetscSqrtReal(var) / mean : 0;
  d->mean   = mean;
  d->var    = var;
  d->maxlen = maxlen;
  d->longlen = CSRKLongRowLength(mean, maxlen, opt->cuda_long);
  d->width = opt->cuda_width;
  d->smem   = 0;
  if (opt->cuda_kernel == MAT_CSRK_CUDA_KERNEL_SLICED || (opt->cuda_kernel == MAT_CSRK_CUDA_KERNEL_AUTO && !d->width && mean > 0 && cv <= CSRK_GPU_SLICED_MAX_CV)) {
    PetscInt         maxh;
    const PetscInt64 pnnz = CSRKSlicedOffsets(st, NULL, &maxh);

    /* auto: only where the padding stays small */
    if (opt->cuda_kernel == MAT_CSRK_CUDA_KERNEL_SLICED || (PetscReal)pnnz <= 1.25 * (PetscReal)st->nnz) {
      PetscCheck(pnnz <= CSRK_IDX_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "The padded storage of the sliced kernel has %" PetscInt64_FMT " entries, beyond 32-bit indices: use another kernel (-mat_csrk_cuda_kernel)", pnnz);
      d->kernel  = MAT_CSRK_CUDA_KERNEL_SLICED;
      d->pnnz    = (PetscInt)pnnz;
      /* short rows on a device of fast memory: plain columns and the simpler loop (see CSRKSlicedPlainKernel) */
      if (opt->compress && mean <= CSRK_SLICED_PLAIN_MAX_MEAN) {
        PetscReal gbs;
        PetscCall(CSRKDeviceBandwidthPerSM(&gbs));
        d->sliced_plain = (PetscBool)(gbs >= CSRK_SLICED_PLAIN_MIN_BW_PER_SM);
        PetscCall(PetscInfo(NULL, "Sliced kernel, mean row length %g, %g GB/s of peak memory bandwidth per multiprocessor: %s\n", (double)mean, (double)gbs, d->sliced_plain ? "plain 32-bit columns" : "8/16-bit column codes"));
      } else d->sliced_plain = (PetscBool)!opt->compress;
      d->width   = 1;
      d->longlen = CSRK_IDX_MAX; /* the padding already covers every row */
      d->bx      = 32;
      while (d->bx > 1 && (PetscInt)d->bx / 2 >= maxh) d->bx /= 2;
      d->by = st->k == 3 ? PetscMax(1, 128 / d->bx) : 1;
      d->bz = 1;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  {
    /* the stream kernel needs a block's nonzeros in shared memory */
    for (PetscInt u = 0; u < d->nunits; u++) {
      const PetscInt s0 = st->k == 3 ? st->ssrptr[u] : u, s1 = st->k == 3 ? st->ssrptr[u + 1] : u + 1;
      maxu              = PetscMax(maxu, st->rowptr[st->srptr[s1]] - st->rowptr[st->srptr[s0]]);
    }
    fits = (PetscBool)((size_t)maxu * sizeof(PetscScalar) <= CSRK_STREAM_SMEM_MAX);
    /* irregular rows (a coefficient of variation beyond the sliced kernel's): the merge kernel, which gives every
       block the same number of rows plus nonzeros, as long as that count fits its 32-bit path coordinates. Not where
       the stream kernel holds short rows (mean <= 8: faster on the small graphs bayer10 and PGPgiantcompo, the merge
       kernel on ca-CondMat and astro-ph with means 9-16; docs/history/sessions.md), nor for blocks of mostly empty
       rows (the off-process block of an MPI matrix), whose products run over the non-empty rows only. */
    if (opt->cuda_kernel == MAT_CSRK_CUDA_KERNEL_MERGE || (opt->cuda_kernel == MAT_CSRK_CUDA_KERNEL_AUTO && !d->width && cv > CSRK_GPU_SLICED_MAX_CV && !(fits && mean <= 8) && 2 * st->nonzerorows > st->m && (PetscInt64)st->m + st->nnz <= CSRK_IDX_MAX / 2)) {
      d->kernel  = MAT_CSRK_CUDA_KERNEL_MERGE;
      d->width   = 0;
      d->longlen = CSRK_IDX_MAX; /* a long row is spread over the tiles like any other */
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  if (opt->cuda_kernel == MAT_CSRK_CUDA_KERNEL_STREAM || (opt->cuda_kernel == MAT_CSRK_CUDA_KERNEL_AUTO && !d->width && (mean > 8 || cv > CSRK_GPU_SLICED_MAX_CV))) {
    if (fits) {
      d->kernel = MAT_CSRK_CUDA_KERNEL_STREAM;
      d->width  = 0;
      d->smem   = (size_t)PetscMax(maxu, 1) * sizeof(PetscScalar);
      d->bx     = 128;
      d->by = d->bz = 1;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCheck(opt->cuda_kernel != MAT_CSRK_CUDA_KERNEL_STREAM, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "The stream kernel needs the nonzeros of a super-super-row (%" PetscInt_FMT ") in shared memory: use smaller sizes (-mat_csrk_sr_size, -mat_csrk_ssr_size)", maxu);
  }
  /* cuSPARSE's merge-based kernel: forced, or irregular rows beyond the merge kernel's 32-bit path coordinates */
  if (opt->cuda_kernel == MAT_CSRK_CUDA_KERNEL_CUSPARSE || (opt->cuda_kernel == MAT_CSRK_CUDA_KERNEL_AUTO && !d->width && cv > CSRK_GPU_SLICED_MAX_CV)) {
    d->kernel  = MAT_CSRK_CUDA_KERNEL_CUSPARSE;
    d->width   = 0;
    d->longlen = CSRK_IDX_MAX;
    d->bx = d->by = d->bz = 1;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* forced: blocks cut by nonzeros instead, the rows longer than a block's nonzeros to the long-row kernels */
  if (opt->cuda_kernel == MAT_CSRK_CUDA_KERNEL_ADAPTIVE) {
    d->kernel  = MAT_CSRK_CUDA_KERNEL_ADAPTIVE;
    d->width   = 0;
    d->longlen = PetscMin(d->longlen, CSRK_ADAPTIVE_NNZ);
    if (maxlen <= d->longlen) d->longlen = CSRK_IDX_MAX;
    d->bx = CSRK_ADAPTIVE_THREADS;
    d->by = d->bz = 1;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (d->width <= 0) d->width = opt->cuda_kernel == MAT_CSRK_CUDA_KERNEL_VECTOR ? 4 : CSRKWidthForMean(mean);
  PetscCheck(d->width == 1 || d->width == 2 || d->width == 4 || d->width == 8 || d->width == 16 || d->width == 32, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Sub-warp width (-mat_csrk_cuda_width) must be 1, 2, 4, 8, 16 or 32, not %" PetscInt_FMT, d->width);
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
    d->bz = d->width == 4 ? 12 : d->width == 8 ? 8 : d->width == 16 ? 4 : (unsigned)PetscMax(1, 512 / (d->width * 8));
  }
  if (st->k != 3) {
    /* one super-row per block: all threads along the rows */
    d->by *= d->width == 1 ? 1 : d->bz;
    if (d->width == 1) d->bx *= 12, d->by = 1;
    d->bz = 1;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The sliced storage of the sliced kernel, its values placed on the device from the CSR values in d->val. The column
   indices of each super-row take the smallest of the three codes (CSRK_SLICE_*) that holds them: a first pass finds,
   for every entry position j, the smallest column (the base) and the spread of the columns above it; a second stores
   the offsets. Each super-row's indices start on a 32-byte boundary, so a warp's loads of one entry position are
   aligned sectors. Short rows (d->sliced_plain) skip the first pass: 32-bit columns laid out as the values. */
static PetscErrorCode CSRKBuildSliced(CSRKDevice *d, const MatCSRKStructure *st, size_t *bytes)
{
  CSRKIdx       *sp, *spos, *bptr, *base, *lo = NULL, *hi = NULL;
  unsigned      *iptr;
  unsigned char *idx;
  PetscInt       maxh, nbase = 0;
  PetscInt64     units = 0;
  cudaStream_t   stream;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(st->nsr + 1, &sp));
  (void)CSRKSlicedOffsets(st, sp, &maxh);
  PetscCall(PetscMalloc3(st->nsr + 1, &bptr, PetscMax(st->nsr, 1), &iptr, PetscMax(d->pnnz, 1), &base)); /* a base per padded slot at most */
  if (!d->sliced_plain) PetscCall(PetscMalloc2(PetscMax(d->maxlen, 1), &lo, PetscMax(d->maxlen, 1), &hi));
  d->nslices[0] = d->nslices[1] = d->nslices[2] = 0;
  bptr[0] = 0;
  for (PetscInt s = 0; s < st->nsr; s++) {
    const PetscInt r0 = st->srptr[s], h = st->srptr[s + 1] - r0;
    PetscInt       w = 0, code = CSRK_SLICE_U32, b;
    PetscInt64     span = 0;

    if (d->sliced_plain) {
      /* 4-byte columns at the values' offsets (multiples of 32 entries) */
      iptr[s] = ((unsigned)(sp[s] / 8) << 2) | (unsigned)code;
    } else {
      for (PetscInt i = 0; i < h; i++) {
        const CSRKIdx *c = st->colidx + st->rowptr[r0 + i];
        const PetscInt len = st->rowptr[r0 + i + 1] - st->rowptr[r0 + i];
        for (PetscInt j = 0; j < len; j++) {
          lo[j] = j < w ? PetscMin(lo[j], c[j]) : c[j];
          hi[j] = j < w ? PetscMax(hi[j], c[j]) : c[j];
          if (j >= w) w = j + 1;
        }
      }
      for (PetscInt j = 0; j < w; j++) span = PetscMax(span, (PetscInt64)hi[j] - lo[j]);
      code = span <= 0xff ? CSRK_SLICE_U8 : span <= 0xffff ? CSRK_SLICE_U16 : CSRK_SLICE_U32;
      b    = code == CSRK_SLICE_U8 ? 1 : code == CSRK_SLICE_U16 ? 2 : 4;
      if (code != CSRK_SLICE_U32)
        for (PetscInt j = 0; j < w; j++) base[nbase++] = lo[j];
      PetscCheck(units < ((PetscInt64)1 << 30), PETSC_COMM_SELF, PETSC_ERR_SUP, "Column indices of the sliced kernel beyond 32 GB: use another kernel (-mat_csrk_cuda_kernel)");
      iptr[s] = ((unsigned)units << 2) | (unsigned)code;
      units += ((PetscInt64)w * h * b + 31) / 32;
    }
    bptr[s + 1] = (CSRKIdx)nbase;
    d->nslices[code]++;
  }
  if (d->sliced_plain) units = (PetscInt64)d->pnnz / 8;
  PetscCall(PetscCalloc1(PetscMax(32 * units, 1), &idx)); /* padding: offset 0, never read */
  PetscCall(PetscMalloc1(PetscMax(st->nnz, 1), &spos));
  for (PetscInt s = 0; s < st->nsr; s++) {
    const PetscInt       r0 = st->srptr[s], h = st->srptr[s + 1] - r0;
    const unsigned       code = iptr[s] & 3u;
    unsigned char *const blk  = idx + 32 * (size_t)(iptr[s] >> 2);
    for (PetscInt i = 0; i < h; i++)
      for (CSRKIdx q = st->rowptr[r0 + i], j = 0; q < st->rowptr[r0 + i + 1]; q++, j++) {
        const CSRKIdx p = j * (CSRKIdx)h + (CSRKIdx)i, c = st->colidx[q];
        if (code == CSRK_SLICE_U8) blk[p] = (unsigned char)(c - base[bptr[s] + j]);
        else if (code == CSRK_SLICE_U16) ((unsigned short *)blk)[p] = (unsigned short)(c - base[bptr[s] + j]);
        else ((CSRKIdx *)blk)[p] = c;
        spos[q] = sp[s] + p;
      }
  }
  d->index_bytes = d->pnnz ? (32.0 * units + sizeof(CSRKIdx) * nbase) / d->pnnz : 0;
  PetscCall(CSRKUpload(&d->sliceptr, sp, st->nsr + 1, bytes));
  PetscCall(CSRKUpload(&d->sidxptr, iptr, st->nsr, bytes));
  PetscCall(CSRKUpload(&d->sidx, idx, 32 * units, bytes));
  PetscCall(CSRKUpload(&d->sbaseptr, bptr, st->nsr + 1, bytes));
  PetscCall(CSRKUpload(&d->sbase, base, nbase, bytes));
  PetscCall(CSRKUpload(&d->spos, spos, st->nnz, bytes));
  PetscCall(CSRKUpload(&d->sval, (PetscScalar *)NULL, d->pnnz, bytes));
  PetscCallCUDA(cudaMemset(d->sval, 0, sizeof(PetscScalar) * PetscMax(d->pnnz, 1)));
  PetscCall(PetscFree(sp));
  PetscCall(PetscFree3(bptr, iptr, base));
  if (!d->sliced_plain) PetscCall(PetscFree2(lo, hi));
  PetscCall(PetscFree(idx));
  PetscCall(PetscFree(spos));
  PetscCall(CSRKGetStream(&stream));
  CSRKPlaceValuesKernel<<<CSRKGrid(st->nnz), 256, 0, stream>>>(st->nnz, d->spos, d->val, d->sval);
  PetscCallCUDA(cudaGetLastError());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Launch grouping of a plain row list (the compressed rows, the rows of the stored transpose): a block per run of
   `per` consecutive rows */
static PetscErrorCode CSRKUploadRowGroups(PetscInt nrows, PetscInt per, CSRKIdx **unitptr, CSRKIdx **srptr, PetscInt *nunits, size_t *bytes)
{
  CSRKIdx *u, *srp;

  PetscFunctionBegin;
  *nunits = (nrows + per - 1) / per;
  PetscCall(PetscMalloc2(*nunits + 1, &u, *nunits + 1, &srp));
  for (PetscInt i = 0; i <= *nunits; i++) {
    u[i]   = (CSRKIdx)i;
    srp[i] = (CSRKIdx)PetscMin(i * per, nrows);
  }
  PetscCall(CSRKUpload(unitptr, u, *nunits + 1, bytes));
  PetscCall(CSRKUpload(srptr, srp, *nunits + 1, bytes));
  PetscCall(PetscFree2(u, srp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The shape of a launch over such a grouping: a thread per row (width 1) or a sub-warp of `width` lanes per row */
static void CSRKRowGroupShape(CSRKDevice *c, PetscInt width, PetscInt per, PetscInt nunits)
{
  c->kernel = width == 1 ? MAT_CSRK_CUDA_KERNEL_SCALAR : MAT_CSRK_CUDA_KERNEL_VECTOR;
  c->width  = width;
  c->bx     = width == 1 ? (unsigned)per : (unsigned)width;
  c->by     = width == 1 ? 1 : (unsigned)PetscMax(1, 256 / width);
  c->bz     = 1;
  c->nunits = nunits;
}

/* The launch of such a grouping over d's arrays, with no long-row pass */
static void CSRKRowGroupLaunch(const CSRKDevice *d, PetscInt width, PetscInt per, PetscInt nunits, CSRKDevice *c)
{
  *c = *d;
  CSRKRowGroupShape(c, width, per, nunits);
  c->nlong   = 0;
  c->longlen = CSRK_IDX_MAX;
}

#define CSRK_COMPRESSED_ROWS_PER_BLOCK 128
#define CSRK_TRANSPOSE_ROWS_PER_BLOCK  32

/* Launch grouping over the non-empty rows of a natural-order block in which most rows are empty (the off-process
   block of an MPI matrix: only rows next to other processes' rows have entries there). The CSR arrays stay as they
   are: the entries of consecutive non-empty rows are contiguous, so row i of the grouping spans
   [rowptr[crows[i]], rowptr[crows[i + 1]]) and the kernels write through crows as through a row permutation. */
static PetscErrorCode CSRKBuildCompressed(CSRKDevice *d, const MatCSRKStructure *st, size_t *bytes)
{
  CSRKIdx       *rows, *rp;
  PetscInt       nc = 0;
  const PetscInt per = CSRK_COMPRESSED_ROWS_PER_BLOCK;
  PetscReal      mean;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(PetscMax(st->nonzerorows, 1), &rows, st->nonzerorows + 1, &rp));
  for (PetscInt r = 0; r < st->m; r++)
    if (st->rowptr[r + 1] > st->rowptr[r] && nc < st->nonzerorows) {
      rows[nc] = (CSRKIdx)r;
      rp[nc++] = st->rowptr[r];
    }
  rp[nc]     = st->rowptr[st->m];
  d->nc     = nc;
  mean      = nc ? (PetscReal)st->nnz / nc : 0;
  d->cwidth = CSRKWidthForMean(mean);
  PetscCall(CSRKUpload(&d->crows, rows, nc, bytes));
  PetscCall(CSRKUpload(&d->crowptr, rp, nc + 1, bytes));
  PetscCall(CSRKUploadRowGroups(nc, per, &d->cunitptr, &d->csrptr, &d->cnunits, bytes));
  PetscCall(PetscFree2(rows, rp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Units of the adaptive kernel: consecutive rows while they hold at most CSRK_ADAPTIVE_NNZ nonzeros (and
   CSRK_ADAPTIVE_ROWS rows); a row longer than the long-row threshold (at most CSRK_ADAPTIVE_NNZ, see
   CSRKChooseKernel()) makes a unit of its own, skipped there and taken by the long-row kernels */
static PetscErrorCode CSRKBuildAdaptiveUnits(CSRKDevice *d, const MatCSRKStructure *st, size_t *bytes)
{
  const PetscInt lim = PetscMin(d->longlen, CSRK_ADAPTIVE_NNZ);
  CSRKIdx       *u;
  PetscInt       n = 0;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(st->m + 1, &u));
  for (PetscInt r = 0; r < st->m;) {
    PetscInt nz = 0, r0 = r;
    u[n++] = (CSRKIdx)r;
    if (st->rowptr[r + 1] - st->rowptr[r] > lim) {
      r++;
      continue;
    }
    while (r < st->m && r - r0 < CSRK_ADAPTIVE_ROWS && st->rowptr[r + 1] - st->rowptr[r] <= lim && nz + st->rowptr[r + 1] - st->rowptr[r] <= CSRK_ADAPTIVE_NNZ) {
      nz += st->rowptr[r + 1] - st->rowptr[r];
      r++;
    }
  }
  u[n]      = (CSRKIdx)st->m;
  d->nunits = n;
  PetscCall(CSRKUpload(&d->srptr, u, n + 1, bytes));
  PetscCall(PetscFree(u));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The rows of d (row pointer rowptr, on the host) longer than d->longlen, cut into chunks of CSRK_LONG_CHUNK entries */
static PetscErrorCode CSRKBuildLongRows(CSRKDevice *d, const CSRKIdx *rowptr, size_t *bytes)
{
  CSRKIdx *rows, *rowchunk, *chunkq;

  PetscFunctionBegin;
  d->nlong = 0;
  PetscCall(PetscMalloc1(d->m, &rows));
  for (PetscInt r = 0; r < d->m; r++)
    if (rowptr[r + 1] - rowptr[r] > d->longlen) rows[d->nlong++] = (CSRKIdx)r;
  PetscCall(PetscMalloc1(d->nlong + 1, &rowchunk));
  rowchunk[0] = 0;
  for (PetscInt i = 0; i < d->nlong; i++) rowchunk[i + 1] = rowchunk[i] + (rowptr[rows[i] + 1] - rowptr[rows[i]] + CSRK_LONG_CHUNK - 1) / CSRK_LONG_CHUNK;
  d->nlongchunks = rowchunk[d->nlong];
  PetscCall(PetscMalloc1(2 * PetscMax(d->nlongchunks, 1), &chunkq));
  for (PetscInt i = 0; i < d->nlong; i++)
    for (CSRKIdx c = rowchunk[i], q = rowptr[rows[i]]; c < rowchunk[i + 1]; c++, q += CSRK_LONG_CHUNK) {
      chunkq[2 * c]     = q;
      chunkq[2 * c + 1] = PetscMin(q + CSRK_LONG_CHUNK, rowptr[rows[i] + 1]);
    }
  PetscCall(CSRKUpload(&d->longrows, rows, d->nlong, bytes));
  PetscCall(CSRKUpload(&d->longrowchunk, rowchunk, d->nlong + 1, bytes));
  PetscCall(CSRKUpload(&d->longchunkq, chunkq, 2 * d->nlongchunks, bytes));
  PetscCall(CSRKUpload(&d->longpart, (PetscScalar *)NULL, d->nlongchunks, bytes));
  PetscCall(PetscFree(rows));
  PetscCall(PetscFree(rowchunk));
  PetscCall(PetscFree(chunkq));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatCSRKCUDADeviceUpload - uploads the structure (all = true) or only the values of the host structure st
*/
PetscErrorCode MatCSRKCUDADeviceUpload(const MatCSRKStructure *st, const MatCSRKOptions *opt, PetscBool all, CSRKDevice **dev)
{
  CSRKDevice *d;
  size_t      bytes = 0;
  static int  smem_set = 0;

  PetscFunctionBegin;
  if (!smem_set) {
    PetscCallCUDA(cudaFuncSetAttribute(CSRKStreamKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, CSRK_STREAM_SMEM_MAX));
    smem_set = 1;
  }
  if (!all && *dev) {
    cudaStream_t stream;

    d = *dev;
    PetscCallCUDA(cudaMemcpy(d->val, st->val, sizeof(PetscScalar) * st->nnz, cudaMemcpyHostToDevice));
    PetscCall(PetscLogCpuToGpu(sizeof(PetscScalar) * st->nnz));
    PetscCall(CSRKGetStream(&stream));
    if (d->kernel == MAT_CSRK_CUDA_KERNEL_SLICED) {
      CSRKPlaceValuesKernel<<<CSRKGrid(st->nnz), 256, 0, stream>>>(st->nnz, d->spos, d->val, d->sval);
      PetscCallCUDA(cudaGetLastError());
    }
    if (d->t) {
      CSRKMapValuesKernel<<<CSRKGrid(st->nnz), 256, 0, stream>>>(st->nnz, d->tmap, d->val, d->t->val);
      PetscCallCUDA(cudaGetLastError());
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatCSRKCUDADeviceDestroy(dev));
  PetscCall(PetscNew(&d));
  d->m      = st->m;
  d->n      = st->n;
  d->nnz    = st->nnz;
  d->k      = st->k;
  d->nunits = st->k == 3 ? st->nssr : st->nsr;
  PetscCall(CSRKChooseKernel(d, st, opt));
  PetscCall(CSRKUpload(&d->rowptr, st->rowptr, st->m + 1, &bytes));
  PetscCall(CSRKUpload(&d->val, st->val, st->nnz, &bytes));
  if (d->kernel == MAT_CSRK_CUDA_KERNEL_ADAPTIVE) {
    PetscCall(CSRKBuildAdaptiveUnits(d, st, &bytes)); /* its own launch grouping over the same arrays */
  } else {
    PetscCall(CSRKUpload(&d->srptr, st->srptr, st->nsr + 1, &bytes));
    if (st->k == 3) {
      PetscCall(CSRKUpload(&d->unitptr, st->ssrptr, st->nssr + 1, &bytes));
    } else {
      /* k = 1, 2: a block per super-row (for k = 1 the super-rows are only the launch grouping) */
      CSRKIdx *u;
      PetscCall(PetscMalloc1(st->nsr + 1, &u));
      for (PetscInt i = 0; i <= st->nsr; i++) u[i] = (CSRKIdx)i;
      PetscCall(CSRKUpload(&d->unitptr, u, st->nsr + 1, &bytes));
      PetscCall(PetscFree(u));
    }
  }
  /* the sliced kernel reads its own copy of the pattern; d->val stays as the target of value uploads */
  if (d->kernel == MAT_CSRK_CUDA_KERNEL_SLICED) {
    PetscCall(CSRKBuildSliced(d, st, &bytes));
    /* row patterns where the columns are in the rows' own numbering and the rows fit the dictionary; the codes stay
       for the diagonal */
    if (opt->compress && opt->patterns && (!st->perm || st->layout == MAT_CSRK_LAYOUT_RENUMBERED)) {
      MatCSRKRowPatterns pat;
      PetscCall(MatCSRKFindRowPatterns(NULL, st, NULL, d->sliced_plain ? (PetscReal)sizeof(CSRKIdx) : d->index_bytes, &pat));
      if (pat.rowpat) {
        d->npat = pat.npat;
        PetscCall(CSRKUpload(&d->rowpat, pat.rowpat, st->m, &bytes));
        PetscCall(CSRKUpload(&d->patptr, pat.patptr, pat.npat + 1, &bytes));
        PetscCall(CSRKUpload(&d->patoff, pat.patoff, pat.patptr[pat.npat], &bytes));
        PetscCall(PetscFree(pat.rowpat));
        PetscCall(PetscFree(pat.patptr));
        PetscCall(PetscFree(pat.patoff));
      }
    }
  }
  else PetscCall(CSRKUpload(&d->colidx, st->colidx, st->nnz, &bytes));
  if (st->perm) PetscCall(CSRKUpload(&d->perm, st->perm, st->m, &bytes));
  if (st->xwork) PetscCall(CSRKUpload(&d->xwork, (PetscScalar *)NULL, st->n, &bytes));
  if (!st->perm && d->kernel != MAT_CSRK_CUDA_KERNEL_SLICED && d->kernel != MAT_CSRK_CUDA_KERNEL_CUSPARSE && d->kernel != MAT_CSRK_CUDA_KERNEL_MERGE && st->m >= 1024 && 2 * st->nonzerorows <= st->m) PetscCall(CSRKBuildCompressed(d, st, &bytes));
  if (d->kernel == MAT_CSRK_CUDA_KERNEL_CUSPARSE) PetscCall(CSRKCusparseCreate(d, &bytes));
  if (d->kernel == MAT_CSRK_CUDA_KERNEL_MERGE) PetscCall(MatCSRKCUDAMergeSetUp(d, &bytes));
  if (d->longlen < CSRK_IDX_MAX) PetscCall(CSRKBuildLongRows(d, st->rowptr, &bytes));
  PetscCall(PetscLogCpuToGpu((PetscLogDouble)bytes));
  d->bytes = bytes;
  *dev     = d;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CSRKLaunch(const CSRKDevice *d, const CSRKIdx *unitptr, const CSRKIdx *srptr, const CSRKIdx *rowptr, const CSRKIdx *colidx, const PetscScalar *val, const CSRKIdx *perm, const PetscScalar *x, const PetscScalar *z, PetscScalar *y, cudaStream_t stream)
{
  PetscFunctionBegin;
  if (!d->nunits) PetscFunctionReturn(PETSC_SUCCESS);
  if (d->kernel == MAT_CSRK_CUDA_KERNEL_SLICED) {
    if (d->rowpat && d->mean > CSRK_SLICED_PLAIN_MAX_MEAN) CSRKSlicedPatternKernel<true><<<(unsigned)d->nunits, dim3(d->bx, d->by, d->bz), 0, stream>>>(unitptr, srptr, d->sliceptr, d->rowpat, d->patptr, d->patoff, d->sval, perm, x, z, y);
    else if (d->rowpat) CSRKSlicedPatternKernel<false><<<(unsigned)d->nunits, dim3(d->bx, d->by, d->bz), 0, stream>>>(unitptr, srptr, d->sliceptr, d->rowpat, d->patptr, d->patoff, d->sval, perm, x, z, y);
    else if (d->sliced_plain) CSRKSlicedPlainKernel<<<(unsigned)d->nunits, dim3(d->bx, d->by, d->bz), 0, stream>>>(unitptr, srptr, rowptr, d->sliceptr, (const CSRKIdx *)d->sidx, d->sval, perm, x, z, y);
    else CSRKSlicedKernel<<<(unsigned)d->nunits, dim3(d->bx, d->by, d->bz), 0, stream>>>(unitptr, srptr, rowptr, d->sliceptr, d->sidxptr, d->sidx, d->sbaseptr, d->sbase, d->sval, perm, x, z, y);
    PetscCallCUDA(cudaGetLastError());
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  switch (d->kernel == MAT_CSRK_CUDA_KERNEL_ADAPTIVE ? -1 : d->kernel == MAT_CSRK_CUDA_KERNEL_STREAM ? 0 : d->width) {
  case -1:
    CSRKAdaptiveKernel<<<(unsigned)d->nunits, CSRK_ADAPTIVE_THREADS, 0, stream>>>(srptr, rowptr, colidx, val, perm, (CSRKIdx)d->longlen, x, z, y);
    break;
  case 0:
    CSRKStreamKernel<<<(unsigned)d->nunits, dim3(d->bx, d->by, d->bz), d->smem, stream>>>(unitptr, srptr, rowptr, colidx, val, perm, (CSRKIdx)d->longlen, x, z, y);
    break;
  case 1:
    CSRKScalarKernel<<<(unsigned)d->nunits, dim3(d->bx, d->by, d->bz), 0, stream>>>(unitptr, srptr, rowptr, colidx, val, perm, (CSRKIdx)d->longlen, x, z, y);
    break;
  case 2:
    CSRKVectorKernel<2><<<(unsigned)d->nunits, dim3(d->bx, d->by, d->bz), 0, stream>>>(unitptr, srptr, rowptr, colidx, val, perm, (CSRKIdx)d->longlen, x, z, y);
    break;
  case 4:
    CSRKVectorKernel<4><<<(unsigned)d->nunits, dim3(d->bx, d->by, d->bz), 0, stream>>>(unitptr, srptr, rowptr, colidx, val, perm, (CSRKIdx)d->longlen, x, z, y);
    break;
  case 8:
    CSRKVectorKernel<8><<<(unsigned)d->nunits, dim3(d->bx, d->by, d->bz), 0, stream>>>(unitptr, srptr, rowptr, colidx, val, perm, (CSRKIdx)d->longlen, x, z, y);
    break;
  case 16:
    CSRKVectorKernel<16><<<(unsigned)d->nunits, dim3(d->bx, d->by, d->bz), 0, stream>>>(unitptr, srptr, rowptr, colidx, val, perm, (CSRKIdx)d->longlen, x, z, y);
    break;
  default:
    CSRKVectorKernel<32><<<(unsigned)d->nunits, dim3(d->bx, d->by, d->bz), 0, stream>>>(unitptr, srptr, rowptr, colidx, val, perm, (CSRKIdx)d->longlen, x, z, y);
  }
  PetscCallCUDA(cudaGetLastError());
  if (d->nlong) {
    CSRKLongChunkKernel<<<(unsigned)d->nlongchunks, CSRK_LONG_BLOCK, 0, stream>>>(d->longchunkq, colidx, val, x, d->longpart);
    PetscCallCUDA(cudaGetLastError());
    CSRKLongSumKernel<<<CSRKGrid(d->nlong), 256, 0, stream>>>(d->nlong, d->longrows, d->longrowchunk, d->longpart, perm, z, y);
    PetscCallCUDA(cudaGetLastError());
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatCSRKCUDADeviceMult - y = A x (+ z), all device pointers, in the user's ordering
*/
PetscErrorCode MatCSRKCUDADeviceMult(CSRKDevice *d, const PetscScalar *x, const PetscScalar *z, PetscScalar *y)
{
  cudaStream_t stream;

  PetscFunctionBegin;
  PetscCall(CSRKGetStream(&stream));
  if (d->crows) {
    /* the empty rows get z (or 0), then the non-empty ones add their products in place */
    CSRKDevice c;
    if (!z) PetscCallCUDA(cudaMemsetAsync(y, 0, sizeof(PetscScalar) * d->m, stream));
    else if (z != y) PetscCallCUDA(cudaMemcpyAsync(y, z, sizeof(PetscScalar) * d->m, cudaMemcpyDeviceToDevice, stream));
    CSRKRowGroupLaunch(d, d->cwidth, CSRK_COMPRESSED_ROWS_PER_BLOCK, d->cnunits, &c);
    PetscCall(CSRKLaunch(&c, d->cunitptr, d->csrptr, d->crowptr, d->colidx, d->val, d->crows, x, y, y, stream));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (d->xwork) {
    PetscCall(MatCSRKCUDAGather(d->n, d->perm, x, d->xwork, stream));
    x = d->xwork;
  }
  if (d->kernel == MAT_CSRK_CUDA_KERNEL_CUSPARSE) {
    PetscCall(CSRKCusparseMult(d, x, z, y, stream));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (d->kernel == MAT_CSRK_CUDA_KERNEL_MERGE) {
    PetscCall(MatCSRKCUDAMergeMult(d, x, z, y, stream));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(CSRKLaunch(d, d->unitptr, d->srptr, d->rowptr, d->colidx, d->val, d->perm, x, z, y, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The transpose S^T of the stored matrix S as a device matrix of its own: its rows (the columns of S) grouped by
   CSRK_TRANSPOSE_ROWS_PER_BLOCK, a thread or 8 lanes per row, and rows much longer than the mean (a dense column of
   S) cut into chunks as in the forward product, which keeps both their time and their rounding those of a long row */
static PetscErrorCode CSRKBuildTranspose(CSRKDevice *d, const MatCSRKStructure *st)
{
  CSRKDevice *t;
  CSRKIdx    *tp, *tc, *tm, *fill;
  PetscInt    maxlen = 0;
  size_t      bytes  = 0;

  PetscFunctionBegin;
  PetscCall(PetscNew(&t));
  t->m   = st->n;
  t->n   = st->m;
  t->nnz = st->nnz;
  t->k   = 1;
  PetscCall(PetscCalloc1(st->n + 1, &tp));
  PetscCall(PetscMalloc3(PetscMax(st->nnz, 1), &tc, PetscMax(st->nnz, 1), &tm, st->n + 1, &fill));
  for (PetscInt q = 0; q < st->nnz; q++) tp[st->colidx[q] + 1]++;
  for (PetscInt c = 0; c < st->n; c++) maxlen = PetscMax(maxlen, tp[c + 1]);
  for (PetscInt c = 0; c < st->n; c++) tp[c + 1] += tp[c];
  for (PetscInt c = 0; c <= st->n; c++) fill[c] = tp[c];
  for (PetscInt r = 0; r < st->m; r++)
    for (CSRKIdx q = st->rowptr[r]; q < st->rowptr[r + 1]; q++) {
      const CSRKIdx at = fill[st->colidx[q]]++;
      tc[at]           = (CSRKIdx)r;
      tm[at]           = q;
    }
  t->mean    = (PetscReal)st->nnz / PetscMax(st->n, 1);
  t->maxlen  = maxlen;
  t->longlen = CSRKLongRowLength(t->mean, maxlen, 0);
  PetscCall(CSRKUpload(&t->rowptr, tp, st->n + 1, &bytes));
  PetscCall(CSRKUpload(&t->colidx, tc, st->nnz, &bytes));
  PetscCall(CSRKUpload(&t->val, (PetscScalar *)NULL, st->nnz, &bytes));
  PetscCall(CSRKUpload(&d->tmap, tm, st->nnz, &bytes));
  PetscCall(CSRKUploadRowGroups(st->n, CSRK_TRANSPOSE_ROWS_PER_BLOCK, &t->unitptr, &t->srptr, &t->nunits, &bytes));
  CSRKRowGroupShape(t, t->mean <= 8 ? 1 : 8, CSRK_TRANSPOSE_ROWS_PER_BLOCK, t->nunits);
  if (t->longlen < CSRK_IDX_MAX) PetscCall(CSRKBuildLongRows(t, tp, &bytes));
  PetscCall(PetscLogCpuToGpu((PetscLogDouble)bytes));
  PetscCall(PetscFree(tp));
  PetscCall(PetscFree3(tc, tm, fill));
  {
    cudaStream_t stream;
    PetscCall(CSRKGetStream(&stream));
    CSRKMapValuesKernel<<<CSRKGrid(st->nnz), 256, 0, stream>>>(st->nnz, d->tmap, d->val, t->val);
    PetscCallCUDA(cudaGetLastError());
  }
  t->bytes = bytes;
  d->t     = t;
  PetscCall(PetscInfo(NULL, "CSR-k stored transpose: %" PetscInt_FMT " rows, %" PetscInt_FMT " lanes per row, %" PetscInt_FMT " long rows in %" PetscInt_FMT " chunks\n", t->m, t->width, t->nlong, t->nlongchunks));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatCSRKCUDADeviceMultTranspose - y = A^T x (+ z) with a stored transpose of the CSR-k copy S:
   no permutation: A^T = S^T; renumbered (S = P A P^T): A^T x = P^T S^T (P x); rowperm (S = P A): A^T x = S^T (P x)
*/
PetscErrorCode MatCSRKCUDADeviceMultTranspose(CSRKDevice *d, const MatCSRKStructure *st, const PetscScalar *x, const PetscScalar *z, PetscScalar *y)
{
  cudaStream_t stream;
  CSRKDevice  *t;

  PetscFunctionBegin;
  if (!d->t) PetscCall(CSRKBuildTranspose(d, st));
  t = d->t;
  PetscCall(CSRKGetStream(&stream));
  if (d->perm) {
    if (!d->xtwork) PetscCallCUDA(cudaMalloc((void **)&d->xtwork, sizeof(PetscScalar) * PetscMax(d->m, 1)));
    PetscCall(MatCSRKCUDAGather(d->m, d->perm, x, d->xtwork, stream));
    x = d->xtwork;
  }
  /* renumbered: y[perm[c]] = z[perm[c]] + (S^T xp)[c], the same scatter as the forward product */
  PetscCall(CSRKLaunch(t, t->unitptr, t->srptr, t->rowptr, t->colidx, t->val, d->perm && st->layout == MAT_CSRK_LAYOUT_RENUMBERED ? d->perm : NULL, x, z, y, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatCSRKCUDADeviceGetDiagonal - v = diag(A) in the user's ordering (v a device array of m entries), from the device copy
*/
PetscErrorCode MatCSRKCUDADeviceGetDiagonal(CSRKDevice *d, const MatCSRKStructure *st, PetscScalar *v)
{
  cudaStream_t    stream;
  const PetscBool rowperm = (PetscBool)(st->perm && st->layout == MAT_CSRK_LAYOUT_ROWPERM);

  PetscFunctionBegin;
  if (!st->m) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CSRKGetStream(&stream));
  if (d->kernel == MAT_CSRK_CUDA_KERNEL_SLICED) CSRKSlicedDiagonalKernel<<<(unsigned)PetscMin(st->nsr, 65535 * 16), 32, 0, stream>>>(st->nsr, rowperm, d->srptr, d->rowptr, d->sliceptr, d->sidxptr, d->sidx, d->sbaseptr, d->sbase, d->sval, d->perm, v);
  else CSRKDiagonalKernel<<<CSRKGrid(st->m), 256, 0, stream>>>(st->m, rowperm, d->rowptr, d->colidx, d->val, d->perm, v);
  PetscCallCUDA(cudaGetLastError());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Device scratch for an input that lives on the host */
PetscErrorCode MatCSRKCUDADeviceStage(CSRKDevice *d, const PetscScalar *host, PetscInt n, const PetscScalar **dptr)
{
  PetscFunctionBegin;
  if (!d->ywork || d->nywork < n) {
    CSRKCudaFree(d->ywork);
    PetscCallCUDA(cudaMalloc((void **)&d->ywork, sizeof(PetscScalar) * PetscMax(n, 1)));
    d->nywork = n;
  }
  PetscCallCUDA(cudaMemcpy(d->ywork, host, sizeof(PetscScalar) * n, cudaMemcpyHostToDevice));
  PetscCall(PetscLogCpuToGpu(sizeof(PetscScalar) * n));
  *dptr = d->ywork;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCSRKCUDAGather(PetscInt n, const CSRKIdx *idx, const PetscScalar *x, PetscScalar *xp, cudaStream_t stream)
{
  PetscFunctionBegin;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  CSRKGatherKernel<<<CSRKGrid(n), 256, 0, stream>>>(n, idx, x, xp);
  PetscCallCUDA(cudaGetLastError());
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCSRKCUDADeviceSynchronize(void)
{
  cudaStream_t stream;

  PetscFunctionBegin;
  PetscCall(CSRKGetStream(&stream));
  PetscCallCUDA(cudaStreamSynchronize(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}
