/*===- RedisStore.c - the fleet cache's store on Redis --------------------===*\
|*                                                                            *|
|* Cache store "redis" (docs/RedisStore.md): GET and SET [NX] [EX ttl] on     *|
|* one Redis key per kjit key, "<namespace>:<key>", through Debian's hiredis *|
|* 0.14 (blocking connections with connect and operation timeouts). It       *|
|* trusts and checks nothing in values: the runtime signs and verifies them. *|
|*                                                                            *|
|* What the host relies on is the status code: DEADLINE_EXCEEDED a timeout,  *|
|* UNAVAILABLE refused/reset/closed, DATA_LOSS a reply that is not Redis's,  *|
|* PERMISSION_DENIED an ACL or password refusal, CANCELLED "not asked",      *|
|* OUT_OF_RANGE a stored value above the maximum size (not handed over; the  *|
|* runtime counts a rejected value, as for one that fails verification). A   *|
|* connection-level failure opens a circuit breaker: the failing call says   *|
|* so ("; remote cache off for 30 s") and every call until the window ends   *|
|* returns CANCELLED at once, so an outage costs one timeout per window. A   *|
|* put refused by an ACL turns puts off for the process; gets go on.         *|
|* Gets and puts use separate connections, so that the runtime's background  *|
|* publisher never delays a launch's lookup.                                 *|
\*===----------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L

#include "../common/FormatStatus.h"
#include "kjit-c/Plugin.h"

#include <hiredis.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct connection {
  pthread_mutex_t lock;
  redisContext *context; /* NULL: connect on next use */
} connection;

typedef struct redis_store {
  const kjit_host_api *host;
  char server[300]; /* host name or address */
  int port;
  long db;
  char user[256], password[512];
  int has_user, has_password;
  char ns[256];
  size_t ns_len;
  uint32_t connect_ms, operation_ms, retry_ms;
  uint64_t max_value;
  connection get_connection, put_connection;
  pthread_mutex_t state; /* guards the two fields below */
  int64_t off_until_ms;  /* the breaker is open until then (monotonic) */
  int puts_denied;
} redis_store;

static int64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static kjit_status *make_status(const kjit_host_api *host, int32_t code,
                                const char *format, ...) {
  kjit_status *status;
  va_list args;
  va_start(args, format);
  status = kjit_format_status(host, code, "redis: (unformattable message)",
                              format, args);
  va_end(args);
  return status;
}

static struct timeval to_timeval(uint32_t ms) {
  struct timeval tv;
  tv.tv_sec = ms / 1000;
  tv.tv_usec = (ms % 1000) * 1000;
  return tv;
}

/*===--- Settings ---------------------------------------------------------===*/

/* "250ms", "2s", "1m", a number alone is milliseconds. 0: malformed. */
static uint32_t parse_ms(const char *text) {
  char *end;
  unsigned long long value;
  if (!text || text[0] < '0' || text[0] > '9')
    return 0;
  errno = 0;
  value = strtoull(text, &end, 10);
  if (errno || value > 3600000)
    return 0;
  if (!*end || !strcmp(end, "ms"))
    return (uint32_t)value;
  if (!strcmp(end, "s"))
    return value <= 3600 ? (uint32_t)(value * 1000) : 0;
  if (!strcmp(end, "m"))
    return value <= 60 ? (uint32_t)(value * 60000) : 0;
  return 0;
}

/* "1048576", "512K", "64M", "1G". 0: malformed. */
static uint64_t parse_size(const char *text) {
  char *end;
  unsigned long long value;
  if (!text || text[0] < '0' || text[0] > '9')
    return 0;
  errno = 0;
  value = strtoull(text, &end, 10);
  if (errno || value > ((uint64_t)1 << 40))
    return 0;
  if (!*end)
    return value;
  if (!strcmp(end, "K"))
    return value << 10;
  if (!strcmp(end, "M"))
    return value << 20;
  if (!strcmp(end, "G"))
    return value << 30;
  return 0;
}

/* Splits redis://[[user]:password@]host[:port][/db] into s. NULL or why. */
static const char *parse_url(redis_store *s, const char *url) {
  const char *rest, *at, *slash, *colon, *host_end;
  size_t n;
  if (!strncmp(url, "rediss://", 9))
    return "rediss:// (TLS) is not supported: Debian's hiredis 0.14 has no "
           "TLS; reach the server through a TLS tunnel (stunnel) or use "
           "redis:// on a trusted network";
  if (strncmp(url, "redis://", 8))
    return "it does not start with redis://";
  rest = url + 8;
  slash = strchr(rest, '/');
  at = strrchr(rest, '@');
  if (at && slash && at > slash)
    at = NULL;
  if (at) {
    const char *sep = memchr(rest, ':', (size_t)(at - rest));
    const char *user_end = sep ? sep : at;
    n = (size_t)(user_end - rest);
    if (n >= sizeof s->user)
      return "the user name is too long";
    memcpy(s->user, rest, n);
    s->user[n] = '\0';
    s->has_user = n > 0;
    if (sep) {
      n = (size_t)(at - sep - 1);
      if (n >= sizeof s->password)
        return "the password is too long";
      memcpy(s->password, sep + 1, n);
      s->password[n] = '\0';
      s->has_password = 1;
    }
    rest = at + 1;
  }
  host_end = slash ? slash : rest + strlen(rest);
  if (*rest == '[') { /* [IPv6]:port */
    const char *close = memchr(rest, ']', (size_t)(host_end - rest));
    if (!close)
      return "an IPv6 address misses its ']'";
    n = (size_t)(close - rest - 1);
    if (n == 0 || n >= sizeof s->server)
      return "the host is empty or too long";
    memcpy(s->server, rest + 1, n);
    s->server[n] = '\0';
    colon = close + 1 < host_end && close[1] == ':' ? close + 1 : NULL;
    if (!colon && close + 1 != host_end)
      return "junk after the IPv6 address";
  } else {
    colon = memchr(rest, ':', (size_t)(host_end - rest));
    n = (size_t)((colon ? colon : host_end) - rest);
    if (n == 0 || n >= sizeof s->server)
      return "the host is empty or too long";
    memcpy(s->server, rest, n);
    s->server[n] = '\0';
  }
  s->port = 6379;
  if (colon) {
    char digits[8];
    char *end;
    long port;
    n = (size_t)(host_end - colon - 1);
    if (n == 0 || n >= sizeof digits)
      return "the port is not a number from 1 to 65535";
    memcpy(digits, colon + 1, n);
    digits[n] = '\0';
    port = strtol(digits, &end, 10);
    if (*end || port < 1 || port > 65535)
      return "the port is not a number from 1 to 65535";
    s->port = (int)port;
  }
  s->db = 0;
  if (slash && slash[1]) {
    char *end;
    s->db = strtol(slash + 1, &end, 10);
    if (*end || s->db < 0 || s->db > 1000000 || slash[1] < '0' ||
        slash[1] > '9')
      return "the database after '/' is not a number";
  }
  return NULL;
}

/* The first line of a file nobody else can read. NULL or why. */
static const char *read_password_file(redis_store *s, const char *path) {
  struct stat st;
  ssize_t got;
  char *newline;
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return "cannot be opened (missing, or a symbolic link)";
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return "is not a regular file";
  }
  if (st.st_mode & 077) {
    close(fd);
    return "is readable by group or others (chmod 600)";
  }
  got = read(fd, s->password, sizeof s->password - 1);
  close(fd);
  if (got < 0)
    return "cannot be read";
  s->password[got] = '\0';
  newline = strchr(s->password, '\n');
  if (newline)
    *newline = '\0';
  s->has_password = 1;
  return NULL;
}

/*===--- Connections and the breaker --------------------------------------===*/

static void drop(connection *c) {
  if (c->context)
    redisFree(c->context);
  c->context = NULL;
}

/* CANCELLED while the breaker is open, else NULL. */
static kjit_status *breaker_check(redis_store *s, const char *operation) {
  int64_t left;
  pthread_mutex_lock(&s->state);
  left = s->off_until_ms - now_ms();
  pthread_mutex_unlock(&s->state);
  if (left <= 0)
    return NULL;
  return make_status(s->host, KJIT_STATUS_CANCELLED,
                     "redis %s:%d: %s not asked: remote cache off for %lld "
                     "more ms",
                     s->server, s->port, operation, (long long)left);
}

/* Closes the connection, opens the breaker, and returns the failure. */
static kjit_status *trip(redis_store *s, connection *c, int32_t code,
                         const char *operation, const char *what) {
  drop(c);
  pthread_mutex_lock(&s->state);
  s->off_until_ms = now_ms() + s->retry_ms;
  pthread_mutex_unlock(&s->state);
  return make_status(s->host, code,
                     "redis %s:%d: %s: %s; remote cache off for %u s",
                     s->server, s->port, operation, what,
                     (unsigned)((s->retry_ms + 999) / 1000));
}

static int is_denied(const redisReply *reply) {
  return reply->type == REDIS_REPLY_ERROR &&
         (!strncmp(reply->str, "NOPERM", 6) ||
          !strncmp(reply->str, "WRONGPASS", 9) ||
          !strncmp(reply->str, "NOAUTH", 6));
}

/* Runs a command on c (connecting first if needed); the reply, or NULL
 * with *status set (the breaker opened for connection-level failures). */
static redisReply *command(redis_store *s, connection *c, uint32_t timeout_ms,
                           const char *operation, int argc, const char **argv,
                           const size_t *lengths, kjit_status **status) {
  redisReply *reply;
  uint32_t ms = timeout_ms ? timeout_ms : s->operation_ms;
  *status = NULL;
  if (!c->context) {
    redisContext *context =
        redisConnectWithTimeout(s->server, s->port, to_timeval(s->connect_ms));
    if (!context) {
      *status = trip(s, c, KJIT_STATUS_RESOURCE_EXHAUSTED, operation,
                     "out of memory");
      return NULL;
    }
    if (context->err) {
      char what[300];
      int timed_out = strstr(context->errstr, "timed out") != NULL;
      snprintf(what, sizeof what, "cannot connect: %s", context->errstr);
      redisFree(context);
      *status = trip(s, c,
                     timed_out ? KJIT_STATUS_DEADLINE_EXCEEDED
                               : KJIT_STATUS_UNAVAILABLE,
                     operation, what);
      return NULL;
    }
    c->context = context;
    redisSetTimeout(context, to_timeval(ms));
    if (s->has_password) {
      const char *auth[3];
      size_t auth_len[3];
      int n = 0;
      auth[n] = "AUTH";
      auth_len[n++] = 4;
      if (s->has_user) {
        auth[n] = s->user;
        auth_len[n++] = strlen(s->user);
      }
      auth[n] = s->password;
      auth_len[n++] = strlen(s->password);
      reply = command(s, c, timeout_ms, "AUTH", n, auth, auth_len, status);
      if (!reply)
        return NULL;
      if (reply->type == REDIS_REPLY_ERROR) {
        char what[300];
        snprintf(what, sizeof what, "the server refused the password: %.200s",
                 reply->str);
        freeReplyObject(reply);
        *status = trip(s, c, KJIT_STATUS_PERMISSION_DENIED, operation, what);
        return NULL;
      }
      freeReplyObject(reply);
    }
    if (s->db) {
      char db[24];
      const char *select[2] = {"SELECT", db};
      size_t select_len[2];
      snprintf(db, sizeof db, "%ld", s->db);
      select_len[0] = 6;
      select_len[1] = strlen(db);
      reply =
          command(s, c, timeout_ms, "SELECT", 2, select, select_len, status);
      if (!reply)
        return NULL;
      if (reply->type == REDIS_REPLY_ERROR) {
        char what[300];
        snprintf(what, sizeof what, "SELECT %ld refused: %.200s", s->db,
                 reply->str);
        freeReplyObject(reply);
        *status = trip(s, c, KJIT_STATUS_INTERNAL, operation, what);
        return NULL;
      }
      freeReplyObject(reply);
    }
  }
  redisSetTimeout(c->context, to_timeval(ms));
  reply = redisCommandArgv(c->context, argc, argv, lengths);
  if (!reply) {
    char what[300];
    int err = c->context->err;
    int timed_out =
        err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK);
    if (timed_out)
      snprintf(what, sizeof what, "no answer within %u ms", (unsigned)ms);
    else
      snprintf(what, sizeof what, "%s",
               err == REDIS_ERR_EOF ? "the server closed the connection"
                                    : c->context->errstr);
    *status = trip(s, c,
                   timed_out                   ? KJIT_STATUS_DEADLINE_EXCEEDED
                   : err == REDIS_ERR_PROTOCOL ? KJIT_STATUS_DATA_LOSS
                   : err == REDIS_ERR_OOM      ? KJIT_STATUS_RESOURCE_EXHAUSTED
                                               : KJIT_STATUS_UNAVAILABLE,
                   operation, what);
    return NULL;
  }
  return reply;
}

/* "<namespace>:<key>" in buffer (malloc'd when it does not fit). */
static char *redis_key(const redis_store *s, const uint8_t *key, size_t size,
                       char *buffer, size_t capacity, size_t *length) {
  char *out = buffer;
  *length = s->ns_len + 1 + size;
  if (*length > capacity && !(out = malloc(*length)))
    return NULL;
  memcpy(out, s->ns, s->ns_len);
  out[s->ns_len] = ':';
  memcpy(out + s->ns_len + 1, key, size);
  return out;
}

/*===--- Entries ----------------------------------------------------------===*/

static void release_reply(void *owner, const uint8_t *data, size_t size) {
  (void)data;
  (void)size;
  freeReplyObject(owner);
}

/* A command of one key (GET, DEL) on connection c, under its lock: the
 * reply, or NULL with *status set. */
static redisReply *key_command(redis_store *s, connection *c, const char *name,
                               const uint8_t *key, size_t key_size,
                               uint32_t timeout_ms, kjit_status **status) {
  char buffer[512];
  size_t length;
  const char *argv[2];
  size_t lengths[2];
  redisReply *reply;
  char *full;
  if ((*status = breaker_check(s, name)) != NULL)
    return NULL;
  full = redis_key(s, key, key_size, buffer, sizeof buffer, &length);
  if (!full) {
    *status = make_status(s->host, KJIT_STATUS_RESOURCE_EXHAUSTED, "no memory");
    return NULL;
  }
  argv[0] = name;
  lengths[0] = strlen(name);
  argv[1] = full;
  lengths[1] = length;
  pthread_mutex_lock(&c->lock);
  reply = command(s, c, timeout_ms, name, 2, argv, lengths, status);
  pthread_mutex_unlock(&c->lock);
  if (full != buffer)
    free(full);
  return reply;
}

static kjit_status *redis_get(void *self, kjit_cache_get_args *args) {
  redis_store *s = self;
  kjit_status *status;
  redisReply *reply = key_command(s, &s->get_connection, "GET", args->key,
                                  args->key_size, args->timeout_ms, &status);
  if (!reply)
    return status;
  if (reply->type == REDIS_REPLY_NIL) {
    freeReplyObject(reply);
    return NULL;
  }
  if (reply->type == REDIS_REPLY_STRING) {
    if (reply->len > s->max_value) {
      /* OUT_OF_RANGE: the runtime counts a rejected value, as it does for
       * one that fails verification, not a store error. */
      status = make_status(s->host, KJIT_STATUS_OUT_OF_RANGE,
                           "redis %s:%d: GET: a value of %zu bytes, more "
                           "than KJIT_REDIS_MAX_VALUE_SIZE (%llu)",
                           s->server, s->port, reply->len,
                           (unsigned long long)s->max_value);
      freeReplyObject(reply);
      return status;
    }
    args->found = 1;
    args->value.struct_size = sizeof(kjit_buffer);
    args->value.data = (const uint8_t *)reply->str;
    args->value.size = reply->len;
    args->value.owner = reply;
    args->value.release = release_reply;
    return NULL;
  }
  status = make_status(
      s->host,
      is_denied(reply)                   ? KJIT_STATUS_PERMISSION_DENIED
      : reply->type == REDIS_REPLY_ERROR ? KJIT_STATUS_INTERNAL
                                         : KJIT_STATUS_DATA_LOSS,
      "redis %s:%d: GET: %.300s", s->server, s->port,
      reply->type == REDIS_REPLY_ERROR ? reply->str
                                       : "the reply is not a string");
  freeReplyObject(reply);
  return status;
}

static kjit_status *redis_put(void *self, const kjit_cache_put_args *args) {
  redis_store *s = self;
  char buffer[512], ttl[24];
  size_t length;
  const char *argv[6];
  size_t lengths[6];
  int argc = 0, denied;
  redisReply *reply;
  kjit_status *status;
  char *key;
  if (args->flags & ~KJIT_CACHE_PUT_IF_ABSENT)
    return make_status(s->host, KJIT_STATUS_UNIMPLEMENTED,
                       "redis: unknown put flags 0x%x", (unsigned)args->flags);
  pthread_mutex_lock(&s->state);
  denied = s->puts_denied;
  pthread_mutex_unlock(&s->state);
  if (denied)
    return make_status(s->host, KJIT_STATUS_CANCELLED,
                       "redis %s:%d: SET not asked: writes were denied",
                       s->server, s->port);
  if ((status = breaker_check(s, "SET")) != NULL)
    return status;
  if (args->value_size > s->max_value)
    return make_status(s->host, KJIT_STATUS_RESOURCE_EXHAUSTED,
                       "redis %s:%d: SET: a value of %zu bytes, more than "
                       "KJIT_REDIS_MAX_VALUE_SIZE (%llu); not sent",
                       s->server, s->port, args->value_size,
                       (unsigned long long)s->max_value);
  key = redis_key(s, args->key, args->key_size, buffer, sizeof buffer, &length);
  if (!key)
    return make_status(s->host, KJIT_STATUS_RESOURCE_EXHAUSTED, "no memory");
  argv[argc] = "SET";
  lengths[argc++] = 3;
  argv[argc] = key;
  lengths[argc++] = length;
  argv[argc] = (const char *)args->value;
  lengths[argc++] = args->value_size;
  if (args->ttl_seconds) {
    snprintf(ttl, sizeof ttl, "%u", (unsigned)args->ttl_seconds);
    argv[argc] = "EX";
    lengths[argc++] = 2;
    argv[argc] = ttl;
    lengths[argc++] = strlen(ttl);
  }
  if (args->flags & KJIT_CACHE_PUT_IF_ABSENT) {
    argv[argc] = "NX";
    lengths[argc++] = 2;
  }
  pthread_mutex_lock(&s->put_connection.lock);
  reply = command(s, &s->put_connection, args->timeout_ms, "SET", argc, argv,
                  lengths, &status);
  pthread_mutex_unlock(&s->put_connection.lock);
  if (key != buffer)
    free(key);
  if (!reply)
    return status;
  if (reply->type == REDIS_REPLY_NIL)
    status = make_status(s->host, KJIT_STATUS_ALREADY_EXISTS, "key exists");
  else if (is_denied(reply)) {
    pthread_mutex_lock(&s->state);
    s->puts_denied = 1;
    pthread_mutex_unlock(&s->state);
    status = make_status(s->host, KJIT_STATUS_PERMISSION_DENIED,
                         "redis %s:%d: SET: %.300s; no more puts from this "
                         "process (a read-only user?)",
                         s->server, s->port, reply->str);
  } else if (reply->type == REDIS_REPLY_ERROR)
    status =
        make_status(s->host, KJIT_STATUS_INTERNAL, "redis %s:%d: SET: %.300s",
                    s->server, s->port, reply->str);
  freeReplyObject(reply);
  return status;
}

static kjit_status *redis_remove(void *self, kjit_cache_remove_args *args) {
  redis_store *s = self;
  kjit_status *status;
  redisReply *reply = key_command(s, &s->put_connection, "DEL", args->key,
                                  args->key_size, args->timeout_ms, &status);
  if (!reply)
    return status;
  if (reply->type == REDIS_REPLY_INTEGER)
    args->found = reply->integer > 0;
  else
    status = make_status(
        s->host, KJIT_STATUS_INTERNAL, "redis %s:%d: DEL: %.300s", s->server,
        s->port, reply->type == REDIS_REPLY_ERROR ? reply->str : "odd reply");
  freeReplyObject(reply);
  return status;
}

static kjit_status *redis_describe(void *self,
                                   kjit_cache_store_describe_args *args) {
  redis_store *s = self;
  args->max_value_size = s->max_value;
  args->is_remote = 1;
  return NULL;
}

/*===--- Lifecycle --------------------------------------------------------===*/

static kjit_status *redis_init(const kjit_host_api *host,
                               kjit_host_context *ctx, void **self) {
  const char *url = getenv("KJIT_REDIS_URL");
  const char *password_file = getenv("KJIT_REDIS_PASSWORD_FILE");
  const char *ns = getenv("KJIT_REDIS_NAMESPACE");
  struct {
    const char *name, *fallback;
    uint32_t *ms;
  } durations[3];
  const char *size = getenv("KJIT_REDIS_MAX_VALUE_SIZE");
  const char *why;
  redis_store *s;
  int i;
  (void)ctx;
  if (!url || !*url)
    return make_status(host, KJIT_STATUS_FAILED_PRECONDITION,
                       "KJIT_REDIS_URL is not set (redis://host:port/db)");
  s = calloc(1, sizeof *s);
  if (!s)
    return make_status(host, KJIT_STATUS_RESOURCE_EXHAUSTED, "no memory");
  s->host = host;
  if ((why = parse_url(s, url)) != NULL) {
    free(s);
    return make_status(host, KJIT_STATUS_INVALID_ARGUMENT,
                       "KJIT_REDIS_URL is not a Redis URL "
                       "(redis://[[user]:password@]host[:port][/db]): %s",
                       why);
  }
  if (password_file && *password_file &&
      (why = read_password_file(s, password_file)) != NULL) {
    free(s);
    return make_status(host, KJIT_STATUS_INVALID_ARGUMENT,
                       "KJIT_REDIS_PASSWORD_FILE '%s' %s", password_file, why);
  }
  if (!ns || !*ns)
    ns = "kjit";
  if (strlen(ns) >= sizeof s->ns) {
    free(s);
    return make_status(host, KJIT_STATUS_INVALID_ARGUMENT,
                       "KJIT_REDIS_NAMESPACE is longer than %u bytes",
                       (unsigned)sizeof s->ns - 1);
  }
  strcpy(s->ns, ns);
  s->ns_len = strlen(ns);
  durations[0].name = "KJIT_REDIS_CONNECT_TIMEOUT";
  durations[0].fallback = "250ms";
  durations[0].ms = &s->connect_ms;
  durations[1].name = "KJIT_REDIS_TIMEOUT";
  durations[1].fallback = "1000ms";
  durations[1].ms = &s->operation_ms;
  durations[2].name = "KJIT_REDIS_RETRY_AFTER";
  durations[2].fallback = "30s";
  durations[2].ms = &s->retry_ms;
  for (i = 0; i < 3; ++i) {
    const char *text = getenv(durations[i].name);
    if (!text || !*text)
      text = durations[i].fallback;
    if ((*durations[i].ms = parse_ms(text)) == 0) {
      kjit_status *status =
          make_status(host, KJIT_STATUS_INVALID_ARGUMENT,
                      "%s='%s' is not a duration above zero (250ms, 2s, 1m)",
                      durations[i].name, text);
      free(s);
      return status;
    }
  }
  s->max_value = (uint64_t)64 << 20;
  if (size && *size && (s->max_value = parse_size(size)) == 0) {
    kjit_status *status =
        make_status(host, KJIT_STATUS_INVALID_ARGUMENT,
                    "KJIT_REDIS_MAX_VALUE_SIZE='%s' is not a size above zero "
                    "(1048576, 512K, 64M)",
                    size);
    free(s);
    return status;
  }
  pthread_mutex_init(&s->get_connection.lock, NULL);
  pthread_mutex_init(&s->put_connection.lock, NULL);
  pthread_mutex_init(&s->state, NULL);
  *self = s;
  return NULL;
}

static void redis_fini(void *self) {
  redis_store *s = self;
  drop(&s->get_connection);
  drop(&s->put_connection);
  pthread_mutex_destroy(&s->get_connection.lock);
  pthread_mutex_destroy(&s->put_connection.lock);
  pthread_mutex_destroy(&s->state);
  free(s);
}

static const kjit_cache_store_table redis_table = {
    .struct_size = sizeof(kjit_cache_store_table),
    .name = "redis",
    .name_len = 5,
    .get = redis_get,
    .put = redis_put,
    .remove = redis_remove,
    .describe = redis_describe,
};

static const kjit_plugin_api redis_api = {
    .struct_size = sizeof(kjit_plugin_api),
    .name = "redis",
    .name_len = 5,
    .version = "1",
    .version_len = 1,
    .capabilities = KJIT_CAP_THREAD_SAFE,
    .init = redis_init,
    .fini = redis_fini,
    .cache_store = &redis_table,
};

KJIT_PLUGIN_EXPORT int32_t kjit_plugin_negotiate_v1(kjit_negotiate *io) {
  if (!io || io->struct_size < KJIT_STRUCT_SIZE(kjit_negotiate, plugin))
    return KJIT_STATUS_INVALID_ARGUMENT;
  io->plugin_abi_major = KJIT_ABI_MAJOR;
  io->plugin_abi_minor = KJIT_ABI_MINOR;
  io->plugin = &redis_api;
  return KJIT_STATUS_OK;
}
