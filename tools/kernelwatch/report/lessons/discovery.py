"""Finding the families' figures: `families/<family>/figure.py`, each declaring
`FIGURE = Figure(...)`, beside the kernels, benchmarks and tests it draws (docs/architecture.md,
"Adding a kernel family").

The folder is the families/ of the kernelwatch checkout this package is part of
(project.package_checkout: tools/kernelwatch in a checkout holding baselines/kernelwatch.toml),
whichever project the report is about: the figures draw kernelwatch's own suite. An installed
package (`pip install ./tools`) has no checkout, so no figures: the report is drawn without its
lesson figures. A family without a figure.py has no figure. Each module is loaded from its file,
under a name of its own and outside sys.modules, every time: no registry is filled at import.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from kernelwatch import project
from kernelwatch.report.lessons.drawing import Figure

# Each family's figure module, in its folder.
MODULE = "figure.py"


def families_folder() -> Path | None:
    """The checkout's families/, or None (an installed package)."""
    checkout = project.package_checkout()
    return checkout / "families" if checkout is not None else None


def load(path: Path) -> Figure:
    """The FIGURE that the module at `path` declares."""
    family = path.parent.name
    spec = importlib.util.spec_from_file_location(f"kernelwatch_family_figure_{family}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    figure = getattr(module, "FIGURE", None)
    if not isinstance(figure, Figure):
        raise TypeError(f"{path}: declares no FIGURE = Figure(...)")
    return figure


def figures(folder: Path | None = None) -> tuple[tuple[str, Figure], ...]:
    """(family, figure) of every family in `folder` (default: families_folder()) that has a
    figure module, in page order; none without the folder."""
    folder = folder if folder is not None else families_folder()
    if folder is None or not folder.is_dir():
        return ()
    found = [(path.parent.name, load(path)) for path in folder.glob(f"*/{MODULE}")]
    return tuple(sorted(found, key=lambda item: (item[1].position, item[0])))
