"""kernelwatch: performance-regression tooling for Google Benchmark results of CUDA kernels."""

import importlib
from collections.abc import Mapping
from typing import Any

__version__ = "0.1.0"


def loaded_at_first_use(package: str, modules: Mapping[str, str], name: str) -> Any:
    """A package's module __getattr__: `name` from the submodule `modules` names for it,
    imported now, so that a command loads a package's heavy parts only where it uses them."""
    module = modules.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{package}.{module}"), name)
