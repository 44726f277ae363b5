"""fsx_team_dir's main(): argument handling, warnings, no AWS without s3_link, and the association through the sandbox."""

from __future__ import annotations

import json
import os
import stat
import time

import pytest
from ansible.module_utils.testing import patch_module_args
from ansible_collections.amazon.aws.plugins.module_utils.modules import AnsibleAWSModule
from ansible_collections.hyperpod.tenancy.plugins.modules import fsx_team_dir

from sandbox.client import SANDBOX_CREDENTIALS

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="changing ownership needs root")


def run_module(args, capsys):
    with patch_module_args(args), pytest.raises(SystemExit):
        fsx_team_dir.main()
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def no_aws(monkeypatch):
    """No credentials, no region, and a client factory that fails the test if called."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)

    def refuse(*args, **kwargs):
        raise AssertionError("fsx_team_dir created an AWS client without s3_link")

    monkeypatch.setattr(AnsibleAWSModule, "client", refuse)


@pytest.fixture
def no_tools(monkeypatch, tmp_path_factory):
    """A PATH without getfacl, setfacl or lfs."""
    monkeypatch.setenv("PATH", str(tmp_path_factory.mktemp("empty-path")))


@as_root
def test_present_without_aws_then_no_change(tmp_path, capsys, no_aws):
    args = {"team": "vision", "root": str(tmp_path), "require_mount": False, "uid": 1500, "gid": 2500,
            "members": [{"name": "alice", "uid": 3001}], "_ansible_check_mode": True, "_ansible_diff": True}
    checked = run_module(args, capsys)
    assert checked["changed"] and not (tmp_path / "vision").exists()
    assert checked["diff"]["after"]["directories"][str(tmp_path / "vision")] == {"uid": 1500, "gid": 2500, "mode": "2770"}
    args["_ansible_check_mode"] = False
    created = run_module(args, capsys)
    assert created["changed"] and "association" not in created
    assert os.stat(tmp_path / "vision" / "home" / "alice").st_uid == 3001
    again = run_module(args, capsys)
    assert not again["changed"]


def test_non_mount_root_fails(tmp_path, capsys, no_aws):
    result = run_module({"team": "vision", "root": str(tmp_path), "gid": 2500}, capsys)
    assert result["failed"] and "not a mount point" in result["msg"]
    assert list(tmp_path.iterdir()) == []


def test_delete_without_confirmation_fails(tmp_path, capsys, no_aws):
    (tmp_path / "vision").mkdir()
    result = run_module({"team": "vision", "root": str(tmp_path), "require_mount": False, "state": "absent", "on_remove": "delete"}, capsys)
    assert result["failed"] and "confirm_delete" in result["msg"]
    assert (tmp_path / "vision").is_dir()


@as_root
def test_acl_and_quota_without_tools_are_reported_and_warned(tmp_path, capsys, no_aws, no_tools, module_warnings):
    result = run_module({"team": "vision", "root": str(tmp_path), "require_mount": False, "gid": 2500, "acl": True,
                         "project_quota": {"project_id": 42, "block_hard_limit_gib": 10}}, capsys)
    assert result["acl"]["supported"] is False and result["project_quota"]["supported"] is False
    warnings = json.dumps(result["warnings"])  # ansible-core 2.19 sends structured warnings
    assert "acl unsupported: getfacl/setfacl not found" in warnings
    assert "project_quota unsupported: lfs not found" in warnings


def test_s3_link_needs_file_system_and_bucket(tmp_path, capsys, no_aws):
    result = run_module({"team": "vision", "root": str(tmp_path), "require_mount": False, "gid": 2500, "s3_link": True}, capsys)
    assert result["failed"] and "file_system_id" in result["msg"]


def linked(sandbox, seed, root, **team):
    """The module's options for a team's directory linked to the seeded bucket, through the sandbox with its admin key."""
    return dict(
        endpoint_url=sandbox.endpoint, region=seed["region"], access_key="sandbox", secret_key=SANDBOX_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        root=str(root), require_mount=False, s3_link=True, file_system_id=seed["fsx_file_system_id"], bucket=seed["data_bucket"], **team
    )


@as_root
def test_association_through_the_sandbox(seeded, tmp_path, capsys):
    sandbox, seed = seeded
    args = linked(sandbox, seed, tmp_path, team="vision", gid=2500, cost_center="CC-1001")
    created = run_module(args, capsys)
    assert created["changed"]
    association = created["association"]
    assert association["lifecycle"] == "AVAILABLE"
    # The export directory, never /vision: the members' 0700 homes are not exported to the prefix the whole team reads.
    assert association["file_system_path"] == "/vision/s3-export"
    assert association["data_repository_path"] == "s3://%s/vision/" % seed["data_bucket"]
    export = os.stat(tmp_path / "vision" / "s3-export")
    assert (export.st_uid, export.st_gid, oct(export.st_mode & 0o7777)) == (0, 2500, "0o2770")
    # Sticky: no member renames home to s3-export (or away) in the group-writable team directory.
    assert oct(os.stat(tmp_path / "vision").st_mode & 0o7777) == "0o3770"
    assert association["tags"] == {"team": "vision", "cost-center": "CC-1001", "managed-by": "hyperpod.tenancy"}
    assert not run_module(args, capsys)["changed"]

    sandbox.clear_requests()
    offboard = dict(args, state="absent", on_remove="archive")
    removed = run_module(offboard, capsys)
    assert removed["changed"] and removed["action"] == "archived"
    assert ("fsx", "DeleteDataRepositoryAssociation", "write") in sandbox.counts()
    fsx = sandbox.boto3_client("fsx", seed["region"])
    assert fsx.describe_data_repository_associations()["Associations"] == []
    assert os.path.isdir(removed["archive_path"])
    assert not run_module(offboard, capsys)["changed"]


def lifecycles(fsx):
    return dict((a["AssociationId"], a["Lifecycle"]) for a in fsx.describe_data_repository_associations()["Associations"])


def until(condition, timeout=30):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def out_of_band(fsx, seed, path, prefix):
    """An association someone else made on the seeded file system (the platform's own, or the module's before)."""
    return fsx.create_data_repository_association(
        FileSystemId=seed["fsx_file_system_id"], FileSystemPath=path, DataRepositoryPath="s3://%s/%s" % (seed["data_bucket"], prefix),
        S3={"AutoExportPolicy": {"Events": ["NEW", "CHANGED", "DELETED"]}},
    )["Association"]


@as_root
def test_an_association_of_the_whole_team_directory_is_refused_before_any_write_and_never_deleted(seeded, tmp_path, capsys, module_warnings):
    sandbox, seed = seeded
    fsx = sandbox.boto3_client("fsx", seed["region"])
    legacy = out_of_band(fsx, seed, "/vision", "vision/")
    sandbox.clear_requests()
    args = linked(sandbox, seed, tmp_path, team="vision", gid=2500)
    refused = run_module(args, capsys)
    assert refused["failed"]
    assert "FSx path /vision of file system %s, team vision's whole directory with its members' 0700 homes" % seed["fsx_file_system_id"] in refused["msg"]
    assert "Delete association %s" % legacy["AssociationId"] in refused["msg"]
    assert sandbox.writes() == [] and not (tmp_path / "vision").exists()
    # Offboarding reports it and leaves it.
    gone = run_module(dict(args, state="absent"), capsys)
    assert gone["legacy_association"]["association_id"] == legacy["AssociationId"]
    assert "links /vision (team vision's whole directory)" in json.dumps(gone["warnings"])
    assert [a["AssociationId"] for a in fsx.describe_data_repository_associations()["Associations"]] == [legacy["AssociationId"]]


@as_root
def test_an_association_overlapping_the_export_directory_is_refused_before_any_write(seeded, tmp_path, capsys):
    sandbox, seed = seeded
    fsx = sandbox.boto3_client("fsx", seed["region"])
    nested = out_of_band(fsx, seed, "/vision/s3-export/raw", "_hyperpod/raw/")
    sandbox.clear_requests()
    refused = run_module(linked(sandbox, seed, tmp_path, team="vision", gid=2500), capsys)
    assert refused["failed"] and refused["msg"] == (
        "team vision's export directory /vision/s3-export overlaps FSx path /vision/s3-export/raw of data repository association %s on file "
        "system %s; FSx refuses overlapping association paths" % (nested["AssociationId"], seed["fsx_file_system_id"]))
    assert sandbox.writes() == [] and not (tmp_path / "vision").exists()


@as_root
def test_the_limit_of_eight_counts_the_platforms_own_associations(seeded, tmp_path, capsys):
    sandbox, seed = seeded
    fsx = sandbox.boto3_client("fsx", seed["region"])
    platform = [out_of_band(fsx, seed, "/platform%d" % index, "_hyperpod/link%d/" % index) for index in range(7)]
    run_module(linked(sandbox, seed, tmp_path, team="nlp", gid=2600), capsys)  # the 8th, a team's
    sandbox.clear_requests()
    args = linked(sandbox, seed, tmp_path, team="vision", gid=2500)
    for check_mode in (True, False):
        refused = run_module(dict(args, _ansible_check_mode=check_mode), capsys)
        assert refused["failed"], refused
        assert refused["msg"].startswith("team vision's data repository association would be the 9th on FSx file system %s, which takes at most "
                                         "8: it has 8 (" % seed["fsx_file_system_id"]), refused["msg"]
        assert sandbox.writes() == [] and not (tmp_path / "vision").exists()
    until(lambda: lifecycles(fsx).get(platform[0]["AssociationId"]) == "AVAILABLE")
    fsx.delete_data_repository_association(AssociationId=platform[0]["AssociationId"], DeleteDataInFileSystem=False)
    until(lambda: platform[0]["AssociationId"] not in lifecycles(fsx))  # one DELETING still counts (assumption, as the sandbox has it)
    assert run_module(args, capsys)["association"]["file_system_path"] == "/vision/s3-export"


@as_root
def test_association_drift_is_corrected_in_place(seeded, tmp_path, capsys):
    sandbox, seed = seeded
    args = linked(sandbox, seed, tmp_path, team="nlp", gid=2600, cost_center="CC-1002")
    created = run_module(args, capsys)["association"]
    fsx = sandbox.boto3_client("fsx", seed["region"])
    assert created["s3"]["auto_import_policy"]["events"] == []  # export only: S3 metadata never sets owner, mode or links
    # someone turns automatic import on, narrows the export and drops the cost-center tag
    fsx.update_data_repository_association(
        AssociationId=created["association_id"],
        S3={"AutoImportPolicy": {"Events": ["NEW", "CHANGED", "DELETED"]}, "AutoExportPolicy": {"Events": ["NEW"]}},
    )
    fsx.untag_resource(ResourceARN=created["resource_arn"], TagKeys=["cost-center"])

    sandbox.clear_requests()
    checked = run_module(dict(args, _ansible_check_mode=True, _ansible_diff=True), capsys)
    assert checked["changed"]
    assert checked["diff"]["before"]["association"]["s3"]["auto_import_policy"]["events"] == ["CHANGED", "DELETED", "NEW"]
    assert checked["diff"]["after"]["association"]["s3"]["auto_import_policy"]["events"] == []
    assert checked["diff"]["after"]["association"]["tags"]["cost-center"] == "CC-1002"
    assert sandbox.writes() == []

    fixed = run_module(args, capsys)
    assert fixed["changed"]
    assert fixed["association"]["association_id"] == created["association_id"]  # updated in place, not replaced
    assert fixed["association"]["s3"]["auto_export_policy"]["events"] == ["CHANGED", "DELETED", "NEW"]
    assert fixed["association"]["s3"]["auto_import_policy"]["events"] == []
    assert fixed["association"]["tags"]["cost-center"] == "CC-1002"
    operations = {r["operation"] for r in sandbox.writes()}
    assert operations == {"UpdateDataRepositoryAssociation", "TagResource"}
    assert not run_module(args, capsys)["changed"]


def test_a_file_system_error_without_a_file_names_the_root(tmp_path, capsys, no_aws, monkeypatch):
    def denied(context, params):
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(fsx_team_dir, "converge", denied)
    result = run_module({"team": "vision", "root": str(tmp_path), "gid": 2500}, capsys)
    assert result["failed"] and result["msg"] == "%s: Permission denied" % tmp_path and result["errno"] == 13


def renames_as_member(team_path, uid, gid):
    """What a member (``uid`` in group ``gid``) may rename in the team directory: ``{name: True when the rename went through}``."""
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(read)
            os.chdir(team_path)  # as root: the test's temporary parents are 0700
            os.setgroups([gid])
            os.setgid(gid)
            os.setuid(uid)
            done = {}
            for name in ("home", "s3-export"):
                try:
                    os.rename(name, name + ".moved")
                    done[name] = True
                except PermissionError:
                    done[name] = False
            os.write(write, json.dumps(done).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as answer:
        text = answer.read()
    os.waitpid(child, 0)
    return json.loads(text)


@as_root
def test_a_member_cannot_rename_home_into_the_export_directory(tmp_path):
    """Threat model m17: with the S3 link the team directory is sticky, so no member renames home to s3-export (and has
    every teammate's 0700 home exported to the prefix the whole team reads)."""
    from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_dirs import ensure_present

    members = [{"name": "alice", "uid": 3001}, {"name": "bob", "uid": 3002}]
    ensure_present(str(tmp_path), "vision", 0, 2500, "2770", members, False, require_mount=False, export=True)
    assert renames_as_member(str(tmp_path / "vision"), 3001, 2500) == {"home": False, "s3-export": False}
    # Without the sticky bit (the team directory as it is without the link) the same member renames both.
    os.chmod(tmp_path / "vision", 0o2770)
    assert renames_as_member(str(tmp_path / "vision"), 3001, 2500) == {"home": True, "s3-export": True}


def as_member(team_path, uid, gid, action):
    """Run ``action()`` in ``team_path`` as a member (``uid`` in group ``gid``), in a child process; its error, or None."""
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(read)
            os.chdir(team_path)
            os.setgroups([gid])
            os.setgid(gid)
            os.setuid(uid)
            try:
                action()
                os.write(write, b"null")
            except OSError as e:
                os.write(write, json.dumps(e.strerror).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as answer:
        text = answer.read()
    os.waitpid(child, 0)
    return json.loads(text)


def tree(path):
    """Every entry under ``path`` with its owner, group, mode and inode (links not followed)."""
    found = {}
    for top, dirs, files in os.walk(path):
        for name in [""] + dirs + files:
            info = os.lstat(os.path.join(top, name))
            found[os.path.relpath(os.path.join(top, name), path)] = (info.st_uid, info.st_gid, oct(info.st_mode), info.st_ino)
    return found


MEMBERS = [{"name": "alice", "uid": 3001}, {"name": "bob", "uid": 3002}]


@as_root
@pytest.mark.parametrize("plant", [
    lambda: os.rename("home", "s3-export"),  # every teammate's 0700 home under the exported directory
    lambda: os.mkdir("s3-export"),
    lambda: os.symlink("home", "s3-export"),
])
def test_an_export_directory_made_before_the_first_link_is_refused_and_the_tree_left_as_it_is(seeded, tmp_path, capsys, plant):
    """Threat model m17 (H1): before the link the team directory is 2770, not sticky; what a member puts at s3-export then
    is never adopted and linked: the first linked run refuses before any write, on FSx or in the tree."""
    sandbox, seed = seeded
    args = linked(sandbox, seed, tmp_path, team="vision", gid=2500, members=MEMBERS)
    assert not run_module(dict(args, s3_link=False), capsys).get("failed")
    assert as_member(str(tmp_path / "vision"), 3001, 2500, plant) is None
    untouched = tree(tmp_path / "vision")
    sandbox.clear_requests()
    for check_mode in (True, False):
        refused = run_module(dict(args, _ansible_check_mode=check_mode), capsys)
        assert refused["failed"] and refused["msg"].startswith(
            "%s already exists, and team vision's data repository association of it does not: refusing to link it" % (tmp_path / "vision" / "s3-export")
        ), refused
        assert tree(tmp_path / "vision") == untouched and sandbox.writes() == []


@as_root
@pytest.mark.parametrize("past_the_check", [False, True])
def test_an_export_directory_made_once_the_team_directory_is_sticky_is_refused(seeded, tmp_path, capsys, monkeypatch, past_the_check):
    """Threat model m17 (H1): the run makes the team directory sticky first, then makes s3-export, never taking one that appeared
    meanwhile (``past_the_check``: after the last look, so the mkdir finds it)."""
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import team_dirs

    sandbox, seed = seeded
    args = linked(sandbox, seed, tmp_path, team="vision", gid=2500, members=MEMBERS)
    assert not run_module(dict(args, s3_link=False), capsys).get("failed")
    ensure, lstat = team_dirs.Root.ensure, team_dirs.Root.lstat

    def blind_once_sticky(self, parts):
        if past_the_check and parts == ("vision", "s3-export") and os.stat(tmp_path / "vision").st_mode & 0o1000:
            return None
        return lstat(self, parts)

    monkeypatch.setattr(team_dirs.Root, "lstat", blind_once_sticky)

    def then_a_member_mkdirs(self, parts, uid, gid, mode):
        ensure(self, parts, uid, gid, mode)
        if parts == ("vision",):
            assert as_member(str(tmp_path / "vision"), 3001, 2500, lambda: os.mkdir("s3-export")) is None

    monkeypatch.setattr(team_dirs.Root, "ensure", then_a_member_mkdirs)
    refused = run_module(args, capsys)
    assert refused["failed"] and "refusing to link it" in refused["msg"]
    assert oct(os.stat(tmp_path / "vision").st_mode & 0o7777) == "0o3770" and os.stat(tmp_path / "vision" / "s3-export").st_uid == 3001
    assert not any(r["operation"] == "CreateDataRepositoryAssociation" for r in sandbox.writes())


@as_root
@pytest.mark.parametrize("plant", [
    lambda: os.rename("home", "s3-export"),
    lambda: os.symlink("/", "s3-export"),
    lambda: open("s3-export", "w").close(),
])
def test_without_the_link_an_export_directory_a_member_made_is_warned_about_never_managed(tmp_path, capsys, no_aws, module_warnings, plant):
    """Threat model m17 (H6): without the link, whatever a member puts at s3-export is left as it is and warned about; the run goes on."""
    args = {"team": "vision", "root": str(tmp_path), "require_mount": False, "gid": 2500, "members": MEMBERS}
    run_module(args, capsys)
    assert as_member(str(tmp_path / "vision"), 3001, 2500, plant) is None
    planted = os.lstat(tmp_path / "vision" / "s3-export")
    result = run_module(args, capsys)
    assert not result.get("failed"), result
    assert "s3-export exists" in json.dumps(result["warnings"]) and "never linked" in json.dumps(result["warnings"])
    after = os.lstat(tmp_path / "vision" / "s3-export")
    assert (after.st_uid, after.st_mode, after.st_ino) == (planted.st_uid, planted.st_mode, planted.st_ino)
    assert oct(os.stat(tmp_path / "vision").st_mode & 0o7777) == "0o2770"
    # home renamed away is made again (the members' next logins need it), and the warning says where their homes may be.
    assert ("vision/home is missing and was made again, empty" in json.dumps(result["warnings"])) == stat.S_ISDIR(planted.st_mode)


@as_root
@pytest.mark.parametrize("s3_link", [False, True])
def test_offboarding_deletes_the_teams_association_whatever_its_s3_link_says(seeded, tmp_path, capsys, s3_link):
    """Threat model 12 (H3): a lead who writes s3_link false in the absent entry (or a platform that revoked the link) does not
    leave the association of /<team>/s3-export behind, spending one of the file system's 8 and linking a path that is gone."""
    sandbox, seed = seeded
    args = linked(sandbox, seed, tmp_path, team="vision", gid=2500)
    association = run_module(args, capsys)["association"]
    offboard = dict(args, state="absent", on_remove="archive", s3_link=s3_link)
    if not s3_link:
        del offboard["bucket"]
    removed = run_module(offboard, capsys)
    assert removed["changed"] and removed["action"] == "archived", removed
    assert removed["diff"]["before"]["association"]["association_id"] == association["association_id"]
    fsx = sandbox.boto3_client("fsx", seed["region"])
    assert fsx.describe_data_repository_associations()["Associations"] == []


@as_root
@pytest.mark.parametrize("on_remove", ["archive", "delete"])
def test_offboarding_refuses_to_remove_a_team_directory_an_old_association_links(seeded, tmp_path, capsys, on_remove):
    """Threat model 12 (H4): an association of /<team> (made by the module before the export directory) is never deleted for
    the caller; while it exists the team directory is neither archived nor deleted, refused before any write."""
    sandbox, seed = seeded
    args = linked(sandbox, seed, tmp_path, team="vision", gid=2500, members=MEMBERS)
    run_module(dict(args, s3_link=False), capsys)
    fsx = sandbox.boto3_client("fsx", seed["region"])
    legacy = out_of_band(fsx, seed, "/vision", "vision/")
    untouched = tree(tmp_path / "vision")
    sandbox.clear_requests()
    offboard = dict(args, state="absent", on_remove=on_remove, confirm_delete="vision", s3_link=False)
    for check_mode in (True, False):
        refused = run_module(dict(offboard, _ansible_check_mode=check_mode), capsys)
        assert refused["failed"] and refused["msg"] == (
            "data repository association %s of file system %s links /vision (team vision's whole directory) to s3://%s/vision/: refusing to "
            "%s %s while it exists. Delete association %s (with DeleteDataInFileSystem false) and run again: the collection does not "
            "delete it for you" % (legacy["AssociationId"], seed["fsx_file_system_id"], seed["data_bucket"], on_remove, tmp_path / "vision",
                                   legacy["AssociationId"])), refused
        assert tree(tmp_path / "vision") == untouched and sandbox.writes() == []
    assert [a["AssociationId"] for a in fsx.describe_data_repository_associations()["Associations"]] == [legacy["AssociationId"]]


@as_root
@pytest.mark.parametrize("path, prefix, expected", [
    ("/platform", "vision/", "which overlaps team vision's prefix s3://%(bucket)s/vision/"),
    ("/platform", "vision/raw/", "which overlaps team vision's prefix s3://%(bucket)s/vision/"),
    ("/vision/home", "_hyperpod/homes/", "links FSx path /vision/home, inside team vision's directory, to s3://%(bucket)s/_hyperpod/homes/"),
])
def test_an_association_of_the_teams_prefix_or_inside_its_directory_is_refused_before_any_write(seeded, tmp_path, capsys, path, prefix, expected):
    """Threat model 12: another association exporting to the team's prefix (FSx wants each its own; every principal of the team
    reads it), or one of another path in the team directory (the homes), is refused before any write."""
    sandbox, seed = seeded
    fsx = sandbox.boto3_client("fsx", seed["region"])
    other = out_of_band(fsx, seed, path, prefix)
    sandbox.clear_requests()
    refused = run_module(linked(sandbox, seed, tmp_path, team="vision", gid=2500), capsys)
    assert refused["failed"] and other["AssociationId"] in refused["msg"] and expected % {"bucket": seed["data_bucket"]} in refused["msg"], refused
    assert sandbox.writes() == [] and not (tmp_path / "vision").exists()
