// Graph, Node and Value: construction, use lists, erasure, topological order and cloning.
#include "core/Graph.h"

#include <algorithm>
#include <cassert>
#include <unordered_set>

namespace fb {

// ---------------------------------------------------------------------------------------------
// Value

void Value::setConstantData(Tensor data) {
  assert(m_kind == ValueKind::Constant && "setConstantData on a non-constant value");
  m_type.dtype = data.dtype();
  m_type.dims.assign(data.sizes().begin(), data.sizes().end());
  m_constant = std::move(data);
}

bool Value::isGraphOutput() const {
  const auto& outs = m_graph->outputs();
  return std::find(outs.begin(), outs.end(), this) != outs.end();
}

void Value::replaceAllUsesWith(Value* other) {
  assert(other != this && "replaceAllUsesWith itself");
  std::vector<Use> uses = m_uses;
  for (const Use& u : uses)
    u.user->setInput(u.operand, other);
  for (size_t i = 0; i < m_graph->m_outputs.size(); ++i)
    if (m_graph->m_outputs[i] == this)
      m_graph->m_outputs[i] = other;
}

// ---------------------------------------------------------------------------------------------
// Node

std::string Node::describe() const {
  std::string s = "#" + std::to_string(m_id);
  if (!m_name.empty())
    s += " \"" + m_name + "\"";
  s += " (";
  s += opName(m_op);
  s += ")";
  return s;
}

void Node::setInput(size_t i, Value* v) {
  assert(i < m_inputs.size() && "setInput index out of range");
  if (Value* old = m_inputs[i]) {
    auto it = std::find(old->m_uses.begin(), old->m_uses.end(), Use{this, unsigned(i)});
    assert(it != old->m_uses.end() && "use list out of sync");
    old->m_uses.erase(it);
  }
  m_inputs[i] = v;
  if (v)
    v->m_uses.push_back(Use{this, unsigned(i)});
}

void Node::addInput(Value* v) {
  m_inputs.push_back(nullptr);
  setInput(m_inputs.size() - 1, v);
}

void Node::truncateInputs(size_t n) {
  while (m_inputs.size() > n) {
    setInput(m_inputs.size() - 1, nullptr);
    m_inputs.pop_back();
  }
}

void Node::setProvenance(std::vector<NodeId> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  m_provenance = std::move(ids);
}

void Node::absorbProvenanceOf(const Node& other) {
  // An empty set means "only myself"; once another node is absorbed, the set must say so.
  if (m_provenance.empty())
    m_provenance.push_back(m_id);
  addProvenanceFrom(other);
}

void Node::addProvenanceFrom(const Node& other) {
  std::vector<NodeId> ids = m_provenance;
  if (other.m_provenance.empty())
    ids.push_back(other.m_id);
  else
    ids.insert(ids.end(), other.m_provenance.begin(), other.m_provenance.end());
  setProvenance(std::move(ids));
}

Graph* Node::body() const {
  return m_op == OpKind::Fused && !m_bodies.empty() ? m_bodies.front().graph.get() : nullptr;
}

void Node::setBody(std::unique_ptr<Graph> body) {
  m_bodies.clear();
  if (body)
    addBody("body", std::move(body));
}

Graph* Node::bodyNamed(std::string_view role) const {
  for (const NodeBody& b : m_bodies)
    if (b.role == role)
      return b.graph.get();
  return nullptr;
}

Graph* Node::addBody(std::string role, std::unique_ptr<Graph> body) {
  assert(body && "addBody without a graph");
  assert(!bodyNamed(role) && "addBody: the role is taken");
  body->m_parent = m_graph;
  body->m_parentNode = this;
  Graph* raw = body.get();
  m_bodies.push_back(NodeBody{std::move(role), std::move(body)});
  return raw;
}

void Node::replaceBody(std::string_view role, std::unique_ptr<Graph> body) {
  for (NodeBody& b : m_bodies)
    if (b.role == role) {
      body->m_parent = m_graph;
      body->m_parentNode = this;
      b.graph = std::move(body);
      return;
    }
  assert(false && "replaceBody: no body with this role");
}

// ---------------------------------------------------------------------------------------------
// Graph

Graph::Graph(std::string name) : m_name(std::move(name)) {}

Graph::~Graph() {
  // Nodes reference values through raw pointers; drop nodes first so no dangling use is touched.
  m_nodes.clear();
  m_values.clear();
}

Graph* Graph::root() {
  Graph* g = this;
  while (g->m_parent)
    g = g->m_parent;
  return g;
}

NodeId Graph::allocateNodeId() { return root()->m_nextNodeId++; }

void Graph::reserveNodeId(NodeId id) {
  Graph* r = root();
  if (id >= r->m_nextNodeId)
    r->m_nextNodeId = id + 1;
}

size_t Graph::makeNodeNamesUnique() {
  std::unordered_set<std::string> taken;
  for (const auto& n : m_nodes)
    taken.insert(n->name());
  std::unordered_set<std::string> seen;
  size_t renamed = 0;
  for (const auto& n : m_nodes) {
    for (const NodeBody& b : n->bodies())
      renamed += b.graph->makeNodeNamesUnique();
    if (n->name().empty() || seen.insert(n->name()).second)
      continue;
    for (size_t k = 1;; ++k) {
      std::string candidate = n->name() + "_" + std::to_string(k);
      if (!taken.count(candidate)) {
        taken.insert(candidate);
        seen.insert(candidate);
        n->setName(candidate);
        break;
      }
    }
    ++renamed;
  }
  return renamed;
}

std::string Graph::uniqueValueName(const std::string& base) {
  std::string stem = base.empty() ? "t" : base;
  if (!m_valueByName.count(stem))
    return stem;
  for (;;) {
    std::string candidate = stem + "_" + std::to_string(++m_nameCounter);
    if (!m_valueByName.count(candidate))
      return candidate;
  }
}

Value* Graph::newValue(const std::string& name, ValueKind kind) {
  auto v = std::make_unique<Value>();
  v->m_name = uniqueValueName(name);
  v->m_kind = kind;
  v->m_graph = this;
  Value* raw = v.get();
  m_valueByName[raw->m_name] = raw;
  m_values.push_back(std::move(v));
  return raw;
}

void Graph::renameValue(Value* v, const std::string& name) {
  assert(!m_valueByName.count(name) && "renameValue to a name in use");
  m_valueByName.erase(v->m_name);
  v->m_name = name;
  m_valueByName[name] = v;
}

void Graph::setInputOrder(std::vector<Value*> order) {
  assert(order.size() == m_inputs.size() &&
         std::is_permutation(order.begin(), order.end(), m_inputs.begin()) &&
         "setInputOrder must keep the same inputs");
  m_inputs = std::move(order);
}

Value* Graph::findValue(const std::string& name) const {
  auto it = m_valueByName.find(name);
  return it == m_valueByName.end() ? nullptr : it->second;
}

Value* Graph::addInput(const std::string& name, TensorType type) {
  Value* v = newValue(name, ValueKind::Input);
  v->m_type = std::move(type);
  m_inputs.push_back(v);
  return v;
}

Value* Graph::addConstant(const std::string& name, Tensor data) {
  Value* v = newValue(name, ValueKind::Constant);
  v->setConstantData(std::move(data));
  m_constants.push_back(v);
  return v;
}

void Graph::addOutput(Value* v) { m_outputs.push_back(v); }
void Graph::setOutputs(std::vector<Value*> outputs) { m_outputs = std::move(outputs); }

void Graph::eraseValue(Value* v) {
  assert(!v->hasUses() && "eraseValue on a value that still has uses");
  assert(!v->isGraphOutput() && "eraseValue on a graph output");
  auto drop = [v](std::vector<Value*>& list) {
    list.erase(std::remove(list.begin(), list.end(), v), list.end());
  };
  drop(m_inputs);
  drop(m_constants);
  m_valueByName.erase(v->m_name);
  auto it = std::find_if(m_values.begin(), m_values.end(),
                         [v](const std::unique_ptr<Value>& p) { return p.get() == v; });
  assert(it != m_values.end() && "eraseValue of a value owned elsewhere");
  m_values.erase(it);
}

Node* Graph::createNode(NodeId id, OpKind op, const std::vector<Value*>& inputs,
                        size_t numOutputs, const std::vector<std::string>& outputNames,
                        const std::string& name) {
  auto n = std::make_unique<Node>();
  n->m_id = id;
  n->m_op = op;
  n->m_name = name;
  n->m_graph = this;
  Node* raw = n.get();
  for (Value* in : inputs)
    raw->addInput(in);
  for (size_t i = 0; i < numOutputs; ++i) {
    std::string outName = i < outputNames.size() ? outputNames[i] : std::string();
    if (outName.empty())
      outName = "t" + std::to_string(id) + (numOutputs > 1 ? "_" + std::to_string(i) : "");
    Value* v = newValue(outName, ValueKind::NodeOutput);
    v->m_producer = raw;
    v->m_resultIndex = unsigned(i);
    raw->m_outputs.push_back(v);
  }
  reserveNodeId(id);
  n.release();
  return raw;
}

Node* Graph::addNode(OpKind op, const std::vector<Value*>& inputs, size_t numOutputs,
                     const std::vector<std::string>& outputNames, const std::string& name) {
  return addNodeWithId(allocateNodeId(), op, inputs, numOutputs, outputNames, name);
}

Node* Graph::addNodeWithId(NodeId id, OpKind op, const std::vector<Value*>& inputs,
                           size_t numOutputs, const std::vector<std::string>& outputNames,
                           const std::string& name) {
  Node* n = createNode(id, op, inputs, numOutputs, outputNames, name);
  m_nodes.emplace_back(n);
  return n;
}

Node* Graph::insertNodeBefore(Node* before, OpKind op, const std::vector<Value*>& inputs,
                              size_t numOutputs, const std::vector<std::string>& outputNames,
                              const std::string& name) {
  auto it = std::find_if(m_nodes.begin(), m_nodes.end(),
                         [before](const std::unique_ptr<Node>& p) { return p.get() == before; });
  assert(it != m_nodes.end() && "insertNodeBefore: anchor not in this graph");
  Node* n = createNode(allocateNodeId(), op, inputs, numOutputs, outputNames, name);
  m_nodes.insert(it, std::unique_ptr<Node>(n));
  return n;
}

void Graph::eraseNode(Node* node) {
  for (Value* out : node->m_outputs) {
    (void)out;
    assert(!out->hasUses() && "eraseNode: an output still has uses");
    assert(!out->isGraphOutput() && "eraseNode: an output is a graph output");
  }
  node->truncateInputs(0);
  std::vector<Value*> outs = node->m_outputs;
  auto it = std::find_if(m_nodes.begin(), m_nodes.end(),
                         [node](const std::unique_ptr<Node>& p) { return p.get() == node; });
  assert(it != m_nodes.end() && "eraseNode: node not in this graph");
  m_nodes.erase(it);
  for (Value* out : outs) {
    m_valueByName.erase(out->m_name);
    auto vit = std::find_if(m_values.begin(), m_values.end(),
                            [out](const std::unique_ptr<Value>& p) { return p.get() == out; });
    m_values.erase(vit);
  }
}

Node* Graph::findNode(NodeId id) const {
  for (const auto& n : m_nodes) {
    if (n->m_id == id)
      return n.get();
    for (const NodeBody& b : n->m_bodies)
      if (Node* inner = b.graph->findNode(id))
        return inner;
  }
  return nullptr;
}

Status Graph::topologicalSort() {
  // Kahn's algorithm, always taking the earliest ready node in the current order, so an already
  // valid order is kept unchanged.
  std::unordered_map<const Node*, size_t> position;
  for (size_t i = 0; i < m_nodes.size(); ++i)
    position[m_nodes[i].get()] = i;
  std::vector<size_t> pending(m_nodes.size(), 0);
  for (size_t i = 0; i < m_nodes.size(); ++i)
    for (Value* in : m_nodes[i]->m_inputs)
      if (in && in->m_producer && in->m_producer->m_graph == this)
        ++pending[i];
  std::vector<size_t> ready;
  for (size_t i = 0; i < m_nodes.size(); ++i)
    if (pending[i] == 0)
      ready.push_back(i);
  std::vector<size_t> order;
  order.reserve(m_nodes.size());
  auto cmp = [](size_t a, size_t b) { return a > b; }; // min-heap on position
  std::make_heap(ready.begin(), ready.end(), cmp);
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), cmp);
    size_t i = ready.back();
    ready.pop_back();
    order.push_back(i);
    for (Value* out : m_nodes[i]->m_outputs)
      for (const Use& u : out->m_uses) {
        auto pit = position.find(u.user);
        if (pit == position.end())
          continue;
        if (--pending[pit->second] == 0) {
          ready.push_back(pit->second);
          std::push_heap(ready.begin(), ready.end(), cmp);
        }
      }
  }
  if (order.size() != m_nodes.size()) {
    for (size_t i = 0; i < m_nodes.size(); ++i)
      if (pending[i] != 0)
        return makeError("graph '", m_name, "' has a cycle through node ",
                         m_nodes[i]->describe());
  }
  std::vector<std::unique_ptr<Node>> sorted;
  sorted.reserve(m_nodes.size());
  for (size_t i : order)
    sorted.push_back(std::move(m_nodes[i]));
  m_nodes = std::move(sorted);
  return Status::success();
}

void Graph::cloneInto(Graph& dst, std::unordered_map<const Value*, Value*>& map) const {
  dst.m_opset = m_opset;
  dst.m_nameCounter = m_nameCounter;
  // Keep the relative order of inputs, constants and node outputs so names come out identical.
  for (Value* in : m_inputs)
    map[in] = dst.addInput(in->m_name, in->m_type);
  for (Value* c : m_constants) {
    Value* nc = dst.addConstant(c->m_name, c->m_constant);
    nc->m_type = c->m_type; // keeps quantization parameters
    map[c] = nc;
  }
  for (const auto& n : m_nodes) {
    std::vector<Value*> ins;
    for (Value* in : n->m_inputs)
      ins.push_back(in ? map.at(in) : nullptr);
    std::vector<std::string> outNames;
    for (Value* out : n->m_outputs)
      outNames.push_back(out->m_name);
    Node* nn = dst.addNodeWithId(n->m_id, n->m_op, ins, n->m_outputs.size(), outNames, n->m_name);
    nn->m_attrs = n->m_attrs;
    nn->m_provenance = n->m_provenance;
    for (size_t i = 0; i < n->m_outputs.size(); ++i) {
      nn->m_outputs[i]->m_type = n->m_outputs[i]->m_type;
      nn->m_outputs[i]->m_shapeValue = n->m_outputs[i]->m_shapeValue;
      map[n->m_outputs[i]] = nn->m_outputs[i];
    }
    for (const NodeBody& b : n->m_bodies) {
      auto body = std::make_unique<Graph>(b.graph->m_name);
      body->m_parent = &dst;
      body->m_parentNode = nn;
      std::unordered_map<const Value*, Value*> bodyMap;
      b.graph->cloneInto(*body, bodyMap);
      nn->m_bodies.push_back(NodeBody{b.role, std::move(body)});
    }
  }
  for (Value* out : m_outputs)
    dst.m_outputs.push_back(map.at(out));
}

std::unique_ptr<Graph> Graph::clone() const {
  auto g = std::make_unique<Graph>(m_name);
  std::unordered_map<const Value*, Value*> map;
  cloneInto(*g, map);
  const Graph* r = this;
  while (r->m_parent)
    r = r->m_parent;
  g->m_nextNodeId = std::max(g->m_nextNodeId, r->m_nextNodeId);
  return g;
}

} // namespace fb
