//===- ApplySpecialization.cpp - applying a specialization to a kernel ----===//

#include "kjit/Transforms/ApplySpecialization.h"

#include "kjit/Model/DType.h"
#include "kjit/Model/Specialization.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace kjit;

/// A signature type's text ("*kfp32", "u64", aliases such as "*float32"
/// too) as the runtime's typed form, or nothing for an unknown dtype.
static std::optional<rt::SigType> parseSigTypeText(StringRef text) {
  rt::SigType type;
  type.kind = rt::SigType::Kind::Scalar;
  StringRef dtypeName = text;
  if (dtypeName.consume_front("*"))
    type.kind = dtypeName.consume_front("k") ? rt::SigType::Kind::ConstPointer
                                             : rt::SigType::Kind::Pointer;
  std::optional<rt::DType> dtype =
      rt::parseDType(std::string_view(dtypeName.data(), dtypeName.size()));
  if (!dtype)
    return std::nullopt;
  type.dtype = *dtype;
  return type;
}

Type kjit::parseSignatureType(StringRef text, MLIRContext *context,
                              std::string &error) {
  std::optional<rt::SigType> parsed = parseSigTypeText(text);
  if (!parsed) {
    error = ("unknown signature type '" + text + "'").str();
    return {};
  }
  Type type = signatureType(*parsed, context);
  if (!type)
    error = ("signature type '" + text + "' has no MLIR element type").str();
  return type;
}

std::string kjit::printSignatureType(Type type, bool isConst, bool isUnsigned) {
  if (isa<AnyValueType>(type))
    return "any";
  if (isUnsigned && type.isSignlessInteger())
    type = IntegerType::get(type.getContext(), type.getIntOrFloatBitWidth(),
                            IntegerType::Unsigned);
  std::string prefix;
  if (auto pointer = dyn_cast<PointerType>(type)) {
    prefix = isConst ? "*k" : "*";
    type = pointer.getElementType();
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  // Scalars are signless: i32 spells the same in both worlds.
  for (int i = 0; i < rt::kNumDTypes; ++i) {
    auto dtype = static_cast<rt::DType>(i);
    if (rt::kernelIRTypeName(dtype) == text)
      return prefix + std::string(rt::canonicalName(dtype));
  }
  return prefix + text;
}

std::string kjit::printSignatureType(SignatureTypeAttr type) {
  return printSignatureType(type.getType(), type.getIsConst());
}

std::string kjit::printParamSignatureType(KernelOp kernel, unsigned index) {
  return printSignatureType(
      kernel.getArgumentTypes()[index],
      kernel.hasParamFlag(index, KjitDialect::kConstAttrName),
      kernel.hasParamFlag(index, KjitDialect::kUnsignedAttrName));
}

/// Parses a constexpr value: an integer, a float, true/false or none.
static Attribute parseConstant(StringRef text, MLIRContext *context) {
  Builder builder(context);
  if (text == "none")
    return builder.getUnitAttr();
  if (text == "true" || text == "false")
    return builder.getBoolAttr(text == "true");
  APInt integer;
  if (!text.getAsInteger(10, integer)) {
    if (integer.getSignificantBits() > 64)
      return {};
    return builder.getI64IntegerAttr(integer.getSExtValue());
  }
  double real;
  if (!text.getAsDouble(real))
    return builder.getF64FloatAttr(real);
  return {};
}

std::optional<KernelSpecialization>
kjit::parseSpecialization(StringRef kernel, ArrayRef<std::string> entries,
                          MLIRContext *context, std::string &error) {
  KernelSpecialization spec;
  spec.kernel = kernel.str();
  for (StringRef entry : entries) {
    entry = entry.trim();
    ParamSpecialization param;
    if (auto [name, value] = entry.split('=');
        !value.empty() || entry.ends_with("=")) {
      param.name = name.trim().str();
      param.constant = parseConstant(value.trim(), context);
      if (!param.constant) {
        error = ("entry '" + entry +
                 "': the value must be an integer, a float, true, false or "
                 "none")
                    .str();
        return std::nullopt;
      }
      if (isa<UnitAttr>(param.constant)) {
        rt::SigType none{rt::SigType::Kind::NullPointer, rt::DType::I8};
        param.type = signatureType(none, context);
        param.signatureType = getSignatureTypeAttr(none, context);
      }
    } else {
      SmallVector<StringRef> parts;
      entry.split(parts, ':');
      if (parts.size() < 2 || parts.size() > 3 || parts[0].empty()) {
        error = ("entry '" + entry +
                 "' is neither 'name:type[:D|1|N]' nor 'name=value'")
                    .str();
        return std::nullopt;
      }
      param.name = parts[0].str();
      param.type = parseSignatureType(parts[1], context, error);
      if (!param.type) {
        error = ("entry '" + entry + "': " + error).str();
        return std::nullopt;
      }
      // What the launch passes, typed (aliases of a dtype are one type).
      param.signatureType =
          getSignatureTypeAttr(*parseSigTypeText(parts[1]), context);
      StringRef key = parts.size() == 3 ? parts[2] : "N";
      if (key == "D") {
        param.divisibleBy16 = true;
      } else if (key == "1") {
        param.constant = IntegerAttr::get(IntegerType::get(context, 64), 1);
      } else if (key != "N") {
        error = ("entry '" + entry + "': unknown spec key '" + key +
                 "'; expected D, 1 or N")
                    .str();
        return std::nullopt;
      }
    }
    if (param.name.empty()) {
      error = ("entry '" + entry + "' has no parameter name").str();
      return std::nullopt;
    }
    spec.params.push_back(std::move(param));
  }
  return spec;
}

/// A runtime value as the attribute the specializer folds.
static Attribute toAttribute(const rt::Argument &value, MLIRContext *context) {
  Builder builder(context);
  switch (value.kind()) {
  case rt::ArgKind::None:
    return builder.getUnitAttr();
  case rt::ArgKind::Bool:
    return builder.getBoolAttr(value.asBool());
  case rt::ArgKind::Int: {
    // The binder admits -2^63 .. 2^64-1: 64 bits hold every such value.
    auto bits = static_cast<uint64_t>(value.asInt());
    return IntegerAttr::get(IntegerType::get(context, 64),
                            APInt(64, bits, /*isSigned=*/false));
  }
  case rt::ArgKind::Float:
    return builder.getF64FloatAttr(value.asFloat());
  case rt::ArgKind::DType: {
    std::string_view name = rt::canonicalName(value.dtype());
    return builder.getStringAttr(StringRef(name.data(), name.size()));
  }
  case rt::ArgKind::Tensor:
  case rt::ArgKind::Callable:
    break;
  }
  return {};
}

std::optional<KernelSpecialization>
kjit::readSpecializationRecord(StringRef json, MLIRContext *context,
                               std::string &error) {
  absl::StatusOr<rt::SpecializationRecord> record =
      rt::specializationFromJson(std::string_view(json.data(), json.size()));
  if (!record.ok()) {
    // Debian's Abseil predates std::string_view interop.
    error = std::string(record.status().message().data(),
                        record.status().message().size());
    return std::nullopt;
  }
  return specializationFromRecord(*record, context, error);
}

SignatureTypeAttr kjit::getSignatureTypeAttr(const rt::SigType &type,
                                             MLIRContext *context) {
  Type mlirType = signatureType(type, context);
  if (!mlirType)
    return {};
  // The parameter's type is signless; what the launch passes keeps its
  // signedness.
  if (type.kind == rt::SigType::Kind::Scalar &&
      rt::kindOf(type.dtype) == rt::DTypeKind::UnsignedInt)
    mlirType = IntegerType::get(context, mlirType.getIntOrFloatBitWidth(),
                                IntegerType::Unsigned);
  return SignatureTypeAttr::get(mlirType,
                                type.kind == rt::SigType::Kind::ConstPointer);
}

Type kjit::signatureType(const rt::SigType &type, MLIRContext *context) {
  if (type.kind == rt::SigType::Kind::NullPointer)
    return PointerType::get(context, IntegerType::get(context, 8));
  std::string_view irName = rt::kernelIRTypeName(type.dtype);
  if (irName.empty())
    return {};
  Type element =
      mlir::parseType(StringRef(irName.data(), irName.size()), context);
  if (type.kind == rt::SigType::Kind::Scalar)
    // Scalars are signless: the signedness of u32/u64 is in the value.
    return getValueTypeForPointee(element);
  return PointerType::get(context, element);
}

std::optional<KernelSpecialization>
kjit::specializationFromRecord(const rt::SpecializationRecord &record,
                               MLIRContext *context, std::string &error) {
  KernelSpecialization spec;
  spec.kernel = record.name;
  for (const rt::SpecializedParam &param : record.params) {
    ParamSpecialization ps;
    ps.name = param.name;
    if (std::optional<rt::Argument> constant = param.constant()) {
      ps.constant = toAttribute(*constant, context);
      if (!ps.constant) {
        error =
            "parameter '" + param.name + "' has a constant kjit cannot fold";
        return std::nullopt;
      }
    }
    if (!param.isConstexpr) {
      ps.type = signatureType(param.type, context);
      if (!ps.type) {
        error = "parameter '" + param.name + "': signature type '" +
                rt::toString(param.type) + "' has no MLIR element type";
        return std::nullopt;
      }
      ps.signatureType = getSignatureTypeAttr(param.type, context);
      ps.divisibleBy16 = param.specKey == rt::SpecKey::Divisible16;
      for (size_t bit = 0; bit < record.backendAttributes.size(); ++bit)
        if (param.backendAttrs & (1u << bit))
          ps.backendAttributes.push_back(record.backendAttributes[bit]);
    }
    spec.params.push_back(std::move(ps));
  }
  return spec;
}

//===----------------------------------------------------------------------===//
// Applying a specialization
//===----------------------------------------------------------------------===//

namespace {

/// Folds values into one kernel, reporting misfits against the kernel.
class Specializer {
public:
  Specializer(KernelOp kernel, const KernelSpecialization &spec)
      : kernel(kernel), spec(spec), builder(kernel.getContext()) {}

  LogicalResult run();

private:
  LogicalResult foldConstexpr(unsigned index, const ParamSpecialization &ps);
  LogicalResult bindParam(unsigned index, const ParamSpecialization &ps);
  /// A constant of `type` holding `value`, or an error naming `param`.
  FailureOr<Value> materialize(Attribute value, Type type, StringRef param,
                               Operation *where);

  KernelOp kernel;
  const KernelSpecialization &spec;
  OpBuilder builder;
};

} // namespace

FailureOr<Value> Specializer::materialize(Attribute value, Type type,
                                          StringRef param, Operation *where) {
  // Constants go first in the body; the position is taken afresh because
  // folding erases operations (a cast may have been the first one).
  builder.setInsertionPointToStart(&kernel.getBody().front());
  Location loc = kernel.getLoc();
  auto fail = [&]() -> FailureOr<Value> {
    where->emitError() << "parameter '" << param << "' is bound to " << value
                       << ", which does not fit its type " << type;
    return failure();
  };
  if (isa<UnitAttr>(value)) {
    if (!isa<PointerType>(type))
      return fail();
    auto null = NullOp::create(builder, loc, type);
    null->setAttr(kNoneParamAttrName, builder.getStringAttr(param));
    return null.getResult();
  }
  if (auto boolean = dyn_cast<BoolAttr>(value)) {
    if (!type.isInteger(1))
      return fail();
    return arith::ConstantOp::create(builder, loc,
                                     builder.getBoolAttr(boolean.getValue()))
        .getResult();
  }
  if (auto integer = dyn_cast<IntegerAttr>(value)) {
    auto intType = dyn_cast<IntegerType>(type);
    if (!intType)
      return fail();
    const APInt &bits = integer.getValue();
    unsigned width = intType.getWidth();
    // Fits as a signed or as an unsigned value (u64 arguments).
    if (bits.getSignificantBits() > width &&
        (bits.isNegative() || bits.getActiveBits() > width))
      return fail();
    return arith::ConstantOp::create(
               builder, loc, IntegerAttr::get(type, bits.sextOrTrunc(width)))
        .getResult();
  }
  if (auto real = dyn_cast<FloatAttr>(value)) {
    auto floatType = dyn_cast<FloatType>(type);
    if (!floatType)
      return fail();
    APFloat converted = real.getValue();
    bool lost;
    converted.convert(floatType.getFloatSemantics(),
                      APFloat::rmNearestTiesToEven, &lost);
    return arith::ConstantOp::create(builder, loc,
                                     FloatAttr::get(type, converted))
        .getResult();
  }
  return fail();
}

/// The type a constexpr of unknown (`!kjit.any`) type has, from its value:
/// bool -> i1, int -> i32 or i64 by range, float -> f32, as the reference's
/// mangle_type does for runtime values.
static Type typeOfValue(Attribute value, MLIRContext *context) {
  if (isa<BoolAttr>(value))
    return IntegerType::get(context, 1);
  if (auto integer = dyn_cast<IntegerAttr>(value))
    return IntegerType::get(
        context, integer.getValue().getSignificantBits() <= 32 ? 32 : 64);
  if (isa<FloatAttr>(value))
    return Float32Type::get(context);
  return {};
}

LogicalResult Specializer::foldConstexpr(unsigned index,
                                         const ParamSpecialization &ps) {
  StringRef name = kernel.getParamName(index);
  if (!ps.constant)
    return kernel.emitError() << "constexpr parameter '" << name
                              << "' needs a value ('" << name << "=VALUE')";
  BlockArgument arg = kernel.getArgument(index);
  Type declared = arg.getType();
  if (!isa<AnyValueType>(declared)) {
    if (arg.use_empty())
      return success();
    FailureOr<Value> folded = materialize(ps.constant, declared, name, kernel);
    if (failed(folded))
      return failure();
    arg.replaceAllUsesWith(*folded);
    return success();
  }
  // An unannotated constexpr: each cast reads it as the type it names.
  for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
    auto castOp = llvm::cast<CastOp>(user);
    Type natural = typeOfValue(ps.constant, kernel.getContext());
    if (natural && isa<FloatType>(natural) != isa<FloatType>(castOp.getType()))
      return castOp.emitError()
             << "constexpr parameter '" << name << "' is bound to "
             << ps.constant << ", but this cast reads it as "
             << castOp.getType();
    FailureOr<Value> folded =
        materialize(ps.constant, castOp.getType(), name, castOp);
    if (failed(folded))
      return failure();
    castOp.replaceAllUsesWith(*folded);
    castOp.erase();
  }
  return success();
}

LogicalResult Specializer::bindParam(unsigned index,
                                     const ParamSpecialization &ps) {
  StringRef name = kernel.getParamName(index);
  BlockArgument arg = kernel.getArgument(index);
  Type declared = arg.getType();
  if (!ps.type)
    return kernel.emitError()
           << "parameter '" << name << "' needs a signature type ('" << name
           << ":TYPE')";
  bool isNone = ps.constant && isa<UnitAttr>(ps.constant);

  if (isa<AnyValueType>(declared)) {
    // The value decides the type; each cast must agree with it. A None
    // argument reads as a null pointer of whatever type the cast names.
    for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
      auto castOp = llvm::cast<CastOp>(user);
      bool fits = isNone ? isa<PointerType>(castOp.getType())
                         : castOp.getType() == ps.type;
      if (!fits) {
        InFlightDiagnostic diag = castOp.emitError()
                                  << "parameter '" << name << "' is bound to ";
        if (isNone)
          diag << "None";
        else
          diag << ps.type;
        return diag << ", but this cast reads it as " << castOp.getType();
      }
      Value replacement = arg;
      if (isNone || ps.constant) {
        FailureOr<Value> folded =
            materialize(ps.constant, castOp.getType(), name, castOp);
        if (failed(folded))
          return failure();
        replacement = *folded;
      }
      castOp.replaceAllUsesWith(replacement);
      castOp.erase();
    }
    arg.setType(ps.type);
  } else {
    bool fits = declared == ps.type || (isNone && isa<PointerType>(declared));
    if (!fits)
      return kernel.emitError()
             << "parameter '" << name << "' is declared " << declared
             << " but the specialization binds it as " << ps.type;
    // Signedness is not in the parameter's type: u32 and i32 are both i32
    // here; it is in the signature type and the kjit.unsigned flag.
    if (isa<IntegerType>(declared) && ps.signatureType &&
        kernel.hasParamFlag(index, KjitDialect::kUnsignedAttrName) !=
            ps.signatureType.getType().isUnsignedInteger())
      return kernel.emitError() << "parameter '" << name << "' is declared "
                                << printParamSignatureType(kernel, index)
                                << " but the specialization binds it as "
                                << printSignatureType(ps.signatureType);
    if (ps.constant && !arg.use_empty()) {
      FailureOr<Value> folded =
          materialize(ps.constant, declared, name, kernel);
      if (failed(folded))
        return failure();
      arg.replaceAllUsesWith(*folded);
    }
  }
  if (ps.divisibleBy16) {
    if (!isa<PointerType, IntegerType>(arg.getType()))
      return kernel.emitError()
             << "parameter '" << name << "' of type " << arg.getType()
             << " cannot take the D spec key";
    kernel.setArgAttr(index, KjitDialect::kDivisibilityAttrName,
                      builder.getI64IntegerAttr(16));
  }
  if (!ps.backendAttributes.empty()) {
    SmallVector<Attribute> names;
    for (const std::string &attribute : ps.backendAttributes)
      names.push_back(builder.getStringAttr(attribute));
    kernel.setArgAttr(index, KjitDialect::kSpecAttrsAttrName,
                      builder.getArrayAttr(names));
  }
  // What the launch passes, where the type cannot say it (the host
  // lowering writes the launch signature from it). A `kjit.const`
  // parameter is always passed as "*kT" (the binder makes it so), also when
  // an inline spec spells it "*T".
  if (!ps.signatureType)
    return success();
  bool isConst = kernel.hasParamFlag(index, KjitDialect::kConstAttrName);
  Type type = arg.getType();
  if (kernel.hasParamFlag(index, KjitDialect::kUnsignedAttrName) &&
      type.isSignlessInteger())
    type = IntegerType::get(type.getContext(), type.getIntOrFloatBitWidth(),
                            IntegerType::Unsigned);
  bool pointer = isa<PointerType>(type);
  if (ps.signatureType != SignatureTypeAttr::get(type, isConst && pointer) &&
      !(isConst && ps.signatureType == SignatureTypeAttr::get(type)))
    kernel.setArgAttr(index, KjitDialect::kSignatureTypeAttrName,
                      ps.signatureType);
  return success();
}

LogicalResult Specializer::run() {
  llvm::StringMap<const ParamSpecialization *> byName;
  for (const ParamSpecialization &ps : spec.params)
    if (!byName.try_emplace(ps.name, &ps).second)
      return kernel.emitError()
             << "the specialization names parameter '" << ps.name << "' twice";
  for (const ParamSpecialization &ps : spec.params)
    if (!llvm::is_contained(
            kernel.getParamNames().getAsValueRange<StringAttr>(), ps.name))
      return kernel.emitError() << "the specialization names parameter '"
                                << ps.name << "', which kernel '@"
                                << kernel.getSymName() << "' does not have";

  unsigned numParams = kernel.getNumArguments();
  llvm::BitVector constexprs(numParams);
  for (unsigned i = 0; i < numParams; ++i) {
    StringRef name = kernel.getParamName(i);
    const ParamSpecialization *ps = byName.lookup(name);
    if (!ps)
      return kernel.emitError() << "the specialization has no entry for "
                                   "parameter '"
                                << name << "'";
    if (kernel.hasParamFlag(i, KjitDialect::kConstexprAttrName)) {
      if (failed(foldConstexpr(i, *ps)))
        return failure();
      constexprs.set(i);
    } else if (failed(bindParam(i, *ps))) {
      return failure();
    }
  }

  // Defaults only matter for binding, which is done; left in place they
  // could contradict a parameter's bound type.
  for (unsigned i = 0; i < numParams; ++i)
    kernel.removeArgAttr(i, KjitDialect::kDefaultAttrName);

  // The parameters now have their bound types; constexprs are not passed at
  // launch, so they leave the signature.
  kernel.setType(FunctionType::get(kernel.getContext(),
                                   kernel.getBody().getArgumentTypes(), {}));
  SmallVector<Attribute> keptNames;
  for (unsigned i = 0; i < numParams; ++i)
    if (!constexprs.test(i))
      keptNames.push_back(kernel.getParamNames()[i]);
  if (failed(kernel.eraseArguments(constexprs)))
    return failure();
  kernel.setParamNamesAttr(builder.getArrayAttr(keptNames));
  return success();
}

LogicalResult kjit::applySpecialization(KernelOp kernel,
                                        const KernelSpecialization &spec) {
  return Specializer(kernel, spec).run();
}
