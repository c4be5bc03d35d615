/*
   Constant-time choice of the CSR-k sizes from the matrix dimensions (see docs/tuning.md).

   CPU (CSR-2): the paper finds the best super-row size is flat over a wide range and that a constant
   (96 rows) is close to optimal for most matrices; the super-rows are the unit of the static OpenMP
   schedule, so they are also capped to leave at least 8 units per thread for load balance.
   CSR-3 on the CPU: 32-row super-rows grouped by 8 into super-super-rows (256 rows), same cap.

   Band-k groups (the METIS parts, inside which super-rows are cut) hold about 1 MiB of matrix data: measured on
   a scrambled 3D Laplacian (docs/design.md), larger groups keep more x reuse inside a group and METIS is far
   cheaper with fewer parts, while at least 4 groups per thread keep the static schedule balanced.
*/
#include "csrkimpl.h"

#define CSRK_CPU_SR2        96
#define CSRK_CPU_SR3        32
#define CSRK_CPU_SSR3       8
#define CSRK_UNITS_PER_THREAD 8

void MatCSRKChooseSizes(PetscInt k, PetscInt m, PetscInt bs, PetscInt nthreads, PetscInt *sr, PetscInt *ssr)
{
  PetscInt cap = m / (CSRK_UNITS_PER_THREAD * PetscMax(nthreads, 1));

  bs = PetscMax(bs, 1);
  if (k <= 2) {
    *sr  = PetscMin(CSRK_CPU_SR2, PetscMax(cap, 1));
    *ssr = 1;
  } else {
    *sr  = CSRK_CPU_SR3;
    *ssr = PetscMin(CSRK_CPU_SSR3, PetscMax(cap / CSRK_CPU_SR3, 1));
    if (cap < CSRK_CPU_SR3) *sr = PetscMax(cap, 1);
  }
  /* keep the rows of one block (node) in one super-row */
  *sr = PetscMax(bs, (*sr / bs) * bs);
}

#define CSRK_BANDK_GROUP_BYTES (1 << 20)
#define CSRK_GROUPS_PER_THREAD 4

PetscInt MatCSRKBandKGroupRows(PetscInt m, PetscInt nnz, PetscInt bs, PetscInt nthreads)
{
  const PetscReal rowbytes = 12.0 * (PetscReal)nnz / (PetscReal)PetscMax(m, 1) + 20.0;
  PetscInt        rows     = (PetscInt)(CSRK_BANDK_GROUP_BYTES / rowbytes);

  rows = PetscMin(rows, m / (CSRK_GROUPS_PER_THREAD * PetscMax(nthreads, 1)));
  rows = PetscMax(rows, 64);
  bs   = PetscMax(bs, 1);
  return PetscMax(bs, (rows / bs) * bs);
}

/* GPU (CSR-3) on Hopper: a constant-time rule from the row-length statistics (mean d, coefficient of variation cv),
   fitted to the sweeps of docs/tuning.md (H200; 7-point and 27-point Laplacians, 3D elasticity), the one rule of the
   device copy (cuda/csrkcudaplan.cu) and of the host structure of csrkcuda.
   Regular rows (cv <= 0.3) use the sliced kernel: a warp per 32-row super-row stored column by column, 16 super-rows
   per block of 4 warps (each warp takes 4 in turn), the best of 2 to 64 super-rows per block on the stencils.
   Irregular rows use the stream kernel with 8-row super-rows by 2, the best of the sizes swept on the shared irregular
   matrices. With a kernel forced: short rows (d <= 8) 8 by 8, longer rows 16 by 2 (d <= 32) or 8 by 2, the best blocks
   of the first stencil sweeps. The paper's Ampere formula, ssrs = round(9.175 - 1.32 ln d), srs = round(20.5 - 3.5 ln d),
   was slower than these on the H200. The sweeps and their figures are in docs/tuning.md. */
void MatCSRKGPUSizes(MatCSRKCUDAKernel kernel, PetscBool sliced, PetscReal d, PetscInt *sr, PetscInt *ssr)
{
  if (sliced) *sr = 32, *ssr = 16;
  else if (kernel == MAT_CSRK_CUDA_KERNEL_AUTO || d > 32) *sr = 8, *ssr = 2;
  else if (d <= 8) *sr = 8, *ssr = 8;
  else *sr = 16, *ssr = 2;
}
