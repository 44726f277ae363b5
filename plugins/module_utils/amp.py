# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""Amazon Managed Service for Prometheus calls, one wrapper per call (``calls.py``), with AMP's error handler."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.hyperpod.tenancy.plugins.module_utils.calls import delete, listing, read, write
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import AmpErrorHandler as Handler

list_workspaces = listing(Handler, "list Prometheus workspaces", "list_workspaces", "workspaces")
describe_workspace = read(Handler, "describe Prometheus workspace", "describe_workspace", "workspace")
create_workspace = write(Handler, "create Prometheus workspace", "create_workspace")
delete_workspace = delete(Handler, "delete Prometheus workspace", "delete_workspace")
tag_resource = write(Handler, "tag Prometheus workspace", "tag_resource")
untag_resource = write(Handler, "untag Prometheus workspace", "untag_resource")
