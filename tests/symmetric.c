static const char help[] = "The symmetric half (MAT_CSRK_SYMMETRIC_HALF, one thread): built on a symmetric block, its products match aij\n"
                           "(MatMult, MatMultAdd with y = z and y != z) through value changes that keep the symmetry, that break it\n"
                           "by rounding only (kept) and by more (dropped); a duplicate; under the set-up budget it is built only where\n"
                           "the machine file measured it faster than AIJ's kernel, after the products that pay for its build.\n"
                           "  -problem <name> -n <n>  the matrix (src/mat/utils/problems.c; default fem3d, 10): symmetric\n"
                           "  -permute <seed>         randomly renumbered first (0: not)\n"
                           "  -budget_only            only the set-up budget's part (blocks that eager builds would give row slices)\n"
                           "  -machine <keys>         a machine file with these measurements (tests/testutil.h)\n"
                           "  -expect_build <p>       the products before the half is built under the budget (-1: never); then values\n"
                           "                          that stop being symmetric: the half gives way at the refresh\n"
                           "  -expect_drop            ... to AIJ's kernel, the structure dropped (else to a loop the plan expects)\n";

#include <petsccsrk.h>
#include <petsccsrkutil.h>
#include <string.h>
#include "testutil.h"

/* y = C x (+ w) must equal A x (+ w) to rounding (y poisoned first); add: MatMultAdd, with y = w when same */
static PetscErrorCode Compare(Mat A, Mat C, Vec x, Vec y, Vec z, Vec w, PetscBool add, PetscBool same, const char *what)
{
  PetscReal err, nrm;

  PetscFunctionBegin;
  if (!add) {
    PetscCall(VecSet(y, 1e300));
    PetscCall(MatMult(C, x, y));
    PetscCall(MatMult(A, x, z));
  } else if (same) {
    PetscCall(VecCopy(w, y));
    PetscCall(MatMultAdd(C, x, y, y));
    PetscCall(MatMultAdd(A, x, w, z));
  } else {
    PetscCall(VecSet(y, 1e300));
    PetscCall(MatMultAdd(C, x, w, y));
    PetscCall(MatMultAdd(A, x, w, z));
  }
  PetscCall(VecNorm(z, NORM_INFINITY, &nrm));
  PetscCall(VecAXPY(z, -1.0, y));
  PetscCall(VecNorm(z, NORM_INFINITY, &err));
  PetscCheck(err <= 1e-12 * PetscMax(nrm, 1.0), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: product differs from aij by %g (norm %g)", what, (double)err, (double)nrm);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* every form of the product */
static PetscErrorCode CompareAll(Mat A, Mat C, Vec x, Vec y, Vec z, Vec w, const char *what)
{
  PetscFunctionBegin;
  PetscCall(Compare(A, C, x, y, z, w, PETSC_FALSE, PETSC_FALSE, what));
  PetscCall(Compare(A, C, x, y, z, w, PETSC_TRUE, PETSC_FALSE, what));
  PetscCall(Compare(A, C, x, y, z, w, PETSC_TRUE, PETSC_TRUE, what));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the row loop of the diagonal blocks must be (or not be) the symmetric half on every rank */
static PetscErrorCode ExpectHalf(Mat C, PetscBool half, const char *what)
{
  MatCSRKInfo info;
  PetscBool   has;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetInfo(C, &info));
  has = (PetscBool)(strstr(info.variant, "symmetric") != NULL);
  if (half) PetscCheck(has && !strstr(info.variant, "columns32"), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: expected the symmetric half on every rank, got row loops %s", what, info.variant);
  else PetscCheck(!has, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: expected no symmetric half, got row loops %s", what, info.variant);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the entry (r, c) of the first local row r with an off-diagonal entry in the local diagonal block, times f, in A and C
   (the same pattern: a change of values only) */
static PetscErrorCode ScaleOneEntry(Mat A, Mat C, PetscReal f)
{
  PetscInt           rstart, rend, ncols, c = -1;
  const PetscInt    *cols;
  const PetscScalar *vals;
  PetscScalar        v = 0;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCall(MatGetRow(A, rstart, &ncols, &cols, &vals));
  for (PetscInt j = 0; j < ncols && c < 0; j++)
    if (cols[j] != rstart && cols[j] >= rstart && cols[j] < rend) c = cols[j], v = vals[j];
  PetscCall(MatRestoreRow(A, rstart, &ncols, &cols, &vals));
  PetscCheck(c >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "first local row without an off-diagonal entry in its block");
  PetscCall(MatSetValue(A, rstart, c, v * f, INSERT_VALUES));
  PetscCall(MatSetValue(C, rstart, c, v * f, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(C, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(C, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* C: A as csrk on one thread a rank with the given set-up (the natural order, for eager: the half needs it) */
static PetscErrorCode ConvertOneThread(Mat A, MatCSRKSetup setup, Mat *C)
{
  PetscFunctionBegin;
  PetscCall(MatConvert(A, MATCSRK, MAT_INITIAL_MATRIX, C));
  PetscCall(MatCSRKSetSetup(*C, setup));
  PetscCall(MatCSRKSetNumThreads(*C, 1));
  if (setup == MAT_CSRK_SETUP_EAGER) PetscCall(MatCSRKSetOrdering(*C, MAT_CSRK_ORDERING_NATURAL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat         A, C, D;
  Vec         x, y, z, w;
  char        problem[64] = "fem3d";
  PetscInt    n = 10, seed = 0, wait = -1;
  PetscBool   budgetonly = PETSC_FALSE, drop = PETSC_FALSE;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(TestMachineFile());
  PetscCall(MatCSRKRegister());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", problem, sizeof(problem), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-permute", &seed, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-budget_only", &budgetonly, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-expect_build", &wait, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_drop", &drop, NULL));
  PetscCall(MatCSRKCreateProblem(PETSC_COMM_WORLD, problem, n, 1, &A));
  if (seed) {
    PetscCall(MatCSRKPermuteRandom(A, seed, &D));
    PetscCall(MatDestroy(&A));
    A = D;
  }
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecDuplicate(y, &z));
  PetscCall(VecDuplicate(y, &w));
  PetscCall(VecSetRandom(x, NULL));
  PetscCall(VecSetRandom(w, NULL));

  if (!budgetonly) {
    /* 1. eager: the half at the first product, on every rank */
    PetscCall(ConvertOneThread(A, MAT_CSRK_SETUP_EAGER, &C));
    PetscCall(CompareAll(A, C, x, y, z, w, "symmetric block"));
    PetscCall(ExpectHalf(C, PETSC_TRUE, "symmetric block"));

    /* 2. new values that keep the symmetry: copied again, the half kept */
    PetscCall(MatScale(A, 3.0));
    PetscCall(MatScale(C, 3.0));
    PetscCall(CompareAll(A, C, x, y, z, w, "after MatScale"));
    PetscCall(ExpectHalf(C, PETSC_TRUE, "after MatScale"));

    /* 3. a duplicate multiplies with its own copy of the half */
    PetscCall(MatDuplicate(C, MAT_COPY_VALUES, &D));
    PetscCall(CompareAll(A, D, x, y, z, w, "duplicate"));
    PetscCall(ExpectHalf(D, PETSC_TRUE, "duplicate"));
    PetscCall(MatDestroy(&D));

    /* 4. one entry off by a unit of rounding (an assembled operator's kind of asymmetry): the half kept, the products
       the same to rounding */
    PetscCall(ScaleOneEntry(A, C, 1.0 + 2 * PETSC_MACHINE_EPSILON));
    PetscCall(CompareAll(A, C, x, y, z, w, "one entry off by rounding"));
    PetscCall(ExpectHalf(C, PETSC_TRUE, "one entry off by rounding"));

    /* 5. one entry off by more: not symmetric, the half dropped at the refresh, the products right */
    PetscCall(ScaleOneEntry(A, C, 1.5));
    PetscCall(CompareAll(A, C, x, y, z, w, "one entry changed"));
    PetscCall(ExpectHalf(C, PETSC_FALSE, "one entry changed"));
    PetscCall(MatDestroy(&C));

    /* 6. an unsymmetric block is never built with the half */
    PetscCall(ConvertOneThread(A, MAT_CSRK_SETUP_EAGER, &C));
    PetscCall(CompareAll(A, C, x, y, z, w, "unsymmetric block"));
    PetscCall(ExpectHalf(C, PETSC_FALSE, "unsymmetric block"));
    PetscCall(MatDestroy(&C));
    PetscCall(ScaleOneEntry(A, A, 1.0 / 1.5)); /* (both arguments A: back to the symmetric values, to rounding) */
  }

  /* 7. the set-up: the half competes with AIJ's kernel, so it is built only where the machine file measured it
     faster (-machine), after the products that pay for it (-expect_build), AIJ's kernel until then; without, never */
  PetscCall(ConvertOneThread(A, MAT_CSRK_SETUP_BUDGET, &C));
  for (PetscInt i = 0; i < (wait >= 0 ? wait : 1000); i++) {
    PetscCall(Compare(A, C, x, y, z, w, PETSC_FALSE, PETSC_FALSE, "budget, before the half"));
    PetscCall(ExpectHalf(C, PETSC_FALSE, "budget, before the half's build"));
  }
  PetscCall(Compare(A, C, x, y, z, w, PETSC_FALSE, PETSC_FALSE, "budget, the half's build"));
  if (wait >= 0) PetscCall(ExpectHalf(C, PETSC_TRUE, "budget, the half's build"));
  else PetscCall(ExpectHalf(C, PETSC_FALSE, "budget, no machine file"));

  /* 8. values that stop being symmetric: at the refresh the half falls back to AIJ's own loop over the AIJ arrays, kept
     only where the plan expects that loop (-expect_drop: it does not, as on scalar rows without a machine-file gain
     for it): then the structure is dropped, AIJ's kernel for this pattern, nothing built again; the products right
     all along */
  if (wait >= 0) {
    MatCSRKInfo info;
    PetscInt    i;

    PetscCall(ScaleOneEntry(A, C, 1.5));
    for (i = 0; i < 1000; i++) {
      PetscCall(Compare(A, C, x, y, z, w, PETSC_FALSE, PETSC_FALSE, "budget, values no longer symmetric"));
      PetscCall(MatCSRKGetInfo(C, &info));
      if (!strstr(info.variant, "symmetric")) break;
    }
    if (drop) PetscCheck(!info.variant[0] && info.wait == -1, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "values no longer symmetric: expected the structure dropped for AIJ's kernel after the refresh, got row loops '%s' (next build after %" PetscInt_FMT " products) after %" PetscInt_FMT " products", info.variant, info.wait, i + 1);
    else PetscCheck(info.variant[0] && !strstr(info.variant, "symmetric") && strstr(info.expected, info.variant), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "values no longer symmetric: expected a loop of the plan (%s) after the refresh, got row loops '%s' after %" PetscInt_FMT " products", info.expected, info.variant, i + 1);
    for (i = 0; i < 200; i++) PetscCall(Compare(A, C, x, y, z, w, PETSC_TRUE, PETSC_FALSE, "budget, after the half"));
    if (drop) {
      PetscCall(MatCSRKGetInfo(C, &info));
      PetscCheck(!info.variant[0], PETSC_COMM_WORLD, PETSC_ERR_PLIB, "values no longer symmetric: something was built again (%s)", info.variant);
    }
  }
  PetscCall(MatDestroy(&C));

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "symmetric half on %s: ok\n", problem));
  PetscCall(MatDestroy(&A));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&w));
  PetscCall(TestMachineFileRemove());
  PetscCall(PetscFinalize());
  return 0;
}
