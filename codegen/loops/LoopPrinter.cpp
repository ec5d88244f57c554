// Textbook pseudo-code for the kernel loop IR.
#include "codegen/loops/LoopPrinter.h"

#include <cassert>
#include <charconv>
#include <functional>
#include <cmath>
#include <sstream>

namespace fb::cg {

namespace {

/// Binding strength, Python-like: higher binds tighter.
int precedence(const Expr& e) {
  if (e.kind == Expr::Kind::Binary) {
    switch (e.binaryOp) {
    case BinaryOp::Or: return 1;
    case BinaryOp::And: return 2;
    case BinaryOp::Eq:
    case BinaryOp::Ne:
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge: return 4;
    case BinaryOp::Add:
    case BinaryOp::Sub: return 5;
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Mod: return 6;
    default: return 9; // min/max/pow print as calls
    }
  }
  if (e.kind == Expr::Kind::Unary && e.unaryOp == UnaryOp::Neg)
    return 7;
  if (e.kind == Expr::Kind::Unary && e.unaryOp == UnaryOp::Not)
    return 3;
  if (e.kind == Expr::Kind::IntImm && e.intValue < 0)
    return 7;
  if (e.kind == Expr::Kind::FloatImm && std::signbit(e.floatValue))
    return 7;
  return 9;
}

std::string floatText(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, float(v));
  (void)ec;
  std::string s(buf, end);
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s;
}

void printTo(std::ostream& os, const ExprPtr& e);

/// Prints `e`, parenthesised when it binds looser than `minPrec`.
void printOperand(std::ostream& os, const ExprPtr& e, int minPrec) {
  bool parens = precedence(*e) < minPrec;
  if (parens)
    os << '(';
  printTo(os, e);
  if (parens)
    os << ')';
}

void printIndices(std::ostream& os, const std::vector<ExprPtr>& idx) {
  os << '[';
  for (size_t i = 0; i < idx.size(); ++i) {
    if (i)
      os << ", ";
    printTo(os, idx[i]);
  }
  os << ']';
}

void printTo(std::ostream& os, const ExprPtr& e) {
  switch (e->kind) {
  case Expr::Kind::IntImm:
    if (e->type.dtype == DType::Bool)
      os << (e->intValue ? "true" : "false");
    else
      os << e->intValue;
    return;
  case Expr::Kind::FloatImm: os << floatText(e->floatValue); return;
  case Expr::Kind::Var: os << e->name; return;
  case Expr::Kind::Load:
    os << e->buffer->name;
    printIndices(os, e->operands);
    return;
  case Expr::Kind::Unary:
    if (e->unaryOp == UnaryOp::Neg) {
      os << '-';
      printOperand(os, e->operands[0], 8);
    } else if (e->unaryOp == UnaryOp::Not) {
      os << "not ";
      printOperand(os, e->operands[0], 4);
    } else {
      os << unaryOpName(e->unaryOp) << '(';
      printTo(os, e->operands[0]);
      os << ')';
    }
    return;
  case Expr::Kind::Binary: {
    int p = precedence(*e);
    if (p == 9) {
      os << binaryOpName(e->binaryOp) << '(';
      printTo(os, e->operands[0]);
      os << ", ";
      printTo(os, e->operands[1]);
      os << ')';
      return;
    }
    // Left-associative: the right operand needs parentheses at equal precedence.
    printOperand(os, e->operands[0], p);
    os << ' ' << binaryOpName(e->binaryOp) << ' ';
    printOperand(os, e->operands[1], p + 1);
    return;
  }
  case Expr::Kind::Select:
    os << "select(";
    printTo(os, e->operands[0]);
    os << ", ";
    printTo(os, e->operands[1]);
    os << ", ";
    printTo(os, e->operands[2]);
    os << ')';
    return;
  case Expr::Kind::Cast:
    os << dtypeName(e->type.dtype);
    if (e->type.lanes > 1)
      os << 'x' << e->type.lanes;
    os << '(';
    printTo(os, e->operands[0]);
    os << ')';
    return;
  case Expr::Kind::Ramp:
    os << "ramp(";
    printTo(os, e->operands[0]);
    os << ", ";
    printTo(os, e->operands[1]);
    os << ", " << e->type.lanes << ')';
    return;
  case Expr::Kind::Broadcast:
    os << "broadcast(";
    printTo(os, e->operands[0]);
    os << ", " << e->type.lanes << ')';
    return;
  }
  assert(false && "unknown expression kind");
}

/// True for a serial loop from 0 with a constant extent and no comment-free obstacles: the
/// loops that merge into one `grid(...)` line.
bool isGridLoop(const Stmt& s) {
  return s.kind == Stmt::Kind::For && s.forKind == ForKind::Serial && s.min->isIntConst() &&
         s.min->intValue == 0 && s.extent->isIntConst();
}

void printStmtTo(std::ostream& os, const StmtPtr& s, int indent) {
  if (!s)
    return;
  std::string pad(size_t(indent) * 2, ' ');
  auto comment = [&](const Stmt& x) {
    if (!x.comment.empty())
      os << "  # " << x.comment;
    os << '\n';
  };
  switch (s->kind) {
  case Stmt::Kind::For: {
    if (isGridLoop(*s)) {
      // Merge a perfect nest of grid loops into one line.
      std::vector<const Stmt*> nest{s.get()};
      while (nest.back()->body && isGridLoop(*nest.back()->body) &&
             nest.back()->body->comment.empty())
        nest.push_back(nest.back()->body.get());
      os << pad << "for ";
      for (size_t i = 0; i < nest.size(); ++i)
        os << (i ? ", " : "") << nest[i]->var;
      if (nest.size() == 1)
        os << " in range(" << s->extent->intValue << "):";
      else {
        os << " in grid(";
        for (size_t i = 0; i < nest.size(); ++i)
          os << (i ? ", " : "") << nest[i]->extent->intValue;
        os << "):";
      }
      comment(*s);
      printStmtTo(os, nest.back()->body, indent + 1);
      return;
    }
    os << pad << "for " << s->var << " in ";
    const char* fn = "range";
    switch (s->forKind) {
    case ForKind::Serial: fn = "range"; break;
    case ForKind::Parallel: fn = "parallel"; break;
    case ForKind::Vectorized: fn = "vectorized"; break;
    case ForKind::Unrolled: fn = "unrolled"; break;
    case ForKind::GpuThreads:
      fn = "gpu_threads";
      break;
    case ForKind::GpuBlocks:
      fn = "gpu_blocks";
      break;
    case ForKind::GpuLanes:
      fn = "gpu_lanes";
      break;
    }
    os << fn << '(';
    if (s->min->isIntConst() && s->min->intValue == 0) {
      printTo(os, s->extent);
    } else {
      printTo(os, s->min);
      os << ", ";
      printTo(os, simplify(add(s->min, s->extent)));
    }
    os << "):";
    comment(*s);
    printStmtTo(os, s->body, indent + 1);
    return;
  }
  case Stmt::Kind::Store: {
    os << pad << s->buffer->name;
    printIndices(os, s->indices);
    const Expr& v = *s->value;
    // `Y[i] += e` when the value reads the same element first.
    if (v.kind == Expr::Kind::Binary &&
        (v.binaryOp == BinaryOp::Add || v.binaryOp == BinaryOp::Mul) &&
        v.operands[0]->kind == Expr::Kind::Load && v.operands[0]->buffer == s->buffer) {
      bool same = v.operands[0]->operands.size() == s->indices.size();
      for (size_t i = 0; same && i < s->indices.size(); ++i)
        same = equal(v.operands[0]->operands[i], s->indices[i]);
      if (same) {
        os << ' ' << binaryOpName(v.binaryOp) << "= ";
        printTo(os, v.operands[1]);
        comment(*s);
        return;
      }
    }
    os << " = ";
    printTo(os, s->value);
    comment(*s);
    return;
  }
  case Stmt::Kind::Block:
    if (!s->comment.empty())
      os << pad << "# " << s->comment << '\n';
    for (const StmtPtr& x : s->stmts)
      printStmtTo(os, x, indent);
    return;
  case Stmt::Kind::If:
    os << pad << "if ";
    printTo(os, s->cond);
    os << ':';
    comment(*s);
    printStmtTo(os, s->thenBody, indent + 1);
    if (s->elseBody) {
      os << pad << "else:\n";
      printStmtTo(os, s->elseBody, indent + 1);
    }
    return;
  case Stmt::Kind::Let:
    os << pad << s->var << " = ";
    printTo(os, s->value);
    comment(*s);
    printStmtTo(os, s->body, indent);
    return;
  case Stmt::Kind::Alloc: {
    const Buffer& b = *s->buffer;
    os << pad << (b.kind == Buffer::Kind::Shared ? "shared " : "local ") << b.name << ": "
       << dtypeName(b.dtype) << '[';
    for (size_t i = 0; i < b.sizes.size(); ++i)
      os << (i ? ", " : "") << b.sizes[i];
    os << ']';
    comment(*s);
    printStmtTo(os, s->body, indent);
    return;
  }
  case Stmt::Kind::Barrier:
    os << pad << "barrier";
    comment(*s);
    return;
  }
  assert(false && "unknown statement kind");
}

const char* roleName(KernelArg::Role r) {
  switch (r) {
  case KernelArg::Role::Input: return "in";
  case KernelArg::Role::Output: return "out";
  case KernelArg::Role::Weight: return "weight";
  case KernelArg::Role::Scratch: return "scratch";
  }
  return "?";
}

} // namespace

std::string printExpr(const ExprPtr& e) {
  std::ostringstream os;
  printTo(os, e);
  return os.str();
}

std::string printStmt(const StmtPtr& s, int indent) {
  std::ostringstream os;
  printStmtTo(os, s, indent);
  return os.str();
}

/// The name the body uses for each argument (the first view of it that appears).
static std::vector<std::string> bufferNamesOf(const Kernel& k) {
  std::vector<std::string> names(k.args.size());
  std::function<void(const ExprPtr&)> visitExpr = [&](const ExprPtr& e) {
    if (!e)
      return;
    if (e->kind == Expr::Kind::Load && e->buffer->kind == Buffer::Kind::Arg && e->buffer->arg >= 0 &&
        size_t(e->buffer->arg) < names.size() && names[size_t(e->buffer->arg)].empty())
      names[size_t(e->buffer->arg)] = e->buffer->name;
    for (const ExprPtr& o : e->operands)
      visitExpr(o);
  };
  forEachStmt(k.body, [&](const Stmt& s) {
    if (s.kind == Stmt::Kind::Store && s.buffer->kind == Buffer::Kind::Arg && s.buffer->arg >= 0 &&
        size_t(s.buffer->arg) < names.size() && names[size_t(s.buffer->arg)].empty())
      names[size_t(s.buffer->arg)] = s.buffer->name;
    visitExpr(s.value);
    visitExpr(s.cond);
    visitExpr(s.min);
    visitExpr(s.extent);
    for (const ExprPtr& i : s.indices)
      visitExpr(i);
  });
  return names;
}

std::string printKernel(const Kernel& k, const KernelBlockingDescriber& describeBlocking) {
  std::ostringstream os;
  os << "kernel " << k.name << '(';
  std::vector<std::string> bufferNames = bufferNamesOf(k);
  for (size_t i = 0; i < k.args.size(); ++i) {
    const KernelArg& a = k.args[i];
    os << (i ? ", " : "") << roleName(a.role) << ' ';
    // `Y = "/conv1/Conv_output_0"` when the body's short name differs from the value's.
    if (!bufferNames[i].empty() && bufferNames[i] != a.name)
      os << bufferNames[i] << " = \"" << a.name << '"';
    else
      os << a.name;
    os << ": " << dtypeName(a.dtype) << '[';
    for (size_t d = 0; d < a.sizes.size(); ++d)
      os << (d ? ", " : "") << a.sizes[d];
    os << ']';
  }
  os << "):\n";
  os << "  # " << (k.opSummary.empty() ? "?" : k.opSummary) << " from";
  for (NodeId id : k.nodes)
    os << " n" << id;
  os << ", " << k.flops << " flops\n";
  if (k.gemm && isDepthwise(*k.gemm)) {
    os << "  # compiled by the direct depthwise generator (dwconv)";
    if (describeBlocking) {
      auto how = describeBlocking(k);
      os << ": " << (how.ok() ? *how : how.error().message());
    }
    os << '\n';
  } else if (k.int8) {
    const Int8GemmSpec& q = *k.int8;
    os << "  # int8 gemm: slices=" << q.slices() << " M=" << q.M << " N=" << q.N << " K=" << q.K
       << (q.conv ? " (implicit im2col conv)" : "");
    if (describeBlocking)
      if (auto how = describeBlocking(k); how.ok())
        os << "\n  # " << *how;
    os << '\n';
  } else if (k.gemm) {
    const GemmSpec& g = *k.gemm;
    os << "  # gemm: batch=" << g.batch << " M=" << g.M << " N=" << g.N << " K=" << g.K;
    if (g.conv)
      os << " (implicit im2col conv " << g.conv->kernelH << 'x' << g.conv->kernelW << " stride "
         << g.conv->strideH << " groups " << g.conv->groups << ')';
    if (g.bias != GemmSpec::Bias::None)
      os << " +bias";
    for (const EpilogueOp& op : g.epilogue) {
      os << " +" << epilogueOpName(op.kind);
      if (op.batchMod > 0) // the operand's matrix for batch step b
        os << "[b / " << op.batchDiv << " % " << op.batchMod << ']';
    }
    os << '\n';
    // Once the backend has packed the weights (--backend cpu), the blocking it compiles.
    if (describeBlocking)
      if (auto blocking = describeBlocking(k); blocking.ok())
        os << "  #   blocking: " << *blocking << '\n';
  }
  os << printStmt(k.body, 1);
  return os.str();
}

std::string printKernels(const std::vector<Kernel>& kernels,
                         const KernelBlockingDescriber& describeBlocking) {
  std::string out;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (i)
      out += '\n';
    out += printKernel(kernels[i], describeBlocking);
  }
  return out;
}

} // namespace fb::cg
