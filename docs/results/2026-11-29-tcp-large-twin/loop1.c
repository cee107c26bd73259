#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <arpa/inet.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc,char**argv){
  size_t sz=atoi(argv[1]); long n=atol(argv[2]);
  int l=socket(AF_INET,SOCK_STREAM,0); struct sockaddr_in a={0}; a.sin_family=AF_INET; a.sin_addr.s_addr=htonl(0x7f000001);
  bind(l,(void*)&a,sizeof a); listen(l,1); socklen_t al=sizeof a; getsockname(l,(void*)&a,&al);
  int c=socket(AF_INET,SOCK_STREAM,0); connect(c,(void*)&a,sizeof a); int s=accept(l,0,0);
  int one=1; setsockopt(c,IPPROTO_TCP,TCP_NODELAY,&one,4);
  char*buf=malloc(sz); memset(buf,'D',sz); char*rb=malloc(sz);
  double t0=now();
  for(long i=0;i<n;i++){ size_t off=0; while(off<sz){ssize_t w=write(c,buf+off,sz-off); if(w<=0){perror("w");return 1;} off+=w;
      size_t r=0; while(r<(size_t)w){ssize_t k=read(s,rb,w-r); if(k<=0){perror("r");return 1;} r+=k;} } }
  double t=now()-t0; printf("one-thread write+read %zu: %.0f msg/s %.2f GB/s\n",sz,n/t,n*sz/t/1e9);
}
