# lit configuration for kjit's GoogleTest binaries.
import os
import sys

import lit.formats

config.name = "kjit-unit"
config.test_format = lit.formats.GoogleTest(".", "Tests")
config.test_source_root = os.path.join(config.kjit_binary_dir, "unittests")
config.test_exec_root = config.test_source_root
# Sanitizer builds: features and runtime options (test/sanitizers/).
sys.path.insert(0, os.path.join(config.kjit_source_dir, "test", "sanitizers"))
import lit_sanitizers  # noqa: E402

lit_sanitizers.configure(config)
# The disk cache is off (test/lit.cfg.py says why); tests that want it pass
# RuntimeOptions::cacheDirectory.
config.environment["KJIT_CACHE_DIR"] = ""
