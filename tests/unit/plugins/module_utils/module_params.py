"""The parameters a module hands its ``converge``, for unit tests that call a layer without a module."""

from __future__ import annotations


def module_params(module_options: dict, **given) -> dict:
    """Every option of ``module_options`` (a module's ``MODULE_OPTIONS``) at its default (None without one), then ``given``."""
    params = {name: option.get("default") for name, option in module_options["argument_spec"].items()}
    params.update(given)
    return params
