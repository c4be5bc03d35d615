/*
   When a CPU block builds its CSR-k structure and copies new values into it: the set-up budget (rent or buy).

   The structure costs a build (a pattern search and copies of the values, an ordering where one is chosen) and a copy
   of the values after each change, and only faster products pay that back. A solve of a few products cannot, a long
   one can, and neither knows its length in advance. So a block multiplies with PETSc's AIJ kernel ("rent") until the
   products since the last change would have paid for the set-up at CSRK_SETUP_BUDGET of their time: a build, expected
   at CSRK_BUILD_PRODUCTS AIJ products, waits for CSRK_BUILD_PRODUCTS / CSRK_SETUP_BUDGET products; a refresh of the
   values for CSRK_REFRESH_PRODUCTS / CSRK_SETUP_BUDGET. The set-up then never costs more than about that fraction of
   the product time, in a short solve or a long one, which runs with the structure from early on.

   The rule counts products, not seconds: the blocks of an MPI matrix, multiplied together, reach the count together
   and build at the same product. A rule on each rank's own timings had them build at different products, each
   build stalling the others at the next halo exchange (docs/design.md, "Set-up budget"). Timings serve one decision
   that each rank may take alone: a structure whose products are no faster than AIJ's is dropped until the nonzero
   pattern changes (the rank then runs AIJ's kernel, its fastest).

   The off-process block of an MPI matrix always runs AIJ's product (compressed rows). With the auto ordering the
   first build keeps the user's order; the check of a reordering (an ordering, a second build and the timing that
   confirms it, tens of products) waits for a count of its own.
*/
#include "csrkimpl.h"

#define CSRK_SETUP_BUDGET     0.05 /* fraction of the product time a set-up may spend (about 3 % of a CG solve's time) */
#define CSRK_BUILD_PRODUCTS   7.0  /* expected cost of a build in the user's order, in AIJ products (docs/design.md) */
#define CSRK_REORDER_PRODUCTS 60.0 /* expected cost of the auto ordering's check of a reordering */
#define CSRK_REFRESH_PRODUCTS 1.0  /* expected cost of a value refresh */
#define CSRK_JUDGE_PRODUCTS   8    /* products with a new structure before it is compared with AIJ's product */

/* the products to wait for a set-up of this expected cost */
static inline PetscInt CSRKBudgetWait(PetscReal products)
{
  return (PetscInt)(products / CSRK_SETUP_BUDGET + 0.5);
}

/* A new nonzero pattern (or new options): nothing known of its products yet */
static void CSRKBudgetNewPattern(MatCSRKBudget *b, const MatCSRKOptions *opt)
{
  b->tbase    = 0;
  b->tfast    = 0;
  b->npattern = 0;
  b->nvalues  = 0;
  b->nfastst  = 0;
  b->declined = PETSC_FALSE;
  b->reorder  = (PetscBool)(opt->ordering == MAT_CSRK_ORDERING_AUTO);
}

/* Builds the structure with the options opt */
static PetscErrorCode CSRKBudgetBuild(Mat A, Mat_SeqCSRK *sp, const MatCSRKOptions *opt)
{
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  PetscCall(MatSeqCSRKBuildStructure(A, opt));
  PetscCall(PetscTime(&t1));
  sp->budget.tfast   = 0;
  sp->budget.nfastst = 0;
  PetscCall(PetscInfo(A, "Set-up budget: structure built after %" PetscInt_FMT " products in %g s (%g AIJ products)\n", sp->budget.npattern, t1 - t0, sp->budget.tbase > 0 ? (t1 - t0) / sp->budget.tbase : 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The auto ordering's second step: reorder a far-from-banded matrix (the build's own check then compares the product
   in both orders and keeps the faster) */
static PetscErrorCode CSRKBudgetReorder(Mat A, Mat_SeqCSRK *sp)
{
  const PetscInt *ai, *aj;
  PetscScalar    *aa;
  PetscMemType    mtype;
  PetscInt        m, n, bw;
  PetscReal       dist;

  PetscFunctionBegin;
  sp->budget.reorder = PETSC_FALSE;
  PetscCall(MatGetSize(A, &m, &n));
  if (m != n) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, &mtype));
  MatCSRKDistances(m, ai, aj, 1, &bw, &dist);
  if (!CSRK_AUTO_SCRAMBLED(dist, m)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscInfo(A, "Set-up budget: mean |i-j| %g for %" PetscInt_FMT " rows, the auto ordering's check of a reordering runs\n", (double)dist, m));
  PetscCall(CSRKBudgetBuild(A, sp, &sp->opt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatSeqCSRKGetProductStructure - the structure the next product of A runs with, built or refreshed now when the
   budget allows; NULL: this product runs with PETSc's AIJ kernel (always current: the AIJ arrays are the master copy)
*/
PetscErrorCode MatSeqCSRKGetProductStructure(Mat A, MatCSRKStructure **st)
{
  Mat_SeqCSRK     *sp = (Mat_SeqCSRK *)A->spptr;
  MatCSRKBudget   *b  = &sp->budget;
  PetscObjectState state;

  PetscFunctionBegin;
  *st = NULL;
  /* the off-process block of an MPI matrix: its rows are mostly empty, which AIJ's compressed rows skip and a
     structure over every row does not */
  if (sp->offdiag && !sp->opt.gpu) PetscFunctionReturn(PETSC_SUCCESS);
  if (sp->opt.setup == MAT_CSRK_SETUP_EAGER) {
    PetscCall(MatSeqCSRKGetUpToDateStructure(A, st));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(A->assembled, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "Not for unassembled matrix");
  if (sp->stale || sp->nzstate != A->nonzerostate) {
    PetscCall(MatCSRKStructureDestroy(&sp->st));
    CSRKBudgetNewPattern(b, &sp->opt);
    sp->nzstate = A->nonzerostate;
    sp->stale   = PETSC_FALSE;
  }
  if (b->declined) {
    /* the natural order was no faster than AIJ: the auto ordering's check of a reordering still comes, as it would
       with the structure kept (a scrambled matrix gains by the reordering, not by the natural-order structure) */
    if (!b->reorder || b->npattern < CSRKBudgetWait(CSRK_REORDER_PRODUCTS)) PetscFunctionReturn(PETSC_SUCCESS);
    b->declined = PETSC_FALSE;
    PetscCall(CSRKBudgetReorder(A, sp));
    if (!sp->st) {
      b->declined = PETSC_TRUE;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  if (!sp->st) {
    MatCSRKOptions opt = sp->opt;

    if (opt.ordering == MAT_CSRK_ORDERING_AUTO) opt.ordering = MAT_CSRK_ORDERING_NATURAL; /* the reordering waits */
    if (b->npattern < CSRKBudgetWait(opt.ordering == MAT_CSRK_ORDERING_NATURAL ? CSRK_BUILD_PRODUCTS : CSRK_REORDER_PRODUCTS)) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCall(CSRKBudgetBuild(A, sp, &opt));
  } else if (sp->state != state) {
    if (b->seen != state) { /* a change not seen before: the count starts */
      b->seen    = state;
      b->nvalues = 0;
    }
    if (b->nvalues < CSRKBudgetWait(CSRK_REFRESH_PRODUCTS)) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCall(MatSeqCSRKRefreshStructure(A));
  } else if (b->reorder && b->npattern >= CSRKBudgetWait(CSRK_REORDER_PRODUCTS)) PetscCall(CSRKBudgetReorder(A, sp));
  PetscCall(MatCSRKStructureAttach(A, sp->st));
  *st = sp->st;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatSeqCSRKBudgetRecord - accounts a product of A that took t seconds, with the structure (fast) or AIJ's kernel
*/
PetscErrorCode MatSeqCSRKBudgetRecord(Mat A, PetscBool fast, PetscLogDouble t)
{
  Mat_SeqCSRK   *sp = (Mat_SeqCSRK *)A->spptr;
  MatCSRKBudget *b  = &sp->budget;

  PetscFunctionBegin;
  b->npattern++;
  b->nvalues++;
  if (!fast) {
    b->nbase++;
    b->tbase = b->tbase > 0 ? PetscMin(b->tbase, t) : t;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  b->nfast++;
  if (sp->opt.setup == MAT_CSRK_SETUP_EAGER || b->tbase == 0) PetscFunctionReturn(PETSC_SUCCESS);
  b->nfastst++;
  b->tfast = b->tfast > 0 ? PetscMin(b->tfast, t) : t;
  if (b->nfastst == CSRK_JUDGE_PRODUCTS && b->tfast >= b->tbase) {
    PetscCall(PetscInfo(A, "Set-up budget: product %g us with the structure, %g us with AIJ's kernel: structure dropped for this nonzero pattern\n", 1e6 * b->tfast, 1e6 * b->tbase));
    PetscCall(MatCSRKStructureDestroy(&sp->st));
    b->declined = PETSC_TRUE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
