/*===- SpecAttributesBackend.c - a backend with its own specialization ----===*\
|*                                                                            *|
|* A "host" backend (target host, format elf-shared-object, arch             *|
|* "spec-test") that accepts and loads anything and launches nothing, and    *|
|* describes two specialization attributes of its own (plugin ABI 1.3):      *|
|*   pointer_range_32  pointers: the address is below 2^32 (what Triton's    *|
|*                     HIP backend calls pointer_range 32, on the address)   *|
|*   small_int         integers: the value is below 256                      *|
|* test/Runtime/spec-attributes.test and BackendAttributesTest.cpp drive     *|
|* it. KJIT_TEST_SPEC_MODE makes it misbehave, one way per value, so that    *|
|* every check the runtime makes of describe and specialize is seen:         *|
|*   too-many, null-array, null-entry, bad-name, reserved-name, twice,       *|
|*   bad-kinds, no-entry (describe); fail, extra-bits, wrong-kind            *|
|*   (specialize).                                                           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "kjit-c/Plugin.h"

#include <stdlib.h>
#include <string.h>

static const kjit_host_api *host;
static const char *mode = "";
static int kKernel;

static const kjit_artifact_format kElf = {sizeof(kjit_artifact_format), 0,
                                          "elf-shared-object", 17};
static const kjit_artifact_format *const kFormats[] = {&kElf};

#define ATTRIBUTE(name, kinds)                                                 \
  {sizeof(kjit_spec_attribute), 0, name, sizeof(name) - 1, kinds, 0}
static const kjit_spec_attribute kPointerRange =
    ATTRIBUTE("pointer_range_32", KJIT_SPEC_ON_POINTERS);
static const kjit_spec_attribute kSmallInt =
    ATTRIBUTE("small_int", KJIT_SPEC_ON_INTEGERS);
static const kjit_spec_attribute kBadName =
    ATTRIBUTE("Pointer-Range", KJIT_SPEC_ON_POINTERS);
static const kjit_spec_attribute kReserved =
    ATTRIBUTE("divisibility_16", KJIT_SPEC_ON_POINTERS);
static const kjit_spec_attribute kBadKinds = ATTRIBUTE("odd_kinds", 0x10);
static const kjit_spec_attribute *const kAttributes[] = {&kPointerRange,
                                                         &kSmallInt};
static const kjit_spec_attribute *const kTwice[] = {&kSmallInt, &kSmallInt};
static const kjit_spec_attribute *const kNullEntry[] = {&kPointerRange, 0};
static const kjit_spec_attribute *const kBadNames[] = {&kBadName};
static const kjit_spec_attribute *const kReservedNames[] = {&kReserved};
static const kjit_spec_attribute *const kBadKindsList[] = {&kBadKinds};

static int is(const char *m) { return strcmp(mode, m) == 0; }

static kjit_status *describe(void *self, kjit_backend_describe_args *args) {
  (void)self;
  args->target = "host";
  args->target_len = 4;
  args->arch = "spec-test";
  args->arch_len = 9;
  args->warp_size = 32;
  args->num_formats = 1;
  args->formats = kFormats;
  if (!KJIT_HAS_FIELD(args, kjit_backend_describe_args, spec_attributes))
    return 0; /* an older host: no attributes of our own */
  args->num_spec_attributes = 2;
  args->spec_attributes = kAttributes;
  if (is("too-many"))
    args->num_spec_attributes = KJIT_MAX_SPEC_ATTRIBUTES + 1;
  else if (is("null-array"))
    args->spec_attributes = 0;
  else if (is("null-entry"))
    args->spec_attributes = kNullEntry;
  else if (is("bad-name"))
    args->num_spec_attributes = 1, args->spec_attributes = kBadNames;
  else if (is("reserved-name"))
    args->num_spec_attributes = 1, args->spec_attributes = kReservedNames;
  else if (is("twice"))
    args->spec_attributes = kTwice;
  else if (is("bad-kinds"))
    args->num_spec_attributes = 1, args->spec_attributes = kBadKindsList;
  return 0;
}

static kjit_status *specialize(void *self, kjit_backend_specialize_args *args) {
  (void)self;
  args->attributes = 0;
  if (is("fail"))
    return host->status_create(KJIT_STATUS_INVALID_ARGUMENT,
                               "specialize deliberately failed", 30);
  if (args->flags & KJIT_ARG_FLAG_POINTER) {
    if (args->bits < ((uint64_t)1 << 32))
      args->attributes |= 1u << 0;
    if (is("wrong-kind"))
      args->attributes |= 1u << 1; /* small_int is for integers */
  } else if (args->bits < 256) {
    args->attributes |= 1u << 1;
  }
  if (is("extra-bits"))
    args->attributes |= 1u << 5;
  return 0;
}

static kjit_status *fingerprint(void *self,
                                kjit_backend_fingerprint_args *args) {
  (void)self;
  args->fingerprint.data = (const uint8_t *)"spec-attributes-test";
  args->fingerprint.size = 20;
  args->fingerprint.release = 0;
  return 0;
}

static kjit_status *finalize(void *self, kjit_backend_finalize_args *args) {
  (void)self;
  args->loadable.data = (const uint8_t *)"test";
  args->loadable.size = 4;
  args->loadable.release = 0;
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

static kjit_backend_table backend = {
    .struct_size = sizeof(kjit_backend_table),
    .name = "spec-attributes-test",
    .name_len = 20,
    .describe = describe,
    .fingerprint = fingerprint,
    .finalize = finalize,
    .load = load,
    .launch = launch,
    .unload = unload,
    .specialize = specialize,
};

static kjit_status *init(const kjit_host_api *h, kjit_host_context *ctx,
                         void **self) {
  (void)ctx;
  host = h;
  *self = 0;
  return 0;
}

static const kjit_plugin_api kApi = {.struct_size = sizeof(kjit_plugin_api),
                                     .name = "spec-attributes-test",
                                     .name_len = 20,
                                     .version = "1",
                                     .version_len = 1,
                                     .capabilities = KJIT_CAP_THREAD_SAFE,
                                     .init = init,
                                     .backend = &backend};

KJIT_PLUGIN_EXPORT int32_t kjit_plugin_negotiate_v1(kjit_negotiate *io) {
  const char *m = getenv("KJIT_TEST_SPEC_MODE");
  mode = m ? m : "";
  /* Before the host copies the table: no-entry leaves the slot empty. */
  if (is("no-entry"))
    backend.specialize = 0;
  io->plugin_abi_major = KJIT_ABI_MAJOR;
  io->plugin_abi_minor = KJIT_ABI_MINOR;
  io->plugin = &kApi;
  return KJIT_STATUS_OK;
}
