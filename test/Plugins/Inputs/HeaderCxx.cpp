//===- HeaderCxx.cpp - the ABI header compiles as C++ ---------------------===//
//
// Built with -pedantic -Werror: a C construct in the header that C++ rejects
// or warns about (a designated initializer, a compound literal) fails here
// rather than in a host or a C++ plugin.
//
//===----------------------------------------------------------------------===//

#include "kjit-c/Plugin.h"

static_assert(KJIT_HAS_FIELD(static_cast<const kjit_hook_table *>(nullptr),
                             kjit_hook_table, cache) == false,
              "KJIT_HAS_FIELD must be false for NULL");

int kjitAbiHeaderCxxAnchor() { return KJIT_ABI_MAJOR; }
