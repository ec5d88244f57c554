// fusebox-opt's debugging reports: --bisect and --list-faults, as text and JSON.
#pragma once

#include "app/workbench/Bisect.h"
#include "core/Json.h"

#include <string>

namespace fb::cli {

/// --bisect as text: what failed first (pass application and rewrite, or the imported model),
/// the nodes the rewrite touched, the first divergent node, the guilty kernel, and the
/// --pass-limit/--rewrite-limit command line that reproduces the failing state.
std::string bisectText(const workbench::BisectReport& report, const std::string& backend,
                       const std::string& reproduce);
/// --bisect as JSON fields (the contract's keys: pass or null, index, rewrite, kernel or null,
/// nodes[], first_divergent_node, max_abs; and mismatch, step, rewrites, backend,
/// interpreter_agrees, outputs[], probes, seconds).
void writeBisectJson(JsonWriter& w, const workbench::BisectReport& report,
                     const std::string& backend);

/// --list-faults as text: name, where, and the description, one fault per paragraph.
std::string faultListText();
/// --list-faults as JSON fields: faults[{name, where, codegen, enabled, description}].
void writeFaultListJson(JsonWriter& w);

} // namespace fb::cli
