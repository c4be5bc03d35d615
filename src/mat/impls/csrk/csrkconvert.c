/*
   The conversions between AIJ and the CSR-k types, shared by the sequential and MPI types: a CSR-k matrix is an AIJ
   matrix with some of AIJ's methods replaced and a few functions composed on it, under the type's name; each type
   describes those in a MatCSRKMethods table and keeps only its own data (spptr) to itself.
*/
#include "csrkimpl.h"

/*
  MatCSRKConvertTarget - the matrix a conversion of A writes into *newmat: a copy of A (MAT_INITIAL_MATRIX), the
  given *newmat with A's values (MAT_REUSE_MATRIX), or A itself (MAT_INPLACE_MATRIX, where *newmat is A)
*/
PetscErrorCode MatCSRKConvertTarget(Mat A, MatReuse reuse, Mat *newmat)
{
  PetscFunctionBegin;
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  else if (reuse == MAT_REUSE_MATRIX) PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  MatCSRKSetMethods - installs the methods and composed functions of the table m on B and gives it m's type name
  (on), or takes them away again: AIJ's methods and type name back (off). The type's data (spptr) is the caller's.
*/
PetscErrorCode MatCSRKSetMethods(Mat B, const MatCSRKMethods *m, PetscBool on)
{
  const struct _MatOps *base;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetBaseOps(m->mpi, &base));
  /* the method table indexed by MatOperation, as MatSetOperation() does (without its change of MatView()'s native format) */
  for (const MatCSRKMethod *o = m->ops; o->f; o++) ((void (**)(void))B->ops)[o->op] = on ? o->f : ((void (*const *)(void))base)[o->op];
  for (const MatCSRKComposed *c = m->composed; c->name; c++) PetscCall(PetscObjectComposeFunction((PetscObject)B, c->name, on ? c->f : NULL));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, on ? m->type : m->aijtype));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  MatCSRKExtendMethods - the table m of a type that extends the type of the table parent (csrkcuda extends csrk),
  installed over parent's (on), or taken away with parent's methods, composed functions and type name back (off); with
  bind, only m's device methods, which MatBindToCPU() swaps for the host ones (parent's where it has one, else AIJ's)
*/
PetscErrorCode MatCSRKExtendMethods(Mat B, const MatCSRKMethods *parent, const MatCSRKMethods *m, PetscBool on, PetscBool bind)
{
  const struct _MatOps *base;

  PetscFunctionBegin;
  PetscCall(MatCSRKGetBaseOps(m->mpi, &base));
  for (const MatCSRKMethod *o = m->ops; bind && o->f; o++) {
    void (*f)(void) = on ? o->f : ((void (*const *)(void))base)[o->op];
    for (const MatCSRKMethod *p = parent->ops; !on && p->f; p++)
      if (p->op == o->op) f = p->f;
    if (o->device) ((void (**)(void))B->ops)[o->op] = f;
  }
  if (!bind) PetscCall(MatCSRKSetMethods(B, m, on));
  if (!bind && !on) PetscCall(MatCSRKSetMethods(B, parent, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}
