// Tests of the conformance runner's assert_allclose-style comparison.
#include "tests/conformance/TensorCompare.h"

#include <QtTest/QtTest>

#include <cmath>
#include <limits>

using namespace fb;
using namespace fb::conformance;

class TestTensorCompare : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void floatsUseRelativeAndAbsoluteTolerance() {
    Tensor expected = Tensor::fromVector<float>({2}, {1000.f, 0.f});
    // 1000 * 1e-3 = 1.0 allowed at the first element; 1e-7 at the second.
    QVERIFY(!compareTensors(Tensor::fromVector<float>({2}, {1000.9f, 5e-8f}), expected));
    auto bad = compareTensors(Tensor::fromVector<float>({2}, {1001.5f, 0.f}), expected);
    QVERIFY(bad);
    QVERIFY2(bad->find("1 of 2 elements differ; first at [0]") != std::string::npos, bad->c_str());
    QVERIFY(compareTensors(Tensor::fromVector<float>({2}, {1000.f, 1e-6f}), expected));
  }

  void nanEqualsNanButNotNumbers() {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    Tensor expected = Tensor::fromVector<float>({3}, {nan, inf, -inf});
    QVERIFY(!compareTensors(Tensor::fromVector<float>({3}, {nan, inf, -inf}), expected));
    QVERIFY(compareTensors(Tensor::fromVector<float>({3}, {0.f, inf, -inf}), expected));
    QVERIFY(compareTensors(Tensor::fromVector<float>({3}, {nan, -inf, -inf}), expected));
    QVERIFY(compareTensors(Tensor::fromVector<float>({3}, {nan, 3e38f, -inf}), expected));
  }

  void dtypeAndShapeMustMatchExactly() {
    Tensor f = Tensor::fromVector<float>({2, 2}, {1, 2, 3, 4});
    auto dtype = compareTensors(Tensor::fromVector<int64_t>({2, 2}, {1, 2, 3, 4}), f);
    QVERIFY(dtype && dtype->find("dtype i64, expected f32") != std::string::npos);
    auto shape = compareTensors(Tensor::fromVector<float>({4}, {1, 2, 3, 4}), f);
    QVERIFY(shape && shape->find("shape [4], expected [2, 2]") != std::string::npos);
    QVERIFY(compareTensors(Tensor(), f));
  }

  void integersAndBoolsAreExact() {
    Tensor big = Tensor::fromVector<int64_t>({1}, {int64_t(1) << 60});
    QVERIFY(!compareTensors(big, big));
    // Differs by one: a double comparison would call these equal.
    QVERIFY(compareTensors(Tensor::fromVector<int64_t>({1}, {(int64_t(1) << 60) + 1}), big));
    Tensor b = Tensor::fromVector<bool>({2}, {true, false});
    QVERIFY(!compareTensors(Tensor::fromVector<bool>({2}, {true, false}), b));
    auto diff = compareTensors(Tensor::fromVector<bool>({2}, {true, true}), b);
    QVERIFY(diff && diff->find("first at [1]: got 1, expected 0") != std::string::npos);
  }

  void halfFloatsCompareByValue() {
    Tensor e = Tensor::fromVector<f16_t>({1}, {f16_t(2.0f)});
    QVERIFY(!compareTensors(Tensor::fromVector<f16_t>({1}, {f16_t(2.0f)}), e));
    QVERIFY(compareTensors(Tensor::fromVector<f16_t>({1}, {f16_t(2.01f)}), e));
  }

  void mismatchIndexIsMultiDimensional() {
    Tensor e(DType::I32, {2, 3, 4});
    Tensor a = e;
    a.mutableData<int32_t>()[1 * 12 + 2 * 4 + 3] = 9;
    auto diff = compareTensors(a, e);
    QVERIFY(diff && diff->find("first at [1, 2, 3]") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestTensorCompare)
#include "TestTensorCompare.moc"
