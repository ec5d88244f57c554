// Pieces the GEMM and depthwise generators share: work-item functions and running them on the
// thread pool, the micro-kernel signature, and the fused store's arithmetic.
#include "codegen/gemm/GemmIrBuilder.h"
#include "codegen/ir/LoopMetadata.h"
#include "core/Faults.h"

#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

namespace fb::cg::gemmir {

using namespace llvm;
// fb::Value (a graph value) would otherwise shadow llvm::Value here.
using llvm::Value;

namespace {

/// `void <name>.<suffix>(ptr ctx, i64 begin, i64 end)`: an fb_parallel_for body. It ignores its
/// range and claims items of `items` from the shared counter in ctx = {ptr args, i64 next}
/// until all `count` are taken; the pool calls it at least once, so every item runs once.
Function* emitClaimingWorker(GemmIrContext& c, Function* items, int64_t count,
                             const std::string& suffix) {
  Function* f = c.makeFunction(suffix, Type::getVoidTy(c.ctx), {c.ptr, c.i64, c.i64}, true);
  f->getArg(0)->setName("ctx");
  StructType* ctxTy = StructType::get(c.ctx, {c.ptr, c.i64});
  BasicBlock* entry = BasicBlock::Create(c.ctx, "entry", f);
  BasicBlock* claim = BasicBlock::Create(c.ctx, "claim", f);
  BasicBlock* run = BasicBlock::Create(c.ctx, "run", f);
  BasicBlock* done = BasicBlock::Create(c.ctx, "done", f);
  IRBuilder<> b(entry);
  Value* args = b.CreateLoad(c.ptr, b.CreateStructGEP(ctxTy, f->getArg(0), 0), "args");
  Value* next = b.CreateStructGEP(ctxTy, f->getArg(0), 1, "next");
  b.CreateBr(claim);
  b.SetInsertPoint(claim);
  Value* item =
      b.CreateAtomicRMW(AtomicRMWInst::Add, next, c.c64(1), Align(8), AtomicOrdering::Monotonic);
  b.CreateCondBr(b.CreateICmpSLT(item, c.c64(count)), run, done);
  b.SetInsertPoint(run);
  b.CreateCall(items, {args, item, b.CreateAdd(item, c.c64(1))});
  b.CreateBr(claim);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  return f;
}

} // namespace

Function* emitRunItems(GemmIrContext& c, IRBuilder<>& b, Value* args, Function* items,
                       int64_t count, bool parallel, const std::string& suffix) {
  if (!parallel || count <= 1) {
    b.CreateCall(items, {args, c.c64(0), c.c64(count)});
    return nullptr;
  }
  FunctionCallee parallelFor = c.module.getOrInsertFunction(
      "fb_parallel_for", FunctionType::get(Type::getVoidTy(c.ctx), {c.ptr, c.ptr, c.i64}, false));
  Function* worker = emitClaimingWorker(c, items, count, suffix);
  StructType* ctxTy = StructType::get(c.ctx, {c.ptr, c.i64});
  Value* ctx = b.CreateAlloca(ctxTy, nullptr, suffix + ".ctx");
  b.CreateStore(args, b.CreateStructGEP(ctxTy, ctx, 0));
  b.CreateStore(c.c64(0), b.CreateStructGEP(ctxTy, ctx, 1));
  b.CreateCall(parallelFor, {worker, ctx, c.c64(count)});
  return worker;
}

Status verifyKernelFunctions(Module& module, const std::string& kernelName) {
  std::string message;
  raw_string_ostream os(message);
  for (Function& fn : module) {
    StringRef name = fn.getName();
    bool ours = name == kernelName || name.starts_with(kernelName + ".");
    if (ours && !fn.isDeclaration() && verifyFunction(fn, &os))
      return makeError("kernel ", kernelName, ": generated invalid LLVM IR in ", name.str(), ": ",
                       os.str());
  }
  return Status::success();
}

Value* emitCarriedLoop(GemmIrContext& c, IRBuilder<>& b, const Twine& name, Value* begin,
                       Value* end, int64_t step, std::vector<Value*>& carried,
                       function_ref<void(Value*)> body, bool keepRolled) {
  Function* f = b.GetInsertBlock()->getParent();
  BasicBlock* pre = b.GetInsertBlock();
  BasicBlock* header = BasicBlock::Create(c.ctx, name + ".header", f);
  BasicBlock* loop = BasicBlock::Create(c.ctx, name + ".body", f);
  BasicBlock* exit = BasicBlock::Create(c.ctx, name + ".exit", f);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  PHINode* iv = b.CreatePHI(c.i64, 2, name);
  iv->addIncoming(begin, pre);
  std::vector<PHINode*> phis;
  for (Value*& v : carried) {
    PHINode* phi = b.CreatePHI(v->getType(), 2, "carried");
    phi->addIncoming(v, pre);
    phis.push_back(phi);
    v = phi;
  }
  b.CreateCondBr(b.CreateICmpSLE(b.CreateAdd(iv, c.c64(step)), end), loop, exit);
  b.SetInsertPoint(loop);
  body(iv);
  iv->addIncoming(b.CreateAdd(iv, c.c64(step)), b.GetInsertBlock());
  for (size_t i = 0; i < carried.size(); ++i) {
    phis[i]->addIncoming(carried[i], b.GetInsertBlock());
    carried[i] = phis[i];
  }
  BranchInst* back = b.CreateBr(header);
  if (keepRolled)
    back->setMetadata(
        LLVMContext::MD_loop,
        loopId(c.ctx, {MDNode::get(c.ctx, {MDString::get(c.ctx, "llvm.loop.unroll.disable")})}));
  b.SetInsertPoint(exit);
  return iv;
}

Function* makeItemsFunction(GemmIrContext& c, const std::string& suffix) {
  Function* f = c.makeFunction(suffix, Type::getVoidTy(c.ctx), {c.ptr, c.i64, c.i64}, true);
  f->getArg(0)->setName("args");
  f->getArg(1)->setName("begin");
  f->getArg(2)->setName("end");
  return f;
}

std::vector<Value*> residualTileBases(GemmIrContext& c, IRBuilder<>& b, Value* args, Value* cOff) {
  std::vector<Value*> bases(c.kernel.args.size(), nullptr);
  for (const EpilogueOp& op : c.spec.epilogue)
    if ((op.kind == EpilogueOp::Kind::AddTensor || op.kind == EpilogueOp::Kind::MulTensor) &&
        !bases[size_t(op.arg)]) {
      Value* off = cOff;
      if (op.batchMod > 0) {
        // C's batch step and the offset within it; the operand's step repeats over C's.
        Value* step = c.c64(c.plan.cBatchStride);
        Value* bi = b.CreateUDiv(cOff, step, "c.batch");
        Value* within = b.CreateURem(cOff, step, "c.within");
        Value* ob = b.CreateURem(b.CreateUDiv(bi, c.c64(op.batchDiv)), c.c64(op.batchMod));
        off = b.CreateAdd(b.CreateMul(ob, step), within, "operand.offset");
      }
      bases[size_t(op.arg)] =
          op.perRow ? loadArg(b, args, op.arg, "row.operand")
                    : floatGep(b, loadArg(b, args, op.arg, "residual"), off, "residual.tile");
    }
  return bases;
}

bool isPerRowOperand(const GemmSpec& spec, int arg) {
  for (const EpilogueOp& op : spec.epilogue)
    if (op.arg == arg && op.perRow &&
        (op.kind == EpilogueOp::Kind::AddTensor || op.kind == EpilogueOp::Kind::MulTensor))
      return true;
  return false;
}

Value* finishAccumulator(GemmIrContext& c, IRBuilder<>& b, Value* x, Value* bias,
                         function_ref<Value*(int arg)> residual) {
  const GemmSpec& s = c.spec;
  auto vf = [&](float v) { return ConstantFP::get(x->getType(), v); };
  if (s.alpha != 1.0f)
    x = b.CreateFMul(x, vf(s.alpha), "alpha");
  if (bias && !s.epilogue.empty() && faultEnabled(Fault::GemmEpilogueDropsBias))
    bias = nullptr;
  if (bias) {
    if (s.beta != 1.0f)
      bias = b.CreateFMul(bias, vf(s.beta));
    x = b.CreateFAdd(x, bias, "biased");
  }
  for (const EpilogueOp& op : s.epilogue)
    x = applyEpilogueOp(c, b, op, x, residual);
  return x;
}

Function* makeMicroKernelFunction(GemmIrContext& c, const std::string& suffix) {
  Function* f =
      c.makeFunction(suffix, Type::getVoidTy(c.ctx),
                     {c.ptr, c.i64, c.ptr, c.ptr, c.i64, c.i1, c.i1, c.i64, c.i64, c.i64, c.i64},
                     /*internal=*/true);
  const char* names[] = {"args", "kLen", "Ap",   "Bp",     "cOff",  "accumulate",
                         "last", "mAbs", "nAbs", "mValid", "nValid"};
  for (unsigned i = 0; i < f->arg_size(); ++i)
    f->getArg(i)->setName(names[i]);
  for (unsigned i : {2u, 3u}) {
    f->addParamAttr(i, Attribute::NoAlias);
    f->addParamAttr(i, Attribute::ReadOnly);
  }
  return f;
}

std::array<Value*, 4> transposeLanes4x4(IRBuilder<>& b, const std::array<Value*, 4>& in,
                                        int lanes) {
  auto perLane = [lanes](std::array<int, 4> pattern) {
    SmallVector<int, 16> mask;
    for (int lane = 0; lane < lanes / 4; ++lane)
      for (int e : pattern)
        mask.push_back(e >= 4 ? lanes + 4 * lane + (e - 4) : 4 * lane + e);
    return mask;
  };
  // Indices 4-7 name the second operand's element 0-3 of the same 128-bit lane.
  auto low = perLane({0, 4, 1, 5}), high = perLane({2, 6, 3, 7});
  auto lowPairs = perLane({0, 1, 4, 5}), highPairs = perLane({2, 3, 6, 7});
  Value* t0 = b.CreateShuffleVector(in[0], in[1], low);
  Value* t1 = b.CreateShuffleVector(in[0], in[1], high);
  Value* t2 = b.CreateShuffleVector(in[2], in[3], low);
  Value* t3 = b.CreateShuffleVector(in[2], in[3], high);
  return {b.CreateShuffleVector(t0, t2, lowPairs), b.CreateShuffleVector(t0, t2, highPairs),
          b.CreateShuffleVector(t1, t3, lowPairs), b.CreateShuffleVector(t1, t3, highPairs)};
}

Value* concatLanes(IRBuilder<>& b, ArrayRef<Value*> parts) {
  Value* lo = b.CreateShuffleVector(parts[0], parts[1], ArrayRef<int>{0, 1, 2, 3, 4, 5, 6, 7});
  if (parts.size() == 2)
    return lo;
  Value* hi = b.CreateShuffleVector(parts[2], parts[3], ArrayRef<int>{0, 1, 2, 3, 4, 5, 6, 7});
  SmallVector<int, 16> all;
  for (int i = 0; i < 16; ++i)
    all.push_back(i);
  return b.CreateShuffleVector(lo, hi, all);
}

} // namespace fb::cg::gemmir
