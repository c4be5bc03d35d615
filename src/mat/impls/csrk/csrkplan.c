/*
   One plan from one table: the CPU row loop of a structure is chosen once, at its build, as the first entry of a table
   of variants, preferred first, that applies under the plan and builds. The product runs its loop once per thread;
   the view, -info and MatCSRKGetInfo() name it (docs/design.md, "One plan, one table of variants").
*/
#include "csrkimpl.h"

/* Row slices before row patterns (they need them); over the column indices that the patterns leave, the symmetric
   half (which leaves row nodes with value lists to the nodes), row nodes, then the indices themselves: 16-bit offsets,
   and 32-bit columns, which always apply (no predicate) */
const MatCSRKVariant *const MatCSRKVariants[] = {&MatCSRKVariantSlices, &MatCSRKVariantPatterns, &MatCSRKVariantSymmetric, &MatCSRKVariantNodes, &MatCSRKVariantOffsets16, &MatCSRKVariantColumns32, NULL};

/* the loop over the column indices a structure has: what row nodes run without their nodes */
const MatCSRKVariant *MatCSRKVariantIndexLoop(const MatCSRKStructure *st)
{
  return st->coloff ? &MatCSRKVariantOffsets16 : &MatCSRKVariantColumns32;
}

/* MatCSRKPlanBegin - the target's decisions, the one place that reads it: the GPU type's host structure is its 32-bit
   columns, with the GPU model's level sizes and no timing of a reordering on the CPU (csrkstructure.c) */
void MatCSRKPlanBegin(const MatCSRKOptions *opt, MatCSRKFill *fill, MatCSRKPlan *plan)
{
  *plan = (MatCSRKPlan){.opt = opt, .cpu = (PetscBool)(opt->target == MAT_CSRK_TARGET_CPU), .fill = fill};
}

/* MatCSRKPlanOneThreadSlices - whether one thread in the natural order reads row patterns: only to make row slices over
   AIJ's own arrays, which the set-up budget fills a part at a product (its estimate of a build's cost asks this too) */
PetscBool MatCSRKPlanOneThreadSlices(const MatCSRKOptions *opt)
{
  const PetscBool *on = opt->feature;

  return (PetscBool)(opt->target == MAT_CSRK_TARGET_CPU && on[MAT_CSRK_COMPRESS_INDICES] && on[MAT_CSRK_ROW_PATTERNS] && on[MAT_CSRK_ROW_SLICES] && MatCSRKShareNatural(1));
}

/*
  MatCSRKPlanIndices - how the CPU kernels may read the column indices, decided before the arrays are filled: 16-bit
  offsets and row patterns save bytes where the threads together are bound by the memory; one thread in the natural
  order runs the AIJ loop over the AIJ arrays instead, measured faster there, unless the rows make slices, which the
  set-up budget fills a part at a product where it passes its fill. Measurements: docs/design.md, "Column indices",
  docs/performance.md.
*/
void MatCSRKPlanIndices(const MatCSRKStructure *st, const PetscInt *aj, MatCSRKPlan *plan)
{
  const PetscBool *on = plan->opt->feature;

  plan->aj        = aj;
  plan->onethread = (PetscBool)(!st->perm && st->nthreads == 1);
  plan->compress  = (PetscBool)(on[MAT_CSRK_COMPRESS_INDICES] && plan->cpu && !plan->onethread);
  plan->patterns  = (PetscBool)(on[MAT_CSRK_ROW_PATTERNS] && (plan->compress || (plan->onethread && MatCSRKPlanOneThreadSlices(plan->opt))));
  /* (a block with rows but no nonzeros, such as some ranks' blocks of GAMG's operators, has no values to fill: it
     takes the search at once, which finds nothing) */
  if (!(plan->patterns && plan->onethread && st->nnz > 0)) plan->fill = NULL;
}

/* MatCSRKPlanBuild - the first entry of the table that applies and builds becomes the structure's row loop */
PetscErrorCode MatCSRKPlanBuild(Mat A, MatCSRKPlan *plan, MatCSRKStructure *st)
{
  PetscFunctionBegin;
  st->variant = NULL;
  for (const MatCSRKVariant *const *v = MatCSRKVariants; *v && !st->variant; v++) {
    PetscBool built = PETSC_FALSE;

    if ((!plan->cpu && *v != &MatCSRKVariantColumns32) || ((*v)->applies && !(*v)->applies(plan, st))) continue;
    PetscCall((*v)->build(A, plan, st, &built));
    if (built) st->variant = *v;
  }
  PetscCheck(st->variant, PETSC_COMM_SELF, PETSC_ERR_PLIB, "No row loop for the CSR-k structure");
  PetscCall(PetscInfo(A, "Row loop: %s\n", st->variant->name));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The arrays of every structure, beside those of the variants */
static const MatCSRKArray CSRKCommon[] = {CSRK_ARRAY(rowptr, CSRK_LEN_M1, PETSC_TRUE), CSRK_ARRAY(val, CSRK_LEN_NNZ, PETSC_TRUE), CSRK_ARRAY(srptr, CSRK_LEN_NSR1, PETSC_FALSE), CSRK_ARRAY(ssrptr, CSRK_LEN_NSSR1, PETSC_FALSE), CSRK_ARRAY(perm, CSRK_LEN_M, PETSC_FALSE), CSRK_ARRAY(srcptr, CSRK_LEN_M, PETSC_FALSE), CSRK_ARRAY(xwork, CSRK_LEN_N, PETSC_FALSE), CSRK_ARRAY(ywork, CSRK_LEN_M, PETSC_FALSE), CSRK_ARRAY(iperm, CSRK_LEN_M, PETSC_FALSE), CSRK_ARRAY(tstart, CSRK_LEN_THREADS1, PETSC_FALSE), {0, 0, CSRK_LEN_ONE, PETSC_FALSE}};

static size_t CSRKArrayLength(const MatCSRKStructure *st, MatCSRKLength len)
{
  return (size_t)(PetscInt[]){st->nnz, st->m, st->m + 1, st->n, st->nsr + 1, st->nssr + 1, st->nthreads + 1, st->nnodes, st->npat + 1, st->patptr ? PetscMax(st->patptr[st->npat], 1) : 1, st->nnzu, 1}[len];
}

#define CSRKArrayAt(st, a) ((void **)((char *)(st) + (a)->field))
#define CSRKArrayOwn(st, a) (!((a)->aij && (st)->shared)) /* not the AIJ array itself */

/* the arrays of the list a of st: counted (bytes, if not NULL), copied from src (if not NULL), or freed */
static PetscErrorCode CSRKArrays(const MatCSRKArray *a, MatCSRKStructure *st, const MatCSRKStructure *src, PetscLogDouble *bytes)
{
  PetscFunctionBegin;
  for (; a->size; a++) {
    void **p = CSRKArrayAt(st, a);
    if (bytes) {
      if (*p && CSRKArrayOwn(st, a)) *bytes += (PetscLogDouble)(a->size * CSRKArrayLength(st, a->len));
    } else if (src) {
      void *const *q = CSRKArrayAt(src, a);
      *p             = NULL; /* shared: attached to the new matrix's AIJ arrays at its first use */
      if (*q && CSRKArrayOwn(src, a)) {
        PetscCall(PetscMalloc(a->size * CSRKArrayLength(src, a->len), p));
        PetscCall(PetscMemcpy(*p, *q, a->size * CSRKArrayLength(src, a->len)));
      }
    } else if (CSRKArrayOwn(st, a)) PetscCall(PetscFree(*p));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatCSRKVariantFree - frees the arrays of a variant (its loop dropped, csrksetup.c) */
PetscErrorCode MatCSRKVariantFree(const MatCSRKVariant *v, MatCSRKStructure *st)
{
  PetscFunctionBegin;
  PetscCall(CSRKArrays(v->arrays, st, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The memory of the structure beyond the AIJ arrays (MatView(), MatCSRKGetInfo()) */
void MatCSRKStructureCountBytes(MatCSRKStructure *st)
{
  st->bytes = 0;
  (void)CSRKArrays(CSRKCommon, st, NULL, &st->bytes);
  for (const MatCSRKVariant *const *v = MatCSRKVariants; *v; v++) (void)CSRKArrays((*v)->arrays, st, NULL, &st->bytes);
}

PetscErrorCode MatCSRKStructureDuplicate(const MatCSRKStructure *src, MatCSRKStructure **out)
{
  MatCSRKStructure *st;

  PetscFunctionBegin;
  PetscCall(PetscNew(&st));
  *st = *src;
  PetscCall(CSRKArrays(CSRKCommon, st, src, NULL));
  for (const MatCSRKVariant *const *v = MatCSRKVariants; *v; v++) PetscCall(CSRKArrays((*v)->arrays, st, src, NULL));
  *out = st;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCSRKStructureDestroy(MatCSRKStructure **st)
{
  PetscFunctionBegin;
  if (!*st) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(CSRKArrays(CSRKCommon, *st, NULL, NULL));
  for (const MatCSRKVariant *const *v = MatCSRKVariants; *v; v++) PetscCall(CSRKArrays((*v)->arrays, *st, NULL, NULL));
  PetscCall(PetscFree(*st));
  PetscFunctionReturn(PETSC_SUCCESS);
}
