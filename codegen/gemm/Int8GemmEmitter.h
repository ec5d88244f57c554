// The int8 GEMM generator: QLinearConv (implicit GEMM over an im2col of u8/i8 data) and
// QLinearMatMul with integer inner products (AVX512-VNNI vpdpbusd, or vpmaddwd on operands
// widened to i16), int32 sums, and the interpreter's requantization in double in the store.
#pragma once

#include "codegen/kernel/Kernel.h"
#include "core/Error.h"

#include <string>

namespace llvm {
class Function;
class Module;
} // namespace llvm

namespace fb::cg {

/// What the code's target offers the int8 generator.
struct Int8Target {
  bool vnni = false;        ///< vpdpbusd on 256-bit vectors (avx512vnni + avx512vl, or avxvnni)
  bool vnni512 = false;     ///< vpdpbusd on 512-bit vectors (avx512vnni)
  bool vbmi = false;        ///< vpermb on 512-bit vectors (avx512vbmi)
  bool avx2 = false;        ///< vpmaddwd on 256-bit vectors (the generator's baseline)
  int vectorRegisters = 16; ///< 32 with AVX-512VL
};

/// Packs the constant operand of an int8 kernel (Kernel::int8) for `target` and appends the
/// arguments the generated code reads: `<kernel>.packedW` (the weights minus their zero points
/// in micro-panels: rows × K of a conv, K × columns of a matmul, four bytes per lane and k-step:
/// four s8 for VNNI, two i16 otherwise), `<kernel>.correction` (per channel int32: the bias, and
/// for VNNI minus the activation zero point times the channel's weight sum), `<kernel>.multiplier`
/// (per channel doubles, as I64 bits) and the Scratch `<kernel>.packedAct` for the activation's
/// panels. VNNI is used when the target has it and every weight minus its zero point fits s8;
/// else the i16 form, which is exact for any u8/i8 operands. An error (the kernel cannot be
/// compiled: the target lacks AVX2) leaves the kernel unchanged. A second call does nothing.
Status packInt8Operands(Kernel& kernel, const Int8Target& target);

/// Emits `kernel.name` (the FbKernelFn ABI) and its helpers `<name>.pack`, `.items`, `.ukernel`
/// into `module`: a parallel phase that packs the activation (the im2col of a conv, the rows
/// of a matmul) into `<kernel>.packedAct`, then a parallel phase over (slice, column panel,
/// row chunk) items running the mr × nr micro-kernel over all of K and requantizing in its
/// store. packInt8Operands must have run.
Expected<llvm::Function*> emitInt8GemmKernel(llvm::Module& module, const Kernel& kernel);

/// "int8 vnni mr=8 nr=16, 12 items, weights packed at compile time, activation im2col": the
/// blocking of an int8 kernel, for `--emit loops` and the profiler.
std::string describeInt8Blocking(const Kernel& kernel);

} // namespace fb::cg
