// Linux calls that Swift's Glibc module does not expose without _GNU_SOURCE.
#ifndef UPLOADER_CSYSSHIMS_H
#define UPLOADER_CSYSSHIMS_H

/// renameat2(..., RENAME_NOREPLACE): fails with EEXIST instead of overwriting.
int uploader_rename_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);

/// fcntl(fd, F_SETLEASE, F_RDLCK / F_UNLCK): succeeds only when no process has the file open for writing.
int uploader_try_read_lease(int fd);
int uploader_release_lease(int fd);

/// An rtnetlink socket bound to the link, address and route multicast groups; -1 with errno on failure.
int uploader_open_rtnetlink(void);

/// glibc's posix_spawn_file_actions_addchdir_np / _addclosefrom_np (GNU extensions).
#include <spawn.h>
int uploader_spawn_addchdir(posix_spawn_file_actions_t *actions, const char *path);
int uploader_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int from);

#endif
