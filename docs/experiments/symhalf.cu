// docs/experiments/symhalf.cu: the symmetric half on the GPU with atomic adds, stand-alone (docs/design.md, "What
// went and why"). A symmetric matrix on an n^3 grid in natural order (the 15-point P1 stencil of
// a Kuhn tetrahedral mesh, bs unknowns a point, values symmetric, diagonally dominant) multiplied by cuSPARSE's CSR
// SpMV, by a CSR kernel of L lanes a row, and by the half (diagonal first, then each upper entry added to its row's sum
// and, with an atomic add, to y at its column), the median of 50 products of each.
//   nvcc -O3 -arch=sm_90 -o symhalf symhalf.cu -lcusparse && ./symhalf 100 1 && ./symhalf 56 3
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include <cusparse.h>
#define CK(x) do{cudaError_t e=(x); if(e!=cudaSuccess){printf("cuda %s line %d\n",cudaGetErrorString(e),__LINE__);exit(1);}}while(0)
#define CS(x) do{cusparseStatus_t e=(x); if(e!=CUSPARSE_STATUS_SUCCESS){printf("cusparse %d line %d\n",(int)e,__LINE__);exit(1);}}while(0)
static double hv(long a,long b){uint64_t h=(uint64_t)(a*1000003+b)*0x9E3779B97F4A7C15ull; h^=h>>29; return -(0.1+(double)(h%1000)/1000.0);}
struct Csr{int m; std::vector<int> rp,cj; std::vector<double> va;};
static Csr make(int n,int bs){
  const int off[15][3]={{0,0,0},{1,0,0},{-1,0,0},{0,1,0},{0,-1,0},{0,0,1},{0,0,-1},{1,1,0},{-1,-1,0},{0,1,1},{0,-1,-1},{1,1,1},{-1,-1,-1},{1,0,1},{-1,0,-1}};
  Csr A; int N=n*n*n; A.m=N*bs; A.rp.push_back(0);
  for(int k=0;k<n;k++)for(int j=0;j<n;j++)for(int i=0;i<n;i++){int p=(k*n+j)*n+i;
    std::vector<int> nb; for(int o=0;o<15;o++){int a=i+off[o][0],b=j+off[o][1],c=k+off[o][2]; if(a<0||b<0||c<0||a>=n||b>=n||c>=n)continue; nb.push_back((c*n+b)*n+a);} std::sort(nb.begin(),nb.end());
    for(int u=0;u<bs;u++){int r=p*bs+u; double dsum=0;
      for(int q:nb)for(int w=0;w<bs;w++){int c=q*bs+w; if(c==r){A.cj.push_back(c);A.va.push_back(0);continue;} double v=hv(std::min(r,c),std::max(r,c)); A.cj.push_back(c);A.va.push_back(v);dsum+=-v;}
      for(int q=A.rp.back();q<(int)A.cj.size();q++) if(A.cj[q]==r) A.va[q]=dsum+1; A.rp.push_back(A.cj.size());}}
  return A;}
__global__ void fullk(int m,const int*__restrict__ rp,const int*__restrict__ cj,const double*__restrict__ va,const double*__restrict__ x,double*__restrict__ y,int L){
  int g=blockIdx.x*blockDim.x+threadIdx.x; int r=g/L, l=g%L; if(r>=m)return; double s=0;
  for(int q=rp[r]+l;q<rp[r+1];q+=L) s+=va[q]*__ldg(x+cj[q]);
  for(int o=L/2;o>0;o/=2) s+=__shfl_down_sync(0xffffffff,s,o,L);
  if(l==0)y[r]=s;}
__global__ void halfk(int m,const int*__restrict__ up,const int*__restrict__ uc,const double*__restrict__ uv,const double*__restrict__ ud,const double*__restrict__ x,double*__restrict__ y,int L){
  int g=blockIdx.x*blockDim.x+threadIdx.x; int r=g/L, l=g%L; if(r>=m)return; const double xr=x[r]; double s=0;
  for(int q=up[r]+l;q<up[r+1];q+=L){const int c=uc[q]; const double v=uv[q]; s+=v*__ldg(x+c); atomicAdd(y+c,v*xr);}
  for(int o=L/2;o>0;o/=2) s+=__shfl_down_sync(0xffffffff,s,o,L);
  if(l==0)atomicAdd(y+r,s+ud[r]*xr);}
__global__ void diagk(int m,const double*__restrict__ ud,const double*__restrict__ x,double*__restrict__ y){int r=blockIdx.x*blockDim.x+threadIdx.x; if(r<m)y[r]=ud[r]*x[r];}
__global__ void half2k(int m,const int*__restrict__ up,const int*__restrict__ uc,const double*__restrict__ uv,const double*__restrict__ x,double*__restrict__ y,int L){
  int g=blockIdx.x*blockDim.x+threadIdx.x; int r=g/L, l=g%L; if(r>=m)return; const double xr=x[r]; double s=0;
  for(int q=up[r]+l;q<up[r+1];q+=L){const int c=uc[q]; const double v=uv[q]; s+=v*__ldg(x+c); atomicAdd(y+c,v*xr);}
  for(int o=L/2;o>0;o/=2) s+=__shfl_down_sync(0xffffffff,s,o,L);
  if(l==0&&s!=0)atomicAdd(y+r,s);}
template<class F> static float med(F f){std::vector<float> t; cudaEvent_t a,b; cudaEventCreate(&a);cudaEventCreate(&b);
  for(int i=0;i<60;i++){cudaEventRecord(a);f();cudaEventRecord(b);cudaEventSynchronize(b);float ms;cudaEventElapsedTime(&ms,a,b); if(i>=10)t.push_back(ms*1e3f);} std::sort(t.begin(),t.end()); return t[t.size()/2];}
int main(int argc,char**argv){
  int n=atoi(argv[1]),bs=atoi(argv[2]); Csr A=make(n,bs); int m=A.m; long nz=A.cj.size();
  std::vector<int> up(m+1),uc; std::vector<double> uv,ud(m); up[0]=0;
  for(int r=0;r<m;r++){for(int q=A.rp[r];q<A.rp[r+1];q++){int c=A.cj[q]; if(c==r)ud[r]=A.va[q]; else if(c>r){uc.push_back(c);uv.push_back(A.va[q]);}} up[r+1]=uc.size();}
  long nu=uc.size(); printf("n %d bs %d: %d rows, %.1f nonzeros a row, %ld upper\n",n,bs,m,(double)nz/m,nu);
  int *drp,*dcj,*dup,*duc; double *dva,*duv,*dud,*dx,*dy,*dy2;
  CK(cudaMalloc(&drp,4*(m+1)));CK(cudaMalloc(&dcj,4*nz));CK(cudaMalloc(&dva,8*nz));CK(cudaMalloc(&dup,4*(m+1)));CK(cudaMalloc(&duc,4*nu));CK(cudaMalloc(&duv,8*nu));CK(cudaMalloc(&dud,8*m));
  CK(cudaMalloc(&dx,8*m));CK(cudaMalloc(&dy,8*m));CK(cudaMalloc(&dy2,8*m));
  cudaMemcpy(drp,A.rp.data(),4*(m+1),cudaMemcpyHostToDevice);cudaMemcpy(dcj,A.cj.data(),4*nz,cudaMemcpyHostToDevice);cudaMemcpy(dva,A.va.data(),8*nz,cudaMemcpyHostToDevice);
  cudaMemcpy(dup,up.data(),4*(m+1),cudaMemcpyHostToDevice);cudaMemcpy(duc,uc.data(),4*nu,cudaMemcpyHostToDevice);cudaMemcpy(duv,uv.data(),8*nu,cudaMemcpyHostToDevice);cudaMemcpy(dud,ud.data(),8*m,cudaMemcpyHostToDevice);
  std::vector<double> hx(m); for(int i=0;i<m;i++)hx[i]=1.0+(i%13)*0.01; cudaMemcpy(dx,hx.data(),8*m,cudaMemcpyHostToDevice);
  cusparseHandle_t h; CS(cusparseCreate(&h)); cusparseSpMatDescr_t sA; cusparseDnVecDescr_t vx,vy; double one=1,zero=0; size_t bsz; void*buf;
  CS(cusparseCreateCsr(&sA,m,m,nz,drp,dcj,dva,CUSPARSE_INDEX_32I,CUSPARSE_INDEX_32I,CUSPARSE_INDEX_BASE_ZERO,CUDA_R_64F));
  CS(cusparseCreateDnVec(&vx,m,dx,CUDA_R_64F));CS(cusparseCreateDnVec(&vy,m,dy,CUDA_R_64F));
  CS(cusparseSpMV_bufferSize(h,CUSPARSE_OPERATION_NON_TRANSPOSE,&one,sA,vx,&zero,vy,CUDA_R_64F,CUSPARSE_SPMV_ALG_DEFAULT,&bsz)); CK(cudaMalloc(&buf,bsz+8));
  float tcs=med([&]{cusparseSpMV(h,CUSPARSE_OPERATION_NON_TRANSPOSE,&one,sA,vx,&zero,vy,CUDA_R_64F,CUSPARSE_SPMV_ALG_DEFAULT,buf);});
  std::vector<double> ref(m),got(m); cudaMemcpy(ref.data(),dy,8*m,cudaMemcpyDeviceToHost);
  double bytes=12.0*nz+20.0*m; printf("cusparse %.1f us (%.0f GB/s of CSR bytes)\n",tcs,bytes/tcs/1e3);
  for(int L:{1,2,4,8}) for(int T:{128,512}){ long th=(long)m*L; int B=(th+T-1)/T;
    float tf=med([&]{fullk<<<B,T>>>(m,drp,dcj,dva,dx,dy2,L);});
    float th_=med([&]{cudaMemsetAsync(dy2,0,8*m); halfk<<<B,T>>>(m,dup,duc,duv,dud,dx,dy2,L);});
    float td=med([&]{diagk<<<(m+255)/256,256>>>(m,dud,dx,dy2); half2k<<<B,T>>>(m,dup,duc,duv,dx,dy2,L);});
    printf("   diag kernel then half: %.1f us (%.2fx cusparse)\n",td,tcs/td);
    float thk=med([&]{halfk<<<B,T>>>(m,dup,duc,duv,dud,dx,dy2,L);});
    cudaMemsetAsync(dy2,0,8*m); halfk<<<B,T>>>(m,dup,duc,duv,dud,dx,dy2,L); cudaMemcpy(got.data(),dy2,8*m,cudaMemcpyDeviceToHost);
    double e=0; for(int i=0;i<m;i++) e=std::max(e,fabs(got[i]-ref[i])/(fabs(ref[i])+1e-300));
    printf("L %2d T %3d: full %.1f us (%.2fx cusparse)  half+atomics %.1f us incl memset (%.2fx cusparse; kernel alone %.1f us)  relerr %.1e\n",L,T,tf,tcs/tf,th_,tcs/th_,thk,e);}
  return 0;}
