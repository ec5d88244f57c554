// KernelBuilder (codegen/loops/LowerContext.h): a kernel's arguments and buffers, how graph
// values are read inside its loop nests, and the finished Kernel with its arguments in ABI
// order; plus the small loop-nest helpers every lowering uses.
#include "codegen/loops/LowerContext.h"

#include <functional>

namespace fb::cg {
namespace lower {

// ---- KernelBuilder ----

KernelBuilder::KernelBuilder(std::string name, const LowerOptions& options)
    : m_name(std::move(name)), m_options(options) {}

int KernelBuilder::addArg(KernelArg arg) {
  m_args.push_back(std::move(arg));
  return int(m_args.size()) - 1;
}

/// A short identifier for a value name: the name itself when short and clean, else `fallback`.
static std::string shortName(const std::string& name, const std::string& fallback) {
  if (name.empty() || name.size() > 12 || !(std::isalpha(static_cast<unsigned char>(name[0]))))
    return fallback;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return fallback;
  return name;
}

BufferPtr KernelBuilder::makeBuffer(const std::string& name, int arg, DType dtype,
                                    std::vector<int64_t> sizes) {
  std::string unique = name;
  int& count = m_bufferNames[name];
  if (count++ > 0)
    unique = name + "_" + std::to_string(count - 1);
  auto b = std::make_shared<Buffer>();
  b->name = unique;
  b->kind = Buffer::Kind::Arg;
  b->arg = arg;
  b->dtype = dtype;
  b->strides = rowMajorStrides(sizes);
  b->sizes = std::move(sizes);
  m_buffers.push_back(b);
  return b;
}

void KernelBuilder::bindInput(const Value* inner, const Value* outer) {
  m_outerOf[inner] = outer;
  m_fns[inner] = [this, inner](const Indices& idx) { return load(directBuffer(inner), idx); };
}

BufferPtr KernelBuilder::directBuffer(const Value* v) {
  auto o = m_outerOf.find(v);
  if (o == m_outerOf.end())
    return nullptr;
  const Value* outer = o->second;
  auto it = m_argBuffer.find(outer);
  if (it != m_argBuffer.end())
    return it->second;
  KernelArg a;
  a.name = outer->name();
  a.dtype = outer->type().dtype;
  a.sizes = sizesOf(outer);
  a.bytes = int64_t(dtypeSize(a.dtype)) * outer->type().numElements().value_or(0);
  std::string fallback;
  if (outer->isConstant()) {
    a.role = KernelArg::Role::Weight;
    a.data = outer->constantData();
    fallback = a.sizes.size() == 1 ? "B" : "W";
  } else {
    a.role = KernelArg::Role::Input;
    fallback = "X";
  }
  DType dtype = a.dtype;
  std::vector<int64_t> sizes = a.sizes;
  int idx = addArg(std::move(a));
  BufferPtr b = makeBuffer(shortName(outer->name(), fallback), idx, dtype, sizes);
  m_argBuffer[outer] = b;
  return b;
}

BufferPtr KernelBuilder::bindOutput(const Value* inner, const Value* outer) {
  auto it = m_argBuffer.find(outer);
  if (it != m_argBuffer.end())
    return it->second;
  KernelArg a;
  a.role = KernelArg::Role::Output;
  a.name = outer->name();
  a.dtype = outer->type().dtype;
  a.sizes = sizesOf(outer);
  a.bytes = int64_t(dtypeSize(a.dtype)) * outer->type().numElements().value_or(0);
  DType dtype = a.dtype;
  std::vector<int64_t> sizes = a.sizes;
  int idx = addArg(std::move(a));
  BufferPtr b = makeBuffer(shortName(outer->name(), "Y"), idx, dtype, sizes);
  m_argBuffer[outer] = b;
  (void)inner;
  return b;
}

BufferPtr KernelBuilder::scratchFor(const Value* v) {
  KernelArg a;
  a.role = KernelArg::Role::Scratch;
  a.name = m_name + ".scratch" + std::to_string(m_scratchCount++);
  a.dtype = v->type().dtype;
  a.sizes = sizesOf(v);
  a.bytes = int64_t(dtypeSize(a.dtype)) * v->type().numElements().value_or(0);
  DType dtype = a.dtype;
  std::vector<int64_t> sizes = a.sizes;
  int idx = addArg(std::move(a));
  return makeBuffer("T", idx, dtype, sizes);
}

BufferPtr KernelBuilder::scratchBuffer(const std::string& shortName, DType dtype,
                                       std::vector<int64_t> sizes) {
  KernelArg a;
  a.role = KernelArg::Role::Scratch;
  a.name = m_name + ".scratch" + std::to_string(m_scratchCount++);
  a.dtype = dtype;
  a.sizes = sizes;
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  a.bytes = int64_t(dtypeSize(dtype)) * n;
  int idx = addArg(std::move(a));
  return makeBuffer(shortName, idx, dtype, std::move(sizes));
}

BufferPtr KernelBuilder::constantBuffer(const std::string& name, Tensor data) {
  KernelArg a;
  a.role = KernelArg::Role::Weight;
  a.name = m_name + "." + name;
  a.dtype = data.dtype();
  a.sizes = data.sizes();
  a.bytes = int64_t(data.byteSize());
  a.data = data;
  int idx = addArg(std::move(a));
  return makeBuffer(name, idx, data.dtype(), data.sizes());
}

void KernelBuilder::defineConstant(const Value* v, Tensor data) {
  m_folded[v] = data;
  BufferPtr b = constantBuffer(shortName(v->name(), "C"), std::move(data));
  defineLoad(v, b);
}

const Tensor* KernelBuilder::constantOf(const Value* v) const {
  auto f = m_folded.find(v);
  if (f != m_folded.end())
    return &f->second;
  auto o = m_outerOf.find(v);
  if (o != m_outerOf.end() && o->second->isConstant())
    return &o->second->constantData();
  return nullptr;
}

void KernelBuilder::defineLoad(const Value* v, BufferPtr buffer) {
  m_fns[v] = [buffer](const Indices& idx) { return load(buffer, idx); };
}

bool KernelBuilder::isDefined(const Value* v) const {
  return m_fns.count(v) != 0;
}

ExprPtr KernelBuilder::poison(const std::string& what, const Indices& idx) {
  if (m_poisonReason.empty())
    m_poisonReason = what;
  std::vector<int64_t> sizes(idx.size(), 1);
  auto b = std::make_shared<Buffer>();
  b->name = "__poison";
  b->kind = Buffer::Kind::Local;
  b->sizes = sizes;
  b->strides = rowMajorStrides(sizes);
  return load(b, idx);
}

ExprPtr KernelBuilder::read(const Value* v, const Indices& idx) {
  auto it = m_fns.find(v);
  if (it == m_fns.end())
    return poison("value " + v->name() + " is read before it is computed", idx);
  return it->second(idx);
}

Status KernelBuilder::addIndexCheck(const Node& n, const Value* indices, std::vector<int64_t> sizes,
                                    std::vector<int64_t> axes, bool nonNegative,
                                    std::optional<int64_t> exempt) {
  IndexCheck c;
  c.sizes = std::move(sizes);
  c.axes = std::move(axes);
  c.nonNegative = nonNegative;
  c.exempt = exempt;
  return addRangeCheck(n, indices, std::move(c));
}

Status KernelBuilder::addRangeCheck(const Node& n, const Value* values, IndexCheck check) {
  BufferPtr buf = directBuffer(values);
  if (!buf)
    return makeUnsupported(n.describe(), ": the indices of ", opName(n.op()),
                           " are computed inside the kernel; the CPU backend range-checks only "
                           "indices read from a kernel argument");
  check.arg = buf->arg;
  check.where = n.describe();
  m_indexChecks.push_back(std::move(check));
  return Status::success();
}

static bool hasPoison(const StmtPtr& s) {
  bool found = false;
  std::function<void(const ExprPtr&)> visit = [&](const ExprPtr& e) {
    if (!e || found)
      return;
    if (e->kind == Expr::Kind::Load && e->buffer->name == "__poison") {
      found = true;
      return;
    }
    for (const ExprPtr& o : e->operands)
      visit(o);
  };
  forEachStmt(s, [&](const Stmt& x) {
    visit(x.min);
    visit(x.extent);
    visit(x.value);
    visit(x.cond);
    for (const ExprPtr& i : x.indices)
      visit(i);
  });
  return found;
}

Expected<Kernel> KernelBuilder::finish(StmtPtr body, std::vector<NodeId> nodes,
                                       std::string opSummary, double flops, double bytes) {
  if (hasPoison(body))
    return makeError("kernel ", m_name, ": internal lowering error: ", m_poisonReason);
  // Order: inputs, outputs, weights, scratch (stable within each role).
  std::vector<int> newIndex(m_args.size());
  Kernel k;
  for (KernelArg::Role role : {KernelArg::Role::Input, KernelArg::Role::Output,
                               KernelArg::Role::Weight, KernelArg::Role::Scratch})
    for (size_t i = 0; i < m_args.size(); ++i)
      if (m_args[i].role == role) {
        newIndex[i] = int(k.args.size());
        k.args.push_back(m_args[i]);
      }
  for (const std::shared_ptr<Buffer>& b : m_buffers)
    b->arg = newIndex[size_t(b->arg)];
  auto patch = [&](int& a) {
    if (a >= 0)
      a = newIndex[size_t(a)];
  };
  if (m_gemm) {
    patch(m_gemm->aArg);
    patch(m_gemm->bArg);
    patch(m_gemm->cArg);
    patch(m_gemm->biasArg);
    for (EpilogueOp& op : m_gemm->epilogue)
      patch(op.arg);
  }
  k.name = m_name;
  k.nodes = std::move(nodes);
  k.opSummary = std::move(opSummary);
  k.body = std::move(body);
  k.gemm = m_gemm;
  k.indexChecks = m_indexChecks;
  for (IndexCheck& c : k.indexChecks)
    patch(c.arg);
  k.flops = flops;
  k.bytes = bytes;
  return k;
}

// ---- nest helpers ----

std::vector<std::string> indexNames(size_t rank, const std::string& prefix) {
  static const char* small[] = {"i", "j", "k"};
  std::vector<std::string> names;
  for (size_t d = 0; d < rank; ++d)
    names.push_back(prefix + (rank <= 3 ? std::string(small[d]) : "i" + std::to_string(d)));
  return names;
}

Indices varsOf(const std::vector<std::string>& names) {
  Indices v;
  for (const std::string& n : names)
    v.push_back(var(n));
  return v;
}

StmtPtr wrapLoops(const std::vector<std::string>& names, const std::vector<int64_t>& sizes,
                  StmtPtr body) {
  // A loop of one iteration is not worth a loop: its variable is 0.
  for (size_t d = names.size(); d-- > 0;)
    body = sizes[d] == 1 ? substitute(body, names[d], intImm(0))
                         : forRange(names[d], sizes[d], std::move(body));
  return body;
}

StmtPtr elementwiseNest(const BufferPtr& out, const ExprFn& fn, const std::string& comment) {
  std::vector<std::string> names = indexNames(out->rank());
  Indices idx = varsOf(names);
  return wrapLoops(names, out->sizes, store(out, idx, fn(idx), comment));
}

ExprPtr readScalar(KernelBuilder& b, const Value* v) {
  Indices zeros(v->type().rank(), intImm(0));
  return b.read(v, zeros);
}

ExprPtr readBroadcast(KernelBuilder& b, const Value* v, const Indices& idx,
                      const std::vector<int64_t>& outSizes) {
  std::vector<int64_t> in = KernelBuilder::sizesOf(v);
  Indices mapped;
  size_t lead = outSizes.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d)
    mapped.push_back(in[d] == 1 && outSizes[lead + d] != 1 ? intImm(0) : idx[lead + d]);
  return b.read(v, mapped);
}

} // namespace lower

} // namespace fb::cg
