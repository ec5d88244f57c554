// Per-layer report of quantize and prune: numeric diff against the float model, or weight counts.
#include "app/workbench/CompressionReport.h"

#include "app/workbench/Compare.h"
#include "app/workbench/ErrorHeat.h"
#include "core/Format.h"
#include "core/OpTable.h"
#include "core/RandomInputs.h"

#include <algorithm>
#include <cstdio>

namespace fb::workbench {

namespace {

bool isWeightedLayer(OpKind op) {
  return op == OpKind::Conv || op == OpKind::ConvTranspose || op == OpKind::Gemm ||
         op == OpKind::MatMul;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string general(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

/// A statistic of the record, if the pass reported it.
std::optional<double> stat(const PassRecord& r, const std::string& key) {
  auto it = r.statistics.find(key);
  return it == r.statistics.end() ? std::nullopt : std::optional<double>(it->second);
}

/// "before -> after (ratio x smaller)" for a quantity formatted by `fmt`.
template <typename Fmt> std::string change(double before, double after, Fmt fmt) {
  std::string s = fmt(before) + " \u2192 " + fmt(after);
  if (after > 0 && before != after)
    s += " (" + fixed(before / after, 2) + "\u00d7 smaller)";
  return s;
}

/// The accuracy rows every lossy pass reports (OutputDeviation's statistics).
void addAccuracyFacts(const PassRecord& r, CompressionReport& report) {
  auto inputs = stat(r, "eval inputs");
  if (!inputs) {
    report.facts.push_back({"accuracy", "not evaluated (eval=0)"});
    return;
  }
  report.facts.push_back({"evaluated on", fixed(*inputs, 0) + " seeded random inputs"});
  if (auto mean = stat(r, "eval cosine mean"))
    report.facts.push_back(
        {"output cosine", fixed(*mean, 6) + " mean, " +
                              fixed(stat(r, "eval cosine min").value_or(*mean), 6) + " worst"});
  if (auto maxAbs = stat(r, "eval max abs"))
    report.facts.push_back({"output max |error|", general(*maxAbs)});
  if (auto top1 = stat(r, "eval top-1 agreement %"))
    report.facts.push_back({"top-1 agreement", fixed(*top1, 1) + " %"});
}

/// The output of `node` in the graph before the pass: the value the float model computed there.
const Value* outputBefore(const Graph& before, NodeId id) {
  const Node* n = before.findNode(id);
  return n && n->numOutputs() > 0 ? n->output(0) : nullptr;
}

Status fillQuantize(const Graph& before, const Graph& after, uint64_t seed,
                    CompressionReport& report) {
  FB_ASSIGN_OR_RETURN(std::vector<Tensor> inputs, makeRandomInputs(before, seed));
  FB_ASSIGN_OR_RETURN(NumericDiff diff, numericDiffGraphs(before, after, inputs, std::nullopt));
  std::map<std::string, const ValueComparison*> byReference;
  double top = 0;
  for (const ValueComparison& c : diff.values) {
    byReference[c.reference] = &c;
    top = std::max(top, 1.0 - c.cosine);
  }
  for (const auto& n : after.nodes()) {
    if (!isWeightedLayer(n->op()))
      continue;
    LayerCompression layer;
    layer.node = n->id();
    layer.name = n->name();
    layer.op = opName(n->op());
    const Value* w = n->numInputs() > 1 ? n->input(1) : nullptr;
    layer.quantized = w && w->producer() && w->producer()->op() == OpKind::DequantizeLinear;
    const Value* ref = outputBefore(before, n->id());
    auto it = ref ? byReference.find(ref->name()) : byReference.end();
    if (it != byReference.end()) {
      layer.cosine = it->second->cosine;
      layer.maxAbs = it->second->maxAbs;
      layer.value = 1.0 - layer.cosine;
    }
    report.layers.push_back(std::move(layer));
  }
  // Every value's producer, and each layer's box with the error of the value standing for its
  // output (which a Q/DQ pair after it may produce), on the log scale of errorHeat.
  auto raise = [&report](NodeId id, double h) {
    double& at = report.heat[id];
    at = std::max(at, h);
  };
  for (const ValueComparison& c : diff.values)
    raise(c.producer, errorHeat(1.0 - c.cosine, top));
  for (const LayerCompression& l : report.layers)
    raise(l.node, errorHeat(l.value, top));
  report.heatLegend = "output error vs. float: " + general(top / 1e4) + " \u2192 " + general(top) +
                      " (1 \u2212 cosine, log scale)";
  return Status::success();
}

/// Nonzero elements of a constant tensor (every element for a non-float one).
int64_t nonzeros(const Tensor& t) {
  if (t.dtype() != DType::F32)
    return t.numElements();
  int64_t n = 0;
  for (float v : t.data<float>())
    n += v != 0.0f;
  return n;
}

void fillPrune(const Graph& before, const Graph& after, CompressionReport& report) {
  for (const auto& n : after.nodes()) {
    if (!isWeightedLayer(n->op()) || n->numInputs() < 2 || !n->input(1)->isConstant())
      continue;
    const Node* old = before.findNode(n->id());
    if (!old || old->numInputs() < 2 || !old->input(1)->isConstant())
      continue;
    LayerCompression layer;
    layer.node = n->id();
    layer.name = n->name();
    layer.op = opName(n->op());
    layer.weightsBefore = old->input(1)->constantData().numElements();
    layer.weightsAfter = nonzeros(n->input(1)->constantData());
    layer.value = layer.weightsBefore > 0
                      ? 1.0 - double(layer.weightsAfter) / double(layer.weightsBefore)
                      : 0.0;
    report.heat[layer.node] = std::clamp(layer.value, 0.0, 1.0);
    report.layers.push_back(std::move(layer));
  }
  report.heatLegend = "weights removed: 0 \u2192 100 %";
}

} // namespace

bool isCompressionPass(const std::string& pass) {
  return pass == "quantize" || pass == "prune";
}

Expected<CompressionReport> compressionReport(const Graph& before, const Graph& after,
                                              const PassRecord& record, uint64_t seed) {
  if (!isCompressionPass(record.pass))
    return makeError("'", record.pass,
                     "' is not a quantize or prune step: it has no "
                     "compression report");
  CompressionReport report;
  report.pass = record.pass;
  report.step = record.step;
  report.summary = record.summary;
  const PassRecord& r = record;
  if (record.pass == "quantize") {
    if (auto b = stat(r, "weight bytes before"))
      report.facts.push_back({"weights", change(*b, stat(r, "weight bytes after").value_or(0),
                                                [](double v) { return formatBytes(v); })});
    if (auto a = stat(r, "activations quantized"))
      report.facts.push_back({"activations quantized", fixed(*a, 0)});
    if (auto s = stat(r, "calibration samples"))
      report.facts.push_back({"calibration inputs", fixed(*s, 0)});
  } else {
    auto count = [](double v) { return formatCount(v, Digits::decimalsBelow100(2), " "); };
    if (auto p = stat(r, "params before"))
      report.facts.push_back(
          {"parameters", change(*p, stat(r, "params after").value_or(0), count)});
    if (auto f = stat(r, "FLOPs before"))
      report.facts.push_back({"FLOPs", change(*f, stat(r, "FLOPs after").value_or(0),
                                              [](double v) { return formatFlops(v); })});
    if (auto z = stat(r, "weights zeroed"))
      report.facts.push_back(
          {"weights zeroed",
           fixed(*z, 0) + " of " + fixed(stat(r, "weights considered").value_or(0), 0)});
    if (auto c = stat(r, "channels removed"))
      report.facts.push_back(
          {"channels removed",
           fixed(*c, 0) + " of " + fixed(stat(r, "channels considered").value_or(0), 0)});
  }
  addAccuracyFacts(r, report);
  report.metric = record.pass == "quantize" ? "output error (1 \u2212 cosine) vs. the float model"
                                            : "fraction of the layer's weights removed";
  if (!record.changed)
    return report;
  if (record.pass == "quantize")
    FB_TRY(fillQuantize(before, after, seed, report));
  else
    fillPrune(before, after, report);
  return report;
}

} // namespace fb::workbench
