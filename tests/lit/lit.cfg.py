# lit configuration for Fusebox's IR golden tests: .fbir files with RUN lines checked by FileCheck.
# lit.site.cfg.py (configured by CMake into the build folder) sets the paths and loads this file.
import os

import lit.formats

config.name = "Fusebox"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".fbir"]
config.excludes = ["Inputs", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = getattr(config, "fusebox_obj_root", config.test_source_root)

fusebox_opt = getattr(config, "fusebox_opt", None)
if not fusebox_opt:
    lit_config.fatal("fusebox_opt is not set: run lit on the build folder (<build>/tests/lit), "
                     "whose lit.site.cfg.py CMake configured")
llvm_tools_dir = getattr(config, "llvm_tools_dir", "/usr/lib/llvm-19/bin")

# Substitutions are regular expressions; \b keeps FileCheck from matching inside other words.
config.substitutions.append(("%fusebox-opt", fusebox_opt))
config.substitutions.append((r"\bFileCheck\b", os.path.join(llvm_tools_dir, "FileCheck")))
# `not` (inverts an exit status) ships next to FileCheck; RUN lines find it on PATH.
config.environment["PATH"] = os.pathsep.join([llvm_tools_dir, config.environment.get("PATH", "")])
# A tuning log in the user's cache would change the schedules these tests print.
config.environment["FUSEBOX_TUNING_LOG"] = "off"
