/*
   bench - the SpMV benchmark of petsc-csrk: MatMult of one or more matrices stored as aij, sell, csrk (and CSR-k
   variants) side by side, on any number of MPI ranks.

   For every matrix and type the program measures
     - the set-up: MatConvert() to the type and the first MatMult() (CSR-k builds its structure, ordering included,
       lazily in the first product) minus one steady MatMult, in seconds and in MatMult-equivalents of that type;
     - the steady MatMult: -warmup untimed products, then -reps products each timed alone (MPI_Barrier, MPI_Wtime,
       slowest rank), reported as median, minimum and maximum;
     - the value refresh: a MatScale() (same pattern, new values) followed by one MatMult, minus a steady MatMult; for
       CSR-k this is the pass that copies the values into its structure, for AIJ it is about 0;
     - unless -solve 0, CG with Jacobi on b = A * ones from x0 = 0: iterations and KSPSolve time; every type must take
       the iterations of aij (the arithmetic differs only by the order of the sums).
   The table relates the median to a model of the memory traffic (12 nnz + 20 rows bytes: 8-byte values and 4-byte
   column indices, the row pointer, x and y once each) and to the STREAM triad bandwidth measured at start-up, and
   gives the speedup over aij measured in the same run (aij is measured as the reference even when not asked for).
*/
static const char help[] = "SpMV benchmark: MatMult of aij, sell, csrk (and CSR-k variants) on the same matrices, with set-up, value\n"
                           "refresh and CG+Jacobi costs, GFLOP/s, modelled GB/s, fraction of STREAM triad, speedup over aij.\n"
                           "Input (several allowed, comma separated; default -problem lap3d7):\n"
                           "  -f <file>[,<file>...]   Matrix Market (.mtx, .mtx.gz) or PETSc binary (told apart by the content), all read\n"
                           "                          and checked before anything is measured\n"
                           "  -problem <lap2d5|lap3d7|lap3d27|elasticity3d|random|randrect|powerlaw|randnodes|fem3d|femelast3d>[,...]  generated problems\n"
                           "  -n <n>[,<n>...]         their sizes (one for all or one each; defaults: lap2d5 1024, lap3d7 100,\n"
                           "                          lap3d27 64, elasticity3d 40, fem3d 80, femelast3d 40, random/randrect/powerlaw 1000000)\n"
                           "  -permute <seed>         random symmetric renumbering P A P^T of every matrix first\n"
                           "Types:\n"
                           "  -ref <type>             the type the speedups are relative to (default aij; aijcusparse for GPU runs)\n"
                           "  -types <list>           default aij,sell,csrk (CUDA builds add aijcusparse,csrkcuda); a CSR-k entry may\n"
                           "                          carry settings after colons: ordering=<natural|rcm|bandk|auto> k=<1|2|3>\n"
                           "                          sr=<rows per super-row> ssr=<super-rows per super-super-row>\n"
                           "                          threads=<n> (0: default),\n"
                           "                          compress=<0|1> (column offsets where they fit),\n"
                           "                          patterns=<0|1> (row patterns where the rows allow: CPU, GPU sliced kernel),\n"
                           "                          slices=<0|1> (with row patterns, runs of 8 rows a row per vector lane: CPU),\n"
                           "                          nodes=<0|1> (one thread: consecutive rows with one column list together: CPU),\n"
                           "                          values=<0|1> (one thread: slices whose rows repeat one list of values keep it once: CPU),\n"
                           "                          half=<0|1> (one thread: the diagonal and upper triangle of a symmetric block: CPU),\n"
                           "                          e.g. csrk:ordering=bandk:k=3\n"
                           "                          (csrkcuda also kernel=<auto|scalar|vector|stream|sliced|merge|block>\n"
                           "                          pinned_halo=<0|1> (MPI: own halo exchange through pinned buffers, or VecScatter))\n"
                           "Measurement:\n"
                           "  -warmup <5> -reps <50>  untimed and timed MatMults per type\n"
                           "  -solve <1>              CG + Jacobi per type (-rtol <1e-6>, at most 10000 iterations)\n"
                           "  -stream <1> -stream_mb <256>  STREAM triad at start-up, arrays of that many MiB per rank\n"
                           "  -o <file.csv>           append one row per matrix and type (header when the file is new)\n"
                           "Examples:\n"
                           "  build/tutorials/bench -problem lap3d7 -n 100\n"
                           "  build/tutorials/bench -problem lap3d7 -n 100 -permute 1 -types aij,csrk,csrk:ordering=natural\n"
                           "  build/tutorials/bench -f wing.mtx,bayer10.mtx -types aij,csrk,csrk:ordering=bandk:k=3,csrk:ordering=rcm -o runs.csv\n"
                           "  OMP_NUM_THREADS=1 mpiexec -n 4 build/tutorials/bench -problem lap3d27,elasticity3d -solve 0\n"
                           "  build/tutorials/bench -f A.petscbin -types aij,csrk:threads=1,csrk:threads=2 -stream 0\n";

#include <petsccsrk.h>
#include <petsccsrkutil.h>
#include <petscksp.h>
#include <petscdevice.h>
#include <zlib.h>
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <stdlib.h>
#if defined(_OPENMP)
  #include <omp.h>
#endif

#define MAX_ENTRIES  64
#define MAX_MATRICES 64

/* One entry of -types: the matrix type and the CSR-k settings applied after MatConvert() */
typedef struct {
  char            label[256]; /* the entry as given */
  char            type[64];
  PetscBool       reference; /* aij added as the reference, not in -types */
  PetscBool       device;    /* a GPU type: products are asynchronous */
  PetscBool       settings;  /* any CSR-k setting given */
  PetscBool       set_k, set_sr, set_ssr, set_ord, set_thr, set_kern, set_feature[MAT_CSRK_NUM_FEATURES];
  PetscInt        k, sr, ssr, threads, feature[MAT_CSRK_NUM_FEATURES];
  MatCSRKCUDAKernel kernel;
  MatCSRKOrdering ordering;
} TypeEntry;

/* What was measured for one matrix and type; times in seconds, slowest rank */
typedef struct {
  PetscLogDouble     setup, med, min, max, refresh;
  PetscInt           cg_its;
  KSPConvergedReason reason;
  PetscLogDouble     cg_s;
  PetscBool          iscsrk;
  MatCSRKInfo        info;
} Result;

/* One input matrix: a file or a generated problem */
typedef struct {
  char      file[PETSC_MAX_PATH_LEN];
  char      problem[64];
  PetscInt  n;
  PetscBool mm; /* the file is Matrix Market (else PETSc binary) */
  Mat       A;  /* the file's matrix, read before anything is measured; taken by LoadInput() */
} Input;

static PetscErrorCode ParseInt(MPI_Comm comm, const char *entry, const char *key, const char *val, PetscInt lo, PetscInt hi, PetscInt *v)
{
  char     *end;
  long long x;

  PetscFunctionBegin;
  errno = 0;
  x     = strtoll(val, &end, 10);
  PetscCheck(val[0] && !*end && !errno && x >= lo && x <= hi, comm, PETSC_ERR_ARG_OUTOFRANGE, "-types entry %s: %s=%s is not an integer in [%" PetscInt_FMT ", %" PetscInt_FMT "]", entry, key, val, lo, hi);
  *v = (PetscInt)x;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the on/off settings of a -types entry: short names of the MatCSRKFeature switches */
static const struct {
  const char    *name;
  MatCSRKFeature feature;
} BenchFeatures[] = {
  {"compress",    MAT_CSRK_COMPRESS_INDICES },
  {"patterns",    MAT_CSRK_ROW_PATTERNS     },
  {"slices",      MAT_CSRK_ROW_SLICES       },
  {"nodes",       MAT_CSRK_ROW_NODES        },
  {"values",      MAT_CSRK_ROW_VALUES       },
  {"half",        MAT_CSRK_SYMMETRIC_HALF   },
  {"pinned_halo", MAT_CSRK_CUDA_HALO_PINNED },
};

/* the feature a setting names, or -1 */
static PetscInt BenchFeature(const char *tok)
{
  for (size_t i = 0; i < sizeof(BenchFeatures) / sizeof(BenchFeatures[0]); i++)
    if (!strcmp(tok, BenchFeatures[i].name)) return (PetscInt)BenchFeatures[i].feature;
  return -1;
}

/* "csrk:ordering=bandk:k=3" -> type csrk and its settings; errors name the entry, before anything is measured */
static PetscErrorCode ParseEntry(MPI_Comm comm, const char *str, TypeEntry *e)
{
  char      buf[256], *tok, *next;
  PetscBool found;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(e, sizeof(*e)));
  PetscCall(PetscStrncpy(e->label, str, sizeof(e->label)));
  PetscCall(PetscStrncpy(buf, str, sizeof(buf)));
  next = strchr(buf, ':');
  if (next) *next++ = 0;
  PetscCheck(buf[0], comm, PETSC_ERR_ARG_WRONG, "-types entry '%s' has no type", str);
  PetscCall(PetscStrncpy(e->type, buf, sizeof(e->type)));
  e->device = (PetscBool)(strstr(e->type, "cuda") || strstr(e->type, "cusparse") || strstr(e->type, "hip") || strstr(e->type, "kokkos"));
  while ((tok = next)) {
    char *val = strchr(tok, '=');
    next      = strchr(tok, ':');
    if (next) *next++ = 0;
    PetscCheck(val && (!next || val < next), comm, PETSC_ERR_ARG_WRONG, "-types entry %s: setting '%s' is not key=value", str, tok);
    *val++      = 0;
    e->settings = PETSC_TRUE;
    if (!strcmp(tok, "k")) {
      PetscCall(ParseInt(comm, str, tok, val, 1, 3, &e->k));
      e->set_k = PETSC_TRUE;
    } else if (!strcmp(tok, "sr") || !strcmp(tok, "sr_size")) {
      PetscCall(ParseInt(comm, str, tok, val, 0, 1000000000, &e->sr));
      e->set_sr = PETSC_TRUE;
    } else if (!strcmp(tok, "ssr") || !strcmp(tok, "ssr_size")) {
      PetscCall(ParseInt(comm, str, tok, val, 0, 1000000000, &e->ssr));
      e->set_ssr = PETSC_TRUE;
    } else if (!strcmp(tok, "threads")) {
      PetscCall(ParseInt(comm, str, tok, val, 0, 4096, &e->threads));
      e->set_thr = PETSC_TRUE;
    } else if (!strcmp(tok, "ordering")) {
      PetscEnum v;
      PetscCall(PetscEnumFind(MatCSRKOrderings, val, &v, &found));
      PetscCheck(found, comm, PETSC_ERR_ARG_WRONG, "-types entry %s: unknown ordering %s (natural, rcm, bandk, auto)", str, val);
      e->ordering = (MatCSRKOrdering)v;
      e->set_ord  = PETSC_TRUE;
    } else if (!strcmp(tok, "kernel")) {
      PetscEnum v;
      PetscCall(PetscEnumFind(MatCSRKCUDAKernels, val, &v, &found));
      PetscCheck(found, comm, PETSC_ERR_ARG_WRONG, "-types entry %s: unknown kernel %s (auto, scalar, vector, stream, sliced, merge, block, bsliced)", str, val);
      e->kernel   = (MatCSRKCUDAKernel)v;
      e->set_kern = PETSC_TRUE;
    } else if (BenchFeature(tok) >= 0) {
      const PetscInt f = BenchFeature(tok);

      PetscCall(ParseInt(comm, str, tok, val, 0, 1, &e->feature[f]));
      e->set_feature[f] = PETSC_TRUE;
    } else SETERRQ(comm, PETSC_ERR_ARG_WRONG, "-types entry %s: unknown setting %s (ordering, k, sr, ssr, threads, compress, patterns, slices, nodes, values, half, kernel, pinned_halo)", str, tok);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether a matrix type (root or concrete name) is registered, and whether it is a CSR-k type: MatSetType() on an
   empty matrix, its error silenced */
static PetscErrorCode TypeRegistered(MPI_Comm comm, const char *type, PetscBool *ok, PetscBool *iscsrk)
{
  Mat            T;
  PetscErrorCode ierr;
  PetscErrorCode (*getinfo)(Mat, MatCSRKInfo *) = NULL;

  PetscFunctionBegin;
  PetscCall(MatCreate(comm, &T));
  PetscCall(MatSetSizes(T, 0, 0, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = MatSetType(T, type);
  PetscCall(PetscPopErrorHandler());
  *ok = (PetscBool)(ierr == PETSC_SUCCESS);
  if (*ok) PetscCall(PetscObjectQueryFunction((PetscObject)T, "MatCSRKGetInfo_C", &getinfo));
  *iscsrk = (PetscBool)(getinfo != NULL);
  PetscCall(MatDestroy(&T));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* GPU products return before the work is done; the timings wait for the default stream, which PETSc's GPU
   matrices use */
static PetscErrorCode DeviceSync(PetscBool device)
{
  PetscDeviceContext dctx;

  PetscFunctionBegin;
  if (!device) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
  PetscCall(PetscDeviceContextSynchronize(dctx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   STREAM triad a[i] = b[i] + s c[i] on every rank at once with nthreads OpenMP threads each; best of 5. The bandwidth
   counts 3 arrays of 8-byte values per element (read b and c, write a), as STREAM does: the write-allocate traffic
   (reading a's lines into the cache before writing them) is not counted. Summed over ranks: all bytes moved by all
   ranks over the time of the slowest rank.
*/
static PetscErrorCode StreamTriad(MPI_Comm comm, PetscInt mb, int nthreads, PetscLogDouble *gbs)
{
  const long   n = (long)mb * 1048576 / (long)sizeof(double);
  const double s = 3.0;
  double      *a, *b, *c, best = PETSC_MAX_REAL;
  PetscMPIInt  size;
  int          okloc, ok;

  PetscFunctionBegin;
  PetscCheck(n > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-stream_mb must be positive");
  PetscCallMPI(MPI_Comm_size(comm, &size));
  /* plain malloc: the pages must be first touched by the threads that use them below, not by an allocator that
     may initialize memory on the master thread */
  a = (double *)malloc((size_t)n * sizeof(double));
  b = (double *)malloc((size_t)n * sizeof(double));
  c = (double *)malloc((size_t)n * sizeof(double));
  PetscCheck(a && b && c, PETSC_COMM_SELF, PETSC_ERR_MEM, "Cannot allocate 3 x %" PetscInt_FMT " MiB for STREAM (lower -stream_mb or use -stream 0)", mb);
#pragma omp parallel for schedule(static) num_threads(nthreads)
  for (long i = 0; i < n; i++) {
    a[i] = 0.0;
    b[i] = 1.0;
    c[i] = 2.0;
  }
  for (int t = 0; t < 5; t++) {
    double t0, dt;
    PetscCallMPI(MPI_Barrier(comm));
    t0 = MPI_Wtime();
#pragma omp parallel for schedule(static) num_threads(nthreads)
    for (long i = 0; i < n; i++) a[i] = b[i] + s * c[i];
    dt = MPI_Wtime() - t0;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, comm));
    best = PetscMin(best, dt);
  }
  /* reading the result keeps the compiler from dropping the stores */
  okloc = (a[0] == 1.0 + s * 2.0 && a[n - 1] == 1.0 + s * 2.0);
  PetscCallMPI(MPI_Allreduce(&okloc, &ok, 1, MPI_INT, MPI_LAND, comm));
  free(a);
  free(b);
  free(c);
  PetscCheck(ok, comm, PETSC_ERR_PLIB, "STREAM triad computed wrong values");
  *gbs = 3.0 * sizeof(double) * (double)n * size / best / 1e9;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Checks an input file (rank 0 reads) before anything is measured, and says what it holds: Matrix Market (plain or
   gzip-compressed) or a PETSc binary matrix. Every error names the file: missing, not a regular file, unreadable,
   empty, gzip-compressed without Matrix Market inside, neither kind, or a binary matrix shorter than its header says */
static PetscErrorCode CheckFile(MPI_Comm comm, const char *file, PetscBool *mm)
{
  PetscMPIInt rank;
  /* st[0]: 0 a PETSc binary matrix, 1 Matrix Market, else the failure below; st[1]: errno; hd: binary header, file size */
  long long st[2] = {0, 0}, hd[5] = {0, 0, 0, 0, 0};

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) {
    struct stat   sb;
    unsigned char head[4 * sizeof(PetscInt)] = {0};
    FILE         *fp;
    size_t        len = 0;

    errno = 0;
    if (stat(file, &sb)) st[0] = -1, st[1] = errno;
    else if (!S_ISREG(sb.st_mode)) st[0] = -2;
    else if (!(fp = fopen(file, "rb"))) st[0] = -3, st[1] = errno;
    else {
      len = fread(head, 1, sizeof(head), fp);
      (void)fclose(fp);
      hd[4] = (long long)sb.st_size;
      if (!sb.st_size || !len) st[0] = -4;
      else if (len >= 2 && head[0] == 0x1f && head[1] == 0x8b) { /* gzip: Matrix Market inside, or nothing we read */
        gzFile gz = gzopen(file, "rb");
        int    got = gz ? gzread(gz, head, 14) : 0; /* (once: PetscMax() would read twice) */
        len        = got > 0 ? (size_t)got : 0;
        if (gz) (void)gzclose(gz);
        st[0] = -5;
      } else st[0] = -6;
      if (st[0] <= -5 && len >= 14) {
        const char *banner = "%%matrixmarket";
        int         i;
        for (i = 0; i < 14 && tolower(head[i]) == banner[i]; i++) {}
        if (i == 14) st[0] = 1;
      }
      if (st[0] == -6 && len == sizeof(head)) { /* a PETSc binary matrix: class id, rows, columns, nonzeros, big-endian */
        for (int f = 0; f < 4; f++) {
          long long v = 0;
          for (size_t b = 0; b < sizeof(PetscInt); b++) v = (v << 8) | head[f * sizeof(PetscInt) + b];
          if (sizeof(PetscInt) == 4) v = (int32_t)v;
          hd[f] = v;
        }
        if (hd[0] == MAT_FILE_CLASSID) st[0] = 0;
      }
    }
  }
  PetscCallMPI(MPI_Bcast(st, 2, MPI_LONG_LONG, 0, comm));
  PetscCallMPI(MPI_Bcast(hd, 5, MPI_LONG_LONG, 0, comm));
  PetscCheck(st[0] != -1, comm, PETSC_ERR_FILE_OPEN, "-f %s: %s", file, st[1] ? strerror((int)st[1]) : "cannot stat it");
  PetscCheck(st[0] != -2, comm, PETSC_ERR_FILE_OPEN, "-f %s: not a regular file (a directory?)", file);
  PetscCheck(st[0] != -3, comm, PETSC_ERR_FILE_OPEN, "-f %s: cannot open it for reading: %s", file, st[1] ? strerror((int)st[1]) : "unknown error");
  PetscCheck(st[0] != -4, comm, PETSC_ERR_FILE_UNEXPECTED, "-f %s: empty file (expected a Matrix Market or PETSc binary matrix)", file);
  PetscCheck(st[0] != -5, comm, PETSC_ERR_FILE_UNEXPECTED, "-f %s: gzip-compressed but not Matrix Market inside: gunzip a PETSc binary file first", file);
  PetscCheck(st[0] != -6, comm, PETSC_ERR_FILE_UNEXPECTED, "-f %s: neither Matrix Market (no %%%%MatrixMarket banner) nor a PETSc binary matrix (no class id %d in its first %d bytes: a PETSc of another integer size, or not a matrix)", file, MAT_FILE_CLASSID, (int)sizeof(PetscInt));
  if (!st[0]) { /* the header against the file's size: rows, their lengths, the column indices and the values */
    const long long M = hd[1], N = hd[2], nz = hd[3];
    long long       need;
    PetscCheck(M >= 0 && N >= 0, comm, PETSC_ERR_FILE_UNEXPECTED, "-f %s: PETSc binary matrix header gives %lld x %lld", file, M, N);
    PetscCheck(nz >= 0, comm, PETSC_ERR_FILE_UNEXPECTED, "-f %s: a PETSc binary matrix in a dense or other special format (nonzeros %lld), which MATAIJ does not load", file, nz);
    need = (long long)sizeof(PetscInt) * (4 + M + nz) + (long long)sizeof(PetscScalar) * nz;
    PetscCheck(hd[4] >= need, comm, PETSC_ERR_FILE_UNEXPECTED, "-f %s: PETSc binary matrix of %lld x %lld with %lld nonzeros needs %lld bytes, the file has %lld (cut short?)", file, M, N, nz, need, hd[4]);
  }
  *mm = (PetscBool)(st[0] == 1);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Reads an input file, checked by CheckFile(), as MATAIJ; a PETSc binary file that MatLoad() does not read is an
   error that names it */
static PetscErrorCode ReadFile(MPI_Comm comm, const char *file, PetscBool mm, Mat *A)
{
  PetscFunctionBegin;
  if (mm) PetscCall(MatCSRKReadMatrixMarket(comm, file, A)); /* its errors name the file and the line */
  else {
    PetscViewer    v;
    PetscErrorCode ierr;
    const char    *text = NULL;
    PetscCall(PetscViewerBinaryOpen(comm, file, FILE_MODE_READ, &v));
    PetscCall(MatCreate(comm, A));
    PetscCall(MatSetType(*A, MATAIJ));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = MatLoad(*A, v);
    PetscCall(PetscPopErrorHandler());
    if (ierr) PetscCall(PetscErrorMessage(ierr, &text, NULL));
    PetscCheck(!ierr, comm, PETSC_ERR_FILE_UNEXPECTED, "-f %s: MatLoad() cannot read it as a PETSc binary matrix: %s", file, text ? text : "unknown error");
    PetscCall(PetscViewerDestroy(&v));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Takes input 'in' as MATAIJ (the file read before the measurements, or the problem generated now) and names it (file
   name without directory and extension, or problem-n) */
static PetscErrorCode LoadInput(MPI_Comm comm, Input *in, PetscInt seed, Mat *A, char *name, size_t len)
{
  PetscFunctionBegin;
  if (in->file[0]) {
    const char *base = strrchr(in->file, '/');
    char       *dot;
    PetscCheck(in->A, comm, PETSC_ERR_PLIB, "-f %s: not read before the measurements", in->file);
    *A    = in->A;
    in->A = NULL;
    PetscCall(PetscStrncpy(name, base ? base + 1 : in->file, len));
    if ((dot = strrchr(name, '.')) && !strcmp(dot, ".gz")) *dot = 0;
    if ((dot = strrchr(name, '.')) && (!strcmp(dot, ".mtx") || !strcmp(dot, ".bin") || !strcmp(dot, ".petsc") || !strcmp(dot, ".dat"))) *dot = 0;
  } else {
    PetscCall(MatCSRKCreateProblem(comm, in->problem, in->n, 1, A));
    PetscCall(PetscSNPrintf(name, len, "%s-n%" PetscInt_FMT, in->problem, in->n));
  }
  if (seed >= 0) {
    Mat      P;
    PetscInt M, N;
    size_t   l;
    PetscCall(MatGetSize(*A, &M, &N));
    PetscCheck(M == N, comm, PETSC_ERR_ARG_WRONG, "-permute needs a square matrix; %s is %" PetscInt_FMT " x %" PetscInt_FMT, name, M, N);
    PetscCall(MatCSRKPermuteRandom(*A, seed, &P));
    PetscCall(MatDestroy(A));
    *A = P;
    PetscCall(PetscStrlen(name, &l));
    PetscCall(PetscSNPrintf(name + l, len - l, "+perm%" PetscInt_FMT, seed));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ApplySettings(Mat C, const TypeEntry *e)
{
  PetscFunctionBegin;
  if (e->set_k) PetscCall(MatCSRKSetLevels(C, e->k));
  if (e->set_ord) PetscCall(MatCSRKSetOrdering(C, e->ordering));
  if (e->set_kern) PetscCall(MatCSRKSetCUDAKernel(C, e->kernel));
  if (e->set_thr) PetscCall(MatCSRKSetNumThreads(C, e->threads ? e->threads : PETSC_DECIDE));
  for (PetscInt f = 0; f < MAT_CSRK_NUM_FEATURES; f++)
    if (e->set_feature[f]) PetscCall(MatCSRKSetFeature(C, (MatCSRKFeature)f, (PetscBool)e->feature[f]));
  if (e->set_sr || e->set_ssr) {
    PetscInt sr, ssr;
    PetscCall(MatCSRKGetSizes(C, &sr, &ssr));
    if (e->set_sr) sr = e->sr ? e->sr : PETSC_DECIDE;
    if (e->set_ssr) ssr = e->ssr ? e->ssr : PETSC_DECIDE;
    PetscCall(MatCSRKSetSizes(C, sr, ssr));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Median of t[0..n), which is sorted in place */
static PetscErrorCode Median(PetscInt n, PetscReal *t, PetscLogDouble *med)
{
  PetscFunctionBegin;
  PetscCall(PetscSortReal(n, t));
  *med = (n % 2) ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Time of one MatMult alone: barrier, wall clock, slowest rank */
static PetscErrorCode TimedMult(Mat C, Vec x, Vec y, PetscBool device, PetscLogDouble *dt)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)C);
  double   t0, t;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Barrier(comm));
  t0 = MPI_Wtime();
  PetscCall(MatMult(C, x, y));
  PetscCall(DeviceSync(device));
  t = MPI_Wtime() - t0;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm));
  *dt = t;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* All measurements of one type on matrix A; xref: the input vector, b = A * ones */
static PetscErrorCode MeasureType(Mat A, const TypeEntry *e, Vec xref, Vec bref, PetscInt warmup, PetscInt reps, PetscBool solve, PetscReal rtol, Result *r)
{
  MPI_Comm       comm = PetscObjectComm((PetscObject)A);
  Mat            C;
  Vec            x, y;
  PetscReal     *t;
  PetscLogDouble tfirst;
  const PetscInt nref = PetscMax(4, reps / 5); /* pairs of value refreshes: a refresh costs about a product */
  double         t0, tconv;
  PetscErrorCode (*getinfo)(Mat, MatCSRKInfo *) = NULL;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(r, sizeof(*r)));
  r->cg_its = -1;

  /* set-up: conversion (with the settings) and first product, the vectors made in between are not counted */
  PetscCallMPI(MPI_Barrier(comm));
  t0 = MPI_Wtime();
  {
    PetscBool sellgpu;
    /* PETSc converts aij to sellcuda only through MatConvert_Basic (entry by entry): go through sell, as a user would */
    PetscCall(PetscStrbeginswith(e->type, "sell", &sellgpu));
    sellgpu = (PetscBool)(sellgpu && e->device);
    if (sellgpu) {
      PetscCall(MatConvert(A, MATSELL, MAT_INITIAL_MATRIX, &C));
      PetscCall(MatConvert(C, e->type, MAT_INPLACE_MATRIX, &C));
    } else PetscCall(MatConvert(A, e->type, MAT_INITIAL_MATRIX, &C));
  }
  PetscCall(ApplySettings(C, e));
  tconv = MPI_Wtime() - t0;
  PetscCall(PetscObjectQueryFunction((PetscObject)C, "MatCSRKGetInfo_C", &getinfo));
  r->iscsrk = (PetscBool)(getinfo != NULL);
  PetscCheck(r->iscsrk || !e->settings, comm, PETSC_ERR_ARG_WRONG, "-types entry %s: settings apply to CSR-k types only, %s is not one", e->label, e->type);
  PetscCall(MatCreateVecs(C, &x, &y));
  PetscCall(VecCopy(xref, x));
  PetscCall(DeviceSync(e->device));
  PetscCall(TimedMult(C, x, y, e->device, &tfirst));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &tconv, 1, MPI_DOUBLE, MPI_MAX, comm));

  /* steady products */
  for (PetscInt i = 0; i < warmup; i++) PetscCall(MatMult(C, x, y));
  PetscCall(DeviceSync(e->device));
  PetscCall(PetscMalloc1(PetscMax(reps, 2 * nref), &t));
  for (PetscInt i = 0; i < reps; i++) {
    PetscLogDouble dt;
    PetscCall(TimedMult(C, x, y, e->device, &dt));
    t[i] = (PetscReal)dt;
  }
  PetscCall(Median(reps, t, &r->med));
  r->min   = t[0];
  r->max   = t[reps - 1];
  r->setup = tconv + tfirst - r->med;

  /* value refresh: PETSc's MatScale() skips a = 1 (no state change), so the values are scaled by 2 and back by 0.5,
     both exact; only the product after each scaling is timed (the scaling itself costs the same for every type).
     The median of these products, less the steady median, is the refresh */
  for (PetscInt i = 0; i < 2 * nref; i++) {
    PetscLogDouble dt;
    PetscCall(MatScale(C, (i % 2) ? 0.5 : 2.0));
    PetscCall(DeviceSync(e->device));
    PetscCall(TimedMult(C, x, y, e->device, &dt));
    t[i] = (PetscReal)dt;
  }
  PetscCall(Median(2 * nref, t, &r->refresh));
  r->refresh -= r->med;
  PetscCall(PetscFree(t));
  if (r->iscsrk) PetscCall(MatCSRKGetInfo(C, &r->info));

  if (solve) {
    KSP       ksp;
    PC        pc;
    Vec       b, u;
    PetscReal rt, abstol, dtol;
    PetscInt  maxits;
    double    ts;

    PetscCall(VecDuplicate(x, &u));
    PetscCall(VecDuplicate(y, &b));
    PetscCall(VecCopy(bref, b));
    PetscCall(VecZeroEntries(u));
    PetscCall(KSPCreate(comm, &ksp));
    PetscCall(KSPSetOperators(ksp, C, C));
    PetscCall(KSPSetType(ksp, KSPCG));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCJACOBI));
    PetscCall(KSPGetTolerances(ksp, &rt, &abstol, &dtol, &maxits));
    PetscCall(KSPSetTolerances(ksp, rtol, abstol, dtol, 10000));
    PetscCall(KSPSetUp(ksp));
    PetscCallMPI(MPI_Barrier(comm));
    t0 = MPI_Wtime();
    PetscCall(KSPSolve(ksp, b, u));
    PetscCall(DeviceSync(e->device));
    ts = MPI_Wtime() - t0;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ts, 1, MPI_DOUBLE, MPI_MAX, comm));
    r->cg_s = ts;
    PetscCall(KSPGetIterationNumber(ksp, &r->cg_its));
    PetscCall(KSPGetConvergedReason(ksp, &r->reason));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&u));
    PetscCall(VecDestroy(&b));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A CSV field: quoted when it holds a comma or a quote */
static PetscErrorCode CSVField(MPI_Comm comm, FILE *fp, const char *s)
{
  PetscFunctionBegin;
  if (!strpbrk(s, ",\"")) PetscCall(PetscFPrintf(comm, fp, "%s,", s));
  else {
    PetscCall(PetscFPrintf(comm, fp, "\""));
    for (const char *p = s; *p; p++) {
      if (*p == '"') PetscCall(PetscFPrintf(comm, fp, "\"\""));
      else PetscCall(PetscFPrintf(comm, fp, "%c", *p));
    }
    PetscCall(PetscFPrintf(comm, fp, "\","));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  MPI_Comm       comm;
  PetscMPIInt    size, rank;
  char          *strs[MAX_ENTRIES > MAX_MATRICES ? MAX_ENTRIES : MAX_MATRICES];
  char           csv[PETSC_MAX_PATH_LEN] = "";
  TypeEntry      entries[MAX_ENTRIES + 1];
  Input          inputs[MAX_MATRICES];
  Result         res[MAX_ENTRIES + 1];
  PetscInt       nentries = 0, ninputs = 0, nstr, nn = MAX_MATRICES, nval[MAX_MATRICES], seed = -1, warmup = 5, reps = 50, stream_mb = 256, ref = -1;
  char           reftype[64] = MATAIJ;
  PetscBool      set, solve = PETSC_TRUE, stream = PETSC_TRUE, hascsv;
  PetscReal      rtol = 1e-6;
  PetscLogDouble stream_gbs = 0;
  int            maxthreads = 1;
  size_t         labw = 4;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MatCSRKRegister());
  comm = PETSC_COMM_WORLD;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
#if defined(_OPENMP)
  /* the threads of the CSR-k kernels by default: one per rank, unless OMP_NUM_THREADS asks for more */
  if (getenv("OMP_NUM_THREADS")) maxthreads = omp_get_max_threads();
#endif

  PetscCall(PetscOptionsGetInt(NULL, NULL, "-permute", &seed, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-warmup", &warmup, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-reps", &reps, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-solve", &solve, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-rtol", &rtol, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-stream", &stream, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-stream_mb", &stream_mb, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-o", csv, sizeof(csv), &hascsv));
  PetscCheck(warmup >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-warmup must be >= 0, not %" PetscInt_FMT, warmup);
  PetscCheck(reps >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-reps must be >= 1, not %" PetscInt_FMT, reps);
  PetscCheck(!hascsv || csv[0], comm, PETSC_ERR_ARG_WRONG, "-o needs a file name");

  /* the inputs: files, then generated problems */
  nstr = MAX_MATRICES;
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-f", strs, &nstr, &set));
  for (PetscInt i = 0; i < nstr; i++) {
    PetscCall(PetscMemzero(&inputs[ninputs], sizeof(Input)));
    PetscCall(PetscStrncpy(inputs[ninputs++].file, strs[i], PETSC_MAX_PATH_LEN));
    PetscCall(PetscFree(strs[i]));
  }
  nstr = MAX_MATRICES - ninputs;
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-problem", strs, &nstr, &set));
  if (!set && !ninputs) {
    PetscCall(PetscStrallocpy("lap3d7", &strs[0]));
    nstr = 1;
  }
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-n", nval, &nn, &set));
  if (!set) nn = 0;
  PetscCheck(nn <= 1 || nn == nstr, comm, PETSC_ERR_ARG_WRONG, "-n takes one size for all problems or one per problem (%" PetscInt_FMT " problems, %" PetscInt_FMT " sizes)", nstr, nn);
  for (PetscInt i = 0; i < nstr; i++) {
    Input *in = &inputs[ninputs++];
    PetscCall(PetscMemzero(in, sizeof(Input)));
    PetscCall(PetscStrncpy(in->problem, strs[i], sizeof(in->problem)));
    PetscCall(PetscFree(strs[i]));
    if (nn) in->n = nval[nn == 1 ? 0 : i];
    else if (!strcmp(in->problem, "lap2d5")) in->n = 1024;
    else if (!strcmp(in->problem, "lap3d7")) in->n = 100;
    else if (!strcmp(in->problem, "lap3d27")) in->n = 64;
    else if (!strcmp(in->problem, "elasticity3d")) in->n = 40;
    else if (!strcmp(in->problem, "fem3d")) in->n = 80;
    else if (!strcmp(in->problem, "femelast3d")) in->n = 40;
    else in->n = 1000000;
  }

  /* every input is checked before anything is measured (the STREAM triad included): each file exists, is readable,
     not empty and of a known kind (and is read below, after the types), problem names exist (a tiny instance is made) */
  for (PetscInt m = 0; m < ninputs; m++) {
    if (inputs[m].file[0]) PetscCall(CheckFile(comm, inputs[m].file, &inputs[m].mm));
    else {
      Mat T;
      PetscCall(MatCSRKCreateProblem(comm, inputs[m].problem, 8, 1, &T));
      PetscCall(MatDestroy(&T));
    }
  }

  /* the types: an entry of -types that is not a registered type is an error (a typo, or a type this PETSc or this
     build lacks); of the default list, the unregistered GPU types are dropped with a note. The reference (aij, or
     -ref) is added when not asked for */
  PetscCall(PetscOptionsGetString(NULL, NULL, "-ref", reftype, sizeof(reftype), NULL));
  nstr = MAX_ENTRIES;
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-types", strs, &nstr, &set));
  if (!set) {
    const char *def[] = {"aij", "sell", "csrk", "aijcusparse", "csrkcuda"};
    nstr              = PetscDefined(HAVE_CUDA) ? 5 : 3;
    for (PetscInt i = 0; i < nstr; i++) PetscCall(PetscStrallocpy(def[i], &strs[i]));
  }
  for (PetscInt i = 0; i < nstr; i++) {
    TypeEntry e;
    PetscBool ok = PETSC_FALSE, iscsrk = PETSC_FALSE;
    PetscCall(ParseEntry(comm, strs[i], &e));
    PetscCall(PetscFree(strs[i]));
    PetscCall(TypeRegistered(comm, e.type, &ok, &iscsrk));
    PetscCheck(!ok || iscsrk || !e.settings, comm, PETSC_ERR_ARG_WRONG, "-types entry %s: settings apply to CSR-k types only, %s is not one", e.label, e.type);
    PetscCheck(ok || !set, comm, PETSC_ERR_ARG_UNKNOWN_TYPE, "-types entry %s: %s is not a matrix type registered in this PETSc (a typo? GPU types need a PETSc built with CUDA)", e.label, e.type);
    if (!ok) {
      PetscCall(PetscPrintf(comm, "Note: matrix type %s is not registered in this PETSc: %s skipped\n", e.type, e.label));
      continue;
    }
    if (ref < 0 && !e.settings && !strcmp(e.type, reftype)) ref = nentries;
    entries[nentries++] = e;
  }
  if (ref < 0) {
    PetscCall(ParseEntry(comm, reftype, &entries[nentries]));
    entries[nentries].reference = PETSC_TRUE;
    ref                         = nentries++;
  }
  for (PetscInt t = 0; t < nentries; t++) {
    size_t l;
    PetscCall(PetscStrlen(entries[t].label, &l));
    labw = PetscMax(labw, l + (entries[t].reference ? 6 : 0));
  }

  /* the files are read now, each kept until its turn: one that does not load stops the run, named, before the STREAM
     triad or any product is measured */
  for (PetscInt m = 0; m < ninputs; m++)
    if (inputs[m].file[0]) PetscCall(ReadFile(comm, inputs[m].file, inputs[m].mm, &inputs[m].A));

  { /* a benchmark of the kernels: the structure from the first product unless asked otherwise (the default set-up
       budget would time AIJ's kernel in short runs; PETSc's own applications show what the budget gives); set after
       the checks, so that a run they stop does not report it as an unused option */
    PetscBool set;
    PetscCall(PetscOptionsHasName(NULL, NULL, "-mat_csrk_setup", &set));
    if (!set) PetscCall(PetscOptionsSetValue(NULL, "-mat_csrk_setup", "eager"));
  }

  if (stream) {
    PetscCall(StreamTriad(comm, stream_mb, maxthreads, &stream_gbs));
    PetscCall(PetscPrintf(comm, "STREAM triad: %.1f GB/s (%d rank%s x %d OpenMP thread%s, 3 arrays of %" PetscInt_FMT " MiB per rank, best of 5)\n", stream_gbs, size, size > 1 ? "s" : "", maxthreads,
                          maxthreads > 1 ? "s" : "", stream_mb));
  }

  for (PetscInt m = 0; m < ninputs; m++) {
    Mat            A;
    Vec            xref, ones, bref;
    PetscRandom    rnd;
    MatInfo        minfo;
    PetscInt       M, N;
    PetscLogDouble nnz, flops, bytes, aijbytes;
    char           name[PETSC_MAX_PATH_LEN];
    PetscBool      dosolve;

    PetscCall(LoadInput(comm, &inputs[m], seed, &A, name, sizeof(name)));
    PetscCall(MatGetSize(A, &M, &N));
    PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &minfo));
    nnz      = minfo.nz_used;
    flops    = 2.0 * nnz;
    bytes    = 12.0 * nnz + 20.0 * M;
    aijbytes = nnz * (sizeof(PetscInt) + sizeof(PetscScalar)) + (M + size) * (PetscLogDouble)sizeof(PetscInt);
    dosolve  = (PetscBool)(solve && M == N);
    PetscCall(PetscFPrintf(comm, PETSC_STDERR, "[bench %" PetscInt_FMT "/%" PetscInt_FMT "] %s: %" PetscInt_FMT " x %" PetscInt_FMT ", %.0f nonzeros\n", m + 1, ninputs, name, M, N, nnz));

    /* the same input vector for every type; b = A * ones so that CG converges to ones */
    PetscCall(MatCreateVecs(A, &xref, &bref));
    PetscCall(VecDuplicate(xref, &ones));
    PetscCall(PetscRandomCreate(comm, &rnd));
    PetscCall(PetscRandomSetInterval(rnd, -1.0, 1.0));
    PetscCall(PetscRandomSetSeed(rnd, 12345));
    PetscCall(PetscRandomSeed(rnd));
    PetscCall(VecSetRandom(xref, rnd));
    PetscCall(PetscRandomDestroy(&rnd));
    PetscCall(VecSet(ones, 1.0));
    PetscCall(MatMult(A, ones, bref));

    /* the reference first, so that its numbers are at hand for the progress lines */
    for (PetscInt s = -1; s < nentries; s++) {
      const PetscInt   t = s < 0 ? ref : s;
      const TypeEntry *e = &entries[t];
      if (s >= 0 && t == ref) continue;
      PetscCall(MeasureType(A, e, xref, bref, warmup, reps, dosolve, rtol, &res[t]));
      PetscCall(PetscFPrintf(comm, PETSC_STDERR, "[bench %" PetscInt_FMT "/%" PetscInt_FMT "] %s %s: set-up %.3g s, MatMult median %.1f us (%.2fx %s)", m + 1, ninputs, name, e->label, res[t].setup, 1e6 * res[t].med,
                             res[ref].med / res[t].med, reftype));
      if (dosolve) PetscCall(PetscFPrintf(comm, PETSC_STDERR, ", CG %" PetscInt_FMT " its %.3g s", res[t].cg_its, res[t].cg_s));
      PetscCall(PetscFPrintf(comm, PETSC_STDERR, "\n"));
    }

    /* the table */
    PetscCall(PetscPrintf(comm, "\nMatrix %s: %" PetscInt_FMT " rows", name, M));
    if (N != M) PetscCall(PetscPrintf(comm, " x %" PetscInt_FMT " columns", N));
    PetscCall(PetscPrintf(comm, ", %.0f nonzeros, %.2f nnz/row, %d MPI rank%s, %d OpenMP thread%s per rank", nnz, nnz / PetscMax(M, 1), size, size > 1 ? "s" : "", maxthreads, maxthreads > 1 ? "s" : ""));
    if (stream) PetscCall(PetscPrintf(comm, ", STREAM %.1f GB/s\n", stream_gbs));
    else PetscCall(PetscPrintf(comm, ", STREAM not measured\n"));
    PetscCall(PetscPrintf(comm, "MatMult: %.0f flops (2 nnz), %.3g MB modelled traffic (12 nnz + 20 rows bytes); %" PetscInt_FMT " timed after %" PetscInt_FMT " warm-up, slowest rank\n", flops, bytes / 1e6, reps, warmup));
    PetscCall(PetscPrintf(comm, "%-*s %9s %7s %7s %10s %10s %10s %7s %7s %6s %6s", (int)labw, "type", "setup s", "setup", "refresh", "median us", "min us", "max us", "GFLOP/s", "GB/s", "STREAM", reftype[0] == 'a' && reftype[1] == 'i' && reftype[2] == 'j' && !reftype[3] ? "x aij" : "x ref"));
    if (dosolve) PetscCall(PetscPrintf(comm, " %7s %9s", "CG its", "CG s"));
    PetscCall(PetscPrintf(comm, "\n%-*s %9s %7s %7s %10s %10s %10s %7s %7s %6s %6s", (int)labw, "", "", "mults", "mults", "", "", "", "", "", "", ""));
    PetscCall(PetscPrintf(comm, "\n"));
    for (PetscInt t = 0; t < nentries; t++) {
      const Result *r = &res[t];
      char          lab[300], frac[16] = "-";
      PetscCall(PetscSNPrintf(lab, sizeof(lab), "%s%s", entries[t].label, entries[t].reference ? " (ref)" : ""));
      if (stream) PetscCall(PetscSNPrintf(frac, sizeof(frac), "%.0f%%", 100.0 * bytes / r->med / 1e9 / stream_gbs));
      PetscCall(PetscPrintf(comm, "%-*s %9.4f %7.1f %7.2f %10.1f %10.1f %10.1f %7.2f %7.1f %6s %6.2f", (int)labw, lab, r->setup, r->setup / r->med, r->refresh / r->med, 1e6 * r->med, 1e6 * r->min, 1e6 * r->max, flops / r->med / 1e9,
                            bytes / r->med / 1e9, frac, res[ref].med / r->med));
      if (dosolve) PetscCall(PetscPrintf(comm, " %7" PetscInt_FMT "%s %9.4f", r->cg_its, r->reason > 0 ? "" : "!", r->cg_s));
      PetscCall(PetscPrintf(comm, "\n"));
    }
    PetscCall(PetscPrintf(comm, "(set-up: MatConvert + first MatMult - one MatMult; refresh: MatMult after a same-pattern value change - one MatMult;\n"
                                " x aij: aij median / this median; STREAM: GB/s / STREAM triad, above 100%% when the matrix stays in cache;\n"
                                " aij and sell MatMult are PETSc's one-thread-per-rank kernels)\n"));
    if (solve && M != N) PetscCall(PetscPrintf(comm, "CG skipped: the matrix is not square\n"));
    if (dosolve) {
      PetscReal bnorm;
      PetscCall(VecNorm(bref, NORM_2, &bnorm));
      if (bnorm == 0.0) PetscCall(PetscPrintf(comm, "Note: b = A * ones is 0 (zero row sums), so CG stops at once\n"));
    }

    /* structure of each CSR-k entry, and the checks */
    for (PetscInt t = 0; t < nentries; t++) {
      const MatCSRKInfo *i = &res[t].info;
      if (!res[t].iscsrk) continue;
      PetscCall(PetscPrintf(comm, "%s: k %" PetscInt_FMT, entries[t].label, i->k));
      if (i->k >= 2) PetscCall(PetscPrintf(comm, ", %" PetscInt_FMT " super-rows of ~%" PetscInt_FMT " rows", i->nsr, i->sr_size));
      if (i->k == 3) PetscCall(PetscPrintf(comm, ", %" PetscInt_FMT " super-super-rows of ~%" PetscInt_FMT, i->nssr, i->ssr_size));
      PetscCall(PetscPrintf(comm, ", ordering %s, bandwidth %" PetscInt_FMT " -> %" PetscInt_FMT ", build %.3g s, +%.2f MB (%.0f%% of AIJ), %" PetscInt_FMT " thread%s, %" PetscInt_FMT " build%s %" PetscInt_FMT " refreshes\n",
                            MatCSRKOrderings[i->ordering], i->bw_before, i->bw_after, i->build_time, i->bytes / 1048576.0, 100.0 * i->bytes / aijbytes, i->nthreads, i->nthreads == 1 ? "" : "s", i->nbuilds,
                            i->nbuilds == 1 ? "," : "s,", i->nrefresh));
      if (i->nthreads > 1)
        PetscCall(PetscPrintf(comm, "note: %s ran %" PetscInt_FMT " OpenMP threads per rank, aij and sell one: not the same cores; the equal-cores comparison is aij on %" PetscInt_FMT " ranks (mpiexec -n %" PetscInt_FMT " ... -types aij)\n", entries[t].label, i->nthreads,
                              i->nthreads * size, i->nthreads * size));
      if (i->nbuilds != 1) PetscCall(PetscPrintf(comm, "WARNING: %s built its structure %" PetscInt_FMT " times: the value refreshes should not rebuild it\n", entries[t].label, i->nbuilds));
      if (i->nthreads > 1)
        PetscCall(PetscPrintf(comm, "NOTE: %s ran %" PetscInt_FMT " threads per rank against one for aij and sell: not an equal-cores comparison; that one is aij on %" PetscInt_FMT " ranks (mpiexec -n %" PetscInt_FMT ")\n", entries[t].label, i->nthreads, size * i->nthreads, size * i->nthreads));
    }
    for (PetscInt t = 0; t < nentries && dosolve; t++) {
      if (res[t].reason <= 0) PetscCall(PetscPrintf(comm, "WARNING: CG with %s did not converge (%s)\n", entries[t].label, KSPConvergedReasons[res[t].reason]));
      if (res[t].cg_its != res[ref].cg_its) PetscCall(PetscPrintf(comm, "WARNING: CG with %s took %" PetscInt_FMT " iterations, aij %" PetscInt_FMT "\n", entries[t].label, res[t].cg_its, res[ref].cg_its));
    }

    /* one CSV row per requested type, appended after each matrix so that a long run keeps what it measured */
    if (hascsv) {
      FILE *fp;
      long  pos = 0;
      PetscCall(PetscFOpen(comm, csv, "a", &fp));
      if (!rank) {
        PetscCheck(!fseek(fp, 0, SEEK_END), PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Cannot seek in %s", csv);
        pos = ftell(fp);
      }
      if (!pos)
        PetscCall(PetscFPrintf(comm, fp, "matrix,rows,nnz,ranks,threads,type,setup_s,setup_mults,refresh_mults,mult_median_s,mult_min_s,mult_max_s,gflops,model_bytes,gbs,stream_gbs,frac_stream,speedup_vs_aij,cg_its,cg_s\n"));
      for (PetscInt t = 0; t < nentries; t++) {
        const Result *r = &res[t];
        if (entries[t].reference) continue;
        PetscCall(CSVField(comm, fp, name));
        PetscCall(PetscFPrintf(comm, fp, "%" PetscInt_FMT ",%.0f,%d,%" PetscInt_FMT ",", M, nnz, size, r->iscsrk ? r->info.nthreads : 1));
        PetscCall(CSVField(comm, fp, entries[t].label));
        PetscCall(PetscFPrintf(comm, fp, "%.6e,%.4f,%.4f,%.6e,%.6e,%.6e,%.4f,%.0f,%.4f,", r->setup, r->setup / r->med, r->refresh / r->med, r->med, r->min, r->max, flops / r->med / 1e9, bytes, bytes / r->med / 1e9));
        if (stream) PetscCall(PetscFPrintf(comm, fp, "%.4f,%.4f,", stream_gbs, bytes / r->med / 1e9 / stream_gbs));
        else PetscCall(PetscFPrintf(comm, fp, ",,"));
        PetscCall(PetscFPrintf(comm, fp, "%.4f,", res[ref].med / r->med));
        if (dosolve) PetscCall(PetscFPrintf(comm, fp, "%" PetscInt_FMT ",%.6e\n", r->cg_its, r->cg_s));
        else PetscCall(PetscFPrintf(comm, fp, ",\n"));
      }
      PetscCall(PetscFClose(comm, fp));
    }

    PetscCall(VecDestroy(&xref));
    PetscCall(VecDestroy(&ones));
    PetscCall(VecDestroy(&bref));
    PetscCall(MatDestroy(&A));
  }
  PetscCall(PetscFinalize());
  return 0;
}
