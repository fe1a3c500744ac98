//===- KjitTypes.td - kjit types ---------------------------*- tablegen -*-===//
//
// !kjit.ptr<T>: a pointer to global memory holding elements of type T.
// !kjit.any:    a kernel parameter whose concrete type comes from the value
//               bound at launch (resolved by specialization).
// !kjit.tensor_desc<RxCxT>, !kjit.tile<RxCxT>: the matrix-unit types
//               (docs/MatrixUnits.md).
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_DIALECT_KJIT_IR_KJITTYPES_TD
#define KJIT_DIALECT_KJIT_IR_KJITTYPES_TD

include "kjit/Dialect/Kjit/IR/KjitDialect.td"

def Kjit_PointerType : Kjit_Type<"Pointer", "ptr"> {
  let summary = "pointer to global memory";
  let description = [{
    A pointer into device global memory whose elements have a scalar type:
    a signless integer (i1, i8 ... i64), an unsigned integer (ui8 ... ui64)
    or a float (f16, bf16, f32, f64, and the fp8 formats). Signedness is part
    of the pointer's dtype (what a tensor must match at launch), not of the
    values: loads and stores through `!kjit.ptr<ui8>` carry `i8`.

    ```mlir
    !kjit.ptr<f32>
    ```
  }];
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Size of one element in bytes (i1 is stored as one byte).
    unsigned getElementByteWidth() const;
  }];
}

def Kjit_AnyValueType : Kjit_Type<"AnyValue", "any"> {
  let summary = "a parameter typed by the value bound at launch";
  let description = [{
    The type of an unannotated kernel parameter. Its concrete type (an
    integer, a float, a pointer) comes from the runtime value, and the body
    reads it only through `kjit.cast`, which specialization resolves or
    rejects.
  }];
}

// A rows x columns block of 16-bit floats, the shape both matrix types carry:
// printed as `<128x64xbf16>`.
class Kjit_MatrixBlockType<string name, string typeMnemonic>
    : Kjit_Type<name, typeMnemonic> {
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRows() const { return getShape()[0]; }
    int64_t getColumns() const { return getShape()[1]; }
  }];
}

def Kjit_TensorDescType : Kjit_MatrixBlockType<"TensorDesc", "tensor_desc"> {
  let summary = "a row-major matrix in global memory and the tile a load reads";
  let description = [{
    Made by `kjit.tensor_desc` from a pointer, a shape and strides; the type
    holds the tile (box) that each `kjit.tile_load` through it fetches: its
    rows and columns (1 to 256 each, a row a multiple of 16 bytes) and the
    element type, `bf16` or `f16`.

    ```mlir
    !kjit.tensor_desc<128x64xbf16>
    ```
  }];
}

def Kjit_TileType : Kjit_MatrixBlockType<"Tile", "tile"> {
  let summary = "a tile of a matrix in the program's workgroup memory";
  let description = [{
    What `kjit.tile_load` produces and `kjit.mma` reads. Its layout in
    workgroup memory belongs to the target; no operation but `kjit.mma`
    reads its elements.

    ```mlir
    !kjit.tile<64x256xbf16>
    ```
  }];
}

// The scalars the runtime binds and carries (64 bits at most): i1, i8, i16,
// i32, i64, f16, bf16, f32, f64.
def Kjit_ScalarType : AnyTypeOf<[I1, I8, I16, I32, I64, F16, BF16, F32, F64],
                                "i1, i8, i16, i32, i64, f16, bf16, f32 or f64">;
def Kjit_ParamValueType : AnyTypeOf<[Kjit_ScalarType, Kjit_PointerType],
                                    "scalar or kjit pointer">;
def Kjit_Offset : AnyTypeOf<[AnySignlessInteger, Index],
                            "signless integer or index">;

#endif // KJIT_DIALECT_KJIT_IR_KJITTYPES_TD
