"""Every environment variable kjit's sources read is registered: it changes
generated code (its value joins every kernel's key) or it does not; or a
backend plugin folds it into its own fingerprint, which joins the key, and
says so in a list named fingerprint_environment (plugins/cuda/Toolkit.c).
An unregistered one fails here, so that a new variable cannot silently
change code behind a cached kernel (test/Cache/env-registry.test).

    check-env.py SOURCE_ROOT REGISTRY_JSON"""
import json
import os
import re
import sys

root, registry = sys.argv[1], json.load(open(sys.argv[2]))
known = set(registry["codegen"]) | set(registry["neutral"])
overlap = set(registry["codegen"]) & set(registry["neutral"])
read = {}
pattern = re.compile(r'getenv\(\s*"([A-Za-z_][A-Za-z0-9_]*)"')
# The C backends' lists of names read in a loop ({"KJIT_CUDA_HOME", ...}).
listed = re.compile(r'"((?:KJIT|CUDA)_[A-Z0-9_]+)"')
# A plugin's variables that join its fingerprint.
declared = re.compile(r'fingerprint_environment\[\]\s*=\s*\{([^}]*)\}')
fingerprinted = {}
for top in ("lib", "plugins", "tools", "include"):
    for folder, _, files in os.walk(os.path.join(root, top)):
        for name in files:
            if not name.endswith((".c", ".cpp", ".h")):
                continue
            path = os.path.join(folder, name)
            text = open(path, encoding="utf-8", errors="replace").read()
            for match in pattern.finditer(text):
                read.setdefault(match.group(1), path)
            if "getenv(vars[" in text or "getenv(fingerprint_environment[" in text:
                for match in listed.finditer(text):
                    read.setdefault(match.group(1), path)
            if top == "plugins":
                for block in declared.finditer(text):
                    for match in listed.finditer(block.group(1)):
                        fingerprinted[match.group(1)] = path
known |= set(fingerprinted)
overlap |= (set(registry["codegen"]) | set(registry["neutral"])) & set(fingerprinted)
missing = sorted(name for name in read if name not in known)
for name in missing:
    print("unregistered: %s (read in %s)" % (name, os.path.relpath(read[name], root)))
for name in sorted(overlap):
    print("in both lists: %s" % name)
print("variables read: %d, in a plugin's fingerprint: %d, unregistered: %d"
      % (len(read), len(fingerprinted), len(missing)))
sys.exit(1 if missing or overlap else 0)
