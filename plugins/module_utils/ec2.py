# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""Amazon EC2 calls, one wrapper per call (``calls.py``): EC2 has no handler of its own (``errors.HyperPodErrorHandler``)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.hyperpod.tenancy.plugins.module_utils.calls import read
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodErrorHandler as Handler

# The shared subnets (their VPC): a subnet that is not there is an error EC2 raises, no handler calls it missing.
describe_subnets = read(Handler, "describe the shared subnets", "describe_subnets", "Subnets")
