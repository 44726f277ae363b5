"""No playbook hands a module an AWS credential as an argument.

Threat model: case 10 of issue 36, the AWS secret key reaches the job events. ansible-core 2.19 applies
``module_defaults`` to a task's arguments and hands every callback those arguments (AWX keeps them as the job's
events), so a credential in the connection every playbook gives its AWS modules would be in clear in every event.
The connection goes through ``hyperpod.tenancy.aws_connection``, which refuses one that carries a credential without
reading its value; the modules take credentials from the environment (AWX's credential) or a profile.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from ansible.errors import AnsibleFilterError
from ansible_collections.hyperpod.tenancy.plugins.filter.aws import CONTROLLER_SECRET_KEYS, CREDENTIAL_KEYS, aws_connection, controller_connection

ROOT = Path(__file__).resolve().parents[4]
PLAYBOOKS = sorted([ROOT / "site.yml", *(ROOT / "playbooks").glob("*.yml")])


class Unreadable:
    """A value the filter must not read (a vaulted secret is not even decrypted)."""

    def __str__(self):
        raise AssertionError("the filter read a credential's value")

    __repr__ = __str__


def test_a_connection_without_credentials_is_returned_as_it_is():
    connection = {"region": "eu-west-1", "endpoint_url": "https://example.test", "profile": "platform-admin"}
    assert aws_connection(connection) is connection
    assert aws_connection(None) == {}


@pytest.mark.parametrize("key", CREDENTIAL_KEYS)
def test_every_credential_option_and_alias_of_amazon_aws_is_refused_naming_the_key_not_the_value(key):
    with pytest.raises(AnsibleFilterError) as refused:
        aws_connection({"region": "eu-west-1", key: Unreadable()})
    assert str(refused.value).startswith("hyperpod_aws sets %s: refusing to run" % key)
    assert "AWS_SECRET_ACCESS_KEY" in str(refused.value)


def test_the_keys_are_amazon_aws_credential_options_and_their_aliases():
    from ansible_collections.amazon.aws.plugins.module_utils.modules import _aws_common_argument_spec

    spec = _aws_common_argument_spec()
    expected = {name for option in ("access_key", "secret_key", "session_token") for name in [option, *spec[option].get("aliases", [])]}
    assert set(CREDENTIAL_KEYS) == expected


def test_a_connection_that_is_not_a_mapping_is_refused():
    with pytest.raises(AnsibleFilterError, match="hyperpod_identity_center must be a mapping"):
        aws_connection("eu-west-1", "hyperpod_identity_center")


def module_defaults(node):
    """Every module_defaults mapping of a playbook (plays, blocks, tasks)."""
    if isinstance(node, dict):
        if isinstance(node.get("module_defaults"), dict):
            yield node["module_defaults"]
        for value in node.values():
            yield from module_defaults(value)
    elif isinstance(node, list):
        for item in node:
            yield from module_defaults(item)


@pytest.mark.parametrize("playbook", PLAYBOOKS, ids=lambda p: p.name)
def test_every_playbook_gives_its_aws_modules_the_connection_through_the_filter(playbook):
    for defaults in module_defaults(yaml.safe_load(playbook.read_text())):
        for group, value in defaults.items():
            if "hyperpod_aws" in str(value):
                assert value == "{{ hyperpod_aws | hyperpod.tenancy.aws_connection }}", (playbook.name, group, value)
            else:
                # Other defaults (identity_center) name no credential option.
                assert not set(CREDENTIAL_KEYS) & set(value if isinstance(value, dict) else {}), (playbook.name, group)


@pytest.mark.parametrize("key", CONTROLLER_SECRET_KEYS)
def test_the_awx_token_is_refused_in_the_controllers_module_defaults(key):
    """Threat model 10: awx_configure.yml gives every awx.awx task its connection through controller_connection, which
    refuses a token or password there (unread); the token comes from the environment (CONTROLLER_OAUTH_TOKEN)."""
    (defaults,) = module_defaults(yaml.safe_load((ROOT / "playbooks" / "awx_configure.yml").read_text()))
    assert defaults["group/awx.awx.controller"] == "{{ awx_controller_auth | default({}) | hyperpod.tenancy.controller_connection }}"
    with pytest.raises(AnsibleFilterError, match="awx_controller_auth sets %s: refusing to run" % key):
        controller_connection({"controller_host": "https://awx.example.com", key: Unreadable()})
    assert controller_connection({"controller_host": "https://awx.example.com"}) == {"controller_host": "https://awx.example.com"}
