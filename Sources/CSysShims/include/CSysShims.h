// Linux calls that Swift's Glibc module does not expose without _GNU_SOURCE.
#ifndef UPLOADER_CSYSSHIMS_H
#define UPLOADER_CSYSSHIMS_H

/// renameat2(..., RENAME_NOREPLACE): fails with EEXIST instead of overwriting.
int uploader_rename_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);

/// renameat2(..., RENAME_EXCHANGE): swaps two names atomically (both must exist).
int uploader_rename_exchange(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);

/// copy_file_range(2) from `in` at `*offset` to `out` at its file offset; the kernel copies,
/// no buffer passes through user space.
long uploader_copy_file_range(int in, long long *offset, int out, unsigned long length);

/// fcntl(fd, F_SETLEASE, F_RDLCK / F_UNLCK): succeeds only when no process has the file open for writing.
int uploader_try_read_lease(int fd);
int uploader_release_lease(int fd);

/// fcntl(fd, F_OFD_SETLKW, ...) on the whole file, F_WRLCK when `exclusive`, else F_RDLCK: waits
/// for the lock; it belongs to the open file description and ends with its last close.
int uploader_ofd_lock_wait(int fd, int exclusive);

/// An rtnetlink socket bound to the link, address and route multicast groups; -1 with errno on failure.
int uploader_open_rtnetlink(void);

/// The interface the kernel's route to `addr` (a `struct sockaddr` of AF_INET or AF_INET6,
/// `addrlen` bytes) leaves by, asked with one RTM_GETROUTE request; its name is written to
/// `name` (IF_NAMESIZE bytes). 0 on success, -1 with errno on failure (ENETUNREACH: no route).
int uploader_route_interface(const void *addr, unsigned int addrlen, char *name);

/// glibc's posix_spawn_file_actions_addchdir_np / _addclosefrom_np (GNU extensions).
#include <spawn.h>
int uploader_spawn_addchdir(posix_spawn_file_actions_t *actions, const char *path);
int uploader_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int from);

/// mallopt(M_ARENA_MAX, count) (malloc.h is not in Swift's Glibc module); 1 on success.
int uploader_malloc_arena_max(int count);

/// sched_setaffinity of the calling thread to the `nth` processor (counting round) of the set it
/// may run on now; threads it starts later inherit it. The processor's number, or -1 when the
/// set holds one processor already or cannot be read or set.
int uploader_pin_thread_to_nth_cpu(int nth);

#include <signal.h>

/// signalfd(2) for `mask` (signals the caller keeps blocked), close-on-exec and non-blocking; -1 with errno.
int uploader_signalfd(const sigset_t *mask);

/// Reads one signal from a signalfd: its number, or -1 with errno (EAGAIN: none waiting).
int uploader_signalfd_read(int fd);

/// Names the calling thread (its first 15 bytes), as /proc/PID/task/TID/comm, top -H and gdb show it.
void uploader_name_thread(const char *name);

/// pidfd_open(2): a descriptor (close-on-exec) that polls readable once process `pid` has
/// exited, without reaping it; -1 with errno (ENOSYS before Linux 5.3).
int uploader_pidfd_open(int pid);

/// sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE): starts writeback of the file's dirty pages
/// and returns without waiting for it; no durability (an fsync still must follow). 0, or -1 with errno.
int uploader_start_writeback(int fd);

#endif
