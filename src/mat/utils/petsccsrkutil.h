/*
   Utilities of the tests, tutorials and benchmarks: Matrix Market input and generated problems.

   Built into the static library libcsrkutil.a of the tests and tutorials (BUILD/lib), not into the plugin libcsrk.so:
   a program that uses them links that library besides PETSc (and libcsrk.so, for the CSR-k types).
*/
#ifndef PETSCCSRKUTIL_H
#define PETSCCSRKUTIL_H

#include <petscmat.h>

/* PETSC_SUCCESS arrived in PETSc 3.19; programs built against older releases get it here */
#if PETSC_VERSION_LT(3, 19, 0) && !defined(PETSC_SUCCESS)
  #define PETSC_SUCCESS 0
#endif

/* Matrix Market reader (mmread.c) */
PETSC_EXTERN PetscErrorCode MatCSRKReadMatrixMarket(MPI_Comm, const char[], Mat *);

/* Generated problems and random renumberings (problems.c) */
PETSC_EXTERN const char *const MatCSRKProblems[];
PETSC_EXTERN PetscErrorCode    MatCSRKCreateProblem(MPI_Comm, const char[], PetscInt, PetscInt, Mat *);
PETSC_EXTERN PetscErrorCode    MatCSRKPermuteRandom(Mat, PetscInt, Mat *);
PETSC_EXTERN PetscErrorCode    MatCSRKPermuteRandomBlocks(Mat, PetscInt, PetscInt, Mat *);

#endif
