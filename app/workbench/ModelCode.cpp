// Locating each kernel in a whole-model loop, LLVM IR or assembly text.
#include "app/workbench/ModelCode.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <string_view>

namespace fb::workbench {

namespace {

std::vector<std::string_view> splitLines(const std::string& text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    lines.emplace_back(text.data() + start, end - start);
    start = end + 1;
  }
  return lines;
}

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

/// Kernel index of a function symbol: the kernel's own name, or a helper the generators name
/// `<kernel>.worker`, `<kernel>.ukernel.edge.nv2`, ...; nullopt for anything else.
class SymbolOwners {
public:
  explicit SymbolOwners(const std::vector<EmittedKernel>& kernels) {
    for (size_t k = 0; k < kernels.size(); ++k)
      m_index.emplace(kernels[k].name, k);
  }
  std::optional<size_t> owner(std::string_view symbol) const {
    std::string s(symbol);
    while (true) {
      if (auto it = m_index.find(s); it != m_index.end())
        return it->second;
      // A helper NAME.xxx, or a GPU launch NAME_sN of a kernel with several nests.
      size_t dot = s.rfind('.');
      size_t launch = s.rfind("_s");
      if (launch != std::string::npos && launch > 0 && launch + 2 < s.size() &&
          s.find_first_not_of("0123456789", launch + 2) == std::string::npos) {
        s.resize(launch);
        continue;
      }
      if (dot == std::string::npos || dot == 0)
        return std::nullopt;
      s.resize(dot);
    }
  }

private:
  std::map<std::string, size_t> m_index;
};

/// Grows kernel k's section to cover lines [first, last].
void cover(std::vector<CodeSection>& sections, std::vector<bool>& seen, size_t k, size_t first,
           size_t last) {
  CodeSection& s = sections[k];
  if (!seen[k]) {
    s = {first, last - first + 1};
    seen[k] = true;
    return;
  }
  const size_t end = std::max(s.firstLine + s.lineCount, last + 1);
  s.firstLine = std::min(s.firstLine, first);
  s.lineCount = end - s.firstLine;
}

std::vector<CodeSection> locateLoops(const std::vector<std::string_view>& lines,
                                     const std::vector<EmittedKernel>& kernels) {
  std::vector<CodeSection> sections(kernels.size());
  std::vector<bool> seen(kernels.size(), false);
  SymbolOwners owners(kernels);
  std::vector<std::pair<size_t, size_t>> starts; // (line, kernel)
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!startsWith(lines[i], "kernel "))
      continue;
    std::string_view rest = lines[i].substr(7);
    std::string_view name = rest.substr(0, rest.find('('));
    if (auto k = owners.owner(name))
      starts.emplace_back(i, *k);
  }
  for (size_t s = 0; s < starts.size(); ++s) {
    size_t last = (s + 1 < starts.size() ? starts[s + 1].first : lines.size()) - 1;
    while (last > starts[s].first && trimmed(lines[last]).empty())
      --last;
    cover(sections, seen, starts[s].second, starts[s].first, last);
  }
  return sections;
}

/// The symbol a `define` line defines: `define internal void @k3.worker(ptr %ctx) #1 {`.
std::string_view definedSymbol(std::string_view line) {
  size_t at = line.find('@');
  if (at == std::string_view::npos)
    return {};
  std::string_view rest = line.substr(at + 1);
  if (!rest.empty() && rest.front() == '"') {
    size_t close = rest.find('"', 1);
    return close == std::string_view::npos ? std::string_view{} : rest.substr(1, close - 1);
  }
  size_t n = 0;
  while (n < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[n])) || rest[n] == '_' ||
                             rest[n] == '.' || rest[n] == '$' || rest[n] == '-'))
    ++n;
  return rest.substr(0, n);
}

std::vector<CodeSection> locateLlvm(const std::vector<std::string_view>& lines,
                                    const std::vector<EmittedKernel>& kernels) {
  std::vector<CodeSection> sections(kernels.size());
  std::vector<bool> seen(kernels.size(), false);
  SymbolOwners owners(kernels);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!startsWith(lines[i], "define "))
      continue;
    std::optional<size_t> k = owners.owner(definedSymbol(lines[i]));
    size_t first = i;
    // "; Function Attrs: ..." belongs to the function below it.
    while (first > 0 && startsWith(lines[first - 1], ";"))
      --first;
    size_t last = i;
    while (last + 1 < lines.size() && lines[last] != "}")
      ++last;
    if (k)
      cover(sections, seen, *k, first, last);
    i = last;
  }
  return sections;
}

/// The symbol of an assembler directive's first operand: `\t.type\tk3,@function` -> "k3".
std::string_view directiveSymbol(std::string_view line, std::string_view directive) {
  std::string_view t = trimmed(line);
  if (!startsWith(t, directive))
    return {};
  t = trimmed(t.substr(directive.size()));
  return trimmed(t.substr(0, t.find(',')));
}

std::vector<CodeSection> locateAssembly(const std::vector<std::string_view>& lines,
                                        const std::vector<EmittedKernel>& kernels) {
  std::vector<CodeSection> sections(kernels.size());
  std::vector<bool> seen(kernels.size(), false);
  SymbolOwners owners(kernels);
  // The file's header (our comment line, .text, .file) belongs to no kernel.
  size_t headerEnd = 0;
  while (headerEnd < lines.size()) {
    std::string_view t = trimmed(lines[headerEnd]);
    if (!(t.empty() || startsWith(t, "#") || startsWith(t, ".text") || startsWith(t, ".file") ||
          startsWith(t, ".intel_syntax")))
      break;
    ++headerEnd;
  }
  size_t nextStart = headerEnd; // the first line after the previous function
  std::string current;          // the function being read
  size_t currentStart = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (std::string_view t = trimmed(lines[i]); !startsWith(t, ".type") && !startsWith(t, ".size"))
      continue;
    std::string_view typed = directiveSymbol(lines[i], ".type");
    if (!typed.empty() && lines[i].find("@function") != std::string_view::npos) {
      current = std::string(typed);
      currentStart = std::max(nextStart, headerEnd);
      continue;
    }
    std::string_view sized = directiveSymbol(lines[i], ".size");
    if (!current.empty() && sized == current) {
      // The blank lines after the previous function belong to no one.
      while (currentStart < i && trimmed(lines[currentStart]).empty())
        ++currentStart;
      if (std::optional<size_t> k = owners.owner(current))
        cover(sections, seen, *k, currentStart, i);
      nextStart = i + 1;
      current.clear();
    }
  }
  return sections;
}

} // namespace

/// PTX: a kernel's launches run from their `// .globl NAME` line to the closing `}` of their
/// `.entry`.
std::vector<CodeSection> locatePtx(const std::vector<std::string_view>& lines,
                                   const std::vector<EmittedKernel>& kernels) {
  std::vector<CodeSection> sections(kernels.size());
  std::vector<bool> seen(kernels.size(), false);
  SymbolOwners owners(kernels);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view t = trimmed(lines[i]);
    size_t at = t.find(".entry ");
    if (at == std::string_view::npos)
      continue;
    std::string_view name = t.substr(at + 7);
    name = name.substr(0, name.find('('));
    std::optional<size_t> k = owners.owner(name);
    size_t first = i > 0 && startsWith(trimmed(lines[i - 1]), "// .globl") ? i - 1 : i;
    size_t last = i;
    while (last + 1 < lines.size() && lines[last] != "}")
      ++last;
    if (k)
      cover(sections, seen, *k, first, last);
    i = last;
  }
  return sections;
}

std::vector<CodeSection> locateKernelSections(CodeKind kind, const std::string& text,
                                              const std::vector<EmittedKernel>& kernels) {
  const std::vector<std::string_view> lines = splitLines(text);
  switch (kind) {
  case CodeKind::Loops: return locateLoops(lines, kernels);
  case CodeKind::Llvm:
  case CodeKind::LlvmRaw: return locateLlvm(lines, kernels);
  case CodeKind::Assembly: return locateAssembly(lines, kernels);
  case CodeKind::Ptx:
    return locatePtx(lines, kernels);
  case CodeKind::Object:
    return std::vector<CodeSection>(kernels.size());
  }
  __builtin_unreachable();
}

int ModelCode::kernelAtLine(size_t line) const {
  for (size_t k = 0; k < sections.size(); ++k)
    if (sections[k].lineCount > 0 && line >= sections[k].firstLine &&
        line < sections[k].firstLine + sections[k].lineCount)
      return int(k);
  return -1;
}

int ModelCode::kernelOfNode(NodeId id) const {
  if (id == 0)
    return -1;
  for (size_t k = 0; k < code.kernelList.size(); ++k)
    if (code.kernelList[k].node == id)
      return int(k);
  // A node inside an expanded fused group: the kernel whose body holds it.
  for (size_t k = 0; k < code.kernelList.size(); ++k) {
    const std::vector<NodeId>& nodes = code.kernelList[k].nodes;
    if (std::find(nodes.begin(), nodes.end(), id) != nodes.end())
      return int(k);
  }
  return -1;
}

std::string ModelCode::sectionText(size_t k) const {
  if (k >= sections.size() || sections[k].lineCount == 0)
    return {};
  const std::string& text = code.text;
  size_t begin = 0;
  for (size_t line = 0; line < sections[k].firstLine; ++line) {
    const size_t newline = text.find('\n', begin);
    if (newline == std::string::npos)
      return {};
    begin = newline + 1;
  }
  size_t end = begin;
  for (size_t line = 0; line < sections[k].lineCount && end < text.size(); ++line) {
    end = text.find('\n', end);
    end = end == std::string::npos ? text.size() : end + 1;
  }
  return text.substr(begin, end - begin);
}

Expected<ModelCode> emitModelCode(const Graph& graph, const EmitRequest& request,
                                  const JobControl* job) {
  if (request.kind == CodeKind::Object)
    return makeError("an object file has no text to show");
  FB_ASSIGN_OR_RETURN(EmittedCode code, emitCode(graph, request, job));
  ModelCode out;
  out.sections = locateKernelSections(code.kind, code.text, code.kernelList);
  out.code = std::move(code);
  return out;
}

} // namespace fb::workbench
