/*
   Matrix Market reader for test and benchmark inputs.

   Every rank reads the whole file (plain or gzip-compressed, through zlib) and keeps only the entries of the rows it
   will own, so no communication is needed until the matrix is built. Input is treated as untrusted: every malformed
   file gives a PETSc error naming the file and line, and no buffer is ever sized from a count in the header. Memory
   proportional to the number of rows (the per-row counts, then the matrix itself) is allocated only once every entry
   has been read, and only for sizes that the entries justify: at most max(MM_MIN_DIM_LIMIT, MM_DIM_PER_ENTRY x entries)
   rows and columns, unless -mm_max_dim sets another limit.
*/
#include <petsccsrkutil.h>
#include <zlib.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#if PETSC_VERSION_LT(3, 19, 0) && !defined(PETSC_SUCCESS)
  #define PETSC_SUCCESS 0
#endif

#define MM_MAX_LINE 4096    /* longest accepted data line; the format itself limits lines to 1024 characters */
#define MM_CHUNK    65536   /* bytes taken from zlib per gzread() */
#define MM_MIN_DIM_LIMIT ((PetscInt64)1 << 20) /* rows or columns always accepted, whatever the entries */
#define MM_DIM_PER_ENTRY 64                    /* beyond that, rows or columns accepted per entry of the file */
#define MM_AT       "%s:%" PetscInt64_FMT ": "
#define MM_LOC(r)   (r)->fname, (r)->lineno

typedef enum {
  MM_REAL,
  MM_INTEGER,
  MM_PATTERN,
  MM_COMPLEX
} MMField;

typedef enum {
  MM_GENERAL,
  MM_SYMMETRIC,
  MM_SKEW,
  MM_HERMITIAN
} MMSymmetry;

typedef struct {
  gzFile      gz;
  const char *fname;
  char       *chunk; /* decompressed bytes not yet split into lines */
  size_t      clen, cpos;
  PetscBool   eof;
  PetscInt64  consumed; /* bytes handed out as lines so far: the file offset when the file is not compressed */
  PetscInt64  lineno;   /* 1-based number of the line in line[] */
  char       *line;     /* current line without its newline, NUL-terminated */
  PetscBool   cut;      /* line[] holds only the start of an over-long comment line */
} MMReader;

typedef struct {
  PetscInt64   M, N, nz; /* from the size line */
  PetscInt64   sizeline; /* its line number */
  MMField      field;
  MMSymmetry   sym;
  PetscInt     m, n, rstart, cstart; /* owned rows and diagonal-block columns of this rank */
  PetscCount   cnt, cap;             /* owned triplets stored / allocated */
  PetscInt    *ti, *tj;              /* local row, global column */
  PetscScalar *tv;
  PetscInt    *dnnz, *onnz; /* preallocation per local row, capped at the block widths (once the entries are read) */
  PetscCount  *rowcnt;      /* owned triplets per local row (rowcnt[i + 1]), duplicates included (idem) */
} MMData;

typedef enum {
  MM_TOK_OK,
  MM_TOK_MISSING,
  MM_TOK_BAD,
  MM_TOK_RANGE
} MMTok;

static const char *MMSkipSpace(const char *p)
{
  while (*p && isspace((unsigned char)*p)) p++;
  return p;
}

/* Blank lines and '%' comments may appear anywhere after the banner. */
static PetscBool MMSkippable(const char *line)
{
  const char *p = MMSkipSpace(line);
  return (*p == '\0' || *p == '%') ? PETSC_TRUE : PETSC_FALSE;
}

/* Copies the whitespace-delimited token at s into buf for error messages, shortened if it is long. */
static const char *MMTokenStr(const char *s, char buf[], size_t len)
{
  size_t k = 0;

  while (s[k] && !isspace((unsigned char)s[k]) && k + 4 < len) {
    buf[k] = s[k];
    k++;
  }
  if (s[k] && !isspace((unsigned char)s[k])) {
    strcpy(buf + k, "...");
  } else buf[k] = '\0';
  return buf;
}

static PetscBool MMEndOfField(const char *p)
{
  return (*p == '\0' || isspace((unsigned char)*p)) ? PETSC_TRUE : PETSC_FALSE;
}

/* Parses the next field of *p as a decimal integer; *tok is where the field starts (for messages). */
static MMTok MMNextInt(const char **p, const char **tok, long long *v)
{
  const char *s = MMSkipSpace(*p);
  char       *end;

  *tok = s;
  if (!*s) return MM_TOK_MISSING;
  errno = 0;
  *v    = strtoll(s, &end, 10);
  if (end == s || !MMEndOfField(end)) return MM_TOK_BAD; /* "x", "12abc", "1.5" */
  if (errno == ERANGE) return MM_TOK_RANGE;
  *p = end;
  return MM_TOK_OK;
}

/* As MMNextInt() for a floating-point field; overflow and inf/nan are MM_TOK_RANGE, underflow is accepted. */
static MMTok MMNextReal(const char **p, const char **tok, double *v)
{
  const char *s = MMSkipSpace(*p);
  char       *end;

  *tok = s;
  if (!*s) return MM_TOK_MISSING;
  errno = 0;
  *v    = strtod(s, &end);
  if (end == s || !MMEndOfField(end)) return MM_TOK_BAD;
  if (!isfinite(*v) || fabs(*v) > (double)PETSC_MAX_REAL) return MM_TOK_RANGE;
  *p = end;
  return MM_TOK_OK;
}

static PetscBool MMStrEqI(const char *a, const char *b)
{
  for (; *a && *b; a++, b++)
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return PETSC_FALSE;
  return (*a == *b) ? PETSC_TRUE : PETSC_FALSE;
}

/* a*b, saturated at ULLONG_MAX, so that bounds on the entry count cannot overflow */
static unsigned long long MMMulSat(unsigned long long a, unsigned long long b)
{
  if (a && b > ULLONG_MAX / a) return ULLONG_MAX;
  return a * b;
}

static PetscErrorCode MMReaderOpen(MMReader *r, const char fname[])
{
  PetscFunctionBegin;
  r->fname = fname;
  errno    = 0;
  r->gz    = gzopen(fname, "rb"); /* reads gzip and, transparently, uncompressed files */
  PetscCheck(r->gz, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s: cannot open Matrix Market file: %s", fname, errno ? strerror(errno) : "out of memory");
  (void)gzbuffer(r->gz, 1 << 17);
  PetscCall(PetscMalloc2(MM_CHUNK, &r->chunk, MM_MAX_LINE + 1, &r->line));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Safe to call on a reader that was never opened; check reports a failing gzclose() */
static PetscErrorCode MMReaderClose(MMReader *r, PetscBool check)
{
  int ret = Z_OK;

  PetscFunctionBegin;
  if (r->gz) ret = gzclose(r->gz);
  r->gz = NULL;
  PetscCall(PetscFree2(r->chunk, r->line));
  PetscCheck(!check || ret == Z_OK, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s: error closing the file (zlib error %d)", r->fname, ret);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   Reads the next line into r->line; *got is false at end of file. Lines are split here rather than with gzgets() so
   that an over-long line or a NUL byte is detected exactly instead of silently splitting or truncating the line.
*/
static PetscErrorCode MMReaderGetLine(MMReader *r, PetscBool *got)
{
  size_t    n       = 0;
  PetscBool any     = PETSC_FALSE, lead = PETSC_TRUE;
  PetscBool comment = PETSC_FALSE;

  PetscFunctionBegin;
  *got   = PETSC_FALSE;
  r->cut = PETSC_FALSE;
  for (;;) {
    char c;

    if (r->cpos == r->clen) {
      int k;

      if (r->eof) break;
      errno = 0;
      k     = gzread(r->gz, r->chunk, MM_CHUNK);
      if (k <= 0) {
        int         sys  = errno, zerr;
        const char *msg  = gzerror(r->gz, &zerr);
        size_t      flen = strlen(r->fname);

        /* a truncated or corrupt gzip stream shows only in gzerror(); gzread() may return 0 as at a clean end */
        if (zerr == Z_ERRNO) msg = strerror(sys);
        else if (msg && !strncmp(msg, r->fname, flen) && !strncmp(msg + flen, ": ", 2)) msg += flen + 2; /* zlib prepends the path */
        PetscCheck(k == 0 && zerr == Z_OK, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, MM_AT "read error: %s", r->fname, r->lineno + 1, msg ? msg : "unknown zlib error");
        r->eof = PETSC_TRUE;
        break;
      }
      r->clen = (size_t)k;
      r->cpos = 0;
    }
    c = r->chunk[r->cpos++];
    r->consumed++;
    any = PETSC_TRUE;
    if (c == '\n') break;
    PetscCheck(c != '\0', PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "NUL byte: not a text file", r->fname, r->lineno + 1);
    if (lead && !isspace((unsigned char)c)) {
      lead    = PETSC_FALSE;
      comment = (c == '%') ? PETSC_TRUE : PETSC_FALSE;
    }
    if (n < MM_MAX_LINE) r->line[n++] = c;
    else {
      /* comments carry no data, so an over-long one can be skipped without losing anything */
      PetscCheck(comment, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "line longer than %d characters", r->fname, r->lineno + 1, MM_MAX_LINE);
      r->cut = PETSC_TRUE;
    }
  }
  r->line[n] = '\0';
  if (any) {
    r->lineno++;
    *got = PETSC_TRUE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MMReadBanner(MMReader *r, MMData *d)
{
  char        tok[6][32];
  int         ntok = 0;
  const char *p;
  PetscBool   got;

  PetscFunctionBegin;
  PetscCall(MMReaderGetLine(r, &got));
  PetscCheck(got, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s:1: empty file, expected the banner %%%%MatrixMarket matrix coordinate <field> <symmetry>", r->fname);
  PetscCheck(!strncmp(r->line, "%%MatrixMarket", 14) && MMEndOfField(r->line + 14), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "missing Matrix Market banner: the first line must start with %%%%MatrixMarket", MM_LOC(r));
  PetscCheck(!r->cut, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "banner line longer than %d characters", MM_LOC(r), MM_MAX_LINE);
  for (p = MMSkipSpace(r->line); *p && ntok < 6; p = MMSkipSpace(p), ntok++) {
    (void)MMTokenStr(p, tok[ntok], sizeof(tok[ntok]));
    while (*p && !isspace((unsigned char)*p)) p++;
  }
  PetscCheck(ntok == 5, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "malformed banner: expected '%%%%MatrixMarket matrix coordinate <field> <symmetry>', found %s%d words", MM_LOC(r), ntok > 5 ? "more than " : "", ntok > 5 ? 5 : ntok);

  PetscCheck(MMStrEqI(tok[1], "matrix"), PETSC_COMM_SELF, MMStrEqI(tok[1], "vector") ? PETSC_ERR_SUP : PETSC_ERR_FILE_UNEXPECTED, MM_AT "unsupported object '%s' in the banner: only 'matrix' is supported", MM_LOC(r), tok[1]);
  PetscCheck(!MMStrEqI(tok[2], "array"), PETSC_COMM_SELF, PETSC_ERR_SUP, MM_AT "unsupported format 'array' (dense): only 'coordinate' is supported", MM_LOC(r));
  PetscCheck(MMStrEqI(tok[2], "coordinate"), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "unknown format '%s' in the banner: expected 'coordinate'", MM_LOC(r), tok[2]);

  if (MMStrEqI(tok[3], "real")) d->field = MM_REAL;
  else if (MMStrEqI(tok[3], "integer")) d->field = MM_INTEGER;
  else if (MMStrEqI(tok[3], "pattern")) d->field = MM_PATTERN;
  else if (MMStrEqI(tok[3], "complex")) {
    PetscCheck(PetscDefined(USE_COMPLEX), PETSC_COMM_SELF, PETSC_ERR_SUP, MM_AT "complex matrices need a complex PETSc build", MM_LOC(r));
    d->field = MM_COMPLEX;
  } else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "unsupported field '%s' in the banner: expected real, integer, pattern or complex", MM_LOC(r), tok[3]);

  if (MMStrEqI(tok[4], "general")) d->sym = MM_GENERAL;
  else if (MMStrEqI(tok[4], "symmetric")) d->sym = MM_SYMMETRIC;
  else if (MMStrEqI(tok[4], "skew-symmetric")) d->sym = MM_SKEW;
  else if (MMStrEqI(tok[4], "hermitian")) d->sym = MM_HERMITIAN;
  else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "unsupported symmetry '%s' in the banner: expected general, symmetric, skew-symmetric or hermitian", MM_LOC(r), tok[4]);
  PetscCheck(d->sym != MM_HERMITIAN || d->field == MM_COMPLEX, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "'hermitian' needs the 'complex' field, not '%s'", MM_LOC(r), tok[3]);
  PetscCheck(d->sym != MM_SKEW || d->field != MM_PATTERN, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "a 'pattern' matrix cannot be 'skew-symmetric'", MM_LOC(r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Reads the line "rows columns entries" and checks the sizes against PetscInt and the size of the file. */
static PetscErrorCode MMReadSize(MMReader *r, MMData *d)
{
  static const char *what[3] = {"number of rows", "number of columns", "number of entries"};
  long long          val[3];
  const char        *p, *tok;
  char               tb[40];
  PetscBool          got;
  unsigned long long maxnz;
  int                f;

  PetscFunctionBegin;
  do PetscCall(MMReaderGetLine(r, &got));
  while (got && MMSkippable(r->line));
  PetscCheck(got, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "unexpected end of file: missing the size line 'rows columns entries'", r->fname, r->lineno + 1);
  p = r->line;
  for (f = 0; f < 3; f++) {
    MMTok t = MMNextInt(&p, &tok, &val[f]);

    PetscCheck(t != MM_TOK_MISSING, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "malformed size line: expected 'rows columns entries', found %d field%s", MM_LOC(r), f, f == 1 ? "" : "s");
    PetscCheck(t != MM_TOK_BAD, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "malformed size line: %s '%s' is not an integer", MM_LOC(r), what[f], MMTokenStr(tok, tb, sizeof(tb)));
    PetscCheck(t != MM_TOK_RANGE, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "size line: %s '%s' is too large", MM_LOC(r), what[f], MMTokenStr(tok, tb, sizeof(tb)));
  }
  p = MMSkipSpace(p);
  PetscCheck(!*p, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "malformed size line: unexpected '%s' after the number of entries", MM_LOC(r), MMTokenStr(p, tb, sizeof(tb)));
  d->M        = val[0];
  d->N        = val[1];
  d->nz       = val[2];
  d->sizeline = r->lineno;
  PetscCheck(d->M > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "number of rows is %" PetscInt64_FMT ", must be positive", MM_LOC(r), d->M);
  PetscCheck(d->N > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "number of columns is %" PetscInt64_FMT ", must be positive", MM_LOC(r), d->N);
  PetscCheck(d->nz >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "number of entries is %" PetscInt64_FMT ", must not be negative", MM_LOC(r), d->nz);
  for (f = 0; f < 3; f++) PetscCheck(val[f] <= PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_SUP, MM_AT "%s %lld exceeds the PetscInt range of this PETSc build (%" PetscInt_FMT "); configure PETSc with --with-64-bit-indices", MM_LOC(r), what[f], val[f], PETSC_MAX_INT);
  PetscCheck(d->sym == MM_GENERAL || d->M == d->N, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "a symmetric, skew-symmetric or hermitian matrix must be square, this one is %" PetscInt64_FMT " x %" PetscInt64_FMT, MM_LOC(r), d->M, d->N);

  /* symmetric files store only the lower triangle, skew-symmetric ones only the strictly lower triangle */
  if (d->sym == MM_GENERAL) maxnz = MMMulSat((unsigned long long)d->M, (unsigned long long)d->N);
  else {
    unsigned long long a = (unsigned long long)d->M, b = (d->sym == MM_SKEW) ? a - 1 : a + 1;

    if (a % 2 == 0) a /= 2;
    else b /= 2;
    maxnz = MMMulSat(a, b);
  }
  PetscCheck((unsigned long long)d->nz <= maxnz, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "declares %" PetscInt64_FMT " entries, more than the %llu positions %s %" PetscInt64_FMT " x %" PetscInt64_FMT " matrix", MM_LOC(r), d->nz, maxnz,
             d->sym == MM_GENERAL ? "of a" : (d->sym == MM_SKEW ? "in the strictly lower triangle of a" : "in the lower triangle of a"), d->M, d->N);

  /* An uncompressed file must be big enough for the declared entries; compressed ones are only checked as they are
     read, which is safe because buffers grow with the entries actually found. */
  if (gzdirect(r->gz)) {
    struct stat st;

    if (!stat(r->fname, &st) && S_ISREG(st.st_mode)) {
      const PetscInt64 left     = (PetscInt64)st.st_size - r->consumed;
      const int        minbytes = d->field == MM_PATTERN ? 4 : (d->field == MM_COMPLEX ? 8 : 6); /* "1 1 1\n" */

      PetscCheck(d->nz <= (left + 1) / minbytes, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "declares %" PetscInt64_FMT " entries, but only %" PetscInt64_FMT " bytes follow (each entry needs at least %d)", MM_LOC(r), d->nz, left, minbytes);
    }
  }

  /* Rows and columns cost memory (row pointers, preallocation, vectors) whether they hold entries or not, so a
     60-byte file must not be able to ask for gigabytes: the sizes must be justified by the entries. The declared count
     is checked here, to fail before reading anything else, and it must equal the entries found (MMReadEntries()),
     before which nothing proportional to the sizes is allocated. */
  {
    PetscInt  maxdim = 0;
    PetscBool set;

    PetscCall(PetscOptionsGetInt(NULL, NULL, "-mm_max_dim", &maxdim, &set));
    if (set) {
      PetscCheck(maxdim > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-mm_max_dim %" PetscInt_FMT ": must be positive", maxdim);
      PetscCheck(d->M <= maxdim && d->N <= maxdim, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "%" PetscInt64_FMT " x %" PetscInt64_FMT " matrix: more rows or columns than the %" PetscInt_FMT " allowed by -mm_max_dim", MM_LOC(r), d->M, d->N, maxdim);
    } else {
      const unsigned long long limit = PetscMax((unsigned long long)MM_MIN_DIM_LIMIT, MMMulSat(MM_DIM_PER_ENTRY, (unsigned long long)d->nz));

      PetscCheck((unsigned long long)d->M <= limit && (unsigned long long)d->N <= limit, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
                 MM_AT "%" PetscInt64_FMT " x %" PetscInt64_FMT " matrix with only %" PetscInt64_FMT " entr%s: at most %llu rows and columns are accepted (the larger of %" PetscInt64_FMT " and %d per entry); -mm_max_dim <n> sets another limit", MM_LOC(r), d->M, d->N, d->nz,
                 d->nz == 1 ? "y" : "ies", limit, MM_MIN_DIM_LIMIT, MM_DIM_PER_ENTRY);
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Parses one entry line into 0-based (i, j) and its value, checking everything the format requires. */
static PetscErrorCode MMParseEntry(MMReader *r, const MMData *d, PetscInt64 *i, PetscInt64 *j, PetscScalar *v)
{
  static const char *what[4] = {"row index", "column index", "value", "imaginary part"};
  const int          nf      = d->field == MM_PATTERN ? 2 : (d->field == MM_COMPLEX ? 4 : 3);
  const char        *p       = r->line, *tok;
  char               tb[40];
  long long          idx[2]  = {0, 0};
  double             x[2]    = {0.0, 0.0};
  int                f;

  PetscFunctionBegin;
  for (f = 0; f < nf; f++) {
    const PetscBool isint = (f < 2 || d->field == MM_INTEGER) ? PETSC_TRUE : PETSC_FALSE;
    MMTok           t;

    if (isint) {
      long long ll = 0;

      t = MMNextInt(&p, &tok, &ll);
      if (f < 2) idx[f] = ll;
      else x[0] = (double)ll;
    } else t = MMNextReal(&p, &tok, &x[f - 2]);
    PetscCheck(t != MM_TOK_MISSING, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "too few fields: a %s entry needs %d (row column%s), found %d", MM_LOC(r),
               d->field == MM_PATTERN ? "pattern" : (d->field == MM_COMPLEX ? "complex" : (d->field == MM_INTEGER ? "integer" : "real")), nf, nf == 2 ? "" : (nf == 3 ? " value" : " real imaginary"), f);
    PetscCheck(t != MM_TOK_BAD, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "%s '%s' is not %s", MM_LOC(r), what[f], MMTokenStr(tok, tb, sizeof(tb)), isint ? "an integer" : "a number");
    PetscCheck(t != MM_TOK_RANGE, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "%s '%s' is out of range%s", MM_LOC(r), what[f], MMTokenStr(tok, tb, sizeof(tb)), isint ? "" : " or not finite");
  }
  p = MMSkipSpace(p);
  PetscCheck(!*p, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "unexpected '%s' after the %s", MM_LOC(r), MMTokenStr(p, tb, sizeof(tb)), what[nf - 1]);
  PetscCheck(idx[0] >= 1 && idx[0] <= d->M, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "row index %lld out of range 1..%" PetscInt64_FMT, MM_LOC(r), idx[0], d->M);
  PetscCheck(idx[1] >= 1 && idx[1] <= d->N, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "column index %lld out of range 1..%" PetscInt64_FMT, MM_LOC(r), idx[1], d->N);
  /* mirrored storage: an upper-triangle entry would be a second, possibly conflicting, copy of a mirrored one */
  PetscCheck(d->sym == MM_GENERAL || idx[0] >= idx[1], PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "entry (%lld, %lld) above the diagonal in a %s file, which must store only the lower triangle", MM_LOC(r), idx[0], idx[1],
             d->sym == MM_SYMMETRIC ? "symmetric" : (d->sym == MM_SKEW ? "skew-symmetric" : "hermitian"));
  PetscCheck(d->sym != MM_SKEW || idx[0] != idx[1], PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "diagonal entry (%lld, %lld) in a skew-symmetric file, which stores only the strictly lower triangle", MM_LOC(r), idx[0], idx[1]);
  *i = idx[0] - 1;
  *j = idx[1] - 1;
  if (d->field == MM_PATTERN) *v = 1.0;
#if defined(PETSC_USE_COMPLEX)
  else if (d->field == MM_COMPLEX) *v = (PetscReal)x[0] + PETSC_i * (PetscReal)x[1];
#endif
  else *v = (PetscReal)x[0];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Appends an owned entry (local row li, global column gj), growing the arrays geometrically. */
static PetscErrorCode MMStore(MMReader *r, MMData *d, PetscInt li, PetscInt gj, PetscScalar v)
{
  PetscFunctionBegin;
  if (d->cnt == d->cap) {
    /* for a compressed file start small: the header count has not been checked against anything */
    PetscCount ncap = d->cap ? d->cap + d->cap / 2 : 1024;

    if (!d->cap && gzdirect(r->gz)) ncap += (PetscCount)((d->sym == MM_GENERAL ? 1.0 : 2.0) * (double)d->nz / (double)(d->M) * (double)d->m);
    /* a rank's matrix block is indexed by PetscInt */
    PetscCheck(d->cnt < PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_SUP, MM_AT "more than %" PetscInt_FMT " entries on one MPI rank; use more ranks or configure PETSc with --with-64-bit-indices", MM_LOC(r), PETSC_MAX_INT);
    if (ncap > (PetscCount)PETSC_MAX_INT) ncap = PETSC_MAX_INT;
    if (!d->cap) {
      PetscCall(PetscMalloc1(ncap, &d->ti));
      PetscCall(PetscMalloc1(ncap, &d->tj));
      PetscCall(PetscMalloc1(ncap, &d->tv));
    } else {
      PetscCall(PetscRealloc(sizeof(PetscInt) * (size_t)ncap, &d->ti));
      PetscCall(PetscRealloc(sizeof(PetscInt) * (size_t)ncap, &d->tj));
      PetscCall(PetscRealloc(sizeof(PetscScalar) * (size_t)ncap, &d->tv));
    }
    d->cap = ncap;
  }
  d->ti[d->cnt] = li;
  d->tj[d->cnt] = gj;
  d->tv[d->cnt] = v;
  d->cnt++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The per-row counts, from the stored triplets: allocated only now that every entry was read and the sizes were
   found consistent with them. */
static PetscErrorCode MMCountRows(MMData *d)
{
  PetscFunctionBegin;
  PetscCall(PetscCalloc3(d->m, &d->dnnz, d->m, &d->onnz, d->m + 1, &d->rowcnt));
  for (PetscCount k = 0; k < d->cnt; k++) {
    const PetscInt li = d->ti[k], gj = d->tj[k];

    d->rowcnt[li + 1]++;
    /* duplicates are counted too; capping keeps the preallocation valid (a row cannot exceed the block width) */
    if (gj >= d->cstart && gj < d->cstart + d->n) {
      if (d->dnnz[li] < d->n) d->dnnz[li]++;
    } else if (d->onnz[li] < (PetscInt)d->N - d->n) d->onnz[li]++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MMReadEntries(MMReader *r, MMData *d)
{
  const PetscInt64 sizeline = d->sizeline;
  PetscInt64       k        = 0, i, j;
  PetscScalar      v;
  PetscBool        got;

  PetscFunctionBegin;
  for (;;) {
    PetscCall(MMReaderGetLine(r, &got));
    if (!got) break;
    if (MMSkippable(r->line)) continue;
    PetscCheck(k < d->nz, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "more entries than the %" PetscInt64_FMT " declared on the size line (line %" PetscInt64_FMT ")", MM_LOC(r), d->nz, sizeline);
    PetscCall(MMParseEntry(r, d, &i, &j, &v));
    k++;
    if (i >= d->rstart && i < d->rstart + d->m) PetscCall(MMStore(r, d, (PetscInt)(i - d->rstart), (PetscInt)j, v));
    if (d->sym != MM_GENERAL && i != j && j >= d->rstart && j < d->rstart + d->m) {
      PetscScalar w = d->sym == MM_SKEW ? -v : (d->sym == MM_HERMITIAN ? PetscConj(v) : v);

      PetscCall(MMStore(r, d, (PetscInt)(j - d->rstart), (PetscInt)i, w));
    }
  }
  PetscCheck(k == d->nz, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, MM_AT "unexpected end of file: found %" PetscInt64_FMT " of the %" PetscInt64_FMT " entries declared on the size line (truncated file?)", r->fname, r->lineno + 1, k, d->nz);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MMDataFree(MMData *d)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(d->ti));
  PetscCall(PetscFree(d->tj));
  PetscCall(PetscFree(d->tv));
  PetscCall(PetscFree3(d->dnnz, d->onnz, d->rowcnt));
  d->cnt = d->cap = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Everything that needs no communication: parse the file and keep this rank's entries. */
static PetscErrorCode MMReadLocal(MPI_Comm comm, const char fname[], MMReader *r, MMData *d)
{
  PetscMPIInt size, rank;
  PetscInt    m = PETSC_DECIDE, M;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(MMReaderOpen(r, fname));
  PetscCall(MMReadBanner(r, d));
  PetscCall(MMReadSize(r, d));

  /* The PETSC_DECIDE split, computed locally because the ranks must not communicate before they all know that the
     file is valid: rank p gets M/size rows, plus one if p < M % size. */
  d->m      = (PetscInt)(d->M / size + (d->M % size > rank));
  d->rstart = (PetscInt)(rank * (d->M / size) + PetscMin(rank, d->M % size));
  d->n      = (PetscInt)(d->N / size + (d->N % size > rank));
  d->cstart = (PetscInt)(rank * (d->N / size) + PetscMin(rank, d->N % size));
  M         = (PetscInt)d->M;
  PetscCall(PetscSplitOwnership(comm, &m, &M));
  PetscCheck(m == d->m, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Local row count %" PetscInt_FMT " differs from PetscSplitOwnership() %" PetscInt_FMT, d->m, m);

  PetscCall(MMReadEntries(r, d));
  PetscCall(MMReaderClose(r, PETSC_TRUE));
  PetscCall(MMCountRows(d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Collective: preallocates exactly from the counts, inserts row by row, assembles. Frees the triplets early. */
static PetscErrorCode MMBuild(MMData *d, Mat A)
{
  PetscCount  *end = d->rowcnt, k;
  PetscInt    *cols;
  PetscScalar *vals;
  PetscInt     i;

  PetscFunctionBegin;
  PetscCall(MatSetSizes(A, d->m, d->n, (PetscInt)d->M, (PetscInt)d->N));
  PetscCall(MatSetType(A, MATAIJ));
  PetscCall(MatSeqAIJSetPreallocation(A, 0, d->dnnz));
  PetscCall(MatMPIAIJSetPreallocation(A, 0, d->dnnz, 0, d->onnz));

  /* bucket the triplets by row (counting sort); afterwards row i occupies [end[i], end[i + 1]) */
  for (i = 0; i < d->m; i++) end[i + 1] += end[i];
  PetscCall(PetscMalloc2(d->cnt, &cols, d->cnt, &vals));
  for (k = 0; k < d->cnt; k++) {
    const PetscCount p = end[d->ti[k]]++;

    cols[p] = d->tj[k];
    vals[p] = d->tv[k];
  }
  for (i = d->m; i > 0; i--) end[i] = end[i - 1];
  end[0] = 0;
  PetscCall(PetscFree(d->ti));
  PetscCall(PetscFree(d->tj));
  PetscCall(PetscFree(d->tv));

  for (i = 0; i < d->m; i++) {
    const PetscInt row = d->rstart + i, nr = (PetscInt)(end[i + 1] - end[i]);

    if (!nr) continue;
    PetscCall(PetscSortIntWithScalarArray(nr, cols + end[i], vals + end[i])); /* sorted input inserts fastest */
    PetscCall(MatSetValues(A, 1, &row, nr, cols + end[i], vals + end[i], ADD_VALUES));
  }
  PetscCall(PetscFree2(cols, vals));
  /* every rank inserted only its own rows, so assembly needs no stash exchange */
  PetscCall(MatSetOption(A, MAT_NO_OFF_PROC_ENTRIES, PETSC_TRUE));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatSetOption(A, MAT_NO_OFF_PROC_ENTRIES, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatCSRKReadMatrixMarket - Reads a Matrix Market coordinate file into a new assembled `MATAIJ` matrix

  Collective

  Input Parameters:
+ comm     - MPI communicator of the matrix
- filename - name of the file, plain text or gzip-compressed (detected from the content, not the name)

  Output Parameter:
. A - the matrix, rows and columns distributed with `PETSC_DECIDE`

  Level: intermediate

  Notes:
  Accepts `%%MatrixMarket matrix coordinate <field> <symmetry>` with field `real`, `integer`, `pattern` (values 1.0)
  or `complex` (complex PETSc builds only) and symmetry `general`, `symmetric`, `skew-symmetric` or `hermitian`.
  Symmetric files must store the lower triangle, which is expanded (negated for skew-symmetric, conjugated for
  hermitian). Duplicate entries are summed. Comment and blank lines may follow the banner.

  Every rank reads the whole file and keeps the entries of its own rows, so this is meant for test and benchmark
  inputs, not for very large files; use `MatLoad()` with a PETSc binary file for those. Any malformed input gives an
  error that names the file and the line, and on error `*A` is `NULL` and nothing is leaked.

  The sizes must be justified by the entries: a file may declare at most the larger of 2^20 and 64 times its number of
  entries as rows or columns (a 100000000 x 100000000 matrix with 1 entry is refused, before anything proportional
  to its size is allocated). Memory proportional to the number of rows is allocated only after every entry was read.

  Options Database Key:
. -mm_max_dim <n> - the largest number of rows or columns accepted, instead of that rule

.seealso: `MatLoad()`, `MATAIJ`, `MatCreateAIJ()`
@*/
PetscErrorCode MatCSRKReadMatrixMarket(MPI_Comm comm, const char filename[], Mat *A)
{
  MMReader       r;
  MMData         d;
  PetscErrorCode perr;
  long long      loc[5], glob[5];

  PetscFunctionBegin;
  PetscCheck(A, comm, PETSC_ERR_ARG_NULL, "Null Mat pointer");
  *A = NULL;
  PetscCheck(filename, comm, PETSC_ERR_ARG_NULL, "Null filename");
  PetscCall(PetscMemzero(&r, sizeof(r)));
  PetscCall(PetscMemzero(&d, sizeof(d)));

  perr = MMReadLocal(comm, filename, &r, &d);
  if (perr) PetscCall(MMReaderClose(&r, PETSC_FALSE)); /* the success path closed it already */

  /* all ranks agree on failure before anything collective, so one bad rank cannot leave the others waiting */
  loc[0] = perr ? 1 : 0;
  loc[1] = d.M;
  loc[2] = -d.M;
  loc[3] = d.N;
  loc[4] = -d.N;
  PetscCallMPI(MPI_Allreduce(loc, glob, 5, MPI_LONG_LONG, MPI_MAX, comm));
  if (perr) {
    PetscCall(MMDataFree(&d));
    PetscCall(perr);
  }
  if (glob[0] || glob[1] != -glob[2] || glob[3] != -glob[4]) {
    PetscCall(MMDataFree(&d));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: %s", filename, glob[0] ? "reading failed on another MPI rank" : "MPI ranks read different matrix sizes (is the file the same everywhere?)");
  }

  PetscCall(MatCreate(comm, A));
  perr = MMBuild(&d, *A);
  if (perr) {
    PetscCall(MatDestroy(A));
    PetscCall(MMDataFree(&d));
    PetscCall(perr);
  }
  PetscCall(MMDataFree(&d));
  PetscFunctionReturn(PETSC_SUCCESS);
}
