/* Helpers shared by the test programs */
#ifndef CSRK_TESTUTIL_H
#define CSRK_TESTUTIL_H
#include <petscvec.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* -machine "<key> <gain>,...": a machine file for this processor holding those measurements (the keys of
   src/mat/impls/csrk/csrkmachine.c), written by rank 0 and named with -mat_csrk_machine_file, so that a test sees the
   rivals of AIJ's kernel chosen as a measured machine would have them; call before MatCSRKRegister(). Without
   -machine: -mat_csrk_machine_file none, whatever make tune wrote beside the library. */
static inline PetscErrorCode TestMachineFile(void)
{
  char        keys[256] = "", file[64] = "none", model[256] = "", line[256];
  PetscBool   set;
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-machine", keys, sizeof(keys), &set));
  if (set) {
    PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    PetscCall(PetscSNPrintf(file, sizeof(file), "csrk-machine-test-%d.txt", (int)getpid()));
    PetscCallMPI(MPI_Bcast(file, sizeof(file), MPI_CHAR, 0, PETSC_COMM_WORLD));
    if (!rank) {
      FILE *f = fopen("/proc/cpuinfo", "r"), *o;
      while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
          const char *v = strchr(line, ':') + 1;
          while (*v == ' ' || *v == '\t') v++;
          snprintf(model, sizeof(model), "%s", v);
          model[strcspn(model, "\n")] = 0;
          break;
        }
      if (f) fclose(f);
      o = fopen(file, "w");
      PetscCheck(o, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", file);
      fprintf(o, "cpu %s\n", model);
      for (char *k = strtok(keys, ","); k; k = strtok(NULL, ",")) fprintf(o, "%s\n", k);
      fclose(o);
    }
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
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
