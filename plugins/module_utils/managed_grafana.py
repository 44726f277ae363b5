# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""Amazon Managed Grafana calls (the AWS ``grafana`` service), one wrapper per call (``calls.py``), with its error handler.

Not the Grafana HTTP API of a workspace, which ``grafana.py`` calls. Each takes the boto3 client and the operation's
own keyword arguments; a missing workspace is ``None`` (its permissions ``[]``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.hyperpod.tenancy.plugins.module_utils.calls import delete, listing, read, write
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import GrafanaErrorHandler as Handler

describe_workspace = read(Handler, "describe Grafana workspace", "describe_workspace", "workspace")
list_workspaces = listing(Handler, "list Grafana workspaces", "list_workspaces", "workspaces")
list_permissions = listing(Handler, "list Grafana workspace permissions", "list_permissions", "permissions")
create_workspace = write(Handler, "create Grafana workspace", "create_workspace", "workspace")
update_workspace = write(Handler, "update Grafana workspace", "update_workspace", "workspace")
delete_workspace = delete(Handler, "delete Grafana workspace", "delete_workspace")
# The response less its metadata: its ``errors`` are the instructions Grafana refused (an empty list when none).
update_permissions = write(Handler, "update Grafana workspace permissions", "update_permissions")
tag_resource = write(Handler, "tag Grafana workspace", "tag_resource")
untag_resource = write(Handler, "untag Grafana workspace", "untag_resource")
