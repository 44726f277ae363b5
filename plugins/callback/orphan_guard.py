# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: orphan_guard
type: aggregate
short_description: Worker processes end when their ansible-playbook ends, however it ends
version_added: 0.1.0
description:
  - ansible-core's worker processes call C(setsid()), so a job runner that cancels a run by killing
    its process group (ansible-runner sends SIGKILL to the group of the C(ansible-playbook) it
    started) does not reach them. A worker that then finishes its task blocks for ever writing its
    result into the result queue that nobody reads any more (a pipe whose read end the workers
    themselves hold open), and the other workers wait on that queue's lock.
  - With this callback enabled, Linux sends every worker SIGTERM when the C(ansible-playbook) that
    forked it dies (C(prctl(PR_SET_PDEATHSIG))). ansible-core's worker passes SIGTERM on to its
    own process group, where the module processes of its task run, and exits.
  - Does nothing on systems other than Linux. Prints nothing.
requirements:
  - enabled in callbacks_enabled (this repository's ansible.cfg enables it)
"""

import ctypes
import ctypes.util
import os
import signal
import sys
import threading

from ansible_collections.hyperpod.tenancy.plugins.plugin_utils.callback import AggregateCallback

# linux/prctl.h
PR_SET_PDEATHSIG = 1

_FORK = {"parent": None, "main_thread": False}
_REGISTERED = []


def _before_fork():
    _FORK["parent"] = os.getpid()
    _FORK["main_thread"] = threading.current_thread() is threading.main_thread()


def _after_fork_in_child(prctl):
    # The kernel sends the signal when the thread that forked ends, not the process: only a fork
    # from the main thread (where ansible-core's strategy starts its workers) is bound to it.
    if not _FORK["main_thread"]:
        return
    if prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0) != 0:
        return
    if os.getppid() != _FORK["parent"]:
        # The parent died before prctl took effect: no signal will come.
        os._exit(1)


def register():
    """Bind every process forked from now on to the life of the process that forks it (once per process)."""
    if _REGISTERED or not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    prctl = libc.prctl
    os.register_at_fork(before=_before_fork, after_in_child=lambda: _after_fork_in_child(prctl))
    _REGISTERED.append(True)


class CallbackModule(AggregateCallback):
    CALLBACK_NAME = "hyperpod.tenancy.orphan_guard"

    def __init__(self):
        super(CallbackModule, self).__init__()
        register()
