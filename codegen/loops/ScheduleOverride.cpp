// The schedule override grammar (--schedule): parsing and applying directives to a kernel.
#include "codegen/loops/ScheduleOverride.h"
#include "codegen/loops/Schedule.h"
#include "codegen/loops/ScheduleInternal.h"

#include <algorithm>
#include <charconv>
#include <set>

namespace fb::cg {

using namespace schedule_detail;

namespace {

bool parseInt(std::string_view s, int64_t* v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

std::vector<std::string> splitOn(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t p = s.find(sep, start);
    out.emplace_back(s.substr(start, p == std::string_view::npos ? std::string_view::npos : p - start));
    if (p == std::string_view::npos)
      break;
    start = p + 1;
  }
  return out;
}

std::string trim(std::string s) {
  size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

} // namespace

Expected<std::vector<ScheduleOverride>> parseScheduleOverrides(std::string_view text) {
  std::vector<ScheduleOverride> out;
  for (std::string entry : splitOn(text, ';')) {
    entry = trim(entry);
    if (entry.empty())
      continue;
    size_t colon = entry.find(':');
    if (colon == std::string::npos || colon == 0)
      return makeError("'", entry, "' is not KERNEL:DIRECTIVE,...");
    ScheduleOverride o;
    o.kernel = trim(entry.substr(0, colon));
    for (std::string d : splitOn(std::string_view(entry).substr(colon + 1), ',')) {
      d = trim(d);
      if (d.empty())
        continue;
      size_t eq = d.find('=');
      ScheduleDirective dir{trim(d.substr(0, eq)), eq == std::string::npos ? "" : trim(d.substr(eq + 1))};
      static const std::set<std::string> known = {
          "none",   "default",  "split",   "tile", "reorder", "fuse", "vectorize",
          "unroll", "parallel", "cache",   "mr",   "nr",      "mc",   "kc",
          "nc",     "block",    "regtile", "conv", "vectors"};
      if (!known.count(dir.name))
        return makeError("unknown directive '", dir.name, "' in '", entry,
                         "' (none, default, split, tile, reorder, fuse, vectorize, unroll, "
                         "parallel, cache, mr, nr, mc, kc, nc, block, regtile, conv, vectors)");
      bool needsValue = dir.name != "none" && dir.name != "default";
      if (needsValue == dir.value.empty())
        return makeError("directive '", d, "' ",
                         needsValue ? "needs a value" : "takes no value");
      o.directives.push_back(std::move(dir));
    }
    out.push_back(std::move(o));
  }
  return out;
}

std::string printScheduleOverrides(const std::vector<ScheduleOverride>& overrides) {
  std::string text;
  for (const ScheduleOverride& o : overrides) {
    text += (text.empty() ? "" : ";") + o.kernel + ":";
    for (size_t i = 0; i < o.directives.size(); ++i)
      text += (i ? "," : "") + o.directives[i].name +
              (o.directives[i].value.empty() ? "" : "=" + o.directives[i].value);
  }
  return text;
}

Status applyScheduleOverride(Kernel& kernel, const StmtPtr& unscheduled,
                             const ScheduleOverride& ov, const LowerOptions& options) {
  StmtPtr s = kernel.body;
  for (const ScheduleDirective& d : ov.directives) {
    auto fail = [&](const Error& e) {
      return Error(kernel.name + ": schedule " + d.name +
                       (d.value.empty() ? "" : "=" + d.value) + ": " + e.message(),
                   e.kind());
    };
    auto intArg = [&](const std::string& text, int64_t* v) -> Status {
      if (!parseInt(text, v) || *v < 0)
        return makeError("'", text, "' is not a non-negative integer");
      return Status::success();
    };
    // "VAR/N" or "N".
    std::vector<std::string> parts = splitOn(d.value, '/');
    Expected<StmtPtr> r = s;
    if (d.name == "none") {
      r = unscheduled;
    } else if (d.name == "default") {
      r = applyDefaultSchedule(unscheduled, options);
    } else if (d.name == "split") {
      int64_t f = 0;
      if (parts.size() != 2)
        return fail(makeError("expected VAR/N"));
      if (Status st = intArg(parts[1], &f); !st.ok())
        return fail(st.error());
      r = splitLoop(s, parts[0], f);
    } else if (d.name == "tile") {
      std::vector<int64_t> fs;
      for (const std::string& t : splitOn(d.value, 'x')) {
        int64_t f = 0;
        if (Status st = intArg(t, &f); !st.ok())
          return fail(st.error());
        fs.push_back(f);
      }
      r = s;
      StmtPtr cur = s;
      Status bad;
      StmtPtr tiled = perNest(cur, [&](const StmtPtr& nest) -> StmtPtr {
        auto t = tileLoops(nest, fs);
        if (!t.ok()) {
          if (bad.ok())
            bad = t.error();
          return nest;
        }
        return *t;
      });
      if (!bad.ok())
        return fail(bad.error());
      r = tiled;
    } else if (d.name == "reorder") {
      r = reorderLoops(s, parts);
    } else if (d.name == "fuse") {
      if (parts.size() != 2)
        return fail(makeError("expected OUTER/INNER"));
      r = fuseLoops(s, parts[0], parts[1]);
    } else if (d.name == "vectorize" || d.name == "unroll") {
      int64_t n = 0;
      if (Status st = intArg(parts.back(), &n); !st.ok())
        return fail(st.error());
      if (n < 1)
        return fail(makeError("width must be at least 1"));
      bool vec = d.name == "vectorize";
      if (parts.size() == 2) {
        r = vec ? vectorizeLoop(s, parts[0], int(n)) : unrollLoop(s, parts[0], int(n));
      } else if (vec) {
        r = vectorizeInnermost(s, int(n));
      } else {
        // The innermost loop that is not already vectorized or unrolled, in each nest.
        r = perNest(s, [&](const StmtPtr& nest) {
          std::string target;
          visitLoops(nest, [&](const Stmt& l) {
            bool innermostSerial = l.forKind == ForKind::Serial;
            bool hasSerialInside = false;
            forEachStmt(l.body, [&](const Stmt& x) {
              hasSerialInside |= x.kind == Stmt::Kind::For && x.forKind == ForKind::Serial;
            });
            if (innermostSerial && !hasSerialInside && target.empty())
              target = l.var;
            return false;
          });
          if (target.empty())
            return nest;
          auto u = unrollLoop(nest, target, int(n));
          return u.ok() ? *u : nest;
        });
      }
    } else if (d.name == "parallel") {
      if (d.value == "0") {
        std::function<StmtPtr(const StmtPtr&)> serial = [&](const StmtPtr& x) -> StmtPtr {
          if (!x)
            return x;
          auto c = std::make_shared<Stmt>(*x);
          if (c->kind == Stmt::Kind::For && c->forKind == ForKind::Parallel)
            c->forKind = ForKind::Serial;
          c->body = serial(x->body);
          c->thenBody = serial(x->thenBody);
          c->elseBody = serial(x->elseBody);
          for (StmtPtr& y : c->stmts)
            y = serial(y);
          return c;
        };
        r = serial(s);
        if (kernel.gemm)
          kernel.gemm->parallel = false;
      } else if (d.value == "1") {
        r = perNest(s, [&](const StmtPtr& nest) { return parallelizeOutermost(nest, 0); });
        if (kernel.gemm)
          kernel.gemm->parallel = true;
      } else {
        r = parallelizeLoop(s, d.value);
      }
    } else if (d.name == "block" || d.name == "regtile") {
      // GPU directives, read by the GPU schedule (codegen/gpu/GpuSchedule.h); checked here so
      // that a bad value is an error on every target, and without effect on the CPU's nest.
      int64_t v = 0;
      if (Status st = intArg(d.value, &v); !st.ok())
        return fail(st.error());
      if (d.name == "block" && (v < 32 || v > 256 || v % 32 != 0))
        return fail(makeError("threads per block must be a multiple of 32 in [32, 256]"));
      if (d.name == "regtile" && v != 1 && v != 2 && v != 4 && v != 8)
        return fail(makeError("a register tile side is 1, 2, 4 or 8"));
    } else if (d.name == "conv") {
      // The convolution algorithm of a GEMM-class convolution (codegen/gemm/Winograd.h).
      if (!kernel.gemm || !kernel.gemm->conv || isDepthwise(*kernel.gemm))
        return fail(makeError("the kernel is not an im2col convolution (conv= applies to "
                              "GEMM-class Conv kernels)"));
      GemmSpec& g = *kernel.gemm;
      if (d.value == "im2col") {
        g.algorithm = ConvAlgorithm::Im2col;
      } else if (d.value == "winograd" || d.value == "winograd2" || d.value == "winograd4") {
        if (!winogradApplies(g))
          return fail(makeError("Winograd needs a 3x3 convolution with stride 1, no dilation, "
                                "one group, constant weights and a bias per channel"));
        g.algorithm = ConvAlgorithm::Winograd;
        g.winogradTile = d.value == "winograd4" ? 4 : 2;
      } else if (d.value == "direct") {
        if (!g.constantA || (g.bias != GemmSpec::Bias::None && g.bias != GemmSpec::Bias::PerRow))
          return fail(makeError("the direct convolution needs constant weights and a bias per "
                                "channel (or none)"));
        g.algorithm = ConvAlgorithm::Direct;
      } else {
        return fail(makeError("conv is im2col, winograd, winograd2, winograd4 or direct, not '",
                              d.value, "'"));
      }
    } else if (d.name == "vectors") {
      // Which way the GEMM register tile's vectors run (GemmSpec::TileVectors).
      if (!kernel.gemm || isDepthwise(*kernel.gemm))
        return fail(makeError("the kernel is not GEMM-class (no micro-kernel spec)"));
      if (d.value != "m" && d.value != "n")
        return fail(makeError("vectors is m (along output channels: a column tile) or n "
                              "(along pixels: the row tile), not '",
                              d.value, "'"));
      kernel.gemm->tileVectors =
          d.value == "m" ? GemmSpec::TileVectors::AlongM : GemmSpec::TileVectors::AlongN;
    } else if (d.name == "cache") {
      r = cacheReductions(s, d.value);
      if (r.ok() && equal(*r, s))
        return fail(makeError("no reduction loop keeps an element of ", d.value, " fixed"));
    } else {
      // GEMM blocking.
      if (!kernel.gemm)
        return fail(makeError("the kernel is not GEMM-class (no micro-kernel spec)"));
      if (isDepthwise(*kernel.gemm))
        return fail(makeError("the kernel is a depthwise convolution (direct depthwise "
                              "generator): GEMM blocking (", d.name, ") does not apply"));
      int64_t v = 0;
      if (Status st = intArg(d.value, &v); !st.ok())
        return fail(st.error());
      GemmSpec& g = *kernel.gemm;
      (d.name == "mr" ? g.mr : d.name == "nr" ? g.nr : d.name == "mc" ? g.mc : d.name == "kc" ? g.kc : g.nc) = v;
    }
    if (!r.ok())
      return fail(r.error());
    s = *r;
  }
  kernel.body = s;
  // A pool compiled by the direct depthwise generator has no loops to schedule: a directive
  // that reshapes the nest compiles it from that nest instead (what the Code view then shows).
  static const std::set<std::string> nestDirectives = {"none", "split",     "tile",   "reorder",
                                                       "fuse", "vectorize", "unroll", "cache"};
  if (kernel.gemm && kernel.gemm->pooling != GemmSpec::Pooling::None &&
      std::any_of(ov.directives.begin(), ov.directives.end(),
                  [](const ScheduleDirective& d) { return nestDirectives.count(d.name) > 0; }))
    kernel.gemm.reset();
  return Status::success();
}

} // namespace fb::cg
