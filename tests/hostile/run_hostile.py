#!/usr/bin/python3
"""Runs every hostile model of make_hostile_models.py through every runner and checks that each
ends as its manifest expects: a clean error (exit 1 and a non-empty `error: ...` line that says
what went wrong) or the correct result (outputs equal to the NumPy reference).

Runners: `interp` (fusebox-opt --run), `cpu-O0` and `cpu-O2` (--backend cpu --run at -O0 and
-O2), and `gui` (the GUI's screenshot mode after -O2, QT_QPA_PLATFORM=offscreen). The GUI shows
a model rather than running it, so there a model expected to fail may open (exit 0, window.png
written) or be refused with a message; a model expected to run must open. Everywhere a signal, a
timeout, an exit status other than 0 or 1, or an `error:` line with nothing after it fails.
Every run gets FUSEBOX_MEMORY_LIMIT=1G and an 8 GiB address-space limit (see below).

Prints a table of model x runner -> outcome. A failure is an error unless
tests/hostile/known_failures.txt lists the pair ("model runner: reason"); a listed pair that
passes is reported so the list stays true.

  run_hostile.py BUILD_DIR OUT [--jobs N] [--runners interp,cpu-O0,cpu-O2,gui] [MODEL ...]
"""
import argparse
import concurrent.futures
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNERS = ["interp", "cpu-O0", "cpu-O2", "gui"]
# A run of these small models takes well under a second (the GUI about one); the limits leave
# room for a loaded machine, and --timeout-scale for sanitizer builds. The GUI's limit is the
# issue's: the screenshot set of a 3,000-output model must finish in 30 s.
CLI_TIMEOUT_S = 20
GUI_TIMEOUT_S = 30
# Every run sees the same memory limit, whatever the machine (FUSEBOX_MEMORY_LIMIT), and an
# address-space limit under it: an allocation that slips past Fusebox's own checks fails as
# std::bad_alloc, which must still end as a clean error, instead of filling a shared CI machine
# until the OOM killer picks a victim. Sanitizer builds reserve terabytes of address space and
# run with --no-address-limit.
MEMORY_LIMIT = "1G"
ADDRESS_LIMIT_BYTES = 8 << 30


def sanitize(name):
    """The file name fusebox-opt --output-dir gives an output (app/cli/OptDriver.cpp)."""
    s = "".join(c if c.isalnum() or c in "_-." else "_" for c in name)
    return s or "output"


def known_failures():
    known = {}
    with open(os.path.join(HERE, "known_failures.txt")) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            pair, _, reason = line.partition(":")
            known[tuple(pair.split())] = reason.strip()
    return known


def command(build, out, case, runner, workdir):
    model = os.path.join(out, case["model"])
    if runner == "gui":
        return [os.path.join(build, "app/gui/fusebox"), model, "--passes", "O2",
                "--screenshot", os.path.join(workdir, "shots")]
    cmd = [os.path.join(build, "app/cli/fusebox-opt"), model]
    if runner.startswith("cpu-"):
        cmd += ["-" + runner.split("-")[1], "--backend", "cpu"]
    cmd += ["--run", "--output-dir", os.path.join(workdir, "outputs")]
    if case["inputs"]:
        cmd += ["--inputs", ",".join(os.path.join(out, i) for i in case["inputs"])]
    return cmd


def first_error_line(text):
    for line in text.splitlines():
        if line.startswith("error:"):
            return line
    return None


def compare_outputs(out, case, workdir):
    """None when every output matches its reference, else what differs."""
    for name, ref_file in zip(case["outputs"], case["references"]):
        path = os.path.join(workdir, "outputs", sanitize(name) + ".npy")
        if not os.path.exists(path):
            return f"output {name} was not written"
        got, want = np.load(path), np.load(os.path.join(out, ref_file))
        if got.dtype != want.dtype or got.shape != want.shape:
            return (f"output {name} is {got.dtype}{list(got.shape)}, "
                    f"expected {want.dtype}{list(want.shape)}")
        if want.dtype.kind == "f":
            bad = ~np.isclose(got, want, rtol=1e-5, atol=1e-5, equal_nan=True)
        else:
            bad = got != want
        if bad.any():
            at = tuple(int(i) for i in np.argwhere(bad)[0])
            return (f"output {name}: {int(bad.sum())} of {want.size} elements differ, "
                    f"first at {list(at)}: got {got[at]}, expected {want[at]}")
    return None


def limit_address_space():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_LIMIT_BYTES, ADDRESS_LIMIT_BYTES))


def run_one(build, out, case, runner, timeout_scale, address_limit):
    """Returns (passed, outcome text)."""
    workdir = tempfile.mkdtemp(prefix=f"hostile-{case['name']}-{runner}-")
    try:
        env = dict(os.environ, FUSEBOX_MEMORY_LIMIT=MEMORY_LIMIT, QT_QPA_PLATFORM="offscreen")
        timeout = (GUI_TIMEOUT_S if runner == "gui" else CLI_TIMEOUT_S) * timeout_scale
        started = time.monotonic()
        try:
            p = subprocess.run(command(build, out, case, runner, workdir), env=env,
                               capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL,
                               preexec_fn=limit_address_space if address_limit else None)
        except subprocess.TimeoutExpired:
            return False, f"timeout after {timeout:g} s"
        seconds = time.monotonic() - started
        stderr = p.stderr.decode(errors="replace")
        if p.returncode < 0:
            return False, f"killed by {signal.Signals(-p.returncode).name}"
        if p.returncode not in (0, 1):
            return False, f"exit status {p.returncode}: {stderr.strip()[-200:]}"
        if p.returncode == 1:
            line = first_error_line(stderr)
            if line is None or not line[len("error:"):].strip():
                return False, f"exit 1 with an empty error message: {stderr.strip()[-200:]!r}"
            message = line[len("error:"):].strip()[:240]
            if case["expect"] == "result":
                return False, f"error instead of a result: {message}"
            if not re.search(case["pattern"], message, re.IGNORECASE):
                return False, f"error that does not say what (/{case['pattern']}/): {message}"
            return True, f"error ({seconds:.1f} s): {message}"
        if runner == "gui":
            if not os.path.exists(os.path.join(workdir, "shots", "window.png")):
                return False, "exit 0 without window.png"
            return True, f"opened ({seconds:.1f} s)"
        if case["expect"] == "error":
            return False, "ran without an error (expected one)"
        wrong = compare_outputs(out, case, workdir)
        return ((False, f"wrong result: {wrong}") if wrong
                else (True, f"correct result ({seconds:.1f} s)"))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build")
    ap.add_argument("out")
    ap.add_argument("models", nargs="*")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--runners", default=",".join(RUNNERS))
    ap.add_argument("--timeout-scale", type=float, default=1.0,
                    help="multiply the time limits (a sanitizer build runs several times slower)")
    ap.add_argument("--no-address-limit", action="store_true",
                    help="run without the 8 GiB address-space limit (for sanitizer builds)")
    args = ap.parse_intermixed_args()
    runners = args.runners.split(",")
    if "gui" in runners and not os.path.exists(os.path.join(args.build, "app/gui/fusebox")):
        print("gui runner skipped: the GUI was not built")
        runners.remove("gui")
    with open(os.path.join(args.out, "manifest.json")) as f:
        cases = json.load(f)
    if args.models:
        unknown = set(args.models) - {c["name"] for c in cases}
        if unknown:
            print(f"unknown models: {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        cases = [c for c in cases if c["name"] in args.models]
    known = known_failures()
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {(c["name"], r): pool.submit(run_one, args.build, args.out, c, r,
                                                   args.timeout_scale, not args.no_address_limit)
                   for c in cases for r in runners}
        results = {k: f.result() for k, f in futures.items()}

    unexpected, passed, known_failed, listed_passing = [], 0, 0, []
    cells = {}
    for c in cases:
        for r in runners:
            ok, text = results[(c["name"], r)]
            key = (c["name"], r)
            if ok:
                passed += 1
                cells[key] = "ok" if key not in known else "ok (listed)"
                if key in known:
                    listed_passing.append(key)
            elif key in known:
                known_failed += 1
                cells[key] = "known"
            else:
                unexpected.append(key)
                cells[key] = "FAIL"
    width = max(len(c["name"]) for c in cases)
    print(f"| {'model':<{width}} | expect | " + " | ".join(f"{r:<11}" for r in runners) + " |")
    print(f"|{'-' * (width + 2)}|--------|" + "|".join("-" * 13 for _ in runners) + "|")
    for c in cases:
        print(f"| {c['name']:<{width}} | {c['expect']:<6} | " +
              " | ".join(f"{cells[(c['name'], r)]:<11}" for r in runners) + " |")
    print()
    for c in cases:
        for r in runners:
            key = (c["name"], r)
            ok, text = results[key]
            tag = {"ok": "  ", "ok (listed)": "L ", "known": "K ", "FAIL": "F "}[cells[key]]
            print(f"{tag}{c['name']} [{r}]: {text}")
            if key in known and not ok:
                print(f"    known: {known[key]}")
    print()
    for key in listed_passing:
        print(f"{key[0]} {key[1]} passes: remove it from tests/hostile/known_failures.txt")
    for key in unexpected:
        print(f"FAIL {key[0]} [{key[1]}]: {results[key][1]}")
    print(f"hostile: {len(cases)} models x {len(runners)} runners in "
          f"{time.monotonic() - started:.0f} s: {passed} passed, {known_failed} known failures "
          f"(tests/hostile/known_failures.txt), {len(unexpected)} unexpected")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
