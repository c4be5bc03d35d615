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

PetscErrorCode MatCSRKChooseSizes(PetscInt k, PetscInt m, PetscInt nnz, PetscInt bs, PetscInt nthreads, PetscInt *sr, PetscInt *ssr)
{
  PetscInt cap = m / (CSRK_UNITS_PER_THREAD * PetscMax(nthreads, 1));

  PetscFunctionBegin;
  (void)nnz;
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
  PetscFunctionReturn(PETSC_SUCCESS);
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

/* GPU (CSR-3): the paper's constant-time model for NVIDIA Ampere, from the mean row length d (docs/tuning.md):
   ssrs = round(9.175 - 1.32 ln d), srs = round(20.5 - 3.5 ln d), then adjusted to the kernel's block shape */
PetscErrorCode MatCSRKChooseSizesGPU(PetscReal d, PetscInt *sr, PetscInt *ssr)
{
  PetscReal ld = PetscLogReal(PetscMax(d, 1.0));
  PetscInt  s2 = (PetscInt)PetscFloorReal(9.175 - 1.32 * ld + 0.5), s1 = (PetscInt)PetscFloorReal(20.5 - 3.5 * ld + 0.5);

  PetscFunctionBegin;
  s2 = PetscMax(s2, 1);
  s1 = PetscMax(s1, 1);
  if (d > 8 && d <= 16) s1 *= 4;
  else if (d > 16 && d <= 32) {
    s2 = (PetscInt)PetscFloorReal(2.5 * s2 + 0.5);
    s1 = 3 * s2;
  } else if (d > 32) {
    s2 *= 2;
    s1 = 2 * s2;
  }
  *sr  = s1;
  *ssr = s2;
  PetscFunctionReturn(PETSC_SUCCESS);
}
