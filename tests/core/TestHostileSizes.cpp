// Sizes that do not fit: shapes whose products wrap around int64, pads and repeats that overflow,
// ranges over the whole int64 span. Each ends in an error naming the node and what overflowed
// (never a wrapped-around size that later code trusts), at shape inference and at run time.
#include "core/Interpreter.h"
#include "core/ShapeInference.h"

#include <QtTest/QtTest>

#include <climits>

using namespace fb;

namespace {

bool contains(const Error& e, const std::string& part) {
  return e.message().find(part) != std::string::npos;
}

Tensor i64s(const std::vector<int64_t>& v) {
  return Tensor::fromVector<int64_t>({int64_t(v.size())}, v);
}

} // namespace

class TestHostileSizes : public QObject {
  Q_OBJECT

private Q_SLOTS:
  void checkedProductSeesZeroBeyondOverflow() {
    const int64_t big = int64_t(1) << 40;
    QCOMPARE(checkedProduct({big, big, 0}), std::optional<int64_t>(0));
    QVERIFY(!checkedProduct({big, big, 2}));
    QVERIFY(!hasCountableSize(TensorType::of(DType::F32, {big, big})));
    QVERIFY(hasCountableSize(TensorType::of(DType::F32, {big, big, 0})));
    QVERIFY(hasCountableSize(TensorType::of(DType::I8, {int64_t(1) << 62})));
    QVERIFY(!hasCountableSize(TensorType::of(DType::F32, {int64_t(1) << 62})));
  }

  void reshapeWhoseProductWraps() {
    // 1099511627781 * 8116567128549412046 wraps around to 6 in int64.
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::F32, {2, 3}));
    Value* shape = g.addConstant("shape", i64s({1099511627781, 8116567128549412046}));
    Node* n = g.addNode(OpKind::Reshape, {x, shape}, 1, {"y"}, "wrap");
    g.addOutput(n->output(0));
    Status st = inferShapes(g);
    QVERIFY(!st.ok());
    QVERIFY2(contains(st.error(), "\"wrap\" (Reshape)") && contains(st.error(), "overflows 64 bits"),
             st.error().message().c_str());

    // The same shape arriving at run time.
    Graph r;
    Value* rx = r.addInput("x", TensorType::of(DType::F32, {2, 3}));
    Value* rs = r.addInput("shape", TensorType::of(DType::I64, {2}));
    Node* rn = r.addNode(OpKind::Reshape, {rx, rs}, 1, {"y"}, "wrapAtRunTime");
    r.addOutput(rn->output(0));
    QVERIFY(inferShapes(r).ok());
    auto out = evaluateNode(*rn, {Tensor::fromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
                                  i64s({1099511627781, 8116567128549412046})});
    QVERIFY(!out.ok());
    QVERIFY2(contains(out.error(), "overflows 64 bits"), out.error().message().c_str());
  }

  void tileAndPadThatOverflow() {
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::F32, {2, 2}));
    Value* reps = g.addConstant("reps", i64s({int64_t(1) << 32, int64_t(1) << 32}));
    Node* tile = g.addNode(OpKind::Tile, {x, reps}, 1, {"t"}, "hugeTile");
    g.addOutput(tile->output(0));
    Status st = inferShapes(g);
    QVERIFY(!st.ok());
    QVERIFY2(contains(st.error(), "hugeTile"), st.error().message().c_str());

    auto t = evaluateNode(
        *tile, {Tensor::fromVector<float>({2, 2}, {1, 2, 3, 4}), i64s({int64_t(1) << 62, 4})});
    QVERIFY(!t.ok());
    QVERIFY2(contains(t.error(), "overflows 64 bits"), t.error().message().c_str());

    Graph p;
    Value* px = p.addInput("x", TensorType::of(DType::F32, {2, 2}));
    Value* pads = p.addConstant("pads", i64s({0, INT64_MAX, 0, 5}));
    Node* pad = p.addNode(OpKind::Pad, {px, pads}, 1, {"p"}, "hugePad");
    p.addOutput(pad->output(0));
    st = inferShapes(p);
    QVERIFY(!st.ok());
    QVERIFY2(contains(st.error(), "hugePad") && contains(st.error(), "overflows 64 bits"),
             st.error().message().c_str());
  }

  void windowAttributesBeyondTheLimit() {
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::F32, {1, 1, 4, 4}));
    Node* pool = g.addNode(OpKind::MaxPool, {x}, 1, {"y"}, "hugePool");
    pool->attrs().set("kernel_shape", std::vector<int64_t>{2, 2});
    pool->attrs().set("pads", std::vector<int64_t>{0, 0, int64_t(1) << 40, 0});
    g.addOutput(pool->output(0));
    Status st = inferShapes(g);
    QVERIFY(!st.ok());
    QVERIFY2(contains(st.error(), "hugePool") && contains(st.error(), "pads"),
             st.error().message().c_str());
  }

  void rangeOverTheWholeInt64Span() {
    Graph g;
    Value* a = g.addConstant("a", Tensor::scalar<int64_t>(INT64_MIN));
    Value* b = g.addConstant("b", Tensor::scalar<int64_t>(INT64_MAX));
    Value* one = g.addConstant("one", Tensor::scalar<int64_t>(1));
    Node* all = g.addNode(OpKind::Range, {a, b, one}, 1, {"all"}, "everyInt64");
    g.addOutput(all->output(0));
    Status st = inferShapes(g);
    QVERIFY(!st.ok());
    QVERIFY2(contains(st.error(), "everyInt64") && contains(st.error(), "overflows 64 bits"),
             st.error().message().c_str());

    // Four steps of 2^62 span it exactly; i * delta passes int64's range on the way.
    Graph q;
    Value* qa = q.addConstant("a", Tensor::scalar<int64_t>(INT64_MIN));
    Value* qb = q.addConstant("b", Tensor::scalar<int64_t>(INT64_MAX));
    Value* qd = q.addConstant("d", Tensor::scalar<int64_t>(int64_t(1) << 62));
    Node* quarter = q.addNode(OpKind::Range, {qa, qb, qd}, 1, {"r"}, "quarters");
    q.addOutput(quarter->output(0));
    QVERIFY(inferShapes(q).ok());
    QCOMPARE(quarter->output(0)->type().str(), std::string("i64[4]"));
    auto r = evaluateNode(*quarter,
                          {Tensor::scalar<int64_t>(INT64_MIN), Tensor::scalar<int64_t>(INT64_MAX),
                           Tensor::scalar<int64_t>(int64_t(1) << 62)});
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message().c_str());
    QCOMPARE((*r)[0].toInt64Vector(),
             (std::vector<int64_t>{INT64_MIN, -(int64_t(1) << 62), 0, int64_t(1) << 62}));
  }

  void resizeByAHugeScale() {
    Graph g;
    Value* x = g.addInput("x", TensorType::of(DType::F32, {1, 1, 2, 2}));
    Value* scales = g.addConstant("scales", Tensor::fromVector<float>({4}, {1, 1, 1e30f, 1}));
    Node* n = g.addNode(OpKind::Resize, {x, nullptr, scales}, 1, {"y"}, "hugeResize");
    g.addOutput(n->output(0));
    Status st = inferShapes(g);
    QVERIFY(!st.ok());
    QVERIFY2(contains(st.error(), "hugeResize"), st.error().message().c_str());
  }
};

QTEST_APPLESS_MAIN(TestHostileSizes)
#include "TestHostileSizes.moc"
