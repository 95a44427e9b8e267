"""Runs pytest with the touchstone plugin over the folders given (CTest's python tests), or, where
pytest or NumPy is missing, says so and exits 77, CTest's skip (1 where TOUCHSTONE_REQUIRE_PYTHON is
set: CI installs both, and a CI run without them must not pass)."""
import importlib.util
import os
import sys

# This folder holds the package's sources, without its native half: touchstone comes from PYTHONPATH.
sys.path.remove(os.path.dirname(os.path.abspath(__file__)))

missing = [f"{module} ({package})" for module, package in (("numpy", "python3-numpy"), ("pytest", "python3-pytest"))
           if importlib.util.find_spec(module) is None]
if missing:
    print(f"skipped: {sys.executable} has no {' and no '.join(missing)}")
    sys.exit(1 if os.environ.get("TOUCHSTONE_REQUIRE_PYTHON") else 77)

import pytest  # noqa: E402

# No cache folder in the source tree; -ra lists every skip with its reason.
sys.exit(pytest.main(["-p", "touchstone.pytest", "-p", "no:cacheprovider", "-ra", *sys.argv[1:]]))
