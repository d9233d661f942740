#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <spawn.h>
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <string.h>
#include <malloc.h>
#include <sched.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/signalfd.h>
#include <pthread.h>
#include "CSysShims.h"

int uploader_rename_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    return renameat2(olddirfd, oldpath, newdirfd, newpath, RENAME_NOREPLACE);
}

int uploader_rename_exchange(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    return renameat2(olddirfd, oldpath, newdirfd, newpath, RENAME_EXCHANGE);
}

long uploader_copy_file_range(int in, long long *offset, int out, unsigned long length) {
    loff_t off = (loff_t)*offset;
    ssize_t n = copy_file_range(in, &off, out, NULL, (size_t)length, 0);
    *offset = (long long)off;
    return (long)n;
}

int uploader_try_read_lease(int fd) { return fcntl(fd, F_SETLEASE, F_RDLCK); }
int uploader_release_lease(int fd) { return fcntl(fd, F_SETLEASE, F_UNLCK); }

int uploader_ofd_lock_wait(int fd, int exclusive) {
    struct flock lock;
    memset(&lock, 0, sizeof lock);
    lock.l_type = exclusive ? F_WRLCK : F_RDLCK;
    lock.l_whence = SEEK_SET;
    return fcntl(fd, F_OFD_SETLKW, &lock);
}

int uploader_open_rtnetlink(void) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) return -1;
    struct sockaddr_nl addr;
    memset(&addr, 0, sizeof addr);
    addr.nl_family = AF_NETLINK;
    addr.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_IFADDR | RTMGRP_IPV6_ROUTE;
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int uploader_spawn_addchdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}

int uploader_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

#include <net/if.h>
#include <netinet/in.h>

int uploader_route_interface(const void *address, unsigned int addrlen, char *name) {
    const struct sockaddr *addr = address;
    struct {
        struct nlmsghdr header;
        struct rtmsg route;
        char attributes[64];
    } request;
    memset(&request, 0, sizeof request);
    const void *bytes;
    int length;
    if (addr->sa_family == AF_INET && addrlen >= sizeof(struct sockaddr_in)) {
        bytes = &((const struct sockaddr_in *)addr)->sin_addr;
        length = 4;
    } else if (addr->sa_family == AF_INET6 && addrlen >= sizeof(struct sockaddr_in6)) {
        bytes = &((const struct sockaddr_in6 *)addr)->sin6_addr;
        length = 16;
    } else {
        errno = EAFNOSUPPORT;
        return -1;
    }
    request.header.nlmsg_type = RTM_GETROUTE;
    request.header.nlmsg_flags = NLM_F_REQUEST;
    request.header.nlmsg_seq = 1;
    request.route.rtm_family = addr->sa_family;
    request.route.rtm_dst_len = length * 8;
    struct rtattr *dst = (struct rtattr *)((char *)&request + NLMSG_ALIGN(NLMSG_LENGTH(sizeof(struct rtmsg))));
    dst->rta_type = RTA_DST;
    dst->rta_len = RTA_LENGTH(length);
    memcpy(RTA_DATA(dst), bytes, length);
    request.header.nlmsg_len = NLMSG_ALIGN(NLMSG_LENGTH(sizeof(struct rtmsg))) + RTA_ALIGN(dst->rta_len);

    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) return -1;
    struct sockaddr_nl kernel;
    memset(&kernel, 0, sizeof kernel);
    kernel.nl_family = AF_NETLINK;
    if (sendto(fd, &request, request.header.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    char answer[8192];
    ssize_t received;
    do { received = recv(fd, answer, sizeof answer, 0); } while (received < 0 && errno == EINTR);
    int saved = errno;
    close(fd);
    if (received < 0) { errno = saved; return -1; }
    for (struct nlmsghdr *h = (struct nlmsghdr *)answer; NLMSG_OK(h, (unsigned int)received); h = NLMSG_NEXT(h, received)) {
        if (h->nlmsg_type == NLMSG_ERROR) {
            struct nlmsgerr *error = NLMSG_DATA(h);
            errno = error->error ? -error->error : ENETUNREACH;
            return -1;
        }
        if (h->nlmsg_type != RTM_NEWROUTE) continue;
        struct rtmsg *route = NLMSG_DATA(h);
        int remaining = RTM_PAYLOAD(h);
        for (struct rtattr *a = RTM_RTA(route); RTA_OK(a, remaining); a = RTA_NEXT(a, remaining)) {
            if (a->rta_type != RTA_OIF) continue;
            unsigned int index = *(unsigned int *)RTA_DATA(a);
            return if_indextoname(index, name) ? 0 : -1;
        }
    }
    errno = ENETUNREACH;
    return -1;
}

int uploader_malloc_arena_max(int count) { return mallopt(M_ARENA_MAX, count); }

int uploader_pin_thread_to_nth_cpu(int nth) {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return -1;
    int count = CPU_COUNT(&allowed);
    if (count < 2) return -1;
    int wanted = nth % count;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &allowed)) continue;
        if (wanted-- > 0) continue;
        cpu_set_t only;
        CPU_ZERO(&only);
        CPU_SET(cpu, &only);
        return sched_setaffinity(0, sizeof only, &only) == 0 ? cpu : -1;
    }
    return -1;
}

int uploader_signalfd(const sigset_t *mask) { return signalfd(-1, mask, SFD_CLOEXEC | SFD_NONBLOCK); }

int uploader_signalfd_read(int fd) {
    struct signalfd_siginfo info;
    ssize_t n = read(fd, &info, sizeof info);
    if (n != (ssize_t)sizeof info) return -1;
    return (int)info.ssi_signo;
}

void uploader_name_thread(const char *name) {
    char shortened[16];
    strncpy(shortened, name, sizeof shortened - 1);
    shortened[sizeof shortened - 1] = 0;
    pthread_setname_np(pthread_self(), shortened);
}

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int uploader_pidfd_open(int pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

int uploader_start_writeback(int fd) {
    return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
}
