/* Included first (-include) by `make cuda-check` only: compiles the CUDA sources against a PETSc built without CUDA
   (the CI machine has nvcc but no GPU and no CUDA-enabled PETSc) by declaring the CUDA configuration that such a
   PETSc lacks. The objects are checked for compilation and never linked. */
#define PETSC_HAVE_CUDA   1
#define PETSC_HAVE_DEVICE 1
#define CSRK_HAVE_CUDA    1
#define PETSC_PKG_CUDA_VERSION_MAJOR    13
#define PETSC_PKG_CUDA_VERSION_MINOR    0
#define PETSC_PKG_CUDA_VERSION_SUBMINOR 0
#define PETSC_PKG_CUDA_VERSION_GE(MAJOR, MINOR, SUBMINOR) 1
#define PETSC_PKG_CUDA_VERSION_LT(MAJOR, MINOR, SUBMINOR) 0
#define PETSC_PKG_CUDA_VERSION_LE(MAJOR, MINOR, SUBMINOR) 0
#define PETSC_PKG_CUDA_VERSION_GT(MAJOR, MINOR, SUBMINOR) 1
#define PETSC_PKG_CUDA_VERSION_EQ(MAJOR, MINOR, SUBMINOR) 0
