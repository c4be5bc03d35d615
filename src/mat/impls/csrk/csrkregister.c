/*
   Registration of the CSR-k types with PETSc: by the library itself when a program loads it (-dll_append), or by
   MatCSRKRegister() in a program that links it. A build without CUDA registers "csrkcuda" too, as a type that says
   so, rather than leave PETSc to call it unknown.
*/
#include "csrkimpl.h"

static PetscBool MatCSRKRegisterCalled = PETSC_FALSE;

static PetscErrorCode MatCSRKFinalizePackage(void)
{
  PetscFunctionBegin;
  MatCSRKRegisterCalled = PETSC_FALSE;
  MatCSRKResetBaseOps();
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   MATCSRK - MATCSRK = "csrk" - A matrix type whose `MatMult()` and `MatMultAdd()` run the CSR-k kernels: `MATSEQCSRK`
   on one process, `MATMPICSRK` otherwise.

   A subclass of `MATAIJ`: the AIJ arrays stay the matrix, so assembly, preconditioners, factorizations, conversions and
   every other operation are those of `MATAIJ`. The two products run over a structure built from the AIJ arrays: rows
   grouped into super-rows (k = 2) and super-super-rows (k = 3), in the user's ordering or a bandwidth-reducing one,
   with column indices as 16-bit offsets from the diagonal or row patterns where the rows allow, and runs of alike rows
   multiplied together (row slices, row nodes). Results are in the user's ordering and equal those of `MATAIJ` to
   rounding.

   Options Database Keys:
+  -mat_type csrk - selects the type in `MatSetFromOptions()`
.  -mat_csrk_ordering <auto,natural,rcm,bandk> - row ordering of the structure, see `MatCSRKSetOrdering()`
.  -mat_csrk_setup <budget,eager> - when the structure is built, see `MatCSRKSetSetup()`
.  -mat_csrk_row_loop <plan,slices,...> - one row loop tried alone (measurements), see `MatCSRKSetRowLoop()`
.  -mat_csrk_machine_file <file> - the machine file that `make tune` wrote (none: no file), read once when the library
                                   is registered; default csrk-machine.txt beside the library
.  -mat_csrk_threads <n> - OpenMP threads per MPI rank, 0 for the default, see `MatCSRKSetNumThreads()`
.  -mat_csrk_k <1,2,3> - levels of the structure, see `MatCSRKSetLevels()`
.  -mat_csrk_sr_size <n> - rows per super-row, 0 for the model's, see `MatCSRKSetSizes()`
.  -mat_csrk_ssr_size <n> - super-rows per super-super-row, 0 for the model's
.  -mat_csrk_compress_indices <bool> - 16-bit column offsets where they fit, see `MatCSRKSetFeature()`
.  -mat_csrk_row_patterns <bool> - row patterns instead of column indices, see `MatCSRKSetFeature()`
.  -mat_csrk_row_slices <bool> - rows of one pattern multiplied a row per vector lane, see `MatCSRKSetFeature()`
.  -mat_csrk_row_values <bool> - a repeated list of values kept once, see `MatCSRKSetFeature()`
.  -mat_csrk_row_nodes <bool> - rows of one column list multiplied together, see `MatCSRKSetFeature()`
-  -mat_csrk_symmetric_half <bool> - a symmetric block multiplied from its diagonal and upper triangle, see `MatCSRKSetFeature()`

   Level: beginner

   Notes:
   A program loads the library with `-dll_append <dir>/libcsrk.so`, or links it and calls `MatCSRKRegister()`.
   `MatConvert()` to this type reads the -mat_csrk_* options of the matrix's prefix.

   By default the structure is built once the products run with AIJ's kernel have paid for it, so a short solve runs
   about as with `MATAIJ` (`MatCSRKSetSetup()`). What is built is decided from the matrix, the options and the machine
   file, never from timings in the run: the same program gives the same bits run after run. On one thread per rank
   (the usual run) a variant is built where it reads fewer bytes than `MATAIJ`'s kernel (row slices of stencils,
   repeated values), or, for the variants that only compete with it (the symmetric half, row nodes), where `make tune`
   measured them faster on this processor. `MatView()` with `-mat_view ::ascii_info` shows the settings in
   effect and, once it is built, the structure; `MatCSRKGetInfo()` returns it, and `-log_view` shows its cost in the
   `MatCSRKBuild` event.

.seealso: `MATSEQCSRK`, `MATMPICSRK`, `MATCSRKCUDA`, `MATAIJ`, `MatCSRKRegister()`, `MatCSRKSetOrdering()`, `MatCSRKSetSetup()`, `MatCSRKGetInfo()`
M*/

/* The root names are also entries of MatList, so that -help lists "csrk" (and "csrkcuda") among the -mat_type
   values. MatSetType() maps a root name to the sequential or MPI type before it looks in MatList, so these routines
   run only where a matrix is created from the list entry itself; they choose by the communicator as MatSetType() does */
static PetscErrorCode MatCreate_CSRK(Mat A)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  if (size == 1) PetscCall(MatCreate_SeqCSRK(A));
  else PetscCall(MatCreate_MPICSRK(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if !defined(CSRK_HAVE_CUDA)
/* the CUDA types of a build without CUDA */
static PetscErrorCode MatCreate_CSRKCUDANone(Mat A)
{
  PetscFunctionBegin;
  SETERRQ(PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "Matrix type %s: this libcsrk was built against a PETSc without CUDA; rebuild it against a PETSc configured --with-cuda, or use -mat_type %s on the CPU", MATCSRKCUDA, MATCSRK);
}
  #define MatCreate_SeqCSRKCUDA MatCreate_CSRKCUDANone
  #define MatCreate_MPICSRKCUDA MatCreate_CSRKCUDANone
#endif

static PetscErrorCode MatCreate_CSRKCUDA(Mat A)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  if (size == 1) PetscCall(MatCreate_SeqCSRKCUDA(A));
  else PetscCall(MatCreate_MPICSRKCUDA(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatCSRKRegister - registers the CSR-k matrix types (`MATCSRK`, and `MATCSRKCUDA` when built with CUDA) and the
  `MATORDERINGBANDK` ordering with PETSc

  Not Collective

  Level: beginner

  Notes:
  A program that links the library calls this once after `PetscInitialize()`. Programs that load it with
  `-dll_append <dir>/libcsrk.so` need not: PETSc calls `PetscDLLibraryRegister_csrk()`, which calls this.
  Calling it more than once is harmless.

.seealso: `MATCSRK`, `MATSEQCSRK`, `MATMPICSRK`, `MatCSRKSetOrdering()`
@*/
PetscErrorCode MatCSRKRegister(void)
{
  PetscFunctionBegin;
  if (MatCSRKRegisterCalled) PetscFunctionReturn(PETSC_SUCCESS);
  MatCSRKRegisterCalled = PETSC_TRUE;
  PetscCall(MatRegisterRootName(MATCSRK, MATSEQCSRK, MATMPICSRK));
  PetscCall(MatRegister(MATSEQCSRK, MatCreate_SeqCSRK));
  PetscCall(MatRegister(MATMPICSRK, MatCreate_MPICSRK));
  PetscCall(MatRegister(MATCSRK, MatCreate_CSRK));
  PetscCall(MatRegisterRootName(MATCSRKCUDA, MATSEQCSRKCUDA, MATMPICSRKCUDA));
  PetscCall(MatRegister(MATSEQCSRKCUDA, MatCreate_SeqCSRKCUDA));
  PetscCall(MatRegister(MATMPICSRKCUDA, MatCreate_MPICSRKCUDA));
  PetscCall(MatRegister(MATCSRKCUDA, MatCreate_CSRKCUDA));
  PetscCall(MatOrderingRegister(MATORDERINGBANDK, MatGetOrdering_BandK));
  PetscCall(PetscLogEventRegister("MatCSRKBuild", MAT_CLASSID, &MAT_CSRKBuild));
  PetscCall(PetscLogEventRegister("MatCSRKHaloBegin", MAT_CLASSID, &MAT_CSRKHaloBegin));
  PetscCall(PetscLogEventRegister("MatCSRKHaloEnd", MAT_CLASSID, &MAT_CSRKHaloEnd));
  PetscCall(PetscLogEventRegister("MatCSRKOrder", MAT_CLASSID, &MAT_CSRKOrder));
  PetscCall(PetscRegisterFinalize(MatCSRKFinalizePackage));
  PetscCall(MatCSRKMachineLoad());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Called by PETSc when the library is loaded with -dll_append (the name follows the file name libcsrk.so) */
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_csrk(void)
{
  PetscFunctionBegin;
  PetscCall(MatCSRKRegister());
  PetscFunctionReturn(PETSC_SUCCESS);
}

