// A libFuzzer-compatible driver for builds without libFuzzer (the smoke run in ctest): feeds every
// corpus file, then seeded mutations of them (bit flips, truncations, splices, byte runs), to
// LLVMFuzzerTestOneInput. A crash or sanitizer report fails the test.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

uint64_t g_state = 0x1234567;
uint64_t nextRandom() {
  uint64_t z = (g_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::vector<uint8_t> mutate(const std::vector<uint8_t>& in, const std::vector<std::vector<uint8_t>>& corpus) {
  std::vector<uint8_t> out = in;
  int rounds = 1 + int(nextRandom() % 4);
  for (int r = 0; r < rounds; ++r) {
    switch (nextRandom() % 6) {
    case 0: // flip a bit
      if (!out.empty())
        out[nextRandom() % out.size()] ^= uint8_t(1u << (nextRandom() % 8));
      break;
    case 1: // truncate
      if (!out.empty())
        out.resize(nextRandom() % out.size());
      break;
    case 2: // overwrite a byte with an interesting value
      if (!out.empty()) {
        const uint8_t interesting[] = {0, 1, 0x7f, 0x80, 0xff, '[', ']', '{', '}', '%', '#', ','};
        out[nextRandom() % out.size()] = interesting[nextRandom() % sizeof interesting];
      }
      break;
    case 3: { // duplicate a slice
      if (out.size() < 2)
        break;
      size_t a = nextRandom() % out.size(), len = 1 + nextRandom() % std::min<size_t>(64, out.size() - a);
      std::vector<uint8_t> slice(out.begin() + long(a), out.begin() + long(a + len));
      out.insert(out.begin() + long(nextRandom() % out.size()), slice.begin(), slice.end());
      break;
    }
    case 4: { // splice with another corpus entry
      const auto& other = corpus[nextRandom() % corpus.size()];
      if (other.empty() || out.empty())
        break;
      size_t cut = nextRandom() % out.size();
      size_t from = nextRandom() % other.size();
      out.resize(cut);
      out.insert(out.end(), other.begin() + long(from), other.end());
      break;
    }
    case 5: // delete a byte
      if (!out.empty())
        out.erase(out.begin() + long(nextRandom() % out.size()));
      break;
    }
  }
  return out;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s ITERATIONS [CORPUS_FILE_OR_DIR ...]\n", argv[0]);
    return 2;
  }
  long iterations = std::strtol(argv[1], nullptr, 10);
  std::vector<std::vector<uint8_t>> corpus;
  for (int i = 2; i < argc; ++i) {
    std::filesystem::path p(argv[i]);
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(p))
        if (e.is_regular_file())
          files.push_back(e.path());
    } else {
      files.push_back(p);
    }
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
  }
  if (corpus.empty())
    corpus.emplace_back();
  for (const auto& c : corpus)
    LLVMFuzzerTestOneInput(c.data(), c.size());
  for (long i = 0; i < iterations; ++i) {
    auto m = mutate(corpus[size_t(i) % corpus.size()], corpus);
    LLVMFuzzerTestOneInput(m.data(), m.size());
  }
  std::printf("fuzz smoke: %zu corpus inputs and %ld mutations ran without a crash\n", corpus.size(),
              iterations);
  return 0;
}
