"""docs/observability.md says every viewer can query every team's series; the roles must still configure exactly that.

Amazon Managed Grafana lets any user query a data source that has no data source permissions, and one
data source reads the whole AMP workspace. If the roles change (a data source per team, data source
permissions), this test fails until the section "What a viewer can query" says what they then allow.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
ROLES = [ROOT / "roles" / "observability", ROOT / "roles" / "team_observability"]


def tasks(node):
    """Every task dict in a task file, blocks included."""
    for task in node or []:
        yield task
        for key in ("block", "rescue", "always"):
            yield from tasks(task.get(key))


def role_tasks():
    for role in ROLES:
        for path in sorted((role / "tasks").glob("*.yml")):
            yield from tasks(yaml.safe_load(path.read_text()))


def section(title):
    text = (ROOT / "docs" / "observability.md").read_text()
    match = re.search(r"^## %s\n(.*?)(?=^## )" % re.escape(title), text, re.S | re.M)
    assert match, title
    return " ".join(match.group(1).split())


def test_one_shared_data_source_without_permissions_is_what_the_docs_describe():
    found = list(role_tasks())
    datasources = [t for t in found if "community.grafana.grafana_datasource" in t]
    assert len(datasources) == 1, "the roles make more than one data source: say per team what a viewer can query"
    datasource = datasources[0]["community.grafana.grafana_datasource"]
    assert datasource["uid"] == "{{ observability_datasource_uid }}" and datasource["ds_type"] == "prometheus"
    # No data source permissions: no API call to /api/datasources/.../permissions and no module for them.
    calls = [str(t.get("ansible.builtin.uri", {}).get("url", "")) for t in found]
    assert not [url for url in calls if "datasources" in url]
    assert not [t for t in found if any("datasource_permission" in key for key in t)]
    # Every team's dashboards query that one data source.
    templates = sorted((ROOT / "roles" / "team_observability" / "templates" / "dashboards").glob("*.json.j2"))
    assert templates
    for template in templates:
        text = template.read_text()
        assert '"uid": __team_observability_datasource_uid' in text, template.name
    defaults = yaml.safe_load((ROOT / "roles" / "team_observability" / "defaults" / "main.yml").read_text())
    assert defaults["team_observability_datasource_uid"].startswith("{{ hyperpod_grafana.datasource_uid")

    docs = section("What a viewer can query")
    assert "Every team's viewers can query every team's series." in docs
    assert "one Prometheus data source" in docs and "sets no data source permissions" in docs
    assert "POST /api/ds/query" in docs
