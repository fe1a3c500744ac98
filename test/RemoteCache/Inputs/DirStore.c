/*===- DirStore.c - a cache store over a directory, for the tests ---------===*\
|*                                                                            *|
|* Store "dir" keeps each value in a file of $KJIT_TEST_STORE_DIR named by    *|
|* the key's hex digits. Several processes (two "machines") share it, and a   *|
|* test can tamper with a value by editing its file. It says it is remote, so *|
|* the runtime treats it exactly as it treats Redis.                          *|
|*                                                                            *|
|* KJIT_TEST_STORE_FAIL=<code> makes get and put return that status code      *|
|* (4: timeout, 14: unavailable, 1: cancelled, ...), to check how the         *|
|* runtime counts and reports each. KJIT_TEST_STORE_MAX_VALUE=<bytes> is what *|
|* describe announces as its largest value (default 64 MiB); the store itself *|
|* enforces nothing, so that a test can plant an oversized value.            *|
\*===----------------------------------------------------------------------===*/

#include "kjit-c/Plugin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dir_store {
  const kjit_host_api *host;
  char dir[3072];
  int fail_code;
  uint64_t max_value;
} dir_store;

static kjit_status *fail(dir_store *s, int32_t code, const char *what) {
  char message[4096];
  int n = snprintf(message, sizeof message, "dir store %s: %s", s->dir, what);
  if (n < 0 || (size_t)n >= sizeof message)
    n = (int)strlen(message);
  return s->host->status_create(code, message, (size_t)n);
}

/* DIR/<hex of key>, or 0 when it would not fit. */
static int entry_path(dir_store *s, const uint8_t *key, size_t size, char *out,
                      size_t out_size) {
  static const char hex[] = "0123456789abcdef";
  size_t at = (size_t)snprintf(out, out_size, "%s/", s->dir), i;
  if (at + 2 * size + 8 >= out_size)
    return 0;
  for (i = 0; i < size; ++i) {
    out[at++] = hex[key[i] >> 4];
    out[at++] = hex[key[i] & 15];
  }
  out[at] = '\0';
  return 1;
}

static void release_malloced(void *owner, const uint8_t *data, size_t size) {
  (void)data;
  (void)size;
  free(owner);
}

static kjit_status *dir_get(void *self, kjit_cache_get_args *args) {
  dir_store *s = self;
  char path[4096];
  FILE *file;
  long size;
  uint8_t *bytes;
  if (s->fail_code)
    return fail(s, s->fail_code, "get failed as KJIT_TEST_STORE_FAIL asks");
  if (!entry_path(s, args->key, args->key_size, path, sizeof path))
    return fail(s, KJIT_STATUS_INVALID_ARGUMENT, "key too long");
  file = fopen(path, "rb");
  if (!file)
    return errno == ENOENT ? NULL : fail(s, KJIT_STATUS_INTERNAL, "open");
  if (fseek(file, 0, SEEK_END) != 0 || (size = ftell(file)) < 0 ||
      fseek(file, 0, SEEK_SET) != 0) {
    fclose(file);
    return fail(s, KJIT_STATUS_INTERNAL, "seek");
  }
  bytes = malloc(size ? (size_t)size : 1);
  if (!bytes || fread(bytes, 1, (size_t)size, file) != (size_t)size) {
    free(bytes);
    fclose(file);
    return fail(s, KJIT_STATUS_INTERNAL, "read");
  }
  fclose(file);
  args->found = 1;
  args->value.struct_size = sizeof(kjit_buffer);
  args->value.data = bytes;
  args->value.size = (size_t)size;
  args->value.owner = bytes;
  args->value.release = release_malloced;
  return NULL;
}

static kjit_status *dir_put(void *self, const kjit_cache_put_args *args) {
  dir_store *s = self;
  char path[4096], temporary[4200];
  FILE *file;
  if (s->fail_code)
    return fail(s, s->fail_code, "put failed as KJIT_TEST_STORE_FAIL asks");
  if (!entry_path(s, args->key, args->key_size, path, sizeof path))
    return fail(s, KJIT_STATUS_INVALID_ARGUMENT, "key too long");
  if ((args->flags & KJIT_CACHE_PUT_IF_ABSENT) && (file = fopen(path, "rb"))) {
    fclose(file);
    return fail(s, KJIT_STATUS_ALREADY_EXISTS, "exists");
  }
  snprintf(temporary, sizeof temporary, "%s.tmp", path);
  file = fopen(temporary, "wb");
  if (!file)
    return fail(s, KJIT_STATUS_INTERNAL, "create");
  if (fwrite(args->value, 1, args->value_size, file) != args->value_size) {
    fclose(file);
    remove(temporary);
    return fail(s, KJIT_STATUS_INTERNAL, "write");
  }
  if (fclose(file) != 0 || rename(temporary, path) != 0) {
    remove(temporary);
    return fail(s, KJIT_STATUS_INTERNAL, "publish");
  }
  return NULL;
}

static kjit_status *dir_describe(void *self,
                                 kjit_cache_store_describe_args *args) {
  dir_store *s = self;
  args->max_value_size = s->max_value;
  args->is_remote = 1;
  return NULL;
}

static kjit_status *dir_init(const kjit_host_api *host, kjit_host_context *ctx,
                             void **self) {
  const char *dir = getenv("KJIT_TEST_STORE_DIR");
  const char *code = getenv("KJIT_TEST_STORE_FAIL");
  const char *max = getenv("KJIT_TEST_STORE_MAX_VALUE");
  dir_store *s;
  (void)ctx;
  if (!dir || !*dir || strlen(dir) >= sizeof s->dir)
    return host->status_create(KJIT_STATUS_INVALID_ARGUMENT,
                               "KJIT_TEST_STORE_DIR is not set", 30);
  s = calloc(1, sizeof *s);
  if (!s)
    return host->status_create(KJIT_STATUS_RESOURCE_EXHAUSTED, "no memory", 9);
  s->host = host;
  strcpy(s->dir, dir);
  s->fail_code = code ? atoi(code) : 0;
  s->max_value = max ? strtoull(max, NULL, 10) : (uint64_t)64 << 20;
  *self = s;
  return NULL;
}

static void dir_fini(void *self) { free(self); }

static const kjit_cache_store_table dir_table = {
    .struct_size = sizeof(kjit_cache_store_table),
    .name = "dir",
    .name_len = 3,
    .get = dir_get,
    .put = dir_put,
    .describe = dir_describe,
};

static const kjit_plugin_api dir_api = {
    .struct_size = sizeof(kjit_plugin_api),
    .name = "dirstore",
    .name_len = 8,
    .version = "1",
    .version_len = 1,
    .init = dir_init,
    .fini = dir_fini,
    .cache_store = &dir_table,
};

int32_t kjit_plugin_negotiate_v1(kjit_negotiate *io) {
  if (io->host_max_minor < KJIT_ABI_MINOR) {
    io->reject_reason = "needs the host's ABI minor";
    io->reject_reason_len = strlen(io->reject_reason);
    return KJIT_STATUS_FAILED_PRECONDITION;
  }
  io->plugin_abi_major = KJIT_ABI_MAJOR;
  io->plugin_abi_minor = KJIT_ABI_MINOR;
  io->plugin = &dir_api;
  return KJIT_STATUS_OK;
}
