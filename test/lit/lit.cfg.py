# -*- Python -*- lit configuration of fpm's tool tests.
#
# Run through CTest (`ctest -R lit`) or directly:
#   python3 /usr/lib/llvm-19/build/utils/lit/lit.py -sv <build>/test/lit
# The site config (generated in the build tree) names the built tools.

import os
import sys

import lit.formats

config.name = "fpm"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test"]
config.excludes = ["Inputs"]

# `lit -D fpm_partition=PATH` tests another build of the tool (a sanitizer
# build, say) against the same suite.
if "fpm_partition" in lit_config.params:
    config.fpm_partition = os.path.abspath(lit_config.params["fpm_partition"])

if "fpm_profile" in lit_config.params:
    config.fpm_profile = os.path.abspath(lit_config.params["fpm_profile"])

if "fpm_rewrite" in lit_config.params:
    config.fpm_rewrite = os.path.abspath(lit_config.params["fpm_rewrite"])

# `-D fpm_runtime_dir=DIR -D sanitizer_flags=FLAGS`: the programs the tests
# build link another libfpmrt (a sanitizer build), with those link flags.
if "fpm_runtime_dir" in lit_config.params:
    config.fpm_runtime_dir = os.path.abspath(
        lit_config.params["fpm_runtime_dir"])
if "sanitizer_flags" in lit_config.params:
    config.sanitizer_flags = lit_config.params["sanitizer_flags"]

if not hasattr(config, "fpm_partition"):
    lit_config.fatal(
        "run lit on the build tree (<build>/test/lit), whose lit.site.cfg.py "
        "names the built tools, not on the source tree"
    )

config.test_source_root = config.fpm_lit_source_dir
config.test_exec_root = config.fpm_lit_binary_dir
# `lit -D exec_root=DIR`: the tests' files under DIR, so that a run of other
# builds of the tools can go beside the usual one.
if "exec_root" in lit_config.params:
    config.test_exec_root = os.path.abspath(lit_config.params["exec_root"])

for tool in ["FileCheck", "not", "count"]:
    if not os.path.exists(os.path.join(config.llvm_tools_dir, tool)):
        lit_config.fatal(
            "%s is not in %s: install llvm-19-tools" % (tool, config.llvm_tools_dir)
        )
for tool, target in [(config.fpm_partition, "fpm-partition"),
                     (config.fpm_profile, "fpm-profile"),
                     (config.fpm_rewrite, "fpm-rewrite"),
                     (config.fpm_partition_extended, "fpm-partition-extended"),
                     (config.fpm_rewrite_extended, "fpm-rewrite-extended")]:
    if not os.path.exists(tool):
        lit_config.fatal(
            "%s is not built: build the project (or the %s target) first"
            % (tool, target)
        )

# FileCheck, not and count from LLVM 19, the built tools next.
config.environment["PATH"] = os.pathsep.join(
    [config.llvm_tools_dir, os.path.dirname(config.fpm_partition),
     os.path.dirname(config.fpm_profile), os.path.dirname(config.fpm_rewrite),
     config.environment.get("PATH", os.environ.get("PATH", ""))]
)
# Messages and number formats must not depend on the caller's locale.
config.environment["LC_ALL"] = "C"

# `fpm-partition` as a command word in RUN lines is the built binary; the
# lookarounds leave it alone inside paths (test/lit/fpm-partition/...) and
# longer words. The binary's folder is on PATH as well.
config.substitutions.append(
    (r"(?<![\w/.-])fpm-partition(?![\w/.:-])", config.fpm_partition)
)
config.substitutions.append(
    (r"(?<![\w/.-])fpm-profile(?![\w/.:-])", config.fpm_profile)
)
config.substitutions.append(
    (r"(?<![\w/.-])fpm-rewrite(?![\w/.:-])", config.fpm_rewrite)
)
# Compiling what fpm-rewrite writes: the compilers of this build, the flags
# that find fpm.h / fpm.hpp (and the generated fpm/version.h), and those that
# link the runtime.
config.substitutions.append(("%clangxx", config.cxx_compiler))
config.substitutions.append(("%clang", config.c_compiler))
config.substitutions.append(
    ("%fpm_cflags", "-I%s -I%s" % (os.path.join(config.fpm_source_dir, "include"),
                                   os.path.join(config.fpm_binary_dir, "include")))
)
config.substitutions.append(
    ("%fpm_ldflags", "-L%s -Wl,-rpath,%s -lfpmrt %s"
     % (config.fpm_runtime_dir, config.fpm_runtime_dir,
        config.sanitizer_flags))
)
# lit clears the environment; the sanitizers' options (the debug preset's
# suppressions) must reach the tools and programs the tests run.
for name in ("ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS"):
    if name in os.environ:
        config.environment[name] = os.environ[name]
# The programs the tests run keep their loops' profiles in the build tree,
# never in the user's store (lit clears HOME, which would leave them none).
config.environment["FPM_PROFILE_DIR"] = os.path.join(
    config.test_exec_root, "profiles")
# test/extension/'s fpm-partition, fpm-rewrite and runtime, built with one
# partitioner more than the table has (extension/added-partitioner.test).
config.substitutions.append(
    ("%fpm_partition_extended", config.fpm_partition_extended))
config.substitutions.append(
    ("%fpm_rewrite_extended", config.fpm_rewrite_extended))
config.substitutions.append(
    ("%fpm_extended_ldflags", "-L%s -Wl,-rpath,%s -lfpmrt-extended %s"
     % (config.fpm_extended_runtime_dir, config.fpm_extended_runtime_dir,
        config.sanitizer_flags))
)
# Helper scripts run under the interpreter that runs lit.
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(
    ("%examples", os.path.join(config.fpm_source_dir, "examples"))
)
# A CMake project that uses fpm_rewrite_sources from this source tree with
# this build's tool and runtime.
config.substitutions.append(("%cmake", config.cmake_command))
config.substitutions.append(("%fpm_source_dir", config.fpm_source_dir))
config.substitutions.append(("%fpm_runtime_dir", config.fpm_runtime_dir))
config.substitutions.append(("%fpm_binary_dir", config.fpm_binary_dir))
