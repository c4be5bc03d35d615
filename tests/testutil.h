/* Helpers shared by the test programs */
#ifndef CSRK_TESTUTIL_H
#define CSRK_TESTUTIL_H
#include <petscvec.h>

/* ||y - yref||_inf / max(||yref||_inf, PETSC_SMALL); NaN when y still holds a NaN (a poisoned entry left unwritten),
   which every "err <= tol" test rejects */
static inline PetscErrorCode TestRelativeError(Vec y, Vec yref, PetscReal *err)
{
  Vec       d;
  PetscReal ref;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(y, &d));
  PetscCall(VecWAXPY(d, -1.0, yref, y));
  PetscCall(VecNorm(d, NORM_INFINITY, err));
  PetscCall(VecNorm(yref, NORM_INFINITY, &ref));
  PetscCall(VecDestroy(&d));
  *err /= PetscMax(ref, PETSC_SMALL);
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif
