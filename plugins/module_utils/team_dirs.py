# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""A team's directories on the shared FSx for Lustre (or OpenZFS) file system.

Layout under the mount point ``root`` (the file system's ``/``), the one the
SageMaker workspace helper points user profiles at:

- ``<root>/<team>``: the team directory, ``uid:gid``, ``mode`` (default ``2770``:
  setgid, so what members create belongs to the team group);
- ``<root>/<team>/home``: ``uid:gid`` ``2750``, members can traverse it, only the owner adds to it;
- ``<root>/<team>/home/<member>``: ``<member uid>:gid`` ``0700``;
- ``<root>/<team>/s3-export`` (``s3_link`` only): ``uid:gid``, the team directory's mode: the one directory the FSx data
  repository association exports to ``s3://<bucket>/<team>/`` (``data_repository``), so the homes are never exported.
  With it the team directory also takes the sticky bit (``1000``): without it any member could rename ``home`` to
  ``s3-export`` in the group-writable team directory (a rename in the same directory needs write permission on that
  directory only, rename(2)) and have every member's home exported where the whole team reads it;
- ``<root>/.archive/<team>-<UTC timestamp>``: where ``on_remove=archive`` moves a team (``root:root 0700``).
- ``<root>/.hyperpod-tenancy/<team>``: the ownership mark, a file only the storage layer's user can write
  (the directory is ``0755``, the mark ``0644``), naming the team and the team directory's inode. A team
  directory that exists without its mark (``/fsx/datasets`` made by someone else) or with another's is refused,
  unless the team file adopts an unmarked one (``adopt``); offboarding archives or deletes only a marked one.

Safety: every path is walked one component at a time from an open descriptor of
``root`` with ``O_NOFOLLOW``; a symbolic link anywhere on a managed path is refused
before anything is written, and ownership and modes are changed through the
descriptor (``fchown``/``fchmod``), so a link swapped in later is never followed.
Only the managed directories themselves are changed, never their contents.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import errno
import json
import os
import re
import stat

from ansible_collections.hyperpod.tenancy.plugins.module_utils import data_repository, naming
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import STATE, TEAM_TAGS, options, team_section, wait
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError, InputError

HOME = "home"
# storage.s3_link's export directory (naming.FSX_EXPORT_DIR); beside HOME, not under it, so no member's home is named so.
EXPORT_DIR = naming.FSX_EXPORT_DIR
STICKY = 0o1000
ARCHIVE = ".archive"
MARKS = ".hyperpod-tenancy"
MARKS_MODE = 0o755
MARK_MODE = 0o644
HOME_PARENT_MODE = 0o2750
HOME_MODE = 0o700
ARCHIVE_MODE = 0o700
DEFAULT_MODE = "2770"
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_MODE = re.compile(r"0?[0-7]{3,4}")


class TeamDirError(HyperPodError):
    """A file system operation failed part-way."""


def parse_mode(mode):
    """``'2770'`` (or ``'02770'``) as an int; anything else is an InputError."""
    text = str(mode)
    if not _MODE.fullmatch(text):
        raise InputError(message="mode %r must be an octal mode given as a string, such as '2770'" % (mode,))
    value = int(text, 8)
    if value & 0o002:
        # Any user of the file system could then write in the team's directory: that is not isolation.
        raise InputError(message="mode %r makes the team directory world-writable (others may write); use a mode such as '2770'" % (mode,))
    return value


def format_mode(mode):
    return "%04o" % mode


def check_team(team):
    """Refuse a team name that is not a single, plain path component under root."""
    if not isinstance(team, str) or not team or team in (".", "..") or "/" in team or "\0" in team or os.path.isabs(team):
        raise InputError(message="team %r escapes root: a team name is a single path component, not '.', '..' or a path" % (team,))
    problems = naming.name_problems(team)
    if problems:
        raise InputError(message="team %r %s" % (team, "; ".join(problems)))


def check_members(members):
    names = set()
    for member in members:
        name = member.get("name")
        if not isinstance(name, str) or not name or name in (".", "..") or "/" in name or "\0" in name or name.startswith("."):
            raise InputError(message="member name %r cannot be a home directory name: it must be a single path component not starting with '.'" % (name,))
        if name in names:
            raise InputError(message="member %r is listed twice" % name)
        names.add(name)
        uid = member.get("uid")
        if isinstance(uid, bool) or not isinstance(uid, int) or uid < 0:
            raise InputError(message="member %r needs a numeric uid for its home directory" % name)


def _make_stand_in_root(root):
    """The directory that stands in for the file system when no mount is required (tests, demos), ``0755``.

    Each team's run makes it when it is missing, so the teams converging at once may race to it: the first one makes it.
    """
    try:
        os.makedirs(root)
    except FileExistsError:
        return
    os.chmod(root, 0o755)


def check_root(root, require_mount):
    if not os.path.isabs(root):
        raise InputError(message="root %r must be an absolute path (the file system's mount point)" % root)
    if os.path.islink(root):
        raise InputError(message="root %r is a symbolic link; give the mount point itself" % root)
    if not os.path.isdir(root):
        raise InputError(message="root %r is not a directory" % root)
    if require_mount and not os.path.ismount(root):
        raise InputError(message="root %r is not a mount point; mount the file system there, or set require_mount=false" % root)


class Root(object):
    """An open descriptor of the mount point; paths below it are walked without following links."""

    def __init__(self, path):
        self.path = path
        self.fd = os.open(path, _OPEN_DIR)

    def close(self):
        os.close(self.fd)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def display(self, parts):
        return os.path.join(self.path, *parts)

    def open_dir(self, parts):
        """A descriptor of ``parts`` (a tuple of components), or None when a component is missing.

        A component that is a symbolic link, or not a directory, is an InputError.
        """
        fd = os.dup(self.fd)
        try:
            for index, part in enumerate(parts):
                try:
                    info = os.stat(part, dir_fd=fd, follow_symlinks=False)
                except OSError as exc:
                    if exc.errno == errno.ENOENT:
                        os.close(fd)
                        return None
                    raise
                where = self.display(parts[: index + 1])
                if stat.S_ISLNK(info.st_mode):
                    raise InputError(message="%s is a symbolic link; refusing to manage a path through a link" % where)
                if not stat.S_ISDIR(info.st_mode):
                    raise InputError(message="%s exists and is not a directory" % where)
                try:
                    child = os.open(part, _OPEN_DIR, dir_fd=fd)
                except OSError as exc:
                    if exc.errno == errno.ELOOP:
                        raise InputError(message="%s is a symbolic link; refusing to manage a path through a link" % where)
                    raise
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd

    def read(self, parts):
        """``{"uid", "gid", "mode"}`` of the directory ``parts``, or None when it does not exist."""
        fd = self.open_dir(parts)
        if fd is None:
            return None
        try:
            info = os.fstat(fd)
        finally:
            os.close(fd)
        return {"uid": info.st_uid, "gid": info.st_gid, "mode": format_mode(stat.S_IMODE(info.st_mode))}

    def _mkdir(self, parts, refusal=None):
        """Make the directory ``parts`` (its parent must exist, walked without links): one already there is kept, or, with
        ``refusal`` (an InputError message), refused."""
        parent = self.open_dir(parts[:-1])
        if parent is None:
            raise TeamDirError(message="%s does not exist" % self.display(parts[:-1]))
        try:
            try:
                os.mkdir(parts[-1], 0o700, dir_fd=parent)
            except OSError as exc:
                if exc.errno != errno.EEXIST:
                    raise
                if refusal is not None:
                    raise InputError(message=refusal)
        finally:
            os.close(parent)

    def ensure(self, parts, uid, gid, mode):
        """Create ``parts`` if missing (its parent must exist), then set owner, group and mode through its descriptor."""
        self._mkdir(parts)
        fd = self.open_dir(parts)
        try:
            os.fchown(fd, uid, gid)
            os.fchmod(fd, mode)
        finally:
            os.close(fd)

    def lstat(self, parts):
        """``os.lstat`` of ``parts`` (whatever it is, a link included), its parents walked without links; None when missing."""
        parent = self.open_dir(parts[:-1])
        if parent is None:
            return None
        try:
            return os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                return None
            raise
        finally:
            os.close(parent)

    def create(self, parts, uid, gid, mode, refusal):
        """Make ``parts``, which must not exist: ``refusal`` (an InputError message) when it does, even made a moment ago."""
        self._mkdir(parts, refusal)
        self.ensure(parts, uid, gid, mode)

    def inode(self, parts):
        fd = self.open_dir(parts)
        if fd is None:
            return None
        try:
            return os.fstat(fd).st_ino
        finally:
            os.close(fd)

    def read_mark(self, team):
        """The team's ownership mark (``{"managed_by", "team", "inode"}``), ``{}`` when unreadable, None when missing."""
        marks = self.open_dir((MARKS,))
        if marks is None:
            return None
        try:
            fd = os.open(team, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), dir_fd=marks)
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                return None
            if exc.errno == errno.ELOOP:
                return {}
            raise
        finally:
            os.close(marks)
        try:
            with os.fdopen(fd, "r") as mark:
                value = json.load(mark)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def write_mark(self, team):
        """Mark ``<root>/<team>`` as made for ``team``: the mark names the directory's inode."""
        if self.read((MARKS,)) is None:
            self.ensure((MARKS,), os.geteuid(), os.getegid(), MARKS_MODE)
        marks = self.open_dir((MARKS,))
        try:
            temporary = ".%s.tmp" % team
            try:
                os.unlink(temporary, dir_fd=marks)
            except OSError as exc:
                if exc.errno != errno.ENOENT:
                    raise
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, MARK_MODE, dir_fd=marks)
            with os.fdopen(fd, "w") as mark:
                json.dump({"managed_by": naming.MANAGED_BY_TAG[1], "team": team, "inode": self.inode((team,))}, mark)
            os.rename(temporary, team, src_dir_fd=marks, dst_dir_fd=marks)
        finally:
            os.close(marks)

    def remove_mark(self, team):
        marks = self.open_dir((MARKS,))
        if marks is None:
            return
        try:
            os.unlink(team, dir_fd=marks)
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                raise
        finally:
            os.close(marks)

    def ownership_problem(self, team, current, adopt=False):
        """Why the existing ``<root>/<team>`` (``current``: its owner and mode) is not the team's; None when it is.

        Adopting takes over a directory without a mark; one whose mark names another team or another
        directory (a directory swapped in under the team's name) is refused even then.
        """
        mark = self.read_mark(team)
        path, mark_path = self.display((team,)), self.display((MARKS, team))
        if mark and mark.get("team") == team and mark.get("inode") == self.inode((team,)):
            return None
        if mark is None and adopt:
            return None
        if mark is None:
            why = "it has no ownership mark %s" % mark_path
        else:
            why = "its ownership mark %s names team %s, inode %s" % (mark_path, mark.get("team"), mark.get("inode"))
        return (
            "%s exists, owned by uid %s gid %s mode %s, and was not made by hyperpod.tenancy for team %s (%s): "
            "refusing to change or delete it. To take over a directory without a mark, the platform adds directories to "
            "hyperpod_adopt.%s in the cluster file" % (path, current["uid"], current["gid"], current["mode"], team, why, team)
        )

    def list_names(self, parts):
        fd = self.open_dir(parts)
        if fd is None:
            return []
        try:
            return sorted(os.listdir(fd))
        finally:
            os.close(fd)


def desired_directories(team, uid, gid, mode, members, export=False):
    """``[(parts, {"uid", "gid", "mode"})]`` in creation order; ``export``: with the S3 link's export directory (and the team
    directory sticky, so that no member renames ``home`` or ``s3-export``)."""
    wanted = [
        ((team,), {"uid": uid, "gid": gid, "mode": format_mode(mode | STICKY if export else mode)}),
        ((team, HOME), {"uid": uid, "gid": gid, "mode": format_mode(HOME_PARENT_MODE)}),
    ]
    if export:
        wanted.append(((team, EXPORT_DIR), {"uid": uid, "gid": gid, "mode": format_mode(mode & ~STICKY)}))
    for member in sorted(members, key=lambda m: m["name"]):
        wanted.append(((team, HOME, member["name"]), {"uid": member["uid"], "gid": gid, "mode": format_mode(HOME_MODE)}))
    return wanted


def export_refusal(root_path, team):
    """Why an ``s3-export`` that exists before the team's association does is never linked."""
    path = os.path.join(root_path, team, EXPORT_DIR)
    return (
        "%s already exists, and team %s's data repository association of it does not: refusing to link it. The export directory is "
        "made by the run that first links it, never taken over: a member of the team can make it, or rename home (every teammate's "
        "0700 home) to it, in the team directory before it is sticky. The platform inspects %s, moves or removes it, and runs again"
        % (path, team, path)
    )


def _export_warning(root_path, team, info, home_missing):
    path = os.path.join(root_path, team, EXPORT_DIR)
    kind = "a directory" if stat.S_ISDIR(info.st_mode) else "a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a directory"
    warning = ("%s exists (%s, owned by uid %s gid %s) though team %s has no S3 link the collection made: it was left as it is, and is "
               "never linked. The platform inspects it (a member may have made it, or renamed home to it)" % (
                   path, kind, info.st_uid, info.st_gid, team))
    if home_missing:
        warning += "; %s is missing and was made again, empty: the members' homes may be under %s" % (os.path.join(root_path, team, HOME), path)
    return warning


def ensure_present(root_path, team, uid, gid, mode, members, check_mode, require_mount=True, adopt=False, export=False, linked=False):
    """Create or correct the team's directories; ``(changed, before, after, details)``.

    ``before``/``after`` map each managed path to its ``{uid, gid, mode}`` (None: absent).
    ``details`` holds ``path``, ``directories`` (what now exists), ``unlisted_homes``:
    home directories of people no longer in ``members``, which are left untouched, and ``warnings``.

    ``export`` (the S3 link) with ``linked`` False (the team's association of ``s3-export`` does not exist yet): an existing
    ``s3-export``, of any kind, is refused before any write (``export_refusal``); the team directory is made sticky first,
    then ``s3-export`` made (a mkdir that finds it is the same refusal). Without ``export`` an ``s3-export`` stays managed
    only as the link left it (a directory of ``uid``/``gid`` in the sticky team directory); any other is warned about.
    """
    check_team(team)
    check_members(members)
    mode = parse_mode(mode)
    wanted = desired_directories(team, uid, gid, mode, members, export)
    stand_in_missing = not require_mount and os.path.isabs(root_path) and not os.path.lexists(root_path)
    if stand_in_missing and check_mode:
        # A stand-in directory (tests, demos) that the run makes first: everything is new.
        after = dict((os.path.join(root_path, *parts), desired) for parts, desired in wanted)
        details = {"path": os.path.join(root_path, team), "directories": [dict(path=path, **value) for path, value in sorted(after.items())],
                   "unlisted_homes": []}
        return True, dict((path, None) for path in after), after, details
    if stand_in_missing:
        _make_stand_in_root(root_path)
    check_root(root_path, require_mount)
    warnings = []
    with Root(root_path) as root:
        current = root.read((team,))
        if current is not None:
            problem = root.ownership_problem(team, current, adopt)
            if problem:
                raise InputError(message=problem)
        team_info = root.lstat((team,))
        exported = root.lstat((team, EXPORT_DIR)) if team_info is not None and stat.S_ISDIR(team_info.st_mode) else None
        sticky = team_info is not None and bool(team_info.st_mode & STICKY)
        if export and not linked and exported is not None:
            # Never adopted (H1): it may hold what a member put there, home with every teammate's home included.
            raise InputError(message=export_refusal(root_path, team))
        if not export and exported is not None:
            if stat.S_ISDIR(exported.st_mode) and sticky and (exported.st_uid, exported.st_gid) == (uid, gid):
                # Made for an S3 link: without s3_link the module leaves any association alone, so the directory may still be
                # exported; it stays managed and the team directory sticky.
                wanted = desired_directories(team, uid, gid, mode, members, True)
            else:
                # A member's doing, or anything else: warned about, never managed, never a reason to fail the run (a member
                # would otherwise stop their team's runs); the team directory keeps a sticky bit it has.
                home_info = root.lstat((team, HOME))
                warnings.append(_export_warning(root_path, team, exported, home_info is None))
                if sticky:
                    wanted = [entry for entry in desired_directories(team, uid, gid, mode, members, True) if entry[0] != (team, EXPORT_DIR)]
        # Read everything first: a link anywhere refuses the run before any write.
        before = dict((root.display(parts), root.read(parts)) for parts, dummy in wanted)
        mark = root.read_mark(team)
        unmarked = current is None or not mark or mark.get("inode") != root.inode((team,))
        after = dict((root.display(parts), desired) for parts, desired in wanted)
        listed = set(m["name"] for m in members)
        unlisted = [n for n in root.list_names((team, HOME)) if n not in listed]
        changed = before != after or unmarked
        if changed and not check_mode:
            for parts, desired in wanted:
                if export and not linked and parts == (team, EXPORT_DIR):
                    # After the team directory is sticky (the first entry), so no member renames anything into its place
                    # from here on; whatever is there now is refused.
                    if root.lstat(parts) is not None:
                        raise InputError(message=export_refusal(root_path, team))
                    root.create(parts, desired["uid"], desired["gid"], int(desired["mode"], 8), export_refusal(root_path, team))
                elif before[root.display(parts)] != desired:
                    root.ensure(parts, desired["uid"], desired["gid"], int(desired["mode"], 8))
            if unmarked:
                root.write_mark(team)
            after = dict((root.display(parts), root.read(parts)) for parts, dummy in wanted)
    details = {
        "path": os.path.join(root_path, team),
        "directories": [dict(path=path, **value) for path, value in sorted(after.items())],
        "unlisted_homes": [os.path.join(root_path, team, HOME, name) for name in unlisted],
        "ownership_mark": os.path.join(root_path, MARKS, team),
        "warnings": warnings,
    }
    return changed, before, after, details


def utc_stamp(now=None):
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return now.strftime("%Y%m%dT%H%M%SZ")


def check_absent(root_path, team, on_remove, confirm_delete=None, require_mount=True):
    """What ``ensure_absent`` refuses, checked without touching anything (callers run it before other writes)."""
    check_team(team)
    if on_remove not in ("keep", "archive", "delete"):
        raise InputError(message="on_remove must be keep, archive or delete, not %r" % (on_remove,))
    if on_remove == "delete" and confirm_delete != team:
        raise InputError(message="on_remove=delete removes %s and everything in it: set confirm_delete to the team name (%r) to confirm" % (
            os.path.join(root_path, team), team))
    if not require_mount and os.path.isabs(root_path) and not os.path.lexists(root_path):
        return
    check_root(root_path, require_mount)
    if on_remove != "keep":
        with Root(root_path) as root:
            current = root.read((team,))  # a link planted as the team path is refused here
            problem = root.ownership_problem(team, current) if current else None
            if problem:
                raise InputError(message=problem)


def ensure_absent(root_path, team, on_remove, check_mode, confirm_delete=None, require_mount=True, now=None):
    """Offboard the team directory: ``keep`` (report), ``archive`` (atomic rename) or ``delete`` (confirmed).

    Returns ``(changed, before, after, details)``; ``details`` has ``path``, ``action``
    (``none``, ``kept``, ``archived``, ``deleted``) and ``archive_path``.
    """
    path = os.path.join(root_path, team)
    details = {"path": path, "action": "none", "archive_path": None}
    check_absent(root_path, team, on_remove, confirm_delete, require_mount)
    if not require_mount and not os.path.lexists(root_path):
        return False, {path: None}, {path: None}, details  # a stand-in directory that was never made
    with Root(root_path) as root:
        current = root.read((team,))
        before = {path: current}
        if current is None:
            return False, before, before, details
        if on_remove == "keep":
            details["action"] = "kept"
            return False, before, before, details
        problem = root.ownership_problem(team, current)
        if problem:
            raise InputError(message=problem)
        if on_remove == "archive":
            name = "%s-%s" % (team, utc_stamp(now))
            archive_path = os.path.join(root_path, ARCHIVE, name)
            details.update(action="archived", archive_path=archive_path)
            after = {path: None, archive_path: current}
            if check_mode:
                return True, before, after, details
            if root.read((ARCHIVE,)) is None:
                root.ensure((ARCHIVE,), 0, 0, ARCHIVE_MODE)
            if root.read((ARCHIVE, name)) is not None:
                raise TeamDirError(message="%s already exists; run again in a second" % archive_path)
            archive_fd = root.open_dir((ARCHIVE,))
            try:
                # Same file system, so the move is a single atomic rename; a link at <team> was refused by read().
                os.rename(team, name, src_dir_fd=root.fd, dst_dir_fd=archive_fd)
            finally:
                os.close(archive_fd)
            root.remove_mark(team)
            return True, before, {path: None, archive_path: root.read((ARCHIVE, name))}, details
        details["action"] = "deleted"
        after = {path: None}
        if check_mode:
            return True, before, after, details
        remove_tree(root.fd, team)
        root.remove_mark(team)
        return True, before, {path: root.read((team,))}, details


def remove_tree(parent_fd, name):
    """Delete ``name`` under ``parent_fd`` and everything in it, walking by descriptor.

    Links are unlinked, never followed (what ``shutil.rmtree(dir_fd=...)`` does on
    Python 3.11+; written out so older managed-node Pythons behave the same).
    """
    fd = os.open(name, _OPEN_DIR, dir_fd=parent_fd)
    try:
        for entry in list(os.scandir(fd)):
            if entry.is_dir(follow_symlinks=False):
                remove_tree(fd, entry.name)
            else:
                os.unlink(entry.name, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent_fd)


def _unsupported(tool, what):
    return {"supported": False, "changed": False, "reason": "%s not found on this host: %s cannot be managed here" % (tool, what)}


def _perms(bits):
    return "".join(flag if bits & mask else "-" for flag, mask in (("r", 4), ("w", 2), ("x", 1)))


def desired_acl(gid, mode):
    """Access and default ACL entries giving the team group, and what members create, the mode's group permissions."""
    group = _perms((parse_mode(mode) >> 3) & 7)
    return [
        "group:%d:%s" % (gid, group),
        "default:user::rwx",
        "default:group::%s" % group,
        "default:group:%d:%s" % (gid, group),
        "default:mask::%s" % group,
        "default:other::---",
    ]


def ensure_acl(path, gid, mode, check_mode, run, which):
    """POSIX ACLs on the team directory with getfacl/setfacl; unsupported (reported) when they are missing.

    ``run(argv) -> (rc, out, err)`` and ``which(name) -> path or None`` come from the module.
    The path was walked without links just before; setfacl itself is given ``-P``.
    """
    getfacl, setfacl = which("getfacl"), which("setfacl")
    if not (getfacl and setfacl):
        return _unsupported("getfacl/setfacl", "POSIX default ACLs")
    wanted = desired_acl(gid, mode)
    if check_mode and not os.path.isdir(path):
        return {"supported": True, "changed": True, "entries": wanted}
    rc, out, err = run([getfacl, "--omit-header", "--numeric", "--absolute-names", "--physical", path])
    if rc != 0:
        raise TeamDirError(message="getfacl %s failed: %s" % (path, err.strip()))
    current = set(line.split("#")[0].strip() for line in out.splitlines() if line.strip())
    missing = [entry for entry in wanted if entry not in current]
    result = {"supported": True, "changed": bool(missing), "entries": wanted}
    if missing and not check_mode:
        rc, out, err = run([setfacl, "-P", "-m", ",".join(wanted), path])
        if rc != 0:
            raise TeamDirError(message="setfacl %s failed: %s" % (path, err.strip()))
    return result


def _quota_fields(out, root_path):
    """The numbers after the file system name in ``lfs quota`` output (they may wrap to the next line)."""
    tokens = out.split()
    for index, token in enumerate(tokens):
        if token == root_path or token == root_path.rstrip("/"):
            return [t.rstrip("*") for t in tokens[index + 1:]]
    return []


def read_quota(root_path, path, project_id, run, lfs):
    rc, out, err = run([lfs, "project", "-d", path])
    if rc != 0:
        raise TeamDirError(message="lfs project -d %s failed: %s" % (path, err.strip()))
    fields = out.split()
    current = {"project_id": int(fields[0]) if fields and fields[0].isdigit() else 0, "inherit": len(fields) > 1 and fields[1] == "P"}
    rc, out, err = run([lfs, "quota", "-p", str(project_id), root_path])
    if rc != 0:
        raise TeamDirError(message="lfs quota -p %s failed: %s" % (project_id, err.strip()))
    numbers = _quota_fields(out, root_path)
    if len(numbers) >= 7:
        current["block_hard_limit_kib"] = int(numbers[2]) if numbers[2].isdigit() else 0
        current["inode_hard_limit"] = int(numbers[6]) if numbers[6].isdigit() else 0
    return current


def ensure_project_quota(root_path, path, quota, check_mode, run, which):
    """A Lustre project quota on the team directory (``lfs project``/``lfs setquota -p``).

    ``quota``: ``project_id`` and optional ``block_hard_limit_gib``, ``inode_hard_limit``.
    Without ``lfs`` (OpenZFS, or a host without Lustre client tools) the result says unsupported.
    """
    lfs = which("lfs")
    if not lfs:
        return _unsupported("lfs", "Lustre project quotas")
    project_id = quota["project_id"]
    wanted = {"project_id": project_id, "inherit": True}
    limits = {}
    if quota.get("block_hard_limit_gib") is not None:
        limits["block_hard_limit_kib"] = quota["block_hard_limit_gib"] * 1024 * 1024
    if quota.get("inode_hard_limit") is not None:
        limits["inode_hard_limit"] = quota["inode_hard_limit"]
    wanted.update(limits)
    if check_mode and not os.path.isdir(path):
        return {"supported": True, "changed": True, "before": None, "after": wanted}
    current = read_quota(root_path, path, project_id, run, lfs)
    project_changed = (current["project_id"], current["inherit"]) != (project_id, True)
    limits_changed = any(current.get(k) != v for k, v in limits.items())
    result = {"supported": True, "changed": project_changed or limits_changed, "before": current, "after": dict(current, **wanted)}
    if check_mode:
        return result
    if project_changed:
        rc, out, err = run([lfs, "project", "-p", str(project_id), "-s", "-r", path])
        if rc != 0:
            raise TeamDirError(message="lfs project -p %s %s failed: %s" % (project_id, path, err.strip()))
    if limits_changed:
        argv = [lfs, "setquota", "-p", str(project_id)]
        if "block_hard_limit_kib" in limits:
            argv += ["-B", str(limits["block_hard_limit_kib"])]
        if "inode_hard_limit" in limits:
            argv += ["-I", str(limits["inode_hard_limit"])]
        rc, out, err = run(argv + [root_path])
        if rc != 0:
            raise TeamDirError(message="lfs setquota -p %s failed: %s" % (project_id, err.strip()))
    return result


# The keyword arguments of fsx_team_dir's AnsibleAWSModule (and of team_resources' directories).
MODULE_OPTIONS = options(
    dict(
        team=dict(type="str", required=True),
        root=dict(type="path", required=True),
        require_mount=dict(type="bool", default=True),
        uid=dict(type="int", default=0),
        gid=dict(type="int"),
        mode=dict(type="str", default="2770"),
        members=dict(
            type="list", elements="dict", default=[],
            options=dict(name=dict(type="str", required=True), uid=dict(type="int", required=True)),
        ),
        acl=dict(type="bool", default=False),
        project_quota=dict(
            type="dict",
            options=dict(project_id=dict(type="int", required=True), block_hard_limit_gib=dict(type="int"), inode_hard_limit=dict(type="int")),
        ),
        on_remove=dict(type="str", choices=["keep", "archive", "delete"], default="keep"),
        confirm_delete=dict(type="str"),
        adopt=dict(type="bool", default=False),
        s3_link=dict(type="bool", default=False),
        file_system_id=dict(type="str"),
        bucket=dict(type="str"),
        tags=dict(type="dict"),
    ),
    STATE, TEAM_TAGS, wait(600),
    required_if=[("state", "present", ["gid"]), ("s3_link", True, ["file_system_id", "bucket"])],
)
# The team file's storage section (docs/team-file.md). on_remove is for offboarding, which the storage role runs (its S3
# prefix follows it there: delete deletes it, keep and archive keep it).
TEAM_FILE_SECTION = team_section("storage", MODULE_OPTIONS, ("gid", "mode", "on_remove", "s3_link"), offboarding=("on_remove",))


def _present(context, p, client):
    if client is not None:
        # Fail before writing anything: a link to another S3 path cannot be corrected in place; an association of /<team>
        # exports the homes; the file system may have no association left (its 8 counted, the platform's included).
        check_team(p["team"])
        linked = data_repository.check_association(client, p["file_system_id"], p["team"], p["bucket"]) is not None
    else:
        linked = False
    changed, before, after, result = ensure_present(
        p["root"], p["team"], p["uid"], p["gid"], p["mode"], p["members"], context.check_mode, require_mount=p["require_mount"],
        adopt=p["adopt"], export=p["s3_link"], linked=linked,
    )
    for warning in result.pop("warnings", []):
        context.warn(warning)
    diff_before, diff_after = {"directories": before}, {"directories": after}
    for name in result["unlisted_homes"]:
        context.warn("%s belongs to no listed member; it was left as it is" % name)
    if p["acl"]:
        result["acl"] = ensure_acl(result["path"], p["gid"], p["mode"], context.check_mode, context.run_command, context.get_bin_path)
    if p["project_quota"]:
        result["project_quota"] = ensure_project_quota(
            p["root"], result["path"], p["project_quota"], context.check_mode, context.run_command, context.get_bin_path
        )
    for key in ("acl", "project_quota"):
        if key in result:
            changed = changed or result[key]["changed"]
            if not result[key]["supported"]:
                context.warn("%s unsupported: %s" % (key, result[key]["reason"]))
    if client is not None:
        tags = naming.team_tags(p["team"], p["cost_center"], p["tag_keys"], p["tags"])
        link_changed, link_before, link_after = data_repository.ensure_association_present(
            client, p["file_system_id"], p["team"], p["bucket"], tags, context.check_mode, p["wait"], p["wait_timeout"],
        )
        changed = changed or link_changed
        diff_before["association"], diff_after["association"] = link_before, link_after
        result["association"] = link_after
    return changed, diff_before, diff_after, result


def _absent(context, p, client):
    diff_before, diff_after, result, changed = {}, {}, {}, False
    # Refuse bad input before anything changes, the association included.
    check_absent(p["root"], p["team"], p["on_remove"], p["confirm_delete"], p["require_mount"])
    if client is not None:
        # An association of the whole team directory (made before the export directory) is never deleted for the caller; while
        # it exists the directory is neither archived nor deleted (it would link a path that is gone, or another team's of
        # that name later). Refused before any write, the export directory's association included.
        legacy = data_repository.find_association(client, p["file_system_id"], p["team"], path=data_repository.legacy_path(p["team"]))
        if legacy is not None:
            result["legacy_association"] = data_repository.describe(legacy)
            what = "data repository association %s of file system %s links %s (team %s's whole directory) to %s" % (
                legacy.get("AssociationId"), p["file_system_id"], data_repository.legacy_path(p["team"]), p["team"], legacy.get("DataRepositoryPath"))
            if p["on_remove"] != "keep" and os.path.lexists(os.path.join(p["root"], p["team"])):
                raise InputError(message="%s: refusing to %s %s while it exists. Delete association %s (with DeleteDataInFileSystem false) "
                                 "and run again: the collection does not delete it for you" % (
                                     what, p["on_remove"], os.path.join(p["root"], p["team"]), legacy.get("AssociationId")))
            context.warn("%s, and is left as it is; delete it when the team's files no longer need exporting" % what)
        # The collection's association of the export directory goes whatever the entry's s3_link says (a link turned off, or
        # never allowed, leaves it behind), and first: nothing is exported from a directory being archived or deleted.
        changed, link_before, link_after = data_repository.ensure_association_absent(
            client, p["file_system_id"], p["team"], context.check_mode, p["wait"], p["wait_timeout"],
        )
        diff_before["association"], diff_after["association"] = link_before, link_after
        result["association"] = link_after
    dir_changed, before, after, details = ensure_absent(
        p["root"], p["team"], p["on_remove"], context.check_mode, confirm_delete=p["confirm_delete"], require_mount=p["require_mount"],
    )
    result.update(details)
    diff_before["directories"], diff_after["directories"] = before, after
    if details["action"] == "kept":
        context.warn("%s was kept (on_remove=keep); archive or delete it when the team's data is no longer needed" % details["path"])
    return changed or dir_changed, diff_before, diff_after, result


def check(params):
    """What can be refused without touching the file system or FSx (team, members, mode); raises ``InputError``."""
    check_team(params["team"])
    if params["state"] == "present":
        check_members(params["members"])
        parse_mode(params["mode"])


def converge(context, params):
    """The result of fsx_team_dir: the team's directories (and S3 link) after the run."""
    # Offboarding looks for the team's associations whenever the file system is known, whatever s3_link says.
    offboarding = params["state"] == "absent" and bool(params["file_system_id"])
    client = context.client("fsx") if params["s3_link"] or offboarding else None
    handler = _present if params["state"] == "present" else _absent
    changed, before, after, result = handler(context, params, client)
    return dict(changed=changed, diff={"before": before, "after": after}, **result)
