// The GPU-only statements of the loop emitter: grid-stride loops over threads or blocks, the
// threads of a block, barriers and shared memory (nvptx64).
#include "codegen/llvm/LoopEmitter.h"

#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

namespace fb::cg::loopemit {

namespace {

/// NVPTX's address space of a block's shared memory.
constexpr unsigned kSharedAddressSpace = 3;
/// Shared memory a block may use without opting in to more (48 KiB on every sm_NN).
constexpr int64_t kMaxSharedBytes = 48 * 1024;

} // namespace

void Emitter::emitGridStride(const Stmt& s, const std::string& label) {
  auto sreg = [&](llvm::Intrinsic::ID id, const char* name) {
    llvm::Value* v = m_b.CreateIntrinsic(id, {}, {}, nullptr, name);
    return m_b.CreateZExt(v, m_b.getInt64Ty());
  };
  llvm::Value* first = nullptr;
  llvm::Value* step = nullptr;
  if (s.forKind == ForKind::GpuBlocks) {
    first = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, "ctaid.x");
    step = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x, "nctaid.x");
  } else {
    llvm::Value* tid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, "tid.x");
    llvm::Value* ntid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x, "ntid.x");
    llvm::Value* ctaid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, "ctaid.x");
    llvm::Value* nctaid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x, "nctaid.x");
    first = m_b.CreateAdd(m_b.CreateMul(ctaid, ntid, "", true, true), tid, s.var + ".thread", true,
                          true);
    step = m_b.CreateMul(nctaid, ntid, s.var + ".threads", true, true);
  }
  llvm::Value* lo = emitExpr(s.min);
  llvm::Value* hi = m_b.CreateAdd(lo, emitExpr(s.extent), s.var + ".end", false, true);
  llvm::Value* start = m_b.CreateAdd(lo, first, s.var + ".first", true, true);
  emitSerialLoop(s, label, nullptr, lo, hi, step, start);
}

void Emitter::emitBlockThreads(const Stmt& s) {
  int64_t lo = 0, extent = 0;
  if (!s.min->isIntConst(&lo) || !s.extent->isIntConst(&extent) || extent < 1 || extent > 1024)
    return fail("the threads of a block (loop " + s.var + ") need a constant count from 1 to 1024");
  llvm::Value* tid = m_b.CreateZExt(
      m_b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {}, nullptr, "tid.x"),
      m_b.getInt64Ty());
  Binding b;
  b.value = m_b.CreateAdd(tid, i64(lo), s.var, true, true);
  b.range = Range{lo, lo + extent - 1};
  auto saved =
      m_vars.find(s.var) != m_vars.end() ? std::optional<Binding>(m_vars[s.var]) : std::nullopt;
  m_vars[s.var] = b;
  emitStmt(s.body);
  if (saved)
    m_vars[s.var] = *saved;
  else
    m_vars.erase(s.var);
}

void Emitter::emitBarrier() {
  if (!m_options.gpu)
    return fail("a barrier, which only GPU code has");
  m_b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
}

void Emitter::emitSharedAlloc(const Stmt& s) {
  const Buffer& buf = *s.buffer;
  if (!m_options.gpu)
    return fail("shared buffer " + buf.name + ", which only GPU code has");
  const int64_t count = std::max<int64_t>(buf.numElements(), 1);
  const int64_t bytes = count * int64_t(dtypeSize(buf.dtype));
  if (bytes > kMaxSharedBytes)
    return fail("shared buffer " + buf.name + " needs " + std::to_string(bytes) +
                " bytes, more than a block's " + std::to_string(kMaxSharedBytes));
  auto* arrayTy = llvm::ArrayType::get(memoryType(buf.dtype), uint64_t(count));
  auto* gv = new llvm::GlobalVariable(m_module, arrayTy, false, llvm::GlobalValue::InternalLinkage,
                                      llvm::UndefValue::get(arrayTy),
                                      m_kernel.name + "_" + llvmSafeName(buf.name), nullptr,
                                      llvm::GlobalValue::NotThreadLocal, kSharedAddressSpace);
  gv->setAlignment(llvm::Align(16));
  m_fs.locals[buf.name] = gv;
  m_fs.localLanes[buf.name] = 0;
  m_localElements[buf.name] = count;
  emitStmt(s.body);
  m_localElements.erase(buf.name);
  m_fs.localLanes.erase(buf.name);
  m_fs.locals.erase(buf.name);
}

} // namespace fb::cg::loopemit
