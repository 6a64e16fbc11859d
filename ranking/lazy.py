"""Names a package re-exports, imported from their modules the first time they are used.

``import ranking`` and ``import features`` stay cheap this way (no pandas, SciPy,
scikit-learn or torch until a name needs them), and ``from ranking import fit_bt``
still works.
"""

from __future__ import annotations

import importlib
import sys

# typing is not imported at run time: it would double the cost of importing a package.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, homes: Mapping[str, str], names: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of a package with lazy re-exports.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    homes : mapping
        Each public name to the submodule it lives in, relative to ``package``
        (``"io.frames"`` for ``package.io.frames``).
    names : sequence of str
        The package's ``__all__``.
    """

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        vars(sys.modules[package])[name] = value  # later look-ups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__
