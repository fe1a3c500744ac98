/*===- FormatStatus.h - printf-style statuses for C plugins -------*- C -*-===*\
|*                                                                            *|
|* The in-tree C plugins (host, cuda) report errors as statuses with         *|
|* formatted messages; this is the one formatter they share.                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KJIT_PLUGINS_COMMON_FORMATSTATUS_H
#define KJIT_PLUGINS_COMMON_FORMATSTATUS_H

#include "kjit-c/Plugin.h"

#include <stdarg.h>

/** A status of `code` whose message is `format` applied to `ap`, created
 *  through `api`. A message that cannot be formatted becomes `fallback`;
 *  one too long for memory is truncated. Never NULL. */
kjit_status *kjit_format_status(const kjit_host_api *api, int32_t code,
                                const char *fallback, const char *format,
                                va_list ap);

#endif /* KJIT_PLUGINS_COMMON_FORMATSTATUS_H */
