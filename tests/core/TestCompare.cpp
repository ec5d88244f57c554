// Tests of core/TensorCompare.h: the per-element rule atol + rtol·|ref| + stol·max|ref|.
#include "core/TensorCompare.h"

#include <QtTest/QtTest>

#include <cmath>
#include <limits>

using namespace fb;

namespace {
Tensor f32(std::vector<float> v) {
  Tensor t(DType::F32, {int64_t(v.size())});
  auto d = t.mutableData<float>();
  std::copy(v.begin(), v.end(), d.begin());
  return t;
}
} // namespace

class TestCompare : public QObject {
  Q_OBJECT
private Q_SLOTS:
  /// Values near 1e13 whose sum ends near 0: an error of a few ULPs of the scale passes with
  /// the default f32 tolerance, though it is huge next to the element itself.
  void scaleTermAcceptsRoundingAtTheTensorsScale() {
    Tensor ref = f32({1e13f, -1e13f, 0.0f, 5e12f});
    Tensor got = f32({1e13f, -1e13f, 2.0e6f, 5e12f}); // 2e6 = 2e-7 of the scale
    TensorComparison c = compareTensors(ref, got, defaultTolerance(DType::F32));
    QVERIFY2(c.ok, c.reason.c_str());
    // Without the scale term the same difference fails at element 2.
    TensorComparison plain = compareTensors(ref, got, Tolerance{1e-4, 1e-3, 0});
    QVERIFY(!plain.ok);
    QCOMPARE(plain.firstBad, int64_t(2));
    // A real error (1e-3 of the scale) still fails with the default.
    Tensor wrong = f32({1e13f, -1e13f, 1e10f, 5e12f});
    TensorComparison bad = compareTensors(ref, wrong, defaultTolerance(DType::F32));
    QVERIFY(!bad.ok);
    QCOMPARE(bad.firstBad, int64_t(2));
  }

  void plainRuleAndSpecialValues() {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    Tolerance exact{0, 0, 0};
    QVERIFY(compareTensors(f32({1, nan, inf}), f32({1, nan, inf}), exact).ok);
    QVERIFY(!compareTensors(f32({1, nan}), f32({1, 0}), defaultTolerance(DType::F32)).ok);
    QVERIFY(!compareTensors(f32({inf}), f32({-inf}), defaultTolerance(DType::F32)).ok);
    // |got - ref| <= atol + rtol·|ref|: 1.0011 vs 1 fails at 1e-3, passes at 2e-3.
    QVERIFY(!compareTensors(f32({1}), f32({1.0011f}), Tolerance{0, 1e-3, 0}).ok);
    QVERIFY(compareTensors(f32({1}), f32({1.0011f}), Tolerance{0, 2e-3, 0}).ok);
    // A NaN tolerance accepts nothing (every comparison with NaN is false).
    const double qnan = std::numeric_limits<double>::quiet_NaN();
    QVERIFY(!compareTensors(f32({1}), f32({1.5f}), Tolerance{qnan, qnan, 0}).ok);
  }
};

QTEST_GUILESS_MAIN(TestCompare)
#include "TestCompare.moc"
