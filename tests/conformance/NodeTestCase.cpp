// Finding ONNX backend node test cases on disk and running each one, in-process or in a child.
#include "tests/conformance/NodeTestCase.h"

#include "core/onnx/OnnxImport.h"
#include "tests/conformance/TensorCompare.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <optional>
#include <poll.h>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace fb::conformance {

namespace fs = std::filesystem;

namespace {

/// The numeric suffix of names like "test_data_set_12" or "input_3.pb", or -1.
long numericSuffix(const std::string& name, const std::string& prefix, const std::string& suffix) {
  if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return -1;
  std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.empty() || digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::stol(digits);
}

/// The op types of a model's graph, in node order, or empty if it cannot be parsed.
std::vector<std::string> modelOpTypes(const fs::path& modelPath) {
  std::ifstream in(modelPath, std::ios::binary);
  onnx::ModelProto model;
  if (!in || !model.ParseFromIstream(&in))
    return {};
  std::vector<std::string> ops;
  for (const auto& node : model.graph().node())
    ops.push_back(node.op_type());
  return ops;
}

std::string joinUnique(const std::vector<std::string>& ops) {
  std::set<std::string> unique(ops.begin(), ops.end());
  std::string out;
  for (const auto& op : unique)
    out += (out.empty() ? "" : "+") + op;
  return out;
}

/// Names the op a case tests. An "_expanded" case is the function body of the op its sibling
/// case tests, so it is grouped under that op rather than under the body's many primitive ops.
std::string opLabelFor(const fs::path& dir, const std::string& name) {
  std::vector<std::string> ops = modelOpTypes(dir / "model.onnx");
  if (ops.size() == 1)
    return ops[0];
  const std::string expandedSuffix = "_expanded";
  if (name.size() > expandedSuffix.size() &&
      name.compare(name.size() - expandedSuffix.size(), expandedSuffix.size(), expandedSuffix) ==
          0) {
    fs::path sibling = dir.parent_path() / name.substr(0, name.size() - expandedSuffix.size());
    std::vector<std::string> siblingOps = modelOpTypes(sibling / "model.onnx");
    if (siblingOps.size() == 1)
      return siblingOps[0] + " (expanded)";
  }
  return ops.empty() ? std::string("?") : joinUnique(ops);
}

/// Files prefix_0.pb, prefix_1.pb, ... in a data set folder, stopping at the first gap.
std::vector<fs::path> numberedFiles(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (size_t i = 0;; ++i) {
    fs::path p = dir / (prefix + "_" + std::to_string(i) + ".pb");
    std::error_code ec;
    if (!fs::is_regular_file(p, ec))
      break;
    files.push_back(p);
  }
  return files;
}

CaseResult skipped(std::string reason) { return {Outcome::Skipped, std::move(reason)}; }
CaseResult failed(std::string reason) { return {Outcome::Failed, std::move(reason)}; }

/// An error from Fusebox: Unsupported skips the case, anything else fails it.
CaseResult fromError(const Error& error, const std::string& stage) {
  std::string reason = stage + ": " + error.message();
  return error.isUnsupported() ? skipped(std::move(reason)) : failed(std::move(reason));
}

/// Runs one test_data_set folder; nullopt when every output matches.
std::optional<CaseResult> runDataSet(const Graph& graph, const fs::path& dataDir,
                                     const CaseBackend& backend) {
  const std::string set = dataDir.filename().string();
  std::vector<Tensor> inputs;
  for (const fs::path& p : numberedFiles(dataDir, "input")) {
    auto t = readOnnxTensorFile(p.string());
    if (!t)
      return fromError(t.error(), set + "/" + p.filename().string());
    inputs.push_back(std::move(t).value());
  }
  std::vector<Tensor> expected;
  for (const fs::path& p : numberedFiles(dataDir, "output")) {
    auto t = readOnnxTensorFile(p.string());
    if (!t)
      return fromError(t.error(), set + "/" + p.filename().string());
    expected.push_back(std::move(t).value());
  }
  if (inputs.size() != graph.inputs().size())
    return failed(set + ": the data set has " + std::to_string(inputs.size()) +
                  " inputs but the imported graph has " + std::to_string(graph.inputs().size()));

  auto result = runOnBackend(graph, inputs, backend);
  if (!result)
    return fromError(result.error(), set + ": run");
  const std::vector<Tensor>& outputs = *result;
  if (outputs.size() != expected.size())
    return failed(set + ": " + describe(backend) + " produced " + std::to_string(outputs.size()) +
                  " outputs, expected " + std::to_string(expected.size()));
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string name = i < graph.outputs().size() && graph.outputs()[i]
                           ? graph.outputs()[i]->name()
                           : std::to_string(i);
    if (auto mismatch = compareTensors(outputs[i], expected[i]))
      return failed(set + ": output " + std::to_string(i) + " '" + name + "': " + *mismatch);
  }
  return std::nullopt;
}

/// Writes all of `data` to `fd`, retrying on short writes and EINTR.
void writeAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    done += size_t(n);
  }
}

/// The last `maxChars` characters of a child's stderr on one line, for a crash report.
std::string tailOneLine(const std::string& text, size_t maxChars) {
  std::string t = text.size() > maxChars ? "..." + text.substr(text.size() - maxChars) : text;
  std::replace(t.begin(), t.end(), '\n', ' ');
  while (!t.empty() && t.back() == ' ')
    t.pop_back();
  return t;
}

} // namespace

std::vector<NodeTestCase> discoverCases(const fs::path& root, std::string& error) {
  std::vector<NodeTestCase> cases;
  std::error_code ec;
  fs::directory_iterator it(root, ec);
  if (ec) {
    error = root.string() + ": " + ec.message();
    return {};
  }
  for (const auto& entry : it) {
    std::error_code entryEc;
    if (!entry.is_directory(entryEc) || !fs::is_regular_file(entry.path() / "model.onnx", entryEc))
      continue;
    std::string name = entry.path().filename().string();
    cases.push_back({name, entry.path(), opLabelFor(entry.path(), name)});
  }
  std::sort(cases.begin(), cases.end(),
            [](const NodeTestCase& a, const NodeTestCase& b) { return a.name < b.name; });
  return cases;
}

CaseResult runCase(const NodeTestCase& testCase, const CaseBackend& backend) {
  auto graph = importOnnxFile((testCase.dir / "model.onnx").string());
  if (!graph)
    return fromError(graph.error(), "import");

  std::vector<std::pair<long, fs::path>> dataSets;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(testCase.dir, ec)) {
    long k = numericSuffix(entry.path().filename().string(), "test_data_set_", "");
    if (k >= 0)
      dataSets.emplace_back(k, entry.path());
  }
  if (ec)
    return failed(testCase.dir.string() + ": " + ec.message());
  if (dataSets.empty())
    return failed("no test_data_set_* folder");
  std::sort(dataSets.begin(), dataSets.end());
  for (const auto& [k, dir] : dataSets) {
    if (auto r = runDataSet(**graph, dir, backend))
      return *r;
  }
  return {Outcome::Passed, {}};
}

CaseResult runCaseIsolated(const NodeTestCase& testCase, const CaseBackend& backend,
                           int timeoutSeconds) {
  int resultPipe[2], logPipe[2];
  if (::pipe2(resultPipe, O_CLOEXEC) != 0)
    return failed(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(logPipe, O_CLOEXEC) != 0) {
    ::close(resultPipe[0]);
    ::close(resultPipe[1]);
    return failed(std::string("pipe: ") + std::strerror(errno));
  }
  // Buffered output would otherwise be printed twice, once by the child.
  std::cout.flush();
  std::fflush(stdout);
  std::fflush(stderr);

  pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {resultPipe[0], resultPipe[1], logPipe[0], logPipe[1]})
      ::close(fd);
    return failed(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // Child: whatever the op code prints (an assertion message) goes to the parent's log pipe.
    ::dup2(logPipe[1], STDOUT_FILENO);
    ::dup2(logPipe[1], STDERR_FILENO);
    ::close(resultPipe[0]);
    ::close(logPipe[0]);
    CaseResult r = runCase(testCase, backend);
    writeAll(resultPipe[1], std::string(1, char(r.outcome)) + r.reason);
    // _exit: the parent's atexit handlers and static destructors are not the child's to run.
    ::_exit(0);
  }

  ::close(resultPipe[1]);
  ::close(logPipe[1]);
  std::string result, log;
  bool timedOut = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
  pollfd fds[2] = {{resultPipe[0], POLLIN, 0}, {logPipe[0], POLLIN, 0}};
  int open = 2;
  while (open > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      timedOut = true;
      ::kill(pid, SIGKILL);
      break;
    }
    int n = ::poll(fds, 2, int(std::min<long long>(left, 1000)));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      char buf[4096];
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0) {
        fds[i].fd = -1; // poll ignores negative fds
        --open;
        continue;
      }
      std::string& sink = i == 0 ? result : log;
      // Bound what a runaway child can make the parent hold.
      if (sink.size() < (1u << 20))
        sink.append(buf, size_t(got));
    }
  }
  ::close(resultPipe[0]);
  ::close(logPipe[0]);

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::string logTail = log.empty() ? "" : " [output: " + tailOneLine(log, 400) + "]";
  if (timedOut)
    return failed("timed out after " + std::to_string(timeoutSeconds) + " s" + logTail);
  if (WIFSIGNALED(status))
    return failed("crashed with signal " + std::to_string(WTERMSIG(status)) + " (" +
                  strsignal(WTERMSIG(status)) + ")" + logTail);
  if (result.empty() ||
      (result[0] != char(Outcome::Passed) && result[0] != char(Outcome::Failed) &&
       result[0] != char(Outcome::Skipped)))
    return failed("the child exited (status " +
                  std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                  ") without a result" + logTail);
  return {Outcome(result[0]), result.substr(1)};
}

} // namespace fb::conformance
