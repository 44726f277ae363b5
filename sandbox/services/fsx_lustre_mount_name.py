"""FSx for Lustre file systems get the ``LustreConfiguration.MountName`` that moto 5.2.5 leaves out.

AWS (https://docs.aws.amazon.com/fsx/latest/APIReference/API_LustreFileSystemConfiguration.html):
"For the SCRATCH_1 deployment type, this value is always "fsx". For SCRATCH_2, PERSISTENT_1, and
PERSISTENT_2 deployment types, this value is a string that is unique within an AWS Region", eight
lower-case letters and digits. Clients mount ``<DNSName>@tcp:/<MountName>`` (the FSx CSI driver's
``mountname`` attribute).
"""

from __future__ import annotations

import string

import moto.fsx.models
from moto.moto_api._internal import mock_random as random


def install() -> None:
    original = moto.fsx.models.FileSystem.__init__
    if getattr(original, "_sandbox_mount_name", False):
        return

    def __init__(self, *args, **kwargs):  # noqa: N807 (moto's constructor, wrapped)
        original(self, *args, **kwargs)
        if self.file_system_type == "LUSTRE":
            config = dict(self.lustre_configuration or {})
            config.setdefault("DeploymentType", "SCRATCH_1")
            if config["DeploymentType"] == "SCRATCH_1":
                config["MountName"] = "fsx"
            else:
                config["MountName"] = "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(8))
            self.lustre_configuration = config

    __init__._sandbox_mount_name = True
    moto.fsx.models.FileSystem.__init__ = __init__
