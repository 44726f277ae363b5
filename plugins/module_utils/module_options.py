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


def known_value(params, key):
    """``key`` of the layer's ``known``: what ``shared_info`` read earlier in the run and ``team_resources`` hands on
    (None when it handed nothing; a layer's own module takes no ``known``). It only tells that nothing changes: a write
    is planned from a new read (``engine.plan_from_copy``)."""
    return (params.get("known") or {}).get(key)


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


class TeamFileSection(dict):
    """``{key: the team file's default}`` of the keys of a team-file section that one layer consumes, in order.

    ``section`` is the section's name; ``options[key]`` the layer's option the key sets (``None`` for a key the layer's
    file translates itself, or that decides whether the layer runs); ``offboarding`` the keys the layer takes only when
    the team is removed (the roles pass them: ``team_layer_args`` builds and converges only); ``specs[key]`` the
    argument spec the key's value follows (the option's, or the key's own), whose ``choices`` and ``type`` the team
    model checks; ``module_options`` the layer's.
    """

    def passed(self):
        """``{key: option}`` of the keys ``team_layer_args`` passes on to the layer."""
        return dict((key, option) for key, option in self.options.items() if option is not None and key not in self.offboarding)


def team_section(section, module_options, keys, renamed=None, own=None, offboarding=(), **team_defaults):
    """The keys of the team file's ``section`` that one layer consumes (its ``TEAM_FILE_SECTION``), a ``TeamFileSection``.

    Each of ``keys`` (the team file's order) sets the layer's option of the same name, or the one ``renamed`` gives;
    a key in ``own`` (``{key: its argument spec}``) is no option: the layer's file translates it (or it decides whether the
    layer runs) and its spec gives its default, type and choices. The default is ``team_defaults``'s where it gives one
    (a team gets it, while the module leaves an unset option alone; ``REQUIRED`` when the team must give it), the spec's
    otherwise. ``team_model`` builds the section from every layer's keys and checks them with their specs, and
    ``team_layer_args`` passes each key on to the layer as its option: the layer's file is the one source.
    """
    spec = module_options["argument_spec"]
    renamed, own = dict(renamed or {}), dict(own or {})
    option = dict((key, None if key in own else renamed.get(key, key)) for key in keys)
    unknown = (
        [key for key in keys if option[key] is not None and option[key] not in spec]
        + [key for key in list(team_defaults) + list(renamed) + list(own) + list(offboarding) if key not in keys]
    )
    if unknown:
        raise ValueError("team-file keys that are not options of the layer, or not listed: %s" % ", ".join(unknown))
    specs = dict((key, own[key] if option[key] is None else spec[option[key]]) for key in keys)
    declared = TeamFileSection((key, team_defaults[key] if key in team_defaults else specs[key].get("default")) for key in keys)
    declared.section, declared.options, declared.offboarding, declared.specs = section, option, tuple(offboarding), specs
    declared.module_options = module_options
    return declared


def section_choices(declared):
    """``{key: choices}`` of the keys of a ``TeamFileSection`` that their spec restricts to choices."""
    return dict((key, tuple(spec["choices"])) for key, spec in declared.specs.items() if spec.get("choices"))
