// Pass registry and pipeline parsing.
#include "passes/PassRegistry.h"
#include "passes/Passes.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

namespace fb {

std::string PassOptions::getString(const std::string& key, const std::string& dflt) const {
  auto it = m_values.find(key);
  return it == m_values.end() ? dflt : it->second;
}

Expected<int64_t> PassOptions::getInt(const std::string& key, int64_t dflt) const {
  auto it = m_values.find(key);
  if (it == m_values.end())
    return dflt;
  int64_t v = 0;
  const std::string& s = it->second;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size())
    return makeError("option ", key, " expects an integer, got '", s, "'");
  return v;
}

Expected<double> PassOptions::getDouble(const std::string& key, double dflt) const {
  auto it = m_values.find(key);
  if (it == m_values.end())
    return dflt;
  const std::string& s = it->second;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size())
    return makeError("option ", key, " expects a number, got '", s, "'");
  return v;
}

Expected<bool> PassOptions::getBool(const std::string& key, bool dflt) const {
  auto it = m_values.find(key);
  if (it == m_values.end())
    return dflt;
  if (it->second == "true" || it->second == "1")
    return true;
  if (it->second == "false" || it->second == "0")
    return false;
  return makeError("option ", key, " expects true or false, got '", it->second, "'");
}

Expected<std::string> PassOptions::getString(const std::string& key) const {
  auto it = m_values.find(key);
  if (it == m_values.end())
    return makeError("option ", key, " has no value and no declared default");
  return it->second;
}

Expected<int64_t> PassOptions::getInt(const std::string& key) const {
  if (!has(key))
    return makeError("option ", key, " has no value and no declared default");
  return getInt(key, 0);
}

Expected<double> PassOptions::getDouble(const std::string& key) const {
  if (!has(key))
    return makeError("option ", key, " has no value and no declared default");
  return getDouble(key, 0);
}

Expected<bool> PassOptions::getBool(const std::string& key) const {
  if (!has(key))
    return makeError("option ", key, " has no value and no declared default");
  return getBool(key, false);
}

std::string PassOptions::str() const {
  if (m_values.empty())
    return "";
  std::string s = "{";
  bool first = true;
  for (const auto& [k, v] : m_values) {
    s += (first ? "" : ",") + k + "=" + v;
    first = false;
  }
  return s + "}";
}

const std::vector<PassEntry>& allPasses() {
  static const std::vector<PassEntry> passes = {
#define PASS(Factory, Name) PassEntry{Name, [] { return Factory(); }},
#include "passes/Passes.def"
  };
  return passes;
}

Expected<std::unique_ptr<Pass>> createPass(const std::string& name) {
  for (const PassEntry& e : allPasses())
    if (e.name == name)
      return e.create();
  std::string known;
  for (const PassEntry& e : allPasses())
    known += (known.empty() ? "" : ", ") + e.name;
  return makeError("unknown pass '", name, "' (known passes: ", known, ")");
}

namespace {

/// `s` without leading and trailing white space: `quantize{ a = 1 }` reads as `quantize{a=1}`.
std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b])))
    ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])))
    --e;
  return s.substr(b, e - b);
}

/// Edit distance, for "did you mean" on a misspelt option.
size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

} // namespace

std::string PipelineStep::str() const { return passName + options.str(); }

Status validateStep(const PipelineStep& step, const Pass& pass) {
  const std::vector<PassOptionSpec> specs = pass.options();
  const std::string name = step.passName.empty() ? pass.name() : step.passName;
  for (const auto& [key, value] : step.options.values()) {
    const PassOptionSpec* spec = nullptr;
    for (const PassOptionSpec& s : specs)
      if (s.name == key)
        spec = &s;
    if (!spec) {
      if (specs.empty())
        return makeError("pass '", name, "' takes no options, got '", key, "'");
      std::string hint;
      for (const PassOptionSpec& s : specs)
        if (editDistance(s.name, key) <= 2)
          hint = " (did you mean '" + s.name + "'?)";
      std::string list = describePassOptions(specs);
      list.pop_back(); // the last line's newline: the CLI adds its own
      return makeError("pass '", name, "' has no option '", key, "'", hint, "; its options are:\n",
                       list);
    }
    Status ok = spec->validate(value);
    if (!ok.ok())
      return makeError("pass '", name, "': ", ok.error().message());
  }
  return Status::success();
}

PassOptions withDeclaredDefaults(const std::vector<PassOptionSpec>& specs,
                                 const PassOptions& given) {
  PassOptions all = given;
  for (const PassOptionSpec& s : specs)
    if (!all.has(s.name) && !s.defaultValue.empty())
      all.set(s.name, s.defaultValue);
  return all;
}

Expected<std::vector<PipelineStep>> parsePipeline(const std::string& text) {
  std::vector<PipelineStep> steps;
  size_t i = 0;
  auto skipSpace = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])))
      ++i;
  };
  while (true) {
    skipSpace();
    if (i >= text.size())
      break;
    size_t start = i;
    while (i < text.size() && text[i] != ',' && text[i] != '{' &&
           !std::isspace(static_cast<unsigned char>(text[i])))
      ++i;
    PipelineStep step;
    step.passName = text.substr(start, i - start);
    if (step.passName.empty())
      return makeError("pipeline '", text, "': empty pass name at character ", start + 1);
    skipSpace();
    if (i < text.size() && text[i] == '{') {
      size_t close = text.find('}', i);
      if (close == std::string::npos)
        return makeError("pipeline '", text, "': options of '", step.passName,
                         "' are missing a closing '}'");
      std::string body = text.substr(i + 1, close - i - 1);
      size_t p = 0;
      while (p <= body.size()) {
        size_t comma = body.find(',', p);
        if (comma == std::string::npos)
          comma = body.size();
        std::string kv = trim(body.substr(p, comma - p));
        if (!kv.empty()) {
          size_t eq = kv.find('=');
          std::string key = eq == std::string::npos ? "" : trim(kv.substr(0, eq));
          if (key.empty())
            return makeError("pipeline '", text, "': option '", kv, "' of '", step.passName,
                             "' must be key=value");
          step.options.set(key, trim(kv.substr(eq + 1)));
        }
        p = comma + 1;
      }
      i = close + 1;
    }
    // A named level inside a list ("-O2,plan-memory") stands for its passes.
    std::string level = step.passName;
    if (level.size() == 3 && level[0] == '-')
      level = level.substr(1);
    if (level.size() == 2 && level[0] == 'O' && level[1] >= '0' && level[1] <= '3') {
      if (!step.options.values().empty())
        return makeError("pipeline '", text, "': level ", level, " takes no options");
      FB_ASSIGN_OR_RETURN(std::vector<PipelineStep> named,
                          parsePipeline(namedPipelineString(level)));
      steps.insert(steps.end(), named.begin(), named.end());
    } else {
      auto pass = createPass(step.passName);
      if (!pass.ok())
        return pass.error();
      FB_TRY(validateStep(step, **pass));
      steps.push_back(std::move(step));
    }
    skipSpace();
    if (i < text.size()) {
      if (text[i] != ',')
        return makeError("pipeline '", text, "': expected ',' at character ", i + 1);
      ++i;
    }
  }
  return steps;
}

std::string namedPipelineString(const std::string& level) {
  // O1 cleans up what exporters emit; O2 adds the graph optimizations that change kernels
  // (BatchNorm folding, Gemm formation, fusion); O3 also reorders MatMul chains.
  const std::string o1 = "canonicalize,fold-constants,dce,cse,dce";
  const std::string o2 = o1 + ",fold-batchnorm,fuse-gemm-bias,canonicalize,dce";
  if (level == "O0")
    return "";
  if (level == "O1")
    return o1;
  if (level == "O2")
    return o2 + ",fuse";
  if (level == "O3")
    return o2 + ",reassociate-matmul,fuse";
  return "";
}

Expected<std::vector<PipelineStep>> namedPipeline(const std::string& level) {
  if (level != "O0" && level != "O1" && level != "O2" && level != "O3")
    return makeError("unknown optimization level '", level, "' (O0..O3)");
  return parsePipeline(namedPipelineString(level));
}

} // namespace fb
