/*
   permbin - writes a randomly permuted copy P A P^T of a generated problem, a Matrix Market file or a PETSc binary
   matrix as a PETSc binary file, the matrix followed by a random right-hand side b (seeded: the same for every run),
   which PETSc's ksp ex10 reads with -f (tutorials/sweep.sh, configure-hooks/apps.sh, docs/experiments/ex10rcm.sh).

     permbin -problem lap3d7 -n 64 -permute 1 -o lap3d7-64.bin
     permbin -f wing.mtx -permute 1 -o wing.bin          (-permute -1: the ordering of the input)
     permbin -problem femelast3d -n 40 -permute -1 -o femelast3d-40.bin   (a generated problem as generated)
     permbin -fbin poisson.bin -permute -1 -o p.bin      (a matrix saved by -ksp_view_mat binary:poisson.bin)

   -consistent: b = A x for a random x instead, so that a singular matrix (a pure Neumann operator) has a solution
   -permute_bs <bs>: whole runs of bs rows permuted (the unknowns of a vertex kept together); 1 (row by row) by default

   Uses MatCSRKCreateProblem(), MatCSRKReadMatrixMarket() and MatCSRKPermuteRandomBlocks() of the utilities library (libcsrkutil.a); make builds it.
*/
#include <petsccsrk.h>
#include <petsccsrkutil.h>

int main(int argc, char **argv)
{
  Mat         A;
  Vec         b;
  PetscViewer v;
  PetscRandom rnd;
  char        file[PETSC_MAX_PATH_LEN] = "", bin[PETSC_MAX_PATH_LEN] = "", problem[64] = "lap3d7", out[PETSC_MAX_PATH_LEN] = "";
  PetscInt    n = 64, seed = 1, bs = 1;
  PetscBool   hasfile, hasbin, hasout, consistent = PETSC_FALSE;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(MatCSRKRegister());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof(file), &hasfile));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-consistent", &consistent, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-fbin", bin, sizeof(bin), &hasbin));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", problem, sizeof(problem), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-permute", &seed, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-permute_bs", &bs, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-o", out, sizeof(out), &hasout));
  PetscCheck(hasout && out[0], PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "-o <file> is required");
  if (hasbin) {
    PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, bin, FILE_MODE_READ, &v));
    PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
    PetscCall(MatSetType(A, MATAIJ));
    PetscCall(MatLoad(A, v));
    PetscCall(PetscViewerDestroy(&v));
  } else if (hasfile) PetscCall(MatCSRKReadMatrixMarket(PETSC_COMM_WORLD, file, &A));
  else PetscCall(MatCSRKCreateProblem(PETSC_COMM_WORLD, problem, n, 1, &A));
  if (seed >= 0) {
    Mat P;
    PetscCall(MatCSRKPermuteRandomBlocks(A, bs, seed, &P));
    PetscCall(MatDestroy(&A));
    A = P;
  }
  PetscCall(MatCreateVecs(A, NULL, &b));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetSeed(rnd, 7));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(VecSetRandom(b, rnd));
  PetscCall(PetscRandomDestroy(&rnd));
  if (consistent) {
    Vec x;
    PetscCall(VecDuplicate(b, &x));
    PetscCall(VecCopy(b, x));
    PetscCall(MatMult(A, x, b));
    PetscCall(VecDestroy(&x));
  }
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, out, FILE_MODE_WRITE, &v));
  PetscCall(MatView(A, v));
  PetscCall(VecView(b, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
