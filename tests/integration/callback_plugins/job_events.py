"""A test callback that keeps every event of a run as AWX keeps its job events.

AWX's callback (ansible-runner's display callback) stores, for each runner event, the task's
arguments unless the task has ``no_log``, and the result Ansible hands callbacks (censored by
Ansible when ``no_log`` is set). This one writes the same to the JSON-lines file named by
``HYPERPOD_JOB_EVENTS``, so a test can look for a secret in what AWX would have kept.

With ``HYPERPOD_SCRATCH_DIR`` and ``HYPERPOD_SCRATCH_COPIES`` it also copies, at every event, each regular file
under the first into the second: what a role writes to a scratch directory and removes before the run ends is
still there for the test to read.
"""

from __future__ import annotations

import json
import os
import shutil
import stat

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: job_events
type: aggregate
short_description: Writes every event as AWX's job events keep them (tests only)
description:
  - Writes task arguments (unless no_log) and results to HYPERPOD_JOB_EVENTS as JSON lines.
"""


def _copy_scratch_files():
    source, copies = os.environ.get("HYPERPOD_SCRATCH_DIR"), os.environ.get("HYPERPOD_SCRATCH_COPIES")
    if not (source and copies):
        return
    for root, _dirs, names in os.walk(source):
        for name in names:
            path = os.path.join(root, name)
            try:
                if not stat.S_ISREG(os.lstat(path).st_mode):  # a socket or a FIFO would block a copy
                    continue
                target = os.path.join(copies, os.path.relpath(path, source))
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copyfile(path, target)
            except OSError:  # removed meanwhile
                continue


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "job_events"
    CALLBACK_NEEDS_ENABLED = True

    def _write(self, event, task, result=None):
        _copy_scratch_files()
        path = os.environ.get("HYPERPOD_JOB_EVENTS")
        if not path:
            return
        record = {"event": event, "task": task.get_name(), "action": task.action}
        if not task.no_log:
            record["task_args"] = task.args
        if result is not None:
            record["res"] = result.result
        with open(path, "a") as events:
            events.write(json.dumps(record, default=repr) + "\n")

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._write("playbook_on_task_start", task)

    def v2_runner_on_ok(self, result):
        self._write("runner_on_ok", result.task, result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._write("runner_on_failed", result.task, result)

    def v2_runner_on_skipped(self, result):
        self._write("runner_on_skipped", result.task, result)

    def v2_runner_item_on_ok(self, result):
        self._write("runner_item_on_ok", result.task, result)

    def v2_runner_item_on_failed(self, result):
        self._write("runner_item_on_failed", result.task, result)

    def v2_runner_on_async_ok(self, result):
        self._write("runner_on_async_ok", result.task, result)
