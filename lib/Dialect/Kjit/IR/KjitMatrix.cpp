//===- KjitMatrix.cpp - the matrix-unit types and operations --------------===//
//
// !kjit.tensor_desc and !kjit.tile (their `<RxCxT>` syntax and rules) and the
// verifiers of kjit.tensor_desc, kjit.tile_load, kjit.mma, kjit.mma_coords
// and kjit.mma_store. docs/MatrixUnits.md explains the model: tiles live in
// workgroup memory, a warpgroup multiplies them into per-thread fragments.
//
//===----------------------------------------------------------------------===//

#include "kjit/Dialect/Kjit/IR/Kjit.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace kjit;

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

/// The largest tile dimension: what one hardware tensor copy reads (a TMA
/// box dimension) and the widest N of one warpgroup MMA.
static constexpr int64_t kMaxTileDim = 256;

/// The rules both matrix types share: two dimensions of 1 to 256, a 16-bit
/// float element, rows a whole number of 16-byte chunks (what vector and
/// tensor copies move).
static LogicalResult
verifyMatrixBlock(function_ref<InFlightDiagnostic()> emitError,
                  StringRef mnemonic, ArrayRef<int64_t> shape,
                  Type elementType) {
  if (shape.size() != 2)
    return emitError() << "'!kjit." << mnemonic << "' has " << shape.size()
                       << " dimensions; it takes two (rows x columns)";
  for (int64_t dim : shape)
    if (dim < 1 || dim > kMaxTileDim)
      return emitError() << "'!kjit." << mnemonic << "' dimension " << dim
                         << " is outside 1 to " << kMaxTileDim;
  if (!elementType.isBF16() && !elementType.isF16())
    return emitError() << "'!kjit." << mnemonic << "' element type is "
                       << elementType << "; the matrix units take bf16 or f16";
  if (shape[1] * 2 % 16 != 0)
    return emitError() << "'!kjit." << mnemonic << "' rows of " << shape[1]
                       << " elements are " << shape[1] * 2
                       << " bytes, not a multiple of 16";
  return success();
}

/// `<` RxC `x` T `>`.
template <typename BlockType> static Type parseMatrixBlock(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
      parser.parseType(elementType) || parser.parseGreater())
    return {};
  return BlockType::getChecked([&] { return parser.emitError(loc); },
                               parser.getContext(), ArrayRef<int64_t>(shape),
                               elementType);
}

static void printMatrixBlock(AsmPrinter &printer, ArrayRef<int64_t> shape,
                             Type elementType) {
  printer << '<';
  for (int64_t dim : shape)
    printer << dim << 'x';
  printer << elementType << '>';
}

Type TensorDescType::parse(AsmParser &parser) {
  return parseMatrixBlock<TensorDescType>(parser);
}
void TensorDescType::print(AsmPrinter &printer) const {
  printMatrixBlock(printer, getShape(), getElementType());
}
LogicalResult
TensorDescType::verify(function_ref<InFlightDiagnostic()> emitError,
                       ArrayRef<int64_t> shape, Type elementType) {
  return verifyMatrixBlock(emitError, "tensor_desc", shape, elementType);
}

Type TileType::parse(AsmParser &parser) {
  return parseMatrixBlock<TileType>(parser);
}
void TileType::print(AsmPrinter &printer) const {
  printMatrixBlock(printer, getShape(), getElementType());
}
LogicalResult TileType::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape, Type elementType) {
  return verifyMatrixBlock(emitError, "tile", shape, elementType);
}

//===----------------------------------------------------------------------===//
// Operations
//===----------------------------------------------------------------------===//

/// Whether `value` is known before the launch: a parameter of the kernel
/// that holds `op`, or a constant.
static bool isLaunchValue(Operation *op, Value value) {
  if (matchPattern(value, m_Constant()))
    return true;
  auto param = dyn_cast<BlockArgument>(value);
  auto kernel = op->getParentOfType<KernelOp>();
  return param && kernel && param.getOwner() == &kernel.getBody().front();
}

LogicalResult TensorDescOp::verify() {
  auto pointer = getBase().getType();
  TensorDescType desc = getType();
  if (pointer.getElementType() != desc.getElementType())
    return emitOpError() << "describes " << desc.getElementType()
                         << " tiles of a " << pointer << " tensor";
  if (getShape().size() != 2 || getStrides().size() != 2)
    return emitOpError() << "takes two sizes and two strides (a matrix), got "
                         << getShape().size() << " and " << getStrides().size();
  if (!matchPattern(getStrides()[1], m_One()))
    return emitOpError() << "innermost stride is not the constant 1: tiles "
                            "are read from row-major matrices";
  for (auto [role, operands] :
       {std::pair{"shape", getShape()}, std::pair{"stride", getStrides()}})
    for (auto [index, operand] : llvm::enumerate(operands))
      if (!isLaunchValue(*this, operand))
        return emitOpError()
               << role << " operand " << index
               << " is not a kernel parameter or a constant: a target may "
                  "build the descriptor before the launch";
  return success();
}

LogicalResult TileLoadOp::verify() {
  TensorDescType desc = getDesc().getType();
  TileType tile = getType();
  if (desc.getShape() != tile.getShape() ||
      desc.getElementType() != tile.getElementType())
    return emitOpError() << "loads " << tile << " through " << desc
                         << "; the tile is the descriptor's";
  if (getCoords().size() != desc.getShape().size())
    return emitOpError() << "takes " << desc.getShape().size()
                         << " coordinates, got " << getCoords().size();
  for (Operation *user : getResult().getUsers())
    if (!isa<MmaOp>(user) || user->getBlock() != (*this)->getBlock())
      return emitOpError()
             << "tile is used by '" << user->getName()
             << "'; a tile feeds only kjit.mma operations of the block "
                "that loaded it";
  return success();
}

/// The accumulator fragment of a 64 x `n` block: n / 2 f32 per thread.
static VectorType fragmentType(MLIRContext *context, int64_t n) {
  return VectorType::get({n / 2}, Float32Type::get(context));
}

LogicalResult MmaOp::verify() {
  TileType a = getA().getType(), b = getB().getType();
  if (a.getElementType() != b.getElementType())
    return emitOpError() << "A tile is " << a.getElementType()
                         << " but B tile is " << b.getElementType();
  if (a.getColumns() != b.getRows())
    return emitOpError() << "A tile is " << a.getRows() << "x" << a.getColumns()
                         << " but B tile is " << b.getRows() << "x"
                         << b.getColumns() << ": K " << a.getColumns()
                         << " and " << b.getRows() << " differ";
  if (a.getColumns() % 16 != 0)
    return emitOpError() << "K = " << a.getColumns()
                         << " is not a multiple of 16 (one MMA step)";
  if (a.getRows() % 64 != 0)
    return emitOpError() << "A tile has " << a.getRows()
                         << " rows; a warpgroup multiplies 64-row slices, so "
                            "they are a multiple of 64";
  VectorType expected = fragmentType(getContext(), b.getColumns());
  if (getAcc().getType() != expected)
    return emitOpError() << "a 64x" << b.getColumns()
                         << " block gives each thread " << expected << ", got "
                         << getAcc().getType();
  return success();
}

/// N of a 64 x N block: a multiple of 8 from 8 to 256 (one warpgroup MMA).
static LogicalResult verifyBlockWidth(Operation *op, int64_t n) {
  if (n < 8 || n > kMaxTileDim || n % 8 != 0)
    return op->emitOpError() << "N = " << n << " is not a multiple of 8 in [8, "
                             << kMaxTileDim << "]";
  return success();
}

LogicalResult MmaCoordsOp::verify() {
  if (failed(verifyBlockWidth(*this, getN())))
    return failure();
  int64_t expected = getN() / 2;
  if (getRows().getType().getNumElements() != expected)
    return emitOpError() << "a 64x" << getN() << " block gives each thread "
                         << expected << " elements, got "
                         << getRows().getType();
  return success();
}

LogicalResult MmaStoreOp::verify() {
  Type element = getBase().getType().getElementType();
  if (!element.isBF16() && !element.isF16() && !element.isF32())
    return emitOpError() << "stores to " << getBase().getType()
                         << "; fragments are stored as bf16, f16 or f32";
  return verifyBlockWidth(*this, getAcc().getType().getNumElements() * 2);
}
