// Tests of .npy reading and writing: NumPy-written fixtures, round trips per dtype, hostile headers.
#include "core/Npy.h"

#include <QtTest/QtTest>

#include <fstream>
#include <iterator>

using namespace fb;

#ifndef FUSEBOX_CORE_TEST_DATA
#error "FUSEBOX_CORE_TEST_DATA must name tests/core/data (set in tests/core/CMakeLists.txt)"
#endif

namespace {

std::string dataPath(const std::string& name) {
  return std::string(FUSEBOX_CORE_TEST_DATA) + "/" + name;
}

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// Assembles a .npy file from a header dictionary text, padding it like NumPy does.
std::string makeNpy(const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict;
  size_t lenWidth = major == 1 ? 2 : 4;
  size_t total = 8 + lenWidth + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += char(major);
  out += char(0);
  for (size_t i = 0; i < lenWidth; ++i)
    out += char((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string floatBytes(std::initializer_list<float> values) {
  std::string s;
  for (float v : values)
    s.append(reinterpret_cast<const char*>(&v), sizeof v);
  return s;
}

/// Parses bytes that must fail; returns the error.
Error expectFailure(const std::string& bytes) {
  auto r = parseNpy(bytes, "hostile.npy");
  if (r.ok())
    return Error("unexpectedly parsed");
  return r.error();
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

} // namespace

class TestNpy : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void readsNumpyFixtures() {
    auto f32 = readNpy(dataPath("f32_2x3.npy"));
    QVERIFY2(f32.ok(), f32.ok() ? "" : f32.error().message().c_str());
    QCOMPARE(f32->dtype(), DType::F32);
    QCOMPARE(f32->sizes(), (std::vector<int64_t>{2, 3}));
    auto fv = f32->data<float>();
    const float expectedF32[] = {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f};
    for (size_t i = 0; i < 6; ++i)
      QCOMPARE(fv[i], expectedF32[i]);

    auto f16 = readNpy(dataPath("f16_4.npy"));
    QVERIFY(f16.ok());
    QCOMPARE(f16->dtype(), DType::F16);
    QCOMPARE(float(f16->data<f16_t>()[0]), 1.0f);
    QCOMPARE(float(f16->data<f16_t>()[1]), -2.5f);
    QCOMPARE(float(f16->data<f16_t>()[2]), 65504.0f);
    QCOMPARE(f16->data<f16_t>()[3].bits, uint16_t(0x0400)); // smallest normal half

    auto i8 = readNpy(dataPath("i8_3.npy"));
    QVERIFY(i8.ok());
    QCOMPARE(i8->dtype(), DType::I8);
    QCOMPARE(i8->data<int8_t>()[0], int8_t(-128));
    QCOMPARE(i8->data<int8_t>()[2], int8_t(127));

    auto u8 = readNpy(dataPath("u8_2x2.npy"));
    QVERIFY(u8.ok());
    QCOMPARE(u8->dtype(), DType::U8);
    QCOMPARE(u8->sizes(), (std::vector<int64_t>{2, 2}));
    QCOMPARE(u8->data<uint8_t>()[3], uint8_t(255));

    auto i32 = readNpy(dataPath("i32_3.npy"));
    QVERIFY(i32.ok());
    QCOMPARE(i32->data<int32_t>()[0], int32_t(-2147483647 - 1));
    QCOMPARE(i32->data<int32_t>()[1], 7);

    auto i64 = readNpy(dataPath("i64_2.npy"));
    QVERIFY(i64.ok());
    QCOMPARE(i64->data<int64_t>()[0], std::numeric_limits<int64_t>::min());
    QCOMPARE(i64->data<int64_t>()[1], int64_t(1234567890123));

    auto b = readNpy(dataPath("bool_4.npy"));
    QVERIFY(b.ok());
    QCOMPARE(b->dtype(), DType::Bool);
    QCOMPARE(b->data<bool>()[0], true);
    QCOMPARE(b->data<bool>()[1], false);
    QCOMPARE(b->data<bool>()[3], true);

    auto scalar = readNpy(dataPath("scalar_f32.npy"));
    QVERIFY(scalar.ok());
    QCOMPARE(scalar->rank(), size_t(0));
    QCOMPARE(scalar->data<float>()[0], 3.25f);

    auto empty = readNpy(dataPath("empty_0x3_f32.npy"));
    QVERIFY(empty.ok());
    QCOMPARE(empty->sizes(), (std::vector<int64_t>{0, 3}));
    QCOMPARE(empty->numElements(), int64_t(0));
  }

  void readsVersions2And3() {
    auto v2 = readNpy(dataPath("v2_i32_3.npy"));
    QVERIFY2(v2.ok(), v2.ok() ? "" : v2.error().message().c_str());
    QCOMPARE(v2->data<int32_t>()[2], 3);
    auto v3 = readNpy(dataPath("v3_i64_2x1.npy"));
    QVERIFY2(v3.ok(), v3.ok() ? "" : v3.error().message().c_str());
    QCOMPARE(v3->sizes(), (std::vector<int64_t>{2, 1}));
    QCOMPARE(v3->data<int64_t>()[1], int64_t(-6));
  }

  void unsupportedFixturesNameFileAndReason() {
    auto f64 = readNpy(dataPath("f64_2.npy"));
    QVERIFY(!f64.ok());
    QVERIFY(f64.error().isUnsupported());
    QVERIFY(contains(f64.error().message(), "f64_2.npy"));
    QVERIFY(contains(f64.error().message(), "<f8"));

    auto fortran = readNpy(dataPath("fortran_2x3_f32.npy"));
    QVERIFY(!fortran.ok());
    QVERIFY(fortran.error().isUnsupported());
    QVERIFY(contains(fortran.error().message(), "Fortran"));

    auto big = readNpy(dataPath("bigendian_f32_2.npy"));
    QVERIFY(!big.ok());
    QVERIFY(big.error().isUnsupported());
    QVERIFY(contains(big.error().message(), ">f4"));

    auto missing = readNpy(dataPath("does_not_exist.npy"));
    QVERIFY(!missing.ok());
    QVERIFY(!missing.error().isUnsupported());
    QVERIFY(contains(missing.error().message(), "does_not_exist.npy"));
  }

  /// Our writer must produce exactly the bytes NumPy writes (same header text and padding).
  void writesTheSameBytesAsNumpy() {
    const char* names[] = {"f32_2x3.npy", "f16_4.npy",      "i8_3.npy",
                           "u8_2x2.npy",  "i32_3.npy",      "i64_2.npy",
                           "bool_4.npy",  "scalar_f32.npy", "empty_0x3_f32.npy"};
    QString dir = QDir::tempPath() + "/fusebox-testnpy-" + QString::number(qApp->applicationPid());
    QVERIFY(QDir().mkpath(dir));
    for (const char* name : names) {
      auto t = readNpy(dataPath(name));
      QVERIFY2(t.ok(), name);
      std::string out = dir.toStdString() + "/" + name;
      QVERIFY2(writeNpy(out, *t).ok(), name);
      QVERIFY2(readBytes(out) == readBytes(dataPath(name)), name);
    }
    QDir(dir).removeRecursively();
  }

  void roundTripsEveryDType() {
    QString dir = QDir::tempPath() + "/fusebox-testnpy-rt-" +
                  QString::number(qApp->applicationPid());
    QVERIFY(QDir().mkpath(dir));
    for (DType dtype : kAllDTypes) {
      Tensor t(dtype, {2, 3});
      const double values[] = {0, 1, -2, 3, 1, 0};
      for (int64_t i = 0; i < 6; ++i)
        t.setFromDouble(i, dtype == DType::U8 ? values[i] * values[i] : values[i]);
      std::string path = dir.toStdString() + "/" + dtypeName(dtype) + ".npy";
      QVERIFY2(writeNpy(path, t).ok(), dtypeName(dtype));
      auto back = readNpy(path);
      QVERIFY2(back.ok(), dtypeName(dtype));
      if (dtype == DType::BF16) {
        // NumPy has no bfloat16: it is written as f32 with the same values.
        QCOMPARE(back->dtype(), DType::F32);
        for (int64_t i = 0; i < 6; ++i)
          QCOMPARE(back->getAsDouble(i), t.getAsDouble(i));
      } else {
        QVERIFY2(back->identical(t), dtypeName(dtype));
      }
    }
    // A long shape still round trips (version 1.0 header, larger than one alignment block).
    Tensor wide(DType::I8, std::vector<int64_t>(20, 1));
    std::string path = dir.toStdString() + "/wide.npy";
    QVERIFY(writeNpy(path, wide).ok());
    auto back = readNpy(path);
    QVERIFY(back.ok());
    QVERIFY(back->identical(wide));
    QDir(dir).removeRecursively();
  }

  void rejectsBadHeaders() {
    const std::string okDict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
    const std::string twoFloats = floatBytes({1.f, 2.f});
    // The helper itself makes a valid file, so each failure below is caused by the one change.
    auto good = parseNpy(makeNpy(okDict, twoFloats), "good.npy");
    QVERIFY(good.ok());
    QCOMPARE(good->data<float>()[1], 2.f);
    // Double quotes and no trailing comma are valid Python too.
    QVERIFY(parseNpy(makeNpy("{\"descr\": \"<f4\", \"shape\": (2,), \"fortran_order\": False}",
                             twoFloats),
                     "dq.npy")
                .ok());

    QVERIFY(contains(expectFailure("not a npy file").message(), "magic"));
    QVERIFY(expectFailure(std::string("\x93NUMPY\x04\x00", 8) + "xx").isUnsupported());
    QVERIFY(contains(expectFailure(std::string("\x93NUMPY\x01\x00", 8)).message(), "truncated"));
    // Header length larger than the file.
    QVERIFY(contains(expectFailure(std::string("\x93NUMPY\x01\x00\xff\x00{", 11)).message(),
                     "truncated"));
    // A v2 header length of 4 GiB.
    QVERIFY(contains(expectFailure(std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12)).message(),
                     "large"));

    const char* badDicts[] = {
        "{'descr': '<f4', 'fortran_order': False}",                          // missing shape
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}",   // unknown key
        "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", // duplicate
        "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}",          // negative dim
        "{'descr': '<f4', 'fortran_order': False, 'shape': [2]}",            // list, not tuple
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} extra",
        "{'descr': '<f4\\x', 'fortran_order': False, 'shape': (2,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)",            // unterminated
        "{'descr: '<f4', 'fortran_order': False, 'shape': (2,)}",
        "{'descr': '|f4', 'fortran_order': False, 'shape': (2,)}",           // '|' on 4 bytes
        "{'descr': '?f4', 'fortran_order': False, 'shape': (2,)}",
        "[1, 2]",
        "",
    };
    for (const char* dict : badDicts) {
      Error e = expectFailure(makeNpy(dict, twoFloats));
      QVERIFY2(!e.isUnsupported(), dict);
      QVERIFY2(contains(e.message(), "hostile.npy"), dict);
    }

    // Valid headers Fusebox does not implement are Unsupported, not Invalid.
    QVERIFY(expectFailure(makeNpy("{'descr': '<f8', 'fortran_order': False, 'shape': (1,)}",
                                  std::string(8, '\0')))
                .isUnsupported());
    QVERIFY(expectFailure(makeNpy("{'descr': [('a', '<f4')], 'fortran_order': False, "
                                  "'shape': (1,)}",
                                  std::string(4, '\0')))
                .isUnsupported());
    QVERIFY(expectFailure(makeNpy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}",
                                  std::string(8, '\0')))
                .isUnsupported());
  }

  void rejectsHostileSizes() {
    // The product of the dims overflows int64.
    Error overflow = expectFailure(makeNpy(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4)}", ""));
    QVERIFY(!overflow.isUnsupported());
    QVERIFY(contains(overflow.message(), "hostile.npy"));
    // Fits int64 elements but not bytes: must fail before allocating.
    QVERIFY(!expectFailure(makeNpy("{'descr': '<i8', 'fortran_order': False, "
                                   "'shape': (9223372036854775807,)}",
                                   ""))
                 .isUnsupported());

    // Data shorter than declared: the message names the expected and actual byte counts.
    Error shortData = expectFailure(
        makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2)}", floatBytes({1.f})));
    QVERIFY2(contains(shortData.message(), "24 bytes"), shortData.message().c_str());
    QVERIFY2(contains(shortData.message(), " 4 ") || contains(shortData.message(), "has 4"),
             shortData.message().c_str());
    QVERIFY(contains(shortData.message(), "hostile.npy"));

    Error longData = expectFailure(makeNpy(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", floatBytes({1.f, 2.f})));
    QVERIFY(contains(longData.message(), "trailing"));

    // Every truncation of a valid file fails cleanly, never crashes.
    std::string full = readBytes(dataPath("f32_2x3.npy"));
    for (size_t n = 0; n < full.size(); ++n)
      QVERIFY(!parseNpy(full.substr(0, n), "cut.npy").ok());
  }

  void boolBytesAreNormalised() {
    auto t = parseNpy(makeNpy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,)}",
                              std::string("\x00\x01\x07", 3)),
                      "b.npy");
    QVERIFY(t.ok());
    QCOMPARE(t->getAsInt64(0), int64_t(0));
    QCOMPARE(t->getAsInt64(2), int64_t(1));
  }
};

QTEST_GUILESS_MAIN(TestNpy)
#include "TestNpy.moc"
