# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.callback import CallbackBase


class AggregateCallback(CallbackBase):
    """What this collection's callbacks are to Ansible: aggregate (beside the stdout callback), and only where
    callbacks_enabled names them. Each sets its own CALLBACK_NAME."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NEEDS_ENABLED = True
