//===- ResolvedParameters.cpp - what every lowering needs bound -----------===//

#include "ResolvedParameters.h"

#include "kjit/Dialect/Kjit/IR/Kjit.h"

using namespace mlir;

LogicalResult kjit::checkParametersResolved(KernelOp kernel) {
  for (unsigned i = 0; i < kernel.getNumArguments(); ++i) {
    StringRef missing;
    if (kernel.hasParamFlag(i, KjitDialect::kConstexprAttrName))
      missing = "is constexpr but has no value yet";
    else if (isa<AnyValueType>(kernel.getArgumentTypes()[i]))
      missing = "has no type yet";
    else
      continue;
    return kernel.emitError() << "parameter '" << kernel.getParamName(i)
                              << "' of '@" << kernel.getSymName() << "' "
                              << missing << "; run kjit-specialize first";
  }
  return success();
}
