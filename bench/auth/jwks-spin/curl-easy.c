// One ccurlfetch_get (Ferry's JWKS fetch) against a provider that never answers, 3 s timeout: its CPU (bench/auth/jwks-spin.sh).
#include "ccurlfetch.h"
#include <stdio.h>
#include <sys/resource.h>
static double cpu(void) { struct rusage u; getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6; }
int main(int argc, char **argv) {
  ccurlfetch_global_init(); ccurlfetch_result r; double before = cpu();
  ccurlfetch_get(argv[1], 3000, 1 << 20, &r);
  printf("code %d timed_out %d: %.3f s CPU in a 3 s hanging fetch\n", r.code, r.timed_out, cpu() - before);
  ccurlfetch_free(&r); return 0; }
