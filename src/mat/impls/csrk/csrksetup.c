/*
   When a CPU block builds its CSR-k structure and copies new values into it: the set-up (docs/design.md, "Set-up").

   The structure costs a build, and a copy of the values after each change, which only faster products pay back, and a
   solve does not know its length. So a block multiplies with PETSc's AIJ kernel until the products since the last
   change would have paid for the set-up at CSRK_SETUP_BUDGET of their time, the set-up's cost being the expected
   variant's own, in AIJ products (MatCSRKPlanExpect(), MatCSRKPlanWait()). Products are counted, never timed: every run of a program
   builds the same structure at the same product, so its results are the same bits run after run, and the blocks of
   an MPI matrix build at the same product. What is built is decided from the matrix, the options and the machine file
   before the build (csrkplan.c); a build that gives nothing better than AIJ's kernel is not made again for this
   pattern. Eager set-up builds at the first product and refreshes at the first product after a change. The
   off-process block of an MPI matrix runs AIJ's product (compressed rows); the auto ordering's reordering of a
   scrambled block waits for a count of its own.
*/
#include "csrkimpl.h"

/* the auto ordering's reordering: the whole table but the rivals of AIJ's kernel that the machine file did not
   measure faster (a block that RCM does not narrow stays in the natural order) */
static void CSRKSetUpReorder(const MatCSRKBudget *b, MatCSRKExpect *ex)
{
  PetscInt n = 0;

  *ex = b->ex;
  for (const MatCSRKVariant *const *v = MatCSRKVariants; *v; v++) {
    PetscBool keep = (PetscBool)!(*v)->rival;
    for (const MatCSRKVariant *const *w = b->ex.rivals; *w && !keep; w++) keep = (PetscBool)(*w == *v);
    if (keep) ex->order[n++] = *v;
  }
  ex->order[n] = NULL;
}

/* a new nonzero pattern or new options since the last product: the structure dropped, the counts started again and
   the expectation of the next build made, before anything is built */
static PetscErrorCode CSRKSetUpPattern(Mat A)
{
  Mat_SeqCSRK   *sp = (Mat_SeqCSRK *)A->spptr;
  MatCSRKBudget *b  = &sp->budget;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCheck(A->assembled, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "Not for unassembled matrix");
  if (!sp->stale && sp->nzstate == A->nonzerostate && b->expected) PetscFunctionReturn(PETSC_SUCCESS);
  sp->nzstate = A->nonzerostate;
  sp->stale   = PETSC_FALSE;
  b->npattern = b->nvalues = 0;
  b->seen                  = -1;
  b->expected              = PETSC_TRUE;
  /* the set-up's work is the MatCSRKBuild event, and its time what the view reports: the same figure */
  PetscCall(PetscLogEventBegin(MAT_CSRKBuild, A, 0, 0, 0));
  PetscCall(PetscTime(&t0));
  PetscCall(MatCSRKStructureDestroy(&sp->st));
  PetscCall(MatCSRKPlanExpect(A, &sp->opt, &b->ex));
  PetscCall(PetscTime(&t1));
  sp->setup_time += t1 - t0;
  PetscCall(PetscLogEventEnd(MAT_CSRKBuild, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatSeqCSRKExpected - what the set-up of A will build, and after how many products since the values last changed
   (the view and MatCSRKGetInfo(), before a build; -1: none will come)
*/
PetscErrorCode MatSeqCSRKExpected(Mat A, char *list, size_t len, PetscInt *wait)
{
  Mat_SeqCSRK   *sp = (Mat_SeqCSRK *)A->spptr;
  MatCSRKBudget *b  = &sp->budget;

  PetscFunctionBegin;
  PetscCall(CSRKSetUpPattern(A));
  PetscCall(MatCSRKExpectList(&b->ex, list, len));
  *wait = sp->st || !b->ex.order[0] ? -1 : b->ex.wait;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatSeqCSRKSetUp - the structure the next product of A runs with, built or refreshed now when the products since the
   last change have paid for it (product: this call counts a product; else it only reports); NULL: the product runs
   PETSc's AIJ kernel (always current: the AIJ arrays are the master copy). What the set-up decides on its own comes
   first: the reordering's entries (never at a new pattern, whose count starts again), then the pattern's expectation.
   A build that gives no row loop, or a refresh that leaves a loop the plan did not expect (a symmetric half whose values
   stopped being symmetric, MatCSRKStructureRefreshValues()), gives AIJ's kernel: nothing is built again for this
   pattern.
*/
PetscErrorCode MatSeqCSRKSetUp(Mat A, PetscBool product, MatCSRKStructure **st)
{
  Mat_SeqCSRK     *sp = (Mat_SeqCSRK *)A->spptr;
  MatCSRKBudget   *b  = &sp->budget;
  MatCSRKOptions   opt;
  MatCSRKExpect    ex;
  PetscObjectState state;
  PetscLogDouble   t0, t1;
  PetscBool        reorder, build, refresh;

  PetscFunctionBegin;
  *st = NULL;
  /* the off-process block of an MPI matrix: its rows are mostly empty, which AIJ's compressed rows skip and a
     structure over every row does not */
  if (product && sp->offdiag) PetscFunctionReturn(PETSC_SUCCESS);
  reorder = (PetscBool)(!sp->stale && sp->nzstate == A->nonzerostate && b->expected && b->ex.reorder && b->npattern >= b->ex.reorderwait);
  if (reorder) CSRKSetUpReorder(b, &ex);
  PetscCall(CSRKSetUpPattern(A));
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  if (b->seen != state) { /* a change of values not seen before: the count starts again */
    b->seen    = state;
    b->nvalues = 0;
  }
  /* the products before this one pay; the auto ordering waits for its reordering */
  build   = (PetscBool)(reorder || (!sp->st && b->ex.order[0] && b->nvalues >= b->ex.wait));
  refresh = (PetscBool)(!build && sp->st && sp->state != state && b->nvalues >= MatCSRKPlanWait(&sp->opt, sp->st->variant->rcost, sp->st->nnz));
  if (build || refresh) {
    PetscCall(PetscLogEventBegin(MAT_CSRKBuild, A, 0, 0, 0));
    PetscCall(PetscTime(&t0));
    if (build) {
      opt = sp->opt;
      if (reorder) {
        b->ex.reorder = PETSC_FALSE;
        PetscCall(PetscInfo(A, "Set-up: the auto ordering's reordering after %" PetscInt_FMT " products\n", b->npattern));
      } else {
        ex = b->ex;
        if (opt.ordering == MAT_CSRK_ORDERING_AUTO && opt.setup != MAT_CSRK_SETUP_EAGER) opt.ordering = MAT_CSRK_ORDERING_NATURAL; /* the reordering waits */
      }
      PetscCall(MatCSRKStructureDestroy(&sp->st));
      PetscCall(MatCSRKStructureBuild(A, &opt, &ex, &sp->st));
      sp->nbuilds++;
      if (!sp->st) PetscCall(PetscInfo(A, "Set-up: the build gives AIJ's own loop: AIJ's kernel for this pattern\n"));
    } else {
      PetscCall(MatCSRKStructureRefreshValues(A, &b->ex, &sp->st));
      sp->nrefresh++;
    }
    if (!sp->st) b->ex.order[0] = NULL;
    sp->state = state;
    PetscCall(PetscTime(&t1));
    sp->setup_time += t1 - t0;
    PetscCall(PetscLogEventEnd(MAT_CSRKBuild, A, 0, 0, 0));
  }
  if (product) b->npattern++, b->nvalues++;
  if (sp->st && sp->state == state) *st = sp->st;
  PetscFunctionReturn(PETSC_SUCCESS);
}
