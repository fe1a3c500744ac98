/*===- RespReaderFuzzer.c - libFuzzer target for the RESP reader ----------===*\
|*                                                                            *|
|* Feeds arbitrary bytes to resp_read (../RespReader.h) as a server's reply   *|
|* and checks what the store relies on: no read outside the bytes given       *|
|* (AddressSanitizer), a complete reply that lies within what it used, a      *|
|* need for more bytes that really is more, limits that hold, and answers     *|
|* that do not change as more of a reply arrives. run-fuzzer.sh builds and    *|
|* runs it.                                                                   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "../RespReader.h"

#include <stdlib.h>
#include <string.h>

/* Small limits, so that inputs of a few bytes reach every refusal. */
static const resp_limits limits = {64, 8, 2, 32};

static void check(int condition) {
  if (!condition)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *bytes = (const char *)data;
  resp_reply reply, shorter_reply;
  size_t used = 0, shorter_used = 0;
  char why[128];
  resp_result result, shorter;
  result = resp_read(bytes, size, &limits, &reply, &used, why, sizeof why);
  switch (result) {
  case RESP_COMPLETE:
    check(used > 0 && used <= size);
    check(strchr("+-:$*", reply.type) != NULL);
    check(!reply.data ||
          (reply.data >= bytes && reply.data + reply.size <= bytes + used));
    check(reply.type != '$' || reply.size <= limits.max_bulk_bytes);
    check(
        reply.type != '*' || reply.is_null ||
        (reply.integer >= 0 && reply.integer <= (int64_t)limits.max_elements));
    /* The store reads a reply again each time more of it arrives: cut
     * short, it must be incomplete and need no more than it has. */
    check(resp_read(bytes, used - 1, &limits, &shorter_reply, &shorter_used,
                    why, sizeof why) == RESP_INCOMPLETE);
    check(shorter_used > used - 1 && shorter_used <= used);
    break;
  case RESP_INCOMPLETE:
    check(used > size);
    break;
  case RESP_MALFORMED:
  case RESP_TOO_LARGE:
    check(why[0] != '\0');
    break;
  }
  /* A byte less never changes a decision, it can only postpone it. */
  if (size > 0) {
    shorter = resp_read(bytes, size - 1, &limits, &shorter_reply, &shorter_used,
                        why, sizeof why);
    check(shorter == result || shorter == RESP_INCOMPLETE);
    check(shorter != RESP_COMPLETE || result != RESP_COMPLETE ||
          shorter_used == used);
  }
  return 0;
}
