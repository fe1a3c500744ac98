//===- Dependencies.cpp - kernel keys and the globals they read -----------===//
//
// Hashing is a Tarjan walk over the call graph: each strongly connected
// component is finished once all functions it calls are, so a function in a
// call cycle gets a key that does not depend on where the walk started, and
// every function is hashed once however many callers share it.
//
// A function's own IR is encoded by a structural walk (IRHasher) and digested
// with BLAKE3; its content hash is a SHA-256 over that digest and its callees'
// content hashes, its key a SHA-256 over the content hash and the global
// values (docs/Dependencies.md says why each piece is what it is).
//
//===----------------------------------------------------------------------===//

#include "kjit/Analysis/Dependencies.h"

#include "kjit/Dialect/Kjit/IR/Kjit.h"
#include "kjit/Model/GlobalPath.h"

#include "mlir/Bytecode/BytecodeImplementation.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Bytecode/Encoding.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Location.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/StringSaver.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <deque>
#include <limits>

using namespace mlir;
using namespace kjit;

namespace {

using Digest = std::array<uint8_t, 32>;

/// Separates the fields fed to a hash so that ("ab","c") != ("a","bc"): the
/// length first, in LEB128 (the same bytes on every host, and one byte for
/// the short fields that are the rule, which keeps most keys to one SHA-256
/// block).
void hashField(llvm::SHA256 &sha, StringRef field) {
  uint8_t length[10];
  size_t n = 0;
  uint64_t size = field.size();
  do {
    uint8_t byte = size & 0x7f;
    size >>= 7;
    length[n++] = size ? byte | 0x80 : byte;
  } while (size);
  sha.update(ArrayRef<uint8_t>(length, n));
  sha.update(field);
}

/// Lower-case hex, written straight into the string (llvm::toHex goes
/// through a SmallString that spills for 64 digits).
std::string toHex(const Digest &digest) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string hex(2 * digest.size(), '0');
  for (size_t i = 0; i != digest.size(); ++i) {
    hex[2 * i] = digits[digest[i] >> 4];
    hex[2 * i + 1] = digits[digest[i] & 15];
  }
  return hex;
}

/// Whether calls to `fn` must stay calls: `noinline` on kjit.func,
/// `no_inline` on func.func.
bool isNoinline(Operation *fn) {
  return fn->hasAttr("noinline") || fn->hasAttr("no_inline");
}

/// The start line of `fn` in its source, or 0 when it has none (IR built in
/// memory). Only the line: a file path would make keys machine-specific.
unsigned getStartLine(Operation *fn) {
  if (auto loc = dyn_cast<FileLineColLoc>(fn->getLoc()))
    return loc.getLine();
  if (auto loc = fn->getLoc()->findInstanceOf<FileLineColLoc>())
    return loc.getLine();
  return 0;
}

bool isRecordAttr(StringRef name) {
  return name == DependencyAnalysis::kContentHashAttrName ||
         name == DependencyAnalysis::kKeyAttrName ||
         name == DependencyAnalysis::kUsedGlobalsAttrName;
}

/// The canonical encoding of a function's IR, digested with BLAKE3. It is a
/// walk of the IR's structure, not its printed text: for each operation in
/// order its name, properties, discardable attributes, operands (as value
/// numbers), result types, successors (as block numbers) and regions; for the
/// function op its name, start line, properties and discardable attributes
/// (without a persisted record) and regions. Every field is length- or
/// count-prefixed, so the byte stream decodes back to exactly one structure:
/// two functions share an encoding only if they are the same IR up to SSA names
/// and locations. The encoding is version "kjit-function-v2"
/// (docs/Dependencies.md).
///
/// Attributes of the common builtin kinds are encoded from their contents;
/// every other attribute, and every type, by its printed form, printed once
/// per analysis with fixed flags (nothing from the command line) and memoized
/// by the uniqued object. The memo only caches text: a pointer never reaches
/// the hash, and nothing iterates over the memo.
class IRHasher {
public:
  explicit IRHasher(MLIRContext *context)
      : asmState(context, getPrintingFlags()), saver(allocator) {}

  /// Called for every operation of the function, the function op included,
  /// in walk order (pre-order), with the symbol references among its
  /// attributes (inherent and discardable, not those nested in other
  /// attributes).
  using OpVisitor =
      llvm::function_ref<void(Operation *, ArrayRef<SymbolRefAttr>)>;

  Digest hashFunction(Operation *fn, unsigned startLine, OpVisitor visit);

  /// The printed form of `attr`, memoized.
  StringRef getAttrText(Attribute attr);

private:
  static OpPrintingFlags getPrintingFlags() {
    // OpPrintingFlags() reads --mlir-elide-elementsattrs-if-larger and
    // friends: fix everything that changes how an attribute prints, so that
    // keys do not depend on a tool's options (and elided constants are never
    // hashed as "...").
    OpPrintingFlags flags;
    flags.elideLargeElementsAttrs(std::numeric_limits<int64_t>::max())
        .printLargeElementsAttrWithHex(100)
        .enableDebugInfo(false);
    return flags;
  }

  void writeInt(uint64_t value) {
    // LEB128: small numbers, the common case, take one byte.
    do {
      uint8_t byte = value & 0x7f;
      value >>= 7;
      buffer.push_back(value ? byte | 0x80 : byte);
    } while (value);
  }
  void writeTag(char tag) { buffer.push_back(static_cast<uint8_t>(tag)); }
  void writeString(StringRef text) {
    writeInt(text.size());
    buffer.append(text.bytes_begin(), text.bytes_end());
  }
  void writeAPInt(const APInt &value) {
    // Width, then the 64-bit words least significant first, each written
    // byte by byte: the same bytes on every host.
    writeInt(value.getBitWidth());
    for (unsigned i = 0, e = value.getNumWords(); i != e; ++i) {
      uint64_t word = value.getRawData()[i];
      for (unsigned b = 0; b != 8; ++b)
        buffer.push_back(static_cast<uint8_t>(word >> (8 * b)));
    }
  }

  StringRef getTypeText(Type type);
  void writeType(Type type) { writeString(getTypeText(type)); }
  void writeAttr(Attribute attr);
  void writeNamedAttrs(ArrayRef<NamedAttribute> attrs);
  /// An attribute of the operation itself: also noted if it is a symbol
  /// reference.
  void writeTopLevelAttr(Attribute attr) {
    if (auto ref = dyn_cast_if_present<SymbolRefAttr>(attr))
      symbolRefs.push_back(ref);
    writeAttr(attr);
  }
  void writeProperties(Operation &op);
  void writeAttributes(Operation &op, bool skipRecord);
  friend class PropertyWriter;

  /// Values are numbered in the order the walk first meets them. A definition
  /// writes 0 when it is the first mention of the value, or the number a
  /// forward use already gave it (a use in a block that precedes its
  /// definition's block); a use writes the number.
  void writeDefinition(Value value) {
    auto [it, inserted] = valueNumbers.try_emplace(value, nextValueNumber);
    if (inserted) {
      ++nextValueNumber;
      writeInt(0);
    } else {
      writeInt(it->second + 1);
    }
  }
  void writeUse(Value value) {
    auto [it, inserted] = valueNumbers.try_emplace(value, nextValueNumber);
    if (inserted)
      ++nextValueNumber;
    writeInt(it->second);
  }
  /// The position of `block` in its region.
  unsigned getBlockNumber(Block *block);

  void writeRegion(Region &region, OpVisitor visit);
  void writeOperation(Operation &op, OpVisitor visit);

  AsmState asmState;
  llvm::BumpPtrAllocator allocator;
  llvm::StringSaver saver;
  llvm::DenseMap<Type, StringRef> typeText;
  llvm::DenseMap<Attribute, StringRef> attrText;
  std::string scratch;

  // Per function.
  SmallVector<uint8_t, 0> buffer;
  /// Symbol references among the attributes of the operation being encoded.
  SmallVector<SymbolRefAttr> symbolRefs;
  llvm::DenseMap<Value, unsigned> valueNumbers;
  unsigned nextValueNumber = 0;
  llvm::DenseMap<Block *, unsigned> blockNumbers;
};

StringRef IRHasher::getTypeText(Type type) {
  auto [it, inserted] = typeText.try_emplace(type);
  if (inserted) {
    scratch.clear();
    llvm::raw_string_ostream os(scratch);
    type.print(os, asmState);
    it->second = saver.save(scratch);
  }
  return it->second;
}

StringRef IRHasher::getAttrText(Attribute attr) {
  auto [it, inserted] = attrText.try_emplace(attr);
  if (inserted) {
    scratch.clear();
    llvm::raw_string_ostream os(scratch);
    attr.print(os, asmState);
    it->second = saver.save(scratch);
  }
  return it->second;
}

void IRHasher::writeAttr(Attribute attr) {
  // One tag per kind, then the contents.
  if (!attr) {
    writeTag('0');
  } else if (auto integer = dyn_cast<IntegerAttr>(attr)) {
    writeTag('i');
    writeType(integer.getType());
    writeAPInt(integer.getValue());
  } else if (auto flt = dyn_cast<FloatAttr>(attr)) {
    writeTag('f');
    writeType(flt.getType());
    writeAPInt(flt.getValue().bitcastToAPInt());
  } else if (auto str = dyn_cast<StringAttr>(attr)) {
    writeTag('s');
    writeString(str.getValue());
    writeType(str.getType());
  } else if (auto ref = dyn_cast<SymbolRefAttr>(attr)) {
    writeTag('@');
    writeString(ref.getRootReference().getValue());
    writeInt(ref.getNestedReferences().size());
    for (FlatSymbolRefAttr nested : ref.getNestedReferences())
      writeString(nested.getValue());
  } else if (auto type = dyn_cast<TypeAttr>(attr)) {
    writeTag('t');
    writeType(type.getValue());
  } else if (isa<UnitAttr>(attr)) {
    writeTag('u');
  } else if (auto array = dyn_cast<ArrayAttr>(attr)) {
    writeTag('a');
    writeInt(array.size());
    for (Attribute element : array)
      writeAttr(element);
  } else if (auto dict = dyn_cast<DictionaryAttr>(attr)) {
    writeTag('d');
    writeNamedAttrs(dict.getValue());
  } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    // Prints as its resource's name only: the blob's bytes are the content.
    writeTag('r');
    writeString(getAttrText(attr));
    if (AsmResourceBlob *blob = resource.getRawHandle().getBlob()) {
      writeTag('+');
      writeString(StringRef(blob->getData().data(), blob->getData().size()));
    } else {
      writeTag('-');
    }
  } else {
    writeTag('p');
    writeString(getAttrText(attr));
  }
}

void IRHasher::writeNamedAttrs(ArrayRef<NamedAttribute> attrs) {
  // Sorted by name (dictionaries are); each entry introduced by 1, 0 ends.
  for (NamedAttribute attr : attrs) {
    writeInt(1);
    writeString(attr.getName().getValue());
    writeAttr(attr.getValue());
  }
  writeInt(0);
}

unsigned IRHasher::getBlockNumber(Block *block) {
  auto it = blockNumbers.find(block);
  if (it != blockNumbers.end())
    return it->second;
  unsigned number = 0;
  for (Block &sibling : *block->getParent())
    blockNumbers[&sibling] = number++;
  return blockNumbers.lookup(block);
}

/// Encodes an operation's properties the way MLIR's bytecode writer gets them
/// (BytecodeOpInterface::writeProperties): every property, attributes and
/// plain C++ values (an `I64Prop`) alike, without building the dictionary
/// that Operation::getPropertiesAsAttribute() uniques on every call. Each
/// primitive is tagged; anything it cannot encode (a resource handle) makes
/// the caller fall back to the dictionary.
class PropertyWriter : public DialectBytecodeWriter {
public:
  explicit PropertyWriter(IRHasher &hasher) : hasher(hasher) {}

  bool failed() const { return fallBack; }

  void writeAttribute(Attribute attr) override {
    hasher.writeTopLevelAttr(attr);
  }
  void writeOptionalAttribute(Attribute attr) override {
    hasher.writeTopLevelAttr(attr);
  }
  void writeType(Type type) override {
    hasher.writeTag('T');
    hasher.writeType(type);
  }
  void writeResourceHandle(const AsmDialectResourceHandle &) override {
    fallBack = true;
  }
  void writeVarInt(uint64_t value) override {
    hasher.writeTag('V');
    hasher.writeInt(value);
  }
  void writeSignedVarInt(int64_t value) override {
    hasher.writeTag('v');
    hasher.writeInt(static_cast<uint64_t>(value));
  }
  void writeAPIntWithKnownWidth(const APInt &value) override {
    hasher.writeTag('I');
    hasher.writeAPInt(value);
  }
  void writeAPFloatWithKnownSemantics(const APFloat &value) override {
    hasher.writeTag('F');
    hasher.writeAPInt(value.bitcastToAPInt());
  }
  void writeOwnedString(StringRef str) override {
    hasher.writeTag('S');
    hasher.writeString(str);
  }
  void writeOwnedBlob(ArrayRef<char> blob) override {
    hasher.writeTag('B');
    hasher.writeString(StringRef(blob.data(), blob.size()));
  }
  void writeOwnedBool(bool value) override {
    hasher.writeTag(value ? 'Y' : 'N');
  }
  /// Fixed, so that an op whose encoding depends on the version (operand
  /// segment sizes) always takes the same path, also after MLIR moves on.
  int64_t getBytecodeVersion() const override {
    return bytecode::kNativePropertiesODSSegmentSize;
  }
  FailureOr<const DialectVersion *>
  getDialectVersion(StringRef) const override {
    return failure();
  }

private:
  IRHasher &hasher;
  bool fallBack = false;
};

void IRHasher::writeProperties(Operation &op) {
  if (!op.getPropertiesStorageSize()) {
    writeTag('-');
    return;
  }
  if (auto bytecode = dyn_cast<BytecodeOpInterface>(&op)) {
    size_t mark = buffer.size(), refs = symbolRefs.size();
    writeTag('w');
    PropertyWriter writer(*this);
    bytecode.writeProperties(writer);
    if (!writer.failed())
      return;
    buffer.truncate(mark);
    symbolRefs.truncate(refs);
  }
  // As the generic form prints them: <{...}>.
  writeTag('a');
  Attribute properties = op.getPropertiesAsAttribute();
  if (auto dict = dyn_cast_if_present<DictionaryAttr>(properties))
    for (NamedAttribute attr : dict)
      if (auto ref = dyn_cast<SymbolRefAttr>(attr.getValue()))
        symbolRefs.push_back(ref);
  writeAttr(properties);
}

void IRHasher::writeAttributes(Operation &op, bool skipRecord) {
  // Inherent attributes (properties), then discardable ones, sorted by name
  // (dictionaries are): each entry introduced by 1, 0 ends.
  writeProperties(op);
  for (NamedAttribute attr : op.getRawDictionaryAttrs()) {
    if (skipRecord && isRecordAttr(attr.getName().getValue()))
      continue;
    writeInt(1);
    writeString(attr.getName().getValue());
    writeTopLevelAttr(attr.getValue());
  }
  writeInt(0);
}

void IRHasher::writeRegion(Region &region, OpVisitor visit) {
  // Each block introduced by 1, 0 ends the region.
  for (Block &block : region) {
    writeInt(1);
    writeInt(block.getNumArguments());
    for (BlockArgument arg : block.getArguments()) {
      writeType(arg.getType());
      writeDefinition(arg);
    }
    // Operation names are never empty: an empty string ends the block.
    for (Operation &op : block)
      writeOperation(op, visit);
    writeString("");
  }
  writeInt(0);
}

void IRHasher::writeOperation(Operation &op, OpVisitor visit) {
  writeString(op.getName().getStringRef());
  symbolRefs.clear();
  writeAttributes(op, /*skipRecord=*/false);
  visit(&op, symbolRefs);
  writeInt(op.getNumOperands());
  for (Value operand : op.getOperands())
    writeUse(operand);
  writeInt(op.getNumResults());
  for (OpResult result : op.getResults()) {
    writeType(result.getType());
    writeDefinition(result);
  }
  writeInt(op.getNumSuccessors());
  for (Block *successor : op.getSuccessors())
    writeInt(getBlockNumber(successor));
  writeInt(op.getNumRegions());
  for (Region &region : op.getRegions())
    writeRegion(region, visit);
}

Digest IRHasher::hashFunction(Operation *fn, unsigned startLine,
                              OpVisitor visit) {
  buffer.clear();
  valueNumbers.clear();
  nextValueNumber = 0;
  blockNumbers.clear();

  // The function op itself: name, start line, attributes (signature,
  // parameter names and attributes, noinline, ...) but not a persisted
  // record, which describes the content rather than being part of it. Its
  // locations, like every other, are left out.
  writeString("kjit-function-v2");
  writeString(fn->getName().getStringRef());
  writeInt(startLine);
  symbolRefs.clear();
  writeAttributes(*fn, /*skipRecord=*/true);
  visit(fn, symbolRefs);
  writeInt(fn->getNumRegions());
  for (Region &region : fn->getRegions())
    writeRegion(region, visit);

  // BLAKE3 rather than SHA-256 for the bulk of the bytes: LLVM's portable
  // SHA-256 costs several times more per byte, and this encoding is most of
  // what an analysis hashes (docs/Dependencies.md, "Figures").
  llvm::BLAKE3 blake3;
  blake3.update(buffer);
  return blake3.final();
}

struct GlobalRead {
  SymbolRefAttr name;
  TypedAttr value;
};

/// Per-function state of the walk. Held in a deque so references stay valid
/// while the map grows.
struct FunctionState {
  Operation *fn = nullptr;
  unsigned index = 0, lowlink = 0;
  bool visited = false, onStack = false, finished = false, failed = false;
  /// Whether calls to the function must stay calls (isNoinline).
  bool noinline = false;
  /// BLAKE3 of the function's own IR encoding.
  Digest ownDigest{};
  /// The raw content hash (record.contentHash is its hex form).
  Digest contentDigest{};
  /// Distinct callees in the order their first call appears.
  SmallVector<Operation *> callees;
  /// Globals read in this function's own body.
  SmallVector<GlobalRead> reads;
  DependencyRecord record;
};

} // namespace

struct DependencyAnalysis::Impl {
  explicit Impl(Operation *root) : root(root) {}

  FailureOr<const DependencyRecord *> getRecord(FunctionOpInterface fn);

  FunctionState &getState(Operation *fn);
  void hashOwnContent(FunctionState &state);
  SymbolRefAttr getGlobalPath(kjit::GlobalOp global);
  SymbolRefAttr computeGlobalPath(kjit::GlobalOp global);
  LogicalResult finishComponent(ArrayRef<FunctionState *> members);
  /// Whether `globals` names each global the component's members and their
  /// callees outside it read, once, and nothing else.
  bool namesReadGlobals(ArrayRef<FunctionState *> members,
                        ArrayRef<GlobalUse> globals);
  LogicalResult mergeGlobals(ArrayRef<FunctionState *> members,
                             SmallVectorImpl<GlobalUse> &merged);

  Operation *root;
  SymbolTableCollection symbolTables;
  std::deque<FunctionState> storage;
  llvm::DenseMap<Operation *, FunctionState *> states;
  unsigned nextIndex = 0;
  unsigned numHashed = 0;
  /// The IR encoder, with its memo of printed types and attributes; made on
  /// first use.
  std::unique_ptr<IRHasher> hasher;
  /// Path from the root of each global read so far.
  llvm::DenseMap<Operation *, SymbolRefAttr> globalPaths;
  /// Scratch maps of mergeGlobals.
  llvm::DenseMap<Attribute, TypedAttr> globalValues;
  llvm::DenseMap<Attribute, Operation *> globalSources;
};

FunctionState &DependencyAnalysis::Impl::getState(Operation *fn) {
  FunctionState *&slot = states[fn];
  if (!slot) {
    slot = &storage.emplace_back();
    slot->fn = fn;
  }
  return *slot;
}

SymbolRefAttr DependencyAnalysis::Impl::getGlobalPath(kjit::GlobalOp global) {
  SymbolRefAttr &memo = globalPaths[global];
  if (!memo)
    memo = computeGlobalPath(global);
  return memo;
}

SymbolRefAttr
DependencyAnalysis::Impl::computeGlobalPath(kjit::GlobalOp global) {
  // The owning module, named by its path from the root, is part of a
  // global's identity: two modules may each have their own @SCALE.
  SmallVector<FlatSymbolRefAttr> path;
  path.push_back(FlatSymbolRefAttr::get(global.getSymNameAttr()));
  for (Operation *table = global->getParentOp(); table && table != root;
       table = table->getParentOp()) {
    auto name =
        table->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
    path.push_back(FlatSymbolRefAttr::get(
        name ? name : StringAttr::get(global.getContext(), "")));
  }
  std::reverse(path.begin(), path.end());
  return SymbolRefAttr::get(path.front().getAttr(),
                            ArrayRef(path).drop_front());
}

void DependencyAnalysis::Impl::hashOwnContent(FunctionState &state) {
  Operation *fn = state.fn;
  ++numHashed;
  state.noinline = isNoinline(fn);
  if (!hasher)
    hasher = std::make_unique<IRHasher>(fn->getContext());

  // One walk hashes the IR and finds the callees (distinct, in first-call
  // order; also functions referenced as values) and the globals this body
  // reads: any symbol reference among the attributes of any op that
  // resolves to a kjit.global.
  llvm::SmallPtrSet<Operation *, 8> seen;
  auto visit = [&](Operation *op, ArrayRef<SymbolRefAttr> refs) {
    // A call's callee resolves to a function, never a global: it is not
    // looked up twice.
    SymbolRefAttr calleeRef;
    if (auto call = dyn_cast<CallOpInterface>(op)) {
      calleeRef =
          llvm::dyn_cast_if_present<SymbolRefAttr>(call.getCallableForCallee());
      Operation *callee = call.resolveCallableInTable(&symbolTables);
      if (callee && isa<FunctionOpInterface>(callee) &&
          seen.insert(callee).second)
        state.callees.push_back(callee);
    }
    for (SymbolRefAttr ref : refs) {
      if (ref == calleeRef)
        continue;
      Operation *target = symbolTables.lookupNearestSymbolFrom(op, ref);
      if (auto global = dyn_cast_or_null<kjit::GlobalOp>(target)) {
        state.reads.push_back({getGlobalPath(global), global.getValue()});
        continue;
      }
      // A function named as a value (func.constant, a symbol operand or
      // attribute) may be called through it: it is a dependency like a
      // callee, so its body and its globals join the key.
      if (target && target != fn && isa<FunctionOpInterface>(target) &&
          seen.insert(target).second)
        state.callees.push_back(target);
    }
  };
  state.ownDigest = hasher->hashFunction(fn, getStartLine(fn), visit);
}

std::optional<DependencyRecord>
DependencyAnalysis::readPersisted(Operation *fn) {
  auto content =
      fn->getAttrOfType<StringAttr>(DependencyAnalysis::kContentHashAttrName);
  auto key = fn->getAttrOfType<StringAttr>(DependencyAnalysis::kKeyAttrName);
  auto globals =
      fn->getAttrOfType<ArrayAttr>(DependencyAnalysis::kUsedGlobalsAttrName);
  if (!content || !key || !globals)
    return std::nullopt;
  DependencyRecord record;
  record.contentHash = content.getValue().str();
  record.key = key.getValue().str();
  for (Attribute entry : globals) {
    auto dict = dyn_cast<DictionaryAttr>(entry);
    auto name = dict ? dict.getAs<SymbolRefAttr>("name") : SymbolRefAttr();
    auto value = dict ? dict.getAs<TypedAttr>("value") : TypedAttr();
    if (!name || !value)
      return std::nullopt;
    record.globals.push_back({name, value});
  }
  return record;
}

std::string kjit::getGlobalPathName(SymbolRefAttr name) {
  std::string path;
  rt::appendGlobalPathPart(path, name.getRootReference().getValue());
  for (FlatSymbolRefAttr nested : name.getNestedReferences())
    rt::appendGlobalPathPart(path, nested.getValue());
  return path;
}

static std::string printAttr(Attribute attr) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << attr;
  return text;
}

LogicalResult
DependencyAnalysis::Impl::mergeGlobals(ArrayRef<FunctionState *> members,
                                       SmallVectorImpl<GlobalUse> &merged) {
  // Values this component reads itself, with the current module's values.
  // The maps are the analysis's, cleared rather than rebuilt per component;
  // `merged` is sorted below, so their order never shows.
  llvm::DenseMap<Attribute, TypedAttr> &values = globalValues;
  llvm::DenseMap<Attribute, Operation *> &source = globalSources;
  values.clear();
  source.clear(); // nullptr: read directly
  for (FunctionState *member : members)
    for (const GlobalRead &read : member->reads)
      if (values.try_emplace(read.name, read.value).second)
        source[read.name] = nullptr;

  // Values recorded by callees outside the component, possibly from an
  // earlier analysis.
  for (FunctionState *member : members) {
    for (Operation *callee : member->callees) {
      FunctionState &calleeState = *states.lookup(callee);
      if (llvm::is_contained(members, &calleeState))
        continue;
      for (const GlobalUse &use : calleeState.record.globals) {
        auto [it, inserted] = values.try_emplace(use.name, use.value);
        if (inserted) {
          source[use.name] = callee;
          continue;
        }
        if (it->second == use.value)
          continue;
        auto calleeName = cast<SymbolOpInterface>(callee).getNameAttr();
        Operation *other = source.lookup(use.name);
        InFlightDiagnostic diag =
            member->fn->emitError()
            << "global " << use.name << " has value " << printAttr(it->second)
            << " when analysing '@"
            << cast<SymbolOpInterface>(member->fn).getName()
            << (other
                    ? "' (through '@" +
                          cast<SymbolOpInterface>(other).getName().str() + "')"
                    : std::string("'"))
            << ", but its callee '@" << calleeName.getValue()
            << "' was analysed with value " << printAttr(use.value)
            << "; a function's record keeps the values of its first "
               "analysis, so re-analyse '@"
            << calleeName.getValue() << "' or restore the value";
        diag.attachNote(callee->getLoc())
            << "callee '@" << calleeName.getValue() << "' is defined here";
        return failure();
      }
    }
  }
  for (auto &[name, value] : values)
    merged.push_back({cast<SymbolRefAttr>(name), value});
  llvm::sort(merged, [&](const GlobalUse &a, const GlobalUse &b) {
    return hasher->getAttrText(a.name) < hasher->getAttrText(b.name);
  });
  return success();
}

LogicalResult
DependencyAnalysis::Impl::finishComponent(ArrayRef<FunctionState *> members) {
  bool isCycle =
      members.size() > 1 ||
      llvm::is_contained(members.front()->callees, members.front()->fn);

  // Content hashes. Outside cycles: own content, then each callee's content
  // hash and noinline flag in call order. In a cycle every member also hashes
  // a digest of the whole component, members taken in symbol order, so the
  // result does not depend on which member the walk entered first.
  // Digests are fixed-size and need no length prefix; so is the flag byte.
  auto addFlag = [](llvm::SHA256 &sha, const FunctionState &state) {
    sha.update(ArrayRef<uint8_t>(state.noinline ? 'n' : 'i'));
  };
  auto addCallee = [&](llvm::SHA256 &sha, Operation *callee) {
    const FunctionState &calleeState = *states.lookup(callee);
    sha.update(calleeState.contentDigest);
    addFlag(sha, calleeState);
  };
  if (!isCycle) {
    FunctionState &state = *members.front();
    llvm::SHA256 sha;
    hashField(sha, "kjit-content-v2");
    sha.update(state.ownDigest);
    for (Operation *callee : state.callees)
      addCallee(sha, callee);
    state.contentDigest = sha.final();
    state.record.contentHash = toHex(state.contentDigest);
  } else {
    SmallVector<FunctionState *> sorted(members);
    llvm::sort(sorted, [](FunctionState *a, FunctionState *b) {
      return cast<SymbolOpInterface>(a->fn).getName() <
             cast<SymbolOpInterface>(b->fn).getName();
    });
    llvm::SHA256 componentSha;
    hashField(componentSha, "kjit-cycle-v2");
    for (FunctionState *member : sorted) {
      hashField(componentSha, cast<SymbolOpInterface>(member->fn).getName());
      componentSha.update(member->ownDigest);
      addFlag(componentSha, *member);
    }
    for (FunctionState *member : sorted)
      for (Operation *callee : member->callees)
        if (!llvm::is_contained(members, states.lookup(callee)))
          addCallee(componentSha, callee);
    Digest component = componentSha.final();
    for (FunctionState *member : members) {
      llvm::SHA256 sha;
      hashField(sha, "kjit-content-v2");
      sha.update(member->ownDigest);
      sha.update(component);
      member->contentDigest = sha.final();
      member->record.contentHash = toHex(member->contentDigest);
    }
  }

  // Global snapshots and keys. A record persisted by an earlier analysis of
  // the same content is reused with its values (those of the first
  // analysis), but only if it is one that analysis could have written: the
  // globals it names are exactly those the function and its callees read,
  // and its key is the key of its content and values. Anything else (an
  // edited or truncated record) is recomputed, never trusted.
  auto keyOf = [&](const Digest &content, ArrayRef<GlobalUse> globals) {
    llvm::SHA256 sha;
    hashField(sha, "kjit-key-v2");
    sha.update(content);
    for (const GlobalUse &use : globals) {
      hashField(sha, hasher->getAttrText(use.name));
      hashField(sha, hasher->getAttrText(use.value));
    }
    return toHex(sha.final());
  };
  for (FunctionState *member : members) {
    if (std::optional<DependencyRecord> persisted = readPersisted(member->fn);
        persisted && persisted->contentHash == member->record.contentHash &&
        namesReadGlobals(members, persisted->globals) &&
        persisted->key == keyOf(member->contentDigest, persisted->globals)) {
      member->record = std::move(*persisted);
      continue;
    }
    member->record.globals.clear();
    if (failed(mergeGlobals(members, member->record.globals)))
      return failure();
    member->record.key = keyOf(member->contentDigest, member->record.globals);
  }
  return success();
}

bool DependencyAnalysis::Impl::namesReadGlobals(
    ArrayRef<FunctionState *> members, ArrayRef<GlobalUse> globals) {
  llvm::DenseSet<Attribute> read;
  for (FunctionState *member : members) {
    for (const GlobalRead &r : member->reads)
      read.insert(r.name);
    for (Operation *callee : member->callees) {
      FunctionState &calleeState = *states.lookup(callee);
      if (!llvm::is_contained(members, &calleeState))
        for (const GlobalUse &use : calleeState.record.globals)
          read.insert(use.name);
    }
  }
  llvm::DenseSet<Attribute> named;
  for (const GlobalUse &use : globals)
    if (!read.contains(use.name) || !named.insert(use.name).second)
      return false; // not read, or named twice
  return named.size() == read.size();
}

FailureOr<const DependencyRecord *>
DependencyAnalysis::Impl::getRecord(FunctionOpInterface fn) {
  FunctionState &start = getState(fn);
  if (start.failed)
    return failure();
  if (start.finished)
    return &start.record;

  // Iterative Tarjan: long call chains must not exhaust the stack.
  struct Frame {
    FunctionState *state;
    unsigned nextCallee;
  };
  SmallVector<Frame> frames;
  SmallVector<FunctionState *> componentStack;
  auto enter = [&](FunctionState &state) {
    state.visited = true;
    state.index = state.lowlink = nextIndex++;
    state.onStack = true;
    componentStack.push_back(&state);
    hashOwnContent(state);
    frames.push_back({&state, 0});
  };
  enter(start);
  while (!frames.empty()) {
    Frame &frame = frames.back();
    FunctionState &state = *frame.state;
    if (frame.nextCallee < state.callees.size()) {
      FunctionState &callee = getState(state.callees[frame.nextCallee++]);
      if (callee.failed) {
        state.failed = true;
        continue;
      }
      if (callee.finished)
        continue;
      if (!callee.visited) {
        enter(callee);
        continue;
      }
      if (callee.onStack)
        state.lowlink = std::min(state.lowlink, callee.index);
      continue;
    }
    frames.pop_back();
    if (!frames.empty())
      frames.back().state->lowlink =
          std::min(frames.back().state->lowlink, state.lowlink);
    if (state.lowlink != state.index)
      continue;
    SmallVector<FunctionState *> members;
    FunctionState *member;
    do {
      member = componentStack.pop_back_val();
      member->onStack = false;
      members.push_back(member);
    } while (member != &state);
    bool calleeFailed =
        llvm::any_of(members, [](FunctionState *m) { return m->failed; });
    if (calleeFailed || failed(finishComponent(members))) {
      for (FunctionState *m : members)
        m->failed = true;
      for (Frame &f : frames)
        f.state->failed = true;
      continue;
    }
    for (FunctionState *m : members)
      m->finished = true;
  }
  if (start.failed)
    return failure();
  return &start.record;
}

//===----------------------------------------------------------------------===//
// DependencyAnalysis
//===----------------------------------------------------------------------===//

DependencyAnalysis::DependencyAnalysis(Operation *root)
    : impl(std::make_unique<Impl>(root)) {}

DependencyAnalysis::~DependencyAnalysis() = default;

FailureOr<const DependencyRecord *>
DependencyAnalysis::getRecord(FunctionOpInterface fn) {
  return impl->getRecord(fn);
}

FailureOr<std::vector<std::pair<std::string, std::string>>>
DependencyAnalysis::getSourceDigests(FunctionOpInterface fn) {
  if (failed(getRecord(fn)))
    return failure();
  // getRecord walked the closure: every state below is hashed.
  std::vector<std::pair<std::string, std::string>> digests;
  llvm::SmallPtrSet<Operation *, 16> seen;
  SmallVector<Operation *> work = {fn};
  seen.insert(fn);
  while (!work.empty()) {
    FunctionState &state = impl->getState(work.pop_back_val());
    digests.emplace_back(SymbolTable::getSymbolName(state.fn).getValue().str(),
                         toHex(state.ownDigest));
    for (Operation *callee : state.callees)
      if (seen.insert(callee).second)
        work.push_back(callee);
  }
  llvm::sort(digests);
  return digests;
}

FailureOr<DependencyAnalysis::FunctionRecords>
DependencyAnalysis::getAllRecords() {
  FunctionRecords records;
  bool ok = true;
  impl->root->walk([&](FunctionOpInterface fn) {
    FailureOr<const DependencyRecord *> record = getRecord(fn);
    if (failed(record))
      ok = false;
    else
      records.push_back({fn, *record});
  });
  if (!ok)
    return failure();
  return records;
}

unsigned DependencyAnalysis::getNumFunctionsHashed() const {
  return impl->numHashed;
}

void DependencyAnalysis::persist(FunctionOpInterface fn,
                                 const DependencyRecord &record) {
  MLIRContext *context = fn.getContext();
  Builder builder(context);
  SmallVector<Attribute> globals;
  for (const GlobalUse &use : record.globals)
    globals.push_back(
        builder.getDictionaryAttr({builder.getNamedAttr("name", use.name),
                                   builder.getNamedAttr("value", use.value)}));
  fn->setAttr(kContentHashAttrName, builder.getStringAttr(record.contentHash));
  fn->setAttr(kKeyAttrName, builder.getStringAttr(record.key));
  fn->setAttr(kUsedGlobalsAttrName, builder.getArrayAttr(globals));
}

void DependencyAnalysis::forget(FunctionOpInterface fn) {
  fn->removeAttr(kContentHashAttrName);
  fn->removeAttr(kKeyAttrName);
  fn->removeAttr(kUsedGlobalsAttrName);
}

SmallVector<GlobalChange>
DependencyAnalysis::findChangedGlobals(Operation *root,
                                       const DependencyRecord &record) {
  SmallVector<GlobalChange> changes;
  SymbolTableCollection symbolTables;
  for (const GlobalUse &use : record.globals) {
    auto global = dyn_cast_or_null<kjit::GlobalOp>(
        symbolTables.lookupSymbolIn(root, use.name));
    TypedAttr current = global ? global.getValue() : TypedAttr();
    if (current != use.value)
      changes.push_back({use.name, use.value, current});
  }
  return changes;
}
