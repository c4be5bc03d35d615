/*
   Constant-time choice of the CSR-k sizes from the matrix dimensions (see docs/tuning.md).

   CPU (CSR-2): the paper finds the best super-row size is flat over a wide range and that a constant
   (96 rows) is close to optimal for most matrices; the super-rows are the unit of the static OpenMP
   schedule, so they are also capped to leave at least 8 units per thread for load balance.
   CSR-3 on the CPU: 32-row super-rows grouped by 8 into super-super-rows (256 rows), same cap.
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
