# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""What runs one layer of a team, in its own module or with the others in ``team_resources``.

Each layer's file in ``module_utils`` has ``MODULE_OPTIONS`` (the keyword arguments of its
module: argument spec and constraints), ``check(params)`` (what can be refused without a call) and
``converge(context, params)``, which returns the module's result (``changed``, ``diff`` and the
layer's keys) or raises ``HyperPodError``. A layer's module is then
``run_layer_module(AnsibleAWSModule(supports_check_mode=True, **MODULE_OPTIONS), converge)``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError, HyperPodErrorHandler
from ansible_collections.hyperpod.tenancy.plugins.module_utils.retry import aws_retry


@HyperPodErrorHandler.common_error_handler("read the caller's account")
@aws_retry()
def caller_account(sts):
    return sts.get_caller_identity()["Account"]


class LayerContext(object):
    """What a layer takes from its module: clients (made once per service and run), check mode, warnings, commands."""

    def __init__(self, module):
        self.module = module
        self.check_mode = module.check_mode
        self._clients = {}
        self._account_id = None
        # The layer running, when several run in one module (team_resources): it names their warnings.
        self.layer = None

    def client(self, service):
        # A boto3 client loads its service model when made: every layer of a team run shares one per service.
        if service not in self._clients:
            self._clients[service] = self.module.client(service, retry_decorator=aws_retry())
        return self._clients[service]

    @property
    def region(self):
        return self.module.region

    def account_id(self):
        """The caller's account, asked once per run and only when a layer needs it."""
        if self._account_id is None:
            self._account_id = caller_account(self.client("sts"))
        return self._account_id

    def warn(self, message):
        self.module.warn("%s: %s" % (self.layer, message) if self.layer else message)

    def run_command(self, *args, **kwargs):
        return self.module.run_command(*args, **kwargs)

    def get_bin_path(self, *args, **kwargs):
        return self.module.get_bin_path(*args, **kwargs)


def os_error_message(error, path):
    return "%s: %s" % (error.filename or path, error.strerror or error)


def run_layer_module(module, converge):
    """The whole ``main()`` of a layer's module: converge, then report the result or the one error."""
    try:
        result = converge(LayerContext(module), module.params)
    except HyperPodError as e:
        module.fail_json_aws_error(e)
    except OSError as e:
        module.fail_json(msg=os_error_message(e, module.params.get("root")), errno=e.errno)
    module.exit_json(**result)
