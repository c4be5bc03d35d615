static const char help[] = "A matrix made the usual way (MatCreate, MatSetFromOptions with -mat_type csrk, assembly) against aij: the\n"
                           "-mat_csrk_* options reach it (and -help lists them), the products agree, and MatCSRKGetInfo() tells the\n"
                           "structure in effect.\n"
                           "  -n <n>                  2D Laplacian on an n x n grid (default 40)\n"
                           "  -dof <d>                d unknowns per grid point, coupled (default 1)\n"
                           "  -convert <initial|inplace>  instead: assemble as aij, then MatConvert() to csrk without MatSetFromOptions()\n"
                           "  -prefix <p>             options prefix of the matrix\n"
                           "  -expect_k <k>           fail unless the structure in effect has k levels\n"
                           "  -set_feature <f>        call MatCSRKSetFeature(A, f, PETSC_FALSE) before the product (a bad f must be an error)\n";

#include <petsccsrk.h>

/* 5-point Laplacian on an n x n grid with dof unknowns per point (each coupled to every unknown of the point and its
   neighbours: rows of one point share their columns), rows of this rank, into A (already typed and sized) */
static PetscErrorCode Fill(Mat A, PetscInt n, PetscInt dof)
{
  PetscInt rstart, rend;

  PetscFunctionBegin;
  PetscCall(MatSeqAIJSetPreallocation(A, 5 * dof, NULL));
  PetscCall(MatMPIAIJSetPreallocation(A, 5 * dof, NULL, 2 * dof, NULL));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (PetscInt row = rstart; row < rend; row++) {
    const PetscInt r = row / dof, a = row % dof, i = r / n, j = r % n;
    PetscInt       pts[5], np = 0, cols[5 * 8], nc = 0;
    PetscScalar    vals[5 * 8];
    if (i > 0) pts[np++] = r - n;
    if (j > 0) pts[np++] = r - 1;
    pts[np++] = r;
    if (j < n - 1) pts[np++] = r + 1;
    if (i < n - 1) pts[np++] = r + n;
    for (PetscInt p = 0; p < np; p++)
      for (PetscInt b = 0; b < dof; b++) {
        cols[nc] = pts[p] * dof + b;
        if (pts[p] == r) vals[nc++] = a == b ? 4.0 + (PetscScalar)(r % 3) / 10 : 0.25;
        else vals[nc++] = a == b ? -1.0 : -0.125;
      }
    PetscCall(MatSetValues(A, 1, &row, nc, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat           A, B;
  Vec           x, y, z;
  PetscInt      n = 40, dof = 1, k = 0;
  char          convert[16] = "", prefix[64] = "";
  PetscReal     err, nrm;
  PetscBool     set, iscsrk, conv, hasprefix, inplace;
  MatCSRKInfo   info;
  MatType       type;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatCSRKRegister());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dof", &dof, NULL));
  PetscCheck(dof >= 1 && dof <= 8, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-dof must be 1 to 8");

  PetscCall(PetscOptionsGetString(NULL, NULL, "-convert", convert, sizeof(convert), &conv));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-prefix", prefix, sizeof(prefix), &hasprefix));
  PetscCall(PetscStrcmp(convert, "inplace", &inplace));
  PetscCheck(!conv || inplace || !strcmp(convert, "initial"), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-convert takes initial or inplace, not %s", convert);

  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, n * n * dof, n * n * dof));
  if (hasprefix) PetscCall(MatSetOptionsPrefix(A, prefix));
  if (conv) {
    /* the -mat_csrk_* options of the prefix must reach the converted matrix without MatSetFromOptions() */
    PetscCall(MatSetType(A, MATAIJ));
    PetscCall(Fill(A, n, dof));
    if (inplace) PetscCall(MatConvert(A, MATCSRK, MAT_INPLACE_MATRIX, &A));
    else {
      Mat C;
      PetscCall(MatConvert(A, MATCSRK, MAT_INITIAL_MATRIX, &C));
      PetscCall(MatDestroy(&A));
      A = C;
    }
  } else {
    PetscCall(MatSetFromOptions(A));
    PetscCall(Fill(A, n, dof));
  }
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-set_feature", &k, &set));
  if (set) PetscCall(MatCSRKSetFeature(A, (MatCSRKFeature)k, PETSC_FALSE));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &B));
  PetscCall(MatSetSizes(B, PETSC_DECIDE, PETSC_DECIDE, n * n * dof, n * n * dof));
  PetscCall(MatSetType(B, MATAIJ));
  PetscCall(Fill(B, n, dof));

  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecDuplicate(y, &z));
  PetscCall(VecSetRandom(x, NULL));
  PetscCall(MatMult(A, x, y));
  PetscCall(MatMult(B, x, z));
  PetscCall(VecAXPY(z, -1.0, y));
  PetscCall(VecNorm(z, NORM_INFINITY, &err));
  PetscCall(VecNorm(y, NORM_INFINITY, &nrm));
  PetscCheck(err <= 1e-12 * PetscMax(nrm, 1.0), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MatMult differs from aij by %g", (double)err);

  PetscCall(MatGetType(A, &type));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &iscsrk, MATSEQCSRK, MATMPICSRK, ""));
  if (iscsrk) {
    PetscCall(MatCSRKGetInfo(A, &info));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: k %" PetscInt_FMT ", super-row size %" PetscInt_FMT ", max |y_csrk - y_aij| %g\n", type, info.k, info.sr_size, (double)err));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-expect_k", &k, &set));
    PetscCheck(!set || k == info.k, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "The structure in effect has k = %" PetscInt_FMT ", expected %" PetscInt_FMT, info.k, k);
  } else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: max |y - y_aij| %g\n", type, (double)err));

  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscCall(PetscFinalize());
  return 0;
}
