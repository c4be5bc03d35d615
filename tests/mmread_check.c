static const char help[] = "Checks MatCSRKReadMatrixMarket().\n"
                           "  -f <file>       Matrix Market file to read (repeat for several files)\n"
                           "  -expect_error   exit 0 only if every read fails with a PETSc error and returns no matrix\n"
                           "  -view           MatView() each matrix that was read\n";

#include <petsccsrkutil.h>

/* Reads one file expecting success: prints sizes, stored nonzeros and the Frobenius norm (a cheap value checksum). */
static PetscErrorCode CheckGood(const char file[], PetscBool view)
{
  Mat       A;
  MatInfo   info;
  PetscInt  M, N;
  PetscReal nrm;

  PetscFunctionBegin;
  PetscCall(MatCSRKReadMatrixMarket(PETSC_COMM_WORLD, file, &A));
  PetscCall(MatGetSize(A, &M, &N));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  PetscCall(MatNorm(A, NORM_FROBENIUS, &nrm));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: rows %" PetscInt_FMT " cols %" PetscInt_FMT " nonzeros %.0f frobenius %.10g\n", file, M, N, (double)info.nz_used, (double)nrm));
  if (view) PetscCall(MatView(A, PETSC_VIEWER_STDOUT_WORLD));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Reads one file expecting a clean failure; *ok is false if it was read or a matrix came back anyway. */
static PetscErrorCode CheckBad(const char file[], PetscBool *ok)
{
  Mat            A = NULL;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = MatCSRKReadMatrixMarket(PETSC_COMM_WORLD, file, &A);
  PetscCall(PetscPopErrorHandler());
  if (ierr) {
    const char *text = NULL, *specific = NULL;
    void       *sp   = &specific; /* the type of this argument changed between PETSc versions (char ** vs const char **) */

    PetscCall(PetscErrorMessage(ierr, &text, sp));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: failed as expected, error %d (%s): %s\n", file, (int)ierr, text ? text : "?", specific ? specific : ""));
    *ok = A ? PETSC_FALSE : PETSC_TRUE;
    if (A) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: FAILURE: error returned but the matrix pointer was set\n", file));
  } else {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: FAILURE: read succeeded but an error was expected\n", file));
    *ok = PETSC_FALSE;
  }
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscBool   expect_error = PETSC_FALSE, view = PETSC_FALSE, flg;
  PetscMPIInt bad = 0, gbad;
  char        last[PETSC_MAX_PATH_LEN];
  int         a, nfiles = 0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_error", &expect_error, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-view", &view, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", last, sizeof(last), &flg)); /* marks -f as used */
  PetscCheck(flg, PETSC_COMM_WORLD, PETSC_ERR_USER, "Give at least one -f <file>");
  /* the options database keeps only the last of repeated options, so the -f values are taken from argv */
  for (a = 1; a + 1 < argc; a++) {
    PetscBool ok = PETSC_TRUE;

    if (strcmp(argv[a], "-f")) continue;
    a++;
    nfiles++;
    if (expect_error) PetscCall(CheckBad(argv[a], &ok));
    else PetscCall(CheckGood(argv[a], view));
    if (!ok) bad = 1;
  }
  PetscCheck(nfiles, PETSC_COMM_WORLD, PETSC_ERR_USER, "Give each file as a separate '-f <file>' argument");
  PetscCallMPI(MPI_Allreduce(&bad, &gbad, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD));
  PetscCall(PetscFinalize());
  return gbad ? 1 : 0;
}
