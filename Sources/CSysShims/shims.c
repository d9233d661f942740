#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include "CSysShims.h"

int uploader_rename_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    return renameat2(olddirfd, oldpath, newdirfd, newpath, RENAME_NOREPLACE);
}

int uploader_try_read_lease(int fd) { return fcntl(fd, F_SETLEASE, F_RDLCK); }
int uploader_release_lease(int fd) { return fcntl(fd, F_SETLEASE, F_UNLCK); }
