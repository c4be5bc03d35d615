/*
   ex1 - CG on the 3D Poisson problem with the matrix stored as AIJ and as CSR-k, side by side.

   The 7-point Laplacian on an n x n x n grid (Dirichlet boundary) is assembled as MATAIJ, converted with
   MatConvert(A, MATCSRK, ...) and both copies are solved by KSPCG with the default preconditioner of their
   type (ILU or ICC on one rank, block Jacobi with ILU on several: CSR-k keeps the AIJ arrays, so the
   preconditioner is the same), the same right-hand side b = A * ones and the same tolerances. Only MatMult
   differs, so both runs take the same iterations and reach the same solution; the table shows what the
   CSR-k kernels change in the time per MatMult, and the summary shows the structure that was built.

   With -permute <seed> the unknowns are numbered randomly first (P A P^T), as an application with a poor
   numbering would have them: AIJ then multiplies with scattered accesses to x, while CSR-k reorders its copy
   (Band-k, chosen by -mat_csrk_ordering auto for such a matrix) and gathers x into the new order; the
   "bandwidth before -> after" line shows what the ordering recovered (-mat_csrk_ordering rcm or natural to
   compare). The effect on MatMult shows once x no longer fits in the caches (n = 64 and more).

   Timings: both kernels run one thread per rank by default, so the two compare on the same cores. With
   -mat_csrk_threads <n> (or OMP_NUM_THREADS) CSR-k runs n threads per rank against AIJ's one: the program says so,
   and the comparison on equal cores is then aij on n times the ranks. Keep ranks x threads <= cores.

   The program exits with a non-zero status when the iteration counts or the preconditioners differ, or when
   the solutions differ by more than 1e-6 (relative, 2-norm).
*/
static const char help[] = "CG on the 3D Poisson problem (7-point Laplacian, n^3 unknowns) with MATAIJ and with MATCSRK side by side.\n"
                           "Same right-hand side (A * ones), same default preconditioner, same tolerances; reports iterations,\n"
                           "residuals, solve and MatMult times, checks that both solutions agree and summarizes the CSR-k structure.\n"
                           "Options:\n"
                           "  -n <32>           grid points per dimension\n"
                           "  -permute <seed>   number the unknowns randomly first (what the Band-k ordering recovers)\n"
                           "  -mult_reps <50>   MatMults timed after the solve, for the median time per MatMult\n"
                           "  -ksp_rtol <1e-8>  and any -ksp_* / -pc_* option: applied to both solves\n"
                           "  -mat_csrk_k <1,2,3> -mat_csrk_ordering <natural,rcm,bandk,auto>\n"
                           "  -mat_csrk_sr_size <n> -mat_csrk_ssr_size <n> -mat_csrk_threads <n>: the CSR-k matrix\n"
                           "  -csrk_view ::ascii_info  MatView of the CSR-k matrix\n"
                           "(both kernels run one thread per rank; -mat_csrk_threads or OMP_NUM_THREADS give CSR-k more, which then\n"
                           " compares with aij on fewer cores: run aij on ranks x threads ranks for the equal-cores comparison)\n"
                           "Examples:\n"
                           "  build/tutorials/ex1 -n 48\n"
                           "  build/tutorials/ex1 -n 48 -permute 1\n"
                           "  mpiexec -n 2 build/tutorials/ex1 -n 64 -mat_csrk_k 3\n"
                           "  build/tutorials/ex1 -permute 1 -mat_csrk_ordering natural  (CSR-k without reordering)\n"
                           "Any PETSc program can use CSR-k unmodified, loading the plugin at run time, e.g.\n"
                           "  ./app -dll_append $PWD/lib/libcsrk.so -mat_type csrk     (programs that call MatSetFromOptions)\n"
                           "  ./app -dll_append $PWD/lib/libcsrk.so -dm_mat_type csrk  (programs that get the matrix from a DM)\n";

#include <petsccsrk.h>
#include <petsccsrkutil.h>
#include <petscksp.h>
#include <unistd.h>

/* Result of one solve */
typedef struct {
  char               pcname[64];
  PetscInt           its;
  KSPConvergedReason reason;
  PetscReal          rnorm;   /* final residual norm reported by the KSP (preconditioned for CG) */
  PetscReal          relres;  /* ||b - A x|| / ||b||, with the AIJ matrix */
  PetscLogDouble     tsolve;  /* seconds in KSPSolve, max over ranks */
  int                nmult;   /* MatMults in KSPSolve */
  PetscLogDouble     tmult;   /* seconds of those MatMults, max over ranks */
  PetscLogDouble     tmedian; /* median seconds per MatMult of the timing loop, max over ranks per product */
} SolveResult;

/* Name of the preconditioner in use: its type, with the type of the first local block for PCBJACOBI */
static PetscErrorCode PCDescribe(KSP ksp, char name[], size_t len)
{
  PC        pc;
  PCType    type;
  PetscBool isbjacobi;

  PetscFunctionBegin;
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCGetType(pc, &type));
  PetscCall(PetscStrncpy(name, type, len));
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCBJACOBI, &isbjacobi));
  if (isbjacobi) {
    KSP     *sub;
    PetscInt nlocal;
    PC       subpc;
    PCType   subtype;
    PetscCall(PCBJacobiGetSubKSP(pc, &nlocal, NULL, &sub));
    if (nlocal > 0) {
      PetscCall(KSPGetPC(sub[0], &subpc));
      PetscCall(PCGetType(subpc, &subtype));
      PetscCall(PetscSNPrintf(name, len, "%s+%s", type, subtype));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Solves M x = b with CG (and whatever -ksp_* / -pc_* options say) in the logging stage 'stage' */
static PetscErrorCode Solve(Mat M, Mat A, Vec b, Vec x, PetscLogStage stage, PetscLogEvent multevent, SolveResult *res)
{
  KSP                ksp;
  Vec                r;
  PetscReal          rtol, abstol, dtol, bnorm;
  PetscInt           maxits;
  PetscLogDouble     t0, t[2];
  PetscEventPerfInfo perf;
  MPI_Comm           comm = PetscObjectComm((PetscObject)M);

  PetscFunctionBegin;
  PetscCall(KSPCreate(comm, &ksp));
  PetscCall(KSPSetOperators(ksp, M, M));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetTolerances(ksp, &rtol, &abstol, &dtol, &maxits));
  PetscCall(KSPSetTolerances(ksp, 1e-8, abstol, dtol, maxits));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSetUp(ksp));
  PetscCall(PCDescribe(ksp, res->pcname, sizeof(res->pcname)));

  PetscCall(VecZeroEntries(x));
  PetscCallMPI(MPI_Barrier(comm));
  PetscCall(PetscLogStagePush(stage));
  PetscCall(PetscTime(&t0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(PetscTime(&t[0]));
  PetscCall(PetscLogStagePop());
  t[0] -= t0;

  PetscCall(PetscMemzero(&perf, sizeof(perf)));
  PetscCall(PetscLogEventGetPerfInfo(stage, multevent, &perf));
  res->nmult = perf.count;
  t[1]       = perf.time;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, comm));
  res->tsolve = t[0];
  res->tmult  = t[1];

  PetscCall(KSPGetIterationNumber(ksp, &res->its));
  PetscCall(KSPGetConvergedReason(ksp, &res->reason));
  PetscCall(KSPGetResidualNorm(ksp, &res->rnorm));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &res->relres));
  PetscCall(VecNorm(b, NORM_2, &bnorm));
  res->relres /= bnorm;
  PetscCall(VecDestroy(&r));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Median over 'reps' back-to-back products of the time of one MatMult with M, each product's time the maximum
   over the ranks. One matrix at a time: the idle OpenMP threads of the CSR-k kernels, still spinning, would
   otherwise slow AIJ products timed in between on a machine with few free cores. */
static PetscErrorCode TimeMatMult(Mat M, Vec x, PetscInt reps, PetscLogDouble *median)
{
  Vec            y;
  PetscReal     *t;
  PetscLogDouble t0, t1;
  MPI_Comm       comm = PetscObjectComm((PetscObject)M);

  PetscFunctionBegin;
  PetscCall(VecDuplicate(x, &y));
  PetscCall(PetscMalloc1(reps, &t));
  PetscCall(MatMult(M, x, y)); /* warm-up: caches, halo exchange */
  for (PetscInt i = 0; i < reps; i++) {
    PetscCallMPI(MPI_Barrier(comm));
    PetscCall(PetscTime(&t0));
    PetscCall(MatMult(M, x, y));
    PetscCall(PetscTime(&t1));
    t[i] = (PetscReal)(t1 - t0);
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, t, (PetscMPIInt)reps, MPIU_REAL, MPI_MAX, comm));
  PetscCall(PetscSortReal(reps, t));
  *median = (reps % 2) ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
  PetscCall(PetscFree(t));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Warns when the ranks of a node times the CSR-k threads exceed its processors (max over nodes): the timings then measure the oversubscription */
static PetscErrorCode CheckOversubscription(MPI_Comm comm, PetscInt nthreads)
{
#if defined(_SC_NPROCESSORS_ONLN)
  MPI_Comm    node;
  PetscMPIInt nranks;
  long        ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  PetscInt    load;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  PetscCallMPI(MPI_Comm_size(node, &nranks));
  PetscCallMPI(MPI_Comm_free(&node));
  load = (PetscInt)nranks * nthreads;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &load, 1, MPIU_INT, MPI_MAX, comm));
  if (ncpu > 0 && load > ncpu)
    PetscCall(PetscPrintf(comm, "note: ranks x CSR-k threads = %" PetscInt_FMT " on a node of %ld processors: oversubscribed, the timings are not representative (lower -mat_csrk_threads or the ranks)\n", load, ncpu));
#else
  PetscFunctionBegin;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat           A, C;
  Vec           b, ones, xa, xc;
  PetscInt      n = 32, seed = -1, reps = 50, N;
  PetscMPIInt   size;
  PetscBool     permute, iscsrk, fail = PETSC_FALSE;
  PetscLogStage stageA, stageC;
  PetscLogEvent multevent;
  SolveResult   ra, rc;
  MatCSRKInfo   info;
  MatInfo       minfo;
  PetscReal     diff, xnorm, tol = 1e-6;
  MPI_Comm      comm;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatCSRKRegister());
  comm = PETSC_COMM_WORLD;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-permute", &seed, &permute));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-mult_reps", &reps, NULL));
  PetscCheck(reps >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-mult_reps must be positive, not %" PetscInt_FMT, reps);

  /* MatMult counts and times of each solve come from the default log handler, in a stage per matrix type */
  PetscCall(PetscLogDefaultBegin());
  PetscCall(PetscLogStageRegister("CG aij", &stageA));
  PetscCall(PetscLogStageRegister("CG csrk", &stageC));
  PetscCall(MatInitializePackage());
  PetscCall(PetscLogEventGetId("MatMult", &multevent));

  /* the problem, numbered randomly on request, and its CSR-k copy with the user's -mat_csrk_* options */
  PetscCall(MatCSRKCreateProblem(comm, "lap3d7", n, 0, &A));
  if (permute) {
    Mat P;
    PetscCall(MatCSRKPermuteRandom(A, seed, &P));
    PetscCall(MatDestroy(&A));
    A = P;
  }
  PetscCall(MatConvert(A, MATCSRK, MAT_INITIAL_MATRIX, &C));
  PetscCall(MatSetFromOptions(C));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)C, &iscsrk, MATSEQCSRK, MATMPICSRK, ""));
  PetscCheck(iscsrk, comm, PETSC_ERR_ARG_WRONG, "The CSR-k matrix changed type in MatSetFromOptions(): do not give -mat_type to this program");
  PetscCall(MatGetSize(A, &N, NULL));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &minfo));

  /* b = A * ones: the exact solution is ones */
  PetscCall(MatCreateVecs(A, &ones, &b));
  PetscCall(VecDuplicate(ones, &xa));
  PetscCall(VecDuplicate(ones, &xc));
  PetscCall(VecSet(ones, 1.0));
  PetscCall(MatMult(A, ones, b));

  PetscCall(Solve(A, A, b, xa, stageA, multevent, &ra));
  PetscCall(Solve(C, A, b, xc, stageC, multevent, &rc));
  PetscCall(TimeMatMult(A, xa, reps, &ra.tmedian));
  PetscCall(TimeMatMult(C, xa, reps, &rc.tmedian));
  /* what the products built and ran: queried after them, since the set-up budget builds during the solve */
  PetscCall(MatCSRKGetInfo(C, &info));

  PetscCall(VecNorm(xa, NORM_2, &xnorm));
  PetscCall(VecAXPY(xc, -1.0, xa));
  PetscCall(VecNorm(xc, NORM_2, &diff));
  diff /= xnorm;

  /* the table */
  PetscCall(PetscPrintf(comm, "CG on the 3D Poisson problem (7-point), n = %" PetscInt_FMT ": %" PetscInt_FMT " unknowns, %.0f nonzeros, %d MPI rank%s\n", n, N, minfo.nz_used, size, size > 1 ? "s" : ""));
  if (permute) PetscCall(PetscPrintf(comm, "numbering: random permutation (seed %" PetscInt_FMT ")\n", seed));
  else PetscCall(PetscPrintf(comm, "numbering: natural (lexicographic; -permute <seed> scrambles it)\n"));
  PetscCall(PetscPrintf(comm, "b = A*ones, x0 = 0; AIJ kernel: 1 thread per rank, CSR-k kernels: %" PetscInt_FMT " OpenMP thread%s per rank\n", info.nthreads, info.nthreads > 1 ? "s" : ""));
  PetscCall(CheckOversubscription(comm, info.nthreads));
  if (info.nthreads > 1)
    PetscCall(PetscPrintf(comm, "note: CSR-k runs %" PetscInt_FMT " threads per rank against AIJ's one: not an equal-cores comparison; that one is aij on %" PetscInt_FMT " ranks (mpiexec -n %" PetscInt_FMT ")\n", info.nthreads, size * info.nthreads, size * info.nthreads));
  PetscCall(PetscPrintf(comm, "\n"));
  PetscCall(PetscPrintf(comm, "type  PC                its  KSP rnorm  ||b-Ax||/||b||  solve (s)  MatMults  MatMult total (s)  MatMult median (us)\n"));
  for (PetscInt t = 0; t < 2; t++) {
    SolveResult *r = t ? &rc : &ra;
    PetscCall(PetscPrintf(comm, "%-4s  %-16s %4" PetscInt_FMT "  %9.3e  %14.3e  %9.4f  %8d  %17.4f  %19.1f\n", t ? "csrk" : "aij", r->pcname, r->its, (double)r->rnorm, (double)r->relres, r->tsolve, r->nmult, r->tmult, 1e6 * r->tmedian));
  }
  PetscCall(PetscPrintf(comm, "(solve: KSPSolve without the PC set-up, the CSR-k set-up included; MatMults and their total: inside KSPSolve;\n"
                              " median: of %" PetscInt_FMT " back-to-back MatMults after the solve, slowest rank)\n\n", reps));
  PetscCall(PetscPrintf(comm, "MatMult time aij/csrk (medians): %.3g\n", ra.tmedian / rc.tmedian));
  PetscCall(PetscPrintf(comm, "||x_aij - x_csrk|| / ||x_aij|| = %.2e (limit %.0e)\n\n", (double)diff, (double)tol));

  /* the CSR-k structure; on several ranks: of the diagonal blocks, max over ranks for bandwidths and time, sums for counts and memory */
  if (!info.nsr && info.wait >= 0) {
    PetscCall(PetscPrintf(comm, "CSR-k structure: not built yet, the %" PetscInt_FMT " products ran with AIJ's kernel (the set-up builds %s once %" PetscInt_FMT " products have\n"
                          "  paid for it; -mat_csrk_setup eager builds at the first product)\n", info.nbase, info.expected, info.wait));
  } else if (!info.nsr) {
    PetscCall(PetscPrintf(comm, "CSR-k structure: not built, the %" PetscInt_FMT " products ran with AIJ's kernel (nothing here reads fewer bytes than it; -info tells why)\n", info.nbase));
  } else {
    PetscCall(PetscPrintf(comm, "CSR-k structure%s:\n", size > 1 ? " (diagonal blocks; bandwidth and time: max over ranks, counts and memory: sums)" : ""));
    PetscCall(PetscPrintf(comm, "  levels k          %" PetscInt_FMT "%s\n", info.k, info.k == 1 ? " (plain CSR)" : ""));
    if (info.k >= 2) PetscCall(PetscPrintf(comm, "  super-rows        %" PetscInt_FMT " of about %" PetscInt_FMT " rows\n", info.nsr, info.sr_size));
    if (info.k == 3) PetscCall(PetscPrintf(comm, "  super-super-rows  %" PetscInt_FMT " of about %" PetscInt_FMT " super-rows\n", info.nssr, info.ssr_size));
    if (info.nsliced) PetscCall(PetscPrintf(comm, "  row slices        %" PetscInt_FMT " rows (%" PetscInt_FMT " of them with one list of values kept once)\n", info.nsliced, info.nvalued));
    if (info.nnoderows) PetscCall(PetscPrintf(comm, "  row nodes         %" PetscInt_FMT " rows\n", info.nnoderows));
    PetscCall(PetscPrintf(comm, "  ordering          %s\n", MatCSRKOrderings[info.ordering]));
    PetscCall(PetscPrintf(comm, "  bandwidth         %" PetscInt_FMT " before ordering -> %" PetscInt_FMT " after\n", info.bw_before, info.bw_after));
    PetscCall(PetscPrintf(comm, "  set-up time       %.4f s (the MatCSRKBuild event of -log_view)\n", info.build_time));
    PetscCall(PetscPrintf(comm, "  memory overhead   %.2f MB (%.0f%% of the AIJ arrays)\n", info.bytes / 1048576.0,
                          100.0 * info.bytes / (minfo.nz_used * (sizeof(PetscInt) + sizeof(PetscScalar)) + (N + size) * (PetscLogDouble)sizeof(PetscInt))));
    PetscCall(PetscPrintf(comm, "  products          %" PetscInt_FMT " with AIJ's kernel while the set-up paid for itself, %" PetscInt_FMT " with the structure\n", info.nbase, info.nfast));
  }
  PetscCall(MatViewFromOptions(C, NULL, "-csrk_view"));

  /* the verdict */
  if (ra.reason <= 0 || rc.reason <= 0) {
    PetscCall(PetscPrintf(comm, "FAIL: CG did not converge (aij: %s, csrk: %s)\n", KSPConvergedReasons[ra.reason], KSPConvergedReasons[rc.reason]));
    fail = PETSC_TRUE;
  }
  if (ra.its != rc.its) {
    PetscCall(PetscPrintf(comm, "FAIL: iteration counts differ (aij %" PetscInt_FMT ", csrk %" PetscInt_FMT ")\n", ra.its, rc.its));
    fail = PETSC_TRUE;
  }
  {
    PetscBool same;
    PetscCall(PetscStrcmp(ra.pcname, rc.pcname, &same));
    if (!same) {
      PetscCall(PetscPrintf(comm, "FAIL: preconditioners differ (aij %s, csrk %s)\n", ra.pcname, rc.pcname));
      fail = PETSC_TRUE;
    }
  }
  if (!(diff <= tol)) {
    PetscCall(PetscPrintf(comm, "FAIL: the solutions differ\n"));
    fail = PETSC_TRUE;
  }
  if (!fail) PetscCall(PetscPrintf(comm, "\nOK: same preconditioner, same iterations, same solution\n"));

  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&ones));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&xc));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return fail ? 1 : 0;
}
