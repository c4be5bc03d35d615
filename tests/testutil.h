/* Helpers shared by the test programs */
#ifndef CSRK_TESTUTIL_H
#define CSRK_TESTUTIL_H
#include <petsccsrk.h>
#include <petsccsrkutil.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* -machine "<key> <gain>,...": a machine file for this processor holding those measurements (the keys of
   src/mat/impls/csrk/csrkmachine.c), named with -mat_csrk_machine_file, so that a test sees the rivals of AIJ's kernel
   chosen as a measured machine would have them; call before MatCSRKRegister(). Without -machine:
   -mat_csrk_machine_file none, whatever make tune wrote beside the library. */
static inline PetscErrorCode TestMachineFile(void)
{
  char        keys[256] = "", file[64] = "none";
  const char *lines[16];
  PetscInt    n = 0;
  PetscBool   set;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-machine", keys, sizeof(keys), &set));
  if (set) {
    PetscCall(PetscSNPrintf(file, sizeof(file), "csrk-machine-test-%d.txt", (int)getpid()));
    PetscCallMPI(MPI_Bcast(file, sizeof(file), MPI_CHAR, 0, PETSC_COMM_WORLD));
    for (char *k = strtok(keys, ","); k && n < 16; k = strtok(NULL, ",")) lines[n++] = k;
    PetscCall(MatCSRKWriteMachineFile(PETSC_COMM_WORLD, file, "written by a test (tests/testutil.h)", n, lines));
  }
  PetscCall(PetscOptionsSetValue(NULL, "-mat_csrk_machine_file", file));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the machine file of TestMachineFile() removed */
static inline PetscErrorCode TestMachineFileRemove(void)
{
  char        file[PETSC_MAX_PATH_LEN];
  PetscBool   none;
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_csrk_machine_file", file, sizeof(file), NULL));
  PetscCall(PetscStrcmp(file, "none", &none));
  if (!none && !rank) remove(file);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The test's matrix: the Matrix Market file (NULL: none), else the generated problem of size n; then, with -permute
   <seed>, a random symmetric permutation of whole runs of -permute_bs <bs> rows (1 by default) */
static inline PetscErrorCode TestCreateMatrix(const char *file, const char *problem, PetscInt n, Mat *A)
{
  PetscInt seed = -1, bs = 1;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-permute", &seed, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-permute_bs", &bs, NULL));
  if (file) PetscCall(MatCSRKReadMatrixMarket(PETSC_COMM_WORLD, file, A));
  else PetscCall(MatCSRKCreateProblem(PETSC_COMM_WORLD, problem, n, 1, A));
  if (seed >= 0) {
    Mat P;

    PetscCall(MatCSRKPermuteRandomBlocks(*A, bs, seed, &P));
    PetscCall(MatDestroy(A));
    *A = P;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ||y - yref||_inf / max(||yref||_inf, PETSC_SMALL); NaN when y still holds a NaN (a poisoned entry left unwritten),
   which every "err <= tol" test rejects */
static inline PetscErrorCode TestRelativeError(Vec y, Vec yref, PetscReal *err)
{
  Vec       d;
  PetscReal ref;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(y, &d));
  PetscCall(VecWAXPY(d, -1.0, yref, y));
  PetscCall(VecNorm(d, NORM_INFINITY, err));
  PetscCall(VecNorm(yref, NORM_INFINITY, &ref));
  PetscCall(VecDestroy(&d));
  *err /= PetscMax(ref, PETSC_SMALL);
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif
