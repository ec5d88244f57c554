// Tests of the CPU backend on the indexing, scan, selection and added reduction ops: each op,
// compiled on its own and after the O3 pipeline, against the reference interpreter on the same
// inputs (duplicate scatter targets, TopK ties, empty tensors included), and the same error as
// the interpreter for an out-of-range index.
#include "OneNodeCompare.h"

#include "core/RandomInputs.h"

using namespace fb;
using namespace fb::cg;
using namespace fb::test;

class TestIndexingOps : public QObject {
  Q_OBJECT

private Q_SLOTS:
  void triluAndCumSum() {
    CHECK_OP(OpKind::Trilu, (Ops{in(ramp({2, 3, 5})), cst(Tensor::scalar<int64_t>(1))}), Attrs{}, 1);
    CHECK_OP(OpKind::Trilu, (Ops{in(ramp({4, 4}))}), (Attrs{{"upper", int64_t(0)}}), 1);
    CHECK_OP(OpKind::Trilu, (Ops{in(ramp({3, 4})), in(Tensor::scalar<int64_t>(-1))}), Attrs{}, 1);
    for (int64_t exclusive : {0, 1})
      for (int64_t reverse : {0, 1})
        CHECK_OP(OpKind::CumSum, (Ops{in(ramp({3, 5, 2})), cst(Tensor::scalar<int64_t>(1))}),
                 (Attrs{{"exclusive", exclusive}, {"reverse", reverse}}), 1);
    CHECK_OP(OpKind::CumSum, (Ops{in(i64({5}, {1, 2, 3, 4, 5})), cst(Tensor::scalar<int32_t>(0))}),
             Attrs{}, 1);
  }

  void reductions() {
    for (OpKind k : {OpKind::ReduceProd, OpKind::ReduceL1, OpKind::ReduceL2,
                     OpKind::ReduceLogSumExp, OpKind::ReduceSumSquare}) {
      CHECK_OP(k, (Ops{in(ramp({2, 3, 4}))}), (Attrs{{"axes", std::vector<int64_t>{1}}}), 1);
      CHECK_OP(k, (Ops{in(ramp({2, 3, 4})), cst(i64({2}, {0, -1}))}), (Attrs{{"keepdims", int64_t(0)}}), 1);
      CHECK_OP(k, (Ops{in(ramp({2, 0, 4}))}), (Attrs{{"axes", std::vector<int64_t>{1}}}), 1);
    }
    // Large inputs: a LogSumExp that exponentiates without shifting by the maximum overflows.
    CHECK_OP(OpKind::ReduceLogSumExp, (Ops{in(f32({2, 3}, {200, 150, 199, -1000, 90, 89}))}),
             (Attrs{{"axes", std::vector<int64_t>{1}}}), 1);
    Tensor positive(DType::F32, {3, 4});
    for (int64_t i = 0; i < 12; ++i)
      positive.setFromDouble(i, 0.5 + double(i));
    CHECK_OP(OpKind::ReduceLogSum, (Ops{in(positive)}), (Attrs{{"axes", std::vector<int64_t>{0}}}), 1);
    CHECK_OP(OpKind::ReduceL1, (Ops{in(i64({2, 3}, {1, -2, 3, -4, 5, -6}))}), Attrs{}, 1);
    for (int64_t last : {0, 1})
      CHECK_OP(OpKind::ArgMin, (Ops{in(ramp({3, 6}))}),
               (Attrs{{"axis", int64_t(1)}, {"select_last_index", last}}), 1);
    CHECK_OP(OpKind::ArgMin, (Ops{in(i64({2, 3}, {5, 1, 1, -3, 7, -3}))}),
             (Attrs{{"axis", int64_t(1)}, {"keepdims", int64_t(0)}}), 1);
    CHECK_OP(OpKind::Hardmax, (Ops{in(ramp({3, 2, 5}))}), Attrs{}, 1);
    CHECK_OP(OpKind::Hardmax, (Ops{in(ramp({3, 2, 5}))}), (Attrs{{"axis", int64_t(0)}}), 1);
  }

  void gathersAndOneHot() {
    Tensor d = ramp({3, 4}, 11);
    CHECK_OP(OpKind::GatherElements, (Ops{in(d), in(i64({2, 4}, {0, 2, -1, 1, 2, 2, 0, -3}))}),
             Attrs{}, 1);
    CHECK_OP(OpKind::GatherElements, (Ops{in(d), in(i64({3, 2}, {3, 0, -4, 1, 2, 2}))}),
             (Attrs{{"axis", int64_t(1)}}), 1);
    CHECK_OP(OpKind::GatherElements, (Ops{in(d), in(i64({0, 4}, {}))}), Attrs{}, 1);
    Tensor D = ramp({2, 3, 4}, 13);
    CHECK_OP(OpKind::GatherND, (Ops{in(D), in(i64({2, 2}, {1, 2, 0, -1}))}), Attrs{}, 1);
    CHECK_OP(OpKind::GatherND, (Ops{in(D), in(i64({2, 1, 2}, {2, 3, -1, 0}))}),
             (Attrs{{"batch_dims", int64_t(1)}}), 1);
    CHECK_OP(OpKind::OneHot,
             (Ops{in(i64({2, 3}, {0, -1, 5, 2, -6, 1})), cst(Tensor::scalar<int64_t>(5)),
                  in(f32({2}, {-1, 3}))}),
             (Attrs{{"axis", int64_t(1)}}), 1);
  }

  void scattersAndTopK() {
    Tensor data = ramp({3, 4}, 5);
    // Duplicate targets: the later update wins, or both combine in order.
    for (const char* red : {"none", "add", "mul", "max", "min"}) {
      CHECK_OP(OpKind::ScatterElements,
               (Ops{in(data), in(i64({2, 3}, {1, 1, 0, 2, -1, 2})), in(ramp({2, 3}, 3))}),
               (Attrs{{"axis", int64_t(0)}, {"reduction", std::string(red)}}), 1);
      CHECK_OP(OpKind::ScatterND,
               (Ops{in(data), in(i64({3, 1}, {2, 0, 2})), in(ramp({3, 4}, 9))}),
               (Attrs{{"reduction", std::string(red)}}), 1);
    }
    CHECK_OP(OpKind::ScatterND, (Ops{in(data), in(i64({2, 2}, {0, 3, -1, 1})), in(f32({2}, {9, 8}))}),
             Attrs{}, 1);
    CHECK_OP(OpKind::ScatterElements, (Ops{in(data), in(i64({0, 4}, {})), in(ramp({0, 4}))}), Attrs{}, 1);
    for (int64_t largest : {0, 1})
      CHECK_OP(OpKind::TopK, (Ops{in(ramp({3, 9}, 4)), cst(i64({1}, {4}))}),
               (Attrs{{"largest", largest}}), 2);
    CHECK_OP(OpKind::TopK, (Ops{in(ramp({5, 2}, 3)), cst(i64({1}, {2}))}), (Attrs{{"axis", int64_t(0)}}), 2);
  }

  void depthSpace() {
    for (const char* mode : {"DCR", "CRD"})
      CHECK_OP(OpKind::DepthToSpace, (Ops{in(ramp({2, 8, 2, 3}, 17))}),
               (Attrs{{"blocksize", int64_t(2)}, {"mode", std::string(mode)}}), 1);
    CHECK_OP(OpKind::SpaceToDepth, (Ops{in(ramp({1, 2, 4, 6}, 19))}), (Attrs{{"blocksize", int64_t(2)}}), 1);
  }

  /// An index out of range gives the interpreter's error in the CPU run, not a clamped result.
  void outOfRangeIndices() {
    struct Case {
      OpKind op;
      Ops operands;
      Attrs attrs;
      const char* message;
    };
    Tensor d = ramp({3, 4});
    std::vector<Case> cases = {
        {OpKind::GatherElements, {in(d), in(i64({1, 2}, {0, 3}))}, {}, "index 3 is out of range for axis 0 of size 3"},
        {OpKind::GatherND, {in(d), in(i64({1, 2}, {1, -5}))}, {}, "index -5 is out of range for axis 1 of size 4"},
        {OpKind::ScatterElements, {in(d), in(i64({1, 1}, {4})), in(f32({1, 1}, {0}))},
         {{"axis", int64_t(1)}}, "index 4 is out of range for axis 1 of size 4"},
        {OpKind::ScatterND, {in(d), in(i64({1, 1}, {-4})), in(f32({1, 4}, {0, 0, 0, 0}))}, {},
         "index -4 is out of range for axis 0 of size 3"},
    };
    for (const Case& c : cases) {
      std::vector<Tensor> feeds;
      auto g = oneNode(c.op, c.operands, c.attrs, 1, feeds);
      std::string r = compare(*g, feeds);
      QVERIFY2(r.rfind("error: ", 0) == 0 && r.find(c.message) != std::string::npos,
               (std::string(opName(c.op)) + ": " + r).c_str());
    }
  }

  /// Under O3 an index operand computed by an injective op (here a Transpose) stays a tensor of
  /// its own, so the gather still fuses with its consumer and its indices are still checked.
  void computedIndicesUnderO3() {
    for (int64_t bad : {0, 1}) {
      Graph g("computed");
      Value* data = g.addInput("data", TensorType::of(DType::F32, {2, 4}));
      Value* ids = g.addInput("ids", TensorType::of(DType::I64, {4, 2}));
      Node* t = g.addNode(OpKind::Transpose, {ids}, 1, {}, "t");
      t->attrs().set("perm", std::vector<int64_t>{1, 0});
      Node* ge = g.addNode(OpKind::GatherElements, {data, t->output(0)}, 1, {}, "ge");
      ge->attrs().set("axis", int64_t(1));
      Node* r = g.addNode(OpKind::Relu, {ge->output(0)}, 1, {}, "relu");
      g.addOutput(r->output(0));
      std::vector<Tensor> feeds{ramp({2, 4}), i64({4, 2}, {0, 3, -1, 2, 2, bad ? 4 : 1, 3, -4})};
      std::string res = compare(g, feeds, "O3");
      if (bad)
        QVERIFY2(res.rfind("error: ", 0) == 0 &&
                     res.find("index 4 is out of range for axis 1 of size 4") != std::string::npos,
                 res.c_str());
      else
        QVERIFY2(res.empty(), res.c_str());
    }
  }

  /// NonZero's output shape depends on its data: the CPU backend refuses it by name.
  void nonZeroIsRefused() {
    std::vector<Tensor> feeds;
    auto g = oneNode(OpKind::NonZero, {in(ramp({2, 3}))}, {}, 1, feeds);
    QVERIFY(inferShapes(*g).ok());
    auto model = CompiledModel::compile(*g, CompileOptions{});
    QVERIFY(!model.ok());
    const std::string& m = model.error().message();
    QVERIFY2(m.find("NonZero") != std::string::npos, m.c_str());
  }
};

QTEST_GUILESS_MAIN(TestIndexingOps)
#include "TestIndexingOps.moc"
