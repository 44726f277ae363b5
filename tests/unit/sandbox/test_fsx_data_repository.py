"""FSx data repository associations in the sandbox, called through boto3 as the modules call them."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from tests.unit.sandbox.aws_errors import error_code, refused
from tests.unit.sandbox.polling import unless_gone, wait_until

BUCKET = "hyperpod-team-data"
EVENTS = {"AutoImportPolicy": {"Events": ["NEW", "CHANGED", "DELETED"]}, "AutoExportPolicy": {"Events": ["NEW", "CHANGED", "DELETED"]}}


@pytest.fixture
def fsx(seeded):
    client, seed = seeded
    return client.boto3_client("fsx", seed["region"]), seed["fsx_file_system_id"]


def settle(fsx_client, association_id, expected, timeout=10.0):
    """Poll until the association's Lifecycle is ``expected`` (None: gone); return the last description."""

    def read():
        return unless_gone(
            lambda: fsx_client.describe_data_repository_associations(AssociationIds=[association_id])["Associations"][0],
            "DataRepositoryAssociationNotFound",
        )

    return wait_until(read, expected, association_id, timeout, status=lambda found: found and found["Lifecycle"])


def create(fsx_client, fs_id, team, **extra):
    params = dict(FileSystemId=fs_id, FileSystemPath=f"/{team}", DataRepositoryPath=f"s3://{BUCKET}/{team}/", S3=EVENTS)
    params.update(extra)
    return fsx_client.create_data_repository_association(**params)["Association"]


def test_create_is_creating_then_available_with_tags_and_defaults(fsx):
    client, fs_id = fsx
    created = create(client, fs_id, "vision", BatchImportMetaDataOnCreate=True, Tags=[{"Key": "team", "Value": "vision"}])
    assert created["Lifecycle"] == "CREATING"
    assert created["AssociationId"].startswith("dra-")
    assert created["ResourceARN"].endswith(f":association/{fs_id}/{created['AssociationId']}")
    assert created["ImportedFileChunkSize"] == 1024
    assert created["S3"] == EVENTS
    available = settle(client, created["AssociationId"], "AVAILABLE")
    assert available["FileSystemPath"] == "/vision"
    assert available["DataRepositoryPath"] == f"s3://{BUCKET}/vision/"
    assert available["Tags"] == [{"Key": "team", "Value": "vision"}]
    listed = client.describe_data_repository_associations(Filters=[{"Name": "file-system-id", "Values": [fs_id]}])["Associations"]
    assert [a["AssociationId"] for a in listed] == [created["AssociationId"]]


@pytest.mark.parametrize(
    "path, repository",
    [
        ("/vision", f"s3://{BUCKET}/other/"),  # same directory
        ("/vision/", f"s3://{BUCKET}/other/"),  # same directory, trailing slash
        ("/vision/sub", f"s3://{BUCKET}/other/"),  # nested in /vision
        ("/", f"s3://{BUCKET}/other/"),  # the root overlaps everything
        ("/other", f"s3://{BUCKET}/vision/data/"),  # S3 prefix nested in vision's
    ],
)
def test_overlapping_paths_are_bad_requests(fsx, path, repository):
    client, fs_id = fsx
    create(client, fs_id, "vision")
    assert refused(client.create_data_repository_association, FileSystemId=fs_id, FileSystemPath=path, DataRepositoryPath=repository) == "BadRequest"
    assert len(client.describe_data_repository_associations()["Associations"]) == 1


@pytest.mark.parametrize(
    "params, code",
    [
        ({"FileSystemPath": "vision"}, "BadRequest"),  # not absolute
        ({"DataRepositoryPath": "https://example.com/vision/"}, "BadRequest"),
        ({"S3": {"AutoImportPolicy": {"Events": ["NEW", "NEW"]}}}, "BadRequest"),
        ({"S3": {"AutoImportPolicy": {"Events": ["RENAMED"]}}}, "ValidationException"),  # enum from botocore's model
        ({"FileSystemId": "fs-zzzzzzzzzz"}, "ValidationException"),  # pattern ^(fs-[0-9a-f]{8,})$
        ({"ImportedFileChunkSize": 512001}, "ValidationException"),
        ({"Tags": [{"Key": "bad#key", "Value": "x"}]}, "ValidationException"),
        ({"FileSystemId": "fs-0123456789abcdef0"}, "FileSystemNotFound"),
    ],
)
def test_bad_create_requests(fsx, params, code):
    client, fs_id = fsx
    request = dict(FileSystemId=fs_id, FileSystemPath="/vision", DataRepositoryPath=f"s3://{BUCKET}/vision/")
    request.update(params)
    with pytest.raises(ClientError) as excinfo:
        client.create_data_repository_association(**request)
    assert error_code(excinfo) == code
    assert client.describe_data_repository_associations()["Associations"] == []


def test_only_lustre_file_systems(seeded):
    sandbox, seed = seeded
    client = sandbox.boto3_client("fsx", seed["region"])
    zfs = client.create_file_system(
        FileSystemType="OPENZFS", StorageCapacity=64, SubnetIds=seed["subnet_ids"][:1],
        OpenZFSConfiguration={"DeploymentType": "SINGLE_AZ_1", "ThroughputCapacity": 64},
    )["FileSystem"]["FileSystemId"]
    scratch = client.create_file_system(
        FileSystemType="LUSTRE", StorageCapacity=1200, SubnetIds=seed["subnet_ids"][:1],
        LustreConfiguration={"DeploymentType": "SCRATCH_1"},
    )["FileSystem"]["FileSystemId"]
    for fs_id in (zfs, scratch):
        assert refused(create, client, fs_id, "vision") == "UnsupportedOperation"


def test_at_most_eight_per_file_system(fsx):
    client, fs_id = fsx
    for index in range(8):
        create(client, fs_id, f"team{index}")
    assert refused(create, client, fs_id, "team8") == "ServiceLimitExceeded"


def test_pagination(fsx):
    client, fs_id = fsx
    ids = {create(client, fs_id, f"team{index}")["AssociationId"] for index in range(5)}
    first = client.describe_data_repository_associations(MaxResults=2)
    assert len(first["Associations"]) == 2 and first["NextToken"]
    seen = [a["AssociationId"] for a in first["Associations"]]
    token = first["NextToken"]
    while token:
        page = client.describe_data_repository_associations(MaxResults=2, NextToken=token)
        seen.extend(a["AssociationId"] for a in page["Associations"])
        token = page.get("NextToken")
    assert sorted(seen) == sorted(ids)


def test_client_request_token_is_idempotent(fsx):
    client, fs_id = fsx
    first = create(client, fs_id, "vision", ClientRequestToken="token-1")
    again = create(client, fs_id, "vision", ClientRequestToken="token-1")
    assert again["AssociationId"] == first["AssociationId"]
    assert refused(create, client, fs_id, "nlp", ClientRequestToken="token-1") == "IncompatibleParameterError"


def test_update_waits_for_available_then_moves_through_updating(fsx):
    client, fs_id = fsx
    created = create(client, fs_id, "vision")
    export_only = {"AutoExportPolicy": {"Events": ["NEW"]}}
    assert refused(client.update_data_repository_association, AssociationId=created["AssociationId"], S3=export_only) == "BadRequest"
    settle(client, created["AssociationId"], "AVAILABLE")
    updated = client.update_data_repository_association(AssociationId=created["AssociationId"], S3=export_only, ImportedFileChunkSize=2048)
    assert updated["Association"]["Lifecycle"] == "UPDATING"
    after = settle(client, created["AssociationId"], "AVAILABLE")
    assert after["S3"] == export_only and after["ImportedFileChunkSize"] == 2048
    assert after["FileSystemPath"] == "/vision"


def test_delete_moves_through_deleting_then_gone(statuses, fsx):
    client, fs_id = fsx
    statuses.hold()
    created = create(client, fs_id, "vision")
    with pytest.raises(ClientError) as excinfo:
        client.delete_data_repository_association(AssociationId=created["AssociationId"], DeleteDataInFileSystem=False)
    assert error_code(excinfo) == "BadRequest"  # still CREATING
    statuses.settle()
    settle(client, created["AssociationId"], "AVAILABLE")
    statuses.hold()
    deleted = client.delete_data_repository_association(AssociationId=created["AssociationId"], DeleteDataInFileSystem=False)
    assert deleted["Lifecycle"] == "DELETING" and deleted["DeleteDataInFileSystem"] is False
    assert refused(client.delete_data_repository_association, AssociationId=created["AssociationId"]) == "BadRequest"
    statuses.settle()
    assert settle(client, created["AssociationId"], None) is None
    statuses.hold()
    # the path is free again
    assert create(client, fs_id, "vision")["Lifecycle"] == "CREATING"


def test_unknown_association_and_filters(fsx):
    client, fs_id = fsx
    for call in (
        lambda: client.describe_data_repository_associations(AssociationIds=["dra-0123456789abcdef0"]),
        lambda: client.update_data_repository_association(AssociationId="dra-0123456789abcdef0", ImportedFileChunkSize=10),
        lambda: client.delete_data_repository_association(AssociationId="dra-0123456789abcdef0"),
    ):
        with pytest.raises(ClientError) as excinfo:
            call()
        assert error_code(excinfo) == "DataRepositoryAssociationNotFound"
    assert (
        refused(client.describe_data_repository_associations, Filters=[{"Name": "file-system-id", "Values": ["fs-0123456789abcdef0"]}])
        == "FileSystemNotFound"
    )
    assert refused(client.describe_data_repository_associations, Filters=[{"Name": "backup-type", "Values": ["USER_INITIATED"]}]) == "BadRequest"
