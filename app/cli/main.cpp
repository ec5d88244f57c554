// fusebox-opt: the scriptable face of Fusebox (see shared/CLI.md).
#include "app/cli/CliOptions.h"
#include "app/cli/OptDriver.h"

#include <cstdio>
#include <iostream>

int main(int argc, char** argv) {
  auto options = fb::cli::parseCliOptions(argc, argv);
  if (!options.ok()) {
    std::fprintf(stderr, "error: %s\n", options.error().message().c_str());
    return 2;
  }
  if (options->help) {
    std::cout << fb::cli::cliUsage();
    return 0;
  }
  return fb::cli::runOptDriver(*options, std::cout, std::cerr);
}
