static const char help[] = "The set-up budget (MatCSRKSetSetup(), -mat_csrk_setup budget): a few products run with AIJ's kernel and build\n"
                           "nothing; the structure is built after 140 products (7 expected products of build at 5 %), its values\n"
                           "refreshed 20 products after a change, and every product before and after matches aij; new options\n"
                           "start again; the off-process block of an MPI matrix is never built.\n"
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
  PetscInt    n = 40, max = 4000, nbase, nbuilds;
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
  PetscCheck(info.nbuilds == 1 && info.nfast == 1 && info.nbase == 140, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "expected the build after 140 AIJ products, got %" PetscInt_FMT " builds after %" PetscInt_FMT " AIJ products", info.nbuilds, info.nbase);
  for (PetscInt i = 0; i < 6; i++) PetscCall(Compare(A, C, x, y, z, "with the structure"));

  /* 3. new values (same pattern) in both matrices: every product right; 20 products with AIJ's kernel, then the
     structure refreshed, not rebuilt; its eighth product, the last here, is the one compared with AIJ's (which may drop it) */
  PetscCall(MatScale(A, 3.0));
  PetscCall(MatScale(C, 3.0));
  PetscCall(MatCSRKGetInfo(C, &info));
  nbuilds = info.nbuilds;
  nbase   = info.nbase;
  for (PetscInt i = 0; i < 21; i++) PetscCall(Compare(A, C, x, y, z, "after MatScale"));
  PetscCall(MatCSRKGetInfo(C, &info));
  PetscCheck(info.nbuilds == nbuilds && info.nrefresh == 1 && info.nbase == nbase + 20, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "after MatScale: %" PetscInt_FMT " builds (%" PetscInt_FMT " before), %" PetscInt_FMT " refreshes, %" PetscInt_FMT " AIJ products (expected 20)", info.nbuilds, nbuilds, info.nrefresh, info.nbase - nbase);

  /* 4. options that change the structure: rebuilt under the budget again, still right */
  PetscCall(MatCSRKSetLevels(C, 3));
  nbuilds = info.nbuilds;
  PetscCall(RunUntilBuilt(A, C, x, y, z, max, "after new options", &info));
  PetscCheck(info.nbuilds == nbuilds + 1 && info.nbase == nbase + 20 + 140, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "new options: %" PetscInt_FMT " builds (expected %" PetscInt_FMT ") after %" PetscInt_FMT " AIJ products (expected 140)", info.nbuilds, nbuilds + 1, info.nbase - nbase - 20);

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
