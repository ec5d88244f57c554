// Files that are not files, sizes that cannot be allocated: every one ends in an error in words,
// never a read that does not end, an abort or std::bad_alloc escaping a library.
#include "core/FileRead.h"
#include "core/Interpreter.h"
#include "core/MemoryLimit.h"
#include "core/Npy.h"
#include "core/onnx/OnnxImport.h"
#include "core/text/IrParser.h"

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <filesystem>
#include <fstream>
#include <sys/stat.h>

using namespace fb;

namespace {

bool contains(const std::string& s, const std::string& part) {
  if (s.find(part) != std::string::npos)
    return true;
  qWarning("'%s' not in: %s", part.c_str(), s.c_str());
  return false;
}

/// A version 1.0 .npy header for `shape` of float32 with no data after it.
std::string npyHeaderOnly(const std::string& shape) {
  std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  h.append(63 - (h.size() + 10) % 64, ' ');
  h += '\n';
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  out += char(h.size() & 0xff);
  out += char(h.size() >> 8);
  return out + h;
}

} // namespace

class TestHostileFiles : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;
  std::string path(const char* name) const { return (m_dir.path() + "/" + name).toStdString(); }

private Q_SLOTS:
  void devZeroIsRefused() {
    for (const char* what : {"model", "npy", "pb", "fbir"}) {
      Error e = what == std::string("model") ? importOnnxFile("/dev/zero").error()
                : what == std::string("npy") ? readNpy("/dev/zero").error()
                : what == std::string("pb")  ? readOnnxTensorFile("/dev/zero").error()
                                             : parseGraphFile("/dev/zero").error();
      QVERIFY(contains(e.message(), "/dev/zero: is not a regular file"));
    }
  }

  void symlinkToDeviceIsRefused() {
    std::string link = path("zero.onnx");
    std::filesystem::create_symlink("/dev/zero", link);
    auto g = importOnnxFile(link);
    QVERIFY(!g.ok());
    QVERIFY(contains(g.error().message(), "is not a regular file"));
  }

  void fifoDoesNotBlock() {
    std::string fifo = path("model.fifo");
    QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
    QElapsedTimer timer;
    timer.start();
    auto g = importOnnxFile(fifo);
    QVERIFY(!g.ok());
    QVERIFY(contains(g.error().message(), "FIFO"));
    QVERIFY(timer.elapsed() < 5000);
  }

  void folderAndMissingFile() {
    QVERIFY(contains(readNpy(m_dir.path().toStdString()).error().message(), "is a folder"));
    QVERIFY(contains(readNpy(path("nope.npy")).error().message(), "no such file"));
  }

  void npyHeaderClaimingGigabytes() {
    // 12 GB claimed, no data: refused by comparing the claim with the file, before allocating.
    std::string file = path("claims.npy");
    std::ofstream(file, std::ios::binary) << npyHeaderOnly("(3000000000,)");
    auto t = readNpy(file);
    QVERIFY(!t.ok());
    QVERIFY(contains(t.error().message(), "needs 12000000000 bytes, but the file has 0"));
    std::string wraps = path("wraps.npy");
    std::ofstream(wraps, std::ios::binary) << npyHeaderOnly("(4611686018427387904, 8)");
    QVERIFY(contains(readNpy(wraps).error().message(), "overflows 64 bits"));
  }

  void tensorBeyondTheMemoryLimit() {
    const uint64_t limit = memoryLimitBytes();
    QVERIFY(limit > 0);
    auto t = Tensor::create(DType::F32, {int64_t(limit / 2), 4});
    QVERIFY(!t.ok());
    QVERIFY(contains(t.error().message(), "more than the memory limit"));
    QVERIFY(contains(t.error().message(), "FUSEBOX_MEMORY_LIMIT"));
    auto wrap = Tensor::create(DType::F32, {int64_t(1) << 62, 8});
    QVERIFY(contains(wrap.error().message(), "overflows"));
  }

  void kernelOutputBeyondTheLimitIsAnErrorForTheNode() {
    // Tile's output size comes from a run-time input: the kernel's allocation is refused and
    // the interpreter names the node instead of aborting on std::bad_alloc.
    auto g = parseGraph(R"(graph @tile opset 17 {
  input %x : f32[2, 2]
  input %r : i64[2]
  %y : f32[?, ?] = Tile(%x, %r)  #1 "tile"
  output %y
})",
                        "tile.fbir");
    QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
    Tensor x(DType::F32, {2, 2});
    // 4 TiB: past any machine's limit. The refusal comes before Tile builds its index maps (as
    // long as the output's dims), so even a sanitizer's allocator never sees the size.
    Tensor r = Tensor::fromVector<int64_t>({2}, {int64_t(1) << 28, int64_t(1) << 10});
    auto result = interpret(**g, {x, r});
    QVERIFY(!result.ok());
    QVERIFY(contains(result.error().message(), "\"tile\""));
    QVERIFY(contains(result.error().message(), "memory"));
    // A size past 64 bits says so.
    r = Tensor::fromVector<int64_t>({2}, {int64_t(1) << 40, int64_t(1) << 20});
    result = interpret(**g, {x, r});
    QVERIFY(!result.ok());
    QVERIFY(contains(result.error().message(), "\"tile\""));
    QVERIFY(contains(result.error().message(), "overflows"));
    // An empty output with a huge dim is fine (no index maps are built for it).
    r = Tensor::fromVector<int64_t>({2}, {0, int64_t(1) << 40});
    result = interpret(**g, {x, r});
    QVERIFY2(result.ok(), result.ok() ? "" : result.error().message().c_str());
    QCOMPARE(result->outputs[0].sizes(), (std::vector<int64_t>{0, int64_t(2) << 40}));
  }

  void readRegularFileReadsAll() {
    std::string file = path("small.bin");
    std::ofstream(file, std::ios::binary) << std::string("abc\0def", 7);
    auto bytes = readRegularFile(file, "test");
    QVERIFY(bytes.ok());
    QCOMPARE(bytes->size(), size_t(7));
  }
};

QTEST_GUILESS_MAIN(TestHostileFiles)
#include "TestHostileFiles.moc"
