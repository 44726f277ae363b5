# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""Every use the collection's controller plugins make of ansible-core's private API, behind one version check.

ansible-core has no public API for two things the collection does (docs/development.md, "ansible-core versions"):

- running a module's ``main()`` in the worker (``in_worker.py``): the module arguments are handed to ``AnsibleModule``
  through ``basic._ANSIBLE_ARGS``/``_ANSIBLE_PROFILE`` (where AnsiballZ puts them), ``ansible.module_utils`` is switched
  to its target side (``_internal.is_controller``, the warnings of ``common.warnings``), and the module's output is
  turned into a task result as ``ActionBase._execute_module`` turns it: ``remove_internal_keys`` on 2.19 and 2.20, the
  ``UnifiedTaskResult`` that ``_parse_returned_data`` returns from 2.21 on;
- where a variable was loaded from (``validate_team_file`` names the file and line of a problem): the ``Origin`` tag
  of ``ansible._internal._datatag``.

The in-worker run is used only on the ansible-core releases it is proven on (``PROVEN``: the unit suite, site.yml and
``tests/integration/test_in_worker_modules.py``, which compares it with the module process, pass there). On any other
release, or when a name it needs is missing, ``IN_WORKER`` is False and ``WHY_NOT`` says why: the actions then run
their module as every other module runs (``ActionBase._execute_module``), with the same result, only slower. The origin
falls back to no place (the problem is still reported, without its line).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible.release import __version__ as CORE_VERSION_TEXT

# The ansible-core releases (major, minor) whose internals below are known and tested.
PROVEN = ((2, 19), (2, 20), (2, 21))
CORE_VERSION = tuple(int(part) for part in re.match(r"(\d+)\.(\d+)", CORE_VERSION_TEXT).groups())
# The modules declare no METADATA: ansible-core gives such a module the 'legacy' serialization profile.
PROFILE = "legacy"


def _in_worker_support():
    """``(True, None)`` when the in-worker run can be used on this ansible-core, else ``(False, why)``."""
    if CORE_VERSION not in PROVEN:
        return False, "ansible-core %s is not one of the releases the in-worker run is proven on (%s)" % (
            CORE_VERSION_TEXT, ", ".join("%d.%d" % version for version in PROVEN))
    try:
        from ansible.module_utils import _internal, basic
        from ansible.module_utils.common import json as module_json, warnings
        from ansible.vars import clean
    except ImportError as e:  # pragma: no cover - a proven release has them
        return False, "ansible-core %s lacks what the in-worker run uses: %s" % (CORE_VERSION_TEXT, e)
    needed = [(basic, "_ANSIBLE_ARGS"), (basic, "_ANSIBLE_PROFILE"), (_internal, "is_controller"), (warnings, "_global_warnings"),
              (warnings, "_global_deprecations"), (module_json, "Direction"), (module_json, "get_module_encoder")]
    if CORE_VERSION < (2, 21):
        needed.append((clean, "remove_internal_keys"))
    missing = ["%s.%s" % (module.__name__, name) for module, name in needed if not hasattr(module, name)]
    if missing:  # pragma: no cover - a proven release has them
        return False, "ansible-core %s lacks what the in-worker run uses: %s" % (CORE_VERSION_TEXT, ", ".join(missing))
    return True, None


IN_WORKER, WHY_NOT = _in_worker_support()


def encoded_module_args(module_args):
    """The module's arguments as AnsiballZ hands them to ``AnsibleModule``: JSON of the module's serialization profile."""
    import json

    from ansible.module_utils.common.json import Direction, get_module_encoder

    encoder = get_module_encoder(PROFILE, Direction.CONTROLLER_TO_MODULE)
    return json.dumps(dict(ANSIBLE_MODULE_ARGS=module_args), cls=encoder).encode()


class TargetSide(object):
    """While entered, ``AnsibleModule`` reads ``encoded`` as its arguments and ``ansible.module_utils`` behaves as on a
    target: warnings and deprecations are collected into the module's result, not displayed by the controller."""

    def __init__(self, encoded):
        self.encoded = encoded
        self.saved = None

    def __enter__(self):
        from ansible.module_utils import _internal, basic

        self.saved = (basic._ANSIBLE_ARGS, basic._ANSIBLE_PROFILE, _internal.is_controller)
        basic._ANSIBLE_ARGS, basic._ANSIBLE_PROFILE = self.encoded, PROFILE
        _internal.is_controller = False
        self._clear_warnings()
        return self

    def __exit__(self, *exc_info):
        from ansible.module_utils import _internal, basic

        (basic._ANSIBLE_ARGS, basic._ANSIBLE_PROFILE, _internal.is_controller) = self.saved
        self._clear_warnings()

    @staticmethod
    def _clear_warnings():
        from ansible.module_utils.common import warnings

        warnings._global_warnings.clear()
        warnings._global_deprecations.clear()


def module_result(action, rc, stdout, stderr):
    """The task result of a module's output, as ``ActionBase._execute_module`` makes it of a module process's output."""
    parsed = action._parse_returned_data(dict(rc=rc, stdout=stdout, stderr=stderr), PROFILE)
    if CORE_VERSION < (2, 21):
        from ansible.vars.clean import remove_internal_keys

        remove_internal_keys(parsed)
        return parsed
    # 2.21: a UnifiedTaskResult, which _execute_module cleans and returns as a dict.
    parsed.remove_internal_keys()
    return parsed.as_result_dict(for_round_trip=True)


try:  # where a value was loaded from: no public API (ansible-core 2.19 to 2.21)
    from ansible._internal._datatag._tags import Origin as _Origin
except ImportError:  # pragma: no cover - a release without it names no lines
    _Origin = None


def origin(value):
    """``(path, line, column)`` of the file ``value`` was loaded from (line and column may be None), or None."""
    if _Origin is None or value is None:
        return None
    try:
        tag = _Origin.get_tag(value)
    except (AttributeError, TypeError):  # pragma: no cover - the tag's API changed: no place
        return None
    path = getattr(tag, "path", None)
    if not path:
        return None
    return path, getattr(tag, "line_num", None), getattr(tag, "col_num", None)
