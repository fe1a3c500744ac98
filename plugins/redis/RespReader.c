/*===- RespReader.c - RESP2 replies, checked against limits ---------------===*\
|*                                                                            *|
|* See RespReader.h. Redis answers the store's commands (GET, SET, DEL,       *|
|* AUTH, SELECT) with simple strings, errors, integers and bulk strings;      *|
|* arrays are read (so that a wrong answer is reported as one, not as         *|
|* garbage) but only within small limits, since no command of the store's     *|
|* is answered with one. RESP3 types are refused: the store never asks for    *|
|* RESP3 (HELLO 3).                                                           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "RespReader.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct cursor {
  const char *data;
  size_t size, pos;
  const resp_limits *limits;
  uint64_t bulk_bytes_left; /* budgets for the whole reply */
  uint32_t elements_left;
  size_t needed;     /* RESP_INCOMPLETE: the bytes the reply needs at least */
  uint64_t declared; /* RESP_TOO_LARGE: the length or count refused */
  char *why;
  size_t why_size;
} cursor;

static resp_result fail(cursor *c, resp_result result, const char *format,
                        ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(c->why, c->why_size, format, args);
  va_end(args);
  return result;
}

static resp_result need(cursor *c, size_t bytes) {
  c->needed = bytes;
  return RESP_INCOMPLETE;
}

/* One CRLF-terminated line at c->pos, its text without the CRLF. A line
 * longer than the limit is refused before its end arrives. */
static resp_result read_line(cursor *c, const char **line, size_t *length) {
  size_t start = c->pos, i;
  uint32_t max = c->limits->max_line_length;
  for (i = start; i < c->size; ++i) {
    if (i - start > max)
      break;
    if (c->data[i] == '\n')
      return fail(c, RESP_MALFORMED, "a line feed without a carriage return");
    if (c->data[i] == '\r') {
      if (i + 1 == c->size)
        return need(c, i + 2);
      if (c->data[i + 1] != '\n')
        return fail(c, RESP_MALFORMED, "a carriage return without a line feed");
      *line = c->data + start;
      *length = i - start;
      c->pos = i + 2;
      return RESP_COMPLETE;
    }
  }
  if (i - start > max)
    return fail(c, RESP_MALFORMED, "a line longer than %u bytes",
                (unsigned)max);
  return need(c, c->size + 2);
}

/* Decimal digits (at least one); saturates at UINT64_MAX, which is beyond
 * every limit. */
static int parse_unsigned(const char *text, size_t length, uint64_t *value) {
  size_t i;
  *value = 0;
  if (length == 0)
    return 0;
  for (i = 0; i < length; ++i) {
    unsigned digit = (unsigned)(text[i] - '0');
    if (digit > 9)
      return 0;
    *value =
        *value > (UINT64_MAX - digit) / 10 ? UINT64_MAX : *value * 10 + digit;
  }
  return 1;
}

static int parse_integer(const char *text, size_t length, int64_t *value) {
  int negative = length > 0 && text[0] == '-';
  uint64_t magnitude;
  if (!parse_unsigned(text + negative, length - (size_t)negative, &magnitude))
    return 0;
  if (magnitude > (uint64_t)INT64_MAX + (uint64_t)negative)
    return 0;
  *value = negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
  return 1;
}

/* The length or count after '$' or '*': -1 is null. */
static resp_result parse_size(cursor *c, char type, const char *text,
                              size_t length, uint64_t *value, int *is_null) {
  *is_null = length == 2 && text[0] == '-' && text[1] == '1';
  if (*is_null)
    return RESP_COMPLETE;
  if (!parse_unsigned(text, length, value))
    return fail(c, RESP_MALFORMED, "'%c' followed by '%.*s', not a length",
                type, (int)(length > 32 ? 32 : length), text);
  return RESP_COMPLETE;
}

static resp_result refuse(cursor *c, char type, uint64_t declared,
                          uint64_t allowed) {
  c->declared = declared;
  if (type == '$')
    return fail(c, RESP_TOO_LARGE,
                "a bulk string of %llu bytes, more than the %llu allowed",
                (unsigned long long)declared, (unsigned long long)allowed);
  return fail(c, RESP_TOO_LARGE,
              "an array of %llu elements, more than the %llu allowed",
              (unsigned long long)declared, (unsigned long long)allowed);
}

/* One value at c->pos inside `depth` arrays; the top-level one (depth 0)
 * is described in *reply. */
static resp_result read_value(cursor *c, uint32_t depth, resp_reply *reply) {
  const char *line = NULL;
  size_t length = 0;
  uint64_t size;
  int is_null;
  char type;
  resp_result result;
  if (c->pos == c->size)
    return need(c, c->size + 1);
  /* A wrong type byte is refused before its line ends. */
  type = c->data[c->pos];
  if (type == '\0' || !strchr("+-:$*", type)) {
    unsigned char byte = (unsigned char)type;
    if (byte >= 0x20 && byte < 0x7f)
      return fail(c, RESP_MALFORMED, "'%c' is not a RESP2 reply type", type);
    return fail(c, RESP_MALFORMED, "byte 0x%02x is not a RESP2 reply type",
                byte);
  }
  if ((result = read_line(c, &line, &length)) != RESP_COMPLETE)
    return result;
  ++line;
  --length;
  if (reply) {
    reply->type = type;
    reply->is_null = 0;
    reply->data = line;
    reply->size = length;
    reply->integer = 0;
  }
  switch (type) {
  case '+':
  case '-':
    return RESP_COMPLETE;
  case ':': {
    int64_t value;
    if (!parse_integer(line, length, &value))
      return fail(c, RESP_MALFORMED, "':%.*s' is not a 64-bit integer",
                  (int)(length > 32 ? 32 : length), line);
    if (reply)
      reply->integer = value;
    return RESP_COMPLETE;
  }
  case '$':
    if ((result = parse_size(c, type, line, length, &size, &is_null)) !=
        RESP_COMPLETE)
      return result;
    if (is_null) {
      if (reply) {
        reply->is_null = 1;
        reply->data = NULL;
        reply->size = 0;
      }
      return RESP_COMPLETE;
    }
    if (size > c->bulk_bytes_left)
      return refuse(c, type, size, c->bulk_bytes_left);
    c->bulk_bytes_left -= size;
    /* size is within the limit, so the sum cannot wrap. */
    if (c->size - c->pos < size + 2)
      return need(c, c->pos + (size_t)size + 2);
    if (c->data[c->pos + size] != '\r' || c->data[c->pos + size + 1] != '\n')
      return fail(c, RESP_MALFORMED,
                  "a bulk string of %llu bytes not followed by CRLF",
                  (unsigned long long)size);
    if (reply) {
      reply->data = c->data + c->pos;
      reply->size = (size_t)size;
    }
    c->pos += (size_t)size + 2;
    return RESP_COMPLETE;
  default: { /* '*' */
    uint64_t i;
    if ((result = parse_size(c, type, line, length, &size, &is_null)) !=
        RESP_COMPLETE)
      return result;
    if (reply) {
      reply->is_null = is_null;
      reply->data = NULL;
      reply->size = 0;
    }
    if (is_null)
      return RESP_COMPLETE;
    if (size > c->elements_left)
      return refuse(c, type, size, c->elements_left);
    if (depth > c->limits->max_depth)
      return fail(c, RESP_MALFORMED, "arrays nested more than %u deep",
                  (unsigned)c->limits->max_depth);
    c->elements_left -= (uint32_t)size;
    if (reply)
      reply->integer = (int64_t)size;
    for (i = 0; i < size; ++i)
      if ((result = read_value(c, depth + 1, NULL)) != RESP_COMPLETE)
        return result;
    return RESP_COMPLETE;
  }
  }
}

resp_result resp_read(const char *data, size_t size, const resp_limits *limits,
                      resp_reply *reply, size_t *used, char *why,
                      size_t why_size) {
  cursor c;
  resp_result result;
  memset(&c, 0, sizeof c);
  c.data = data;
  c.size = size;
  c.limits = limits;
  c.bulk_bytes_left = limits->max_bulk_bytes;
  c.elements_left = limits->max_elements;
  c.why = why;
  c.why_size = why_size;
  why[0] = '\0';
  memset(reply, 0, sizeof *reply);
  result = read_value(&c, 0, reply);
  if (result == RESP_COMPLETE)
    *used = c.pos;
  else if (result == RESP_INCOMPLETE)
    *used = c.needed;
  else if (result == RESP_TOO_LARGE)
    reply->declared = c.declared;
  return result;
}
