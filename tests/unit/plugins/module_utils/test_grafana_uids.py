"""The uids of the teams' Grafana folders and dashboards never meet, whatever the team names.

Threat model (a), case 11 of issue 36: a team lead chooses the team's name. Grafana keeps folders and dashboards in
one uid space, and the role derived the folder's uid from the namespace (``hyperpod-ns-<team>``) and a dashboard's from
the namespace and its name: the folder of a team named ``vision-gpu`` had the uid of team ``vision``'s GPU dashboard.
``dashboards.grafana_uid`` derives them so that no two (kind, team) pairs share a uid; the comment above it proves it,
these tests check the proof's steps on every valid name of up to three characters and on adversarial long ones.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import random
import re
import string
from pathlib import Path

import pytest
import yaml
from ansible_collections.hyperpod.tenancy.plugins.filter.grafana import team_grafana_uids as uids_filter
from ansible_collections.hyperpod.tenancy.plugins.module_utils import dashboards, naming

ROOT = Path(__file__).resolve().parents[4]
ROLE_DASHBOARDS = yaml.safe_load((ROOT / "roles/team_observability/defaults/main.yml").read_text())["team_observability_dashboards"]
KINDS = [dashboards.FOLDER, *ROLE_DASHBOARDS]
# Longer kinds too: a dashboard added to the role later, up to the longest kind UID_KIND allows.
MORE_KINDS = [*KINDS, "d", "gpu-gpu", "folder-gpu", "abcdefghijkl"]
ALPHABET = string.ascii_lowercase + string.digits
LONGEST = naming.TEAM_NAME_RULE[2]


def short_names():
    """Every valid team name of up to three characters (a DNS label: no leading or trailing hyphen)."""
    inner = ALPHABET + "-"
    for length in (1, 2, 3):
        for chars in itertools.product(*([ALPHABET] + [inner] * (length - 2) + [ALPHABET] * (length > 1))):
            yield "".join(chars)


def adversarial_names():
    """Names built from other names and the kinds: a team name that ends like another team's dashboard, names around
    the length where a uid stops fitting, the longest names, hyphens where a separator would be."""
    names = {"vision", "nlp", "research", "folder", "gpu", "hp", "hp-folder", "ns", "hyperpod-ns-vision", "vision--gpu"}
    for base, kind in itertools.product(("vision", "a", "hp", "hp-folder"), MORE_KINDS):
        names |= {"%s-%s" % (base, kind), "%s-%s-%s" % (base, kind, kind), "%s-%s" % (kind, base)}
    for length in range(20, LONGEST + 1):
        names |= {"a" * length, "a" * (length - 1) + "b", "vision-" + "g" * (length - 7), "x" + "-" * (length - 2) + "y"}
    rng = random.Random(36)
    for _draw in range(3000):
        length = rng.randint(1, LONGEST)
        middle = "".join(rng.choice(ALPHABET + "-") for unused_place in range(max(0, length - 2)))
        names.add((rng.choice(ALPHABET) + middle + rng.choice(ALPHABET))[:length] if length > 1 else rng.choice(ALPHABET))
    return sorted(n for n in names if re.fullmatch(naming.TEAM_NAME_RULE[1], n) and len(n) <= LONGEST)


def parse(uid):
    """(kind, team) of a readable uid, (kind, digest) of a hashed one: the decoding the proof describes."""
    if uid.startswith("hp-"):
        kind, team = uid[3:].split("_")
        return "readable", kind, team
    assert uid.startswith("hp_")
    kind, digest = uid[3:].split("_")
    return "hashed", kind, digest


def digest(team, length):
    return base64.b32encode(hashlib.sha256(team.encode()).digest()).decode().lower()[:length]


def assert_injective(names, kinds):
    seen, clashes = {}, []
    for name, kind in itertools.product(names, kinds):
        uid = dashboards.grafana_uid(kind, name)
        if seen.setdefault(uid, (kind, name)) != (kind, name):
            clashes.append("%s is the uid of %s and of %s" % (uid, seen[uid], (kind, name)))
    assert clashes == [], "%d uids shared, the first: %s" % (len(clashes), clashes[:9])
    for uid, (kind, name) in seen.items():
        assert re.fullmatch(dashboards.UID, uid) and len(uid) <= dashboards.UID_MAX, uid
        # The steps of the proof: the form and the kind are read back from the uid, and the rest is the team name
        # (readable) or the team name's digest, of at least 24 characters (hashed).
        form, parsed_kind, rest = parse(uid)
        assert parsed_kind == kind, uid
        if form == "readable":
            assert rest == name, uid
        else:
            assert len("hp-%s_%s" % (kind, name)) > dashboards.UID_MAX and len(rest) >= 24 and rest == digest(name, len(rest)), uid
    return seen


def test_the_former_rule_gave_vision_gpus_folder_the_uid_of_visions_gpu_dashboard():
    former = {team: dashboards.legacy_grafana_uids(team, ROLE_DASHBOARDS) for team in ("vision", "vision-gpu")}
    assert former["vision-gpu"]["folder"] == former["vision"]["dashboards"]["gpu"] == "hyperpod-ns-vision-gpu"
    new = {uid for team in ("vision", "vision-gpu") for uid in [dashboards.grafana_uid(k, team) for k in KINDS]}
    assert len(new) == 2 * len(KINDS)


def test_no_two_kinds_and_names_of_up_to_three_characters_share_a_uid():
    names = list(short_names())
    assert len(names) == 36 + 36 * 36 + 36 * 37 * 36
    assert len(assert_injective(names, MORE_KINDS)) == len(names) * len(MORE_KINDS)


def test_no_two_kinds_and_adversarial_or_long_names_share_a_uid():
    names = adversarial_names()
    seen = assert_injective(names, MORE_KINDS)
    # Both forms were exercised, for every kind.
    forms = {(parse(uid)[0], kind) for uid, (kind, _name) in seen.items()}
    assert forms == {(form, kind) for form in ("readable", "hashed") for kind in MORE_KINDS}


def test_the_digests_of_every_short_name_differ_in_their_first_24_characters():
    # A hashed uid differs from another of its kind by the digest alone: the digests of distinct names must differ. (For
    # short names the readable form applies; their digests are checked here directly, 49,284 names.)
    digests = {digest(name, 24) for name in short_names()}
    assert len(digests) == 36 + 36 * 36 + 36 * 37 * 36


def test_every_uid_is_lower_case_so_a_store_that_ignores_case_tells_them_apart_too():
    for name in adversarial_names():
        for kind in KINDS:
            uid = dashboards.grafana_uid(kind, name)
            assert uid == uid.lower(), uid


@pytest.mark.parametrize(
    "kind, team",
    [("folder", "Vision"), ("folder", "-vision"), ("folder", "vision_gpu"), ("folder", "a" * (LONGEST + 1)), ("folder", ""),
     ("gpu_x", "vision"), ("", "vision"), ("Gpu", "vision"), ("abcdefghijklm", "vision"), (None, "vision"), ("folder", None)],
)
def test_a_kind_or_a_team_name_outside_the_rules_is_refused(kind, team):
    with pytest.raises(ValueError):
        dashboards.grafana_uid(kind, team)


def test_a_dashboard_cannot_take_the_folders_kind():
    with pytest.raises(ValueError, match="folder"):
        dashboards.team_grafana_uids("vision", ["gpu", "folder"])


def test_the_roles_filter_gives_the_module_utils_uids_and_the_former_ones():
    uids = uids_filter("vision-gpu", ROLE_DASHBOARDS)
    assert uids["folder"] == "hp-folder_vision-gpu"
    assert uids["dashboards"] == {name: dashboards.grafana_uid(name, "vision-gpu") for name in ROLE_DASHBOARDS}
    assert uids["legacy"] == {"folder": "hyperpod-ns-vision-gpu", "dashboards": {n: "hyperpod-ns-vision-gpu-%s" % n for n in ROLE_DASHBOARDS}}


def test_the_role_takes_its_uids_from_the_filter():
    role_vars = (ROOT / "roles/team_observability/vars/main.yml").read_text()
    assert "hyperpod.tenancy.team_grafana_uids(team_observability_dashboards)" in role_vars
    for name in ROLE_DASHBOARDS:
        template = (ROOT / "roles/team_observability/templates/dashboards" / f"{name}.json.j2").read_text()
        assert '"uid": {{ __team_observability_dashboard_uids[%r] | tojson }}' % name in template
