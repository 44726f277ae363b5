"""FSx file systems as DescribeFileSystems shows them, on top of moto 5.2.5's.

- DescribeFileSystems with ``FileSystemIds`` that include one that does not exist fails with
  ``FileSystemNotFound`` (the error botocore's model lists for the operation; AWS answers
  "File system 'fs-…' does not exist."), where moto returns the others and leaves it out.
- A Lustre file system has ``LustreConfiguration.MountName``, which ``mount -t lustre
  <DNSName>@tcp:/<MountName>`` needs: AWS gives ``fsx`` for SCRATCH_1 and a generated
  8-character name otherwise ("Mounting Amazon FSx file systems", FSx for Lustre User Guide;
  botocore's LustreFileSystemMountName: ``^([A-Za-z0-9_-]{1,8})$``).
- Every file system has the members AWS always returns: ``OwnerId``, ``CreationTime``,
  ``Lifecycle`` (``AVAILABLE``; the sandbox creates file systems ready) and ``VpcId``.
- A Lustre file system has its ``FileSystemTypeVersion``, which moto drops: the request's, else "Default value is 2.10,
  except ... 2.12 when DeploymentType is set to PERSISTENT_2 without a metadata configuration mode ... 2.15 when
  DeploymentType is set to PERSISTENT_2 with a metadata configuration mode" (CreateFileSystem, Amazon FSx API Reference).
"""

from __future__ import annotations

import json
import random
import string

import moto.fsx.responses

from sandbox.core import AwsError, graft, now_epoch, validate_request

_MOUNT_CHARS = string.ascii_lowercase + string.digits


def _complete(file_system, described: dict) -> dict:
    extra = file_system.__dict__.setdefault("_sandbox", {})
    if "created" not in extra:
        extra["created"] = now_epoch()
        extra["mount_name"] = "".join(random.choice(_MOUNT_CHARS) for _ in range(8))
        extra["vpc_id"] = _vpc_of(file_system)
    described.setdefault("OwnerId", file_system.backend.account_id)
    described.setdefault("CreationTime", extra["created"])
    described.setdefault("Lifecycle", "AVAILABLE")
    if extra["vpc_id"]:
        described.setdefault("VpcId", extra["vpc_id"])
    if described.get("FileSystemType") == "LUSTRE":
        lustre = dict(described.get("LustreConfiguration") or {})
        lustre.setdefault("DeploymentType", "SCRATCH_1")
        described.setdefault("FileSystemTypeVersion", extra.get("type_version") or "2.10")
        lustre.setdefault("MountName", "fsx" if lustre["DeploymentType"] == "SCRATCH_1" else extra["mount_name"])
        described["LustreConfiguration"] = lustre
    return described


def _vpc_of(file_system) -> str | None:
    from moto.ec2.models import ec2_backends

    ec2 = ec2_backends[file_system.backend.account_id][file_system.backend.region_name]
    for subnet_id in file_system.subnet_ids or []:
        try:
            return ec2.get_subnet(subnet_id).vpc_id
        except Exception:  # noqa: BLE001 - a subnet moto does not know: no VpcId, as before
            continue
    return None


class FileSystemsResponse:
    """Grafted onto moto's FSxResponse; replaces DescribeFileSystems."""

    def describe_file_systems(self) -> str:
        params = json.loads(self.body or "{}")
        validate_request("fsx", "DescribeFileSystems", params)
        backend = self.fsx_backend
        wanted = params.get("FileSystemIds")
        for file_system_id in wanted or []:
            if file_system_id not in backend.file_systems:
                raise AwsError("FileSystemNotFound", f"File system '{file_system_id}' does not exist.")
        found = [backend.file_systems[i] for i in wanted] if wanted else list(backend.file_systems.values())
        start = int(params["NextToken"]) if str(params.get("NextToken") or "").isdigit() else 0
        size = params.get("MaxResults") or 2147483647
        page = found[start : start + size]
        result: dict = {"FileSystems": [_complete(fs, fs.to_dict()) for fs in page]}
        if start + size < len(found):
            result["NextToken"] = str(start + size)
        return json.dumps(result)


def _wrap_create() -> None:
    """CreateFileSystem answers with the file system as DescribeFileSystems will show it."""
    original = moto.fsx.responses.FSxResponse.create_file_system

    def create_file_system(self) -> str:
        answer = json.loads(original(self))
        created = answer["FileSystem"]
        request = json.loads(self.body or "{}")
        lustre = request.get("LustreConfiguration") or {}
        default = ("2.15" if lustre.get("MetadataConfiguration") else "2.12") if lustre.get("DeploymentType") == "PERSISTENT_2" else "2.10"
        self.fsx_backend.file_systems[created["FileSystemId"]].__dict__.setdefault("_sandbox", {})["type_version"] = (
            request.get("FileSystemTypeVersion") or default)
        answer["FileSystem"] = _complete(self.fsx_backend.file_systems[created["FileSystemId"]], created)
        return json.dumps(answer)

    moto.fsx.responses.FSxResponse.create_file_system = create_file_system


def install() -> None:
    graft(moto.fsx.responses.FSxResponse, FileSystemsResponse)
    _wrap_create()
