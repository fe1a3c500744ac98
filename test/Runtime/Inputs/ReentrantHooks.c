/*===- ReentrantHooks.c - hooks that call the application back ------------===*\
|*                                                                            *|
|* A hook plugin whose cache and compiled hooks call back into the process    *|
|* that loaded it, as a profiler or autotuner embedded in an application      *|
|* does: each hook calls the process's kjit_test_reentrant_hook(hook, repr,   *|
|* repr_len) if it exports one (found with dlsym), which may launch kernels   *|
|* from inside the compile (unittests/Runtime/ReentrantLaunchTest.cpp).       *|
|* Thread-safe, so that hooks of compiles on two threads run at once.         *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* RTLD_DEFAULT is a GNU extension of dlfcn.h. */
#define _GNU_SOURCE

#include "kjit-c/Plugin.h"

#include <dlfcn.h>
#include <stddef.h>

/* hook: 0 for the cache hook, 1 for the compiled hook. */
typedef void (*reentrant_hook_fn)(int hook, const char *repr, size_t repr_len);

static void call_back(int hook, const kjit_compile_info *info) {
  reentrant_hook_fn callback;
  *(void **)(&callback) = dlsym(RTLD_DEFAULT, "kjit_test_reentrant_hook");
  if (callback)
    callback(hook, info->repr, info->repr_len);
}

static kjit_status *reentrant_cache(void *self, const kjit_cache_event *event,
                                    int32_t *decision) {
  (void)self;
  (void)decision;
  call_back(0, event->info);
  return NULL;
}

static kjit_status *reentrant_compiled(void *self,
                                       const kjit_compiled_event *event) {
  (void)self;
  call_back(1, event->info);
  return NULL;
}

static kjit_status *reentrant_init(const kjit_host_api *host,
                                   kjit_host_context *ctx, void **self) {
  (void)host;
  (void)ctx;
  *self = NULL;
  return NULL;
}

static const kjit_hook_table reentrant_hooks = {
    .struct_size = sizeof(kjit_hook_table),
    .cache = reentrant_cache,
    .compiled = reentrant_compiled,
};

static const kjit_plugin_api reentrant_api = {
    .struct_size = sizeof(kjit_plugin_api),
    .name = "reentrant",
    .name_len = 9,
    .version = "1",
    .version_len = 1,
    .capabilities = KJIT_CAP_THREAD_SAFE,
    .init = reentrant_init,
    .hooks = &reentrant_hooks,
};

KJIT_PLUGIN_EXPORT int32_t kjit_plugin_negotiate_v1(kjit_negotiate *io) {
  if (io->struct_size < KJIT_STRUCT_SIZE(kjit_negotiate, plugin))
    return KJIT_STATUS_INVALID_ARGUMENT;
  io->plugin_abi_major = KJIT_ABI_MAJOR;
  io->plugin_abi_minor = KJIT_ABI_MINOR;
  io->plugin = &reentrant_api;
  return KJIT_STATUS_OK;
}
