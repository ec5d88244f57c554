// Runs the ahead-of-time kernel of aot.fbir (linked from `fusebox-opt --emit obj`) on fixed
// inputs and prints the outputs, to check the object file end to end.
#include AOT_HEADER

#include <cstdio>

int main() {
  float x[16], y[16];
  for (int i = 0; i < 16; ++i) {
    x[i] = float(i - 8);
    y[i] = -1.f;
  }
  void* args[] = {x, y};
  k0_relu(args);
  for (float v : y)
    std::printf("%g ", v);
  std::printf("\n");
  return 0;
}
