/*
   The kernels of the block-sliced kernel of MATCSRKCUDA (set-up and launches in csrkcudabsliced.cu, whose top comment
   describes the layout): the block check, the product and the diagonal (the moves between the CSR arrays and the
   layout: csrkcudaslices.cuh). They need only PetscScalar, PetscInt64 and CSRKIdx (tests/bslicedemu.cpp also builds
   them on the host).
*/
#ifndef CSRKCUDABSLICED_CUH
#define CSRKCUDABSLICED_CUH

#include "csrkcudaslices.cuh"

/* threads a block of the product (a slice of CSRK_SLICE_ROWS block rows a warp, a thread a block row) */
#define CSRK_BSLICED_THREADS 128

/* Whether the bs rows of each block row share one column list made of whole aligned blocks (columns c, c + 1, ..,
   c + bs - 1 with c a multiple of bs): bad is set where not. blen[n]: the blocks of block row n */
__global__ void CSRKBSlicedCheckKernel(PetscInt64 nn, int bs, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ colidx, CSRKIdx *__restrict__ blen, int *bad)
{
  CSRK_GRIDSTRIDE(n, nn)
  {
    const PetscInt64 r0 = bs * n;
    const CSRKIdx    q0 = rowptr[r0], len = rowptr[r0 + 1] - q0;
    bool             ok = len % bs == 0;
    for (int a = 1; ok && a < bs; a++) {
      const CSRKIdx p0 = rowptr[r0 + a];
      ok               = rowptr[r0 + a + 1] - p0 == len;
      for (CSRKIdx j = 0; ok && j < len; j++) ok = colidx[p0 + j] == colidx[q0 + j];
    }
    for (CSRKIdx j = 0; ok && j < len; j += bs) {
      ok = colidx[q0 + j] % bs == 0;
      for (int k = 1; ok && k < bs; k++) ok = colidx[q0 + j + k] == colidx[q0 + j] + k;
    }
    blen[n] = ok ? len / bs : 0;
    if (!ok) atomicOr(bad, 1);
  }
}

/* The product: a thread per block row, its BS sums in registers; block j's BS x values are gathered once for the BS
   rows, and each row's BS products are summed before they join its sum (a fixed order: the same bits every run).
   32-bit index arithmetic (the set-up checks that the values fit it); GENERAL: y = z + A x, else the plain store */
template <int BS, bool GENERAL>
__global__ void __launch_bounds__(CSRK_BSLICED_THREADS) CSRKBSlicedKernel(CSRKIdx nn, const CSRKIdx *__restrict__ sliceptr, const CSRKIdx *__restrict__ blen, const CSRKIdx *__restrict__ bcol, const PetscScalar *__restrict__ bval, const PetscScalar *__restrict__ x, const PetscScalar *__restrict__ z, PetscScalar *__restrict__ y)
{
  const CSRKIdx n = (CSRKIdx)(blockIdx.x * blockDim.x + threadIdx.x);
  if (n >= nn) return;
  const CSRKIdx      s = n / CSRK_SLICE_ROWS, t = n % CSRK_SLICE_ROWS, h = min((CSRKIdx)CSRK_SLICE_ROWS, nn - s * CSRK_SLICE_ROWS), len = blen[n], p0 = sliceptr[s];
  const PetscScalar *v   = bval + (BS * BS * p0 + t);
  CSRKIdx            q   = p0 + t;
  PetscScalar        sum[BS];
#pragma unroll
  for (int a = 0; a < BS; a++) sum[a] = 0.0;
#pragma unroll 2
  for (CSRKIdx j = 0; j < len; j++, q += h, v += BS * BS * h) {
    const PetscScalar *xc = x + BS * __ldcs(bcol + q);
    PetscScalar        xv[BS];
#pragma unroll
    for (int k = 0; k < BS; k++) xv[k] = xc[k];
#pragma unroll
    for (int a = 0; a < BS; a++) {
      PetscScalar p = CSRKLoadStreamed(v + a * BS * h) * xv[0];
#pragma unroll
      for (int k = 1; k < BS; k++) p += CSRKLoadStreamed(v + (a * BS + k) * h) * xv[k];
      sum[a] += p;
    }
  }
#pragma unroll
  for (int a = 0; a < BS; a++) CSRKStore<GENERAL>(BS * n + a, NULL, z, y, sum[a]);
}

/* y = diag(A), or diag(A) += a (SHIFT): a thread per row looks for the block holding its diagonal */
template <bool SHIFT>
__global__ void CSRKBSlicedDiagonalKernel(PetscInt64 m, int bs, const CSRKIdx *__restrict__ sliceptr, const CSRKIdx *__restrict__ blen, const CSRKIdx *__restrict__ bcol, PetscScalar *__restrict__ bval, PetscScalar *__restrict__ y, PetscScalar a)
{
  const PetscInt64 nn = m / bs;
  CSRK_GRIDSTRIDE(r, m)
  {
    const PetscInt64 n = r / bs, s = n / CSRK_SLICE_ROWS, t = n % CSRK_SLICE_ROWS, h = min((PetscInt64)CSRK_SLICE_ROWS, nn - s * CSRK_SLICE_ROWS);
    const PetscInt64 i = r % bs;
    PetscInt64       v = -1;
    for (CSRKIdx j = 0; j < blen[n]; j++)
      if (bcol[sliceptr[s] + j * h + t] == (CSRKIdx)n) {
        v = bs * (PetscInt64)bs * (sliceptr[s] + j * h) + (i * bs + i) * h + t;
        break;
      }
    if (SHIFT) {
      if (v >= 0) bval[v] += a;
    } else y[r] = v >= 0 ? bval[v] : 0.0;
  }
}

#endif
