/*
   The slices that the sliced storage (csrkcudasliced.cu, bs 1) and the block-sliced one (csrkcudabsliced.cu, bs 2-6)
   share: 32 (block) rows a slice, stored (block) column by (block) column, and the move of the CSR arrays into such a
   layout and back. Needs only PetscScalar, PetscInt64 and CSRKIdx (tests/bslicedemu.cpp builds it on the host).
*/
#ifndef CSRKCUDASLICES_CUH
#define CSRKCUDASLICES_CUH

#include "csrkcudadevice.cuh"

/* (block) rows a slice: a warp's, a thread each */
#define CSRK_SLICE_ROWS 32

/* Row r's entries and a layout of slices of 32 block rows of bs rows, stored block column by block column (bs 1: the
   sliced storage of csrkcudasliced.cu; 2-6: the block-sliced one): entry k of block j of row a of block row n (slice
   s = n / 32, thread t = n % 32, h block rows in s) is value bs^2 (sliceptr[s] + j h) + (a bs + k) h + t, and block j's
   column (in blocks) is scol[sliceptr[s] + j h + t]. Into the layout (BACK false: the set-up, the value refresh) or back
   into CSR arrays (the RCM copy made after its wait from a layout that kept none); NULL arrays are skipped */
template <bool BACK>
__global__ void CSRKSliceMoveKernel(PetscInt64 m, int bs, const CSRKIdx *__restrict__ rowptr, const CSRKIdx *__restrict__ sliceptr, CSRKIdx *__restrict__ colidx, PetscScalar *__restrict__ val, CSRKIdx *__restrict__ scol, PetscScalar *__restrict__ sval)
{
  const PetscInt64 nn = m / bs;
  CSRK_GRIDSTRIDE(r, m)
  {
    const PetscInt64 n = r / bs, s = n / CSRK_SLICE_ROWS, t = n % CSRK_SLICE_ROWS, h = min((PetscInt64)CSRK_SLICE_ROWS, nn - s * CSRK_SLICE_ROWS), a = r % bs;
    const CSRKIdx    q0 = rowptr[r], nb = (rowptr[r + 1] - q0) / bs;
    PetscInt64       b = sliceptr[s] + t, v = bs * (PetscInt64)bs * sliceptr[s] + a * bs * h + t;
    for (CSRKIdx j = 0; j < nb; j++, b += h, v += bs * bs * h) {
      for (int k = 0; k < bs; k++) {
        const CSRKIdx q = q0 + j * bs + k;
        if (BACK) {
          if (colidx) colidx[q] = bs * scol[b] + k;
          if (val) val[q] = sval[v + k * h];
        } else {
          if (scol && !a && !k) scol[b] = colidx[q] / bs;
          if (sval) sval[v + k * h] = val[q];
        }
      }
    }
  }
}

#endif
