static const char help[] = "KSP CG with aij and csrk: the same default preconditioner, the same iteration counts, the same solution.\n"
                           "  -problem <name> -n <n> | -f <file>, -pcs <default,jacobi,gamg,...>, plus -mat_csrk_* options\n"
                           "  -solution <file>  the csrk solutions written to a PETSc binary file (to compare runs byte for byte)\n"
                           "  -max_it <n>       iterations at most (default 2000; fewer than convergence needs is not a failure, and the\n"
                           "                    solutions are then compared to 1e-3 instead of 1e-6)\n"
                           "  -rtol <r>         relative tolerance (default 1e-8; 1e-30 runs max_it iterations)\n"
                           "  -permute <seed>   a random symmetric permutation of the matrix first (-permute_bs <bs>: of runs of bs rows)\n";

#include <petsccsrk.h>
#include <petsccsrkutil.h>
#include <petscksp.h>
#include "testutil.h"

static PetscInt  MaxIts = 2000;
static PetscReal RTol   = 1e-8;

static PetscErrorCode Solve(Mat M, const char *pctype, Vec b, Vec x, PetscInt *its, char *pcname, size_t len)
{
  KSP    ksp;
  PC     pc;
  PCType t;

  PetscFunctionBegin;
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)M), &ksp));
  PetscCall(KSPSetOperators(ksp, M, M));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPSetTolerances(ksp, RTol, PETSC_DEFAULT, PETSC_DEFAULT, MaxIts));
  PetscCall(KSPGetPC(ksp, &pc));
  if (pctype) PetscCall(PCSetType(pc, pctype));
  PetscCall(KSPSetUp(ksp));
  PetscCall(VecSet(x, 0.0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(PCGetType(pc, &t));
  PetscCall(PetscStrncpy(pcname, t, len));
  {
    /* the sub-preconditioner of block Jacobi, the default in parallel */
    PetscBool isbj;
    PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCBJACOBI, &isbj));
    if (isbj) {
      KSP     *sub;
      PetscInt nl;
      PC       spc;
      PetscCall(PCBJacobiGetSubKSP(pc, &nl, NULL, &sub));
      PetscCall(KSPGetPC(sub[0], &spc));
      PetscCall(PCGetType(spc, &t));
      PetscCall(PetscStrlcat(pcname, "+", len));
      PetscCall(PetscStrlcat(pcname, t, len));
    }
  }
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat       A, C;
  Vec       b, xa, xc;
  char      file[PETSC_MAX_PATH_LEN] = "", problem[64] = "lap3d7", *pcs[8], ctype[64] = MATCSRK;
  PetscInt  n = 16, npcs = 8, nfail = 0;
  PetscBool hasfile, haspcs, hassol;
  char      solfile[PETSC_MAX_PATH_LEN];
  PetscViewer sol = NULL;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatCSRKRegister());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof(file), &hasfile));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", problem, sizeof(problem), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-ctype", ctype, sizeof(ctype), NULL));
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-pcs", pcs, &npcs, &haspcs));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-max_it", &MaxIts, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-rtol", &RTol, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-solution", solfile, sizeof(solfile), &hassol));
  if (hassol) PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, solfile, FILE_MODE_WRITE, &sol));
  if (!haspcs) {
    npcs = 0;
    PetscCall(PetscStrallocpy("default", &pcs[npcs++]));
    PetscCall(PetscStrallocpy("jacobi", &pcs[npcs++]));
  }
  PetscCall(TestCreateMatrix(hasfile ? file : NULL, problem, n, &A));
  PetscCall(MatSetOption(A, MAT_SYMMETRIC, PETSC_TRUE));
  PetscCall(MatConvert(A, ctype, MAT_INITIAL_MATRIX, &C));
  PetscCall(MatSetFromOptions(C));
  PetscCall(MatCreateVecs(C, &xa, &b)); /* device vectors for csrkcuda */
  PetscCall(VecDuplicate(xa, &xc));
  {
    PetscRandom rnd;
    PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
    PetscCall(PetscRandomSetSeed(rnd, 5));
    PetscCall(PetscRandomSeed(rnd));
    PetscCall(VecSetRandom(b, rnd));
    PetscCall(PetscRandomDestroy(&rnd));
  }
  for (PetscInt p = 0; p < npcs; p++) {
    PetscInt    ia, ic;
    char        pa[64], pc[64];
    PetscBool   isdef, samepc;
    PetscReal   dx, nx;
    const char *t;
    PetscCall(PetscStrcmp(pcs[p], "default", &isdef));
    t = isdef ? NULL : pcs[p];
    PetscCall(Solve(A, t, b, xa, &ia, pa, sizeof(pa)));
    PetscCall(Solve(C, t, b, xc, &ic, pc, sizeof(pc)));
    if (sol) PetscCall(VecView(xc, sol));
    PetscCall(PetscStrcmp(pa, pc, &samepc));
    PetscCall(VecNorm(xa, NORM_2, &nx));
    PetscCall(VecAXPY(xc, -1.0, xa));
    PetscCall(VecNorm(xc, NORM_2, &dx));
    dx /= PetscMax(nx, PETSC_SMALL);
    /* a solve stopped at -max_it before it converged differs by its summation order, not only by rounding */
    if (ia != ic || !samepc || !(dx <= (ia < MaxIts ? 1e-6 : 1e-3))) {
      nfail++;
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL "));
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "CG %s: aij %" PetscInt_FMT " iterations (pc %s), csrk %" PetscInt_FMT " iterations (pc %s), solution difference %.2e\n", pcs[p], ia, pa, ic, pc, (double)dx));
    PetscCall(PetscFree(pcs[p]));
  }
  PetscCall(PetscViewerDestroy(&sol));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&xc));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&C));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}
