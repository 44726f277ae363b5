# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""The AWS connection the playbooks hand every module through ``module_defaults``: never a credential.

ansible-core (2.19) applies ``module_defaults`` to a task's arguments before the task runs, and every callback sees
those arguments (``task.args``): ansible-runner's, which AWX keeps as the job's events, stores them for each task whose
``no_log`` is off. That the modules declare ``secret_key`` and ``session_token`` ``no_log`` hides them in results,
not in the arguments a callback receives, and ``no_log: true`` on every AWS task would hide every result too. An
``environment:`` keyword is no way around it either: ansible-core writes the variables into the command line it runs
the module with, which ``-vvv`` prints (``EXEC ...``). So a credential is never a module argument: the modules read it
from the environment ansible-playbook runs in (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_SESSION_TOKEN``: what AWX's Amazon Web Services credential injects, and ``python -m sandbox run`` sets), or from
a profile, as amazon.aws's ``AnsibleAWSModule`` does for an option that is not set.

``aws_connection`` is the filter every play's ``module_defaults`` passes ``hyperpod_aws`` through: it refuses a
connection that carries a credential, naming the variable and the keys but never a value, on the first task that
would have received it, so before any call. It does not read the values (a vaulted one is not even decrypted).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

# amazon.aws's credential options and their aliases (module_utils/modules.py, _aws_common_argument_spec): the key ID
# is not a secret, but it comes in a pair with one, so it comes from where the secret comes from.
CREDENTIAL_KEYS = (
    "access_key",
    "aws_access_key_id",
    "aws_access_key",
    "secret_key",
    "aws_secret_access_key",
    "aws_secret_key",
    "session_token",
    "aws_session_token",
)
ENVIRONMENT = "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN"


def credential_keys(connection):
    """The credential keys ``connection`` sets (the keys only: the values are not read)."""
    if not isinstance(connection, Mapping):
        return []
    return [key for key in CREDENTIAL_KEYS if key in connection]


# awx.awx's controller options that hold a secret, and their aliases (awx.awx's auth doc fragment).
CONTROLLER_SECRET_KEYS = ("controller_oauthtoken", "tower_oauthtoken", "controller_password", "tower_password")


def _without_secrets(connection, name, keys, kinds, way_in):
    if connection is None:
        return {}
    if not isinstance(connection, Mapping):
        raise AnsibleFilterError("%s must be a mapping (%s), not %s" % (name, kinds, type(connection).__name__))
    found = [key for key in keys if key in connection]
    if found:
        raise AnsibleFilterError(
            "%s sets %s: refusing to run. A secret in a variable becomes an argument of every task it is a default of, which "
            "every callback receives (AWX keeps them as the job's events) at any verbosity. Remove it from %s and %s" % (
                name, ", ".join(found), name, way_in)
        )
    return connection


def aws_connection(connection, name="hyperpod_aws"):
    """``connection`` as it is, or AnsibleFilterError when it sets a credential."""
    return _without_secrets(connection, name, CREDENTIAL_KEYS, "region, endpoint_url, profile", "give the credentials to ansible-playbook "
                            "in its environment (%s; AWX's Amazon Web Services credential injects them) or name a profile (%s.profile)" % (
                                ENVIRONMENT, name))


def controller_connection(connection, name="awx_controller_auth"):
    """The AWX connection of awx.awx's module_defaults as it is, or AnsibleFilterError when it sets a token or password."""
    return _without_secrets(connection, name, CONTROLLER_SECRET_KEYS, "controller_host, validate_certs", "give the token to "
                            "ansible-playbook in its environment (CONTROLLER_OAUTH_TOKEN, or CONTROLLER_USERNAME and CONTROLLER_PASSWORD)")


class FilterModule(object):
    def filters(self):
        return {"aws_connection": aws_connection, "controller_connection": controller_connection}
