"""Operations moto 5.2.5 lacks, one module per AWS service, in moto's backend/response style.

Each module defines ``install()``, which grafts its backend and response methods
onto moto's classes (and, for REST services, adds its URL paths) before the
server builds its per-service applications.
"""

from __future__ import annotations

import importlib
import pkgutil

_installed = False


def install() -> None:
    global _installed
    if _installed:
        return
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        importlib.import_module(f"{__name__}.{module_info.name}").install()
    _installed = True
