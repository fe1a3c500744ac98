/*===- RedisStore.c - the fleet cache's store on Redis --------------------===*\
|*                                                                            *|
|* Cache store "redis" (docs/RedisStore.md): GET and SET [NX] [EX ttl] on     *|
|* one Redis key per kjit key, "<namespace>:<key>". Debian's hiredis 0.14     *|
|* connects (with the connect timeout) and encodes requests; the store sends  *|
|* them and reads the replies itself (RespReader.h), because hiredis bounds   *|
|* each read() but not an operation, and buffers a reply whole before its     *|
|* size can be checked. Each operation has one deadline, computed when it     *|
|* starts: every wait (connect, AUTH, SELECT, sending, each part of the       *|
|* reply) polls with what is left of it. It trusts and checks nothing in      *|
|* values: the runtime signs and verifies them.                               *|
|*                                                                            *|
|* What the host relies on is the status code: DEADLINE_EXCEEDED a timeout,   *|
|* UNAVAILABLE refused/reset/closed, DATA_LOSS a reply that is not Redis's,   *|
|* PERMISSION_DENIED an ACL or password refusal, CANCELLED "not asked",       *|
|* OUT_OF_RANGE a stored value above the maximum size (refused from its       *|
|* header, not handed over; the runtime counts a rejected value, as for one   *|
|* that fails verification). A connection-level failure opens a circuit       *|
|* breaker: the failing call says so ("; remote cache off for 30 s") and      *|
|* every call until the window ends returns CANCELLED at once, so an outage   *|
|* costs one timeout per window. A put refused by an ACL turns puts off for   *|
|* the process; gets go on. Gets and puts use separate connections, so that   *|
|* the runtime's background publisher never delays a launch's lookup.         *|
\*===----------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L

#include "../common/FormatStatus.h"
#include "RespReader.h"
#include "kjit-c/Plugin.h"

#include <hiredis.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* No command of the store's is answered with an array, so what is read of
 * one serves only its message: small limits. A line is a status, an error
 * or a header; Redis's are far shorter. */
enum {
  MAX_REPLY_ELEMENTS = 64,
  MAX_REPLY_DEPTH = 4,
  MAX_REPLY_LINE = 4096,
  FIRST_BUFFER_SIZE = 16384
};

typedef struct connection {
  pthread_mutex_t lock;
  redisContext *context; /* NULL: connect on next use */
  /* The reply being read. A reply handed out (parts of a GET's) points
   * into it until the connection's next command; a value handed to the
   * runtime takes the buffer with it. */
  char *in;
  size_t in_size, in_capacity;
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

/* One operation on a connection: what it is called in messages, and the
 * deadline every wait of it shares. */
typedef struct operation {
  const char *name;
  uint32_t timeout_ms;
  int64_t deadline_ms; /* monotonic */
} operation;

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

/* Closes the connection; its buffer stays for the next one. */
static void drop(connection *c) {
  if (c->context)
    redisFree(c->context);
  c->context = NULL;
  c->in_size = 0;
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

/* Closes the connection, opens the breaker, and returns the failure, what
 * happened being printf's format and arguments. */
static kjit_status *trip(redis_store *s, connection *c, int32_t code,
                         const operation *op, const char *format, ...) {
  char what[400];
  va_list args;
  va_start(args, format);
  vsnprintf(what, sizeof what, format, args);
  va_end(args);
  drop(c);
  pthread_mutex_lock(&s->state);
  s->off_until_ms = now_ms() + s->retry_ms;
  pthread_mutex_unlock(&s->state);
  return make_status(s->host, code,
                     "redis %s:%d: %s: %s; remote cache off for %u s",
                     s->server, s->port, op->name, what,
                     (unsigned)((s->retry_ms + 999) / 1000));
}

static kjit_status *trip_errno(redis_store *s, connection *c,
                               const operation *op) {
  return trip(s, c, KJIT_STATUS_UNAVAILABLE, op, "%s", strerror(errno));
}

static int starts_with(const resp_reply *reply, const char *prefix) {
  size_t n = strlen(prefix);
  return reply->size >= n && !memcmp(reply->data, prefix, n);
}

static int is_denied(const resp_reply *reply) {
  return reply->type == '-' &&
         (starts_with(reply, "NOPERM") || starts_with(reply, "WRONGPASS") ||
          starts_with(reply, "NOAUTH"));
}

/* printf's precision for a reply's text in a message. */
static int shown(const resp_reply *reply) {
  return reply->size > 300 ? 300 : (int)reply->size;
}

/* 1 when fd is ready for events, 0 when the deadline passed first, -1 on
 * an error (errno). */
static int await_socket(int fd, short events, int64_t deadline_ms) {
  for (;;) {
    struct pollfd ready;
    int64_t left = deadline_ms - now_ms();
    int n;
    if (left <= 0)
      return 0;
    ready.fd = fd;
    ready.events = events;
    ready.revents = 0;
    n = poll(&ready, 1, left < INT_MAX ? (int)left : INT_MAX);
    if (n > 0)
      return 1; /* or an error or a hang-up, which the next call reports */
    if (n < 0 && errno != EINTR)
      return -1;
  }
}

static kjit_status *send_request(redis_store *s, connection *c,
                                 const operation *op, const char *request,
                                 size_t size) {
  int fd = c->context->fd;
  while (size > 0) {
    ssize_t sent;
    int ready = await_socket(fd, POLLOUT, op->deadline_ms);
    if (ready == 0)
      return trip(s, c, KJIT_STATUS_DEADLINE_EXCEEDED, op,
                  "the request was not taken within %u ms",
                  (unsigned)op->timeout_ms);
    if (ready < 0)
      return trip_errno(s, c, op);
    sent = send(fd, request, size, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        continue;
      return trip_errno(s, c, op);
    }
    request += sent;
    size -= (size_t)sent;
  }
  return NULL;
}

/* Room for at least `wanted` bytes in c's buffer (more than it holds). */
static int grow(connection *c, size_t wanted) {
  size_t capacity = c->in_capacity ? 2 * c->in_capacity : FIRST_BUFFER_SIZE;
  char *in;
  if (capacity < wanted)
    capacity = wanted;
  if (!(in = realloc(c->in, capacity)))
    return 0;
  c->in = in;
  c->in_capacity = capacity;
  return 1;
}

/* Reads one reply into c's buffer, described in *reply. The reader checks
 * each header as soon as it is complete, so nothing beyond the limits is
 * ever buffered. */
static kjit_status *read_reply(redis_store *s, connection *c,
                               const operation *op, resp_reply *reply) {
  resp_limits limits;
  char why[200];
  int fd = c->context->fd;
  limits.max_bulk_bytes = s->max_value;
  limits.max_elements = MAX_REPLY_ELEMENTS;
  limits.max_depth = MAX_REPLY_DEPTH;
  limits.max_line_length = MAX_REPLY_LINE;
  c->in_size = 0;
  for (;;) {
    size_t used;
    ssize_t got;
    int ready;
    switch (
        resp_read(c->in, c->in_size, &limits, reply, &used, why, sizeof why)) {
    case RESP_COMPLETE:
      /* Bytes beyond the reply answer nothing that was asked; kept, they
       * would be taken for the answer to the next command. */
      if (used < c->in_size)
        return trip(s, c, KJIT_STATUS_DATA_LOSS, op,
                    "Protocol error: %zu bytes after the reply, not asked for",
                    c->in_size - used);
      c->in_size = 0;
      return NULL;
    case RESP_MALFORMED:
      return trip(s, c, KJIT_STATUS_DATA_LOSS, op, "Protocol error: %s", why);
    case RESP_TOO_LARGE:
      if (reply->type != '$')
        return trip(s, c, KJIT_STATUS_DATA_LOSS, op, "Protocol error: %s", why);
      /* The rest of the value is still on its way: only a new connection
       * is in step. Not a failing server: no breaker. */
      drop(c);
      return make_status(s->host, KJIT_STATUS_OUT_OF_RANGE,
                         "redis %s:%d: %s: a value of %llu bytes, more than "
                         "KJIT_REDIS_MAX_VALUE_SIZE (%llu)",
                         s->server, s->port, op->name,
                         (unsigned long long)reply->declared,
                         (unsigned long long)s->max_value);
    case RESP_INCOMPLETE:
      break;
    }
    if ((c->in_size == c->in_capacity || used > c->in_capacity) &&
        !grow(c, used))
      return trip(s, c, KJIT_STATUS_RESOURCE_EXHAUSTED, op, "out of memory");
    ready = await_socket(fd, POLLIN, op->deadline_ms);
    if (ready == 0) {
      if (c->in_size == 0)
        return trip(s, c, KJIT_STATUS_DEADLINE_EXCEEDED, op,
                    "no answer within %u ms", (unsigned)op->timeout_ms);
      return trip(s, c, KJIT_STATUS_DEADLINE_EXCEEDED, op,
                  "no complete answer within %u ms (%zu bytes of it came)",
                  (unsigned)op->timeout_ms, c->in_size);
    }
    if (ready < 0)
      return trip_errno(s, c, op);
    got = recv(fd, c->in + c->in_size, c->in_capacity - c->in_size, 0);
    if (got == 0)
      return trip(s, c, KJIT_STATUS_UNAVAILABLE, op,
                  "the server closed the connection");
    if (got < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        continue;
      return trip_errno(s, c, op);
    }
    c->in_size += (size_t)got;
  }
}

/* Sends one command on c's connection and reads its reply. */
static kjit_status *exchange(redis_store *s, connection *c, const operation *op,
                             int argc, const char **argv, const size_t *lengths,
                             resp_reply *reply) {
  char *request;
  /* int in hiredis 0.14, long long from 1.0 on. */
  long long size = redisFormatCommandArgv(&request, argc, argv, lengths);
  kjit_status *status;
  if (size < 0)
    return trip(s, c, KJIT_STATUS_RESOURCE_EXHAUSTED, op, "out of memory");
  status = send_request(s, c, op, request, (size_t)size);
  redisFreeCommand(request);
  return status ? status : read_reply(s, c, op, reply);
}

/* Connects c, within the connect timeout and what is left of the
 * operation's, then sends AUTH and SELECT when the settings ask. */
static kjit_status *connect_to_server(redis_store *s, connection *c,
                                      const operation *op) {
  resp_reply reply;
  kjit_status *status;
  redisContext *context;
  int64_t left = op->deadline_ms - now_ms();
  int flags;
  if (left <= 0)
    return trip(s, c, KJIT_STATUS_DEADLINE_EXCEEDED, op,
                "no answer within %u ms", (unsigned)op->timeout_ms);
  context = redisConnectWithTimeout(
      s->server, s->port,
      to_timeval(left < s->connect_ms ? (uint32_t)left : s->connect_ms));
  if (!context)
    return trip(s, c, KJIT_STATUS_RESOURCE_EXHAUSTED, op, "out of memory");
  if (context->err) {
    int timed_out = strstr(context->errstr, "timed out") != NULL;
    status = trip(s, c,
                  timed_out ? KJIT_STATUS_DEADLINE_EXCEEDED
                            : KJIT_STATUS_UNAVAILABLE,
                  op, "cannot connect: %s", context->errstr);
    redisFree(context);
    return status;
  }
  c->context = context;
  /* Every wait is a poll with the time left, never a blocking call. */
  flags = fcntl(context->fd, F_GETFL);
  if (flags < 0 || fcntl(context->fd, F_SETFL, flags | O_NONBLOCK) < 0)
    return trip_errno(s, c, op);
  if (s->has_password) {
    const char *auth[3];
    size_t auth_len[3];
    int n = 0;
    operation auth_op = *op;
    auth_op.name = "AUTH";
    auth[n] = "AUTH";
    auth_len[n++] = 4;
    if (s->has_user) {
      auth[n] = s->user;
      auth_len[n++] = strlen(s->user);
    }
    auth[n] = s->password;
    auth_len[n++] = strlen(s->password);
    if ((status = exchange(s, c, &auth_op, n, auth, auth_len, &reply)) != NULL)
      return status;
    if (reply.type == '-')
      return trip(s, c, KJIT_STATUS_PERMISSION_DENIED, op,
                  "the server refused the password: %.*s", shown(&reply),
                  reply.data);
  }
  if (s->db) {
    char db[24];
    const char *select[2];
    size_t select_len[2];
    operation select_op = *op;
    select_op.name = "SELECT";
    snprintf(db, sizeof db, "%ld", s->db);
    select[0] = "SELECT";
    select_len[0] = 6;
    select[1] = db;
    select_len[1] = strlen(db);
    if ((status = exchange(s, c, &select_op, 2, select, select_len, &reply)) !=
        NULL)
      return status;
    if (reply.type == '-')
      return trip(s, c, KJIT_STATUS_INTERNAL, op, "SELECT %ld refused: %.*s",
                  s->db, shown(&reply), reply.data);
  }
  return NULL;
}

/* Runs a command on c (connecting first if needed), under c's lock, which
 * the caller holds while it uses *reply. The operation's deadline starts
 * here, once the connection is this caller's. */
static kjit_status *command(redis_store *s, connection *c, const char *name,
                            uint32_t timeout_ms, int argc, const char **argv,
                            const size_t *lengths, resp_reply *reply) {
  operation op;
  kjit_status *status;
  op.name = name;
  op.timeout_ms = timeout_ms ? timeout_ms : s->operation_ms;
  op.deadline_ms = now_ms() + op.timeout_ms;
  if (!c->context && (status = connect_to_server(s, c, &op)) != NULL)
    return status;
  return exchange(s, c, &op, argc, argv, lengths, reply);
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

static void release_buffer(void *owner, const uint8_t *data, size_t size) {
  (void)data;
  (void)size;
  free(owner);
}

/* A command of one key (GET, DEL) on connection c, which the caller has
 * locked. */
static kjit_status *key_command(redis_store *s, connection *c, const char *name,
                                const uint8_t *key, size_t key_size,
                                uint32_t timeout_ms, resp_reply *reply) {
  char buffer[512];
  size_t length;
  const char *argv[2];
  size_t lengths[2];
  kjit_status *status;
  char *full;
  if ((status = breaker_check(s, name)) != NULL)
    return status;
  full = redis_key(s, key, key_size, buffer, sizeof buffer, &length);
  if (!full)
    return make_status(s->host, KJIT_STATUS_RESOURCE_EXHAUSTED, "no memory");
  argv[0] = name;
  lengths[0] = strlen(name);
  argv[1] = full;
  lengths[1] = length;
  status = command(s, c, name, timeout_ms, 2, argv, lengths, reply);
  if (full != buffer)
    free(full);
  return status;
}

static kjit_status *redis_get(void *self, kjit_cache_get_args *args) {
  redis_store *s = self;
  connection *c = &s->get_connection;
  resp_reply reply;
  kjit_status *status;
  pthread_mutex_lock(&c->lock);
  status = key_command(s, c, "GET", args->key, args->key_size, args->timeout_ms,
                       &reply);
  if (status || reply.is_null) {
    pthread_mutex_unlock(&c->lock);
    return status;
  }
  if (reply.type == '$') {
    /* The value is handed over in the buffer it was read into. */
    args->found = 1;
    args->value.struct_size = sizeof(kjit_buffer);
    args->value.data = (const uint8_t *)reply.data;
    args->value.size = reply.size;
    args->value.owner = c->in;
    args->value.release = release_buffer;
    c->in = NULL;
    c->in_capacity = 0;
    pthread_mutex_unlock(&c->lock);
    return NULL;
  }
  if (reply.type == '-')
    status = make_status(s->host,
                         is_denied(&reply) ? KJIT_STATUS_PERMISSION_DENIED
                                           : KJIT_STATUS_INTERNAL,
                         "redis %s:%d: GET: %.*s", s->server, s->port,
                         shown(&reply), reply.data);
  else
    status = make_status(s->host, KJIT_STATUS_DATA_LOSS,
                         "redis %s:%d: GET: the reply is not a string",
                         s->server, s->port);
  pthread_mutex_unlock(&c->lock);
  return status;
}

static kjit_status *redis_put(void *self, const kjit_cache_put_args *args) {
  redis_store *s = self;
  connection *c = &s->put_connection;
  char buffer[512], ttl[24];
  size_t length;
  const char *argv[6];
  size_t lengths[6];
  int argc = 0, denied;
  resp_reply reply;
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
  pthread_mutex_lock(&c->lock);
  status = command(s, c, "SET", args->timeout_ms, argc, argv, lengths, &reply);
  if (key != buffer)
    free(key);
  if (status) {
    pthread_mutex_unlock(&c->lock);
    return status;
  }
  if (reply.is_null)
    status = make_status(s->host, KJIT_STATUS_ALREADY_EXISTS, "key exists");
  else if (is_denied(&reply)) {
    pthread_mutex_lock(&s->state);
    s->puts_denied = 1;
    pthread_mutex_unlock(&s->state);
    status = make_status(s->host, KJIT_STATUS_PERMISSION_DENIED,
                         "redis %s:%d: SET: %.*s; no more puts from this "
                         "process (a read-only user?)",
                         s->server, s->port, shown(&reply), reply.data);
  } else if (reply.type == '-')
    status =
        make_status(s->host, KJIT_STATUS_INTERNAL, "redis %s:%d: SET: %.*s",
                    s->server, s->port, shown(&reply), reply.data);
  pthread_mutex_unlock(&c->lock);
  return status;
}

static kjit_status *redis_remove(void *self, kjit_cache_remove_args *args) {
  redis_store *s = self;
  connection *c = &s->put_connection;
  resp_reply reply;
  kjit_status *status;
  pthread_mutex_lock(&c->lock);
  status = key_command(s, c, "DEL", args->key, args->key_size, args->timeout_ms,
                       &reply);
  if (!status) {
    if (reply.type == ':')
      args->found = reply.integer > 0;
    else if (reply.type == '-')
      status =
          make_status(s->host, KJIT_STATUS_INTERNAL, "redis %s:%d: DEL: %.*s",
                      s->server, s->port, shown(&reply), reply.data);
    else
      status = make_status(s->host, KJIT_STATUS_INTERNAL,
                           "redis %s:%d: DEL: odd reply", s->server, s->port);
  }
  pthread_mutex_unlock(&c->lock);
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
  free(s->get_connection.in);
  free(s->put_connection.in);
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
