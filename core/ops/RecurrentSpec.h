// The attributes of the ONNX recurrent ops (RNN, GRU, LSTM) read and checked once, for the
// shape inference, the interpreter kernel, the CPU lowering and the inspector's explanation.
#pragma once

#include "core/Graph.h"

#include <string>
#include <vector>

namespace fb {

/// The activation functions the recurrent ops accept by name (ONNX's list for RNN/GRU/LSTM).
enum class RecurrentActivationKind : uint8_t {
  Sigmoid,
  Tanh,
  Relu,
  HardSigmoid,
  Affine,
  LeakyRelu,
  ThresholdedRelu,
  ScaledTanh,
  Elu,
  Softsign,
  Softplus,
};

/// One activation with its parameters resolved (defaults filled in).
struct RecurrentActivation {
  RecurrentActivationKind kind = RecurrentActivationKind::Sigmoid;
  float alpha = 0;
  float beta = 0;
  /// The ONNX spelling: "Sigmoid", "HardSigmoid", ...
  const char* name() const;
  /// f(x) in double, as the interpreter computes it (softplus in its overflow-free form).
  double apply(double x) const;
  /// "Sigmoid" or "HardSigmoid(alpha=0.2, beta=0.5)".
  std::string str() const;
};

/// Everything an RNN, GRU or LSTM node's attributes and weight shapes say about its cell.
struct RecurrentSpec {
  OpKind op = OpKind::LSTM;
  int64_t numGates = 4;       ///< rows of W per hidden unit: RNN 1, GRU 3 (z,r,h), LSTM 4 (i,o,f,c)
  int64_t numActivations = 3; ///< activations per direction: RNN 1 (f), GRU 2 (f,g), LSTM 3 (f,g,h)
  std::string direction = "forward"; ///< forward, reverse or bidirectional
  int64_t numDirections = 1;
  int64_t hiddenSize = 0;
  int64_t layout = 0; ///< 0: X is [seq, batch, input]; 1: [batch, seq, input]
  bool hasClip = false;
  float clip = 0;                 ///< pre-activations are clamped to [-clip, clip] when hasClip
  bool inputForget = false;       ///< LSTM: the forget gate is 1 - input gate
  bool linearBeforeReset = false; ///< GRU: r multiplies (H·Rhᵀ + Rbh) instead of H
  /// numDirections × numActivations entries, direction 0 (forward) first.
  std::vector<RecurrentActivation> activations;

  /// Direction d (0 or 1) walks time backwards.
  bool reversed(int64_t d) const {
    return direction == "reverse" || (d == 1 && numDirections == 2);
  }
  /// Activation k (0: f, 1: g, 2: h) of direction d.
  const RecurrentActivation& activation(int64_t d, int64_t k) const {
    return activations[size_t(d * numActivations + k)];
  }
};

/// True for RNN, GRU and LSTM.
bool isRecurrentOp(OpKind op);

/// Reads and validates the attributes of a recurrent node. The hidden size comes from the
/// `hidden_size` attribute or, without it, from R's last dim (R must then have a static type).
/// Errors name the node, the attribute and what was expected.
Expected<RecurrentSpec> readRecurrentSpec(const Node& node);

/// A short explanation of the node's cell for a student: the gates, the equations with the
/// actual activations, the hidden size and the direction. Several lines.
std::string explainRecurrentNode(const Node& node);

} // namespace fb
