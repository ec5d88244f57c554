// Internal to the int8 generator (codegen/gemm/Int8GemmEmitter.h): the resolved plan of one
// int8 kernel and the emitter whose methods build its LLVM IR, split between
// Int8GemmEmitter.cpp (packing, micro-kernel, items) and Int8DepthwiseEmitter.cpp.
#pragma once

#include "codegen/gemm/GemmIrBuilder.h"
#include "codegen/gemm/Int8GemmEmitter.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <string>
#include <vector>

namespace fb::cg::int8ir {

// This namespace is the generator's own: LLVM's names unqualified, as in its .cpp files.
using namespace llvm;
// fb::Value (a graph value) would otherwise shadow llvm::Value here.
using gemmir::emitFor;
using gemmir::loadArg;
using llvm::Value;

constexpr int64_t kLaneBytes = 4; // bytes per lane and k-step in both forms

/// The resolved structure of one int8 GEMM kernel.
struct Int8Plan {
  int64_t group = 4; ///< k values per lane and step
  int64_t elemBytes = 1;
  int64_t kSteps = 0; ///< ceil(K / group)
  int64_t rowPanels = 0, colPanels = 0;
  int64_t rowChunk = 1; ///< row panels per compute item
  int64_t chunks = 1;   ///< ceil(rowPanels / rowChunk)
  int64_t packItems() const { return packPerSlice * slices; }
  int64_t computeItems() const { return slices * colPanels * chunks; }
  int64_t packPerSlice = 0, slices = 1;
};

/// The plan of a packed int8 GEMM kernel (not a depthwise one).
inline Int8Plan planInt8(const Int8GemmSpec& s) {
  Int8Plan p;
  p.group = *s.isa == Int8Isa::Vnni ? 4 : 2;
  p.elemBytes = kLaneBytes / p.group;
  p.kSteps = (s.K + p.group - 1) / p.group;
  p.rowPanels = (s.M + s.mr - 1) / s.mr;
  p.colPanels = (s.N + s.nr - 1) / s.nr;
  p.slices = s.slices();
  // Enough items for two threads to balance (about 16), each reusing its column panel over
  // as many row panels as that allows.
  const int64_t outer = p.slices * p.colPanels;
  const int64_t wanted = std::clamp<int64_t>((16 + outer - 1) / outer, 1, p.rowPanels);
  p.rowChunk = (p.rowPanels + wanted - 1) / wanted;
  p.chunks = (p.rowPanels + p.rowChunk - 1) / p.rowChunk;
  // Convolutions pack one column panel of one image and group per item; matmuls one row panel.
  p.packPerSlice = s.weightsAreRows() ? p.colPanels : p.rowPanels;
  if (!s.weightsAreRows())
    p.slices = 1;
  return p;
}

/// Builds the LLVM IR of one packed int8 kernel into a module: its entry function and the
/// internal helpers (`.pack`, `.ukernel`, `.items`, `.dw` and the workers).
struct Emitter {
  Emitter(Module& m, const Kernel& k)
      : module(m), ctx(m.getContext()), kernel(k), s(*k.int8), plan(planInt8(s)) {
    i8 = Type::getInt8Ty(ctx);
    i16 = Type::getInt16Ty(ctx);
    i32 = Type::getInt32Ty(ctx);
    i64 = Type::getInt64Ty(ctx);
    f64 = Type::getDoubleTy(ctx);
    ptr = PointerType::getUnqual(ctx);
    v8i32 = FixedVectorType::get(i32, 8);
    v16i16 = FixedVectorType::get(i16, 16);
    v8f64 = FixedVectorType::get(f64, 8);
    v8i8 = FixedVectorType::get(i8, 8);
  }

  Module& module;
  LLVMContext& ctx;
  const Kernel& kernel;
  const Int8GemmSpec& s;
  Int8Plan plan;
  Type *i8, *i16, *i32, *i64, *f64;
  PointerType* ptr;
  FixedVectorType *v8i32, *v16i16, *v8f64, *v8i8;

  Constant* c64(int64_t v) const { return ConstantInt::get(i64, uint64_t(v), /*signed=*/true); }
  bool vnni() const { return *s.isa == Int8Isa::Vnni; }

  Function* makeFunction(const std::string& suffix, Type* ret, ArrayRef<Type*> params,
                         bool internal) const {
    std::string name = suffix.empty() ? kernel.name : kernel.name + "." + suffix;
    Function* f = Function::Create(FunctionType::get(ret, params, /*isVarArg=*/false),
                                   internal ? Function::InternalLinkage : Function::ExternalLinkage,
                                   name, module);
    f->addFnAttr(Attribute::NoUnwind);
    return f;
  }

  Function* makeItems(const std::string& suffix) {
    Function* f = makeFunction(suffix, Type::getVoidTy(ctx), {ptr, i64, i64}, true);
    f->getArg(0)->setName("args");
    f->getArg(1)->setName("begin");
    f->getArg(2)->setName("end");
    return f;
  }

  Value* byteGep(IRBuilder<>& b, Value* base, Value* offset, const Twine& name = "") {
    return b.CreateInBoundsGEP(i8, base, offset, name);
  }

  /// The activation element `raw` (an i8 load) as the packed operand stores it: VNNI reads u8
  /// (i8 data biased by 128); the i16 form stores it minus the zero point. `inBounds` false
  /// gives what padding reads as (the zero point, i.e. 0 after the shift).
  Value* packedActValue(IRBuilder<>& b, Value* raw, Value* inBounds);
  Value* zeroElement() const { return vnni() ? ConstantInt::get(i8, 0) : ConstantInt::get(i16, 0); }
  void storeElement(IRBuilder<>& b, Value* v, Value* at) { b.CreateAlignedStore(v, at, Align(1)); }

  /// `<kernel>.pack` for a convolution: item = slice * colPanels + panel; the panel holds, per
  /// k-step, nr lanes (output pixels) of `group` consecutive k of the im2col.
  /// Output rows a panel of nr consecutive output pixels touches, at most.
  int64_t panelRows() const {
    const int64_t ow = s.conv->outW;
    return std::min<int64_t>(s.nr, (s.nr - 2 + ow) / ow + 1);
  }

  /// For conv pack item `item` (slice * colPanels + panel): its column panel (into `panel`)
  /// and the address of its image and group's first input channel.
  Value* convPackSource(IRBuilder<>& b, Value* x, Value* item, Value*& panel);

  /// `<kernel>.pack` for a convolution of stride 1 or 2 whose panels touch few output rows: per
  /// k-step, each of the `group` k values is one vector of nr lanes assembled from one masked
  /// load per output row the panel touches (consecutive output pixels of a row read
  /// consecutive input bytes, or every other byte of a twice as wide load; masked-off lanes
  /// read as the zero point), converted and
  /// interleaved into the panel's lane-major k-step in one store.
  Function* emitConvPackRows();

  Function* emitConvPack();

  /// The address of k's element in lane 0 of a panel with `lanes` lanes per k-step.
  Value* kStepBase(IRBuilder<>& b, Value* panel, Value* k, int64_t lanes);

  /// Zeroes the k values past K of the last k-step (their weights are zero too, but the
  /// products must be defined).
  void zeroKTail(IRBuilder<>& b, Value* panel, int64_t lanes);

  /// `<kernel>.pack` for a matmul: item = row panel of A (rows of all batches), mr lanes of
  /// `group` consecutive k per k-step.
  Function* emitMatMulPack();

  /// `<kernel>.ukernel(args, Rp, Cp, row0, col0, mValid, nValid, yOff, chanRow)`: the
  /// mr × nr tile at (row0, col0) of the slice whose output starts at yOff, over all k-steps
  /// of the row panel Rp and column panel Cp, requantized and stored (rows < mValid, columns
  /// < nValid). chanRow is the channel of row0 when channels are rows.
  Function* emitMicroKernel();

  /// <0, 1, ..., 7> as i64.
  Constant* laneIndices(int64_t step = 1, int64_t lanes = 8) const {
    std::vector<Constant*> idx;
    for (int64_t i = 0; i < lanes; ++i)
      idx.push_back(ConstantInt::get(i64, uint64_t(i * step)));
    return ConstantVector::get(idx);
  }

  /// Lanes [h, h + 8) of the vector v (v itself when it has 8).
  Value* lanes8(IRBuilder<>& b, Value* v, unsigned h) const {
    if (cast<FixedVectorType>(v->getType())->getNumElements() == 8)
      return v;
    std::vector<int> idx;
    for (unsigned l = 0; l < 8; ++l)
      idx.push_back(int(h + l));
    return b.CreateShuffleVector(v, idx);
  }
  /// The 16 lanes of two 8-lane vectors, lo first.
  Value* join8(IRBuilder<>& b, Value* lo, Value* hi) const {
    std::vector<int> idx;
    for (int l = 0; l < 16; ++l)
      idx.push_back(l);
    return b.CreateShuffleVector(lo, hi, idx);
  }

  /// Stores 8 or 16 int32 sums (the accumulators plus bias) at element `offset` of Y where
  /// `mask` holds: as they are for an int32 output, else requantized exactly as the interpreter
  /// does each element: double(sum) * multiplier (`mults`, one v8f64 per 8 lanes), rounded half
  /// to even, plus the output zero point, clamped to the output type.
  void storeSums(IRBuilder<>& b, Value* y, Value* offset, Value* sum, ArrayRef<Value*> mults,
                 Value* mask);

  /// The requantizing store of the tile's accumulators, exactly as the interpreter computes
  /// each element: double(acc + bias) * multiplier, rounded half to even, plus the output zero
  /// point, clamped to the output type.
  void emitStores(IRBuilder<>& b, Function* f, Value* args, const std::vector<Value*>& acc,
                  Value* row0, Value* col0, Value* mValid, Value* nValid, Value* yOff,
                  Value* chanRow);

  /// `<kernel>.items`: item = (slice, column panel, row chunk); the chunk's row panels run
  /// against the one column panel, which stays in cache.
  Function* emitItems(Function* ukernel);

  /// Runs `items` over [0, count): directly, or through fb_parallel_for with a worker that
  /// claims one item at a time from a shared counter.
  void runItems(IRBuilder<>& b, Value* args, Function* items, int64_t count,
                const std::string& suffix);

  /// `<kernel>.dw`: a depthwise convolution computed directly, item = image * C + channel:
  /// per output row, nr (16 with AVX-512, else 8) output columns at a time, the
  /// zero-point-shifted input times each shifted tap weight summed in int32 (exactly the
  /// interpreter's sum), then stored through storeSums. A plane that fits 64 KiB with its
  /// padding is first copied into a buffer filled with the zero point, so every vector loads
  /// its inputs at once (a strided shuffle for stride > 1) and the zero point's share, zp times
  /// the taps' sum, is taken from the plane's correction once; in larger planes, vectors whose
  /// taps all lie inside the row do so and edge vectors load the same bytes under a mask
  /// (padding reads as 0).
  /// Planes (image × channel) per work item of a depthwise kernel: about 32 items in all.
  int64_t depthwiseBlock() const { return std::max<int64_t>(1, s.batch * s.conv->inChannels / 32); }
  int64_t depthwiseItems() const { return depthwiseItemsOf(s); }
  static int64_t depthwiseItemsOf(const Int8GemmSpec& spec) {
    const int64_t planes = spec.batch * spec.conv->inChannels;
    const int64_t block = std::max<int64_t>(1, planes / 32);
    return (planes + block - 1) / block;
  }

  Function* emitDepthwiseItems();

  Function* emit();
};

} // namespace fb::cg::int8ir
