/*===- FingerprintBackend.c - a backend with a test-set fingerprint -------===*\
|*                                                                            *|
|* A "host" backend (target host, format elf-shared-object) that accepts and  *|
|* loads anything and launches nothing; its fingerprint is the value of       *|
|* KJIT_TEST_FINGERPRINT. test/Runtime/fingerprint.test shows that the        *|
|* backend's fingerprint changes the cache key and nothing else does;         *|
|* finalize-info.test, that what finalize reports joins the metadata.         *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "kjit-c/Plugin.h"

#include <stdlib.h>
#include <string.h>

static const kjit_artifact_format kElf = {sizeof(kjit_artifact_format), 0,
                                          "elf-shared-object", 17};
static const kjit_artifact_format *const kFormats[] = {&kElf};
static int kKernel;

static kjit_status *describe(void *self, kjit_backend_describe_args *args) {
  (void)self;
  args->target = "host";
  args->target_len = 4;
  args->arch = "test";
  args->arch_len = 4;
  args->warp_size = 32;
  args->num_formats = 1;
  args->formats = kFormats;
  return 0;
}

static kjit_status *fingerprint(void *self,
                                kjit_backend_fingerprint_args *args) {
  const char *value = getenv("KJIT_TEST_FINGERPRINT");
  (void)self;
  if (!value)
    value = "";
  /* Static storage: the environment outlives the call. */
  args->fingerprint.data = (const uint8_t *)value;
  args->fingerprint.size = strlen(value);
  args->fingerprint.release = 0;
  return 0;
}

/* What finalize reports of the kernel (ABI 1.5's info) is the value of
 * KJIT_TEST_FINALIZE_INFO, as it is: nothing when it is unset. */
static kjit_status *finalize(void *self, kjit_backend_finalize_args *args) {
  const char *info = getenv("KJIT_TEST_FINALIZE_INFO");
  (void)self;
  args->loadable.data = (const uint8_t *)"test";
  args->loadable.size = 4;
  args->loadable.release = 0;
  if (info && KJIT_HAS_FIELD(args, kjit_backend_finalize_args, info)) {
    args->info.data = (const uint8_t *)info;
    args->info.size = strlen(info);
  }
  return 0;
}

static kjit_status *load(void *self, kjit_backend_load_args *args) {
  (void)self;
  args->kernel = &kKernel;
  return 0;
}

static kjit_status *launch(void *self, kjit_backend_launch_args *args) {
  (void)self;
  (void)args;
  return 0;
}

static kjit_status *unload(void *self, kjit_backend_unload_args *args) {
  (void)self;
  (void)args;
  return 0;
}

static const kjit_backend_table kBackend = {.struct_size =
                                                sizeof(kjit_backend_table),
                                            .name = "fingerprint-test",
                                            .name_len = 16,
                                            .describe = describe,
                                            .fingerprint = fingerprint,
                                            .finalize = finalize,
                                            .load = load,
                                            .launch = launch,
                                            .unload = unload};

static const kjit_plugin_api kApi = {.struct_size = sizeof(kjit_plugin_api),
                                     .name = "fingerprint-test",
                                     .name_len = 16,
                                     .version = "1",
                                     .version_len = 1,
                                     .capabilities = KJIT_CAP_THREAD_SAFE,
                                     .backend = &kBackend};

KJIT_PLUGIN_EXPORT int32_t kjit_plugin_negotiate_v1(kjit_negotiate *io) {
  io->plugin_abi_major = KJIT_ABI_MAJOR;
  io->plugin_abi_minor = 0;
  io->plugin = &kApi;
  return KJIT_STATUS_OK;
}
