# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""The argument-spec pieces several modules share, each defined here once.

Each piece has one documentation: a doc fragment of this collection or of amazon.aws, named next to
it. A module's ``MODULE_OPTIONS`` is ``options(its own options, PIECE, ...)`` and its DOCUMENTATION
extends the pieces' fragments, so ``ansible-test sanity`` (validate-modules) holds the two together.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.hyperpod.tenancy.plugins.module_utils.naming import DEFAULT_PREFIX

# hyperpod.tenancy.state where state means only whether the module's resource exists; a module whose absent does
# more (offboards as on_remove says, ...) documents its own.
STATE = dict(state=dict(type="str", choices=["present", "absent"], default="present"))

# amazon.aws.tags
TAGS = dict(tags=dict(type="dict", aliases=["resource_tags"]), purge_tags=dict(type="bool", default=True))

# hyperpod.tenancy.team
TEAM_TAGS = dict(cost_center=dict(type="str"), tag_keys=dict(type="dict", no_log=False))

# hyperpod.tenancy.team.name_prefix
NAME_PREFIX = dict(name_prefix=dict(type="str", default=DEFAULT_PREFIX))

# hyperpod.tenancy.identity_center: where the sso-admin and identitystore calls go (module_utils/identity_center.py).
IDENTITY_CENTER = dict(
    identity_center=dict(
        type="dict",
        options=dict(
            region=dict(type="str"),
            profile=dict(type="str"),
            assume_role_arn=dict(type="str"),
            external_id=dict(type="str", no_log=True),
            session_name=dict(type="str"),
            endpoint_url=dict(type="str"),
        ),
    )
)

# hyperpod.tenancy.report
REPORT = dict(
    month=dict(type="str"),
    teams=dict(type="list", elements="dict", required=True),
    instance_groups=dict(type="list", elements="dict", required=True),
)


def wait(timeout):
    """``wait`` and ``wait_timeout`` (seconds, ``timeout`` by default); documented in each module: what it waits for differs."""
    return dict(wait=dict(type="bool", default=True), wait_timeout=dict(type="int", default=timeout))


def options(argument_spec, *pieces, **constraints):
    """A module's ``MODULE_OPTIONS``: its own ``argument_spec`` with the shared ``pieces``, and its constraints
    (``required_one_of``, ``mutually_exclusive``, ...)."""
    spec = dict(argument_spec)
    for piece in pieces:
        spec.update(piece)
    return dict(constraints, argument_spec=spec)


# A team-file key with no default: the team file must give it (team_model.REQUIRED is this).
REQUIRED = object()


def team_section(module_options, keys, **team_defaults):
    """A section of the team file (``quota:``, ``budget:``) whose keys are options of one layer's ``module_options``.

    Returns ``{key: default}`` in the order of ``keys``: the team file's default where ``team_defaults`` gives one (a
    team gets it, while the module leaves an unset option alone; ``REQUIRED`` when the team must give it), the
    module's own default otherwise. ``team_model`` checks the section's keys and their choices from the layer's spec,
    and ``team_layer_args`` passes every key on to the layer by its name: the layer's file is the one source.
    """
    spec = module_options["argument_spec"]
    unknown = [key for key in keys if key not in spec] + [key for key in team_defaults if key not in keys]
    if unknown:
        raise ValueError("team-file keys that are not options of the layer, or not listed: %s" % ", ".join(unknown))
    return dict((key, team_defaults[key] if key in team_defaults else spec[key].get("default")) for key in keys)


def section_choices(module_options, section):
    """``{key: choices}`` of the section's keys that the layer's spec restricts to choices."""
    spec = module_options["argument_spec"]
    return dict((key, tuple(spec[key]["choices"])) for key in section if spec[key].get("choices"))
