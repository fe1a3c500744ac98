/*===- RespReader.h - RESP2 replies, checked against limits -------*- C -*-===*\
|*                                                                            *|
|* The Redis store reads its replies with this reader instead of hiredis's,   *|
|* because hiredis 0.14 buffers a whole bulk string (or allocates a whole     *|
|* array) before anyone can look at its declared size. Here every length      *|
|* and count is checked against limits as soon as its header line is          *|
|* complete, so a hostile header costs nothing. The reader does no I/O and    *|
|* keeps no state: it is given every byte received so far, from the start     *|
|* of the reply, and says whether they hold a whole reply.                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KJIT_PLUGINS_REDIS_RESPREADER_H
#define KJIT_PLUGINS_REDIS_RESPREADER_H

#include <stddef.h>
#include <stdint.h>

typedef enum resp_result {
  RESP_COMPLETE,   /* a whole reply: *reply and *used are set */
  RESP_INCOMPLETE, /* a valid start: *used is how many bytes, at least, the
                      whole reply needs (more than were given) */
  RESP_MALFORMED,  /* not RESP: why says what */
  RESP_TOO_LARGE   /* a header declares more than the limits allow:
                      reply->type and reply->declared say what */
} resp_result;

typedef struct resp_limits {
  uint64_t max_bulk_bytes;  /* bulk string bytes in the whole reply */
  uint32_t max_elements;    /* array elements in the whole reply */
  uint32_t max_depth;       /* arrays inside arrays */
  uint32_t max_line_length; /* a header, simple string, error or integer */
} resp_limits;

typedef struct resp_reply {
  /* '+' simple string, '-' error, ':' integer, '$' bulk string, '*' array */
  char type;
  int is_null;      /* "$-1" or "*-1" */
  const char *data; /* '+', '-': the text; '$': the bytes (no terminator) */
  size_t size;
  int64_t integer;   /* ':': the value; '*': the element count */
  uint64_t declared; /* RESP_TOO_LARGE: the length or count refused */
} resp_reply;

/* Reads one reply from the start of data. why (why_size bytes, at least
 * 1) receives the reason of RESP_MALFORMED and RESP_TOO_LARGE. */
resp_result resp_read(const char *data, size_t size, const resp_limits *limits,
                      resp_reply *reply, size_t *used, char *why,
                      size_t why_size);

#endif /* KJIT_PLUGINS_REDIS_RESPREADER_H */
