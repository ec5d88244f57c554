// Tests of core/Format.h: the one way bytes, FLOPs, counts and times read in every report.
#include "core/Format.h"

#include <QtTest/QtTest>

using namespace fb;

class TestFormat : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void bytes() {
    QCOMPARE(formatBytes(0), std::string("0 B"));
    QCOMPARE(formatBytes(1023), std::string("1023 B"));
    QCOMPARE(formatBytes(1536), std::string("1.5 KiB"));
    QCOMPARE(formatBytes(111.7 * 1024 * 1024), std::string("111.7 MiB"));
    QCOMPARE(formatBytes(2.5 * 1024 * 1024, Digits::fixed(2)), std::string("2.50 MiB"));
    QCOMPARE(formatBytes(3.0 * 1024 * 1024 * 1024 * 1024), std::string("3.0 TiB"));
  }
  void flops() {
    QCOMPARE(formatFlops(999), std::string("999 FLOP"));
    QCOMPARE(formatFlops(1024), std::string("1.02 KFLOP"));
    QCOMPARE(formatFlops(190000), std::string("190 KFLOP"));
    QCOMPARE(formatFlops(3.64e9), std::string("3.64 GFLOP"));
  }
  void counts() {
    QCOMPARE(formatCount(812, Digits::decimalsBelow100(1)), std::string("812"));
    QCOMPARE(formatCount(74200, Digits::decimalsBelow100(1)), std::string("74.2K"));
    QCOMPARE(formatCount(116e6, Digits::decimalsBelow100(1)), std::string("116M"));
    QCOMPARE(formatCount(3.64e9, Digits::fixed(2), " "), std::string("3.64 G"));
    QCOMPARE(formatCount(-2500, Digits::fixed(1)), std::string("-2.5K"));
  }
  void times() {
    QCOMPARE(formatMilliseconds(0.85), std::string("850 µs"));
    QCOMPARE(formatMilliseconds(12.346), std::string("12.35 ms"));
    QCOMPARE(formatMilliseconds(1520), std::string("1.52 s"));
  }
};

QTEST_GUILESS_MAIN(TestFormat)
#include "TestFormat.moc"
