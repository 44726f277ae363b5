"""module_utils/team_dirs.py against a real directory (tmp_path) standing in for the FSx mount.

CI runs these as root, so ownership is really changed and checked; as another user
the tests that chown to other ids are skipped.
"""

from __future__ import annotations

import datetime
import os
import stat

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import team_dirs
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="changing ownership needs root")
UID, GID = 1500, 2500
MEMBERS = [{"name": "alice", "uid": 3001}, {"name": "bob", "uid": 3002}]
NOW = datetime.datetime(2026, 11, 30, 9, 15, 0, tzinfo=datetime.timezone.utc)  # noqa: UP017


def owner_mode(path):
    info = os.lstat(path)
    return info.st_uid, info.st_gid, "%04o" % stat.S_IMODE(info.st_mode)


def present(root, members=None, mode="2770", check_mode=False, team="vision"):
    members = MEMBERS if members is None else members
    return team_dirs.ensure_present(str(root), team, UID, GID, mode, members, check_mode, require_mount=False)


@as_root
def test_create_sets_layout_owners_and_modes_then_no_change(tmp_path):
    changed, before, after, details = present(tmp_path)
    assert changed
    assert set(before.values()) == {None}
    assert owner_mode(tmp_path / "vision") == (UID, GID, "2770")
    assert owner_mode(tmp_path / "vision" / "home") == (UID, GID, "2750")
    assert owner_mode(tmp_path / "vision" / "home" / "alice") == (3001, GID, "0700")
    assert owner_mode(tmp_path / "vision" / "home" / "bob") == (3002, GID, "0700")
    assert after[str(tmp_path / "vision" / "home" / "bob")] == {"uid": 3002, "gid": GID, "mode": "0700"}
    assert details["path"] == str(tmp_path / "vision")
    assert details["unlisted_homes"] == []
    # setgid on the team directory: what members create belongs to the team group
    (tmp_path / "vision" / "shared").mkdir()
    assert os.stat(tmp_path / "vision" / "shared").st_gid == GID

    changed, before, after, unused = present(tmp_path)
    assert not changed and before == after


@as_root
def test_check_mode_predicts_and_writes_nothing(tmp_path):
    changed, before, after, unused = present(tmp_path, check_mode=True)
    assert changed
    assert after[str(tmp_path / "vision")] == {"uid": UID, "gid": GID, "mode": "2770"}
    assert list(tmp_path.iterdir()) == []
    present(tmp_path)
    changed, before, after, unused = present(tmp_path, check_mode=True, mode="2750")
    assert changed and after[str(tmp_path / "vision")]["mode"] == "2750"
    assert owner_mode(tmp_path / "vision")[2] == "2770"


@as_root
def test_change_mode_and_owner_drift(tmp_path):
    present(tmp_path)
    os.chown(tmp_path / "vision" / "home" / "alice", 0, 0)
    changed, before, after, unused = present(tmp_path, mode="2750")
    assert changed
    assert before[str(tmp_path / "vision")]["mode"] == "2770"
    assert after[str(tmp_path / "vision")]["mode"] == "2750"
    assert before[str(tmp_path / "vision" / "home" / "alice")] == {"uid": 0, "gid": 0, "mode": "0700"}
    assert owner_mode(tmp_path / "vision") == (UID, GID, "2750")
    assert owner_mode(tmp_path / "vision" / "home" / "alice") == (3001, GID, "0700")


@as_root
def test_add_and_remove_a_member(tmp_path):
    present(tmp_path, members=MEMBERS[:1])
    assert not (tmp_path / "vision" / "home" / "bob").exists()
    changed, before, unused_1, unused_2 = present(tmp_path)
    assert changed and before[str(tmp_path / "vision" / "home" / "bob")] is None
    assert owner_mode(tmp_path / "vision" / "home" / "bob") == (3002, GID, "0700")
    (tmp_path / "vision" / "home" / "bob" / "notes.txt").write_text("keep me")
    # bob leaves: his home and data stay, and are reported
    changed, unused, after, details = present(tmp_path, members=MEMBERS[:1])
    assert not changed
    assert str(tmp_path / "vision" / "home" / "bob") not in after
    assert details["unlisted_homes"] == [str(tmp_path / "vision" / "home" / "bob")]
    assert (tmp_path / "vision" / "home" / "bob" / "notes.txt").read_text() == "keep me"


@as_root
def test_keep_leaves_everything(tmp_path):
    present(tmp_path)
    changed, before, after, details = team_dirs.ensure_absent(str(tmp_path), "vision", "keep", False, require_mount=False)
    assert not changed and details["action"] == "kept"
    assert before == after == {str(tmp_path / "vision"): {"uid": UID, "gid": GID, "mode": "2770"}}
    assert (tmp_path / "vision" / "home" / "alice").is_dir()


@as_root
def test_archive_moves_the_team_atomically(tmp_path):
    present(tmp_path)
    (tmp_path / "vision" / "data.bin").write_bytes(b"x" * 10)
    archive = tmp_path / ".archive" / "vision-20261130T091500Z"
    changed, unused, after, details = team_dirs.ensure_absent(str(tmp_path), "vision", "archive", True, require_mount=False, now=NOW)
    assert changed and details["archive_path"] == str(archive)
    assert (tmp_path / "vision").is_dir() and not (tmp_path / ".archive").exists()

    inode = os.stat(tmp_path / "vision").st_ino
    changed, unused, after, details = team_dirs.ensure_absent(str(tmp_path), "vision", "archive", False, require_mount=False, now=NOW)
    assert changed and details["action"] == "archived"
    assert not (tmp_path / "vision").exists()
    assert os.stat(archive).st_ino == inode  # renamed, not copied
    assert (archive / "data.bin").read_bytes() == b"x" * 10
    assert owner_mode(tmp_path / ".archive") == (0, 0, "0700")
    assert after[str(archive)] == {"uid": UID, "gid": GID, "mode": "2770"}

    changed, unused_1, unused_2, details = team_dirs.ensure_absent(str(tmp_path), "vision", "archive", False, require_mount=False, now=NOW)
    assert not changed and details["action"] == "none"


@as_root
def test_delete_needs_confirmation_and_never_follows_links(tmp_path):
    outside = tmp_path.parent / (tmp_path.name + "-outside")
    outside.mkdir()
    (outside / "precious").write_text("not the team's")
    root = tmp_path / "mnt"
    root.mkdir()
    present(root)
    (root / "vision" / "link").symlink_to(outside)
    with pytest.raises(InputError, match="confirm_delete"):
        team_dirs.ensure_absent(str(root), "vision", "delete", False, confirm_delete="nlp", require_mount=False)
    assert (root / "vision").is_dir()
    changed, unused_1, unused_2, unused_3 = team_dirs.ensure_absent(str(root), "vision", "delete", True, confirm_delete="vision", require_mount=False)
    assert changed and (root / "vision").is_dir()
    changed, unused, after, details = team_dirs.ensure_absent(str(root), "vision", "delete", False, confirm_delete="vision", require_mount=False)
    assert changed and details["action"] == "deleted" and after == {str(root / "vision"): None}
    assert not (root / "vision").exists()
    assert (outside / "precious").read_text() == "not the team's"


@pytest.fixture
def outside(tmp_path):
    """A directory outside root that a planted link points at; its owner and mode must never change."""
    target = tmp_path / "outside"
    target.mkdir(mode=0o755)
    os.chmod(target, 0o755)
    root = tmp_path / "mnt"
    root.mkdir()
    return root, target, owner_mode(target)


@as_root
def test_link_planted_as_the_team_path_is_refused(outside):
    root, target, untouched = outside
    (root / "vision").symlink_to(target)
    with pytest.raises(InputError, match="symbolic link"):
        present(root)
    for on_remove in ("archive", "delete"):
        with pytest.raises(InputError, match="symbolic link"):
            team_dirs.ensure_absent(str(root), "vision", on_remove, False, confirm_delete="vision", require_mount=False)
    assert owner_mode(target) == untouched
    assert list(target.iterdir()) == []
    assert (root / "vision").is_symlink()


@as_root
@pytest.mark.parametrize("planted", [("home",), ("home", "alice")])
def test_link_planted_inside_the_team_path_is_refused_before_any_write(outside, planted):
    root, target, untouched = outside
    present(root)
    os.chmod(root / "vision", 0o2700)  # drift that a run would correct
    link = root.joinpath("vision", *planted)
    if planted == ("home",):
        for child in link.iterdir():
            child.rmdir()
    link.rmdir()
    link.symlink_to(target)
    with pytest.raises(InputError, match="symbolic link"):
        present(root)
    assert owner_mode(target) == untouched
    assert list(target.iterdir()) == []
    assert owner_mode(root / "vision")[2] == "2700"  # nothing was written


@pytest.mark.parametrize("team", ["..", "../etc", "/etc", "vision/../..", ".", "", "Vision", "a" * 41])
def test_team_names_that_escape_root_or_break_naming_are_refused(tmp_path, team):
    with pytest.raises(InputError):
        present(tmp_path, team=team)
    with pytest.raises(InputError):
        team_dirs.ensure_absent(str(tmp_path), team, "archive", False, require_mount=False)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("member", [{"name": "..", "uid": 1}, {"name": "a/b", "uid": 1}, {"name": ".hidden", "uid": 1}, {"name": "carol", "uid": None}])
def test_bad_members_are_refused(tmp_path, member):
    with pytest.raises(InputError):
        present(tmp_path, members=[member])
    assert list(tmp_path.iterdir()) == []


def test_root_must_be_a_mount_point_unless_told_otherwise(tmp_path):
    assert not os.path.ismount(tmp_path)
    with pytest.raises(InputError, match="not a mount point"):
        team_dirs.ensure_present(str(tmp_path), "vision", UID, GID, "2770", [], False, require_mount=True)
    with pytest.raises(InputError, match="not a mount point"):
        team_dirs.ensure_absent(str(tmp_path), "vision", "archive", False, require_mount=True)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(InputError, match="absolute"):
        team_dirs.ensure_present("relative/root", "vision", UID, GID, "2770", [], False, require_mount=False)


@pytest.mark.parametrize("mode", ["777777", "2779", "rwx", "99"])
def test_bad_modes_are_refused(tmp_path, mode):
    with pytest.raises(InputError, match="octal"):
        present(tmp_path, mode=mode)


def test_acl_and_quota_are_reported_unsupported_without_their_tools(tmp_path):
    def no_tools(name):
        return None

    def never(argv):
        raise AssertionError("nothing may run: %s" % argv)

    acl = team_dirs.ensure_acl(str(tmp_path), GID, "2770", False, never, no_tools)
    quota = team_dirs.ensure_project_quota(str(tmp_path), str(tmp_path), {"project_id": 7}, False, never, no_tools)
    assert acl["supported"] is False and "setfacl" in acl["reason"]
    assert quota["supported"] is False and "lfs" in quota["reason"]


class FakeLfs:
    """Just enough of ``lfs project``/``lfs quota``/``lfs setquota`` for the quota logic."""

    def __init__(self, root):
        self.root = root
        self.projects = {}
        self.limits = {}
        self.writes = []

    def which(self, name):
        return "/usr/bin/lfs" if name == "lfs" else None

    def run(self, argv):
        command = argv[1:]
        if command[:2] == ["project", "-d"]:
            project, inherit = self.projects.get(command[2], (0, False))
            return 0, "%5d %s %s\n" % (project, "P" if inherit else "-", command[2]), ""
        if command[:2] == ["quota", "-p"]:
            block, inodes = self.limits.get(int(command[2]), (0, 0))
            return 0, (
                "Disk quotas for prj %s (pid %s):\n     Filesystem  kbytes   quota   limit   grace   files   quota   limit   grace\n"
                "%s\n                      4       0 %7d       -       1       0 %7d       -\n" % (command[2], command[2], self.root, block, inodes)
            ), ""
        self.writes.append(command)
        if command[0] == "project":
            self.projects[command[-1]] = (int(command[2]), True)
        elif command[0] == "setquota":
            block, inodes = self.limits.get(int(command[2]), (0, 0))
            args = dict(zip(command[3:-1:2], command[4:-1:2], strict=True))
            self.limits[int(command[2])] = (int(args.get("-B", block)), int(args.get("-I", inodes)))
        return 0, "", ""


def test_lustre_project_quota_is_set_once(tmp_path):
    lfs = FakeLfs(str(tmp_path))
    quota = {"project_id": 4242, "block_hard_limit_gib": 100, "inode_hard_limit": 1000000}
    team = str(tmp_path / "vision")
    os.mkdir(team)
    checked = team_dirs.ensure_project_quota(str(tmp_path), team, quota, True, lfs.run, lfs.which)
    assert checked["changed"] and lfs.writes == []
    result = team_dirs.ensure_project_quota(str(tmp_path), team, quota, False, lfs.run, lfs.which)
    assert result["changed"] and result["after"]["block_hard_limit_kib"] == 100 * 1024 * 1024
    assert lfs.writes == [
        ["project", "-p", "4242", "-s", "-r", team],
        ["setquota", "-p", "4242", "-B", str(100 * 1024 * 1024), "-I", "1000000", str(tmp_path)],
    ]
    again = team_dirs.ensure_project_quota(str(tmp_path), team, quota, False, lfs.run, lfs.which)
    assert not again["changed"] and len(lfs.writes) == 2


def test_acl_entries_follow_the_mode_and_are_set_once(tmp_path):
    acls = {}
    writes = []

    def which(name):
        return "/usr/bin/" + name

    def run(argv):
        if argv[0].endswith("getfacl"):
            return 0, "user::rwx\ngroup::rwx\nother::---\n" + "".join(e + "\n" for e in acls.get(argv[-1], [])), ""
        writes.append(argv)
        acls.setdefault(argv[-1], []).extend(argv[3].split(","))
        return 0, "", ""

    assert "default:group:%d:r-x" % GID in team_dirs.desired_acl(GID, "2750")
    first = team_dirs.ensure_acl(str(tmp_path), GID, "2770", False, run, which)
    assert first["changed"] and writes[0][:3] == ["/usr/bin/setfacl", "-P", "-m"]
    assert "default:group:%d:rwx" % GID in writes[0][3].split(",")
    second = team_dirs.ensure_acl(str(tmp_path), GID, "2770", False, run, which)
    assert not second["changed"] and len(writes) == 1


def test_a_missing_stand_in_root_is_predicted_in_check_mode_and_made_by_a_real_run(tmp_path):
    root = tmp_path / "not-yet"
    changed, before, after, unused = team_dirs.ensure_present(str(root), "vision", UID, GID, "2770", MEMBERS, True, require_mount=False)
    assert changed and set(before.values()) == {None} and after[str(root / "vision")]["mode"] == "2770"
    assert not root.exists()
    with pytest.raises(InputError, match="not a directory"):
        team_dirs.ensure_present(str(root), "vision", UID, GID, "2770", MEMBERS, True, require_mount=True)
    with pytest.raises(InputError, match="not a directory"):
        team_dirs.ensure_present(str(root), "vision", UID, GID, "2770", MEMBERS, False, require_mount=True)
    assert not root.exists()
    changed, unused_1, unused_2, details = team_dirs.ensure_absent(str(root), "vision", "archive", False, require_mount=False)
    assert not changed and details["action"] == "none"
    with pytest.raises(InputError, match="confirm_delete"):
        team_dirs.ensure_absent(str(root), "vision", "delete", False, require_mount=False)
    # Without a mount to require, the run makes the directory that stands in for the file system, as check mode said.
    changed, unused_1, made, unused_2 = team_dirs.ensure_present(str(root), "vision", UID, GID, "2770", MEMBERS, False, require_mount=False)
    assert changed and made == after and oct(root.stat().st_mode & 0o7777) == "0o755"
