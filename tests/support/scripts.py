"""Import one of ``scripts/`` (standard-library programs without a ``.py`` suffix) in tests."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def load_script(name: str) -> ModuleType:
    """``scripts/<name>`` as a module named after it (dashes become underscores)."""
    module_name = name.replace("-", "_")
    loader = importlib.machinery.SourceFileLoader(module_name, str(SCRIPTS / name))
    spec = importlib.util.spec_from_loader(module_name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(module_name, module)  # its dataclasses look it up there
    loader.exec_module(module)
    return module
