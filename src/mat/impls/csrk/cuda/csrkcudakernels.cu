/*
   CSR-k SpMV kernels on NVIDIA GPUs: the products over the device layout that csrkcudasetup.cu builds.

   Kernels:
     scalar (GPUSpMV-3): a block per unit of super-rows, a thread per row; block (x = rows of a super-row, y = super-rows)
     vector (GPUSpMV-3.5): a sub-warp of w lanes per row, reduced with __shfl_down_sync inside the sub-warp;
                         block (x = w lanes, y = rows, z = super-rows)
     long rows:          rows longer than a threshold are skipped by the kernels above and cut into chunks of
                         4096 entries, a block per chunk, the chunks of a row summed in a fixed order (deterministic)
     stream (auto for irregular short rows): a block per unit forms its products with coalesced loads in shared
                         memory, then a thread per row sums them
     sliced (auto for rows of nearly equal length): each 32-row super-row is stored column by column, padded to its
                         longest row (the SELL idea inside the CSR-k hierarchy); a warp per super-row, a thread per
                         row; the column indices are row patterns (an offset list per distinct row) where the rows
                         fit the dictionary, else 32-bit columns laid out as the values
     merge (auto for irregular rows): rows and nonzeros together cut into equal tiles, a block each (csrkcudamerge.cu)
     cusparse (forced, or irregular rows beyond the merge kernel's 32-bit coordinates): cuSPARSE's merge-based CSR
                         SpMV (CUSPARSE_SPMV_CSR_ALG2) over the same CSR arrays
     block (auto for rows in nodes of one column list, where the sliced kernel has no row patterns): a sub-warp per
                         node, one column index per node entry (csrkcudablock.cu)
   Every reduction has a fixed order, so results are bitwise reproducible run to run (CUSPARSE_SPMV_CSR_ALG2 is
   cuSPARSE's deterministic CSR algorithm).
*/
#include "../csrkimpl.h"
#include "csrkcuda.h"
#include "csrkcudadevice.cuh"
#include <petscdevice_cuda.h>
#include <cusparse.h>

#define CSRK_LONG_BLOCK 256

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
   4 per entry (plain columns) plus 4 of row pointer. BATCHED: loads in batches of CSRK_SLICED_BATCH entries (rows
   longer than CSRK_SLICED_PLAIN_MAX_MEAN on average); else the loop of CSRKSlicedPlainKernel. */
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

/* x *= a over n entries */
__global__ void CSRKScaleKernel(PetscInt64 n, PetscScalar *__restrict__ x, PetscScalar a)
{
  for (PetscInt64 i = blockIdx.x * (PetscInt64)blockDim.x + threadIdx.x; i < n; i += (PetscInt64)blockDim.x * gridDim.x) x[i] *= a;
}

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

PetscErrorCode MatCSRKCUDACusparseCreate(CSRKDevice *d, size_t *bytes)
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

PetscErrorCode MatCSRKCUDACusparseDestroy(CSRKDevice *d)
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

/* the stream kernel may take more shared memory than the default 48 KB */
PetscErrorCode MatCSRKCUDAStreamKernelInit(void)
{
  static PetscBool done = PETSC_FALSE;

  PetscFunctionBegin;
  if (!done) PetscCallCUDA(cudaFuncSetAttribute(CSRKStreamKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, CSRK_STREAM_SMEM_MAX));
  done = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The kernels over the row grouping (unitptr, srptr) of d; perm: the row each grouped row stands for (the
   compressed rows), or NULL */
static PetscErrorCode CSRKLaunch(const CSRKDevice *d, const CSRKIdx *unitptr, const CSRKIdx *srptr, const CSRKIdx *rowptr, const CSRKIdx *perm, const PetscScalar *x, const PetscScalar *z, PetscScalar *y, cudaStream_t stream)
{
  const CSRKIdx     *colidx = d->colidx;
  const PetscScalar *val    = d->val;
  const dim3         block(d->bx, d->by, d->bz);
  const unsigned     grid = (unsigned)d->nunits;

  PetscFunctionBegin;
  if (!d->nunits) PetscFunctionReturn(PETSC_SUCCESS);
  if (d->kernel == MAT_CSRK_CUDA_KERNEL_SLICED) {
    if (d->rowpat && d->mean > CSRK_SLICED_PLAIN_MAX_MEAN) CSRKSlicedPatternKernel<true><<<grid, block, 0, stream>>>(unitptr, srptr, d->sliceptr, d->rowpat, d->patptr, d->patoff, d->sval, perm, x, z, y);
    else if (d->rowpat) CSRKSlicedPatternKernel<false><<<grid, block, 0, stream>>>(unitptr, srptr, d->sliceptr, d->rowpat, d->patptr, d->patoff, d->sval, perm, x, z, y);
    else CSRKSlicedPlainKernel<<<grid, block, 0, stream>>>(unitptr, srptr, rowptr, d->sliceptr, d->scol, d->sval, perm, x, z, y);
    PetscCallCUDA(cudaGetLastError());
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  switch (d->kernel == MAT_CSRK_CUDA_KERNEL_STREAM ? 0 : d->width) {
  case 0:
    CSRKStreamKernel<<<grid, block, d->smem, stream>>>(unitptr, srptr, rowptr, colidx, val, perm, (CSRKIdx)d->longlen, x, z, y);
    break;
  case 1:
    CSRKScalarKernel<<<grid, block, 0, stream>>>(unitptr, srptr, rowptr, colidx, val, perm, (CSRKIdx)d->longlen, x, z, y);
    break;
  case 2:
    CSRKVectorKernel<2><<<grid, block, 0, stream>>>(unitptr, srptr, rowptr, colidx, val, perm, (CSRKIdx)d->longlen, x, z, y);
    break;
  case 4:
    CSRKVectorKernel<4><<<grid, block, 0, stream>>>(unitptr, srptr, rowptr, colidx, val, perm, (CSRKIdx)d->longlen, x, z, y);
    break;
  case 8:
    CSRKVectorKernel<8><<<grid, block, 0, stream>>>(unitptr, srptr, rowptr, colidx, val, perm, (CSRKIdx)d->longlen, x, z, y);
    break;
  case 16:
    CSRKVectorKernel<16><<<grid, block, 0, stream>>>(unitptr, srptr, rowptr, colidx, val, perm, (CSRKIdx)d->longlen, x, z, y);
    break;
  default:
    CSRKVectorKernel<32><<<grid, block, 0, stream>>>(unitptr, srptr, rowptr, colidx, val, perm, (CSRKIdx)d->longlen, x, z, y);
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
   MatCSRKCUDADeviceMult - y = A x (+ z), all device pointers
*/
PetscErrorCode MatCSRKCUDADeviceMult(CSRKDevice *d, const PetscScalar *x, const PetscScalar *z, PetscScalar *y)
{
  cudaStream_t stream;

  PetscFunctionBegin;
  PetscCall(CSRKGetStream(&stream));
  if (d->crows) {
    /* the empty rows get z (or 0), then the non-empty ones add their products in place */
    CSRKDevice c = *d;
    if (!z) PetscCallCUDA(cudaMemsetAsync(y, 0, sizeof(PetscScalar) * d->m, stream));
    else if (z != y) PetscCallCUDA(cudaMemcpyAsync(y, z, sizeof(PetscScalar) * d->m, cudaMemcpyDeviceToDevice, stream));
    c.kernel  = c.cwidth == 1 ? MAT_CSRK_CUDA_KERNEL_SCALAR : MAT_CSRK_CUDA_KERNEL_VECTOR;
    c.width   = c.cwidth;
    c.bx      = c.cwidth == 1 ? 128 : (unsigned)c.cwidth;
    c.by      = c.cwidth == 1 ? 1 : (unsigned)PetscMax(1, 256 / c.cwidth);
    c.bz      = 1;
    c.nunits  = c.cnunits;
    c.nlong   = 0;
    c.longlen = CSRK_IDX_MAX;
    PetscCall(CSRKLaunch(&c, d->cunitptr, d->csrptr, d->crowptr, d->crows, x, y, y, stream));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (d->kernel == MAT_CSRK_CUDA_KERNEL_CUSPARSE) PetscCall(CSRKCusparseMult(d, x, z, y, stream));
  else if (d->kernel == MAT_CSRK_CUDA_KERNEL_MERGE) PetscCall(MatCSRKCUDAMergeMult(d, x, z, y, stream));
  else if (d->kernel == MAT_CSRK_CUDA_KERNEL_BLOCK) PetscCall(MatCSRKCUDABlockMult(d, x, z, y, stream));
  else PetscCall(CSRKLaunch(d, d->unitptr, d->srptr, d->rowptr, NULL, x, z, y, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatCSRKCUDADeviceMultTranspose - y = A^T x (+ z) with the stored transpose (MatCSRKCUDADeviceBuildTranspose())
*/
PetscErrorCode MatCSRKCUDADeviceMultTranspose(CSRKDevice *d, const PetscScalar *x, const PetscScalar *z, PetscScalar *y)
{
  cudaStream_t stream;
  CSRKDevice  *t = d->t;

  PetscFunctionBegin;
  PetscCheck(t, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The stored transpose was not built");
  PetscCall(CSRKGetStream(&stream));
  PetscCall(CSRKLaunch(t, t->unitptr, t->srptr, t->rowptr, NULL, x, z, y, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatCSRKCUDADeviceGetDiagonal - v = diag(A) (v a device array of m entries)
*/
PetscErrorCode MatCSRKCUDADeviceGetDiagonal(CSRKDevice *d, PetscScalar *v)
{
  cudaStream_t stream;

  PetscFunctionBegin;
  if (!d->m) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CSRKGetStream(&stream));
  if (d->nodeptr) {
    PetscCall(MatCSRKCUDABlockDiagonal(d, PETSC_FALSE, 0.0, v, stream));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (d->sval) CSRKSlicedDiagonalKernel<false><<<CSRKGrid(d->m), 256, 0, stream>>>(d->m, d->rowptr, d->sliceptr, d->scol, d->rowpat, d->patptr, d->patoff, d->sval, v, 0.0);
  else CSRKDiagonalKernel<false><<<CSRKGrid(d->m), 256, 0, stream>>>(d->m, d->rowptr, d->colidx, d->val, v, 0.0);
  PetscCallCUDA(cudaGetLastError());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatCSRKCUDADeviceShift - diag(A) += a in the device copy (and its stored transpose): the entries on the diagonal only,
   as MatShift() of MATSEQAIJ when every row has its diagonal entry
*/
PetscErrorCode MatCSRKCUDADeviceShift(CSRKDevice *d, PetscScalar a)
{
  cudaStream_t stream;

  PetscFunctionBegin;
  if (!d->m) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CSRKGetStream(&stream));
  if (d->nodeptr) PetscCall(MatCSRKCUDABlockDiagonal(d, PETSC_TRUE, a, NULL, stream));
  else {
    if (d->sval) CSRKSlicedDiagonalKernel<true><<<CSRKGrid(d->m), 256, 0, stream>>>(d->m, d->rowptr, d->sliceptr, d->scol, d->rowpat, d->patptr, d->patoff, d->sval, NULL, a);
    else CSRKDiagonalKernel<true><<<CSRKGrid(d->m), 256, 0, stream>>>(d->m, d->rowptr, d->colidx, d->val, NULL, a);
    PetscCallCUDA(cudaGetLastError());
  }
  if (d->t && d->t->m) {
    CSRKDiagonalKernel<true><<<CSRKGrid(d->t->m), 256, 0, stream>>>(d->t->m, d->t->rowptr, d->t->colidx, d->t->val, NULL, a);
    PetscCallCUDA(cudaGetLastError());
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatCSRKCUDADeviceScale - every value of the device copy (and of its stored transpose) times a; a = 0 writes zeros,
   as MatZeroEntries() does
*/
PetscErrorCode MatCSRKCUDADeviceScale(CSRKDevice *d, PetscScalar a)
{
  cudaStream_t      stream;
  PetscScalar      *arr[3] = {d->val, d->sval, d->t ? d->t->val : NULL};
  const PetscInt64  len[3] = {d->nnz, d->pnnz, d->nnz};

  PetscFunctionBegin;
  PetscCall(CSRKGetStream(&stream));
  for (int k = 0; k < 3; k++) {
    if (!arr[k] || !len[k]) continue;
    if (a == (PetscScalar)0.0) PetscCallCUDA(cudaMemsetAsync(arr[k], 0, sizeof(PetscScalar) * (size_t)len[k], stream));
    else {
      CSRKScaleKernel<<<CSRKGrid(len[k]), 256, 0, stream>>>(len[k], arr[k], a);
      PetscCallCUDA(cudaGetLastError());
    }
  }
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

/* n values from device memory d into host memory h, on the product stream (which may still be writing them) */
PetscErrorCode MatCSRKCUDACopyToHost(PetscScalar *h, const PetscScalar *d, PetscCount n)
{
  cudaStream_t stream;

  PetscFunctionBegin;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CSRKGetStream(&stream));
  PetscCallCUDA(cudaMemcpyAsync(h, d, sizeof(PetscScalar) * (size_t)n, cudaMemcpyDeviceToHost, stream));
  PetscCallCUDA(cudaStreamSynchronize(stream));
  PetscCall(PetscLogGpuToCpu(sizeof(PetscScalar) * (PetscLogDouble)n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCSRKCUDADeviceDestroy(CSRKDevice **dev)
{
  CSRKDevice *d = *dev;

  PetscFunctionBegin;
  if (!d) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatCSRKCUDACusparseDestroy(d));
  CSRKCudaFree(d->rowptr);
  CSRKCudaFree(d->colidx);
  CSRKCudaFree(d->val);
  CSRKCudaFree(d->unitptr);
  CSRKCudaFree(d->srptr);
  CSRKCudaFree(d->longrows);
  CSRKCudaFree(d->longrowchunk);
  CSRKCudaFree(d->longchunkq);
  CSRKCudaFree(d->longpart);
  CSRKCudaFree(d->ywork);
  CSRKCudaFree(d->sliceptr);
  CSRKCudaFree(d->sval);
  CSRKCudaFree(d->scol);
  CSRKCudaFree(d->rowpat);
  CSRKCudaFree(d->patptr);
  CSRKCudaFree(d->patoff);
  CSRKCudaFree(d->crows);
  CSRKCudaFree(d->crowptr);
  CSRKCudaFree(d->cunitptr);
  CSRKCudaFree(d->csrptr);
  CSRKCudaFree(d->mtile);
  CSRKCudaFree(d->mcarryrow);
  CSRKCudaFree(d->mcarryval);
  CSRKCudaFree(d->tmap);
  PetscCall(MatCSRKCUDABlockFree(d));
  PetscCall(MatCSRKCUDADeviceDestroy(&d->t));
  PetscCall(PetscFree(*dev));
  PetscFunctionReturn(PETSC_SUCCESS);
}
