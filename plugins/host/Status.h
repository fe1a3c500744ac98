/*===- Status.h - statuses of the host backend --------------------*- C -*-===*\
|*                                                                            *|
|* The leaf of the host backend's files: every other file reports errors     *|
|* through it, and it needs nothing but the ABI header and libc.              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KJIT_PLUGINS_HOST_STATUS_H
#define KJIT_PLUGINS_HOST_STATUS_H

#include "kjit-c/Plugin.h"

/** The host's API table, stored by init. Statuses can only be created through
 *  it, so every file that reports an error needs it. */
extern const kjit_host_api *host_api;

/** Creates a status whose message is formatted like printf. Never NULL. */
kjit_status *host_error(int32_t code, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif /* KJIT_PLUGINS_HOST_STATUS_H */
