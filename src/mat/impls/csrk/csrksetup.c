/*
   When a CPU block builds its CSR-k structure and copies new values into it: the set-up (docs/design.md, "Set-up").

   The structure costs a build, and a copy of the values after each change, which only faster products pay back, and a
   solve does not know its length. So a block multiplies with PETSc's AIJ kernel until the products since the last
   change would have paid for the set-up at CSRK_SETUP_BUDGET of their time, the set-up's cost being the expected
   variant's own, in AIJ products (MatCSRKPlanExpect()). Products are counted, never timed: every run of a program
   builds the same structure at the same product, so its results are the same bits run after run, and the blocks of
   an MPI matrix build at the same product. What is built is decided from the matrix, the options and the machine file
   before the build (csrkplan.c); a build that gives nothing better than AIJ's kernel is not made again for this
   pattern. Eager set-up builds at the first product and refreshes at the first product after a change. The
   off-process block of an MPI matrix runs AIJ's product (compressed rows); the auto ordering's reordering of a
   scrambled block waits for a count of its own.
*/
#include "csrkimpl.h"

#define CSRK_SETUP_BUDGET     0.05   /* fraction of the products' time a set-up may spend (about 3 % of a CG solve's time) */
#define CSRK_REORDER_PRODUCTS 60.0   /* expected cost of a reordering and the build in its order, in AIJ products */
#define CSRK_BUILD_FLOOR_NNZ  2.0e4  /* a build costs at least about the product of this many nonzeros (its allocations) */

/* the products to wait for a set-up of this expected cost on a block of nnz nonzeros: eager, none */
static PetscInt CSRKSetUpWait(const Mat_SeqCSRK *sp, PetscReal products, PetscInt nnz)
{
  if (sp->opt.setup == MAT_CSRK_SETUP_EAGER) return 0;
  products = PetscMax(products, CSRK_BUILD_FLOOR_NNZ / PetscMax(nnz, 1));
  return (PetscInt)(products / CSRK_SETUP_BUDGET + 0.5);
}

/* MatSeqCSRKDropStructure - the structure of A freed: AIJ's kernel until the next build */
PetscErrorCode MatSeqCSRKDropStructure(Mat A)
{
  Mat_SeqCSRK *sp = (Mat_SeqCSRK *)A->spptr;

  PetscFunctionBegin;
  PetscCall(MatCSRKStructureDestroy(&sp->st));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the set-up's work is the MatCSRKBuild event, and its time what the view reports: the same figure */
static PetscErrorCode CSRKSetUpBegin(Mat A, PetscLogDouble *t0)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(MAT_CSRKBuild, A, 0, 0, 0));
  PetscCall(PetscTime(t0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CSRKSetUpEnd(Mat A, PetscLogDouble t0)
{
  PetscLogDouble t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t1));
  ((Mat_SeqCSRK *)A->spptr)->setup_time += t1 - t0;
  PetscCall(PetscLogEventEnd(MAT_CSRKBuild, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the nonzeros of the AIJ block A */
static PetscInt CSRKNonzeros(Mat A)
{
  const PetscInt *ai;

  if (MatSeqAIJGetCSRAndMemType(A, &ai, NULL, NULL, NULL)) return 0;
  return ai[A->rmap->n];
}

/* the names of the entries expected, joined by commas */
static PetscErrorCode CSRKExpectedList(const MatCSRKExpect *ex, char *list, size_t len)
{
  PetscFunctionBegin;
  list[0] = 0;
  for (const MatCSRKVariant *const *v = ex->order; *v; v++) {
    PetscCall(PetscStrlcat(list, v == ex->order ? "" : ", ", len));
    PetscCall(PetscStrlcat(list, (*v)->name, len));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A new nonzero pattern (or new options): the expectation of its build, before anything is built */
static PetscErrorCode CSRKSetUpNewPattern(Mat A, Mat_SeqCSRK *sp)
{
  MatCSRKBudget *b = &sp->budget;
  char           list[128] = "";
  PetscLogDouble t0;

  PetscFunctionBegin;
  PetscCall(CSRKSetUpBegin(A, &t0));
  PetscCall(MatSeqCSRKDropStructure(A));
  b->npattern = b->nvalues = 0;
  b->seen                  = -1;
  PetscCall(MatCSRKPlanExpect(A, &sp->opt, &b->ex));
  b->expected = PETSC_TRUE;
  PetscCall(CSRKExpectedList(&b->ex, list, sizeof(list)));
  if (b->ex.reorder) PetscCall(PetscInfo(A, "Set-up: the auto ordering's reordering after %" PetscInt_FMT " products\n", CSRKSetUpWait(sp, CSRK_REORDER_PRODUCTS, CSRKNonzeros(A))));
  if (b->ex.order[0]) PetscCall(PetscInfo(A, "Set-up: the structure (%s) is built after %" PetscInt_FMT " products\n", list, CSRKSetUpWait(sp, b->ex.cost, CSRKNonzeros(A))));
  else PetscCall(PetscInfo(A, "Set-up: nothing would read fewer bytes than AIJ's kernel here, or beat it on this machine (%s): AIJ's kernel\n", MatCSRKMachineGain(NULL, PETSC_FALSE, "") > 0 ? "machine file" : "no machine file"));
  PetscCall(CSRKSetUpEnd(A, t0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* whether st's products would be AIJ's own loop over AIJ's own arrays, which the plan did not expect to beat AIJ's kernel */
static PetscBool CSRKRunsUnexpectedAIJLoop(const MatCSRKBudget *b, const MatCSRKStructure *st)
{
  if (!(st->nthreads == 1 && !st->perm && st->variant == &MatCSRKVariantColumns32)) return PETSC_FALSE;
  for (const MatCSRKVariant *const *v = b->ex.order; *v; v++)
    if (*v == &MatCSRKVariantColumns32) return PETSC_FALSE;
  return PETSC_TRUE;
}

/* builds the structure of A with the options opt and the entries ex; a build that gives no row loop, or AIJ's own
   loop where that was not expected, is dropped: nothing is built again for this pattern */
static PetscErrorCode CSRKSetUpBuild(Mat A, Mat_SeqCSRK *sp, const MatCSRKOptions *opt, const MatCSRKExpect *ex)
{
  PetscLogDouble t0;

  PetscFunctionBegin;
  PetscCall(CSRKSetUpBegin(A, &t0));
  PetscCall(MatSeqCSRKDropStructure(A));
  PetscCall(MatCSRKStructureBuild(A, opt, ex, &sp->st));
  PetscCall(PetscObjectStateGet((PetscObject)A, &sp->state));
  sp->nbuilds++;
  if (!sp->st->variant || CSRKRunsUnexpectedAIJLoop(&sp->budget, sp->st)) {
    PetscCall(PetscInfo(A, "Set-up: the build gives AIJ's own loop: AIJ's kernel for this pattern\n"));
    PetscCall(MatSeqCSRKDropStructure(A));
    sp->budget.ex.order[0] = NULL;
  }
  PetscCall(CSRKSetUpEnd(A, t0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the auto ordering's reordering: the whole table but the rivals of AIJ's kernel that the natural order's
   expectation left out (a block that RCM does not narrow stays in the natural order) */
static PetscErrorCode CSRKSetUpReorder(Mat A, Mat_SeqCSRK *sp)
{
  MatCSRKBudget *b = &sp->budget;
  MatCSRKExpect  ex;
  PetscInt       n = 0;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&ex, sizeof(ex)));
  for (const MatCSRKVariant *const *v = MatCSRKVariants; *v; v++) {
    PetscBool keep = (PetscBool)!(*v)->rival;
    for (const MatCSRKVariant *const *w = b->ex.order; *w && !keep; w++) keep = (PetscBool)(*w == *v);
    if (keep) ex.order[n++] = *v;
  }
  PetscCall(PetscInfo(A, "Set-up: the auto ordering's reordering after %" PetscInt_FMT " products\n", b->npattern));
  PetscCall(CSRKSetUpBuild(A, sp, &sp->opt, &ex));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* new values for the structure: the copy gathered and the variant's own refresh; a symmetric half whose values stopped
   being symmetric falls back to the plain loop, dropped where that is AIJ's own */
static PetscErrorCode CSRKSetUpRefresh(Mat A, Mat_SeqCSRK *sp, PetscObjectState state)
{
  PetscLogDouble t0;

  PetscFunctionBegin;
  PetscCall(CSRKSetUpBegin(A, &t0));
  PetscCall(MatCSRKStructureRefreshValues(A, sp->st));
  sp->state = state;
  sp->nrefresh++;
  if (CSRKRunsUnexpectedAIJLoop(&sp->budget, sp->st)) {
    PetscCall(PetscInfo(A, "Set-up: the new values are not symmetric, the symmetric half dropped: AIJ's kernel for this pattern\n"));
    PetscCall(MatSeqCSRKDropStructure(A));
    sp->budget.ex.order[0] = NULL;
  }
  PetscCall(CSRKSetUpEnd(A, t0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a new nonzero pattern or new options since the last product: its expectation */
static PetscErrorCode CSRKSetUpPattern(Mat A)
{
  Mat_SeqCSRK *sp = (Mat_SeqCSRK *)A->spptr;

  PetscFunctionBegin;
  PetscCheck(A->assembled, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "Not for unassembled matrix");
  if (sp->stale || sp->nzstate != A->nonzerostate || !sp->budget.expected) {
    sp->nzstate = A->nonzerostate;
    sp->stale   = PETSC_FALSE;
    PetscCall(CSRKSetUpNewPattern(A, sp));
  }
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
  PetscCall(CSRKExpectedList(&b->ex, list, len));
  *wait = sp->st || !b->ex.order[0] ? -1 : CSRKSetUpWait(sp, b->ex.cost, CSRKNonzeros(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   MatSeqCSRKSetUp - the structure the next product of A runs with, built or refreshed now when the products since the
   last change have paid for it (product: this call counts a product; else it only reports); NULL: the product runs
   PETSc's AIJ kernel (always current: the AIJ arrays are the master copy)
*/
PetscErrorCode MatSeqCSRKSetUp(Mat A, PetscBool product, MatCSRKStructure **st)
{
  Mat_SeqCSRK     *sp = (Mat_SeqCSRK *)A->spptr;
  MatCSRKBudget   *b  = &sp->budget;
  PetscObjectState state;
  PetscInt         nnz;

  PetscFunctionBegin;
  *st = NULL;
  /* the off-process block of an MPI matrix: its rows are mostly empty, which AIJ's compressed rows skip and a
     structure over every row does not */
  if (product && sp->offdiag) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CSRKSetUpPattern(A));
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  if (b->seen != state) { /* a change of values not seen before: the count starts again */
    b->seen    = state;
    b->nvalues = 0;
  }
  /* the products before this one pay */
  nnz = CSRKNonzeros(A);
  if (b->ex.reorder && b->npattern >= CSRKSetUpWait(sp, CSRK_REORDER_PRODUCTS, nnz)) {
    b->ex.reorder = PETSC_FALSE;
    PetscCall(CSRKSetUpReorder(A, sp));
  } else if (!sp->st && b->ex.order[0] && b->nvalues >= CSRKSetUpWait(sp, b->ex.cost, nnz)) {
    MatCSRKOptions opt = sp->opt;

    if (opt.ordering == MAT_CSRK_ORDERING_AUTO && opt.setup != MAT_CSRK_SETUP_EAGER) opt.ordering = MAT_CSRK_ORDERING_NATURAL; /* the reordering waits */
    PetscCall(CSRKSetUpBuild(A, sp, &opt, &b->ex));
  } else if (sp->st && sp->state != state && b->nvalues >= CSRKSetUpWait(sp, sp->st->variant->rcost, nnz)) PetscCall(CSRKSetUpRefresh(A, sp, state));
  if (product) b->npattern++, b->nvalues++;
  if (sp->st && sp->state == state) *st = sp->st;
  PetscFunctionReturn(PETSC_SUCCESS);
}
