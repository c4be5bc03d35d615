#!/usr/bin/env python3
"""ex1.py - tutorials/ex1.c from petsc4py: CG on the 3D Poisson problem with the matrix stored as AIJ and as CSR-k.

The 7-point Laplacian on an n x n x n grid (Dirichlet boundary) is assembled as AIJ, copied with
convert('csrk') and both copies are solved by CG with the default preconditioner of their type (ICC/ILU on one
rank, block Jacobi on several: CSR-k keeps the AIJ arrays, so the preconditioner is the same), the same right-hand
side b = A * ones and the same tolerances. Only MatMult differs: both solves take the same iterations and reach the
same solution. The program exits with status 1 when they do not.

The plugin is loaded as PETSc loads any plugin, by -dll_append at initialization; no PETSc option of the program
needs it otherwise. -mat_csrk_* options (e.g. -mat_csrk_k 3) apply to the converted matrix without setFromOptions().

    python3 tutorials/ex1.py -n 32
    mpiexec -n 2 python3 tutorials/ex1.py -n 48 -permute 1
    CSRK_LIB=/path/to/libcsrk.so python3 tutorials/ex1.py -ksp_rtol 1e-10 -mat_csrk_ordering rcm

Options: -n <32> grid points per dimension; -permute <seed> numbers the unknowns randomly first (P A P^T);
-mult_reps <50> MatMults timed after the solves; any -ksp_* / -pc_* / -mat_csrk_* option.
"""
import os
import sys
import time

try:
    import petsc4py
except ImportError:
    sys.exit(f"{sys.executable} has no petsc4py: install it for this python (Debian: apt-get install python3-petsc4py, for /usr/bin/python3)")

here = os.path.dirname(os.path.abspath(__file__))
lib = os.environ.get("CSRK_LIB", os.path.join(here, "..", "lib", "libcsrk.so"))
if not os.path.exists(lib):
    sys.exit(f"{lib} not found: run make first, or set CSRK_LIB to the plugin")
petsc4py.init(["-dll_append", os.path.abspath(lib)] + sys.argv[1:])
from petsc4py import PETSc  # noqa: E402
import numpy as np  # noqa: E402

comm = PETSc.COMM_WORLD
opts = PETSc.Options()
n = opts.getInt("n", 32)
seed = opts.getInt("permute", -1)
reps = opts.getInt("mult_reps", 50)
if n < 1 or reps < 1:
    sys.exit("-n and -mult_reps must be positive")


def laplacian3d(n):
    """The 7-point Laplacian of an n^3 grid (6 on the diagonal, -1 to each neighbour), each rank's rows as CSR"""
    N = n**3
    A = PETSc.Mat().create(comm)
    A.setSizes(((PETSc.DECIDE, N), (PETSc.DECIDE, N)))
    A.setType("aij")
    A.setUp()
    rstart, rend = A.getOwnershipRange()
    rows = np.arange(rstart, rend, dtype=PETSc.IntType)
    x, y, z = rows % n, (rows // n) % n, rows // (n * n)
    cols, vals = [], []
    for off, inside in ((-n * n, z > 0), (-n, y > 0), (-1, x > 0), (0, None), (1, x < n - 1), (n, y < n - 1), (n * n, z < n - 1)):
        ok = np.ones(rows.size, bool) if inside is None else inside
        cols.append(np.where(ok, rows + off, -1))
        vals.append(np.full(rows.size, 6.0 if off == 0 else -1.0))
    cols, vals = np.stack(cols, 1), np.stack(vals, 1)  # columns in increasing order in every row
    keep = cols >= 0
    indptr = np.concatenate(([0], np.cumsum(keep.sum(1)))).astype(PETSc.IntType)
    A.destroy()
    A = PETSc.Mat().createAIJ(((rend - rstart, N), (rend - rstart, N)), csr=(indptr, cols[keep].astype(PETSc.IntType), vals[keep]), comm=comm)
    return A


def permute_randomly(A, seed):
    """P A P^T for a random permutation P, the same on every rank"""
    N = A.getSize()[0]
    perm = np.random.default_rng(seed).permutation(N).astype(PETSc.IntType)
    rstart, rend = A.getOwnershipRange()
    isp = PETSc.IS().createGeneral(perm[rstart:rend], comm=comm)
    P = A.permute(isp, isp)
    isp.destroy()
    return P


def pc_name(ksp):
    pc = ksp.getPC()
    name = pc.getType()
    if name == "bjacobi" and hasattr(pc, "getBJacobiSubKSP"):  # petsc4py >= 3.21
        sub = pc.getBJacobiSubKSP()
        if sub:
            name += "+" + sub[0].getPC().getType()
    return name


def solve(M, A, b):
    """CG on M x = b (and whatever -ksp_* / -pc_* say); the residual is computed with A"""
    ksp = PETSc.KSP().create(comm)
    ksp.setOperators(M, M)
    ksp.setType("cg")
    ksp.setTolerances(rtol=1e-8)
    ksp.setFromOptions()
    ksp.setUp()
    x = b.duplicate()
    x.set(0.0)
    comm.barrier()
    t0 = time.perf_counter()
    ksp.solve(b, x)
    t = slowest(time.perf_counter() - t0)
    r = b.duplicate()
    A.mult(x, r)
    r.aypx(-1.0, b)
    res = dict(pc=pc_name(ksp), its=ksp.getIterationNumber(), reason=ksp.getConvergedReason(), relres=r.norm() / b.norm(), t=t)
    r.destroy()
    ksp.destroy()
    return x, res


def slowest(t):
    """The maximum of t over the ranks (a vector of one entry per rank, without needing mpi4py)"""
    v = PETSc.Vec().createMPI((1, PETSc.DECIDE), comm=comm)
    v.getArray()[0] = t
    m = v.max()[1]
    v.destroy()
    return m


def time_matmult(M, x, reps):
    """Median over reps back-to-back products of the time of one MatMult, each product's time that of the slowest rank"""
    y = x.duplicate()
    M.mult(x, y)  # warm-up
    t = []
    for _ in range(reps):
        comm.barrier()
        t0 = time.perf_counter()
        M.mult(x, y)
        t.append(slowest(time.perf_counter() - t0))
    y.destroy()
    return float(np.median(t))


A = laplacian3d(n)
if seed >= 0:
    P = permute_randomly(A, seed)
    A.destroy()
    A = P
# the CSR-k copy: MAT_INITIAL_MATRIX (A stays AIJ); its -mat_csrk_* options are read by the conversion
C = A.convert("csrk", PETSc.Mat())
ones, b = A.createVecs()
ones.set(1.0)
A.mult(ones, b)

xa, ra = solve(A, A, b)
xc, rc = solve(C, A, b)
ta, tc = time_matmult(A, xa, reps), time_matmult(C, xa, reps)
diff = (xc - xa).norm() / xa.norm()

PETSc.Sys.Print(f"CG on the 3D Poisson problem (7-point), n = {n}: {A.getSize()[0]} unknowns, {comm.getSize()} MPI rank(s), matrix types {A.getType()} and {C.getType()}")
PETSc.Sys.Print("numbering: " + (f"random permutation (seed {seed})" if seed >= 0 else "natural"))
PETSc.Sys.Print(f"{'type':5} {'PC':16} {'its':>4} {'||b-Ax||/||b||':>15} {'solve (s)':>10} {'MatMult median (us)':>20}")
for name, r, t in (("aij", ra, ta), ("csrk", rc, tc)):
    PETSc.Sys.Print(f"{name:5} {r['pc']:16} {r['its']:4d} {r['relres']:15.3e} {r['t']:10.4f} {1e6 * t:20.1f}")
PETSc.Sys.Print(f"(solve: KSPSolve after KSPSetUp, the CSR-k set-up included; median: of {reps} MatMults after it, slowest rank)")
PETSc.Sys.Print(f"||x_aij - x_csrk|| / ||x_aij|| = {diff:.2e}")
viewer = PETSc.Viewer.STDOUT(comm)
viewer.pushFormat(PETSc.Viewer.Format.ASCII_INFO)
C.view(viewer)
viewer.popFormat()

fail = []
if ra["reason"] <= 0 or rc["reason"] <= 0:
    fail.append("CG did not converge")
if ra["its"] != rc["its"]:
    fail.append(f"iteration counts differ ({ra['its']}, {rc['its']})")
if ra["pc"] != rc["pc"]:
    fail.append(f"preconditioners differ ({ra['pc']}, {rc['pc']})")
if not diff <= 1e-6:
    fail.append("the solutions differ")
if not C.getType().endswith("csrk"):
    fail.append(f"the converted matrix is {C.getType()}, not csrk")
for f in fail:
    PETSc.Sys.Print("FAIL: " + f)
if not fail:
    PETSc.Sys.Print("OK: same preconditioner, same iterations, same solution")
for obj in (xa, xc, ones, b, C, A):
    obj.destroy()
sys.exit(1 if fail else 0)
