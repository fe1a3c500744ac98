/*===- contract-breaking-plugin.c - plugins that break the ABI ------------===*\
|*                                                                            *|
|* One misbehaviour per MODE (a -D of the build), each of which the host must *|
|* report instead of trusting (backend-contract.test, plugin-contract.test).  *|
|* The backend modes describe target "host" and run nothing.                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "kjit-c/Plugin.h"

#include <string.h>

#define GOOD 0
#define NAME_LEN_HUGE 1    /* name_len 2^40 on "bad" */
#define NAME_LEN_LIES 2    /* name_len 65536 on "bad" */
#define NAME_ESC 3         /* a name with an ESC byte */
#define REJECT_LEN_HUGE 4  /* refuses with reject_reason_len 2^20 on "no" */
#define FOREIGN_STATUS 5   /* a status the plugin made itself */
#define NULL_KERNEL 6      /* load succeeds without a handle */
#define NO_FINGERPRINT 7   /* no fingerprint entry */
#define NULL_FINGERPRINT 8 /* a NULL fingerprint buffer of 5 bytes */
#define TARGET_LEN_LIES 9  /* target_len 2^40 on "host" */
#define NO_FORMATS 10      /* describe names no format */
#define NO_DESCRIBE 11     /* a backend without describe */
#define NO_DEVICES 12      /* device_count answers 0 */

#ifndef MODE
#define MODE GOOD
#endif

static const kjit_host_api *H;
static struct {
  int32_t code;
  char junk[64];
} fake = {3, "x"};
static int kernel;

static const kjit_artifact_format kElf = {sizeof(kjit_artifact_format), 0,
                                          "elf-shared-object", 17};
static const kjit_artifact_format *const kFormats[] = {&kElf};

static kjit_status *describe(void *s, kjit_backend_describe_args *a) {
  (void)s;
  a->target = "host";
  a->target_len = MODE == TARGET_LEN_LIES ? (size_t)1 << 40 : 4;
  a->arch = "bad";
  a->arch_len = 3;
  a->warp_size = 1;
  a->num_formats = MODE == NO_FORMATS ? 0 : 1;
  a->formats = kFormats;
  return NULL;
}
static kjit_status *fingerprint(void *s, kjit_backend_fingerprint_args *a) {
  (void)s;
  a->fingerprint.data = MODE == NULL_FINGERPRINT ? NULL : (const uint8_t *)"r";
  a->fingerprint.size = MODE == NULL_FINGERPRINT ? 5 : 1;
  return NULL;
}
static kjit_status *finalize(void *s, kjit_backend_finalize_args *a) {
  (void)s;
  a->loadable.data = a->artifact;
  a->loadable.size = a->artifact_size;
  return NULL;
}
static kjit_status *load(void *s, kjit_backend_load_args *a) {
  (void)s;
  a->kernel = MODE == NULL_KERNEL ? NULL : &kernel;
  return NULL;
}
static kjit_status *launch(void *s, kjit_backend_launch_args *a) {
  (void)s;
  (void)a;
  return NULL;
}
static kjit_status *device_count(void *s, kjit_backend_device_count_args *a) {
  (void)s;
  a->count = 0;
  return NULL;
}
static kjit_status *unload(void *s, kjit_backend_unload_args *a) {
  (void)s;
  (void)a;
  return NULL;
}
static const kjit_backend_table backend = {
    .struct_size = sizeof(kjit_backend_table),
    .name = "bad-host",
    .name_len = 8,
    .describe = MODE == NO_DESCRIBE ? NULL : describe,
    .fingerprint = MODE == NO_FINGERPRINT ? NULL : fingerprint,
    .finalize = finalize,
    .load = load,
    .launch = launch,
    .unload = unload,
    .device_count = MODE == NO_DEVICES ? device_count : NULL};

static kjit_status *cache(void *s, const kjit_cache_event *e, int32_t *d) {
  (void)s;
  (void)e;
  (void)d;
  return MODE == FOREIGN_STATUS ? (kjit_status *)&fake : NULL;
}
static const kjit_hook_table hooks = {.struct_size = sizeof(kjit_hook_table),
                                      .cache = cache};

static kjit_status *init(const kjit_host_api *h, kjit_host_context *c,
                         void **self) {
  (void)c;
  H = h;
  *self = NULL;
  if (MODE == FOREIGN_STATUS) {
    /* The host's entries must not read or free what they did not make. */
    const char *message = NULL;
    size_t len = 0;
    H->status_destroy((kjit_status *)&fake);
    H->status_message((kjit_status *)&fake, &message, &len);
    if (H->status_code((kjit_status *)&fake) != KJIT_STATUS_INTERNAL ||
        len == 0 || fake.code != 3)
      return H->status_create(KJIT_STATUS_INTERNAL, "foreign status read", 19);
  }
  return NULL;
}

static kjit_plugin_api api = {.struct_size = sizeof(kjit_plugin_api),
                              .name = "bad",
                              .name_len = 3,
                              .version = "0",
                              .version_len = 1,
                              .init = init};

KJIT_PLUGIN_EXPORT int32_t kjit_plugin_negotiate_v1(kjit_negotiate *io) {
  if (MODE == REJECT_LEN_HUGE) {
    io->reject_reason = "no";
    io->reject_reason_len = (size_t)1 << 20;
    return KJIT_STATUS_FAILED_PRECONDITION;
  }
  if (MODE == NAME_LEN_HUGE)
    api.name_len = (size_t)1 << 40;
  if (MODE == NAME_LEN_LIES)
    api.name_len = 1 << 16;
  if (MODE == NAME_ESC) {
    api.name = "b\033]0;x\007d";
    api.name_len = 7;
  }
  if (MODE == FOREIGN_STATUS)
    api.hooks = &hooks;
  else if (MODE != NAME_LEN_HUGE && MODE != NAME_LEN_LIES && MODE != NAME_ESC)
    api.backend = &backend;
  io->plugin_abi_major = KJIT_ABI_MAJOR;
  io->plugin_abi_minor = KJIT_ABI_MINOR;
  io->plugin = &api;
  return KJIT_STATUS_OK;
}
