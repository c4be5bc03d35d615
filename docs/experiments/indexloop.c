/*
   The row loops of the CPU kernels outside PETSc, on a 3D stencil in its natural order: 32-bit columns (AIJ's loop),
   16-bit offsets from the diagonal, row patterns (values chained row after row, or from the row pointer; rows of
   known length; two accumulators, which changes the order of the sum and is shown for diagnosis only).
   Every variant is checked against the first on the first repetition; the best of the repetitions after the first
   three (warm-up) is printed.

     gcc -O3 -fopenmp indexloop.c -o indexloop
     OMP_NUM_THREADS=16 OMP_PROC_BIND=close OMP_PLACES=cores ./indexloop 128 27 30   # n, stencil 7|27, repetitions
*/
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <omp.h>
typedef int32_t I;
static void gen(int n, int st, I **rp, I **cj, double **va, I *m_) {
  I m = n*n*n; I *r = malloc((m+1)*sizeof(I)); I *c = malloc((size_t)m*27*sizeof(I)); double *v = malloc((size_t)m*27*8);
  I q=0; r[0]=0;
  for (int k=0;k<n;k++) for (int j=0;j<n;j++) for (int i=0;i<n;i++) { I row=(k*n+j)*n+i;
    for (int dk=-1;dk<=1;dk++) for (int dj=-1;dj<=1;dj++) for (int di=-1;di<=1;di++) {
      if (st==7 && abs(di)+abs(dj)+abs(dk)>1) continue;
      int ii=i+di,jj=j+dj,kk=k+dk; if (ii<0||jj<0||kk<0||ii>=n||jj>=n||kk>=n) continue;
      c[q]=(kk*n+jj)*n+ii; v[q]= (c[q]==row)? 26.0 : -1.0 + 0.001*(q%7); q++; }
    r[row+1]=q; }
  *rp=r;*cj=c;*va=v;*m_=m; }
int main(int argc,char**argv){
  int n=atoi(argv[1]), st=atoi(argv[2]), reps=argc>3?atoi(argv[3]):50;
  I *rp,*cj,m; double *va; gen(n,st,&rp,&cj,&va,&m); I nnz=rp[m];
  int T=omp_get_max_threads();
  /* copies first touched by threads */
  double *v2=malloc((size_t)nnz*8); I *c2=malloc((size_t)nnz*4); int16_t *co=malloc((size_t)nnz*2); uint16_t *pat=malloc(m*2);
  double *x=malloc(m*8),*y=malloc(m*8);
  #pragma omp parallel for schedule(static)
  for (I r=0;r<m;r++){ for(I q=rp[r];q<rp[r+1];q++){v2[q]=va[q];c2[q]=cj[q];co[q]=(int16_t)(cj[q]-r);} x[r]=1.0+(r%5)*0.1; y[r]=0; }
  /* patterns: serial */
  int np=0; I pp[200]; int32_t po[8192]; pp[0]=0;
  for (I r=0;r<m;r++){ I len=rp[r+1]-rp[r]; int f=-1;
    for(int p=0;p<np&&f<0;p++){ if(pp[p+1]-pp[p]!=len) continue; int ok=1; for(I j=0;j<len;j++) if(po[pp[p]+j]!=cj[rp[r]+j]-r){ok=0;break;} if(ok) f=p; }
    if(f<0){ for(I j=0;j<len;j++) po[pp[np]+j]=cj[rp[r]+j]-r; pp[np+1]=pp[np]+len; f=np++; }
    pat[r]=(uint16_t)f; }
  printf("n %d stencil %d rows %d nnz %d threads %d patterns %d\n",n,st,m,nnz,T,np);
  const char *names[]={"csr32","off16","patV0chain","patV1rowptr","patV2len","pat2acc","off16-2acc"};
  double best[7]; for(int i=0;i<7;i++)best[i]=1e9;
  double *ref=malloc(m*8);
  for (int rep=0;rep<reps;rep++) for (int kk=0;kk<7;kk++) {
    double t0=omp_get_wtime();
    #pragma omp parallel
    { int t=omp_get_thread_num(); I r0=(I)((long)m*t/T), r1=(I)((long)m*(t+1)/T);
      if(kk==0){ for(I r=r0;r<r1;r++){ const double*v=v2+rp[r]; const I*ix=c2+rp[r]; I nz=rp[r+1]-rp[r]; double s=0; for(I j=0;j<nz;j++) s+=v[j]*x[ix[j]]; y[r]=s; } }
      else if(kk==1){ const double*xr=x+r0; for(I r=r0;r<r1;r++,xr++){ const double*v=v2+rp[r]; const int16_t*ix=co+rp[r]; I nz=rp[r+1]-rp[r]; double s=0; for(I j=0;j<nz;j++) s+=v[j]*xr[ix[j]]; y[r]=s; } }
      else if(kk==2){ const double*xr=x+r0,*v=v2+rp[r0]; for(I r=r0;r<r1;r++,xr++){ I p0=pp[pat[r]], nz=pp[pat[r]+1]-p0; const int32_t*ix=po+p0; double s=0; for(I j=0;j<nz;j++) s+=v[j]*xr[ix[j]]; v+=nz; y[r]=s; } }
      else if(kk==3){ const double*xr=x+r0; for(I r=r0;r<r1;r++,xr++){ I p0=pp[pat[r]], nz=pp[pat[r]+1]-p0; const int32_t*ix=po+p0; const double*v=v2+rp[r]; double s=0; for(I j=0;j<nz;j++) s+=v[j]*xr[ix[j]]; y[r]=s; } }
      else if(kk==4){ const double*xr=x+r0; for(I r=r0;r<r1;r++,xr++){ I p0=pp[pat[r]]; const int32_t*ix=po+p0; const double*v=v2+rp[r]; I nz=rp[r+1]-rp[r]; double s=0; for(I j=0;j<nz;j++) s+=v[j]*xr[ix[j]]; y[r]=s; } }
      else if(kk==5){ const double*xr=x+r0,*v=v2+rp[r0]; for(I r=r0;r<r1;r++,xr++){ I p0=pp[pat[r]], nz=pp[pat[r]+1]-p0; const int32_t*ix=po+p0; double s=0,s1=0; I j=0; for(;j+1<nz;j+=2){ s+=v[j]*xr[ix[j]]; s1+=v[j+1]*xr[ix[j+1]];} if(j<nz) s+=v[j]*xr[ix[j]]; v+=nz; y[r]=s+s1; } }
      else if(kk==6){ const double*xr=x+r0; for(I r=r0;r<r1;r++,xr++){ const double*v=v2+rp[r]; const int16_t*ix=co+rp[r]; I nz=rp[r+1]-rp[r]; double s=0,s1=0; I j=0; for(;j+1<nz;j+=2){ s+=v[j]*xr[ix[j]]; s1+=v[j+1]*xr[ix[j+1]];} if(j<nz) s+=v[j]*xr[ix[j]]; y[r]=s+s1; } }
    }
    double dt=omp_get_wtime()-t0; if(rep>2 && dt<best[kk]) best[kk]=dt;
    if(rep==0&&kk==0) memcpy(ref,y,m*8); else if(rep==0&&kk<5){ for(I r=0;r<m;r++) if(y[r]!=ref[r]){printf("MISMATCH %s row %d\n",names[kk],r);break;} }
  }
  double mb=(12.0*nnz+20.0*m)/1e6;
  for(int k=0;k<7;k++) printf("%-12s %9.1f us  %6.1f GB/s(model)\n",names[k],best[k]*1e6,mb/best[k]/1e3);
  return 0; }
