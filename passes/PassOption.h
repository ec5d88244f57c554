// Declared pass options (in the manner of MLIR's Pass::Option<T>): name, type, default, the
// values it accepts and one line of help, checked before any pass runs.
#pragma once

#include "core/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace fb {

/// The type of a pass option's value.
enum class PassOptionType {
  Int,    ///< a decimal integer
  Number, ///< a decimal floating-point number
  Bool,   ///< true | false (also 1 | 0)
  Enum,   ///< one of a fixed list of words
  String, ///< free text (a path, a list of files)
};

/// "int", "number", "bool", "enum", "string": the type as --list-passes prints it.
const char* passOptionTypeName(PassOptionType type);

/// One option a pass declares. Passes return their declarations from Pass::options(); the
/// pipeline parser validates every step against them, and the pass manager fills in the
/// defaults, so a pass reads each declared option without a default of its own.
struct PassOptionSpec {
  std::string name;         ///< kebab-case or snake_case, as written in a pipeline string
  PassOptionType type = PassOptionType::String;
  std::string defaultValue; ///< as text; empty for a String option means "not given"
  std::string help;         ///< one line for --list-passes and the GUI
  std::vector<std::string> choices;    ///< Enum: the accepted words
  std::optional<double> min, max;      ///< Int / Number: the accepted range
  bool minExclusive = false;           ///< the range is (min, max] rather than [min, max]

  /// What the option accepts, for errors and help: "an integer in [1, 4096]",
  /// "one of minmax, percentile, entropy", "true or false", "text".
  std::string accepts() const;
  /// Checks `value` against the type, range and choices; the error names the option and what
  /// it accepts (the caller adds the pass).
  Status validate(const std::string& value) const;

  // Declaration helpers, so a pass's list reads as a table.
  static PassOptionSpec integer(std::string name, int64_t dflt, int64_t min, int64_t max,
                                std::string help);
  static PassOptionSpec number(std::string name, double dflt, double min, double max,
                               std::string help, bool minExclusive = false);
  static PassOptionSpec boolean(std::string name, bool dflt, std::string help);
  static PassOptionSpec oneOf(std::string name, std::vector<std::string> choices,
                              std::string dflt, std::string help);
  static PassOptionSpec text(std::string name, std::string help);
};

/// "max-group-size: int in [1, 4096], default 16 — ..." lines of a pass's options, for errors
/// that must say what a pass accepts.
std::string describePassOptions(const std::vector<PassOptionSpec>& specs);

} // namespace fb
