"""What a new S3 bucket has from AWS without asking, which moto 5.2.5's CreateBucket leaves unset.

- Block Public Access, all four settings on, and Object Ownership ``BucketOwnerEnforced`` (ACLs off): AWS's defaults for
  every new bucket since April 2023 (AWS What's New, December 2022, "Amazon S3 to automatically enable S3 Block
  Public Access and disable access control lists for all new buckets starting April 2023"; the S3 User Guide's "Controlling
  ownership of objects and disabling ACLs for your bucket");
- default encryption SSE-S3 (``AES256``): every bucket's since January 2023 ("Setting default server-side encryption
  behavior for Amazon S3 buckets", Amazon S3 User Guide).

Each stays what CreateBucket's own request (``x-amz-object-ownership``) or a later Put/Delete of the setting makes it.
"""

from __future__ import annotations

import moto.s3.models
from moto.s3.models import PublicAccessBlock

_CREATE_BUCKET = moto.s3.models.S3Backend.create_bucket


def create_bucket(self, *args, **kwargs):
    bucket = _CREATE_BUCKET(self, *args, **kwargs)
    bucket.public_access_block = PublicAccessBlock(True, True, True, True)
    bucket.ownership_rule = "BucketOwnerEnforced"
    bucket.encryption = {"Rule": {"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}, "BucketKeyEnabled": "false"}}
    return bucket


def install() -> None:
    moto.s3.models.S3Backend.create_bucket = create_bucket
