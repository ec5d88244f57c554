// Declared pass options: what each accepts, and the checks the pipeline parser runs.
#include "passes/PassOption.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace fb {

const char* passOptionTypeName(PassOptionType type) {
  switch (type) {
  case PassOptionType::Int: return "int";
  case PassOptionType::Number: return "number";
  case PassOptionType::Bool: return "bool";
  case PassOptionType::Enum: return "enum";
  case PassOptionType::String: return "string";
  }
  __builtin_unreachable();
}

namespace {

/// A bound as the user would write it: 4096, not 4096.000000.
std::string boundText(double v) {
  std::ostringstream os;
  if (v == std::floor(v) && std::fabs(v) < 9.2e18)
    os << int64_t(v);
  else
    os << v;
  return os.str();
}

std::string rangeText(const PassOptionSpec& s) {
  if (!s.min && !s.max)
    return "";
  std::string lo = s.min ? boundText(*s.min) : "-inf", hi = s.max ? boundText(*s.max) : "inf";
  return std::string(" in ") + (s.minExclusive ? "(" : "[") + lo + ", " + hi + "]";
}

bool parseInteger(const std::string& s, int64_t& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

bool parseNumber(const std::string& s, double& v) {
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size() && std::isfinite(v);
}

} // namespace

std::string PassOptionSpec::accepts() const {
  switch (type) {
  case PassOptionType::Int: return "an integer" + rangeText(*this);
  case PassOptionType::Number: return "a number" + rangeText(*this);
  case PassOptionType::Bool: return "true or false";
  case PassOptionType::Enum: {
    std::string s = "one of ";
    for (size_t i = 0; i < choices.size(); ++i)
      s += (i ? ", " : "") + choices[i];
    return s;
  }
  case PassOptionType::String: return "text";
  }
  __builtin_unreachable();
}

Status PassOptionSpec::validate(const std::string& value) const {
  auto bad = [&] {
    return makeError("option '", name, "' expects ", accepts(), ", got '", value, "'");
  };
  auto inRange = [&](double v) {
    if (min && (minExclusive ? v <= *min : v < *min))
      return false;
    return !max || v <= *max;
  };
  switch (type) {
  case PassOptionType::Int: {
    int64_t v = 0;
    if (!parseInteger(value, v) || !inRange(double(v)))
      return bad();
    return Status::success();
  }
  case PassOptionType::Number: {
    double v = 0;
    if (!parseNumber(value, v) || !inRange(v))
      return bad();
    return Status::success();
  }
  case PassOptionType::Bool:
    if (value != "true" && value != "false" && value != "1" && value != "0")
      return bad();
    return Status::success();
  case PassOptionType::Enum:
    for (const std::string& c : choices)
      if (c == value)
        return Status::success();
    return bad();
  case PassOptionType::String:
    return Status::success();
  }
  __builtin_unreachable();
}

PassOptionSpec PassOptionSpec::integer(std::string name, int64_t dflt, int64_t min, int64_t max,
                                       std::string help) {
  PassOptionSpec s;
  s.name = std::move(name);
  s.type = PassOptionType::Int;
  s.defaultValue = std::to_string(dflt);
  s.min = double(min);
  s.max = double(max);
  s.help = std::move(help);
  return s;
}

PassOptionSpec PassOptionSpec::number(std::string name, double dflt, double min, double max,
                                      std::string help, bool minExclusive) {
  PassOptionSpec s;
  s.name = std::move(name);
  s.type = PassOptionType::Number;
  s.defaultValue = boundText(dflt);
  s.min = min;
  s.max = max;
  s.minExclusive = minExclusive;
  s.help = std::move(help);
  return s;
}

PassOptionSpec PassOptionSpec::boolean(std::string name, bool dflt, std::string help) {
  PassOptionSpec s;
  s.name = std::move(name);
  s.type = PassOptionType::Bool;
  s.defaultValue = dflt ? "true" : "false";
  s.help = std::move(help);
  return s;
}

PassOptionSpec PassOptionSpec::oneOf(std::string name, std::vector<std::string> choices,
                                     std::string dflt, std::string help) {
  PassOptionSpec s;
  s.name = std::move(name);
  s.type = PassOptionType::Enum;
  s.choices = std::move(choices);
  s.defaultValue = std::move(dflt);
  s.help = std::move(help);
  return s;
}

PassOptionSpec PassOptionSpec::text(std::string name, std::string help) {
  PassOptionSpec s;
  s.name = std::move(name);
  s.type = PassOptionType::String;
  s.help = std::move(help);
  return s;
}

std::string describePassOptions(const std::vector<PassOptionSpec>& specs) {
  std::string out;
  for (const PassOptionSpec& s : specs) {
    out += "  " + s.name + ": " + s.accepts();
    if (!s.defaultValue.empty())
      out += ", default " + s.defaultValue;
    out += " — " + s.help + "\n";
  }
  return out;
}

} // namespace fb
