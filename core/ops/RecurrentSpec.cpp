// Reading, checking and explaining the attributes of RNN, GRU and LSTM nodes.
#include "core/ops/RecurrentSpec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

namespace fb {

namespace {

using Kind = RecurrentActivationKind;

struct ActivationName {
  const char* name;
  Kind kind;
  bool takesAlpha, takesBeta;
  float alpha, beta; // defaults: those of the ONNX op of the same name where there is one
};

constexpr ActivationName kActivations[] = {
    {"Sigmoid", Kind::Sigmoid, false, false, 0, 0},
    {"Tanh", Kind::Tanh, false, false, 0, 0},
    {"Relu", Kind::Relu, false, false, 0, 0},
    {"HardSigmoid", Kind::HardSigmoid, true, true, 0.2f, 0.5f},
    {"Affine", Kind::Affine, true, true, 1.0f, 0.0f},
    {"LeakyRelu", Kind::LeakyRelu, true, false, 0.01f, 0},
    {"ThresholdedRelu", Kind::ThresholdedRelu, true, false, 1.0f, 0},
    {"ScaledTanh", Kind::ScaledTanh, true, true, 1.0f, 1.0f},
    {"Elu", Kind::Elu, true, false, 1.0f, 0},
    {"Softsign", Kind::Softsign, false, false, 0, 0},
    {"Softplus", Kind::Softplus, false, false, 0, 0},
};

const ActivationName& entryOf(Kind kind) {
  for (const ActivationName& a : kActivations)
    if (a.kind == kind)
      return a;
  assert(false && "every activation kind is in kActivations");
  return kActivations[0];
}

bool equalsIgnoreCase(const std::string& a, const char* b) {
  size_t n = std::char_traits<char>::length(b);
  if (a.size() != n)
    return false;
  for (size_t i = 0; i < n; ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

/// The default activations of one direction: f, g, h.
std::vector<std::string> defaultActivations(OpKind op) {
  switch (op) {
  case OpKind::RNN:
    return {"Tanh"};
  case OpKind::GRU:
    return {"Sigmoid", "Tanh"};
  case OpKind::LSTM:
    return {"Sigmoid", "Tanh", "Tanh"};
  default:
    assert(false && "not a recurrent op");
    return {};
  }
}

std::string fmt(float v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

} // namespace

const char* RecurrentActivation::name() const {
  return entryOf(kind).name;
}

double RecurrentActivation::apply(double x) const {
  const double a = alpha, b = beta;
  switch (kind) {
  case Kind::Sigmoid:
    return 1.0 / (1.0 + std::exp(-x));
  case Kind::Tanh:
    return std::tanh(x);
  case Kind::Relu:
    return x > 0 ? x : 0.0;
  case Kind::HardSigmoid:
    return std::min(1.0, std::max(0.0, a * x + b));
  case Kind::Affine:
    return a * x + b;
  case Kind::LeakyRelu:
    return x >= 0 ? x : a * x;
  case Kind::ThresholdedRelu:
    return x >= a ? x : 0.0;
  case Kind::ScaledTanh:
    return a * std::tanh(b * x);
  case Kind::Elu:
    return x >= 0 ? x : a * (std::exp(x) - 1.0);
  case Kind::Softsign:
    return x / (1.0 + std::abs(x));
  case Kind::Softplus:
    return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x)));
  }
  assert(false && "unknown activation");
  return x;
}

std::string RecurrentActivation::str() const {
  const ActivationName& e = entryOf(kind);
  if (!e.takesAlpha)
    return e.name;
  std::string s = std::string(e.name) + "(alpha=" + fmt(alpha);
  if (e.takesBeta)
    s += ", beta=" + fmt(beta);
  return s + ")";
}

bool isRecurrentOp(OpKind op) {
  return op == OpKind::RNN || op == OpKind::GRU || op == OpKind::LSTM;
}

Expected<RecurrentSpec> readRecurrentSpec(const Node& node) {
  assert(isRecurrentOp(node.op()) && "readRecurrentSpec on a non-recurrent node");
  const AttrMap& attrs = node.attrs();
  auto fail = [&](const auto&... parts) { return makeError(node.describe(), ": ", parts...); };
  auto check = [&](const auto& e) -> Status {
    if (!e)
      return fail(e.error().message());
    return Status::success();
  };
  RecurrentSpec s;
  s.op = node.op();
  s.numGates = node.op() == OpKind::LSTM ? 4 : node.op() == OpKind::GRU ? 3 : 1;
  s.numActivations = node.op() == OpKind::LSTM ? 3 : node.op() == OpKind::GRU ? 2 : 1;

  auto direction = attrs.getString("direction", "forward");
  FB_TRY(check(direction));
  s.direction = *direction;
  if (s.direction != "forward" && s.direction != "reverse" && s.direction != "bidirectional")
    return fail("attribute 'direction' is '", s.direction,
                "'; it must be forward, reverse or bidirectional");
  s.numDirections = s.direction == "bidirectional" ? 2 : 1;

  auto layout = attrs.getInt("layout", 0);
  FB_TRY(check(layout));
  if (*layout != 0 && *layout != 1)
    return fail("attribute 'layout' is ", *layout,
                "; it must be 0 ([seq, batch, ...]) or 1 "
                "([batch, seq, ...])");
  s.layout = *layout;

  if (attrs.has("clip")) {
    auto clip = attrs.getFloat("clip", 0);
    FB_TRY(check(clip));
    if (!(*clip > 0))
      return fail("attribute 'clip' is ", *clip, "; it must be a positive threshold");
    s.hasClip = true;
    s.clip = *clip;
  }
  auto inputForget = attrs.getInt("input_forget", 0);
  FB_TRY(check(inputForget));
  auto lbr = attrs.getInt("linear_before_reset", 0);
  FB_TRY(check(lbr));
  if (*inputForget && node.op() != OpKind::LSTM)
    return fail("attribute 'input_forget' exists only on LSTM");
  if (*lbr && node.op() != OpKind::GRU)
    return fail("attribute 'linear_before_reset' exists only on GRU");
  s.inputForget = *inputForget != 0;
  s.linearBeforeReset = *lbr != 0;

  // Hidden size: the attribute, else R's last dim.
  auto hidden = attrs.getInt("hidden_size", -1);
  FB_TRY(check(hidden));
  s.hiddenSize = *hidden;
  if (s.hiddenSize < 0) {
    const Value* r = node.numInputs() > 2 ? node.input(2) : nullptr;
    if (!r || r->type().rank() != 3 || !r->type().dims[2].isStatic())
      return fail("without a 'hidden_size' attribute the hidden size comes from input 2 (R), "
                  "which must be [num_directions, ",
                  s.numGates,
                  "*hidden_size, hidden_size] "
                  "with a static last dim");
    s.hiddenSize = r->type().dims[2].size();
  }
  if (s.hiddenSize <= 0)
    return fail("attribute 'hidden_size' is ", s.hiddenSize, "; it must be positive");

  // Activations: one set for all directions, or one set per direction.
  std::vector<std::string> names = defaultActivations(node.op());
  if (attrs.has("activations")) {
    const AttrValue* v = attrs.find("activations");
    const auto* list = std::get_if<std::vector<std::string>>(v);
    if (!list)
      return fail("attribute 'activations' must be a list of strings, got ", attrKindName(*v));
    names = *list;
  }
  if (int64_t(names.size()) == s.numActivations && s.numDirections == 2) {
    std::vector<std::string> twice = names;
    twice.insert(twice.end(), names.begin(), names.end());
    names = std::move(twice);
  }
  if (int64_t(names.size()) != s.numActivations * s.numDirections)
    return fail("attribute 'activations' has ", names.size(), " names; ", opName(node.op()),
                " with direction ", s.direction, " takes ", s.numActivations * s.numDirections);
  auto alphas = attrs.getFloats("activation_alpha", {});
  FB_TRY(check(alphas));
  auto betas = attrs.getFloats("activation_beta", {});
  FB_TRY(check(betas));
  // The parameters are consumed in the order of the activations that take them.
  size_t nextAlpha = 0, nextBeta = 0;
  for (const std::string& name : names) {
    const ActivationName* found = nullptr;
    for (const ActivationName& a : kActivations)
      if (equalsIgnoreCase(name, a.name))
        found = &a;
    if (!found)
      return fail("activation '", name, "' is not supported (", opName(node.op()),
                  " takes Sigmoid, Tanh, Relu, HardSigmoid, Affine, LeakyRelu, ThresholdedRelu, "
                  "ScaledTanh, Elu, Softsign and Softplus)");
    RecurrentActivation act{found->kind, found->alpha, found->beta};
    if (found->takesAlpha && nextAlpha < alphas->size())
      act.alpha = (*alphas)[nextAlpha++];
    if (found->takesBeta && nextBeta < betas->size())
      act.beta = (*betas)[nextBeta++];
    s.activations.push_back(act);
  }
  if (nextAlpha < alphas->size() || nextBeta < betas->size())
    return fail("attributes 'activation_alpha'/'activation_beta' give ", alphas->size(), "/",
                betas->size(), " values, but the activations take only ", nextAlpha, "/", nextBeta);
  return s;
}

std::string explainRecurrentNode(const Node& node) {
  Expected<RecurrentSpec> spec = readRecurrentSpec(node);
  if (!spec)
    return spec.error().message();
  const RecurrentSpec& s = *spec;
  const std::string H = std::to_string(s.hiddenSize);
  std::ostringstream os;
  auto acts = [&](int64_t d) {
    std::string out;
    const char* letters[] = {"f", "g", "h"};
    for (int64_t k = 0; k < s.numActivations; ++k)
      out += std::string(k ? ", " : "") + letters[k] + " = " + s.activation(d, k).str();
    return out;
  };
  const bool peepholes = s.op == OpKind::LSTM && node.numInputs() > 7 && node.input(7);
  auto peep = [&](const char* gate, const char* c) {
    return peepholes ? std::string(" + P") + gate + "⊙" + c : std::string();
  };
  switch (s.op) {
  case OpKind::LSTM:
    os << "LSTM: a long short-term memory layer. At each time step t it reads the input x_t and "
          "the previous hidden state h_{t-1} ("
       << H
       << " numbers per sequence) and updates a "
          "cell state c_t, the layer's long-term memory, through four gates:\n"
          "  i_t = f(x_t·Wiᵀ + h_{t-1}·Riᵀ"
       << peep("i", "c_{t-1}") << " + bi)   input gate: how much new information to write\n"
       << (s.inputForget
               ? "  f_t = 1 - i_t   forget gate, coupled to the input gate (input_forget)\n"
               : "  f_t = f(x_t·Wfᵀ + h_{t-1}·Rfᵀ" + peep("f", "c_{t-1}") +
                     " + bf)   forget gate: how much of c_{t-1} to keep\n")
       << "  c̃_t = g(x_t·Wcᵀ + h_{t-1}·Rcᵀ + bc)   candidate values\n"
          "  c_t = f_t ⊙ c_{t-1} + i_t ⊙ c̃_t\n"
       << "  o_t = f(x_t·Woᵀ + h_{t-1}·Roᵀ" << peep("o", "c_t")
       << " + bo)   output gate: how much of the memory to show\n"
          "  h_t = o_t ⊙ h(c_t)\n"
          "W stacks the four gates' input weights ("
       << 4 * s.hiddenSize << " rows, in the order i, o, f, c), R their recurrent weights.";
    break;
  case OpKind::GRU:
    os << "GRU: a gated recurrent unit. At each time step t it mixes the previous hidden state "
          "h_{t-1} ("
       << H
       << " numbers per sequence) with a candidate computed from the input "
          "x_t, through two gates:\n"
          "  z_t = f(x_t·Wzᵀ + h_{t-1}·Rzᵀ + bz)   update gate: how much of the old state to keep\n"
          "  r_t = f(x_t·Wrᵀ + h_{t-1}·Rrᵀ + br)   reset gate: how much of the old state the "
          "candidate sees\n"
       << (s.linearBeforeReset
               ? "  h̃_t = g(x_t·Whᵀ + Wbh + r_t ⊙ (h_{t-1}·Rhᵀ + Rbh))   (linear_before_reset)\n"
               : "  h̃_t = g(x_t·Whᵀ + (r_t ⊙ h_{t-1})·Rhᵀ + bh)\n")
       << "  h_t = (1 - z_t) ⊙ h̃_t + z_t ⊙ h_{t-1}\n"
          "W stacks the three gates' input weights ("
       << 3 * s.hiddenSize << " rows, in the order z, r, h), R their recurrent weights.";
    break;
  case OpKind::RNN:
    os << "RNN: a simple (Elman) recurrent layer. At each time step t the new hidden state (" << H
       << " numbers per sequence) is computed from the input x_t and the previous state:\n"
          "  h_t = f(x_t·Wᵀ + h_{t-1}·Rᵀ + Wb + Rb)";
    break;
  default:
    assert(false && "not a recurrent op");
  }
  if (s.op != OpKind::RNN)
    os << "\nEach bias b is the sum of the gate's two bias vectors in B (Wb + Rb).";
  os << "\nHidden size " << H << "; direction " << s.direction;
  if (s.numDirections == 2)
    os << " (a forward pass over t = 0, 1, ... and a backward pass over t = T-1, ..., 0, each "
          "with its own weights; Y holds both)";
  else if (s.direction == "reverse")
    os << " (time runs backwards, from the last step to the first)";
  os << ".\nActivations: " << acts(0);
  if (s.numDirections == 2)
    os << " (forward); " << acts(1) << " (backward)";
  os << ".";
  if (node.numInputs() > 4 && node.input(4))
    os << "\nsequence_lens gives each sequence of the batch its own length: its steps stop "
          "there (Y is 0 after), and Y_h holds the state at its last step.";
  if (s.hasClip)
    os << "\nGate inputs are clipped to [-" << fmt(s.clip) << ", " << fmt(s.clip) << "].";
  os << "\nOutputs: Y (every step's hidden state), Y_h (the last hidden state)"
     << (s.op == OpKind::LSTM ? ", Y_c (the last cell state)." : ".");
  return os.str();
}

} // namespace fb
