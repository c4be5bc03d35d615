/*
   libFuzzer target for the Matrix Market reader, MatCSRKReadMatrixMarket() (src/mat/utils/mmread.c).

   Built by `make fuzz` with clang -fsanitize=fuzzer,address,undefined; mmread.c is compiled into the fuzzer, PETSc and
   MPI are linked as they are. Every input is written to a temporary file (the reader takes a file name; gzip input is
   detected from the content, so the fuzzer reaches the zlib path too) and read on PETSC_COMM_SELF with errors
   returned, not printed. A read must either succeed with an assembled matrix of the declared size or fail with a
   PETSc error and *A == NULL; anything else aborts (and so is a finding).

   Environment:
     MMFUZZ_MAX_DIM  (default 0: none) inputs whose size line declares more rows are skipped. The reader itself
                     refuses sizes that the entries do not justify (more than max(2^20, 64 x entries) rows or
                     columns) before allocating anything proportional to them, so no bound is needed; a positive
                     value only saves the time of building matrices of up to 2^20 empty rows.
     MMFUZZ_VERBOSE  print the PETSc error message of every rejected input (for reproducing a single file).
*/
#include <petsccsrkutil.h>
#include <ctype.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <sanitizer/lsan_interface.h>

static char      fname[PETSC_MAX_PATH_LEN];
static long long maxdim  = 0;
static int       verbose = 0;

static void Cleanup(void)
{
  if (fname[0]) unlink(fname);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  /* PETSc must not see libFuzzer's arguments, and must not install its own SIGSEGV/SIGFPE handlers over ASan's */
  static char  *pargv[] = {(char *)"mmread_fuzz", (char *)"-no_signal_handler", (char *)"-skip_petscrc", NULL};
  static char **pv      = pargv;
  int           pc      = 3, fd;
  const char   *tmp     = getenv("TMPDIR"), *s;

  (void)argc;
  (void)argv;
  if ((s = getenv("MMFUZZ_MAX_DIM"))) maxdim = atoll(s);
  if ((s = getenv("MMFUZZ_VERBOSE"))) verbose = atoi(s);
  /* what MPI_Init allocates here (or leaks) is not the reader's: hide it from the fuzzer's leak checks */
  __lsan_disable();
  if (PetscInitialize(&pc, &pv, NULL, NULL)) abort();
  __lsan_enable();
  snprintf(fname, sizeof(fname), "%s/mmread_fuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  fd = mkstemp(fname);
  if (fd < 0) {
    perror("mmread_fuzz: mkstemp");
    abort();
  }
  close(fd);
  atexit(Cleanup);
  return 0;
}

/* The declared rows and columns, read loosely (first non-comment, non-blank line after the first line); -1 if none */
static void DeclaredSize(const uint8_t *data, size_t size, long long *M, long long *N)
{
  size_t pos = 0;
  int    line = 0;

  *M = *N = -1;
  while (pos < size) {
    size_t end = pos, k = pos;

    while (end < size && data[end] != '\n') end++;
    while (k < end && isspace(data[k])) k++;
    if (line > 0 && k < end && data[k] != '%') {
      char buf[128];
      size_t n = end - k < sizeof(buf) - 1 ? end - k : sizeof(buf) - 1;

      memcpy(buf, data + k, n);
      buf[n] = '\0';
      if (sscanf(buf, "%lld %lld", M, N) < 2) *M = *N = -1;
      return;
    }
    line++;
    pos = end + 1;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  Mat            A = NULL;
  PetscErrorCode ierr;
  FILE          *f;

  if (maxdim > 0) {
    long long M, N;

    if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
      /* gzip: look at the start of the decompressed text (loose: a size line after 64 KB of comments is not seen) */
      static unsigned char head[1 << 16];
      z_stream             z;
      int                  zr;

      memset(&z, 0, sizeof(z));
      if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) abort();
      z.next_in   = (unsigned char *)data;
      z.avail_in  = (uInt)size;
      z.next_out  = head;
      z.avail_out = sizeof(head);
      do zr = inflate(&z, Z_NO_FLUSH);
      while (zr == Z_OK && z.avail_out && z.avail_in);
      DeclaredSize(head, sizeof(head) - z.avail_out, &M, &N);
      inflateEnd(&z);
    } else DeclaredSize(data, size, &M, &N);
    if (M > maxdim) return -1; /* -1: not added to the corpus */
  }
  f = fopen(fname, "wb");
  if (!f) abort();
  if (size && fwrite(data, 1, size, f) != size) abort();
  if (fclose(f)) abort();

  if (PetscPushErrorHandler(PetscReturnErrorHandler, NULL)) abort();
  ierr = MatCSRKReadMatrixMarket(PETSC_COMM_SELF, fname, &A);
  if (PetscPopErrorHandler()) abort();
  if (ierr) {
    if (A) {
      fprintf(stderr, "mmread_fuzz: error %d returned but the matrix pointer was set\n", (int)ierr);
      abort();
    }
    if (verbose) {
      const char *text = NULL, *specific = NULL;
      void       *sp   = &specific; /* char ** or const char ** depending on the PETSc version */

      PetscErrorMessage(ierr, &text, sp);
      fprintf(stderr, "mmread_fuzz: rejected, error %d (%s): %s\n", (int)ierr, text ? text : "?", specific ? specific : "");
    }
  } else {
    PetscInt  M, N;
    PetscBool assembled;

    if (!A) {
      fprintf(stderr, "mmread_fuzz: success but no matrix\n");
      abort();
    }
    if (MatGetSize(A, &M, &N) || MatAssembled(A, &assembled) || !assembled || M <= 0 || N <= 0) abort();
    if (verbose) fprintf(stderr, "mmread_fuzz: read a %" PetscInt_FMT " x %" PetscInt_FMT " matrix\n", M, N);
    if (MatDestroy(&A)) abort();
  }
  return 0;
}
