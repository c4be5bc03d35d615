/*
   When a CPU block builds its CSR-k structure and copies new values into it: the set-up budget (rent, then rent to own;
   docs/design.md, "Set-up budget").

   The structure costs a build and a copy of the values after each change, which only faster products pay back, and a
   solve does not know its length. So a block multiplies with PETSc's AIJ kernel ("rent") until the products since the
   last change would have paid for the set-up at CSRK_SETUP_BUDGET of their time. One thread in the user's order whose
   rows make row slices does better: its build only allocates, and the pattern search and the copy into slices come a
   part at a product, paid for by what the parts before saved ("rent to own", CSRKBudgetFillPart()). Whole builds wait
   for counts of products, not seconds, so that the blocks of an MPI matrix build at the same product; a built
   structure is compared with AIJ's own kernel (and, with row nodes, with its loop without them) in interleaved
   products on each rank, and the fastest kept (CSRKBudgetJudge()). Eager set-up is this budget without the waits:
   built whole at the first product, refreshed at the first product after a change, kept uncompared. The off-process
   block of an MPI matrix runs AIJ's product (compressed rows); the auto ordering's check of a reordering waits for a
   count of its own.
*/
#include "csrkimpl.h"
#include <string.h>

#define CSRK_SETUP_BUDGET     0.05 /* fraction of the product time a set-up may spend (about 3 % of a CG solve's time) */
#define CSRK_BUILD_PRODUCTS   7.0  /* expected cost of a build in the user's order on several threads, in AIJ products (docs/design.md) */
#define CSRK_ONE_PRODUCTS     1.0  /* the same on one thread without row slices (row nodes, or the AIJ loop) */
#define CSRK_PARTS_PRODUCTS   1.0  /* the same with row slices, found and filled a part at a product: allocations (a few on a small block) */
#define CSRK_FILL_PRODUCTS    6.0  /* expected cost of finding and filling the slices, until a part of it was timed */
#define CSRK_FILL_PARTS       32   /* parts of that fill; also the least share of the nonzeros a part of a product is timed on */
#define CSRK_REORDER_PRODUCTS 60.0 /* expected cost of the auto ordering's check of a reordering */
#define CSRK_REFRESH_PRODUCTS 1.0  /* expected cost of a value refresh */
#define CSRK_SYMMETRIC_PRODUCTS 7.0 /* expected cost of the symmetric half's build, its check of the symmetry (docs/design.md, "The symmetric half") */
#define CSRK_SYMMETRIC_REFRESH_PRODUCTS 4.0 /* the same of its value refresh, which checks the values again through the mirrors the build found */
#define CSRK_JUDGE_PRODUCTS   8    /* products of each kind (AIJ's kernel, the structure, ...) before a new structure is kept or dropped */
#define CSRK_JUDGE_OUT        1.2  /* a candidate this much slower than the fastest, after 2 products of each, leaves the comparison: its products cost */
#define CSRK_JUDGE_GAIN       1.03 /* a structure is kept only this much faster than AIJ's kernel: a smaller lead is within the noise of the comparison, and a wrong keep makes the run slower than aij */
#define CSRK_BUILD_FLOOR      20e-6 /* seconds a build costs at least (allocations; docs/design.md, "Two costs that a small block does not repay") */

/* eager: the budget that does not wait (nor compare, nor drop what it built, nor fill by parts) */
static inline PetscBool CSRKEager(const Mat_SeqCSRK *sp)
{
  return (PetscBool)(sp->opt.setup == MAT_CSRK_SETUP_EAGER);
}

/* the products to wait for a set-up of this expected cost */
static inline PetscInt CSRKBudgetWait(const Mat_SeqCSRK *sp, PetscReal products)
{
  return CSRKEager(sp) ? 0 : (PetscInt)(products / CSRK_SETUP_BUDGET + 0.5);
}

/* whether a build of this expected cost (in AIJ products) waits still: its cost is at least CSRK_BUILD_FLOOR seconds,
   the allocations of any build, which the products of a small block (a coarse level of a multigrid) take thousands
   of to pay for at the budget. The products are counted since the values last changed (or the pattern): values that
   change every few products (a Newton step's Jacobian on the levels of a multigrid) would have the structure filled
   and refilled at each change without the products to pay for it */
static inline PetscBool CSRKBudgetBuildWaits(const Mat_SeqCSRK *sp, PetscReal products)
{
  const MatCSRKBudget *b = &sp->budget;

  if (b->tbase > 0) products = PetscMax(products, CSRK_BUILD_FLOOR / b->tbase);
  return (PetscBool)(b->nvalues < CSRKBudgetWait(sp, products));
}

/* A new nonzero pattern (or new options): nothing known of its products yet */
static void CSRKBudgetNewPattern(MatCSRKBudget *b, const MatCSRKOptions *opt)
{
  const PetscInt nbase = b->nbase, nfast = b->nfast; /* the counts of MatCSRKGetInfo() go on */

  memset(b, 0, sizeof(*b)); /* the fill too: the structure was dropped with it */
  b->nbase   = nbase;
  b->nfast   = nfast;
  b->cand    = -1;
  b->reorder = (PetscBool)(opt->ordering == MAT_CSRK_ORDERING_AUTO && opt->setup != MAT_CSRK_SETUP_EAGER);
}

/* the nonzeros of the AIJ block A */
static PetscErrorCode CSRKNonzeros(Mat A, PetscInt *nz)
{
  const PetscInt *ai;

  PetscFunctionBegin;
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, NULL, NULL, NULL));
  *nz = ai[A->rmap->n];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* whether the slices of st are being filled a part at a product */
static inline PetscBool CSRKFilling(const MatCSRKBudget *b, const MatCSRKStructure *st)
{
  return (PetscBool)(b->fill.parts && b->fill.rfill < st->m);
}

/* MatSeqCSRKDropStructure - the structure of A freed, with its fill by parts: a row-pattern search under way, which
   the structure's patptr and patoff point into */
PetscErrorCode MatSeqCSRKDropStructure(Mat A)
{
  Mat_SeqCSRK *sp = (Mat_SeqCSRK *)A->spptr;

  PetscFunctionBegin;
  if (sp->budget.fill.patsearch && sp->st) sp->st->patptr = NULL, sp->st->patoff = NULL;
  PetscCall(PetscFree(sp->budget.fill.patsearch));
  PetscCall(PetscMemzero(&sp->budget.fill, sizeof(sp->budget.fill)));
  PetscCall(MatCSRKStructureDestroy(&sp->st));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* whether AIJ's own kernel for A is its inode kernel (consecutive rows with one column list multiplied together):
   AIJ's loop over the AIJ arrays is then not AIJ's kernel, and may be faster or slower than it */
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

/* the first rows of a block of m rows that the probes read: a part's worth, at least 32 slices' worth */
static inline PetscInt CSRKProbeRows(PetscInt m)
{
  return PetscMin(m, PetscMax((m + CSRK_FILL_PARTS - 1) / CSRK_FILL_PARTS, 32 * CSRK_SLICE));
}

/*
   The probe of a block about to be built by parts: its first rows (a part's worth, at least 32 slices' worth),
   before anything is allocated. Where fewer than half of them make row slices, the first part would stop the fill
   (CSRKBudgetFillPart()): the block is built without slices (b->noslices) where half of them make row nodes, and
   not at all (b->declined) where they do not either, since its products would then be AIJ's own loop.
*/
static PetscErrorCode CSRKBudgetProbe(Mat A, Mat_SeqCSRK *sp)
{
  MatCSRKBudget  *b = &sp->budget;
  const PetscInt *ai, *aj;
  PetscInt        m, rows, nsliced, nnoderows = 0;

  PetscFunctionBegin;
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, NULL, NULL));
  m       = A->rmap->n;
  rows    = CSRKProbeRows(m);
  nsliced = CSRKProbeRuns(ai, aj, m, rows, CSRK_SLICE, PETSC_TRUE);
  if (2 * nsliced >= rows) PetscFunctionReturn(PETSC_SUCCESS);
  if (sp->opt.feature[MAT_CSRK_ROW_NODES]) nnoderows = CSRKProbeRuns(ai, aj, m, rows, CSRK_NODE_MAX, PETSC_FALSE);
  b->noslices = PETSC_TRUE;
  /* where AIJ runs its inode kernel, the loop without nodes is another kernel, which the comparison after the build
     judges (-mat_csrk_row_nodes 0) */
  b->declined = (PetscBool)(2 * nnoderows < rows && !CSRKAIJInodes(A) && !MatCSRKSymmetricMayApply(&sp->opt, m, A->cmap->n));
  PetscCall(PetscInfo(A, "Set-up budget: %" PetscInt_FMT " of the first %" PetscInt_FMT " rows in row slices, %" PetscInt_FMT " in row nodes: %s\n", nsliced, rows, nnoderows, b->declined ? "the structure would run AIJ's own loop, not built for this nonzero pattern" : "built without row slices (row nodes, or a symmetric half where the block is symmetric)"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   Whether the one-thread build about to come is expected to try the symmetric half (a square block whose first rows
   do not repeat the values of a row just before within row nodes, as the nodes of one element matrix do: those keep
   their value lists instead, at the cost of a plain build). Probed once per nonzero pattern, on the rows CSRKBudgetProbe() reads.
*/
static PetscErrorCode CSRKBudgetExpectsHalf(Mat A, Mat_SeqCSRK *sp, const MatCSRKOptions *opt, PetscBool *half)
{
  MatCSRKBudget     *b = &sp->budget;
  const PetscInt    *ai, *aj;
  PetscScalar       *aa;
  PetscInt           m = A->rmap->n, rows, nrepeat = 0;

  PetscFunctionBegin;
  if (!b->halfprobe) {
    b->halfprobe = -1;
    if (MatCSRKSymmetricMayApply(opt, m, A->cmap->n)) {
      PetscBool next;

      PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, NULL));
      rows = CSRKProbeRows(m);
      next = (PetscBool)(rows > 1 && CSRKSameRows(ai, aj, 0, 1, PETSC_FALSE));
      for (PetscInt r = 1; r < rows; r++) {
        const PetscInt  len  = ai[r + 1] - ai[r];
        const PetscBool prev = next; /* rows r - 1 and r share their columns */

        /* value lists are row nodes' (a constant-coefficient scrambled stencil repeats values in rows of their own
           columns, which no node takes) */
        next = (PetscBool)(r + 1 < m && CSRKSameRows(ai, aj, r, r + 1, PETSC_FALSE));
        if (!prev && !next) continue;
        for (PetscInt s = 1; s <= PetscMin(r, CSRK_NODE_MAX); s++)
          if (len && ai[r - s + 1] - ai[r - s] == len && !memcmp(aa + ai[r], aa + ai[r - s], sizeof(PetscScalar) * (size_t)len)) {
            nrepeat++;
            break;
          }
      }
      b->halfprobe = 8 * nrepeat < rows ? 1 : -1;
      PetscCall(PetscInfo(A, "Set-up budget: %" PetscInt_FMT " of the first %" PetscInt_FMT " rows repeat a row just before: %s\n", nrepeat, rows, b->halfprobe > 0 ? "the symmetric half is tried once the products pay for its cost" : "row nodes with value lists expected first"));
    }
  }
  *half = (PetscBool)(b->halfprobe > 0);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* whether the products of st would be AIJ's own loop over AIJ's own arrays (one thread, the user's order, 32-bit
   column indices, no row slices, patterns or nodes): such a structure cannot be faster than AIJ's kernel unless that
   is AIJ's inode kernel, and judging it costs products */
static inline PetscBool CSRKRunsAIJLoop(const MatCSRKStructure *st)
{
  return (PetscBool)(st->nthreads == 1 && !st->perm && st->variant == &MatCSRKVariantColumns32);
}

/* A structure that would run AIJ's own loop where AIJ's kernel is not its inode kernel is dropped for this nonzero
   pattern (why: what it lacks), unless eager (a user who wants it anyway sets -mat_csrk_setup eager) */
static PetscErrorCode CSRKBudgetDropAIJLoop(Mat A, Mat_SeqCSRK *sp, const char *why)
{
  PetscFunctionBegin;
  if (CSRKEager(sp) || !CSRKRunsAIJLoop(sp->st) || CSRKAIJInodes(A)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscInfo(A, "Set-up budget: %s: the structure would run AIJ's own loop, dropped for this nonzero pattern\n", why));
  PetscCall(MatSeqCSRKDropStructure(A));
  sp->budget.declined = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Builds the structure for the current pattern and values of A with the options opt, its row slices filled by parts
   where the plan takes them (not eager); its time is the fill's first expense. A structure that would run AIJ's loop is
   not kept (a user who wants it anyway sets -mat_csrk_setup eager) */
static PetscErrorCode CSRKBudgetBuild(Mat A, Mat_SeqCSRK *sp, const MatCSRKOptions *opt)
{
  MatCSRKBudget *b = &sp->budget;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  PetscCall(MatSeqCSRKDropStructure(A));
  PetscCall(MatCSRKStructureBuild(A, opt, CSRKEager(sp) ? NULL : &b->fill, -1, &sp->st));
  PetscCall(PetscObjectStateGet((PetscObject)A, &sp->state));
  sp->nbuilds++;
  PetscCall(PetscTime(&t1));
  b->nfastst = 0;
  b->wjudged = PETSC_FALSE;
  b->ncand   = 0;
  b->cand    = -1;
  b->spent   = t1 - t0;
  b->saved   = 0;
  b->nwait   = 0;
  PetscCall(PetscInfo(A, "Set-up budget: structure built after %" PetscInt_FMT " products in %g s (%g AIJ products)%s\n", b->npattern, t1 - t0, b->tbase > 0 ? (t1 - t0) / b->tbase : 0, b->fill.parts ? ", its row slices to be filled a part at a product" : ""));
  PetscCall(CSRKBudgetDropAIJLoop(A, sp, "no row slices, row nodes, symmetric half or reordering"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   The comparison of a structure just built (not one whose slices are filled by parts, which compares its filled rows
   within each product): its products alternate between AIJ's own kernel, the structure, and, where it has row nodes,
   the structure's loop without them, CSRK_JUDGE_PRODUCTS of each, so that a busy machine slows all of them alike; the
   fastest is kept, a structure only where it leads AIJ's kernel by CSRK_JUDGE_GAIN. AIJ's kernel is its inode kernel
   where AIJ found inodes: row nodes do the same work in another order, and which of the three is fastest depends on
   the CPU and the matrix (docs/design.md, "Row nodes"). A candidate that is CSRK_JUDGE_OUT slower than the fastest
   once each has run twice leaves the comparison early, so that a clearly slower kernel costs 2 products, not 8. AIJ's
   kernel, the reference, stays to the end. The candidate of the next product, where the comparison is on; cand 0:
   AIJ's kernel (no structure).
*/
static inline PetscInt CSRKBudgetJudgeCandidate(Mat A, Mat_SeqCSRK *sp)
{
  MatCSRKBudget          *b  = &sp->budget;
  const MatCSRKStructure *st = sp->st;

  if (CSRKEager(sp) || b->judged || b->wjudged || CSRKFilling(b, st)) return -1;
  if (!b->ncand) { /* the first product of the comparison (of a structure however built) */
    /* the loop without row nodes, or without the symmetric half where AIJ's kernel is its inode kernel (else that
       loop is AIJ's own) */
    b->ncand = st->variant == &MatCSRKVariantNodes || (st->variant == &MatCSRKVariantSymmetric && CSRKAIJInodes(A)) ? 3 : 2;
    b->jnext = 0;
    b->jout  = 0;
    for (PetscInt c = 0; c < 3; c++) b->tjudge[c] = 0, b->njudge[c] = 0;
  }
  while (b->jout & (1 << b->jnext)) b->jnext = (b->jnext + 1) % b->ncand;
  return b->jnext;
}

/* a product of the comparison, candidate c, took t seconds; after the last one, the fastest candidate is kept */
static PetscErrorCode CSRKBudgetJudge(Mat A, Mat_SeqCSRK *sp, PetscInt c, PetscLogDouble t)
{
  MatCSRKBudget  *b = &sp->budget;
  const char     *what[3] = {"AIJ's kernel", "the structure", "the structure's loop without them"};
  PetscInt        best = 0;
  PetscLogDouble *tj      = b->tjudge;
  PetscLogDouble  fastest = PETSC_MAX_REAL;
  PetscInt        nmin    = PETSC_MAX_INT;

  PetscFunctionBegin;
  b->cand = -1;
  if (!b->ncand) PetscFunctionReturn(PETSC_SUCCESS); /* no comparison begun (a zeroed budget reads candidate 0) */
  tj[c]    = tj[c] > 0 ? PetscMin(tj[c], t) : t;
  b->jnext = (c + 1) % b->ncand;
  b->njudge[c]++;
  for (PetscInt k = 0; k < b->ncand; k++)
    if (!(b->jout & (1 << k))) {
      nmin = PetscMin(nmin, b->njudge[k]);
      if (b->njudge[k]) fastest = PetscMin(fastest, tj[k]);
    }
  /* a clearly slower candidate leaves once every one has run twice */
  if (nmin >= 2)
    for (PetscInt k = 1; k < b->ncand; k++)
      if (!(b->jout & (1 << k)) && tj[k] > CSRK_JUDGE_OUT * fastest) b->jout |= 1 << k;
  if (!sp->st) PetscFunctionReturn(PETSC_SUCCESS);
  /* done when every candidate left has run CSRK_JUDGE_PRODUCTS times, or only AIJ's kernel is left */
  nmin = PETSC_MAX_INT;
  for (PetscInt k = 0; k < b->ncand; k++)
    if (!(b->jout & (1 << k))) nmin = PetscMin(nmin, b->njudge[k]);
  if (nmin < CSRK_JUDGE_PRODUCTS && b->jout != (1 << b->ncand) - 2) PetscFunctionReturn(PETSC_SUCCESS);
  b->wjudged = PETSC_TRUE;
  for (PetscInt k = 1; k < b->ncand; k++)
    if (!(b->jout & (1 << k)) && (best == 0 ? CSRK_JUDGE_GAIN * tj[k] < tj[0] : tj[k] < tj[best])) best = k;
  if (b->ncand > 2) PetscCall(PetscInfo(A, "Set-up budget: best product %g us with AIJ's kernel%s, %g us with the structure's %s, %g us without them: %s kept%s\n", 1e6 * tj[0], CSRKAIJInodes(A) ? " (inodes)" : "", 1e6 * tj[1], sp->st->variant == &MatCSRKVariantNodes ? "row nodes" : "symmetric half", 1e6 * tj[2], what[best], best ? "" : ", structure dropped for this nonzero pattern"));
  else PetscCall(PetscInfo(A, "Set-up budget: best product %g us with AIJ's kernel%s, %g us with the structure (%s): %s kept%s\n", 1e6 * tj[0], CSRKAIJInodes(A) ? " (inodes)" : "", 1e6 * tj[1], sp->st->variant->name, what[best], best ? "" : ", structure dropped for this nonzero pattern"));
  if (best == 0) {
    PetscCall(MatSeqCSRKDropStructure(A));
    b->declined = PETSC_TRUE;
  } else if (best == 2) { /* the loop without the nodes or the half */
    PetscCall(MatCSRKVariantFree(sp->st->variant, sp->st));
    sp->st->variant = MatCSRKVariantIndexLoop(sp->st);
    sp->st->nnodes = sp->st->nnoderows = sp->st->nvalued = 0;
  }
  if (sp->st) sp->st->plainloop = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The auto ordering's second step: reorder a far-from-banded matrix (the build's own check then compares the product
   in both orders and keeps the faster) */
static PetscErrorCode CSRKBudgetReorder(Mat A, Mat_SeqCSRK *sp)
{
  const PetscInt *ai, *aj;
  PetscInt        m, n, bw;
  PetscReal       dist;

  PetscFunctionBegin;
  sp->budget.reorder = PETSC_FALSE;
  PetscCall(MatGetSize(A, &m, &n));
  if (m != n) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, NULL, NULL));
  MatCSRKDistances(m, ai, aj, 1, &bw, &dist);
  if (!CSRK_AUTO_SCRAMBLED(dist, m)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscInfo(A, "Set-up budget: mean |i-j| %g for %" PetscInt_FMT " rows, the auto ordering's check of a reordering runs\n", (double)dist, m));
  PetscCall(CSRKBudgetBuild(A, sp, &sp->opt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* whether the account of the fill allows its next part now (the rule of CSRKBudgetFillPart() below) */
static inline PetscBool CSRKBudgetPartDue(const Mat_SeqCSRK *sp, const MatCSRKStructure *st)
{
  const MatCSRKBudget *b    = &sp->budget;
  const PetscInt       rows = (st->m + CSRK_FILL_PARTS - 1) / CSRK_FILL_PARTS;
  const PetscReal      est  = b->tpart > 0 ? b->tpart * rows : CSRK_FILL_PRODUCTS / CSRK_FILL_PARTS * b->tbase;

  if (CSRKEager(sp)) return PETSC_TRUE;
  if (b->nvalues < b->nwait) return PETSC_FALSE;
  return (PetscBool)!(b->tbase > 0 && b->spent - b->saved + est > CSRK_SETUP_BUDGET * b->nvalues * b->tbase);
}

/*
   The fill of the row slices a part at a product (rent to own). The rows filled so far multiply from the slices,
   the others with the AIJ loop, and each product times the two parts, so that the time the filled rows save is
   measured in the products themselves. A part (1/CSRK_FILL_PARTS of the rows) is filled before a product when the
   account of the fill, its set-up time less the time saved, stays within CSRK_SETUP_BUDGET of the products' time since
   the fill began (the build, or the change of the values it refills after): the products pay for the fill as it goes,
   so a long run has the slices after tens of products, and a short one pays at most the budget. The first part
   waits for the expected cost of a part; later ones are estimated from the last one's time. *filled: whether a part
   was filled.
*/
static PetscErrorCode CSRKBudgetFillPart(Mat A, Mat_SeqCSRK *sp, PetscBool *filled)
{
  MatCSRKBudget    *b  = &sp->budget;
  MatCSRKStructure *st = sp->st;
  MatCSRKFill      *fill = &b->fill;
  const PetscInt    rows = (st->m + CSRK_FILL_PARTS - 1) / CSRK_FILL_PARTS, r0 = fill->rfill;
  PetscLogDouble    t0, t1;
  PetscBool         fits;

  PetscFunctionBegin;
  *filled = PETSC_FALSE;
  if (!CSRKBudgetPartDue(sp, st)) PetscFunctionReturn(PETSC_SUCCESS);
  *filled = PETSC_TRUE;
  PetscCall(PetscLogEventBegin(MAT_CSRKBuild, A, 0, 0, 0));
  PetscCall(PetscTime(&t0));
  PetscCall(MatCSRKStructureFillSlicesTo(st, fill, b->tbase > 0 && !CSRKEager(sp) ? r0 + rows : st->m, &fits));
  PetscCall(PetscTime(&t1));
  PetscCall(PetscLogEventEnd(MAT_CSRKBuild, A, 0, 0, 0));
  b->spent += t1 - t0;
  if (fill->rfill > r0) b->tpart = (t1 - t0) / (fill->rfill - r0);
  /* the rows must fit the dictionary, and at least half of them make slices, as a build at once requires: judged on
     the rows filled so far while they are being numbered (a matrix of few slices has few in its first rows too) */
  if (!fits || (fill->patsearch && 2 * st->nsliced < fill->rfill) || (fill->rfill == st->m && 2 * st->nsliced < st->m)) {
    PetscCall(PetscInfo(A, "Set-up budget: %s after %" PetscInt_FMT " of %" PetscInt_FMT " rows: no row slices, the structure is built without them\n", fits ? "too few rows in slices" : "more distinct rows than the row-pattern dictionary holds", fill->rfill, st->m));
    PetscCall(MatSeqCSRKDropStructure(A));
    b->noslices = PETSC_TRUE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (fill->rfill == st->m) PetscCall(PetscInfo(A, "Set-up budget: row slices filled after %" PetscInt_FMT " products (%" PetscInt_FMT " of %" PetscInt_FMT " rows in slices), set-up %g s, saved %g s\n", b->nvalues, st->nsliced, st->m, b->spent, b->saved));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* New values for the structure, the one path of a value refresh: the copy gathered and the variant's own refresh
   (MatCSRKStructureRefreshValues()), or, for slices filled by parts, all rows back to the AIJ loop, to be filled again
   once the products since the change would pay for a whole fill at the savings the last fill measured: values that
   change every few products then run AIJ's kernel throughout (docs/design.md, "Set-up budget") */
static PetscErrorCode CSRKBudgetRefresh(Mat A, Mat_SeqCSRK *sp, PetscObjectState state)
{
  MatCSRKBudget       *b    = &sp->budget;
  const PetscLogDouble fill = b->tpart * sp->st->m, save = (b->rbase - b->rslices) * sp->st->nnz;

  PetscFunctionBegin;
  if (b->fill.parts) {
    b->nwait = b->tpart > 0 && b->rslices > 0 && save > 0 ? (PetscInt)PetscCeilReal(PetscMin(fill / save, 1e9)) : 0;
    if (b->nwait) PetscCall(PetscInfo(A, "Set-up budget: new values, the fill starts again after %" PetscInt_FMT " products (a whole fill %g s, %g s saved per product)\n", b->nwait, fill, save));
    b->fill.rfill = 0;
    if (b->fill.patsearch) sp->st->nsliced = 0; /* counted again as the rows are filled */
    b->spent   = 0;
    b->saved   = 0;
    b->nvalues = 0; /* already so after a change of the object state; not after MatRetrieveValues() */
  } else {
    const MatCSRKVariant *v = sp->st->variant;

    PetscCall(PetscLogEventBegin(MAT_CSRKBuild, A, 0, 0, 0));
    PetscCall(MatCSRKStructureRefreshValues(A, sp->st));
    PetscCall(PetscLogEventEnd(MAT_CSRKBuild, A, 0, 0, 0));
    if (sp->st->variant != v) PetscCall(CSRKBudgetDropAIJLoop(A, sp, "the new values are not symmetric, the symmetric half dropped")); /* (the half's refresh falls back to the index loop) */
  }
  sp->state = state;
  sp->nrefresh++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatSeqCSRKGetStructure - the structure the next product of A runs with (product), or that MatCSRKGetInfo() reports,
   built or refreshed now when the budget allows; NULL: this product runs with PETSc's AIJ kernel (always current: the
   AIJ arrays are the master copy)
*/
PetscErrorCode MatSeqCSRKGetStructure(Mat A, PetscBool product, MatCSRKStructure **st)
{
  Mat_SeqCSRK     *sp = (Mat_SeqCSRK *)A->spptr;
  MatCSRKBudget   *b  = &sp->budget;
  PetscObjectState state;

  PetscFunctionBegin;
  *st = NULL;
  /* the off-process block of an MPI matrix: its rows are mostly empty, which AIJ's compressed rows skip and a
     structure over every row does not */
  if (product && sp->offdiag && sp->opt.target == MAT_CSRK_TARGET_CPU) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(A->assembled, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "Not for unassembled matrix");
  if (sp->stale || sp->nzstate != A->nonzerostate) {
    PetscCall(MatSeqCSRKDropStructure(A));
    CSRKBudgetNewPattern(b, &sp->opt);
    sp->nzstate = A->nonzerostate;
    sp->stale   = PETSC_FALSE;
  }
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  if (b->seen != state) { /* a change of values not seen before: the count starts */
    b->seen    = state;
    b->nvalues = 0;
  }
  /* the symmetric half as a second build, once the products since the values changed pay for it, over the structure
     built at 20 products (or the AIJ kernel it lost to) */
  if (b->halfprobe == 1 && !CSRKEager(sp) && (sp->st || b->declined) && b->nvalues >= CSRKBudgetWait(sp, CSRK_SYMMETRIC_PRODUCTS)) {
    MatCSRKOptions opt = sp->opt;

    b->halfprobe = 2;
    b->declined  = PETSC_FALSE;
    if (opt.ordering == MAT_CSRK_ORDERING_AUTO) opt.ordering = MAT_CSRK_ORDERING_NATURAL;
    if (b->noslices) opt.feature[MAT_CSRK_ROW_SLICES] = PETSC_FALSE;
    PetscCall(PetscInfo(A, "Set-up budget: the symmetric half tried after %" PetscInt_FMT " products\n", b->nvalues));
    PetscCall(CSRKBudgetBuild(A, sp, &opt));
    if (!sp->st) PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (b->declined && !CSRKEager(sp)) {
    /* the natural order was no faster than AIJ: the auto ordering's check of a reordering still comes, as it would
       with the structure kept (a scrambled matrix gains by the reordering, not by the natural-order structure) */
    if (!b->reorder || b->npattern < CSRKBudgetWait(sp, CSRK_REORDER_PRODUCTS)) PetscFunctionReturn(PETSC_SUCCESS);
    b->declined = PETSC_FALSE;
    PetscCall(CSRKBudgetReorder(A, sp));
    if (!sp->st) {
      b->declined = PETSC_TRUE;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  if (!sp->st) {
    MatCSRKOptions opt = sp->opt;
    PetscReal      cost;
    PetscBool      parts;
    PetscInt       nz = 0, threads;

    if (opt.ordering == MAT_CSRK_ORDERING_AUTO && !CSRKEager(sp)) opt.ordering = MAT_CSRK_ORDERING_NATURAL; /* the reordering waits */
    if (b->noslices) opt.feature[MAT_CSRK_ROW_SLICES] = PETSC_FALSE;
    /* the shortest wait (the build floor included), before the nonzero count, a lookup, is asked for */
    if (CSRKBudgetBuildWaits(sp, PetscMin(CSRK_ONE_PRODUCTS, CSRK_PARTS_PRODUCTS))) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCall(CSRKNonzeros(A, &nz));
    threads = MatCSRKKernelThreads(&opt, nz);
    /* one thread in the natural order: whether the plan fills row slices by parts (they are probed first) */
    parts = (PetscBool)(opt.ordering == MAT_CSRK_ORDERING_NATURAL && threads == 1 && MatCSRKPlanOneThreadSlices(&opt));
    if (opt.ordering != MAT_CSRK_ORDERING_NATURAL) cost = CSRK_REORDER_PRODUCTS;
    else if (threads > 1) cost = CSRK_BUILD_PRODUCTS;
    else cost = parts ? CSRK_PARTS_PRODUCTS : CSRK_ONE_PRODUCTS;
    if (CSRKBudgetBuildWaits(sp, cost)) PetscFunctionReturn(PETSC_SUCCESS);
    if (parts && nz > 0 && !CSRKEager(sp)) {
      PetscCall(CSRKBudgetProbe(A, sp));
      if (b->declined) PetscFunctionReturn(PETSC_SUCCESS);
      if (b->noslices) opt.feature[MAT_CSRK_ROW_SLICES] = PETSC_FALSE;
    }
    /* one thread without row slices tries the symmetric half first: its build is then the cost to wait for */
    if (threads == 1 && opt.ordering == MAT_CSRK_ORDERING_NATURAL && !opt.feature[MAT_CSRK_ROW_SLICES] && nz > 0) {
      PetscBool half = PETSC_FALSE;

      PetscCall(CSRKBudgetExpectsHalf(A, sp, &opt, &half));
      if (half && CSRKBudgetBuildWaits(sp, CSRK_SYMMETRIC_PRODUCTS)) {
        /* where AIJ runs its inode kernel, the row nodes or the loop without them are built now and the half comes
           later, a second build (above); else nothing is built until the half's cost is paid */
        if (!CSRKAIJInodes(A)) PetscFunctionReturn(PETSC_SUCCESS);
        opt.feature[MAT_CSRK_SYMMETRIC_HALF] = PETSC_FALSE;
      } else if (half) b->halfprobe = 2;
      else opt.feature[MAT_CSRK_SYMMETRIC_HALF] = PETSC_FALSE; /* value lists expected: the half's check would be wasted */
    }
    PetscCall(CSRKBudgetBuild(A, sp, &opt));
    if (!sp->st) PetscFunctionReturn(PETSC_SUCCESS); /* it would have run AIJ's loop */
    /* the probe's rows were not the block's: no value lists after all, so the half comes as a second build */
    if (b->halfprobe == -1 && sp->st->variant == &MatCSRKVariantNodes && !sp->st->nvalued && MatCSRKSymmetricMayApply(&sp->opt, A->rmap->n, A->cmap->n)) b->halfprobe = 1;
  } else if (sp->state != state) {
    if (!b->fill.parts && b->nvalues < CSRKBudgetWait(sp, sp->st->variant == &MatCSRKVariantSymmetric ? CSRK_SYMMETRIC_REFRESH_PRODUCTS : CSRK_REFRESH_PRODUCTS)) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCall(CSRKBudgetRefresh(A, sp, state));
  } else if (b->reorder && b->npattern >= CSRKBudgetWait(sp, CSRK_REORDER_PRODUCTS)) PetscCall(CSRKBudgetReorder(A, sp));
  /* nothing filled and no part due: AIJ's own kernel, without attaching the AIJ arrays (a lookup per product) */
  if (b->fill.parts && !b->fill.rfill && !CSRKBudgetPartDue(sp, sp->st)) PetscFunctionReturn(PETSC_SUCCESS);
  /* a structure being compared with AIJ's kernel (and its loop without nodes): this product's candidate */
  b->cand = CSRKBudgetJudgeCandidate(A, sp);
  if (b->cand == 0) PetscFunctionReturn(PETSC_SUCCESS);
  sp->st->plainloop = (PetscBool)(b->cand == 2);
  PetscCall(MatCSRKStructureAttach(A, sp->st));
  if (CSRKFilling(b, sp->st)) {
    PetscBool filled = PETSC_TRUE;
    /* as many parts as the account allows (more than one once the filled rows have saved enough) */
    while (filled && sp->st && CSRKFilling(b, sp->st)) PetscCall(CSRKBudgetFillPart(A, sp, &filled));
    if (!sp->st || !b->fill.rfill) PetscFunctionReturn(PETSC_SUCCESS); /* nothing filled yet: AIJ's own kernel */
  }
  *st = sp->st;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A product while the slices are filled: the best time per nonzero of each part, timed where it holds at least
   1/CSRK_FILL_PARTS of the nonzeros, gives the time the filled rows saved; after CSRK_JUDGE_PRODUCTS such products
   the filled rows are compared with the AIJ loop, timed in the same products (which a busy machine slows alike) */
static PetscErrorCode CSRKBudgetRecordFilling(Mat A, const MatCSRKStructure *st)
{
  Mat_SeqCSRK          *sp    = (Mat_SeqCSRK *)A->spptr;
  MatCSRKBudget        *b     = &sp->budget;
  const CSRKIdx         nzf   = st->rowptr[b->fill.rfill], nzr = (CSRKIdx)st->nnz - nzf;
  const PetscLogDouble *tpart = b->tfill;

  PetscFunctionBegin;
  if (!(b->rbase > 0)) b->rbase = b->tbase / st->nnz; /* the whole AIJ products' */
  if ((PetscInt)nzr * CSRK_FILL_PARTS >= st->nnz) {
    b->rbase = PetscMin(b->rbase, tpart[1] / nzr);
    b->rloop = b->rloop > 0 ? PetscMin(b->rloop, tpart[1] / nzr) : tpart[1] / nzr;
  }
  if ((PetscInt)nzf * CSRK_FILL_PARTS >= st->nnz) b->rslices = b->rslices > 0 ? PetscMin(b->rslices, tpart[0] / nzf) : tpart[0] / nzf;
  if (b->rbase > 0 && b->rslices > 0) {
    /* against AIJ's own product: the filled rows' gain, less what the rows not filled lose where the fill's AIJ loop
       is slower than AIJ's own kernel. That loss is taken at most at half the budget's share of a product: the fill
       is what ends it, and a larger loss, which noise in the two minima can give, would stop the fill for good */
    const PetscLogDouble loss = b->rloop > 0 ? nzr * PetscMax(0, b->rloop - b->tbase / st->nnz) : 0;
    b->saved += nzf * (b->rbase - b->rslices) - PetscMin(loss, 0.5 * CSRK_SETUP_BUDGET * b->tbase);
    b->nfastst++;
  }
  if (b->judged || b->nfastst < CSRK_JUDGE_PRODUCTS) PetscFunctionReturn(PETSC_SUCCESS);
  if (b->rslices < b->rbase) {
    b->judged = PETSC_TRUE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscInfo(A, "Set-up budget: %g ns per nonzero from the row slices, %g ns with AIJ's loop: structure dropped for this nonzero pattern\n", 1e9 * b->rslices, 1e9 * b->rbase));
  PetscCall(MatSeqCSRKDropStructure(A));
  b->declined = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatSeqCSRKBudgetMult - y = A x (+ z) with the structure st that MatSeqCSRKGetStructure() gave: its kernel, or,
   while its slices are filled a part at a product (one thread over the AIJ arrays), the filled rows from the slices,
   block by block as the fill went, and the others with the AIJ loop, each part timed for the account of the fill
*/
PetscErrorCode MatSeqCSRKBudgetMult(Mat A, const MatCSRKStructure *st, const PetscScalar *x, const PetscScalar *z, PetscScalar *y)
{
  MatCSRKBudget *b     = &((Mat_SeqCSRK *)A->spptr)->budget;
  const PetscInt rfill = b->fill.rfill;
  PetscLogDouble t0, t1, t2;

  PetscFunctionBegin;
  if (!CSRKFilling(b, st)) {
    MatCSRKMultKernel(st, x, z, y);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscTime(&t0));
  MatCSRKSliceRowsFilled(st, rfill, x, z, y);
  PetscCall(PetscTime(&t1));
  MatCSRKRowsAIJ(st, rfill, st->m, x, z, y);
  PetscCall(PetscTime(&t2));
  b->tfill[0] = t1 - t0;
  b->tfill[1] = t2 - t1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatSeqCSRKBudgetRecord - accounts a product of A that took t seconds, with the structure st (NULL: AIJ's kernel)
*/
PetscErrorCode MatSeqCSRKBudgetRecord(Mat A, const MatCSRKStructure *st, PetscLogDouble t)
{
  Mat_SeqCSRK   *sp = (Mat_SeqCSRK *)A->spptr;
  MatCSRKBudget *b  = &sp->budget;

  PetscFunctionBegin;
  b->npattern++;
  b->nvalues++;
  if (!st) {
    b->nbase++;
    b->tbase = b->tbase > 0 ? PetscMin(b->tbase, t) : t;
    if (b->cand == 0) PetscCall(CSRKBudgetJudge(A, sp, 0, t));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  b->nfast++;
  if (CSRKEager(sp) || b->tbase == 0) PetscFunctionReturn(PETSC_SUCCESS);
  if (CSRKFilling(b, st)) {
    PetscCall(CSRKBudgetRecordFilling(A, st));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (b->cand > 0) PetscCall(CSRKBudgetJudge(A, sp, b->cand, t));
  PetscFunctionReturn(PETSC_SUCCESS);
}
