//===- KjitOps.cpp - kjit operations --------------------------------------===//
//
// Custom assembly formats, builders and verifiers of the kjit operations.
// Verifier messages name the parameter, symbol or operand that is wrong.
//
//===----------------------------------------------------------------------===//

#include "kjit/Dialect/Kjit/IR/Kjit.h"
#include "kjit/Model/LaunchOptions.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace kjit;

//===----------------------------------------------------------------------===//
// Helpers shared by kernels and device functions
//===----------------------------------------------------------------------===//

/// Every function op of the dialect needs a body: kjit compiles what it sees
/// and has no notion of an external device function.
static LogicalResult verifyHasBody(FunctionOpInterface fn, StringRef kind) {
  if (fn.getFunctionBody().empty())
    return fn.emitOpError()
           << kind << " '@" << fn.getName() << "' needs a body";
  return success();
}

/// Attribute names a function op prints in its signature, not in its
/// `attributes {...}` dictionary.
static SmallVector<StringRef> getSignatureAttrNames(Operation *op) {
  SmallVector<StringRef> names;
  for (StringAttr name : op->getRegisteredInfo()->getAttributeNames())
    names.push_back(name.getValue());
  return names;
}

/// Grid axes print as a bare keyword: `kjit.program_id x`.
static ParseResult parseAxis(OpAsmParser &parser, AxisAttr &axis) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseOptionalKeyword(&keyword))
    return parser.emitError(loc, "expected a grid axis: x, y or z");
  std::optional<Axis> value = symbolizeAxis(keyword);
  if (!value)
    return parser.emitError(loc, "expected a grid axis: x, y or z, not '")
           << keyword << "'";
  axis = AxisAttr::get(parser.getContext(), *value);
  return success();
}

static void printAxis(OpAsmPrinter &p, Operation *, AxisAttr axis) {
  p << stringifyAxis(axis.getValue());
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

void KernelOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                     FunctionType type, ArrayRef<StringRef> paramNames,
                     ArrayRef<DictionaryAttr> argAttrs) {
  state.addAttribute(SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  state.addAttribute(getFunctionTypeAttrName(state.name), TypeAttr::get(type));
  state.addAttribute(getParamNamesAttrName(state.name),
                     builder.getStrArrayAttr(paramNames));
  state.addRegion();
  if (!argAttrs.empty())
    call_interface_impl::addArgAndResultAttrs(
        builder, state, argAttrs, /*resultAttrs=*/{},
        getArgAttrsAttrName(state.name), getResAttrsAttrName(state.name));
}

ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  Builder &builder = parser.getBuilder();
  StringAttr nameAttr;
  if (parser.parseSymbolName(nameAttr, SymbolTable::getSymbolAttrName(),
                             result.attributes))
    return failure();

  SmallVector<OpAsmParser::Argument> params;
  SmallVector<Type> resultTypes;
  SmallVector<DictionaryAttr> resultAttrs;
  bool isVariadic = false;
  SMLoc signatureLoc = parser.getCurrentLocation();
  if (function_interface_impl::parseFunctionSignatureWithArguments(
          parser, /*allowVariadic=*/false, params, isVariadic, resultTypes,
          resultAttrs))
    return failure();

  // The SSA names of the signature are the parameter names the runtime binds
  // keyword arguments to.
  SmallVector<Type> paramTypes;
  SmallVector<StringRef> paramNames;
  for (OpAsmParser::Argument &param : params) {
    if (param.ssaName.name.empty())
      return parser.emitError(signatureLoc,
                              "kernel parameters need names, as in "
                              "'(%x: !kjit.ptr<f32>)'");
    paramTypes.push_back(param.type);
    paramNames.push_back(param.ssaName.name.drop_front()); // drop the '%'
  }
  result.addAttribute(
      getFunctionTypeAttrName(result.name),
      TypeAttr::get(builder.getFunctionType(paramTypes, resultTypes)));
  result.addAttribute(getParamNamesAttrName(result.name),
                      builder.getStrArrayAttr(paramNames));
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  call_interface_impl::addArgAndResultAttrs(
      builder, result, params, resultAttrs, getArgAttrsAttrName(result.name),
      getResAttrsAttrName(result.name));
  return parser.parseRegion(*result.addRegion(), params,
                            /*enableNameShadowing=*/false);
}

void KernelOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printSymbolName(getSymName());
  function_interface_impl::printFunctionSignature(
      p, *this, getArgumentTypes(), /*isVariadic=*/false, getResultTypes());
  function_interface_impl::printFunctionAttributes(
      p, *this, getSignatureAttrNames(*this));
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/true);
}

void KernelOp::getAsmBlockArgumentNames(Region &region,
                                        OpAsmSetValueNameFn setNameFn) {
  if (region.empty())
    return;
  for (auto [arg, name] : llvm::zip(region.getArguments(),
                                    getParamNames().getAsRange<StringAttr>()))
    setNameFn(arg, name.getValue());
}

StringRef KernelOp::getParamName(unsigned index) {
  return cast<StringAttr>(getParamNames()[index]).getValue();
}

bool KernelOp::hasParamFlag(unsigned index, StringRef name) {
  return static_cast<bool>(getArgAttr(index, name));
}

/// Checks `kjit.default` of one parameter against its type. A unit value
/// stands for None and suits pointers and `!kjit.any` parameters.
static LogicalResult verifyDefault(KernelOp kernel, unsigned index,
                                   Attribute value) {
  Type type = kernel.getArgumentTypes()[index];
  StringRef name = kernel.getParamName(index);
  if (isa<UnitAttr>(value)) {
    if (isa<PointerType, AnyValueType>(type))
      return success();
    return kernel.emitOpError()
           << "parameter '" << name << "' of type " << type
           << " cannot default to None (unit); only pointer and '!kjit.any' "
              "parameters can";
  }
  auto typed = dyn_cast<TypedAttr>(value);
  if (!typed || !isa<IntegerAttr, FloatAttr>(value))
    return kernel.emitOpError()
           << "default value of parameter '" << name
           << "' must be an integer or float constant, or unit for None; got "
           << value;
  if (isa<AnyValueType>(type))
    return success();
  if (isa<PointerType>(type))
    return kernel.emitOpError()
           << "pointer parameter '" << name
           << "' can only default to None (unit), not " << value;
  if (typed.getType() != type)
    return kernel.emitOpError()
           << "default value " << value << " of parameter '" << name
           << "' does not match its type " << type;
  return success();
}

static LogicalResult verifyAnyParamUses(KernelOp kernel);

LogicalResult KernelOp::verify() {
  if (failed(verifyHasBody(*this, "kernel")) ||
      failed(verifyUpstreamVerifierHazards(*this)))
    return failure();
  if (!getResultTypes().empty())
    return emitOpError() << "kernel '@" << getSymName()
                         << "' returns values; kernels return nothing and "
                            "write results through pointer parameters";
  unsigned numParams = getNumArguments();
  if (getParamNames().size() != numParams)
    return emitOpError() << "has " << getParamNames().size()
                         << " parameter names for " << numParams
                         << " parameters";

  llvm::StringSet<> seen;
  std::optional<unsigned> firstDefault;
  for (unsigned i = 0; i < numParams; ++i) {
    auto nameAttr = dyn_cast<StringAttr>(getParamNames()[i]);
    if (!nameAttr)
      return emitOpError() << "parameter name #" << i << " is not a string";
    StringRef name = nameAttr.getValue();
    if (!isValidParamName(name))
      return emitOpError() << "parameter #" << i << " is named '" << name
                           << "'; parameter names are identifiers (letters, "
                              "digits and '_', not starting with a digit) "
                              "because launches bind arguments by name";
    if (!seen.insert(name).second)
      return emitOpError() << "two parameters are named '" << name << "'";
    if (kjit::rt::findLaunchOption(std::string_view(name.data(), name.size())))
      return emitOpError() << "parameter '" << name
                           << "' has the name of a launch option; a keyword "
                              "argument of that name could not be told apart";

    Type type = getArgumentTypes()[i];
    bool isConstexpr = hasParamFlag(i, KjitDialect::kConstexprAttrName);
    if (!isa<PointerType, AnyValueType>(type) && !isScalarType(type))
      return emitOpError() << "parameter '" << name << "' has type " << type
                           << "; parameters are i1, i8, i16, i32, i64, f16, "
                              "bf16, f32, f64, '!kjit.ptr<...>' or "
                              "'!kjit.any'";
    if (isConstexpr && isa<PointerType>(type))
      return emitOpError() << "constexpr parameter '" << name
                           << "' cannot have pointer type " << type
                           << "; a constexpr is a compile-time value";
    if (isConstexpr && hasParamFlag(i, KjitDialect::kDoNotSpecializeAttrName))
      return emitOpError() << "parameter '" << name
                           << "' is constexpr, so 'kjit.do_not_specialize' "
                              "cannot apply to it";
    // Unsigned is a property of the launch value, not of the SSA value:
    // arith computes on signless integers (docs/Dialect.md).
    if (hasParamFlag(i, KjitDialect::kUnsignedAttrName) &&
        (!type.isSignlessInteger() || type.isInteger(1)))
      return emitOpError() << "'kjit.unsigned' marks integer parameters (i8, "
                              "i16, i32, i64), but parameter '"
                           << name << "' has type " << type;
    if (hasParamFlag(i, KjitDialect::kConstAttrName) && !isa<PointerType>(type))
      return emitOpError() << "'kjit.const' marks read-only pointers, but "
                              "parameter '"
                           << name << "' has type " << type;

    if (Attribute value = getArgAttr(i, KjitDialect::kDefaultAttrName)) {
      if (failed(verifyDefault(*this, i, value)))
        return failure();
      if (!firstDefault)
        firstDefault = i;
    } else if (firstDefault) {
      return emitOpError() << "parameter '" << getParamName(*firstDefault)
                           << "' has a default value but parameter '" << name
                           << "' after it does not; only trailing parameters "
                              "can have defaults";
    }
  }
  return verifyAnyParamUses(*this);
}

/// A `!kjit.any` parameter is read only through `kjit.cast`. Checked by
/// walking the kernel's own body, in order, before the operations in it are
/// verified: their own type constraints would otherwise reject the value
/// first, with a message that does not say how to read it. (The argument's
/// use list is not read: it also holds users not, or no longer, in the body,
/// such as an operation a rewrite built and has not inserted yet.)
static LogicalResult verifyAnyParamUses(KernelOp kernel) {
  if (kernel.getBody().empty() ||
      llvm::none_of(kernel.getArgumentTypes(), llvm::IsaPred<AnyValueType>))
    return success();
  Block *entry = &kernel.getBody().front();
  WalkResult result = kernel.getBody().walk([&](Operation *op) {
    if (isa<CastOp>(op))
      return WalkResult::advance();
    for (Value operand : op->getOperands()) {
      auto param = dyn_cast_or_null<BlockArgument>(operand);
      if (!param || param.getOwner() != entry ||
          !isa<AnyValueType>(param.getType()))
        continue;
      op->emitOpError() << "uses parameter '"
                        << kernel.getParamName(param.getArgNumber())
                        << "' of type '!kjit.any' directly; read it through "
                           "'kjit.cast' to a concrete type";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// The rules on what the body does with the parameters that need its
/// operations verified first: nothing stores through a `kjit.const`
/// pointer parameter (by kjit.store or kjit.mma_store).
LogicalResult KernelOp::verifyRegions() {
  if (getBody().empty())
    return success();
  Block *entry = &getBody().front();
  WalkResult result = getBody().walk([&](Operation *op) {
    Value base;
    if (auto store = dyn_cast<StoreOp>(op))
      base = store.getBase();
    else if (auto store = dyn_cast<MmaStoreOp>(op))
      base = store.getBase();
    auto param = dyn_cast_or_null<BlockArgument>(base);
    if (!param || param.getOwner() != entry ||
        !hasParamFlag(param.getArgNumber(), KjitDialect::kConstAttrName))
      return WalkResult::advance();
    op->emitOpError() << "stores through parameter '"
                      << getParamName(param.getArgNumber())
                      << "', which is marked 'kjit.const'";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// FuncOp
//===----------------------------------------------------------------------===//

void FuncOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                   FunctionType type, bool noinline) {
  state.addAttribute(SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  state.addAttribute(getFunctionTypeAttrName(state.name), TypeAttr::get(type));
  if (noinline)
    state.addAttribute(getNoinlineAttrName(state.name), builder.getUnitAttr());
  state.addRegion();
}

ParseResult FuncOp::parse(OpAsmParser &parser, OperationState &result) {
  if (succeeded(parser.parseOptionalKeyword("noinline")))
    result.addAttribute(getNoinlineAttrName(result.name),
                        parser.getBuilder().getUnitAttr());
  auto buildFuncType =
      [](Builder &builder, ArrayRef<Type> argTypes, ArrayRef<Type> results,
         function_interface_impl::VariadicFlag,
         std::string &) { return builder.getFunctionType(argTypes, results); };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildFuncType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void FuncOp::print(OpAsmPrinter &p) {
  p << ' ';
  if (getNoinline())
    p << "noinline ";
  if (std::optional<StringRef> visibility = getSymVisibility())
    p << *visibility << ' ';
  p.printSymbolName(getSymName());
  function_interface_impl::printFunctionSignature(
      p, *this, getArgumentTypes(), /*isVariadic=*/false, getResultTypes());
  function_interface_impl::printFunctionAttributes(
      p, *this, getSignatureAttrNames(*this));
  if (!getBody().empty()) {
    p << ' ';
    p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                  /*printBlockTerminators=*/true);
  }
}

LogicalResult FuncOp::verify() {
  if (failed(verifyHasBody(*this, "device function")) ||
      failed(verifyUpstreamVerifierHazards(*this)))
    return failure();
  auto isAny = [](Type type) { return isa<AnyValueType>(type); };
  if (llvm::any_of(getArgumentTypes(), isAny) ||
      llvm::any_of(getResultTypes(), isAny))
    return emitOpError() << "device function '@" << getSymName()
                         << "' uses '!kjit.any'; only kernel parameters may "
                            "have it";
  return success();
}

//===----------------------------------------------------------------------===//
// ReturnOp
//===----------------------------------------------------------------------===//

LogicalResult ReturnOp::verify() {
  auto fn = cast<FunctionOpInterface>((*this)->getParentOp());
  ArrayRef<Type> results = fn.getResultTypes();
  if (getNumOperands() != results.size())
    return emitOpError() << "returns " << getNumOperands() << " value(s) but '@"
                         << fn.getName() << "' declares " << results.size();
  for (auto [i, value, expected] : llvm::enumerate(getOperands(), results))
    if (value.getType() != expected)
      return emitOpError() << "value #" << i << " has type " << value.getType()
                           << " but '@" << fn.getName() << "' returns "
                           << expected;
  return success();
}

//===----------------------------------------------------------------------===//
// CallOp
//===----------------------------------------------------------------------===//

LogicalResult CallOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FlatSymbolRefAttr callee = getCalleeAttr();
  Operation *target = symbolTable.lookupNearestSymbolFrom(*this, callee);
  if (!target)
    return emitOpError() << "calls " << callee
                         << ", but no device function has that name";
  if (isa<KernelOp>(target))
    return emitOpError() << "calls kernel " << callee
                         << "; kernels are launched from the host, only "
                            "device functions ('kjit.func') can be called";
  auto fn = dyn_cast<FuncOp>(target);
  if (!fn)
    return emitOpError() << "calls " << callee << ", which is a '"
                         << target->getName()
                         << "', not a device function ('kjit.func')";

  FunctionType type = fn.getFunctionType();
  if (type.getNumInputs() != getArgs().size())
    return emitOpError() << "passes " << getArgs().size() << " argument(s) but "
                         << callee << " takes " << type.getNumInputs();
  for (auto [i, arg, expected] : llvm::enumerate(getArgs(), type.getInputs()))
    if (arg.getType() != expected)
      return emitOpError() << "argument #" << i << " has type " << arg.getType()
                           << " but " << callee << " expects " << expected;
  if (type.getNumResults() != getNumResults())
    return emitOpError() << "expects " << getNumResults() << " result(s) but "
                         << callee << " returns " << type.getNumResults();
  for (auto [i, result, expected] :
       llvm::enumerate(getResultTypes(), type.getResults()))
    if (result != expected)
      return emitOpError() << "result #" << i << " has type " << result
                           << " but " << callee << " returns " << expected;
  return success();
}

//===----------------------------------------------------------------------===//
// GlobalOp and GetGlobalOp
//===----------------------------------------------------------------------===//

/// Parses the initial value of a global of type `type`. Integer and float
/// literals are read here rather than by the generic attribute parser so
/// that a bad literal is reported at the literal, with the type it needs.
static ParseResult parseGlobalValue(OpAsmParser &parser, Type type,
                                    Attribute &value) {
  SMLoc loc = parser.getCurrentLocation();
  if (auto intType = dyn_cast<IntegerType>(type)) {
    unsigned width = intType.getWidth();
    StringRef keyword;
    if (width == 1 &&
        succeeded(parser.parseOptionalKeyword(&keyword, {"true", "false"}))) {
      value = IntegerAttr::get(type, keyword == "true");
      return success();
    }
    APInt literal;
    OptionalParseResult parsed = parser.parseOptionalInteger(literal);
    if (!parsed.has_value())
      return parser.emitError(loc, "expected an integer initial value for a "
                                   "global of type ")
             << type;
    if (failed(*parsed))
      return failure();
    // Accept anything that fits as a signed or an unsigned value.
    if (literal.getSignificantBits() > width && literal.getActiveBits() > width)
      return parser.emitError(loc, "initial value does not fit in ") << type;
    value = IntegerAttr::get(type, literal.sextOrTrunc(width));
    return success();
  }
  if (auto floatType = dyn_cast<FloatType>(type)) {
    APFloat literal(floatType.getFloatSemantics());
    if (parser.parseFloat(floatType.getFloatSemantics(), literal))
      return failure();
    value = FloatAttr::get(type, literal);
    return success();
  }
  // Any other type is rejected by the verifier, with the global's name.
  return parser.parseAttribute(value, type);
}

ParseResult GlobalOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  Type type;
  Attribute value;
  if (parser.parseSymbolName(name, getSymNameAttrName(result.name),
                             result.attributes) ||
      parser.parseColonType(type) || parser.parseEqual() ||
      parseGlobalValue(parser, type, value) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();
  result.addAttribute(getTypeAttrName(result.name), TypeAttr::get(type));
  result.addAttribute(getValueAttrName(result.name), value);
  return success();
}

void GlobalOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printSymbolName(getSymName());
  p << " : " << getType() << " = ";
  p.printAttributeWithoutType(getValue());
  p.printOptionalAttrDict((*this)->getAttrs(), getSignatureAttrNames(*this));
}

LogicalResult GlobalOp::verify() {
  Type type = getType();
  if (!isScalarType(type))
    return emitOpError() << "global '@" << getSymName() << "' has type " << type
                         << "; globals hold i1, i8, i16, i32, i64, f16, bf16, "
                            "f32 or f64";
  if (!isa<IntegerAttr, FloatAttr>(getValue()))
    return emitOpError() << "initial value of '@" << getSymName()
                         << "' must be an integer or float constant";
  if (getValue().getType() != type)
    return emitOpError() << "initial value of '@" << getSymName()
                         << "' has type " << getValue().getType()
                         << " but the global is declared " << type;
  // The runtime names a global by its module path ("inner::SCALE",
  // docs/Dependencies.md), so every name on the path must be one that the
  // path can spell.
  if (getSymName().contains("::"))
    return emitOpError() << "global '@\"" << getSymName()
                         << "\"' has '::' in its name, which separates "
                            "module names in the runtime's global names";
  for (auto module = (*this)->getParentOfType<ModuleOp>();
       module && module->getParentOp();
       module = module->getParentOfType<ModuleOp>()) {
    std::optional<StringRef> name = module.getSymName();
    if (name && name->contains("::"))
      return emitOpError() << "global '@" << getSymName()
                           << "' is in module '@\"" << *name
                           << "\"', whose name has '::', which separates "
                              "module names in the runtime's global names";
  }
  return success();
}

LogicalResult
GetGlobalOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  SymbolRefAttr symbol = getGlobalAttr();
  // Resolve the path one module at a time, so that an error names the step
  // that fails rather than only the whole path.
  Operation *target =
      symbolTable.lookupNearestSymbolFrom(*this, symbol.getRootReference());
  std::string scope = ("@" + symbol.getRootReference().getValue()).str();
  // The module that should have held `target`; empty for the root symbol.
  std::string holder;
  for (FlatSymbolRefAttr nested : symbol.getNestedReferences()) {
    if (!target)
      return emitOpError() << "reads " << symbol << ", but there is no module "
                           << scope;
    if (!isa<ModuleOp>(target))
      return emitOpError() << "reads " << symbol << ", but " << scope
                           << " is a '" << target->getName()
                           << "', not a module";
    target = symbolTable.lookupSymbolIn(target, nested.getAttr());
    holder = scope;
    scope += ("::@" + nested.getValue()).str();
  }
  if (!target && holder.empty())
    return emitOpError() << "reads unknown global " << symbol;
  if (!target)
    return emitOpError() << "reads unknown global " << symbol << ": module "
                         << holder << " has no symbol @"
                         << symbol.getLeafReference().getValue();
  auto global = dyn_cast<GlobalOp>(target);
  if (!global)
    return emitOpError() << "reads " << symbol << ", which is a '"
                         << target->getName() << "', not a 'kjit.global'";
  if (global.getType() != getType())
    return emitOpError() << "reads " << symbol << " as " << getType()
                         << " but it is declared " << global.getType();
  return success();
}

//===----------------------------------------------------------------------===//
// CastOp
//===----------------------------------------------------------------------===//

LogicalResult CastOp::verify() {
  auto param = dyn_cast<BlockArgument>(getInput());
  if (!param || !param.getOwner()->isEntryBlock() ||
      !isa<KernelOp>(param.getOwner()->getParentOp()))
    return emitOpError("reads a '!kjit.any' value that is not a kernel "
                       "parameter");
  return success();
}

//===----------------------------------------------------------------------===//
// LoadOp and StoreOp
//===----------------------------------------------------------------------===//

/// Checks the type of the value a load produces or a store writes against
/// the pointer: the pointee's value type, or a vector of it that fits one
/// 128-bit access.
static LogicalResult verifyAccessType(Operation *op, Type accessType,
                                      PointerType pointer, StringRef role) {
  Type elementType = getValueTypeForPointee(pointer.getElementType());
  auto vector = dyn_cast<VectorType>(accessType);
  Type accessElement = vector ? vector.getElementType() : accessType;
  if (accessElement != elementType)
    return op->emitOpError()
           << role << " type " << accessType << " does not match " << pointer
           << ", whose elements are " << elementType;
  if (!vector)
    return success();
  if (vector.getRank() != 1 || vector.isScalable())
    return op->emitOpError() << role << " type " << accessType
                             << " must be a fixed-size 1-D vector";
  int64_t count = vector.getNumElements();
  if (elementType.isInteger(1))
    return op->emitOpError() << "vector accesses of i1 are not supported; "
                                "store booleans as i8";
  if (!llvm::isPowerOf2_64(count))
    return op->emitOpError()
           << role << " type " << accessType << " has " << count
           << " elements; vector accesses have a power of "
              "two";
  int64_t bytes = count * pointer.getElementByteWidth();
  if (bytes > 16)
    return op->emitOpError()
           << role << " type " << accessType << " is " << bytes
           << " bytes; a vector access is at most 16 bytes "
              "(one 128-bit access)";
  return success();
}

LogicalResult LoadOp::verify() {
  return verifyAccessType(*this, getResult().getType(), getBase().getType(),
                          "result");
}

/// (Whether the pointer is a `kjit.const` kernel parameter is the kernel's
/// rule: KernelOp::verifyRegions.)
LogicalResult StoreOp::verify() {
  return verifyAccessType(*this, getValue().getType(), getBase().getType(),
                          "stored value");
}

/// A constant mask folds. True: the access always happens, so the mask goes,
/// and `other` with it (only a false mask reads it). False: nothing is read,
/// and the result is `other`, or zero without it.
OpFoldResult LoadOp::fold(FoldAdaptor adaptor) {
  auto mask = dyn_cast_or_null<IntegerAttr>(adaptor.getMask());
  if (!mask)
    return {};
  if (mask.getValue().isOne()) {
    getMaskMutable().clear();
    getOtherMutable().clear();
    return getResult();
  }
  if (Value other = getOther())
    return other;
  return Builder(getContext()).getZeroAttr(getType());
}

/// A store under a constant mask: true, the mask goes; false, it writes
/// nothing and goes.
LogicalResult StoreOp::canonicalize(StoreOp op, PatternRewriter &rewriter) {
  Value mask = op.getMask();
  if (!mask)
    return failure();
  if (matchPattern(mask, m_One())) {
    rewriter.modifyOpInPlace(op, [&] { op.getMaskMutable().clear(); });
    return success();
  }
  if (matchPattern(mask, m_Zero())) {
    rewriter.eraseOp(op);
    return success();
  }
  return failure();
}

/// An assertion of the constant true cannot fail.
LogicalResult AssertOp::canonicalize(AssertOp op, PatternRewriter &rewriter) {
  if (!matchPattern(op.getCondition(), m_One()))
    return failure();
  rewriter.eraseOp(op);
  return success();
}

#define GET_OP_CLASSES
#include "kjit/Dialect/Kjit/IR/KjitOps.cpp.inc"
