static const char help[] = "The orderings do not depend on the number of threads: Band-k (its graph is built by the threads, then cut by\n"
                           "METIS and ordered by RCM) computed with one thread and with several gives the same permutation, position for\n"
                           "position.\n"
                           "  -problem <name>[,...] -n <n>[,...] [-permute <seed>] [-threads <t>]\n";

#include <petsccsrk.h>
#include <petsccsrkutil.h>
#if defined(_OPENMP)
  #include <omp.h>
#endif

static PetscErrorCode BandK(Mat A, int nthreads, IS *perm)
{
  IS col;

  PetscFunctionBegin;
#if defined(_OPENMP)
  omp_set_num_threads(nthreads);
#else
  (void)nthreads;
#endif
  PetscCall(MatGetOrdering(A, MATORDERINGBANDK, perm, &col));
  PetscCall(ISDestroy(&col));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char      names[256] = "lap3d7,lap3d27,random,powerlaw", *name, *save = NULL;
  PetscInt  sizes[16]  = {40, 24, 20000, 20000}, nsizes = 16, seed = 1, threads = 4, nfail = 0, nchecks = 0, k = 0;
  PetscBool permute = PETSC_TRUE, flg;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatCSRKRegister());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", names, sizeof(names), NULL));
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-n", sizes, &nsizes, &flg));
  if (!flg) nsizes = 4;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-permute", &seed, &permute));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-threads", &threads, NULL));
  if (!permute) seed = 1; /* the default: randomly permuted inputs (-permute 0: natural) */
  for (name = strtok_r(names, ",", &save); name; name = strtok_r(NULL, ",", &save), k++) {
    Mat       A, P = NULL;
    IS        one, many;
    PetscBool same;
    PetscInt  m;

    PetscCall(MatCSRKCreateProblem(PETSC_COMM_SELF, name, sizes[PetscMin(k, nsizes - 1)], 7, &A));
    if (seed > 0) {
      PetscCall(MatCSRKPermuteRandom(A, seed, &P));
      PetscCall(MatDestroy(&A));
      A = P;
    }
    PetscCall(MatGetSize(A, &m, NULL));
    PetscCall(BandK(A, 1, &one));
    PetscCall(BandK(A, (int)threads, &many));
    {
      const PetscInt *a, *b;
      PetscCall(ISGetIndices(one, &a));
      PetscCall(ISGetIndices(many, &b));
      PetscCall(PetscArraycmp(a, b, m, &same)); /* position for position (ISEqual() compares the sets) */
      PetscCall(ISRestoreIndices(one, &a));
      PetscCall(ISRestoreIndices(many, &b));
    }
    nchecks++;
    if (!same) nfail++;
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "%s %s (%" PetscInt_FMT " rows): Band-k with 1 and %" PetscInt_FMT " threads %s\n", same ? "ok  " : "FAIL", name, m, threads, same ? "equal" : "DIFFER"));
    PetscCall(ISDestroy(&one));
    PetscCall(ISDestroy(&many));
    PetscCall(MatDestroy(&A));
  }
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "ordering: %" PetscInt_FMT " checks, %" PetscInt_FMT " failures\n", nchecks, nfail));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}
