# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""A module of this collection run in the worker process: its own ``main()``, without a new Python, AnsiballZ or boto3 import.

A team's no-op run spends most of its CPU before its first API call: a Python process per team, AnsiballZ
unpacking ``ansible.module_utils``, importing boto3 and botocore, and loading each service's model JSON for every
client (docs/performance.md). An action plugin named as the module (so Ansible runs it for the module's
tasks) and made of ``InWorkerAction`` runs the module's ``main()`` in the worker Ansible forked for the task, as ansible.netcommon
runs network modules in the worker (its ``import_modules`` option, ``plugins/action/network.py``):

- the module receives the arguments a module process would: the task's arguments with ``module_defaults`` applied,
  plus the ``_ansible_*`` keys (check mode, diff, no_log, verbosity) from ``ActionBase._update_module_args``, encoded
  with the module's serialization profile and given to ``AnsibleModule`` where AnsiballZ puts them.
  ``AnsibleAWSModule`` then validates them (argument spec, ``no_log`` values) and resolves the region, endpoint and
  credentials exactly as in a module process (options, ``AWS_*`` variables, profiles);
- the task's ``environment:`` is set in the worker's ``os.environ`` for the run, as the module process would inherit it;
- ``ansible.module_utils`` runs target-side for the run: warnings and deprecations are collected into the result,
  not displayed by the worker;
- the result is printed by ``exit_json``/``fail_json`` as a module prints it, and made a task result as
  ``ActionBase._execute_module`` makes a module's output one.

ansible-core has no public API for these three steps: they are ``core_private.py``'s (``TargetSide``,
``module_result``), used only on the ansible-core releases they are proven on (``core_private.IN_WORKER``). On any
other release every action runs its module as a module process (``ActionBase._execute_module``): the same result, slower.

The worker is a process forked for one host and one task (ansible-core's ``WorkerProcess``), so what the run changes
in it (environment, the module's globals) ends with it; they are restored anyway. One team's failure stays its host's.

Warm start. Ansible's linear and free strategies load an action plugin's class in the ``ansible-playbook`` process
(``action_loader.get(..., class_only=True)``, to read ``BYPASS_HOST_LOOP``) before they fork a worker for the task,
so what this file imports and loads at import time (the first action plugin that imports it) is paid once per run and shared by every worker copy-on-write:
boto3, botocore, amazon.aws's and this collection's module_utils, and a botocore data loader holding the models,
endpoint rule sets and paginators of the services the collection's modules call. Each worker makes its own sessions and
clients (credentials are resolved per task); only the loader, read-only data, is shared: ``botocore.session``'s
``create_loader`` answers with it for the default data path during the run (a ``data_path`` or ``AWS_DATA_PATH`` of the
task's own gets a loader of its own, as before).

The module process is kept when the worker cannot stand in for it: a connection other than ``local``, ``become``,
``async``, an ``ansible_python_interpreter`` that is not this Python, or an ansible-core release the run is not proven on.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import gc
import io
import os
import sys

try:
    # Imported here, in the parent, for every worker.
    import boto3
    import botocore.exceptions
    import botocore.loaders
    import botocore.session
except ImportError:  # the module reports the missing library, as in a module process
    botocore = None

from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display
from ansible.utils.vars import merge_hash

from ansible_collections.hyperpod.tenancy.plugins.module_utils import in_flight, rates
from ansible_collections.hyperpod.tenancy.plugins.plugin_utils import core_private

display = Display()
# The services the modules run in the worker call (context.client) and what their clients load from the data path.
SERVICES = ("sso-admin", "identitystore", "eks", "iam", "sagemaker", "s3", "budgets", "sts", "fsx", "ec2", "ce", "accessanalyzer")
SERVICE_DATA = ("service-2", "endpoint-rule-set-1", "paginators-1")


def _warm_loader():
    """A botocore data loader of the default data path, holding what a team's clients load."""
    if botocore is None:
        return None
    loader = botocore.loaders.create_loader()
    for name in ("endpoints", "partitions", "_retry", "sdk-default-configuration"):
        loader.load_data(name)
    for service in SERVICES:
        for type_name in SERVICE_DATA:
            try:
                loader.load_service_model(service, type_name)
            except botocore.exceptions.DataNotFoundError:
                pass
    # One client per service, made and dropped: what botocore and boto3 compute once per process for a client
    # (handlers, endpoint rule set functions, shapes) is then computed here too. Credentials of no account, and
    # no request: making a client calls nothing.
    session = botocore.session.Session()
    session.register_component("data_loader", loader)
    warm = boto3.session.Session(botocore_session=session)
    for service in SERVICES:
        warm.client(service, region_name="us-east-1", aws_access_key_id="warm", aws_secret_access_key="warm")
    return loader


WARM_LOADER = _warm_loader()


def _share_the_heap_with_workers():
    """Have every worker Ansible forks from now on leave the objects it inherits to the garbage collector of the parent.

    A collection in a forked worker walks every object it inherited (boto3, botocore's models, the run's variables:
    about 200 MiB here) and writes to each one's header, so the kernel copies each page the worker shares with
    ``ansible-playbook``: tens of milliseconds of CPU per worker, one worker per host and task. ``gc.freeze`` just
    before the fork moves what the parent holds to a generation that collections do not walk, in the worker it
    inherits; the parent unfreezes it at once (the gc module's documentation recommends the freeze for a process that
    forks without exec). docs/performance.md has the measurement.
    """
    os.register_at_fork(before=gc.freeze, after_in_parent=gc.unfreeze)


_share_the_heap_with_workers()
# The run's request rates per AWS service, kept by every worker forked from here together (module_utils/rates.py).
rates.share_across_forks()
# And Identity Center's requests in flight (module_utils/in_flight.py).
in_flight.share_across_forks()


def _create_loader(search_path_string=None):
    """``botocore.session.create_loader`` during a run: the warm loader for the default data path."""
    if search_path_string is None:
        return WARM_LOADER
    return botocore.loaders.create_loader(search_path_string)


class _WarmLoader(object):
    """While entered, new botocore sessions of this process take the warm loader (for the default data path)."""

    def __enter__(self):
        if botocore is not None:
            self.saved, botocore.session.create_loader = botocore.session.create_loader, _create_loader
        return self

    def __exit__(self, *exc_info):
        if botocore is not None:
            botocore.session.create_loader = self.saved


def _same_python(interpreter):
    """Whether ``interpreter`` (``ansible_python_interpreter``, templated; None: discovered) is this Python."""
    if interpreter is None:
        return True  # discovered on a local connection: the worker's Python stands in for the one discovery finds
    interpreter = to_text(interpreter)
    # A virtual environment's python is a link to the base interpreter: the same file in the same directory.
    try:
        return os.path.samefile(interpreter, sys.executable) and os.path.samefile(os.path.dirname(interpreter), os.path.dirname(sys.executable))
    except OSError:
        return False


class InWorkerAction(ActionBase):
    """The action of a module run in the worker: a subclass names the module (``MODULE``, its FQCN) and its ``main`` (a staticmethod)."""

    MODULE = None
    main = None
    _supports_check_mode = True
    _supports_async = True

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super(InWorkerAction, self).run(tmp, task_vars)
        del tmp
        if not self._in_worker(task_vars):
            wrap_async = self._task.async_val and not self._connection.has_native_async
            result = merge_hash(result, self._execute_module(module_name=self.MODULE, task_vars=task_vars, wrap_async=wrap_async))
            if not wrap_async:
                self._remove_tmp_path(self._connection._shell.tmpdir)
            return result
        return merge_hash(result, self._run_in_worker(task_vars))

    def _in_worker(self, task_vars):
        if not core_private.IN_WORKER:
            display.vvv("%s runs as a module process: %s" % (self.MODULE, core_private.WHY_NOT))
            return False
        return (
            self._connection.transport == "local"
            and not self._play_context.become
            and not self._task.async_val
            and _same_python(self._templar.template(task_vars.get("ansible_python_interpreter")))
        )

    def _run_in_worker(self, task_vars):
        module_args = dict(self._task.args)
        self._update_module_args(self.MODULE, module_args, task_vars)
        encoded = core_private.encoded_module_args(module_args)
        environment = {}
        self._compute_environment_string(environment)

        saved_environ = dict(os.environ)
        saved = (sys.stdout, sys.stderr)
        stdout, stderr, rc = io.StringIO(), io.StringIO(), 0
        try:
            os.environ.update((to_text(k), to_text(v)) for k, v in environment.items())
            sys.stdout, sys.stderr = stdout, stderr
            try:
                with core_private.TargetSide(encoded), _WarmLoader():
                    self.main()
            except SystemExit as e:
                rc = e.code or 0
        finally:
            sys.stdout, sys.stderr = saved
            os.environ.clear()
            os.environ.update(saved_environ)

        return core_private.module_result(self, rc, stdout.getvalue(), stderr.getvalue())
