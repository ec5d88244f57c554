// The GPU roofs of the roofline from a device's attributes, checked against NVIDIA's published
// peaks for two devices, and what gpuPeaks() says without a device.
#include "app/workbench/GpuPeaks.h"
#include "codegen/gpu/CudaDriver.h"

#include <QtTest/QtTest>

using namespace fb;

class TestGpuPeaks : public QObject {
  Q_OBJECT

private Q_SLOTS:
  /// A100 SXM4 (sm_80, 64 FP32 lanes per SM): 19.5 TFLOP/s FP32 and 1,555 GB/s published.
  void a100() {
    cg::gpu::DeviceInfo d;
    d.name = "NVIDIA A100-SXM4-40GB";
    d.major = 8;
    d.minor = 0;
    d.multiprocessors = 108;
    d.clockKHz = 1410000;
    d.memoryClockKHz = 1215000;
    d.memoryBusWidthBits = 5120;
    const workbench::MachinePeaks p = workbench::peaksOfGpu(d);
    QVERIFY2(std::abs(p.gflops - 19491.8) < 1, std::to_string(p.gflops).c_str());
    QVERIFY2(std::abs(p.gbps - 1555.2) < 1, std::to_string(p.gbps).c_str());
    QCOMPARE(p.isa, std::string("sm_80"));
    QCOMPARE(p.cpu, d.name);
    QCOMPARE(p.memoryMethod, std::string("device attributes"));
    QCOMPARE(p.cacheGbps, 0.0);
  }

  /// H100 SXM5 (sm_90, 128 lanes per SM): 66.9 TFLOP/s at 1,980 MHz, 3,352 GB/s HBM3.
  void h100() {
    cg::gpu::DeviceInfo d;
    d.name = "NVIDIA H100 80GB HBM3";
    d.major = 9;
    d.minor = 0;
    d.multiprocessors = 132;
    d.clockKHz = 1980000;
    d.memoryClockKHz = 2619000;
    d.memoryBusWidthBits = 5120;
    const workbench::MachinePeaks p = workbench::peaksOfGpu(d);
    QVERIFY2(std::abs(p.gflops - 66908.2) < 1, std::to_string(p.gflops).c_str());
    QVERIFY2(std::abs(p.gbps - 3352.3) < 1, std::to_string(p.gbps).c_str());
    QCOMPARE(p.isa, std::string("sm_90"));
  }

  /// Without a driver or device: the driver's reason, not roofs.
  void withoutADevice() {
    auto p = workbench::gpuPeaks();
    if (cg::gpu::cudaAvailable().ok()) {
      QVERIFY(p.ok());
      QVERIFY(p->gflops > 0 && p->gbps > 0);
    } else {
      QVERIFY(!p.ok());
      QVERIFY2(p.error().message().find("no CUDA device") != std::string::npos,
               p.error().message().c_str());
    }
  }
};

QTEST_GUILESS_MAIN(TestGpuPeaks)
#include "TestGpuPeaks.moc"
