// Highlighting rules for generated code and lazy colouring of large documents.
#include "app/gui/CodeHighlighter.h"
#include "app/gui/TextFormat.h"

#include <QTextDocument>

#include <algorithm>

namespace fb::gui {

namespace {

// One palette for every language, so a keyword looks the same in each view.
const QColor kKeyword(0x6F, 0x2D, 0xA8);
const QColor kInstruction(0xA0, 0x28, 0x00);
const QColor kType(0x00, 0x6E, 0x6E);
const QColor kLocal(0x1F, 0x4E, 0xA8);
const QColor kGlobal(0x6F, 0x2D, 0xA8);
const QColor kNumber(0x8A, 0x4B, 0x00);
const QColor kString(0x2E, 0x7D, 0x32);
const QColor kComment(0x75, 0x75, 0x75);
const QColor kLabel(0x0B, 0x3D, 0x91);
const QColor kParallel(0xC6, 0x28, 0x28);
const QColor kVector(0x1B, 0x7F, 0x3B);
const QColor kUnroll(0x00, 0x69, 0x8C);

const char* kNumberPattern = R"(\b-?\d+(\.\d+)?([eE][-+]?\d+)?\b|\b0x[0-9A-Fa-f]+\b)";

} // namespace

CodeHighlighter::CodeHighlighter(QTextDocument* document) : QSyntaxHighlighter(document) {}

void CodeHighlighter::addRule(const QString& pattern, const QTextCharFormat& format, int group) {
  m_rules.push_back({QRegularExpression(pattern), format, group});
}

void CodeHighlighter::setCommentMarker(const QString& marker, const QTextCharFormat& format) {
  m_comment = QRegularExpression(QRegularExpression::escape(marker) + ".*$");
  m_commentFormat = format;
}

QList<QTextLayout::FormatRange> CodeHighlighter::formatsFor(const QString& text) const {
  // Which rule owns each character (later rules and the comment win), then one range per run.
  const int commentRule = int(m_rules.size());
  std::vector<int> owner(size_t(text.size()), -1);
  auto own = [&](qsizetype start, qsizetype length, int rule) {
    for (qsizetype i = start; i < start + length; ++i)
      owner[size_t(i)] = rule;
  };
  for (size_t r = 0; r < m_rules.size(); ++r) {
    auto it = m_rules[r].pattern.globalMatch(text);
    while (it.hasNext()) {
      const QRegularExpressionMatch m = it.next();
      own(m.capturedStart(m_rules[r].group), m.capturedLength(m_rules[r].group), int(r));
    }
  }
  if (!m_comment.pattern().isEmpty())
    if (const QRegularExpressionMatch m = m_comment.match(text); m.hasMatch())
      own(m.capturedStart(), m.capturedLength(), commentRule);
  QList<QTextLayout::FormatRange> ranges;
  for (size_t i = 0; i < owner.size();) {
    size_t j = i;
    while (j < owner.size() && owner[j] == owner[i])
      ++j;
    if (owner[i] >= 0)
      ranges.append({int(i), int(j - i),
                     owner[i] == commentRule ? m_commentFormat : m_rules[size_t(owner[i])].format});
    i = j;
  }
  return ranges;
}

void CodeHighlighter::highlightBlock(const QString& text) {
  for (const QTextLayout::FormatRange& r : formatsFor(text))
    setFormat(r.start, r.length, r.format);
}

LoopsHighlighter::LoopsHighlighter(QTextDocument* document) : CodeHighlighter(document) {
  addRule(kNumberPattern, charFormat(kNumber));
  addRule(R"(\b(kernel|for|in|out|weight|scratch|if|else|and|or|not|local|let)\b)",
          charFormat(kKeyword, /*bold=*/true));
  addRule(R"(\b(grid|range)(?=\())", charFormat(kKeyword));
  addRule(R"(\bparallel(?=\())", charFormat(kParallel, /*bold=*/true));
  addRule(R"(\bvectorized(?=\())", charFormat(kVector, /*bold=*/true));
  addRule(R"(\bunrolled(?=\())", charFormat(kUnroll, /*bold=*/true));
  addRule(R"(\b(max|min|exp|log|log1p|sqrt|tanh|sigmoid|erf|abs|floor|ceil|round|select|pow|cast)(?=\())",
          charFormat(kInstruction));
  addRule(R"(\b(f32|f16|bf16|i8|u8|i32|i64|bool)\[[^\]]*\])", charFormat(kType));
  addRule(R"("[^"]*")", charFormat(kString, false, /*italic=*/true));
  addRule(R"(^kernel\s+([A-Za-z_][A-Za-z0-9_]*))", charFormat(kLabel, /*bold=*/true), 1);
  setCommentMarker("#", charFormat(kComment, false, /*italic=*/true));
}

LlvmHighlighter::LlvmHighlighter(QTextDocument* document) : CodeHighlighter(document) {
  addRule(kNumberPattern, charFormat(kNumber));
  addRule(R"(\b(define|declare|internal|private|external|global|constant|local_unnamed_addr|)"
          R"(unnamed_addr|noalias|nocapture|readonly|writeonly|readnone|nonnull|noundef|)"
          R"(dereferenceable|align|immarg|inbounds|nuw|nsw|exact|fast|reassoc|contract|nnan|)"
          R"(ninf|nsz|arcp|afn|tail|to|x|target|datalayout|triple|source_filename|attributes|)"
          R"(zeroinitializer|undef|poison|true|false|null|nounwind|memory|argmem|inaccessiblemem|)"
          R"(none|read|write|readwrite|eq|ne|ugt|uge|ult|ule|sgt|sge|slt|sle|oeq|one|ogt|oge|)"
          R"(olt|ole|ord|uno|ueq|une)\b)",
          charFormat(kKeyword));
  addRule(R"(\b(ret|br|switch|call|load|store|alloca|getelementptr|phi|select|icmp|fcmp|add|)"
          R"(sub|mul|sdiv|udiv|srem|urem|fadd|fsub|fmul|fdiv|frem|fneg|and|or|xor|shl|lshr|ashr|)"
          R"(trunc|zext|sext|fptrunc|fpext|fptoui|fptosi|uitofp|sitofp|ptrtoint|inttoptr|bitcast|)"
          R"(extractelement|insertelement|shufflevector|extractvalue|insertvalue|unreachable|)"
          R"(freeze|label)\b)",
          charFormat(kInstruction, /*bold=*/true));
  addRule(R"(\b(void|ptr|i1|i8|i16|i32|i64|i128|half|bfloat|float|double)\b)", charFormat(kType));
  addRule(R"(<\d+ x [a-z0-9]+>)", charFormat(kType));
  addRule(R"(%[-a-zA-Z$._0-9]+|%"[^"]*")", charFormat(kLocal));
  addRule(R"(@[-a-zA-Z$._0-9]+|@"[^"]*")", charFormat(kGlobal, /*bold=*/true));
  addRule(R"(![-a-zA-Z$._0-9]+|#\d+)", charFormat(kComment));
  addRule(R"(^[-a-zA-Z$._0-9]+:)", charFormat(kLabel, /*bold=*/true));
  addRule(R"(\bc"[^"]*")", charFormat(kString));
  setCommentMarker(";", charFormat(kComment, false, /*italic=*/true));
}

AsmHighlighter::AsmHighlighter(QTextDocument* document) : CodeHighlighter(document) {
  addRule(kNumberPattern, charFormat(kNumber));
  addRule(R"(^\s+([a-z][a-z0-9]*))", charFormat(kInstruction, /*bold=*/true), 1);
  addRule(R"(^\s*(\.[A-Za-z_][A-Za-z0-9_]*))", charFormat(kKeyword), 1);
  addRule(R"(%[a-z][a-z0-9]*)", charFormat(kType));
  addRule(R"(\$-?(0x[0-9A-Fa-f]+|\d+))", charFormat(kNumber));
  addRule(R"(\.L[A-Za-z0-9_$.]+)", charFormat(kLocal));
  addRule(R"("[^"]*")", charFormat(kString));
  addRule(R"(^[^\s#][^:\s]*:)", charFormat(kLabel, /*bold=*/true));
  setCommentMarker("#", charFormat(kComment, false, /*italic=*/true));
}

PtxHighlighter::PtxHighlighter(QTextDocument* document) : CodeHighlighter(document) {
  addRule(kNumberPattern, charFormat(kNumber));
  addRule(R"(\.[a-z][a-z0-9_]*)", charFormat(kKeyword));
  addRule(R"(^\s+(@!?%p\d+\s+)?([a-z][a-z0-9]*))", charFormat(kInstruction, /*bold=*/true), 2);
  addRule(R"(%[a-z]+[0-9]*(\.[xyz])?)", charFormat(kType));
  addRule(R"(@!?%p\d+)", charFormat(kParallel));
  addRule(R"(^\$?[A-Za-z_][A-Za-z0-9_$]*:)", charFormat(kLabel, /*bold=*/true));
  setCommentMarker("//", charFormat(kComment, false, /*italic=*/true));
}

CodeHighlighter* makeCodeHighlighter(workbench::CodeKind kind, QTextDocument* document) {
  switch (kind) {
  case workbench::CodeKind::Loops: return new LoopsHighlighter(document);
  case workbench::CodeKind::Llvm:
  case workbench::CodeKind::LlvmRaw: return new LlvmHighlighter(document);
  case workbench::CodeKind::Assembly: return new AsmHighlighter(document);
  case workbench::CodeKind::Ptx: return new PtxHighlighter(document);
  case workbench::CodeKind::Object: return nullptr;
  }
  __builtin_unreachable();
}

} // namespace fb::gui
