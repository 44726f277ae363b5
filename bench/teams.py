"""Generated team files and the inventories that go with them, for benchmarks and tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from sandbox.seed import load_sample

ROOT = Path(__file__).resolve().parent.parent


def team_file(count: int) -> dict:
    """``count`` teams with one guaranteed p5 node each, and a cluster with room for them."""
    base = load_sample()
    cluster = dict(base["hyperpod_cluster"])
    cluster["instance_groups"] = [
        dict(cluster["instance_groups"][0], count=count + 2),
        dict(cluster["instance_groups"][1], count=count),
    ]
    teams = []
    for index in range(count):
        name = f"team{index:03d}"
        teams.append(
            {
                "name": name,
                "identity_center_group": f"Team{index:03d}",
                "members": [{"name": f"{name}-user{i}", "uid": 20000 + index * 10 + i} for i in range(2)],
                "cost_center": f"CC-{index:04d}",
                "quota": {
                    "resources": [{"instance_type": cluster["instance_groups"][0]["instance_type"], "count": 1}],
                    "sharing": "lend_and_borrow",
                    "borrow_limit": 50,
                    "fair_share_weight": 10,
                },
                "storage": {"gid": 30000 + index},
                "budget": {"monthly_usd": 1000 + index, "notify": ["finops@example.com"]},
            }
        )
    return dict(base, hyperpod_cluster=cluster, hyperpod_teams=teams, hyperpod_identity_center_quotas=identity_center_quotas(count))


def identity_center_quotas(count: int) -> dict:
    """What the instance of ``count`` teams allows: AWS's defaults, raised (as a platform team would have them raised) when too few."""
    return {"permission_sets": max(3500, count + 100), "provisioned_permission_sets_per_account": max(500, count + 100)}


def raise_account_quotas(client, settings: dict) -> None:
    """The sandbox's account with the quotas ``settings`` needs: the team file's Identity Center quotas, and room for three
    IAM roles a team (Identity Center's, Studio's, Pod Identity's) beyond the default 1000 roles when they need it."""
    granted = settings["hyperpod_identity_center_quotas"]
    client.configure(
        identity_center_permission_sets=granted["permission_sets"],
        identity_center_provisioned_per_account=granted["provisioned_permission_sets_per_account"],
        iam_roles_per_account=max(1000, 3 * len(settings["hyperpod_teams"]) + 200),
    )


class _Written(yaml.SafeDumper):
    """Each value written out where it stands: the team file takes no anchors or aliases."""

    def ignore_aliases(self, data):
        return True


def write_settings(settings: dict, team_file: Path, vars_file: Path) -> None:
    """``settings`` as a user keeps them: ``hyperpod_teams`` in the team file (read by the collection as data, never as
    variables: docs/isolation.md), the rest in ``vars_file``, the platform's variables."""
    team_file.parent.mkdir(parents=True, exist_ok=True)
    team_file.write_text(yaml.dump({"hyperpod_teams": settings.get("hyperpod_teams", [])}, Dumper=_Written, sort_keys=False))
    vars_file.write_text(yaml.safe_dump({key: value for key, value in settings.items() if key != "hyperpod_teams"}, sort_keys=False))


def sandbox_inventory(directory: Path, team_file: Path) -> Path:
    """A copy of inventories/sandbox whose team hosts come from ``team_file``."""
    inventory_dir = directory / "inventory"
    shutil.copytree(ROOT / "inventories" / "sandbox", inventory_dir)
    (inventory_dir / "hyperpod_teams.yml").write_text(yaml.safe_dump({"plugin": "hyperpod.tenancy.teams", "team_file": str(team_file)}))
    return inventory_dir
