// The reference interpreter: evaluates nodes in execution order with the op table's kernels.
#include "core/Interpreter.h"
#include "core/MemoryLimit.h"
#include "core/ops/OpContext.h"

namespace fb {

Status checkInputAgainstType(const Value& input, const Tensor& t,
                             std::unordered_map<std::string, int64_t>& bindings) {
  const TensorType& type = input.type();
  if (!t.valid())
    return makeError("input '", input.name(), "' was not given");
  if (t.dtype() != type.dtype)
    return makeError("input '", input.name(), "' is ", dtypeName(t.dtype()), ", expected ",
                     dtypeName(type.dtype));
  if (t.rank() != type.rank())
    return makeError("input '", input.name(), "' has rank ", t.rank(), ", expected ",
                     type.str());
  for (size_t i = 0; i < type.rank(); ++i) {
    const Dim& d = type.dims[i];
    int64_t got = t.sizes()[i];
    if (d.isStatic() && d.size() != got)
      return makeError("input '", input.name(), "' has shape ", t.type().str(), ", expected ",
                       type.str());
    if (d.isSymbol()) {
      auto [it, inserted] = bindings.emplace(d.symbolName(), got);
      if (!inserted && it->second != got)
        return makeError("input '", input.name(), "': dim ", d.symbolName(), " is ", got,
                         " here but ", it->second, " in another input");
    }
  }
  return Status::success();
}

static Status checkOutput(const Node& n, size_t i, const Tensor& t) {
  const TensorType& want = n.output(i)->type();
  if (!t.valid())
    return makeError(n.describe(), ": kernel produced no output ", i);
  if (t.dtype() != want.dtype)
    return makeError(n.describe(), ": kernel produced ", dtypeName(t.dtype()), " for output ", i,
                     ", inferred ", want.str());
  if (t.rank() != want.rank())
    return makeError(n.describe(), ": kernel produced ", t.type().str(), " for output ", i,
                     ", inferred ", want.str());
  for (size_t k = 0; k < want.rank(); ++k)
    if (want.dims[k].isStatic() && want.dims[k].size() != t.sizes()[k])
      return makeError(n.describe(), ": kernel produced ", t.type().str(), " for output ", i,
                       ", inferred ", want.str());
  return Status::success();
}

/// Runs one kernel; an allocation it cannot make (a size from its operands that overflows or
/// exceeds the memory limit, or std::bad_alloc) becomes an error naming the node.
static Status evalGuarded(const OpInfo& info, EvalContext& ctx, const Node& n) {
  try {
    return info.eval(ctx);
  } catch (const AllocationRefused& e) {
    return makeError(n.describe(), ": ", e.what());
  } catch (const std::bad_alloc&) {
    return makeError(n.describe(), ": the kernel ran out of memory (std::bad_alloc) sizing its "
                                   "result from its operands");
  } catch (const std::length_error& e) {
    return makeError(n.describe(), ": size out of range (", e.what(), ")");
  }
}

Expected<std::vector<Tensor>> evaluateNode(const Node& node, std::vector<Tensor> inputs) {
  const OpInfo& info = node.info();
  if (!info.eval)
    return makeError(node.describe(), ": the interpreter has no kernel for ", info.name);
  if (inputs.size() != node.numInputs())
    return makeError(node.describe(), ": ", inputs.size(), " operands given for ",
                     node.numInputs());
  EvalContext ctx(node, std::move(inputs));
  FB_TRY(evalGuarded(info, ctx, node));
  for (size_t i = 0; i < node.numOutputs(); ++i)
    FB_TRY(checkOutput(node, i, ctx.outputs()[i]));
  return std::move(ctx.outputs());
}

Expected<InterpretResult> interpret(const Graph& graph, const std::vector<Tensor>& inputs,
                                    const InterpretOptions& options) {
  if (inputs.size() != graph.inputs().size())
    return makeError("graph '", graph.name(), "' takes ", graph.inputs().size(), " inputs, got ",
                     inputs.size());
  std::unordered_map<const Value*, Tensor> env;
  std::unordered_map<const Value*, size_t> remainingUses;
  std::unordered_map<std::string, int64_t> bindings;
  for (size_t i = 0; i < inputs.size(); ++i) {
    FB_TRY(checkInputAgainstType(*graph.inputs()[i], inputs[i], bindings));
    env[graph.inputs()[i]] = inputs[i];
  }
  for (const Value* c : graph.constants()) {
    if (!c->constantData().valid())
      return makeError("constant '", c->name(), "' has no data");
    env[c] = c->constantData();
  }
  for (const auto& n : graph.nodes())
    for (const Value* in : n->inputs())
      if (in)
        ++remainingUses[in];
  for (const Value* out : graph.outputs())
    ++remainingUses[out]; // never freed

  InterpretResult result;
  for (const auto& n : graph.nodes()) {
    const OpInfo& info = n->info();
    if (!info.eval)
      return makeError(n->describe(), ": the interpreter has no kernel for ", info.name);
    std::vector<Tensor> ins;
    ins.reserve(n->numInputs());
    for (const Value* in : n->inputs()) {
      if (!in) {
        ins.emplace_back();
        continue;
      }
      auto it = env.find(in);
      if (it == env.end())
        return makeError(n->describe(), ": operand '", in->name(), "' is not computed yet");
      ins.push_back(it->second);
    }
    EvalContext ctx(*n, std::move(ins));
    FB_TRY(evalGuarded(info, ctx, *n));
    for (size_t i = 0; i < n->numOutputs(); ++i) {
      FB_TRY(checkOutput(*n, i, ctx.outputs()[i]));
      env[n->output(i)] = std::move(ctx.outputs()[i]);
    }
    if (!options.keepIntermediates) {
      for (const Value* in : n->inputs())
        if (in && --remainingUses[in] == 0 && !in->isConstant())
          env.erase(in);
      for (const Value* out : n->outputs())
        if (remainingUses[out] == 0)
          env.erase(out);
    }
  }
  for (const Value* out : graph.outputs()) {
    auto it = env.find(out);
    if (it == env.end())
      return makeError("graph output '", out->name(), "' was not computed");
    result.outputs.push_back(it->second);
  }
  if (options.keepIntermediates)
    for (auto& [v, t] : env)
      result.values[v->name()] = t;
  return result;
}

} // namespace fb
