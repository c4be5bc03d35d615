static const char help[] = "The set-up (MatCSRKSetSetup(), -mat_csrk_setup budget): products run with AIJ's kernel until they pay for the\n"
                           "expected build, counted, never timed: the structure is built at a product known in advance, the same in\n"
                           "every run; new values are copied in after the products that pay for the copy; new options start again;\n"
                           "where nothing would read fewer bytes than AIJ's kernel (and the machine file measured no rival faster),\n"
                           "nothing is built; the off-process block of an MPI matrix is never built; every product matches aij, and two\n"
                           "matrices given the same products give the same bits.\n"
                           "  -problem <name> -n <n>  the matrix (src/mat/utils/problems.c; default lap3d7, 40)\n"
                           "  -expect_build <p>       the products that run with AIJ's kernel before the build (-1: never built)\n"
                           "  -expect_loop <name>     the row loop then built (slices, nodes, symmetric, columns32, ...)\n"
                           "  -expect_refresh <p>     the products with AIJ's kernel after a change of values, before the copy (default 20)\n"
                           "  -expect_values <0,1>    whether the built rows keep value lists (default 0)\n"
                           "  -machine <keys>         a machine file with these measurements (tests/testutil.h)\n";

#include <petsccsrk.h>
#include <petsccsrkutil.h>
#include <string.h>
#include "testutil.h"

/* y = C x must equal z = A x (y poisoned first), and C2 x must be y to the bit */
static PetscErrorCode Compare(Mat A, Mat C, Mat C2, Vec x, Vec y, Vec z, const char *what)
{
  PetscReal          err, nrm;
  const PetscScalar *a, *b;
  PetscInt           n;
  Vec                y2;

  PetscFunctionBegin;
  PetscCall(VecSet(y, 1e300));
  PetscCall(MatMult(C, x, y));
  PetscCall(VecDuplicate(y, &y2));
  PetscCall(MatMult(C2, x, y2));
  PetscCall(VecGetLocalSize(y, &n));
  PetscCall(VecGetArrayRead(y, &a));
  PetscCall(VecGetArrayRead(y2, &b));
  PetscCheck(!n || !memcmp(a, b, sizeof(PetscScalar) * (size_t)n), PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: two matrices given the same products differ", what);
  PetscCall(VecRestoreArrayRead(y, &a));
  PetscCall(VecRestoreArrayRead(y2, &b));
  PetscCall(VecDestroy(&y2));
  PetscCall(MatMult(A, x, z));
  PetscCall(VecNorm(z, NORM_INFINITY, &nrm));
  PetscCall(VecAXPY(z, -1.0, y));
  PetscCall(VecNorm(z, NORM_INFINITY, &err));
  PetscCheck(err <= 1e-12 * PetscMax(nrm, 1.0), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: MatMult differs from aij by %g", what, (double)err);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* p products, each checked; then the builds and refreshes must be those given */
static PetscErrorCode Products(Mat A, Mat C, Mat C2, Vec x, Vec y, Vec z, PetscInt p, PetscInt nbuilds, PetscInt nrefresh, const char *what)
{
  MatCSRKInfo info;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < p; i++) PetscCall(Compare(A, C, C2, x, y, z, what));
  PetscCall(MatCSRKGetInfo(C, &info));
  PetscCheck(info.nbuilds == nbuilds && info.nrefresh == nrefresh, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: %" PetscInt_FMT " builds and %" PetscInt_FMT " refreshes, expected %" PetscInt_FMT " and %" PetscInt_FMT, what, info.nbuilds, info.nrefresh, nbuilds, nrefresh);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* one in 13 of the local rows' diagonal entries plus d, in A, C and C2 */
static PetscErrorCode AddToSomeDiagonals(Mat M[3], PetscScalar d)
{
  PetscInt rstart, rend;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(M[0], &rstart, &rend));
  for (PetscInt k = 0; k < 3; k++) {
    for (PetscInt r = rstart; r < rend; r += 13) PetscCall(MatSetValue(M[k], r, r, d, ADD_VALUES));
    PetscCall(MatAssemblyBegin(M[k], MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(M[k], MAT_FINAL_ASSEMBLY));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Convert(Mat A, Mat *C)
{
  PetscFunctionBegin;
  PetscCall(MatConvert(A, MATCSRK, MAT_INITIAL_MATRIX, C));
  PetscCall(MatCSRKSetSetup(*C, MAT_CSRK_SETUP_BUDGET)); /* whatever the environment asks for the other tests */
  PetscCall(MatCSRKSetNumThreads(*C, 1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat         A, C, C2, M[3];
  Vec         x, y, z;
  char        problem[64] = "lap3d7", loop[64] = "";
  PetscInt    n = 40, wait = -1, rwait = 20, b;
  MatCSRKInfo info;
  PetscMPIInt size;
  PetscBool   values = PETSC_FALSE;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(TestMachineFile());
  PetscCall(MatCSRKRegister());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", problem, sizeof(problem), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-expect_build", &wait, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-expect_loop", loop, sizeof(loop), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-expect_refresh", &rwait, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_values", &values, NULL));
  PetscCall(MatCSRKCreateProblem(PETSC_COMM_WORLD, problem, n, 1, &A));
  PetscCall(Convert(A, &C));
  PetscCall(Convert(A, &C2));
  M[0] = A, M[1] = C, M[2] = C2;
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecDuplicate(y, &z));
  PetscCall(VecSetRandom(x, NULL));
  b = wait >= 0 ? 1 : 0;

  /* 1. the products before the build run AIJ's kernel; the build comes at the product after them, not before */
  PetscCall(Products(A, C, C2, x, y, z, wait >= 0 ? wait : 300, 0, 0, "before the build"));
  PetscCall(MatCSRKGetInfo(C, &info));
  PetscCheck(info.nfast == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "before the build: %" PetscInt_FMT " products with a structure", info.nfast);
  PetscCall(Products(A, C, C2, x, y, z, 1, b, 0, "the build"));
  PetscCall(MatCSRKGetInfo(C, &info));
  if (wait >= 0) PetscCheck(strstr(info.variant, loop), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "the build: row loops %s, expected %s", info.variant, loop);
  PetscCheck(!values || info.nvalued > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "the build: no value lists");

  /* 2. new values: AIJ's kernel until the products pay for the copy, then refreshed, not rebuilt */
  for (PetscInt k = 0; k < 3; k++) PetscCall(MatScale(M[k], 3.0));
  PetscCall(Products(A, C, C2, x, y, z, wait >= 0 ? rwait : 30, b, 0, "after MatScale, before the copy"));
  PetscCall(Products(A, C, C2, x, y, z, 1, b, b, "after MatScale, the copy"));

  /* 3. value lists: a change of one row in 13 leaves those rows their own values, the old values bring the lists back */
  if (values) {
    PetscInt nvalued;
    PetscCall(MatCSRKGetInfo(C, &info));
    nvalued = info.nvalued;
    PetscCall(AddToSomeDiagonals(M, 1.0));
    PetscCall(Products(A, C, C2, x, y, z, rwait + 1, 1, 2, "value lists, one row in 13 changed"));
    PetscCall(MatCSRKGetInfo(C, &info));
    PetscCheck(info.nvalued < nvalued, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "value lists: one row in 13 changed, still %" PetscInt_FMT " of %" PetscInt_FMT " rows with lists", info.nvalued, nvalued);
    PetscCall(AddToSomeDiagonals(M, -1.0)); /* the values are small integers: back to the same bits */
    PetscCall(Products(A, C, C2, x, y, z, rwait + 1, 1, 3, "value lists, values restored"));
    PetscCall(MatCSRKGetInfo(C, &info));
    PetscCheck(info.nvalued == nvalued, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "value lists: values restored, %" PetscInt_FMT " rows with lists instead of %" PetscInt_FMT, info.nvalued, nvalued);
  }

  /* 4. options that change the structure: built again after the same wait */
  PetscCall(MatCSRKGetInfo(C, &info));
  for (PetscInt k = 1; k < 3; k++) PetscCall(MatCSRKSetLevels(M[k], 3));
  PetscCall(Products(A, C, C2, x, y, z, wait >= 0 ? wait : 30, info.nbuilds, info.nrefresh, "new options, before the build"));
  PetscCall(Products(A, C, C2, x, y, z, 1, info.nbuilds + b, info.nrefresh, "new options, the build"));

  /* 5. the off-process block of an MPI matrix keeps AIJ's compressed rows */
  if (size > 1) {
    Mat         Ao;
    MatCSRKInfo oinfo;
    PetscCall(MatMPIAIJGetSeqAIJ(C, NULL, &Ao, NULL));
    PetscCall(MatCSRKGetInfo(Ao, &oinfo));
    PetscCheck(oinfo.nbuilds == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the off-process block built a structure");
  }

  /* 6. eager: built at the first product, whatever the machine file says */
  PetscCall(MatCSRKGetInfo(C, &info));
  for (PetscInt k = 1; k < 3; k++) PetscCall(MatCSRKSetSetup(M[k], MAT_CSRK_SETUP_EAGER));
  PetscCall(Products(A, C, C2, x, y, z, 1, info.nbuilds + 1, info.nrefresh, "eager"));

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "set-up of %s: all checks passed\n", problem));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&C2));
  PetscCall(TestMachineFileRemove());
  PetscCall(PetscFinalize());
  return 0;
}
