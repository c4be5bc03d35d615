static const char help[] = "Seeded property test: random aij matrices (sizes, layouts, patterns, block sizes) and random CSR-k options, then random\n"
                           "state changes applied to both matrices; after each, the MatMult family of csrk against aij with poisoned outputs.\n"
                           "  -seed <S> (1) -count <N> (300) -steps <K> (6): cases 0..N-1 of seed S, K changes each\n"
                           "  -case <c>: only case c (what a failure line asks for) -tol <1e-12> -verbose: a line per case and step\n";

#include <petsccsrk.h>
#include "testutil.h"

typedef enum {
  STEP_VALUES,
  STEP_NEWNZ,
  STEP_SCALE,
  STEP_SHIFT,
  STEP_ZEROROWS,
  STEP_CONVERT,
  STEP_OPTIONS,
  STEP_DIAGSCALE,
  STEP_STORE,
  STEP_ARRAY,
  STEP_COPY,
  STEP_PARTS,
  STEP_N
} StepKind;
static const char *const StepNames[] = {"MatSetValues same pattern", "MatSetValues new nonzeros", "MatScale", "MatShift", "MatZeroRows", "MatConvert to aij and back in place", "CSR-k options changed", "MatDiagonalScale",
                                        "MatStoreValues, a change the products see, MatRetrieveValues", "MatSeqAIJGetArray or GetArrayWrite on the local blocks", "MatAXPY or MatCopy from a duplicate, same pattern", "MatRealPart, MatConjugate"};

/* the random CSR-k options of a case */
typedef struct {
  PetscInt  ordering, k, sr, ssr, threads;
  PetscBool compress; /* 16-bit column offsets where they fit */
  PetscBool defaults; /* after an in-place round trip through aij without setting them again */
} Opts;

/* where the run is, for the failure lines and the error handler */
static PetscInt    seed = 1, icase = 0, istep = 0, nsteps = 6, nchecks = 0, nfail = 0, casefail = 0;
static PetscMPIInt nranks = 1;
static PetscObjectState storednz; /* nonzero state of the case's matrix at its first MatStoreValues(), -1 before */
static PetscReal   tol = 1e-12;
static PetscBool   quiet = PETSC_FALSE; /* the self-test's expected failure is not printed */
static const char *stepname = "initial conversion";
static char        shape[256];
static Opts        opts;

/* the generators' seeds: seed and case mixed so that neighbouring seeds do not replay each other's cases shifted by one */
static unsigned long Mix(PetscInt a, PetscInt b, PetscInt c)
{
  unsigned long h = 1469598103UL;
  h = (h ^ (unsigned long)a) * 1000003UL;
  h = (h ^ (unsigned long)b) * 1000003UL;
  h = (h ^ (unsigned long)c) * 1000003UL;
  return h & 0xffffffffffUL;
}

static PetscErrorCode RandomCreate(unsigned long s, PetscRandom *r)
{
  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, r));
  PetscCall(PetscRandomSetSeed(*r, s));
  PetscCall(PetscRandomSeed(*r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Uniform(PetscRandom r, PetscReal *u)
{
  PetscFunctionBegin;
  *u = 0.0; /* defined on the error path too: no maybe-uninitialized warnings in the callers */
  PetscCall(PetscRandomGetValueReal(r, u));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* uniform in [lo, hi] */
static PetscErrorCode RandInt(PetscRandom r, PetscInt lo, PetscInt hi, PetscInt *v)
{
  PetscReal u;

  PetscFunctionBegin;
  *v = lo;
  PetscCall(PetscRandomGetValueReal(r, &u));
  *v = lo + (PetscInt)(u * (PetscReal)(hi - lo + 1));
  if (*v > hi) *v = hi;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a factor of magnitude in [0.5, 2], either sign: never zero, so that MatScale and MatDiagonalScale keep the products meaningful */
static PetscErrorCode RandFactor(PetscRandom r, PetscScalar *a)
{
  PetscReal u, s;

  PetscFunctionBegin;
  PetscCall(Uniform(r, &u));
  PetscCall(Uniform(r, &s));
  *a = (PetscScalar)((s < 0.5 ? -1.0 : 1.0) * (0.5 + 1.5 * u));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a matrix value in [-1, 1], sometimes an explicit zero */
static PetscErrorCode RandValue(PetscRandom r, PetscScalar *v)
{
  PetscReal u;

  PetscFunctionBegin;
  PetscCall(Uniform(r, &u));
  if (u < 0.05) *v = 0.0;
  else {
    PetscCall(Uniform(r, &u));
    *v = (PetscScalar)(2.0 * u - 1.0);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FillRandom(Vec v, PetscRandom r)
{
  PetscScalar *a;
  PetscInt     n;
  PetscReal    u;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(v, &n));
  PetscCall(VecGetArray(v, &a));
  for (PetscInt i = 0; i < n; i++) {
    PetscCall(Uniform(r, &u));
    a[i] = (PetscScalar)(2.0 * u - 1.0);
  }
  PetscCall(VecRestoreArray(v, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FillFactors(Vec v, PetscRandom r)
{
  PetscScalar *a;
  PetscInt     n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(v, &n));
  PetscCall(VecGetArray(v, &a));
  for (PetscInt i = 0; i < n; i++) PetscCall(RandFactor(r, &a[i]));
  PetscCall(VecRestoreArray(v, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PrintReproducer(void)
{
  PetscFunctionBegin;
  if (casefail++) PetscFunctionReturn(PETSC_SUCCESS); /* once per case */
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "     case %" PetscInt_FMT ": %s; options ordering=%s k=%" PetscInt_FMT " sr=%" PetscInt_FMT " ssr=%" PetscInt_FMT " threads=%" PetscInt_FMT " compress=%d%s\n", icase, shape, MatCSRKOrderings[opts.ordering], opts.k,
                        opts.sr, opts.ssr, opts.threads, (int)opts.compress, opts.defaults ? " (defaults after an in-place conversion)" : ""));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "     reproduce: mpiexec -n %d build/tests/property -seed %" PetscInt_FMT " -case %" PetscInt_FMT " -steps %" PetscInt_FMT " -verbose\n", nranks, seed, icase, nsteps));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a PETSc error inside a case says which case, then the usual traceback */
static PetscErrorCode ErrorHandler(MPI_Comm comm, int line, const char *func, const char *file, PetscErrorCode n, PetscErrorType p, const char *mess, void *ctx)
{
  if (p == PETSC_ERROR_INITIAL)
    (void)PetscErrorPrintf("property: error in seed %" PetscInt_FMT " case %" PetscInt_FMT " step %" PetscInt_FMT " (%s) on %d ranks; reproduce: mpiexec -n %d build/tests/property -seed %" PetscInt_FMT " -case %" PetscInt_FMT " -steps %" PetscInt_FMT " -verbose\n", seed, icase, istep,
                           stepname, nranks, nranks, seed, icase, nsteps);
  return PetscTraceBackErrorHandler(comm, line, func, file, n, p, mess, ctx);
}

/* relative error of y against yref, infinite norm; NaN (a poisoned entry left unwritten) fails */
static PetscErrorCode Compare(Vec y, Vec yref, const char *what)
{
  PetscReal err;

  PetscFunctionBegin;
  PetscCall(TestRelativeError(y, yref, &err));
  nchecks++;
  if (!(err <= tol)) {
    nfail++;
    if (quiet) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL seed %" PetscInt_FMT " case %" PetscInt_FMT " step %" PetscInt_FMT " (%s): %s relative error %g\n", seed, icase, istep, stepname, what, (double)err));
    PetscCall(PrintReproducer());
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the MatMult family of C against that of A, every output poisoned with NaN first */
static PetscErrorCode Check(Mat A, Mat C, PetscRandom rl)
{
  Vec x, z, y, yref, yt, zt, xt, xref;

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecDuplicate(y, &yref));
  PetscCall(VecDuplicate(y, &z));
  PetscCall(VecDuplicate(y, &yt));
  PetscCall(VecDuplicate(x, &zt));
  PetscCall(VecDuplicate(x, &xt));
  PetscCall(VecDuplicate(x, &xref));
  PetscCall(FillRandom(x, rl));
  PetscCall(FillRandom(z, rl));
  PetscCall(FillRandom(yt, rl));
  PetscCall(FillRandom(zt, rl));

  PetscCall(MatMult(A, x, yref));
  PetscCall(VecSet(y, (PetscScalar)NAN));
  PetscCall(MatMult(C, x, y));
  PetscCall(Compare(y, yref, "MatMult"));
  /* again: the first product after a change may build, the second runs on what was built */
  PetscCall(VecSet(y, (PetscScalar)NAN));
  PetscCall(MatMult(C, x, y));
  PetscCall(Compare(y, yref, "MatMult (again)"));
  PetscCall(MatMultAdd(A, x, z, yref));
  PetscCall(VecSet(y, (PetscScalar)NAN));
  PetscCall(MatMultAdd(C, x, z, y));
  PetscCall(Compare(y, yref, "MatMultAdd"));
  PetscCall(VecCopy(z, y));
  PetscCall(MatMultAdd(C, x, y, y));
  PetscCall(Compare(y, yref, "MatMultAdd in place"));

  PetscCall(MatMultTranspose(A, yt, xref));
  PetscCall(VecSet(xt, (PetscScalar)NAN));
  PetscCall(MatMultTranspose(C, yt, xt));
  PetscCall(Compare(xt, xref, "MatMultTranspose"));
  PetscCall(MatMultTransposeAdd(A, yt, zt, xref));
  PetscCall(VecSet(xt, (PetscScalar)NAN));
  PetscCall(MatMultTransposeAdd(C, yt, zt, xt));
  PetscCall(Compare(xt, xref, "MatMultTransposeAdd"));

  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&yref));
  PetscCall(VecDestroy(&yt));
  PetscCall(VecDestroy(&zt));
  PetscCall(VecDestroy(&xt));
  PetscCall(VecDestroy(&xref));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the global structure of a random matrix: every process draws the same, from the shared generator */
typedef struct {
  PetscInt      M, N, bs, maxlen, band;
  PetscReal     pempty, pdense, plocal, pdup;
  unsigned long rowseed;
} Shape;

/* row i into cols/vals: n0 first insertions, then n - n0 duplicates of some of them (added again in a second call) */
static PetscErrorCode GenRow(PetscRandom r, const Shape *s, PetscInt i, PetscInt *n0, PetscInt *n, PetscInt *cols, PetscScalar *vals)
{
  PetscReal u;
  PetscInt  m = 0, len, j, off;

  PetscFunctionBegin;
  PetscCall(Uniform(r, &u));
  if (u < s->pdense) {
    for (j = 0; j < s->N; j++) {
      cols[m] = j;
      PetscCall(RandValue(r, &vals[m++]));
    }
  } else if (u >= s->pdense + s->pempty) {
    PetscCall(RandInt(r, 1, s->maxlen, &len));
    for (PetscInt t = 0; t < len; t++) {
      PetscCall(Uniform(r, &u));
      if (u < s->plocal) {
        PetscCall(RandInt(r, -s->band, s->band, &off));
        j = (PetscInt)((PetscReal)i * (PetscReal)s->N / (PetscReal)s->M) + off;
        j = PetscMin(PetscMax(j, 0), s->N - 1);
      } else PetscCall(RandInt(r, 0, s->N - 1, &j));
      j = (j / s->bs) * s->bs; /* whole blocks when there is a block size */
      for (PetscInt b = 0; b < s->bs; b++) {
        cols[m] = j + b;
        PetscCall(RandValue(r, &vals[m++]));
      }
    }
  }
  *n0 = m;
  for (PetscInt t = 0; t < *n0; t++) {
    PetscCall(Uniform(r, &u));
    if (u < s->pdup) {
      cols[m] = cols[t];
      PetscCall(RandValue(r, &vals[m++]));
    }
  }
  *n = m;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* rows (biased towards small): 0..3 (fewer rows than processes), tens, hundreds, up to 2000 */
static PetscErrorCode DrawDimension(PetscRandom rg, PetscInt min, PetscInt *n)
{
  PetscReal u;

  PetscFunctionBegin;
  PetscCall(Uniform(rg, &u));
  if (u < 0.1) PetscCall(RandInt(rg, min, 3, n));
  else if (u < 0.6) PetscCall(RandInt(rg, 4, 100, n));
  else if (u < 0.9) PetscCall(RandInt(rg, 101, 600, n));
  else PetscCall(RandInt(rg, 601, 2000, n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the local size of this process for N entries in blocks of bs: PETSc's split, or random cuts with some processes empty */
static PetscErrorCode DrawLayout(PetscRandom rg, PetscInt N, PetscInt bs, PetscBool *decide, PetscInt *n)
{
  PetscInt   *cuts, nb = N / bs, t;
  PetscReal   u;
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(Uniform(rg, &u));
  *decide = (PetscBool)(u < 0.5);
  PetscCall(PetscMalloc1(nranks + 1, &cuts));
  cuts[0]      = 0;
  cuts[nranks] = nb;
  for (PetscInt r = 1; r < nranks; r++) PetscCall(RandInt(rg, 0, nb, &cuts[r]));
  PetscCall(PetscSortInt(nranks + 1, cuts));
  for (PetscInt r = 1; r < nranks; r++) {
    PetscCall(Uniform(rg, &u));
    if (u < 0.3) cuts[r] = cuts[r - 1];
  }
  t = (cuts[rank + 1] - cuts[rank]) * bs;
  PetscCall(PetscFree(cuts));
  {
    PetscLayout map;
    PetscCall(PetscLayoutCreate(PETSC_COMM_WORLD, &map));
    PetscCall(PetscLayoutSetLocalSize(map, *decide ? PETSC_DECIDE : t));
    PetscCall(PetscLayoutSetSize(map, N));
    PetscCall(PetscLayoutSetBlockSize(map, bs));
    PetscCall(PetscLayoutSetUp(map));
    PetscCall(PetscLayoutGetLocalSize(map, n));
    PetscCall(PetscLayoutDestroy(&map));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CreateRandomMatrix(PetscRandom rg, Mat *A)
{
  Shape        s;
  PetscReal    u;
  PetscInt     m, n, rstart, rend, cstart, cend, *dnnz, *onnz, *cols, n0, nr, cap, nnz = 0, sq;
  PetscBool    rdecide, cdecide;
  PetscScalar *vals;
  PetscRandom  rr;

  PetscFunctionBegin;
  PetscCall(DrawDimension(rg, 0, &s.M));
  PetscCall(RandInt(rg, 0, 9, &sq));
  s.bs = 1;
  if (sq < 6) {
    s.N = s.M;
    PetscCall(Uniform(rg, &u));
    if (u < 0.2) {
      PetscInt bs;
      PetscCall(RandInt(rg, 2, 3, &bs));
      if (s.M >= bs) {
        s.bs = bs;
        s.M  = (s.M / bs) * bs;
        s.N  = s.M;
      }
    }
  } else PetscCall(DrawDimension(rg, 1, &s.N));
  PetscCall(RandInt(rg, 1, 30, &s.maxlen));
  PetscCall(RandInt(rg, 0, 50, &s.band));
  PetscCall(Uniform(rg, &s.pempty));
  s.pempty *= 0.4;
  PetscCall(Uniform(rg, &s.plocal));
  PetscCall(Uniform(rg, &s.pdup));
  s.pdup *= 0.2;
  PetscCall(Uniform(rg, &u));
  s.pdense = (u < 0.3 && s.M) ? PetscMin(0.3, 2.0 / s.M) : 0.0;
  PetscCall(Uniform(rg, &u));
  s.rowseed = (unsigned long)(u * 4294967295.0);

  /* layouts: square matrices mostly with the column layout of the rows */
  PetscCall(DrawLayout(rg, s.M, s.bs, &rdecide, &m));
  PetscCall(DrawLayout(rg, s.N, s.bs, &cdecide, &n));
  PetscCall(Uniform(rg, &u));
  if (s.M == s.N && u < 0.85) {
    n       = m;
    cdecide = rdecide;
  }
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, m, n, s.M, s.N));
  if (s.bs > 1) PetscCall(MatSetBlockSize(*A, s.bs));
  PetscCall(MatSetType(*A, MATAIJ));
  /* the ownership ranges before the preallocation, which needs them */
  PetscCallMPI(MPI_Scan(&m, &rend, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Scan(&n, &cend, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
  rstart = rend - m;
  cstart = cend - n;

  /* every process draws every row (the same rows everywhere), inserts its own: a first pass counts for the preallocation */
  cap = 2 * PetscMax(s.N, 3 * s.maxlen) + 1;
  PetscCall(PetscMalloc2(cap, &cols, cap, &vals));
  PetscCall(PetscCalloc2(rend - rstart, &dnnz, rend - rstart, &onnz));
  PetscCall(RandomCreate(s.rowseed, &rr));
  for (PetscInt i = 0; i < s.M; i++) {
    PetscCall(GenRow(rr, &s, i, &n0, &nr, cols, vals));
    nnz += nr;
    if (i < rstart || i >= rend) continue;
    for (PetscInt t = 0; t < nr; t++) {
      if (cols[t] >= cstart && cols[t] < cend) dnnz[i - rstart]++;
      else onnz[i - rstart]++;
    }
    dnnz[i - rstart] = PetscMin(dnnz[i - rstart], cend - cstart);
    onnz[i - rstart] = PetscMin(onnz[i - rstart], s.N - (cend - cstart));
  }
  PetscCall(MatSeqAIJSetPreallocation(*A, 0, dnnz));
  PetscCall(MatMPIAIJSetPreallocation(*A, 0, dnnz, 0, onnz));
  PetscCall(PetscFree2(dnnz, onnz));
  PetscCall(PetscRandomSetSeed(rr, s.rowseed));
  PetscCall(PetscRandomSeed(rr));
  for (PetscInt i = 0; i < s.M; i++) {
    PetscCall(GenRow(rr, &s, i, &n0, &nr, cols, vals));
    if (i < rstart || i >= rend) continue;
    /* ADD_VALUES: repeated columns in a call, and the duplicates added again in a second call */
    if (n0) PetscCall(MatSetValues(*A, 1, &i, n0, cols, vals, ADD_VALUES));
    if (nr > n0) PetscCall(MatSetValues(*A, 1, &i, nr - n0, cols + n0, vals + n0, ADD_VALUES));
  }
  PetscCall(PetscRandomDestroy(&rr));
  PetscCall(PetscFree2(cols, vals));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscSNPrintf(shape, sizeof(shape), "%" PetscInt_FMT "x%" PetscInt_FMT " bs=%" PetscInt_FMT " insertions=%" PetscInt_FMT " rows %s, columns %s (local %" PetscInt_FMT "x%" PetscInt_FMT " on rank 0)", s.M, s.N, s.bs, nnz, rdecide ? "PETSC_DECIDE" : "random", cdecide ? "PETSC_DECIDE" : "random", m, n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DrawOptions(PetscRandom rg, Opts *o)
{
  PetscReal u;

  PetscFunctionBegin;
  PetscCall(RandInt(rg, 0, MAT_CSRK_ORDERING_AUTO, &o->ordering));
  PetscCall(RandInt(rg, 1, 3, &o->k));
  PetscCall(Uniform(rg, &u));
  if (u < 0.5) o->sr = PETSC_DECIDE;
  else PetscCall(RandInt(rg, 1, 300, &o->sr));
  PetscCall(Uniform(rg, &u));
  if (u < 0.5) o->ssr = PETSC_DECIDE;
  else PetscCall(RandInt(rg, 1, 300, &o->ssr));
  PetscCall(RandInt(rg, 1, 2, &o->threads));
  PetscCall(Uniform(rg, &u));
  o->compress = (PetscBool)(u >= 0.25);
  o->defaults = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ApplyOptions(Mat C, const Opts *o)
{
  PetscFunctionBegin;
  PetscCall(MatCSRKSetOrdering(C, (MatCSRKOrdering)o->ordering));
  PetscCall(MatCSRKSetLevels(C, o->k));
  PetscCall(MatCSRKSetSizes(C, o->sr, o->ssr));
  PetscCall(MatCSRKSetNumThreads(C, o->threads));
  PetscCall(MatCSRKSetFeature(C, MAT_CSRK_COMPRESS_INDICES, o->compress));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Assemble(Mat A, Mat C)
{
  PetscFunctionBegin;
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(C, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(C, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The local blocks of M: M itself on one process, the diagonal and off-diagonal blocks on more */
static PetscErrorCode LocalBlocks(Mat M, Mat blk[2])
{
  PetscFunctionBegin;
  blk[0] = M;
  blk[1] = NULL;
  if (nranks > 1) PetscCall(MatMPIAIJGetSeqAIJ(M, &blk[0], &blk[1], NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The value arrays of the local blocks of A and C (the same layout: the same insertions) written directly, with the
   same random values: read-write (MatSeqAIJGetArray, a random factor and shift per entry) or write-only
   (MatSeqAIJGetArrayWrite, new values) */
static PetscErrorCode ArrayStep(PetscRandom rl, Mat A, Mat C, PetscBool writeonly)
{
  Mat ba[2], bc[2];

  PetscFunctionBegin;
  PetscCall(LocalBlocks(A, ba));
  PetscCall(LocalBlocks(C, bc));
  for (PetscInt b = 0; b < 2; b++) {
    MatInfo      ia, ic;
    PetscScalar *f, *g, *a, *c;
    PetscInt     nz;
    if (!ba[b]) continue;
    PetscCall(MatGetInfo(ba[b], MAT_LOCAL, &ia));
    PetscCall(MatGetInfo(bc[b], MAT_LOCAL, &ic));
    nz = (PetscInt)ia.nz_used;
    PetscCheck(nz == (PetscInt)ic.nz_used, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Blocks of %" PetscInt_FMT " and %g nonzeros", nz, ic.nz_used);
    PetscCall(PetscMalloc2(nz, &f, nz, &g));
    for (PetscInt q = 0; q < nz; q++) {
      PetscCall(RandFactor(rl, &f[q]));
      PetscCall(RandValue(rl, &g[q]));
    }
    if (writeonly) {
      PetscCall(MatSeqAIJGetArrayWrite(ba[b], &a));
      PetscCall(MatSeqAIJGetArrayWrite(bc[b], &c));
      for (PetscInt q = 0; q < nz; q++) a[q] = c[q] = g[q];
      PetscCall(MatSeqAIJRestoreArrayWrite(ba[b], &a));
      PetscCall(MatSeqAIJRestoreArrayWrite(bc[b], &c));
    } else {
      PetscCall(MatSeqAIJGetArray(ba[b], &a));
      PetscCall(MatSeqAIJGetArray(bc[b], &c));
      for (PetscInt q = 0; q < nz; q++) {
        a[q] = f[q] * a[q] + 0.1 * g[q];
        c[q] = f[q] * c[q] + 0.1 * g[q];
      }
      PetscCall(MatSeqAIJRestoreArray(ba[b], &a));
      PetscCall(MatSeqAIJRestoreArray(bc[b], &c));
    }
    PetscCall(PetscFree2(f, g));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* new values in about half of the local rows of A and C, on their existing entries, inserted or added */
static PetscErrorCode ChangeRows(PetscRandom rg, PetscRandom rl, Mat A, Mat C)
{
  InsertMode mode;
  Mat        S; /* the rows read from a copy: MatGetRow() refuses a matrix that MatSetValues() has made unassembled */
  PetscReal  u;
  PetscInt   rstart, rend;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCall(Uniform(rg, &u));
  mode = u < 0.5 ? INSERT_VALUES : ADD_VALUES;
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &S));
  for (PetscInt r = rstart; r < rend; r++) {
    PetscInt           ncols, *c;
    const PetscInt    *cols;
    PetscScalar       *v;
    PetscCall(Uniform(rl, &u));
    if (u < 0.5) continue;
    PetscCall(MatGetRow(S, r, &ncols, &cols, NULL));
    PetscCall(PetscMalloc2(ncols, &c, ncols, &v));
    PetscCall(PetscArraycpy(c, cols, ncols));
    PetscCall(MatRestoreRow(S, r, NULL, &cols, NULL)); /* MatRestoreRow() sets its count to 0 */
    for (PetscInt q = 0; q < ncols; q++) PetscCall(RandValue(rl, &v[q]));
    PetscCall(MatSetValues(A, 1, &r, ncols, c, v, mode));
    PetscCall(MatSetValues(C, 1, &r, ncols, c, v, mode));
    PetscCall(PetscFree2(c, v));
  }
  PetscCall(MatDestroy(&S));
  PetscCall(Assemble(A, C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* one random change, the same on A and on C: choices that every process must agree on come from rg, local ones from rl */
static PetscErrorCode Step(PetscRandom rg, PetscRandom rl, Mat A, Mat *C, StepKind kind)
{
  PetscInt    M, N, rstart, rend;
  PetscReal   u;
  PetscScalar a;

  PetscFunctionBegin;
  PetscCall(MatGetSize(A, &M, &N));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  /* again before every step: PETSc turns the check back on when it reallocates (MatShift with missing diagonal entries) */
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatSetOption(*C, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  switch (kind) {
  case STEP_VALUES:
    PetscCall(ChangeRows(rg, rl, A, *C));
    break;
  case STEP_NEWNZ: {
    PetscInt cnt, i, j;
    PetscCall(RandInt(rl, 0, 20, &cnt));
    for (PetscInt t = 0; M && N && t < cnt; t++) {
      /* mostly own rows, some through the stash of another process */
      PetscCall(Uniform(rl, &u));
      if (u < 0.7 && rend > rstart) PetscCall(RandInt(rl, rstart, rend - 1, &i));
      else PetscCall(RandInt(rl, 0, M - 1, &i));
      PetscCall(RandInt(rl, 0, N - 1, &j));
      PetscCall(RandValue(rl, &a));
      PetscCall(MatSetValues(A, 1, &i, 1, &j, &a, ADD_VALUES));
      PetscCall(MatSetValues(*C, 1, &i, 1, &j, &a, ADD_VALUES));
    }
    PetscCall(Uniform(rl, &u));
    if (u < 0.1 && rend > rstart) { /* a row becomes dense */
      PetscCall(RandInt(rl, rstart, rend - 1, &i));
      for (j = 0; j < N; j++) {
        PetscCall(RandValue(rl, &a));
        PetscCall(MatSetValues(A, 1, &i, 1, &j, &a, ADD_VALUES));
        PetscCall(MatSetValues(*C, 1, &i, 1, &j, &a, ADD_VALUES));
      }
    }
    PetscCall(Assemble(A, *C));
  } break;
  case STEP_SCALE:
    PetscCall(RandFactor(rg, &a));
    PetscCall(MatScale(A, a));
    PetscCall(MatScale(*C, a));
    break;
  case STEP_SHIFT: {
    PetscMPIInt size;
    PetscInt    empty = 0;
    PetscCall(RandFactor(rg, &a));
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
#if PETSC_VERSION_GE(3, 19, 0)
    /* PETSc 3.26.1's MatShift_Basic keeps a pointer to the off-diagonal block across an assembly that can destroy it
       (MatDisAssemble_MPIAIJ) when a process has an empty diagonal block, or when diagonal entries fall into the
       off-diagonal block (row and column layouts that differ): a use after free in plain MPIAIJ (valgrind: freed in
       MatDisAssemble_MPIAIJ, read in MatShift_Basic). Those cases are left out there. */
    if (size > 1) {
      Mat       Ad;
      MatInfo   info;
      PetscBool cong;
      PetscCall(MatGetDiagonalBlock(A, &Ad));
      PetscCall(MatGetInfo(Ad, MAT_LOCAL, &info));
      PetscCall(MatHasCongruentLayouts(A, &cong));
      empty = info.nz_used == 0 || !cong;
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &empty, 1, MPIU_INT, MPI_MAX, PetscObjectComm((PetscObject)A)));
    }
#endif
    if (empty) break;
    PetscCall(MatShift(A, a));
    PetscCall(MatShift(*C, a));
  } break;
  case STEP_ZEROROWS: {
    PetscInt *rows, nz = 0;
    Mat       Ad;
    PetscCall(Uniform(rg, &u));
    if (u < 0.3) a = 0.0;
    else if (u < 0.6) a = 1.0;
    else PetscCall(RandFactor(rg, &a));
    /* PETSc 3.18's MatZeroRows_SeqAIJ writes the diagonal through a stale array when it has to insert it into an empty row
       (MatSetValues reallocates): with a nonzero diagonal, only rows whose diagonal block row has entries */
    PetscCall(MatGetDiagonalBlock(A, &Ad));
    PetscCall(PetscMalloc1(rend - rstart, &rows));
    for (PetscInt r = rstart; r < rend; r++) {
      PetscInt ncols;
      PetscCall(Uniform(rl, &u));
      if (u >= 0.15) continue;
      PetscCall(MatGetRow(Ad, r - rstart, &ncols, NULL, NULL));
      PetscCall(MatRestoreRow(Ad, r - rstart, NULL, NULL, NULL)); /* MatRestoreRow() sets its count to 0 */
      if (a == 0.0 || ncols > 0) rows[nz++] = r;
    }
    PetscCall(MatZeroRows(A, nz, rows, a, NULL, NULL));
    PetscCall(MatZeroRows(*C, nz, rows, a, NULL, NULL));
    PetscCall(PetscFree(rows));
  } break;
  case STEP_CONVERT:
    PetscCall(MatConvert(*C, MATAIJ, MAT_INPLACE_MATRIX, C));
    PetscCall(MatConvert(*C, MATCSRK, MAT_INPLACE_MATRIX, C));
    PetscCall(Uniform(rg, &u));
    if (u < 0.5) {
      PetscCall(DrawOptions(rg, &opts));
      PetscCall(ApplyOptions(*C, &opts));
    } else { /* whatever the conversion gives, read back for the failure lines */
      MatCSRKOrdering o;
      PetscCall(MatCSRKGetOrdering(*C, &o));
      PetscCall(MatCSRKGetLevels(*C, &opts.k));
      PetscCall(MatCSRKGetSizes(*C, &opts.sr, &opts.ssr));
      opts.ordering = o;
      opts.threads  = PETSC_DECIDE;
      opts.compress = PETSC_TRUE;
      opts.defaults = PETSC_TRUE;
    }
    break;
  case STEP_OPTIONS:
    PetscCall(RandInt(rg, 0, MAT_CSRK_ORDERING_AUTO, &opts.ordering));
    PetscCall(RandInt(rg, 1, 3, &opts.k));
    PetscCall(MatCSRKSetOrdering(*C, (MatCSRKOrdering)opts.ordering));
    PetscCall(MatCSRKSetLevels(*C, opts.k));
    PetscCall(Uniform(rg, &u));
    if (u < 0.3) { /* sometimes everything */
      PetscCall(DrawOptions(rg, &opts));
      PetscCall(ApplyOptions(*C, &opts));
    }
    break;
  case STEP_DIAGSCALE: {
    Vec       l, r;
    PetscReal ul, ur;
    PetscCall(MatCreateVecs(A, &r, &l));
    PetscCall(FillFactors(l, rl));
    PetscCall(FillFactors(r, rl));
    PetscCall(Uniform(rg, &ul));
    PetscCall(Uniform(rg, &ur));
    PetscCall(MatDiagonalScale(A, ul < 0.25 ? NULL : l, ur < 0.25 ? NULL : r));
    PetscCall(MatDiagonalScale(*C, ul < 0.25 ? NULL : l, ur < 0.25 ? NULL : r));
    PetscCall(VecDestroy(&l));
    PetscCall(VecDestroy(&r));
  } break;
  case STEP_STORE: {
    /* the stored values come back after a change that a product has seen: MatRetrieveValues() does not increase the
       object state in PETSc 3.18. MatStoreValues() keeps the space of its first call, which a grown pattern would
       overrun: after a pattern change since the last store of the case, on duplicates of A and C. */
    Mat              pair[2] = {A, *C};
    PetscObjectState nzs;
    PetscBool        dup;
    PetscCall(MatGetNonzeroState(A, &nzs));
    dup = (PetscBool)(storednz >= 0 && nzs != storednz);
    for (PetscInt t = 0; t < 2; t++) {
      if (dup) PetscCall(MatDuplicate(pair[t], MAT_COPY_VALUES, &pair[t]));
      PetscCall(MatSetOption(pair[t], MAT_NEW_NONZERO_LOCATIONS, PETSC_FALSE));
      PetscCall(MatStoreValues(pair[t]));
    }
    if (!dup) storednz = nzs;
    PetscCall(Check(pair[0], pair[1], rl));
    PetscCall(Uniform(rg, &u));
    if (u < 0.4) {
      PetscCall(RandFactor(rg, &a));
      for (PetscInt t = 0; t < 2; t++) PetscCall(MatScale(pair[t], a));
    } else if (u < 0.7) PetscCall(ArrayStep(rl, pair[0], pair[1], PETSC_FALSE));
    else PetscCall(ChangeRows(rg, rl, pair[0], pair[1]));
    PetscCall(Check(pair[0], pair[1], rl));
    PetscCall(Uniform(rg, &u));
    for (PetscInt t = 0; t < 2; t++) {
      PetscCall(MatRetrieveValues(pair[t]));
      if (u < 0.3) PetscCall(MatRetrieveValues(pair[t])); /* twice */
      PetscCall(MatSetOption(pair[t], MAT_NEW_NONZERO_LOCATIONS, PETSC_TRUE));
    }
    if (dup) {
      PetscCall(Check(pair[0], pair[1], rl));
      PetscCall(MatDestroy(&pair[0]));
      PetscCall(MatDestroy(&pair[1]));
    }
  } break;
  case STEP_ARRAY:
    PetscCall(Uniform(rg, &u));
    PetscCall(ArrayStep(rl, A, *C, (PetscBool)(u < 0.5)));
    break;
  case STEP_COPY: {
    Mat pair[2] = {A, *C}, X;
    PetscCall(RandFactor(rg, &a));
    PetscCall(Uniform(rg, &u));
    for (PetscInt t = 0; t < 2; t++) {
      PetscCall(MatDuplicate(pair[t], MAT_COPY_VALUES, &X));
      PetscCall(MatScale(X, a));
      if (u < 0.5) PetscCall(MatAXPY(pair[t], 0.5, X, SAME_NONZERO_PATTERN));
      else PetscCall(MatCopy(X, pair[t], SAME_NONZERO_PATTERN));
      PetscCall(MatDestroy(&X));
    }
  } break;
  case STEP_PARTS:
    PetscCall(MatRealPart(A));
    PetscCall(MatRealPart(*C));
    PetscCall(MatConjugate(A));
    PetscCall(MatConjugate(*C));
    break;
  default:
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_PLIB, "Unknown step %d", (int)kind);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the harness itself: an output that was never written (NaN) must fail */
static PetscErrorCode SelfTest(void)
{
  Vec      y, yref;
  PetscInt saved = nfail, savedc = nchecks;

  PetscFunctionBegin;
  PetscCall(VecCreateMPI(PETSC_COMM_WORLD, PETSC_DECIDE, 4, &y));
  PetscCall(VecDuplicate(y, &yref));
  PetscCall(VecSet(yref, 1.0));
  PetscCall(VecSet(y, (PetscScalar)NAN));
  quiet = PETSC_TRUE;
  PetscCall(Compare(y, yref, "NaN output"));
  quiet = PETSC_FALSE;
  PetscCheck(nfail == saved + 1, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "The comparison does not catch NaN outputs");
  nfail   = saved;
  nchecks = savedc;
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&yref));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscInt    count = 300, only = -1, ncases = 0;
  PetscBool   verbose = PETSC_FALSE;
  PetscMPIInt rank;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatCSRKRegister());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &nranks));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-seed", &seed, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-count", &count, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-steps", &nsteps, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-case", &only, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol", &tol, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  PetscCall(SelfTest());
  PetscCall(PetscPushErrorHandler(ErrorHandler, NULL));

  for (icase = only >= 0 ? only : 0; icase < (only >= 0 ? only + 1 : count); icase++) {
    PetscRandom rg, rl;
    Mat         A, C;

    ncases++;
    casefail = 0;
    istep    = 0;
    storednz = -1;
    stepname = "initial conversion";
    /* rg: the same on every process (sizes, layouts, options, steps); rl: this process's own (vectors, local rows and values) */
    PetscCall(RandomCreate(Mix(seed, icase, 0), &rg));
    PetscCall(RandomCreate(Mix(seed, icase, 1 + rank), &rl));
    PetscCall(CreateRandomMatrix(rg, &A));
    PetscCall(DrawOptions(rg, &opts));
    PetscCall(MatConvert(A, MATCSRK, MAT_INITIAL_MATRIX, &C));
    PetscCall(ApplyOptions(C, &opts));
    if (verbose)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "case %" PetscInt_FMT ": %s; ordering=%s k=%" PetscInt_FMT " sr=%" PetscInt_FMT " ssr=%" PetscInt_FMT " threads=%" PetscInt_FMT " compress=%d\n", icase, shape, MatCSRKOrderings[opts.ordering], opts.k, opts.sr, opts.ssr, opts.threads, (int)opts.compress));
    PetscCall(Check(A, C, rl));

    for (istep = 1; istep <= nsteps; istep++) {
      PetscInt M, N, kind;
      PetscCall(MatGetSize(A, &M, &N));
      do PetscCall(RandInt(rg, 0, STEP_N - 1, &kind));
      while (M != N && (kind == STEP_SHIFT || kind == STEP_ZEROROWS));
      stepname = StepNames[kind];
      if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  step %" PetscInt_FMT ": %s\n", istep, stepname));
      PetscCall(Step(rg, rl, A, &C, (StepKind)kind));
      PetscCall(Check(A, C, rl));
    }
    PetscCall(MatDestroy(&A));
    PetscCall(MatDestroy(&C));
    PetscCall(PetscRandomDestroy(&rg));
    PetscCall(PetscRandomDestroy(&rl));
  }
  PetscCall(PetscPopErrorHandler());
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "property: %" PetscInt_FMT " cases, %" PetscInt_FMT " checks, %" PetscInt_FMT " failures\n", ncases, nchecks, nfail));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}
