static const char help[] = "The set-up budget (MatCSRKSetSetup(), -mat_csrk_setup budget): a few products run with AIJ's kernel and build\n"
                           "nothing; a long run builds the structure, no later than the budget allows, and every product before\n"
                           "and after matches aij; a value change is refreshed, a pattern change starts again; the off-process\n"
                           "block of an MPI matrix is never built.\n"
                           "  -problem <name> -n <n>  the matrix (src/mat/utils/problems.c; default lap3d7, 40)\n"
                           "  -max_products <n>       products to wait at most for the build (default 4000)\n";

#include <petsccsrk.h>

/* y = C x must equal z = A x (y poisoned first) */
static PetscErrorCode Compare(Mat A, Mat C, Vec x, Vec y, Vec z, const char *what)
{
  PetscReal err, nrm;

  PetscFunctionBegin;
  PetscCall(VecSet(y, 1e300));
  PetscCall(MatMult(C, x, y));
  PetscCall(MatMult(A, x, z));
  PetscCall(VecNorm(z, NORM_INFINITY, &nrm));
  PetscCall(VecAXPY(z, -1.0, y));
  PetscCall(VecNorm(z, NORM_INFINITY, &err));
  PetscCheck(err <= 1e-12 * PetscMax(nrm, 1.0), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: MatMult differs from aij by %g", what, (double)err);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* products until the structure is built again and used (or max), each checked */
static PetscErrorCode RunUntilBuilt(Mat A, Mat C, Vec x, Vec y, Vec z, PetscInt max, const char *what, MatCSRKInfo *info)
{
  PetscInt nbuilds, nfast;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetInfo(C, info));
  nbuilds = info->nbuilds;
  nfast   = info->nfast;
  for (PetscInt i = 0; i < max; i++) {
    PetscCall(Compare(A, C, x, y, z, what));
    PetscCall(MatCSRKGetInfo(C, info));
    if (info->nbuilds > nbuilds && info->nfast > nfast) break;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat         A, C;
  Vec         x, y, z;
  char        problem[64] = "lap3d7";
  PetscInt    n = 40, max = 4000, nfast, nbuilds;
  MatCSRKInfo info;
  PetscMPIInt size;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatCSRKRegister());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", problem, sizeof(problem), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-max_products", &max, NULL));
  PetscCall(MatCSRKCreateProblem(PETSC_COMM_WORLD, problem, n, 1, &A));
  PetscCall(MatConvert(A, MATCSRK, MAT_INITIAL_MATRIX, &C));
  PetscCall(MatCSRKSetSetup(C, MAT_CSRK_SETUP_BUDGET)); /* whatever the environment asks for the other tests */
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecDuplicate(y, &z));
  PetscCall(VecSetRandom(x, NULL));

  /* 1. a short run: AIJ's kernel, nothing built */
  for (PetscInt i = 0; i < 3; i++) PetscCall(Compare(A, C, x, y, z, "short run"));
  PetscCall(MatCSRKGetInfo(C, &info));
  PetscCheck(info.nbuilds == 0 && info.nbase == 3 && info.nfast == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "3 products: expected no build and 3 AIJ products, got %" PetscInt_FMT " builds, %" PetscInt_FMT " AIJ and %" PetscInt_FMT " fast products", info.nbuilds, info.nbase, info.nfast);

  /* 2. a long run: built once the products have paid for it, not at once */
  PetscCall(RunUntilBuilt(A, C, x, y, z, max, "long run", &info));
  PetscCheck(info.nbuilds >= 1 && info.nfast > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "no structure after %" PetscInt_FMT " products", max);
  PetscCheck(info.nbase >= 10, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "built after %" PetscInt_FMT " AIJ products: the budget needs the product time of at least ten times the build's expected cost", info.nbase);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "built after %" PetscInt_FMT " AIJ products\n", info.nbase));
  for (PetscInt i = 0; i < 5; i++) PetscCall(Compare(A, C, x, y, z, "with the structure"));

  /* 3. new values (same pattern) in both matrices: every product right; the structure is refreshed once the budget
     allows, never rebuilt (six products with it so far: it is compared with AIJ's product only after eight) */
  PetscCall(MatScale(A, 3.0));
  PetscCall(MatScale(C, 3.0));
  PetscCall(MatCSRKGetInfo(C, &info));
  nbuilds = info.nbuilds;
  nfast   = info.nfast;
  for (PetscInt i = 0; i < max && !info.nrefresh; i++) {
    PetscCall(Compare(A, C, x, y, z, "after MatScale"));
    PetscCall(MatCSRKGetInfo(C, &info));
  }
  PetscCheck(info.nbuilds == nbuilds && info.nrefresh >= 1, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "after MatScale: %" PetscInt_FMT " builds (%" PetscInt_FMT " before), %" PetscInt_FMT " refreshes, %" PetscInt_FMT " products with the structure before", info.nbuilds, nbuilds, info.nrefresh, nfast);
  for (PetscInt i = 0; i < 5; i++) PetscCall(Compare(A, C, x, y, z, "after the refresh"));

  /* 4. options that change the structure: rebuilt under the budget again, still right */
  PetscCall(MatCSRKSetLevels(C, 3));
  nbuilds = info.nbuilds;
  PetscCall(RunUntilBuilt(A, C, x, y, z, max, "after new options", &info));
  PetscCheck(info.nbuilds == nbuilds + 1, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "new options: %" PetscInt_FMT " builds, expected %" PetscInt_FMT, info.nbuilds, nbuilds + 1);

  /* 5. the off-process block of an MPI matrix keeps AIJ's compressed rows */
  if (size > 1) {
    Mat         Ao;
    MatCSRKInfo oinfo;
    PetscCall(MatMPIAIJGetSeqAIJ(C, NULL, &Ao, NULL));
    PetscCall(MatCSRKGetInfo(Ao, &oinfo));
    PetscCheck(oinfo.nbuilds == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the off-process block built a structure");
  }

  /* 6. eager: built at the first product */
  PetscCall(MatCSRKSetSetup(C, MAT_CSRK_SETUP_EAGER));
  PetscCall(MatCSRKSetLevels(C, 2));
  PetscCall(Compare(A, C, x, y, z, "eager"));
  PetscCall(MatCSRKGetInfo(C, &info));
  PetscCheck(info.nbuilds == nbuilds + 2, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "eager: %" PetscInt_FMT " builds, expected %" PetscInt_FMT, info.nbuilds, nbuilds + 2);

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "set-up budget: all checks passed\n"));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&C));
  PetscCall(PetscFinalize());
  return 0;
}
