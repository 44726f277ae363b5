from ansible_collections.hyperpod.tenancy.plugins.filter.team import summary_table, team_names, team_tags


def test_summary_table_aligns_sorted_rows_under_a_header():
    lines = summary_table(
        [
            {"team": "vision", "namespace": "hyperpod-ns-vision", "quota": "4 x ml.p5.48xlarge", "budget_usd": "40000"},
            {"team": "nlp", "namespace": "hyperpod-ns-nlp", "quota": "3 x ml.p5.48xlarge"},
        ]
    )
    assert lines[0].split() == [
        "team", "namespace", "permission", "set", "domain", "profiles", "guaranteed", "quota", "service", "account", "role", "volume",
        "queue", "label", "priorities", "budget", "USD"]  # fmt: skip
    assert lines[1].startswith("nlp ") and lines[2].startswith("vision ")
    assert lines[1].index("hyperpod-ns-nlp") == lines[2].index("hyperpod-ns-vision") == lines[0].index("namespace")
    assert lines[1].endswith("-") and lines[2].endswith("40000")


def test_names_and_tags_come_from_the_naming_rules():
    assert team_names("vision", "hyperpod")["permission_set"] == "hyperpod-vision"
    assert team_names("vision", None)["namespace"] == "hyperpod-ns-vision"
    assert team_tags({"name": "vision", "cost_center": "CC-1", "tags": {"x": "y"}}, {"team": "owner"}) == {
        "x": "y",
        "owner": "vision",
        "cost-center": "CC-1",
        "managed-by": "hyperpod.tenancy",
    }
