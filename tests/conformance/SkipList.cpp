#include "tests/conformance/SkipList.h"

#include <fstream>

namespace fb::conformance {

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos)
    return {};
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

} // namespace

std::optional<SkipList> SkipList::read(const std::string& path, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot be read";
    return std::nullopt;
  }
  SkipList list;
  list.m_path = path;
  std::string raw;
  for (int lineNo = 1; std::getline(in, raw); ++lineNo) {
    std::string line = trim(raw);
    if (line.empty() || line[0] == '#')
      continue;
    auto where = [&] { return path + ":" + std::to_string(lineNo) + ": "; };
    size_t colon = line.find(": ");
    if (colon == std::string::npos) {
      error = where() + "expected 'REGEX: REASON'";
      return std::nullopt;
    }
    Entry e;
    e.line = lineNo;
    e.pattern = trim(line.substr(0, colon));
    e.reason = trim(line.substr(colon + 2));
    for (const char* backend : {"interp ", "cpu "}) {
      if (e.pattern.rfind(backend, 0) == 0) {
        e.backend = trim(std::string(backend));
        e.pattern = trim(e.pattern.substr(e.backend.size()));
      }
    }
    if (e.pattern.empty() || e.reason.empty()) {
      error = where() + "an entry needs a pattern and a reason";
      return std::nullopt;
    }
    try {
      e.regex = std::regex(e.pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& ex) {
      error = where() + "'" + e.pattern + "' is not a valid regex: " + ex.what();
      return std::nullopt;
    }
    list.m_entries.push_back(std::move(e));
  }
  return list;
}

const SkipList::Entry* SkipList::find(const std::string& caseName,
                                      const std::string& backend) const {
  for (const Entry& e : m_entries)
    if ((e.backend.empty() || e.backend == backend) && std::regex_match(caseName, e.regex))
      return &e;
  return nullptr;
}

} // namespace fb::conformance
