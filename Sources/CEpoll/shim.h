#include <sys/epoll.h>
#include <sys/eventfd.h>

// Two calls glibc declares only under _GNU_SOURCE, which Swift's Glibc module
// does not define. Declared with plain pointer types so that this module
// does not take ownership of sys/socket.h or pthread.h away from Glibc.
// accept4 saves an fcntl per accepted connection.
extern int accept4(int fd, void *addr, void *addrlen, int flags);
// pthread_t is unsigned long on Linux; names threads for perf and top.
extern int pthread_setname_np(unsigned long thread, const char *name);
