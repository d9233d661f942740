// libinotifytools and the kernel's inotify constants.
#ifndef UPLOADER_CINOTIFYTOOLS_SHIM_H
#define UPLOADER_CINOTIFYTOOLS_SHIM_H
#include <sys/inotify.h>
#include <inotifytools/inotifytools.h>
#endif
