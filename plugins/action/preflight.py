# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""hyperpod.tenancy.preflight in the worker process, without a module process (plugin_utils/in_worker.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.hyperpod.tenancy.plugins.modules import preflight
from ansible_collections.hyperpod.tenancy.plugins.plugin_utils.in_worker import InWorkerAction


class ActionModule(InWorkerAction):
    MODULE = "hyperpod.tenancy.preflight"
    main = staticmethod(preflight.main)
