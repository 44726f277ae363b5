# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""Every Amazon S3 call the collection makes, one wrapper per call (``calls.py``), with S3's error handler.

Each takes the boto3 client and the operation's own keyword arguments. Reads give ``None`` (lists:
``[]``) for a missing object or bucket.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.hyperpod.tenancy.plugins.module_utils.calls import delete, listing, read, write
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import S3BucketSettingErrorHandler as SettingHandler
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import S3ErrorHandler as Handler

get_object_tagging = read(Handler, "read the team prefix marker's tags", "get_object_tagging")
put_object = write(Handler, "create the team prefix marker", "put_object")
put_object_tagging = write(Handler, "tag the team prefix marker", "put_object_tagging")
# One page (MaxKeys): whether anything is under a prefix.
list_objects_v2 = read(Handler, "list the team prefix", "list_objects_v2")
# Every key under a prefix, every page.
list_all_objects_v2 = listing(Handler, "list the team prefix", "list_objects_v2", "Contents", missing_ok=False)
delete_objects = write(Handler, "delete the team prefix's objects", "delete_objects")
# One object: the ownership mark of a team's prefix (its old place ``<team>/``, moved) and an entry of the retired-names
# ledger (data_repository, retired_names).
delete_object = delete(Handler, "delete an object of the platform's prefix", "delete_object")
get_object = read(Handler, "read an entry of the retired-names ledger", "get_object")
# The folders (CommonPrefixes) of a bucket, or of a prefix, with Delimiter="/": verify_isolation's prefixes no team owns.
list_folders = listing(Handler, "list the data bucket's folders", "list_objects_v2", "CommonPrefixes")

# The data bucket's settings, for preflight: each None when never set.
head_bucket = read(Handler, "look up the data bucket", "head_bucket")
get_public_access_block = read(SettingHandler, "read the data bucket's Block Public Access", "get_public_access_block", "PublicAccessBlockConfiguration")
get_bucket_ownership_controls = read(SettingHandler, "read the data bucket's object ownership", "get_bucket_ownership_controls", "OwnershipControls")
get_bucket_encryption = read(SettingHandler, "read the data bucket's default encryption", "get_bucket_encryption", "ServerSideEncryptionConfiguration")
get_bucket_versioning = read(Handler, "read the data bucket's versioning", "get_bucket_versioning", missing_ok=False)
