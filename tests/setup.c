static const char help[] = "The set-up budget (MatCSRKSetSetup(), -mat_csrk_setup budget): a few products run with AIJ's kernel and build\n"
                           "nothing; a one-thread structure is built after 20 products, its row patterns and slices then found and\n"
                           "filled a part at a product (the other rows running the AIJ loop) and again after a value change; rows\n"
                           "that make no slices (seen by a probe of the first rows) get a structure without them where they make\n"
                           "row nodes, and none where they do not; every product matches aij; new options start\n"
                           "again; the off-process block of an MPI matrix is never built.\n"
                           "  -problem <name> -n <n>  the matrix (src/mat/utils/problems.c; default lap3d7, 40)\n"
                           "  -expect_slices <0,1>    whether its rows make row slices (default 1)\n"
                           "  -expect_nodes <0,1>     without slices: whether they make row nodes (default 0)\n"
                           "  -expect_values <0,1>    whether slices (or, without slices, row nodes) of rows with one list of values keep it once (default 0)\n"
                           "  -max_products <n>       products to wait at most for each step (default 4000)\n";

#include <petsccsrk.h>
#include <petsccsrkutil.h>

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

/* products until every row of the structure's slices is filled (or max), each checked; *partial: some product ran
   with a part of the rows filled. A structure the budget dropped (its slices no faster than AIJ's loop on a busy
   machine) also ends the run: *dropped. */
static PetscErrorCode RunUntilFilled(Mat A, Mat C, Vec x, Vec y, Vec z, PetscInt max, const char *what, MatCSRKInfo *info, PetscBool *partial, PetscBool *dropped)
{
  PetscInt nfast;

  PetscFunctionBegin;
  *partial = *dropped = PETSC_FALSE;
  for (PetscInt i = 0; i < max; i++) {
    PetscCall(MatCSRKGetInfo(C, info));
    nfast = info->nfast;
    PetscCall(Compare(A, C, x, y, z, what));
    PetscCall(MatCSRKGetInfo(C, info));
    if (info->nfast > nfast && info->nunfilled > 0) *partial = PETSC_TRUE;
    if (info->nsr == 0 && info->nbuilds > 0) {
      *dropped = PETSC_TRUE;
      break;
    }
    if (info->nfast > nfast && info->nunfilled == 0) break;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the structure filled its row slices by parts, or was dropped by the budget. A refill after new values may fill
   every part before one product (the patterns are known: its parts cost less than the first fill's, whose time is
   the estimate), so only the first fill must show a product with the slices filled in part. */
static PetscErrorCode CheckFilled(const MatCSRKInfo *info, PetscBool partial, PetscBool dropped, PetscBool needpartial, const char *what)
{
  PetscFunctionBegin;
  if (dropped) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "note: %s: the budget dropped the structure (its products no faster than AIJ's here)\n", what));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(info->nsliced > 0 && info->nunfilled == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: expected every row filled, got %" PetscInt_FMT " rows in slices and %" PetscInt_FMT " not filled", what, info->nsliced, info->nunfilled);
  PetscCheck(partial || !needpartial, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: no product ran with the slices filled in part", what);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* one in 13 of the local rows' diagonal entries plus d, in A and C */
static PetscErrorCode AddToSomeDiagonals(Mat A, Mat C, PetscScalar d)
{
  PetscInt rstart, rend;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (PetscInt r = rstart; r < rend; r += 13) {
    PetscCall(MatSetValue(A, r, r, d, ADD_VALUES));
    PetscCall(MatSetValue(C, r, r, d, ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(C, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(C, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* value lists (MAT_CSRK_ROW_VALUES): slices of a constant-coefficient stencil keep one list; a change in one row of
   most slices leaves them their own values (a list kept would give stale products, which Compare() catches), and the
   old values bring the lists back */
static PetscErrorCode CheckValueLists(Mat A, Mat C, Vec x, Vec y, Vec z, PetscInt max, MatCSRKInfo *info)
{
  PetscInt  nvalued = info->nvalued;
  PetscBool partial, dropped;

  PetscFunctionBegin;
  PetscCheck(nvalued > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "value lists: none in %" PetscInt_FMT " rows of slices", info->nsliced);
  PetscCall(AddToSomeDiagonals(A, C, 1.0));
  PetscCall(RunUntilFilled(A, C, x, y, z, max, "value lists, one row in 13 changed", info, &partial, &dropped));
  if (dropped) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CheckFilled(info, partial, dropped, PETSC_FALSE, "fill with one row in 13 changed"));
  PetscCheck(2 * info->nvalued < nvalued, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "value lists: one row in 13 changed, still %" PetscInt_FMT " of %" PetscInt_FMT " rows with lists", info->nvalued, nvalued);
  PetscCall(AddToSomeDiagonals(A, C, -1.0)); /* the values are small integers: back to the same bits */
  PetscCall(RunUntilFilled(A, C, x, y, z, max, "value lists, values restored", info, &partial, &dropped));
  if (dropped) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(info->nvalued == nvalued, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "value lists: values restored, %" PetscInt_FMT " rows with lists instead of %" PetscInt_FMT, info->nvalued, nvalued);
  /* new lists at each change, the old ones kept until the dictionary is half full, then emptied: the same rows keep lists */
  for (PetscInt i = 0; i < 24; i++) {
    PetscCall(MatScale(A, 2.0));
    PetscCall(MatScale(C, 2.0));
    PetscCall(RunUntilFilled(A, C, x, y, z, max, "value lists, values scaled again and again", info, &partial, &dropped));
    if (dropped) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCheck(info->nvalued == nvalued, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "value lists: values scaled %" PetscInt_FMT " times, %" PetscInt_FMT " rows with lists instead of %" PetscInt_FMT, i + 1, info->nvalued, nvalued);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Value lists of row nodes (one rank): a node whose values are an earlier node's multiplies those; the nodes are found
   again at the refresh after each change of values (20 products with AIJ's kernel first), every product right */
static PetscErrorCode CheckNodeValueLists(Mat A, Mat C, Vec x, Vec y, Vec z, MatCSRKInfo *info)
{
  const PetscInt nvalued = info->nvalued;

  PetscFunctionBegin;
  if (!info->nnoderows) PetscFunctionReturn(PETSC_SUCCESS); /* the budget dropped the structure (a busy machine) */
  PetscCheck(nvalued > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "value lists: no row node multiplies an earlier node's values (%" PetscInt_FMT " rows in nodes)", info->nnoderows);
  PetscCall(AddToSomeDiagonals(A, C, 1.0));
  for (PetscInt i = 0; i < 21; i++) PetscCall(Compare(A, C, x, y, z, "node value lists, one row in 13 changed"));
  PetscCall(MatCSRKGetInfo(C, info));
  if (!info->nnoderows) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(info->nvalued < nvalued, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "node value lists: one row in 13 changed, still %" PetscInt_FMT " of %" PetscInt_FMT " rows with lists", info->nvalued, nvalued);
  PetscCall(AddToSomeDiagonals(A, C, -1.0)); /* the values are small integers: back to the same bits */
  for (PetscInt i = 0; i < 21; i++) PetscCall(Compare(A, C, x, y, z, "node value lists, values restored"));
  PetscCall(MatCSRKGetInfo(C, info));
  if (!info->nnoderows) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(info->nvalued == nvalued, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "node value lists: values restored, %" PetscInt_FMT " rows with lists instead of %" PetscInt_FMT, info->nvalued, nvalued);
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat         A, C;
  Vec         x, y, z;
  char        problem[64] = "lap3d7";
  PetscInt    n = 40, max = 4000, nbase, nbuilds, nrefresh;
  MatCSRKInfo info;
  PetscMPIInt size;
  PetscBool   slices = PETSC_TRUE, nodes = PETSC_FALSE, values = PETSC_FALSE, partial, dropped = PETSC_FALSE;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatCSRKRegister());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", problem, sizeof(problem), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-max_products", &max, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_slices", &slices, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_nodes", &nodes, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_values", &values, NULL));
  PetscCall(MatCSRKCreateProblem(PETSC_COMM_WORLD, problem, n, 1, &A));
  PetscCall(MatConvert(A, MATCSRK, MAT_INITIAL_MATRIX, &C));
  PetscCall(MatCSRKSetSetup(C, MAT_CSRK_SETUP_BUDGET)); /* whatever the environment asks for the other tests */
  PetscCall(MatCSRKSetNumThreads(C, 1));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecDuplicate(y, &z));
  PetscCall(VecSetRandom(x, NULL));

  /* 1. a short run: AIJ's kernel, nothing built */
  for (PetscInt i = 0; i < 3; i++) PetscCall(Compare(A, C, x, y, z, "short run"));
  PetscCall(MatCSRKGetInfo(C, &info));
  PetscCheck(info.nbuilds == 0 && info.nbase == 3 && info.nfast == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "3 products: expected no build and 3 AIJ products, got %" PetscInt_FMT " builds, %" PetscInt_FMT " AIJ and %" PetscInt_FMT " fast products", info.nbuilds, info.nbase, info.nfast);

  /* 2. a long run: the structure (an expected build of one AIJ product at 5 %) built at the 21st product, not before */
  for (PetscInt i = 3; i < 20; i++) PetscCall(Compare(A, C, x, y, z, "before the build"));
  PetscCall(MatCSRKGetInfo(C, &info));
  PetscCheck(info.nbuilds == 0 && info.nbase == 20, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "20 products: expected no build, got %" PetscInt_FMT, info.nbuilds);
  PetscCall(Compare(A, C, x, y, z, "the build"));
  PetscCall(MatCSRKGetInfo(C, &info));
  if (slices || nodes) PetscCheck(info.nbuilds == 1, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "expected the build at the 21st product, got %" PetscInt_FMT " builds", info.nbuilds);
  else PetscCheck(info.nbuilds == 0 && info.nfast == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "rows of neither slices nor nodes: expected no build (AIJ's own loop), got %" PetscInt_FMT " builds, %" PetscInt_FMT " products with a structure", info.nbuilds, info.nfast);
  if (slices) {
    /* its row patterns and slices found and filled a part at a product, every product right meanwhile */
    PetscCall(RunUntilFilled(A, C, x, y, z, max, "slices filled by parts", &info, &partial, &dropped));
    PetscCall(CheckFilled(&info, partial, dropped, PETSC_TRUE, "first fill"));
  } else {
    /* rows that make no slices, seen by the probe of the first rows: built without slices (row nodes) at once, or
       not at all; every product right */
    PetscCheck(info.nsliced == 0 && info.nunfilled == 0 && (info.nnoderows > 0) == nodes, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "expected no row slices and %s row nodes, got %" PetscInt_FMT " rows in slices, %" PetscInt_FMT " in nodes", nodes ? "some" : "no", info.nsliced, info.nnoderows);
    for (PetscInt i = 0; i < 30; i++) PetscCall(Compare(A, C, x, y, z, "without slices"));
    PetscCall(MatCSRKGetInfo(C, &info));
    PetscCheck(info.nbuilds == (nodes ? 1 : 0), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "without slices: %" PetscInt_FMT " builds", info.nbuilds);
  }

  /* 3. new values (same pattern) in both matrices: every product right, the structure refreshed, not rebuilt */
  PetscCall(MatScale(A, 3.0));
  PetscCall(MatScale(C, 3.0));
  PetscCall(MatCSRKGetInfo(C, &info));
  nbuilds  = info.nbuilds;
  nbase    = info.nbase;
  nrefresh = info.nrefresh;
  if (slices && !dropped) {
    /* slices filled by parts: their rows run the AIJ loop at once, and are filled again as the products pay */
    PetscCall(Compare(A, C, x, y, z, "after MatScale"));
    PetscCall(MatCSRKGetInfo(C, &info));
    PetscCheck(info.nrefresh == nrefresh + 1 && info.nunfilled > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "after MatScale: expected the slices to be filled again, got %" PetscInt_FMT " refreshes, %" PetscInt_FMT " rows not filled", info.nrefresh - nrefresh, info.nunfilled);
    PetscCall(RunUntilFilled(A, C, x, y, z, max, "after MatScale", &info, &partial, &dropped));
    PetscCall(CheckFilled(&info, partial, dropped, PETSC_FALSE, "fill after MatScale"));
    PetscCheck(info.nbuilds == nbuilds, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "after MatScale: rebuilt");
    if (values && !dropped) PetscCall(CheckValueLists(A, C, x, y, z, max, &info));
  } else if (!slices) {
    /* a structure without slices: 20 products with AIJ's kernel, then the values copied at once (where the budget
       kept the structure: on a busy machine it may drop it on some rank, whose products all run AIJ's kernel) */
    for (PetscInt i = 0; i < 21; i++) PetscCall(Compare(A, C, x, y, z, "after MatScale"));
    PetscCall(MatCSRKGetInfo(C, &info));
    PetscCheck(info.nbuilds == nbuilds && info.nrefresh <= nrefresh + 1 && info.nbase >= nbase + 20, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "after MatScale: %" PetscInt_FMT " builds (%" PetscInt_FMT " before), %" PetscInt_FMT " refreshes, %" PetscInt_FMT " AIJ products (expected 20 or more)", info.nbuilds, nbuilds, info.nrefresh - nrefresh, info.nbase - nbase);
    if (values && nodes) PetscCall(CheckNodeValueLists(A, C, x, y, z, &info));
  }

  /* 4. options that change the structure (super-super-rows, then none): built again under the budget, filled again */
  for (PetscInt k = 3; k >= 1; k -= 2) {
    PetscCall(MatCSRKSetLevels(C, k));
    PetscCall(MatCSRKGetInfo(C, &info));
    nbuilds = info.nbuilds;
    nbase   = info.nbase;
    for (PetscInt i = 0; i < 20; i++) PetscCall(Compare(A, C, x, y, z, "new options"));
    PetscCall(MatCSRKGetInfo(C, &info));
    PetscCheck(info.nbuilds == nbuilds && info.nbase == nbase + 20, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "new options: built before 20 products");
    PetscCall(Compare(A, C, x, y, z, "new options"));
    PetscCall(MatCSRKGetInfo(C, &info));
    PetscCheck(info.nbuilds == nbuilds + (slices || nodes ? 1 : 0), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "new options: expected %s at the 21st product", slices || nodes ? "the build" : "no build");
    if (slices && k == 1) {
      /* new values, and a duplicate, in the middle of the fill (row patterns still being found): the rows go back to
         the AIJ loop and are filled again, the duplicate starts its own; every product right */
      Mat D;
      for (PetscInt i = 0; i < max && !dropped && !info.nsliced; i++) {
        PetscCall(Compare(A, C, x, y, z, "before new values in the fill"));
        PetscCall(MatCSRKGetInfo(C, &info));
        dropped = (PetscBool)(info.nsr == 0);
      }
      PetscCall(MatScale(A, 0.5));
      PetscCall(MatScale(C, 0.5));
      PetscCall(MatDuplicate(C, MAT_COPY_VALUES, &D));
      PetscCall(Compare(A, D, x, y, z, "duplicate in the fill"));
      PetscCall(RunUntilFilled(A, D, x, y, z, max, "duplicate filled by parts", &info, &partial, &dropped));
      PetscCall(MatDestroy(&D));
    }
    if (slices) {
      PetscCall(RunUntilFilled(A, C, x, y, z, max, k == 3 ? "filled by parts, k = 3" : "filled by parts, k = 1", &info, &partial, &dropped));
      PetscCall(CheckFilled(&info, partial, dropped, PETSC_TRUE, k == 3 ? "fill with k = 3" : "fill with k = 1"));
    } else if (nodes) PetscCall(RunUntilBuilt(A, C, x, y, z, max, "new options, built without slices", &info));
  }

  /* 5. the off-process block of an MPI matrix keeps AIJ's compressed rows */
  if (size > 1) {
    Mat         Ao;
    MatCSRKInfo oinfo;
    PetscCall(MatMPIAIJGetSeqAIJ(C, NULL, &Ao, NULL));
    PetscCall(MatCSRKGetInfo(Ao, &oinfo));
    PetscCheck(oinfo.nbuilds == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the off-process block built a structure");
  }

  /* 6. eager: built at the first product, its slices filled at once */
  PetscCall(MatCSRKGetInfo(C, &info)); /* before: with eager set, this asks for the structure */
  nbuilds = info.nbuilds;
  PetscCall(MatCSRKSetSetup(C, MAT_CSRK_SETUP_EAGER));
  PetscCall(MatCSRKSetLevels(C, 2));
  PetscCall(Compare(A, C, x, y, z, "eager"));
  PetscCall(MatCSRKGetInfo(C, &info));
  PetscCheck(info.nbuilds == nbuilds + 1 && info.nunfilled == 0 && (info.nsliced > 0) == slices, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "eager: %" PetscInt_FMT " builds, expected %" PetscInt_FMT ", %" PetscInt_FMT " rows in slices, %" PetscInt_FMT " not filled", info.nbuilds, nbuilds + 1, info.nsliced, info.nunfilled);

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "set-up budget: all checks passed\n"));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&C));
  PetscCall(PetscFinalize());
  return 0;
}
