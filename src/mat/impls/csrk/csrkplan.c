/*
   One plan from one table: what a CPU build will try, decided before it from the matrix, the options and the machine
   file (MatCSRKPlanExpect(), with the auto ordering's rule, the threads and the products the set-up waits for it),
   and how the build reads the column indices; the build takes the first entry of that list that applies and builds
   (csrkstructure.c). The product runs its loop once per thread; the view, -info and MatCSRKGetInfo() name it (docs/design.md, "One plan, one table of variants", "Set-up").
*/
#include "csrkimpl.h"
#include <string.h>

/* the probe of a block's rows before a build: its first rows, a part of them, at least 32 slices' worth */
#define CSRK_PROBE_PARTS    32
#define CSRK_PROBE_MIN_ROWS (32 * CSRK_SLICE)

/* Row slices before row patterns (they need them); over the column indices that the patterns leave, the symmetric
   half (which leaves row nodes with value lists to the nodes), row nodes, then the indices themselves: 16-bit offsets,
   and 32-bit columns, which always apply (no predicate) */
const MatCSRKVariant *const MatCSRKVariants[] = {&MatCSRKVariantSlices, &MatCSRKVariantPatterns, &MatCSRKVariantSymmetric, &MatCSRKVariantNodes, &MatCSRKVariantOffsets16, &MatCSRKVariantColumns32, NULL};

/* the loop over the column indices a structure has: what the symmetric half falls back to when its values change */
const MatCSRKVariant *MatCSRKVariantIndexLoop(const MatCSRKStructure *st)
{
  return st->coloff ? &MatCSRKVariantOffsets16 : &MatCSRKVariantColumns32;
}

/* a reordering and the build in its order cost about this many AIJ products (the set-up's budget: MatCSRKPlanWait()) */
#define CSRK_REORDER_PRODUCTS 60.0

/* MatCSRKKernelThreads - the threads of a structure of nnz nonzeros with the options opt: those set, else the default
   for blocks large enough to gain from them (below CSRK_THREADED_MIN_NNZ, starting a parallel region costs more than
   the product) */
#define CSRK_THREADED_MIN_NNZ 20000
PetscInt MatCSRKKernelThreads(const MatCSRKOptions *opt, PetscInt nnz)
{
  if (opt->nthreads > 0) return opt->nthreads;
  return nnz < CSRK_THREADED_MIN_NNZ ? 1 : MatCSRKDefaultThreads();
}

/* MatCSRKPlanSlicesOn - whether one thread in the natural order reads row patterns: only to make row slices over
   AIJ's own arrays */
PetscBool MatCSRKPlanSlicesOn(const MatCSRKOptions *opt)
{
  const PetscBool *on = opt->feature;

  return (PetscBool)(on[MAT_CSRK_COMPRESS_INDICES] && on[MAT_CSRK_ROW_PATTERNS] && on[MAT_CSRK_ROW_SLICES] && MatCSRKShareNatural(1));
}

/* whether AIJ's own kernel for A is its inode kernel (consecutive rows with one column list multiplied together):
   the loop over the AIJ arrays is then another kernel, which may be faster or slower than it */
static PetscBool CSRKAIJInodes(Mat A)
{
  PetscInt nodes = 0;

  if (MatInodeGetInodeSizes(A, &nodes, NULL, NULL)) return PETSC_FALSE;
  return (PetscBool)(nodes > 0 && nodes < A->rmap->n);
}

/* whether rows r and s of the CSR arrays (ai, aj) have one pattern (the same offsets from their rows: row slices) or
   one column list (row nodes) */
static inline PetscBool CSRKSameRows(const PetscInt *ai, const PetscInt *aj, PetscInt r, PetscInt s, PetscBool offsets)
{
  const PetscInt len = ai[r + 1] - ai[r], d = offsets ? s - r : 0;

  if (ai[s + 1] - ai[s] != len) return PETSC_FALSE;
  for (PetscInt j = 0; j < len; j++)
    if (aj[ai[s] + j] != aj[ai[r] + j] + d) return PETSC_FALSE;
  return PETSC_TRUE;
}

/* the rows among [0, rows) in runs of 'run' consecutive rows alike (run = CSRK_SLICE with offsets: row slices), or
   in runs of 2 to 'run' (run = CSRK_NODE_MAX without: row nodes), counted as the structure's own searches count them */
static PetscInt CSRKProbeRuns(const PetscInt *ai, const PetscInt *aj, PetscInt m, PetscInt rows, PetscInt run, PetscBool offsets)
{
  PetscInt n = 0;

  for (PetscInt r = 0; r < rows;) {
    PetscInt s = 1;
    while (s < run && r + s < m && CSRKSameRows(ai, aj, r, r + s, offsets)) s++;
    if (offsets ? s == run : s > 1) n += s;
    r += s;
  }
  return n;
}

/* the rows among [0, rows) in row nodes that repeat the values of a row of their node just before (the nodes of one
   element matrix with constant coefficients: value lists) */
static PetscInt CSRKProbeRepeats(const PetscInt *ai, const PetscInt *aj, const PetscScalar *aa, PetscInt m, PetscInt rows)
{
  PetscInt  n    = 0;
  PetscBool next = (PetscBool)(rows > 1 && CSRKSameRows(ai, aj, 0, 1, PETSC_FALSE));

  for (PetscInt r = 1; r < rows; r++) {
    const PetscInt  len  = ai[r + 1] - ai[r];
    const PetscBool prev = next; /* rows r - 1 and r share their columns */

    next = (PetscBool)(r + 1 < m && CSRKSameRows(ai, aj, r, r + 1, PETSC_FALSE));
    if (!prev && !next) continue;
    for (PetscInt s = 1; s <= PetscMin(r, CSRK_NODE_MAX); s++)
      if (len && ai[r - s + 1] - ai[r - s] == len && !memcmp(aa + ai[r], aa + ai[r - s], sizeof(PetscScalar) * (size_t)len)) {
        n++;
        break;
      }
  }
  return n;
}

/* Bandwidth max|i-j| and mean |i-j| of the nonzeros (the auto ordering's test) in the user's ordering, in parallel */
void MatCSRKDistances(PetscInt m, const PetscInt *ai, const PetscInt *aj, PetscInt nthreads, PetscInt *bw, PetscReal *mean)
{
  PetscReal sum = 0;
  PetscInt  b   = 0;

#if defined(_OPENMP)
  #pragma omp parallel for num_threads((int)nthreads) schedule(static) reduction(+ : sum) reduction(max : b)
#endif
  for (PetscInt r = 0; r < m; r++) {
    PetscInt64 s = 0; /* a dense row's sum does not fit 32 bits */
    for (PetscInt q = ai[r]; q < ai[r + 1]; q++) {
      const PetscInt d = PetscAbsInt(r - aj[q]);
      s += d;
      b = PetscMax(b, d);
    }
    sum += (PetscReal)s;
  }
  *bw   = b;
  *mean = sum / (PetscReal)PetscMax(ai[m], 1);
}

/*
  MatCSRKAutoReorders - the auto ordering's rule for a block of m x n with the CSR arrays (ai, aj), *meandist its mean
  |i-j|, *scattered whether most of them lie farther than m/16 from the diagonal, as in a random numbering (NULL: not
  asked): a reordering's two gathers of x and y pay only where the product misses the cache for x, which a mesh's own
  numbering, even with a large mean |i-j|, mostly does not (docs/design.md, "Default ordering"). The rule reads runs
  of CSRK_AUTO_RUN consecutive rows every CSRK_AUTO_STRIDE rows, a 16th of them: a pass over all of them cost the
  set-up of a stencil's slices a third of its time, and every 16th row alone as much as a pass (a cache miss a row).
*/
#define CSRK_AUTO_RUN    64
#define CSRK_AUTO_STRIDE 1024
PetscBool MatCSRKAutoReorders(PetscInt m, PetscInt n, const PetscInt *ai, const PetscInt *aj, PetscReal *meandist, PetscBool *scattered)
{
  const PetscInt window = MatCSRKMachineL2Rows() / 4, near = CSRK_SCATTER_NEAR(m);
  PetscInt64     sum = 0, cnt = 0, local = 0, far = 0;

  for (PetscInt r0 = 0; r0 < m; r0 += CSRK_AUTO_STRIDE) {
    for (PetscInt r = r0; r < PetscMin(r0 + CSRK_AUTO_RUN, m); r++) {
      for (PetscInt q = ai[r]; q < ai[r + 1]; q++) {
        const PetscInt d = PetscAbsInt(r - aj[q]);
        sum += d;
        local += d <= window;
        far += d > near;
      }
      cnt += ai[r + 1] - ai[r];
    }
  }
  *meandist = (PetscReal)sum / (PetscReal)PetscMax(cnt, 1);
  if (scattered) *scattered = (PetscBool)CSRK_SCATTERED(far, cnt);
  if (m != n || m < 2 || n <= MatCSRKMachineL2Rows() || !CSRK_AUTO_SCRAMBLED(*meandist, m)) return PETSC_FALSE;
  return (PetscBool)(2 * local < cnt);
}

/*
  MatCSRKPlanExpect - the entries a build of the block A with the options opt will try, in order, and its expected
  cost, decided before anything is built from the options, a probe of the block's first rows and the machine file.

  One thread in the user's order (one rank per core, the usual run) multiplies the AIJ arrays, where AIJ's kernel
  does too: a variant is tried there only where it reads fewer bytes by rule (row slices, which drop the column
  indices; row nodes whose values repeat, which drop values), or, a rival of AIJ's kernel (the symmetric half, row
  nodes, the plain loop where AIJ runs its inode kernel), where the machine file measured it at least
  CSRK_MACHINE_GAIN faster for this kind of block, best first: each entry's expect says which, from the probe. Nothing
  else would beat AIJ's kernel: the list is then empty and nothing is built. Eager set-up, threads and reorderings try
  the whole table; a row loop asked for (MatCSRKSetRowLoop()) is tried alone.
*/
static PetscErrorCode CSRKExpectEntries(Mat A, const MatCSRKOptions *opt, MatCSRKExpect *ex)
{
  const PetscBool *on = opt->feature;
  const PetscInt  *ai, *aj, m = A->rmap->n;
  PetscScalar     *aa;
  PetscInt         n = 0, nr = 0;
  PetscReal        dist      = 0;
  PetscBool        scattered = PETSC_FALSE, meshlike;
  MatCSRKProbe     probe = {0};
  struct {
    const MatCSRKVariant *v;
    PetscReal             gain;
  } rival[CSRK_MAX_VARIANTS];

  PetscFunctionBegin;
  PetscCall(PetscMemzero(ex, sizeof(*ex)));
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, NULL));
  ex->nthreads = MatCSRKKernelThreads(opt, ai[m]);
  ex->slices   = MatCSRKPlanSlicesOn(opt);
  /* the sample of |i-j| tells the auto ordering's rule and, below, whether the block is numbered as the machine file's
     matrices were: both only under the budget (eager set-up builds in the order asked for, with every entry) */
  if (opt->setup != MAT_CSRK_SETUP_EAGER) ex->reorder = (PetscBool)(MatCSRKAutoReorders(m, A->cmap->n, ai, aj, &dist, &scattered) && opt->ordering == MAT_CSRK_ORDERING_AUTO);
  if (ex->reorder) PetscCall(PetscInfo(A, "Set-up: mean |i-j| %g for %" PetscInt_FMT " rows, x beyond the L2 cache: a reordering to come\n", (double)dist, m));
  if (opt->rowloop >= 0) { /* the entry asked for, alone */
    ex->order[0] = MatCSRKVariants[opt->rowloop];
    ex->cost     = ex->order[0]->cost;
    if (ex->order[0]->rival) ex->rivals[0] = ex->order[0];
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (opt->setup == MAT_CSRK_SETUP_EAGER || ex->nthreads > 1 || (opt->ordering != MAT_CSRK_ORDERING_NATURAL && opt->ordering != MAT_CSRK_ORDERING_AUTO)) {
    for (const MatCSRKVariant *const *v = MatCSRKVariants; *v; v++) {
      ex->order[n++] = *v;
      if ((*v)->rival) ex->rivals[nr++] = *v;
      else ex->cost = PetscMax(ex->cost, (*v)->cost);
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!ai[m]) PetscFunctionReturn(PETSC_SUCCESS);
  probe.opt    = opt;
  probe.m      = m;
  probe.n      = A->cmap->n;
  probe.rows   = PetscMin(m, PetscMax(m / CSRK_PROBE_PARTS, CSRK_PROBE_MIN_ROWS));
  probe.inodes = CSRKAIJInodes(A);
  /* tutorials/tune measured the rivals on blocks in a mesh's numbering: in one numbered at random the symmetric
     half's writes to y scatter as far as the reads of x, beyond the window of rows that the auto ordering counts as
     near (docs/design.md, "Set-up") */
  meshlike = (PetscBool)!(scattered && m > MatCSRKMachineL2Rows() / 4);
  if (ex->slices) probe.slicerows = CSRKProbeRuns(ai, aj, m, probe.rows, CSRK_SLICE, PETSC_TRUE);
  if (on[MAT_CSRK_ROW_NODES]) probe.noderows = CSRKProbeRuns(ai, aj, m, probe.rows, CSRK_NODE_MAX, PETSC_FALSE);
  if (on[MAT_CSRK_ROW_VALUES] && 2 * probe.noderows >= probe.rows) probe.repeats = CSRKProbeRepeats(ai, aj, aa, m, probe.rows);
  /* the entries that read fewer bytes, in the table's order, then the rivals the machine file measured faster */
  for (const MatCSRKVariant *const *v = MatCSRKVariants; *v; v++) {
    const MatCSRKExpectRule rule = (*v)->expect ? (*v)->expect(&probe) : CSRK_EXPECT_NO;
    if (rule == CSRK_EXPECT_RULE) ex->order[n++] = *v;
    else if (rule == CSRK_EXPECT_RIVAL) {
      rival[nr].v      = *v;
      rival[nr++].gain = MatCSRKMachineGain((*v)->rival, probe.inodes, "");
    }
  }
  for (PetscInt i = 0; i < nr; i++) { /* best first (a stable selection: ties keep the table's order) */
    PetscInt b = -1;
    for (PetscInt j = 0; j < nr; j++)
      if (rival[j].gain >= CSRK_MACHINE_GAIN && (b < 0 || rival[j].gain > rival[b].gain)) b = j;
    if (b < 0) break;
    ex->rivals[i] = rival[b].v;
    if (meshlike) ex->order[n++] = rival[b].v;
    rival[b].gain = 0;
  }
  if (ex->rivals[0] && !meshlike) PetscCall(PetscInfo(A, "Set-up: most nonzeros lie farther than m/16 from the diagonal (mean |i-j| %g for %" PetscInt_FMT " rows): the machine file measured the rivals of AIJ's kernel in a mesh's numbering, not one like this: AIJ's kernel for them\n", (double)dist, m));
  if (n) { /* the first entry's cost: measured on this machine, where the file has it */
    const PetscReal measured = MatCSRKMachineGain(ex->order[0]->rival ? ex->order[0]->rival : ex->order[0]->name, probe.inodes, ".cost");
    ex->cost                 = measured > 0 ? measured : ex->order[0]->cost;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatCSRKPlanExpect - the expectation (above) with the products the set-up waits for it, told by -info */
PetscErrorCode MatCSRKPlanExpect(Mat A, const MatCSRKOptions *opt, MatCSRKExpect *ex)
{
  const PetscInt *ai;
  char            list[128];

  PetscFunctionBegin;
  PetscCall(CSRKExpectEntries(A, opt, ex));
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, NULL, NULL, NULL));
  ex->wait        = MatCSRKPlanWait(opt, ex->cost, ai[A->rmap->n]);
  ex->reorderwait = MatCSRKPlanWait(opt, CSRK_REORDER_PRODUCTS, ai[A->rmap->n]);
  PetscCall(MatCSRKExpectList(ex, list, sizeof(list)));
  if (ex->reorder) PetscCall(PetscInfo(A, "Set-up: the auto ordering's reordering after %" PetscInt_FMT " products\n", ex->reorderwait));
  if (ex->order[0]) PetscCall(PetscInfo(A, "Set-up: the structure (%s) is built after %" PetscInt_FMT " products\n", list, ex->wait));
  else PetscCall(PetscInfo(A, "Set-up: nothing would read fewer bytes than AIJ's kernel here, or beat it on this machine (%s): AIJ's kernel\n", MatCSRKMachineGain(NULL, PETSC_FALSE, "") > 0 ? "machine file" : "no machine file"));
  PetscFunctionReturn(PETSC_SUCCESS);
}
