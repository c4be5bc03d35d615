static const char help[] = "Measures once, on this machine, the CPU row loops of the CSR-k types that only compete with PETSc's AIJ kernel\n"
                           "(they read as many bytes: the symmetric half, row nodes, the plain loop where AIJ runs its inode kernel)\n"
                           "in a solve's conditions: one MPI rank per core, every core busy, matrices beyond the caches. Writes the\n"
                           "machine file the plugin reads when it is registered (make tune writes lib/csrk-machine.txt).\n"
                           "  -o <file>          the machine file to write (required)\n"
                           "The default sizes give each rank as many rows whatever the ranks (those below on 2 ranks: n grows as the\n"
                           "cube root of the ranks), so that each rank's block exceeds its share of the caches on many cores too.\n"
                           "  -n_plain <n>       size of the scalar P1 matrix, fem3d (default on 2 ranks 80: 512 k rows)\n"
                           "  -n_inodes <n>      size of the elasticity matrix, femelast3d, bs 3 (default on 2 ranks 40: 192 k rows, 8.3 M nonzeros)\n"
                           "  -n_slices <n>      size of the 7-point stencil whose row slices' set-up is timed (default on 2 ranks 100: 1 M rows)\n"
                           "  -rounds <r>        interleaved rounds, the best of which counts (default 10)\n"
                           "  -products <p>      products a round (default 20)\n";

#include <petsccsrk.h>
#include <petsccsrkutil.h>
#if defined(__GLIBC__)
  #include <malloc.h>
#endif

/* the candidates: AIJ's kernel (the reference), then each row loop of the plugin's table that the machine file keys as
   a rival of it (MatCSRKGetRowLoop()) */
typedef struct {
  const char *key, *variant; /* machine file key and the row loop the build must give (else not measured) */
} Candidate;
#define MAXCAND 16
static Candidate candidates[MAXCAND];
static int       ncand;

static PetscErrorCode Candidates(void)
{
  const char *name = NULL, *rival = NULL;

  PetscFunctionBegin;
  ncand = 1; /* AIJ */
  for (PetscInt i = 0; ncand < MAXCAND; i++) {
    PetscCall(MatCSRKGetRowLoop(i, &name, &rival));
    if (!name) break;
    if (rival) candidates[ncand++] = (Candidate){rival, name};
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the matrix of candidate c: A itself (AIJ), or a CSR-k copy built at once with the candidate's row loop alone, without
   value lists (the plan builds those by rule), NULL where the build gives none: the rival does not apply to A */
static PetscErrorCode CandidateMatrix(Mat A, const Candidate *c, Mat *C, PetscReal *setup)
{
  MatCSRKInfo info;
  PetscBool   same;

  PetscFunctionBegin;
  *C     = NULL;
  *setup = 0;
  if (!c->key) {
    PetscCall(PetscObjectReference((PetscObject)A));
    *C = A;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatConvert(A, MATCSRK, MAT_INITIAL_MATRIX, C));
  PetscCall(MatCSRKSetNumThreads(*C, 1));
  PetscCall(MatCSRKSetOrdering(*C, MAT_CSRK_ORDERING_NATURAL));
  PetscCall(MatCSRKSetSetup(*C, MAT_CSRK_SETUP_EAGER));
  PetscCall(MatCSRKSetFeature(*C, MAT_CSRK_ROW_VALUES, PETSC_FALSE));
  PetscCall(MatCSRKSetRowLoop(*C, c->variant));
  PetscCall(MatCSRKGetInfo(*C, &info)); /* eager: builds it */
  *setup = info.build_time;              /* the slowest rank's */
  PetscCall(PetscStrcmp(info.variant, c->variant, &same));
  if (!same) PetscCall(MatDestroy(C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the time of a product of C, the mean of a run of products, the slowest rank's; *best: the least so far (0: none) */
static PetscErrorCode TimeProducts(Mat C, Vec x, Vec y, PetscInt products, PetscReal *best)
{
  double t0, t, tmax;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Barrier(PetscObjectComm((PetscObject)C)));
  t0 = MPI_Wtime();
  for (PetscInt p = 0; p < products; p++) PetscCall(MatMult(C, x, y));
  t = (MPI_Wtime() - t0) / products;
  PetscCallMPI(MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, PetscObjectComm((PetscObject)C)));
  *best = *best > 0 ? PetscMin(*best, tmax) : tmax;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the best time of a product of each candidate over the rounds (max over ranks within a round), interleaved so that
   a busy machine slows all of them alike, and the time of its set-up; 0 where a candidate does not apply */
static PetscErrorCode TimeCandidates(Mat A, PetscInt rounds, PetscInt products, PetscReal best[], PetscReal setup[])
{
  Mat C[MAXCAND];
  Vec x, y;

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSetRandom(x, NULL));
  for (int c = 0; c < ncand; c++) {
    PetscCall(CandidateMatrix(A, &candidates[c], &C[c], &setup[c]));
    best[c] = 0;
    if (C[c]) PetscCall(MatMult(C[c], x, y)); /* first touch */
  }
  for (PetscInt r = 0; r < rounds; r++)
    for (int c = 0; c < ncand; c++)
      if (C[c]) PetscCall(TimeProducts(C[c], x, y, products, &best[c]));
  for (int c = 0; c < ncand; c++) PetscCall(MatDestroy(&C[c]));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the set-up of the row slices (a stencil's fewer bytes, built by rule) in AIJ products: the best of SLICES_BUILDS
   builds (each the slowest rank's) over the best product of AIJ's kernel, interleaved: one build alone varied by
   up to 1.7x from one run of tune to the next */
#define SLICES_BUILDS 5
static PetscErrorCode SlicesCost(PetscInt n, PetscInt products, PetscReal *cost)
{
  Mat         A, C;
  Vec         x, y;
  MatCSRKInfo info;
  PetscReal   tbest = 0, build = 0;

  PetscFunctionBegin;
  PetscCall(MatCSRKCreateProblem(PETSC_COMM_WORLD, "lap3d7", n, 1, &A));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));
  for (PetscInt r = 0; r < SLICES_BUILDS; r++) {
    PetscCall(TimeProducts(A, x, y, products, &tbest));
    PetscCall(MatConvert(A, MATCSRK, MAT_INITIAL_MATRIX, &C));
    PetscCall(MatCSRKSetNumThreads(C, 1));
    PetscCall(MatCSRKSetSetup(C, MAT_CSRK_SETUP_EAGER));
    PetscCall(MatCSRKGetInfo(C, &info)); /* eager: builds it */
    if (info.nsliced > 0) build = build > 0 ? PetscMin(build, info.build_time) : info.build_time;
    PetscCall(MatDestroy(&C));
  }
  *cost = build / tbest;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "lap3d7-n%d: row slices (%s) set up in %.1f AIJ products\n", (int)n, info.variant, (double)*cost));
  PetscCall(MatDestroy(&A));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  const char *classes[2] = {"plain", "inodes"}, *problems[2] = {"fem3d", "femelast3d"};
  PetscInt    n[3] = {80, 40, 100}, rounds = 10, products = 20;
  char        file[PETSC_MAX_PATH_LEN], date[64], comment[512], buf[4 * MAXCAND + 1][64];
  const char *lines[4 * MAXCAND + 1];
  PetscInt    nl = 0;
  PetscMPIInt size;
  PetscBool   set;

  PetscFunctionBeginUser;
#if defined(__GLIBC__)
  /* every set-up timed maps fresh pages, as a program's one build does: glibc would otherwise keep the arrays a build
     freed and give them to the next, whose page faults are then not timed */
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatCSRKRegister());
  PetscCall(Candidates());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-o", file, sizeof(file), &set));
  PetscCheck(set, PETSC_COMM_WORLD, PETSC_ERR_USER, "-o <file>: the machine file to write");
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  for (int k = 0; k < 3; k++) n[k] = (PetscInt)(n[k] * PetscCbrtReal(size / 2.0) + 0.5);
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n_plain", &n[0], NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n_inodes", &n[1], NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n_slices", &n[2], NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-rounds", &rounds, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-products", &products, NULL));
  PetscCall(PetscGetDate(date, sizeof(date)));
  for (int k = 0; k < 2; k++) {
    Mat       A;
    PetscReal best[MAXCAND], setup[MAXCAND];

    PetscCall(MatCSRKCreateProblem(PETSC_COMM_WORLD, problems[k], n[k], 1, &A));
    PetscCall(TimeCandidates(A, rounds, products, best, setup));
    for (int c = 1; c < ncand; c++) {
      if (!(best[c] > 0)) continue;
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s-n%d: %s %.1f us, AIJ %.1f us: %s.%s %.3f, set-up %.1f AIJ products\n", problems[k], (int)n[k], candidates[c].variant, 1e6 * best[c], 1e6 * best[0], candidates[c].key, classes[k], (double)(best[0] / best[c]), (double)(setup[c] / best[0])));
      PetscCall(PetscSNPrintf(buf[nl++], sizeof(buf[0]), "%s.%s %.3f", candidates[c].key, classes[k], (double)(best[0] / best[c])));
      PetscCall(PetscSNPrintf(buf[nl++], sizeof(buf[0]), "%s.%s.cost %.1f", candidates[c].key, classes[k], (double)(setup[c] / best[0])));
    }
    PetscCall(MatDestroy(&A));
  }
  {
    PetscReal cost = 0;
    PetscCall(SlicesCost(n[2], products, &cost));
    if (cost > 0) PetscCall(PetscSNPrintf(buf[nl++], sizeof(buf[0]), "slices.plain.cost %.1f", (double)cost));
  }
  PetscCall(PetscSNPrintf(comment, sizeof(comment),
                          "petsc-csrk machine file, written by tutorials/tune (make tune) on %s, %d MPI ranks\n"
                          "<rival>.<plain|inodes> <AIJ product time / rival product time>, best of %d rounds of %d products, and\n"
                          "<rival>.<plain|inodes>.cost <its set-up, in AIJ products>, on fem3d n = %d (AIJ without inodes: plain)\n"
                          "and femelast3d n = %d (AIJ's inode kernel: inodes); the row slices' set-up on the 7-point stencil n = %d",
                          date, size, (int)rounds, (int)products, (int)n[0], (int)n[1], (int)n[2]));
  for (PetscInt i = 0; i < nl; i++) lines[i] = buf[i];
  PetscCall(MatCSRKWriteMachineFile(PETSC_COMM_WORLD, file, comment, nl, lines));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "machine file written: %s\n", file));
  PetscCall(PetscFinalize());
  return 0;
}
