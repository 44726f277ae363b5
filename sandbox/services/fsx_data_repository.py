"""FSx for Lustre data repository associations (DRAs), which moto 5.2.5 lacks.

Operations: CreateDataRepositoryAssociation, DescribeDataRepositoryAssociations,
UpdateDataRepositoryAssociation, DeleteDataRepositoryAssociation (JSON protocol,
``X-Amz-Target: AWSSimbaAPIService_v20180301.<Op>``).

What AWS enforces and this addition enforces too (AWS API reference and FSx for
Lustre user guide, "Linking your file system to an Amazon S3 bucket"):

- DRAs exist only on FSx for Lustre file systems, not on SCRATCH_1 ones
  (``UnsupportedOperation``); an unknown file system is ``FileSystemNotFound``.
- At most 8 DRAs per file system (``ServiceLimitExceeded``).
- ``FileSystemPath`` starts with ``/``; two DRAs of a file system cannot have the
  same or overlapping (nested) paths, and ``/`` can only be the first and only one;
  each DRA has its own S3 bucket/prefix; ``DataRepositoryPath`` is ``s3://...``
  (``BadRequest``).
- ``Lifecycle`` goes CREATING -> AVAILABLE, UPDATING -> AVAILABLE, DELETING -> gone;
  updating or deleting a DRA that is not AVAILABLE (or MISCONFIGURED) is refused.
- Reusing a ``ClientRequestToken`` with different parameters is
  ``IncompatibleParameterError``; with the same ones it returns the first result.
"""

from __future__ import annotations

import base64
import json
import re
import uuid

import moto.fsx.models
import moto.fsx.responses

from sandbox.core import AwsError, Lifecycle, graft, now_epoch, state, validate_request

SERVICE = "fsx"
MAX_ASSOCIATIONS_PER_FILE_SYSTEM = 8
DEFAULT_CHUNK_SIZE_MIB = 1024
GONE = "__GONE__"
SETTLED = ("AVAILABLE", "MISCONFIGURED")
FILTERS = {"file-system-id", "data-repository-type", "file-cache-id"}


class FsxApiError(AwsError):
    """FSx serializes its errors with ``Message`` and, for some, one more member."""

    def __init__(self, code: str, message: str, **members):
        super().__init__(code, message)
        self.description = json.dumps(dict({"__type": code, "Message": message}, **members))


def _bad_request(message: str) -> FsxApiError:
    return FsxApiError("BadRequest", message)


def _normal_path(path: str) -> str:
    """``/a/b/`` and ``/a/b`` are the same directory."""
    return "/" + path.strip("/") if path.strip("/") else "/"


def _overlaps(first: str, second: str) -> bool:
    a, b = _normal_path(first), _normal_path(second)
    if a == "/" or b == "/":
        return True
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def _s3_overlaps(first: str, second: str) -> bool:
    a, b = first.rstrip("/") + "/", second.rstrip("/") + "/"
    return a.startswith(b) or b.startswith(a)


def _check_events(s3: dict | None) -> None:
    for policy in ("AutoImportPolicy", "AutoExportPolicy"):
        events = ((s3 or {}).get(policy) or {}).get("Events") or []
        if len(set(events)) != len(events):
            raise _bad_request(f"{policy} Events must not contain duplicates: {events}")


class DataRepositoryAssociation:
    def __init__(self, backend, file_system, params: dict):
        self.backend = backend
        self.association_id = "dra-" + uuid.uuid4().hex[:17]
        self.file_system_id = file_system.file_system_id
        self.arn = f"arn:aws:fsx:{backend.region_name}:{backend.account_id}:association/{self.file_system_id}/{self.association_id}"
        self.file_system_path = params.get("FileSystemPath") or "/"
        self.data_repository_path = params["DataRepositoryPath"]
        self.batch_import = bool(params.get("BatchImportMetaDataOnCreate", False))
        self.chunk_size = params.get("ImportedFileChunkSize", DEFAULT_CHUNK_SIZE_MIB)
        self.s3 = params.get("S3")
        self.creation_time = now_epoch()
        self.lifecycle = Lifecycle("CREATING", "AVAILABLE")
        if params.get("Tags"):
            backend.tagger.tag_resource(self.arn, params["Tags"])

    @property
    def gone(self) -> bool:
        return self.lifecycle.status == GONE

    def to_dict(self) -> dict:
        description = {
            "AssociationId": self.association_id,
            "ResourceARN": self.arn,
            "FileSystemId": self.file_system_id,
            "Lifecycle": self.lifecycle.status,
            "FileSystemPath": self.file_system_path,
            "DataRepositoryPath": self.data_repository_path,
            "BatchImportMetaDataOnCreate": self.batch_import,
            "ImportedFileChunkSize": self.chunk_size,
            "CreationTime": self.creation_time,
        }
        if self.s3 is not None:
            description["S3"] = self.s3
        tags = self.backend.list_tags_for_resource(self.arn)
        if tags:
            description["Tags"] = tags
        return description


class FsxDataRepositoryBackend:
    """Mixin grafted onto moto's FSxBackend."""

    def _associations(self) -> dict:
        associations = state(self, "data_repository_associations")
        for association_id in [k for k, v in associations.items() if v.gone]:
            self.tagger.delete_all_tags_for_resource(associations.pop(association_id).arn)
        return associations

    def _association(self, association_id: str) -> DataRepositoryAssociation:
        association = self._associations().get(association_id)
        if association is None:
            raise FsxApiError("DataRepositoryAssociationNotFound", f"Data repository association '{association_id}' does not exist.")
        return association

    def create_data_repository_association(self, params: dict) -> DataRepositoryAssociation:
        validate_request(SERVICE, "CreateDataRepositoryAssociation", params)
        tokens = state(self, "data_repository_association_tokens")
        token = params.get("ClientRequestToken")
        if token and token in tokens:
            first_params, association_id = tokens[token]
            if first_params != params:
                raise FsxApiError("IncompatibleParameterError", "The client request token was used with different parameters.", Parameter="ClientRequestToken")
            return self._associations().get(association_id) or self._association(association_id)
        file_system = self.file_systems.get(params["FileSystemId"])
        if file_system is None:
            raise FsxApiError("FileSystemNotFound", f"File system '{params['FileSystemId']}' does not exist.")
        if file_system.file_system_type != "LUSTRE":
            raise FsxApiError("UnsupportedOperation", "Data repository associations are supported only on Amazon FSx for Lustre file systems.")
        deployment = (file_system.lustre_configuration or {}).get("DeploymentType", "SCRATCH_1")
        if deployment == "SCRATCH_1":
            raise FsxApiError("UnsupportedOperation", "Data repository associations are not supported on SCRATCH_1 file systems.")
        # "supported on ... all FSx for Lustre 2.12 and 2.15 file systems" (DataRepositoryAssociation, Amazon FSx API Reference).
        version = file_system.__dict__.get("_sandbox", {}).get("type_version", "2.10")
        if version not in ("2.12", "2.15"):
            raise FsxApiError("UnsupportedOperation", f"Data repository associations are not supported on Lustre {version} file systems.")
        path = params.get("FileSystemPath") or "/"
        if not path.startswith("/"):
            raise _bad_request("FileSystemPath must be an absolute path that starts with a forward slash (/).")
        repository = params["DataRepositoryPath"]
        if not re.fullmatch(r"s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/.*)?", repository):
            raise _bad_request(f"DataRepositoryPath '{repository}' must be an Amazon S3 path of the form s3://bucket-name/prefix/.")
        _check_events(params.get("S3"))
        existing = [a for a in self._associations().values() if a.file_system_id == file_system.file_system_id]
        if len(existing) >= MAX_ASSOCIATIONS_PER_FILE_SYSTEM:
            raise FsxApiError("ServiceLimitExceeded", f"A file system can have at most {MAX_ASSOCIATIONS_PER_FILE_SYSTEM} data repository associations.")
        for other in existing:
            if _overlaps(other.file_system_path, path):
                raise _bad_request(
                    f"FileSystemPath '{path}' overlaps the file system path '{other.file_system_path}' of data repository association {other.association_id}."
                )
            if _s3_overlaps(other.data_repository_path, repository):
                raise _bad_request(
                    f"DataRepositoryPath '{repository}' overlaps the data repository path of data repository association {other.association_id}."
                )
        association = DataRepositoryAssociation(self, file_system, params)
        self._associations()[association.association_id] = association
        if token:
            tokens[token] = (params, association.association_id)
        return association

    def describe_data_repository_associations(self, params: dict) -> tuple[list, str | None]:
        validate_request(SERVICE, "DescribeDataRepositoryAssociations", params)
        associations = list(self._associations().values())
        ids = params.get("AssociationIds")
        if ids:
            missing = [i for i in ids if i not in self._associations()]
            if missing:
                raise FsxApiError("DataRepositoryAssociationNotFound", f"Data repository associations {missing} do not exist.")
            associations = [a for a in associations if a.association_id in ids]
        for flt in params.get("Filters") or []:
            name, values = flt.get("Name"), flt.get("Values") or []
            if name not in FILTERS:
                raise _bad_request(f"Filter '{name}' is not supported for data repository associations.")
            if name == "file-system-id":
                unknown = [v for v in values if v not in self.file_systems]
                if unknown and len(unknown) == len(values):
                    raise FsxApiError("FileSystemNotFound", f"File system '{unknown[0]}' does not exist.")
                associations = [a for a in associations if a.file_system_id in values]
            elif name == "data-repository-type":
                associations = [a for a in associations if "S3" in values]
            else:
                associations = []
        associations.sort(key=lambda a: (a.creation_time, a.association_id))
        start = 0
        if params.get("NextToken"):
            try:
                start = int(base64.b64decode(params["NextToken"]).decode())
            except ValueError as exc:
                raise _bad_request("The NextToken is not valid.") from exc
        size = params.get("MaxResults") or 25
        page = associations[start:start + size]
        next_token = None
        if start + size < len(associations):
            next_token = base64.b64encode(str(start + size).encode()).decode()
        return page, next_token

    def update_data_repository_association(self, params: dict) -> DataRepositoryAssociation:
        validate_request(SERVICE, "UpdateDataRepositoryAssociation", params)
        association = self._association(params["AssociationId"])
        if association.lifecycle.status not in SETTLED:
            raise _bad_request(
                f"Data repository association {association.association_id} is {association.lifecycle.status}; it can be updated only when AVAILABLE."
            )
        _check_events(params.get("S3"))
        if "ImportedFileChunkSize" in params:
            association.chunk_size = params["ImportedFileChunkSize"]
        if "S3" in params:
            association.s3 = params["S3"]
        association.lifecycle.move("UPDATING", "AVAILABLE")
        return association

    def delete_data_repository_association(self, params: dict) -> tuple[DataRepositoryAssociation, bool]:
        validate_request(SERVICE, "DeleteDataRepositoryAssociation", params)
        association = self._association(params["AssociationId"])
        status = association.lifecycle.status
        if status == "DELETING":
            raise _bad_request(f"Data repository association {association.association_id} is already being deleted.")
        if status not in SETTLED + ("FAILED",):
            raise _bad_request(f"Data repository association {association.association_id} is {status}; it can be deleted only when AVAILABLE.")
        association.lifecycle.move("DELETING", GONE)
        return association, bool(params.get("DeleteDataInFileSystem", False))


class FsxDataRepositoryResponse:
    """Mixin grafted onto moto's FSxResponse."""

    def create_data_repository_association(self) -> str:
        association = self.fsx_backend.create_data_repository_association(json.loads(self.body or "{}"))
        return json.dumps({"Association": association.to_dict()})

    def describe_data_repository_associations(self) -> str:
        page, next_token = self.fsx_backend.describe_data_repository_associations(json.loads(self.body or "{}"))
        body = {"Associations": [a.to_dict() for a in page]}
        if next_token:
            body["NextToken"] = next_token
        return json.dumps(body)

    def update_data_repository_association(self) -> str:
        association = self.fsx_backend.update_data_repository_association(json.loads(self.body or "{}"))
        return json.dumps({"Association": association.to_dict()})

    def delete_data_repository_association(self) -> str:
        association, delete_data = self.fsx_backend.delete_data_repository_association(json.loads(self.body or "{}"))
        return json.dumps({"AssociationId": association.association_id, "Lifecycle": "DELETING", "DeleteDataInFileSystem": delete_data})


def install() -> None:
    graft(moto.fsx.models.FSxBackend, FsxDataRepositoryBackend)
    graft(moto.fsx.responses.FSxResponse, FsxDataRepositoryResponse)
