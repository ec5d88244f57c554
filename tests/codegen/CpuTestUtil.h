// Helpers shared by the CPU backend tests: compiling hand-built loop-IR kernels with the JIT.
#pragma once

#include "codegen/llvm/Jit.h"
#include "codegen/llvm/LoopToLlvm.h"
#include "codegen/loops/LoopIR.h"
#include "core/RandomInputs.h"

#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include <QtGlobal>

#include <memory>
#include <string>
#include <vector>

namespace fb::cg::test {


/// Compiles one loop-IR kernel at `level` and returns its entry point (kept alive by `jit`).
inline FbKernelFn compileKernel(const Kernel& k, int level, std::unique_ptr<Jit>& jit,
                         std::string* ir = nullptr) {
  JitOptions o;
  o.optLevel = level;
  o.useCache = false;
  auto j = Jit::create(o);
  if (!j.ok()) {
    qWarning("%s", j.error().message().c_str());
    return nullptr;
  }
  jit = std::move(*j);
  JitModule m = newJitModule(k.name);
  auto fn = emitLoopKernel(*m.module, k);
  if (!fn.ok()) {
    qWarning("%s", fn.error().message().c_str());
    return nullptr;
  }
  if (ir) {
    llvm::raw_string_ostream os(*ir);
    m.module->print(os, nullptr);
  }
  Status st = jit->addModule(std::move(m));
  if (!st.ok()) {
    qWarning("%s", st.error().message().c_str());
    return nullptr;
  }
  auto entry = jit->lookupKernel(k.name);
  return entry.ok() ? *entry : nullptr;
}

inline KernelArg arg(KernelArg::Role role, const std::string& name, std::vector<int64_t> sizes,
              DType dtype = DType::F32) {
  KernelArg a;
  a.role = role;
  a.name = name;
  a.dtype = dtype;
  a.sizes = std::move(sizes);
  return a;
}

inline std::vector<float> randomFloats(size_t n, uint64_t seed) {
  SeededRandom rng(seed);
  std::vector<float> v(n);
  for (float& x : v)
    x = float(rng.uniform() * 2 - 1);
  return v;
}

inline ExprPtr f(double v) { return floatImm(v); }
inline ExprPtr i(int64_t v) { return intImm(v); }
inline ExprPtr v(const char* name) { return var(name); }

} // namespace fb::cg::test
