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
#if defined(_OPENMP)
  #include <omp.h>
#endif

/* Offsets of all patterns together: 32 KiB of 32-bit offsets, within a current core's L1 data cache (and most rows
   read one interior pattern, far less); rows longer than this never fit either */
#define CSRK_PATTERN_MAX_ENTRIES 8192
/* Slots of a dictionary's hash table: a power of 2 over twice the most patterns it can hold */
#define CSRK_PATTERN_SLOTS 16384
/* Rows between two looks at whether another thread gave up */
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

/*
  MatCSRKFindRowPatterns - the row patterns of the rows of st when the distinct rows fit the dictionary and they save
  bytes against index_bytes per nonzero (pat->rowpat NULL otherwise). The rows are read from aj, the AIJ columns, for a
  natural-order structure, else from st's 16-bit offsets or 32-bit columns in the rows' own numbering (aj NULL).

  Each thread numbers the patterns of its own rows (those it multiplies, which it also touches first) in its own
  dictionary, trying the previous row's pattern before the hash table; the dictionaries are then merged and the rows
  of the other threads renumbered.
*/
PetscErrorCode MatCSRKFindRowPatterns(Mat A, const MatCSRKStructure *st, const PetscInt *aj, PetscReal index_bytes, MatCSRKRowPatterns *pat)
{
  const PetscInt    T = st->nthreads;
  CSRKPatternTable *tb;
  PetscInt        **remap, fail = 0, entries;
  uint16_t         *rowpat;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(pat, sizeof(*pat)));
  if (!st->m || (!aj && !st->coloff && !st->colidx)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscCalloc1(T + 1, &tb)); /* tb[T]: the merged dictionary */
  PetscCall(PetscMalloc1(st->m, &rowpat));
  PetscCall(PetscCalloc1(T, &remap));
#if defined(_OPENMP)
  #pragma omp parallel num_threads((int)T)
#endif
  {
    PetscInt                t = 0, r0, r1, prev = -1;
    const CSRKIdx *restrict rp = st->rowptr, *restrict cj = st->colidx;
    const int16_t *restrict co = st->coloff;
    CSRKPatternTable       *my;
    int32_t                 buf[CSRK_PATTERN_MAX_ENTRIES];
#if defined(_OPENMP)
    t = omp_get_thread_num();
#endif
    my = &tb[t];
    CSRKThreadRows(st, t, &r0, &r1);
    for (PetscInt r = r0; r < r1; r++) {
      const CSRKIdx q0 = rp[r], len = rp[r + 1] - q0;
      PetscInt      p  = -1, gaveup;
      if ((r - r0) % CSRK_PATTERN_POLL == 0) {
#if defined(_OPENMP)
  #pragma omp atomic read
#endif
        gaveup = fail;
        if (gaveup) break;
      }
      if (len <= CSRK_PATTERN_MAX_ENTRIES) { /* longer rows fit no dictionary: p stays -1 */
        if (aj)
          for (CSRKIdx j = 0; j < len; j++) buf[j] = (int32_t)(aj[q0 + j] - r);
        else if (co)
          for (CSRKIdx j = 0; j < len; j++) buf[j] = co[q0 + j];
        else
          for (CSRKIdx j = 0; j < len; j++) buf[j] = cj[q0 + j] - (CSRKIdx)r;
        if (prev >= 0 && my->start[prev + 1] - my->start[prev] == len && !memcmp(my->off + my->start[prev], buf, sizeof(int32_t) * (size_t)len)) p = prev;
        else p = CSRKPatternFind(my, buf, len);
      }
      if (p < 0) {
#if defined(_OPENMP)
  #pragma omp atomic write
#endif
        fail = 1;
        break;
      }
      rowpat[r] = (uint16_t)p;
      prev      = p;
    }
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
  /* the dictionary must save bytes: 2 per row and its offsets against the index bytes per nonzero */
  if (!fail && 2.0 * st->m + 4.0 * entries < index_bytes * st->nnz) {
    const CSRKPatternTable *all = &tb[T];
#if defined(_OPENMP)
  #pragma omp parallel num_threads((int)T)
#endif
    {
      PetscInt t = 0, r0, r1;
#if defined(_OPENMP)
      t = omp_get_thread_num();
#endif
      CSRKThreadRows(st, t, &r0, &r1);
      if (t)
        for (PetscInt r = r0; r < r1; r++) rowpat[r] = (uint16_t)remap[t][rowpat[r]];
    }
    pat->npat = all->npat;
    PetscCall(PetscMalloc1(all->npat + 1, &pat->patptr));
    PetscCall(PetscMalloc1(PetscMax(entries, 1), &pat->patoff));
    PetscCall(PetscArraycpy(pat->patptr, all->start, all->npat + 1));
    PetscCall(PetscArraycpy(pat->patoff, all->off, entries));
    pat->rowpat = rowpat;
    rowpat      = NULL;
    PetscCall(PetscInfo(A, "Column indices as row patterns: %" PetscInt_FMT " distinct rows (%" PetscInt_FMT " offsets), 16 bits per row instead of %.0f bits per nonzero\n", pat->npat, entries, (double)(8 * index_bytes)));
  } else PetscCall(PetscInfo(A, "Column indices kept: %s\n", fail ? "more distinct rows than the row-pattern dictionary holds" : "row patterns would not save bytes"));
  for (PetscInt t = 0; t < T; t++) PetscCall(PetscFree(remap[t]));
  PetscCall(PetscFree(remap));
  PetscCall(PetscFree(rowpat));
  PetscCall(PetscFree(tb));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  MatCSRKStructureFindPatterns - replaces the column indices of a CPU structure by row patterns where they fit and
  save bytes (st unchanged otherwise); aj: the AIJ columns of a natural-order structure, which then needs no offsets
  of its own, else NULL
*/
PetscErrorCode MatCSRKStructureFindPatterns(Mat A, MatCSRKStructure *st, const PetscInt *aj)
{
  MatCSRKRowPatterns pat;

  PetscFunctionBegin;
  PetscCall(MatCSRKFindRowPatterns(A, st, aj, st->coloff || (aj && st->bw_after <= CSRK_COLOFF_MAX) ? 2.0 : 4.0, &pat));
  if (!pat.rowpat) PetscFunctionReturn(PETSC_SUCCESS);
  st->npat   = pat.npat;
  st->rowpat = pat.rowpat;
  st->patptr = pat.patptr;
  st->patoff = pat.patoff;
  PetscCall(PetscFree(st->coloff));
  if (!st->shared) PetscCall(PetscFree(st->colidx));
  st->index_bytes = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}
