# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""What runs a module: one layer of a team (in its own module or with the others in ``team_resources``), or any other.

Every module is ``MODULE_OPTIONS`` (the keyword arguments of its module: argument spec and
constraints, built from the shared pieces of ``module_options.py``), a ``check(params)`` (what can be
refused without a call) and ``converge(context, params)``, which returns the module's result
(``changed``, ``diff`` where the module changes something, and the module's keys) or raises
``HyperPodError`` (``ModuleFailure`` when the failure returns more than its message). Its
``main()`` is ``run_module(MODULE_OPTIONS, converge)``. A layer's file in ``module_utils`` holds
all three; a module that is no layer holds them itself.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import threading

try:
    import boto3
    import botocore.config
    import botocore.exceptions
except ImportError:
    pass  # AnsibleAWSModule reports the missing library

from ansible.module_utils.ansible_release import __version__ as ANSIBLE_VERSION

from ansible_collections.amazon.aws.plugins.module_utils.botocore import get_aws_connection_info
from ansible_collections.amazon.aws.plugins.module_utils.common import get_collection_info
from ansible_collections.amazon.aws.plugins.module_utils.modules import AnsibleAWSModule

from ansible_collections.hyperpod.tenancy.plugins.module_utils import engine, identity_center, rates, sts
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import ConflictError, HyperPodError, error_code


def user_agent():
    """The user agent amazon.aws's clients send (its ``boto3_conn``), made of public names: ``APN/1.0 Ansible/<core>
    amazon.aws/<version>`` (test_layer.py compares a client of ours with one of amazon.aws's)."""
    info = get_collection_info()
    agent = "APN/1.0 Ansible/%s" % ANSIBLE_VERSION
    if info["name"]:
        agent += " %s" % info["name"] if info["version"] is None else " %s/%s" % (info["name"], info["version"])
    return agent


def caller_account(client):
    return sts.get_caller_identity(client)["Account"]


class AWSModule(AnsibleAWSModule):
    """amazon.aws's module, whose clients of one run come from one boto3 session per profile.

    amazon.aws makes a boto3 session for every client, and making a session registers botocore's hundreds of built-in
    event handlers: in a team's run that cost more than its API calls (docs/performance.md). A client is configured as
    amazon.aws configures it (the connection options, ``extra_params``, its user agent and ``aws_config``); when one
    cannot be made, amazon.aws's own ``client`` tries again, and fails as it fails.
    """

    def __init__(self, *args, **kwargs):
        super(AWSModule, self).__init__(*args, **kwargs)
        self._sessions = {}
        # Layers read in threads (calls.each, calls.together), and a boto3 session must not make two clients at once.
        self._sessions_lock = threading.Lock()

    def _should_inject_warnings(self):
        # amazon.aws passes the warnings to exit_json itself, which ansible-core (2.19 on) deprecates: it returns them
        # of its own, so the result would carry the deprecation beside every warning. A private hook of amazon.aws
        # (10.x and 11.x) with no public equivalent: were it gone, results would carry that deprecation, nothing
        # else (docs/development.md, "ansible-core versions"; test_layer.py proves one warning each).
        return False

    def client(self, service, retry_decorator=None, **extra_params):
        # Every request of the run's clients keeps to its service's pace (module_utils/rates.py).
        return rates.pace(self._client(service, retry_decorator, **extra_params))

    def _client(self, service, retry_decorator=None, **extra_params):
        if retry_decorator is not None:
            return super(AWSModule, self).client(service, retry_decorator=retry_decorator, **extra_params)
        region, endpoint, params = get_aws_connection_info(self)
        params = dict(params, region=region, endpoint=endpoint)
        params.update(extra_params)
        profile = params.pop("profile_name", None)
        config = botocore.config.Config(user_agent=user_agent())
        if params.get("aws_config") is not None:
            config = config.merge(params["aws_config"])
        params.pop("aws_config", None)
        try:
            with self._sessions_lock:
                if profile not in self._sessions:
                    self._sessions[profile] = boto3.session.Session(profile_name=profile)
                return self._sessions[profile].client(service, config=config, region_name=params.pop("region"), endpoint_url=params.pop("endpoint"), **params)
        except (ValueError, botocore.exceptions.BotoCoreError):
            return super(AWSModule, self).client(service, **extra_params)


class LayerContext(object):
    """What a layer takes from its module: clients (made once per service and run), check mode, warnings, commands."""

    def __init__(self, module):
        self.module = module
        self.check_mode = module.check_mode
        self._clients = {}
        # Layers read in threads (calls.each, calls.together, team_resources' layers): one client per service, one
        # AssumeRole for Identity Center's, one GetCallerIdentity.
        self._clients_lock = threading.RLock()
        self._account_id = None
        self._identity_center = None
        # The layer running in this thread, when several run in one module (team_resources): it names their warnings.
        self._running = threading.local()

    @property
    def layer(self):
        return getattr(self._running, "layer", None)

    @layer.setter
    def layer(self, option):
        self._running.layer = option

    def client(self, service):
        # A boto3 client loads its service model when made: every layer of a team run shares one per service.
        with self._clients_lock:
            if service not in self._clients:
                # Identity Center's calls go where its admin APIs answer (option identity_center, made once per run).
                extra = self.identity_center_connection() if service in identity_center.SERVICES else {}
                self._clients[service] = self.module.client(service, **extra)
            return self._clients[service]

    def identity_center_connection(self):
        """The keyword arguments of an Identity Center client (identity_center.connection): ``{}`` without the option."""
        with self._clients_lock:
            if self._identity_center is None:
                self._identity_center = identity_center.connection(self.module)
            return self._identity_center

    @property
    def region(self):
        return self.module.region

    def account_id(self):
        """The caller's account, asked once per run and only when a layer needs it."""
        with self._clients_lock:
            if self._account_id is None:
                self._account_id = caller_account(self.client("sts"))
            return self._account_id

    def warn(self, message):
        self.module.warn("%s: %s" % (self.layer, message) if self.layer else message)

    def run_command(self, *args, **kwargs):
        return self.module.run_command(*args, **kwargs)

    def get_bin_path(self, *args, **kwargs):
        return self.module.get_bin_path(*args, **kwargs)


class ModuleFailure(HyperPodError):
    """A failure that returns more than its message: the problems found, what was done before it (``result``)."""

    def __init__(self, message, exception=None, **result):
        super(ModuleFailure, self).__init__(message=message, exception=exception)
        self.result = result


def os_error_message(error, path=None):
    """An OSError as a message, named after its file (or ``path``, what the caller was working under)."""
    where = error.filename or path
    return "%s: %s" % (where, error.strerror or error) if where else str(error.strerror or error)


def result(changed, before, after, **keys):
    """The result of a module that changes something: ``changed``, its keys and the diff."""
    return dict(keys, changed=changed, diff={"before": before, "after": after})


def converge_by_state(key, manager):
    """The ``converge`` of a module whose resource (``manager(context, params)``, an ``engine.Resource``) the engine
    converges by ``state``: the resource is returned as ``key``."""

    def converge(context, params):
        outcome = engine.converge(manager(context, params), params["state"], context.check_mode)
        return result(outcome.changed, outcome.before, outcome.after, **{key: outcome.result})

    return converge


# What AWS answers a write with when another writer got there between our read and our write: a create of a name
# that now exists (EKS, SageMaker, IAM, Budgets; Identity Center and SageMaker's quotas say ConflictException, which is
# also their answer to a write from a stale version).
LOST_RACE_CODES = frozenset(
    ("ResourceInUseException", "ResourceInUse", "ConflictException", "EntityAlreadyExists", "DuplicateRecordException")
)


def lost_a_race(error):
    """Whether ``error`` says another writer changed the resource between this run's read and its write.

    A ``ModuleFailure`` reports layers that already ran their own rounds (``team_resources``): it is never run again.
    """
    if isinstance(error, ModuleFailure):
        return False
    return isinstance(error, ConflictError) or error_code(error) in LOST_RACE_CODES


def converge_past_a_lost_race(converge, context, params, attempts=3):
    """``converge(context, params)``, run again from fresh reads when another run wrote the resource first.

    Two runs converging one team at once (an onboarding while the scheduled correction runs) both find a resource
    missing and both create it; the second create is refused. Converging again reads what the other run made, past
    any copy read earlier in the run (a layer's ``known``), and takes it only as the first read would have: a
    resource the collection did not make for the team is still refused. A layer makes several resources, so the
    other run may win the next one too; ``attempts`` bounds the rounds.
    """
    for attempt in range(attempts):
        try:
            return converge(context, params)
        except HyperPodError as e:
            if attempt == attempts - 1 or not lost_a_race(e):
                raise
            code = error_code(e)
            reason = "%s: %s" % (e.message, code) if code else e.message
            context.warn("another run wrote what this run was writing (%s); converging from what it made" % reason)
        params = dict(params, known=None)


def run_layer_module(module, converge):
    """The whole ``main()`` of a module once made: converge, then report the result or the one error."""
    try:
        outcome = converge_past_a_lost_race(converge, LayerContext(module), module.params)
    except HyperPodError as e:
        extra = getattr(e, "result", {})
        if e.exception:
            module.fail_json_aws(e.exception, msg=e.message, **extra)
        module.fail_json(msg=e.message, **extra)
    except OSError as e:
        module.fail_json(msg=os_error_message(e), errno=e.errno)
    module.exit_json(**outcome)


def run_module(options, converge, module_class=AWSModule):
    """The whole ``main()`` of every module: ``options`` are its ``MODULE_OPTIONS``, it supports check mode."""
    run_layer_module(module_class(supports_check_mode=True, **options), converge)
