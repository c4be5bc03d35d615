/*
   Row patterns: the column indices of a CPU structure replaced by one small number per row.

   On a stencil or a structured-mesh matrix in its natural order, almost every row has the same columns relative to its
   diagonal; only rows at the domain's faces, edges and corners differ (27 distinct lists on a 3D 27-point stencil).
   Each distinct list of offsets (column - row) is stored once in a dictionary small enough to stay in the L1 cache,
   and each row keeps the 16-bit number of its list: 2 bytes per row instead of 2 or 4 per nonzero. With 8-byte values
   that is 8 bytes per nonzero instead of 10 (16-bit offsets) or 12 (AIJ), which is what moves the product of a
   bandwidth-bound matrix. Matrices with more distinct rows than the dictionary holds keep their column indices; the
   search stops as soon as one thread's dictionary overflows, so an irregular matrix pays a fraction of a pass.
*/
#include "csrkimpl.h"
#include <string.h>

/* Offsets of all patterns together: 32 KiB of 32-bit offsets, within a current core's L1 data cache (and most rows
   read one interior pattern, far less); rows longer than this never fit either */
#define CSRK_PATTERN_MAX_ENTRIES 8192
/* pattern numbers stay below the numbers of the value lists (csrkslices.c) */
#if CSRK_PATTERN_MAX_ENTRIES + 1 >= CSRK_VALUED
  #error "row-pattern numbers would overlap CSRK_VALUED"
#endif
/* Slots of a dictionary's hash table: a power of 2 over twice the most patterns it can hold */
#define CSRK_PATTERN_SLOTS 16384
/* Patterns a row is compared with before the hash table: the last ones seen */
#define CSRK_PATTERN_RECENT 4
/* Rows tested together for the previous row's pattern */
#define CSRK_PATTERN_BLOCK 8
/* Rows (a block of rows counts as one) between two looks at whether another thread gave up */
#define CSRK_PATTERN_POLL 4096

/* One thread's dictionary, then the merged one */
typedef struct {
  int32_t  off[CSRK_PATTERN_MAX_ENTRIES];
  CSRKIdx  start[CSRK_PATTERN_MAX_ENTRIES + 2]; /* pattern p is off[start[p] .. start[p+1]); at most one is empty */
  uint16_t slot[CSRK_PATTERN_SLOTS];            /* 1 + pattern, 0: free */
  PetscInt npat;
} CSRKPatternTable;

static inline uint32_t CSRKPatternHash(const int32_t *off, PetscInt len)
{
  uint32_t h = 2166136261u ^ (uint32_t)len;
  for (PetscInt j = 0; j < len; j++) h = (h ^ (uint32_t)off[j]) * 16777619u;
  return h;
}

/* The number of the pattern off[0..len) in tb, added if new; -1 when tb is full */
static PetscInt CSRKPatternFind(CSRKPatternTable *tb, const int32_t *off, PetscInt len)
{
  uint32_t s = CSRKPatternHash(off, len) & (CSRK_PATTERN_SLOTS - 1);

  for (;; s = (s + 1) & (CSRK_PATTERN_SLOTS - 1)) {
    const PetscInt p = (PetscInt)tb->slot[s] - 1;
    if (p < 0) break;
    if (tb->start[p + 1] - tb->start[p] == len && !memcmp(tb->off + tb->start[p], off, sizeof(int32_t) * (size_t)len)) return p;
  }
  if (tb->start[tb->npat] + len > CSRK_PATTERN_MAX_ENTRIES) return -1;
  memcpy(tb->off + tb->start[tb->npat], off, sizeof(int32_t) * (size_t)len);
  tb->start[tb->npat + 1] = tb->start[tb->npat] + (CSRKIdx)len;
  tb->slot[s]             = (uint16_t)(tb->npat + 1);
  return tb->npat++;
}

/* whether the row of len entries at q0 of the source (the AIJ columns aj of row r, else 16-bit offsets co, else 32-bit
   columns cj in the rows' numbering) has the offsets o[0..len) */
static inline PetscBool CSRKRowHasOffsets(const int32_t *o, const PetscInt *aj, const int16_t *co, const CSRKIdx *cj, CSRKIdx q0, CSRKIdx len, PetscInt r)
{
  int32_t diff = 0;

  if (aj)
    for (CSRKIdx j = 0; j < len; j++) diff |= (int32_t)(aj[q0 + j] - r) ^ o[j];
  else if (co)
    for (CSRKIdx j = 0; j < len; j++) diff |= (int32_t)co[q0 + j] ^ o[j];
  else
    for (CSRKIdx j = 0; j < len; j++) diff |= (int32_t)(cj[q0 + j] - (CSRKIdx)r) ^ o[j];
  return (PetscBool)!diff;
}

/* whether that row has pattern p of tb */
static inline PetscBool CSRKRowIsPattern(const CSRKPatternTable *tb, PetscInt p, const PetscInt *aj, const int16_t *co, const CSRKIdx *cj, CSRKIdx q0, CSRKIdx len, PetscInt r)
{
  return (PetscBool)(tb->start[p + 1] - tb->start[p] == len && CSRKRowHasOffsets(tb->off + tb->start[p], aj, co, cj, q0, len, r));
}

/* whether the CSRK_PATTERN_BLOCK rows from r all have the pattern of row r - 1, of len entries: the same lengths, and
   each entry one more than the entry len places before it (16-bit offsets: equal to it). One test over their entries,
   blind to the rows' boundaries, which are checked apart: cheaper than a test per row. */
static inline PetscBool CSRKRowsRepeat(const CSRKIdx *rp, const PetscInt *aj, const int16_t *co, const CSRKIdx *cj, PetscInt r, CSRKIdx len)
{
  const CSRKIdx e0 = rp[r - 1], ne = CSRK_PATTERN_BLOCK * len;
  int32_t       diff = 0;

  for (PetscInt i = 0; i < CSRK_PATTERN_BLOCK; i++) diff |= (rp[r + i + 1] - rp[r + i]) ^ len;
  if (diff) return PETSC_FALSE;
  if (aj)
    for (CSRKIdx e = e0; e < e0 + ne; e++) diff |= (int32_t)(aj[e + len] - aj[e] - 1);
  else if (co)
    for (CSRKIdx e = e0; e < e0 + ne; e++) diff |= (int32_t)(co[e + len] ^ co[e]);
  else
    for (CSRKIdx e = e0; e < e0 + ne; e++) diff |= cj[e + len] - cj[e] - 1;
  return (PetscBool)!diff;
}

/* Numbers the rows [r0, r1) of one thread in its dictionary my (rowpat[]). Stops early, setting *fail (atomically:
   the other threads look at it every CSRK_PATTERN_POLL rows and stop too), when a row does not fit the dictionary (1),
   or, with slices (one thread only), once the rows in runs of CSRK_SLICE or more rows with one pattern can no longer
   make half of the rows (2): the row slices (csrkslices.c), which never hold more, would then not be used, and one
   thread keeps the patterns only for them. */
static void CSRKNumberRows(CSRKPatternTable *my, const MatCSRKStructure *st, const PetscInt *aj, PetscInt r0, PetscInt r1, PetscBool slices, PetscInt *fail, uint16_t *rowpat)
{
  const CSRKIdx *rp = st->rowptr, *cj = st->colidx;
  const int16_t *co = st->coloff;
  const int32_t *o  = NULL; /* the offsets of recent[0], the previous row's pattern, of length olen */
  int32_t        buf[CSRK_PATTERN_MAX_ENTRIES];
  PetscInt       recent[CSRK_PATTERN_RECENT], i, poll = 0, run = 0, inruns = 0;
  CSRKIdx        olen = -1;

  for (i = 0; i < CSRK_PATTERN_RECENT; i++) recent[i] = -1;
  for (PetscInt r = r0; r < r1; r++) {
    const CSRKIdx q0 = rp[r], len = rp[r + 1] - q0;
    PetscInt      p;
    if (--poll < 0) {
      PetscInt gaveup;
      poll = CSRK_PATTERN_POLL;
#if defined(_OPENMP)
  #pragma omp atomic read
#endif
      gaveup = *fail;
      if (gaveup) return;
      if (slices && 2 * (inruns + run + r1 - r) < st->m) {
#if defined(_OPENMP)
  #pragma omp atomic write
#endif
        *fail = 2;
        return;
      }
    }
    /* most rows have the previous row's pattern: compared in place, without a copy or a hash, and the rows after a
       row that has it tested a block at a time */
    if (len == olen && CSRKRowHasOffsets(o, aj, co, cj, q0, len, r)) {
      rowpat[r] = (uint16_t)recent[0];
      run++;
      while (r + 1 + CSRK_PATTERN_BLOCK <= r1 && CSRKRowsRepeat(rp, aj, co, cj, r + 1, len)) {
        for (i = 1; i <= CSRK_PATTERN_BLOCK; i++) rowpat[r + i] = (uint16_t)recent[0];
        run += CSRK_PATTERN_BLOCK;
        r += CSRK_PATTERN_BLOCK;
      }
      continue;
    }
    /* then the few seen before it (the interior's around a boundary row, the other rows of a node), then the table */
    for (i = 1; i < CSRK_PATTERN_RECENT && recent[i] >= 0; i++)
      if (CSRKRowIsPattern(my, recent[i], aj, co, cj, q0, len, r)) break;
    if (i < CSRK_PATTERN_RECENT && recent[i] >= 0) p = recent[i];
    else {
      p = -1;
      if (len <= CSRK_PATTERN_MAX_ENTRIES) { /* longer rows fit no dictionary */
        if (aj)
          for (CSRKIdx j = 0; j < len; j++) buf[j] = (int32_t)(aj[q0 + j] - r);
        else if (co)
          for (CSRKIdx j = 0; j < len; j++) buf[j] = co[q0 + j];
        else
          for (CSRKIdx j = 0; j < len; j++) buf[j] = cj[q0 + j] - (CSRKIdx)r;
        p = CSRKPatternFind(my, buf, len);
      }
      if (p < 0) {
#if defined(_OPENMP)
  #pragma omp atomic write
#endif
        *fail = 1;
        return;
      }
      i = CSRK_PATTERN_RECENT - 1;
    }
    inruns += run - run % CSRK_SLICE;
    run       = 1;
    rowpat[r] = (uint16_t)p;
    for (; i > 0; i--) recent[i] = recent[i - 1]; /* p first */
    recent[0] = p;
    o         = my->off + my->start[p];
    olen      = my->start[p + 1] - my->start[p];
  }
}

/*
  MatCSRKStructureFindPatterns - replaces the column indices of a CPU structure by row patterns when the distinct rows
  fit the dictionary and they save bytes against the indices they replace (16-bit offsets where they exist or would
  fit; st unchanged otherwise). The rows are read from aj, the AIJ columns, for a natural-order structure, which then
  needs no offsets of its own, else from st's 16-bit offsets or 32-bit columns in the rows' own numbering (aj NULL).
  slices (one thread in the natural order): the patterns are wanted only with row slices, and the search stops once
  too few rows are left for them. A natural-order structure whose bandwidth was not computed takes it from the
  dictionary.

  Each thread numbers the patterns of its own rows (those it multiplies, which it also touches first) in its own
  dictionary, trying the last patterns seen before the hash table; the dictionaries are then merged and the rows
  of the other threads renumbered.
*/
PetscErrorCode MatCSRKStructureFindPatterns(Mat A, MatCSRKStructure *st, const PetscInt *aj, PetscBool slices)
{
  const PetscInt    T = st->nthreads;
  CSRKPatternTable *tb;
  PetscInt        **remap, fail = 0, entries, bw = -1;
  uint16_t         *rowpat;
  PetscLogDouble    t0, t1;
  PetscReal         index_bytes = 4.0; /* of the indices the patterns replace */

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  if (st->coloff) index_bytes = 2.0;
  else if (aj && st->bw_after < 0) index_bytes = 0; /* from the dictionary */
  else if (aj && st->bw_after <= CSRK_COLOFF_MAX) index_bytes = 2.0;
  if (!st->m || (!aj && !st->coloff && !st->colidx)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(!slices || T == 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Row patterns for row slices only: one thread");
  PetscCall(PetscCalloc1(T + 1, &tb)); /* tb[T]: the merged dictionary */
  PetscCall(PetscMalloc1(st->m, &rowpat));
  if (T == 1) MatCSRKPopulate(rowpat, sizeof(uint16_t) * (size_t)st->m); /* one thread writes it all: at once */
  PetscCall(PetscCalloc1(T, &remap));
#if defined(_OPENMP)
  #pragma omp parallel num_threads((int)T)
#endif
  {
    PetscInt r0, r1, t = MatCSRKThreadRows(st, &r0, &r1);
    CSRKNumberRows(&tb[t], st, aj, r0, r1, slices, &fail, rowpat);
  }
  if (!fail) {
    /* merge into tb[T], thread 0's numbers first so that its rows keep theirs */
    CSRKPatternTable *all = &tb[T];
    for (PetscInt t = 0; t < T && !fail; t++) {
      PetscCall(PetscMalloc1(tb[t].npat, &remap[t]));
      for (PetscInt p = 0; p < tb[t].npat && !fail; p++) {
        remap[t][p] = CSRKPatternFind(all, tb[t].off + tb[t].start[p], tb[t].start[p + 1] - tb[t].start[p]);
        fail        = remap[t][p] < 0;
      }
    }
  }
  entries = tb[T].start[tb[T].npat];
  if (!fail) {
    bw = 0;
    for (PetscInt e = 0; e < entries; e++) bw = PetscMax(bw, PetscAbsInt((PetscInt)tb[T].off[e]));
    if (index_bytes <= 0) index_bytes = bw <= CSRK_COLOFF_MAX ? 2.0 : 4.0;
    if (aj && st->bw_before < 0) st->bw_before = st->bw_after = bw;
  }
  /* the dictionary must save bytes: 2 per row and its offsets against the index bytes per nonzero */
  if (!fail && 2.0 * st->m + 4.0 * entries < index_bytes * st->nnz) {
    const CSRKPatternTable *all = &tb[T];
#if defined(_OPENMP)
  #pragma omp parallel num_threads((int)T)
#endif
    {
      PetscInt r0, r1, t = MatCSRKThreadRows(st, &r0, &r1);
      if (t)
        for (PetscInt r = r0; r < r1; r++) rowpat[r] = (uint16_t)remap[t][rowpat[r]];
    }
    st->npat = all->npat;
    PetscCall(PetscMalloc1(all->npat + 1, &st->patptr));
    PetscCall(PetscMalloc1(PetscMax(entries, 1), &st->patoff));
    PetscCall(PetscArraycpy(st->patptr, all->start, all->npat + 1));
    PetscCall(PetscArraycpy(st->patoff, all->off, entries));
    st->rowpat = rowpat;
    rowpat     = NULL;
    PetscCall(PetscFree(st->coloff));
    if (!st->shared) PetscCall(PetscFree(st->colidx));
  }
  PetscCall(PetscTime(&t1));
  if (st->rowpat) PetscCall(PetscInfo(A, "Column indices as row patterns: %" PetscInt_FMT " distinct rows (%" PetscInt_FMT " offsets), 16 bits per row instead of %.0f bits per nonzero (%g s)\n", st->npat, entries, (double)(8 * index_bytes), t1 - t0));
  else if (fail == 2) PetscCall(PetscInfo(A, "Column indices kept: too few rows in runs of %d with one pattern for row slices, the only use of row patterns on one thread in the natural order (%g s)\n", CSRK_SLICE, t1 - t0));
  else PetscCall(PetscInfo(A, "Column indices kept: %s (%g s)\n", fail ? "more distinct rows than the row-pattern dictionary holds" : "row patterns would not save bytes", t1 - t0));
  for (PetscInt t = 0; t < T; t++) PetscCall(PetscFree(remap[t]));
  PetscCall(PetscFree(remap));
  PetscCall(PetscFree(rowpat));
  PetscCall(PetscFree(tb));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The row loop over row patterns: row r's offsets from the diagonal are pattern rowpat[r] of the dictionary (pp, po),
   which stays in the L1 cache, instead of an index per entry. Each row's values start at its row pointer rather than
   after the previous row's (which would chain every row's loads to the previous row's pattern lookup): the row-pointer
   form measured at least as fast for its 4 bytes per row (docs/history/experiments.md) */
#define CSRK_PATTERN_ROWS(R0, R1, OUT, UNUSED) \
  do { \
    const PetscScalar *xr = xx + (R0); \
    for (PetscInt r = (R0); r < (R1); r++, xr++) { \
      const CSRKIdx      p0 = pp[rowpat[r]], nz = pp[rowpat[r] + 1] - p0; \
      const int32_t     *ix = po + p0; \
      const PetscScalar *v  = va + rp[r]; \
      PetscScalar        sum = 0.0; \
      for (CSRKIdx j = 0; j < nz; j++) sum += v[j] * xr[ix[j]]; \
      out[r] = OUT; \
    } \
  } while (0)

static void CSRKPatternsMult(const MatCSRKStructure *st, PetscInt t, PetscInt r0, PetscInt r1, const PetscScalar *restrict xx, const PetscScalar *restrict zz, PetscScalar *restrict out)
{
  const CSRKIdx *restrict     rp     = st->rowptr;
  const uint16_t *restrict    rowpat = st->rowpat;
  const CSRKIdx *restrict     pp     = st->patptr;
  const int32_t *restrict     po     = st->patoff;
  const PetscScalar *restrict va     = st->val;

  CSRK_OUTPUTS(CSRK_PATTERN_ROWS, 0);
}

/* one thread in the natural order keeps the AIJ loop, unless the rows make slices (the entry before) */
static PetscBool CSRKPatternsApplies(const MatCSRKPlan *plan, const MatCSRKStructure *st)
{
  return (PetscBool)(plan->patterns && !plan->onethread);
}

/* the patterns, unless the row slices searched for them already: found or not, the rows are the same */
static PetscErrorCode CSRKPatternsBuild(Mat A, MatCSRKPlan *plan, MatCSRKStructure *st, PetscBool *built)
{
  PetscFunctionBegin;
  if (!plan->searched) PetscCall(MatCSRKStructureFindPatterns(A, st, st->perm ? NULL : plan->aj, plan->onethread));
  plan->searched = PETSC_TRUE;
  *built         = (PetscBool)!!st->rowpat;
  PetscFunctionReturn(PETSC_SUCCESS);
}

const MatCSRKVariant MatCSRKVariantPatterns = {"patterns", NULL, CSRKPatternsApplies, CSRKPatternsBuild, CSRKPatternsMult, NULL, {CSRK_ARRAY(rowpat, CSRK_LEN_M, PETSC_FALSE), CSRK_ARRAY(patptr, CSRK_LEN_PATTERNS1, PETSC_FALSE), CSRK_ARRAY(patoff, CSRK_LEN_PATOFF, PETSC_FALSE)}, 7.0, 1.0, NULL};
