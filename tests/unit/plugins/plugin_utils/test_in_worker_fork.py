"""plugin_utils/in_worker.py: a worker forked after the plugin is loaded does not copy the heap it inherits when it collects."""

from __future__ import annotations

import gc
import os
import resource

from ansible_collections.hyperpod.tenancy.plugins.plugin_utils import in_worker


def faults_of_a_collection_in_a_forked_child():
    """The page faults a full collection costs a child forked now (each is a page copied from the parent)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        gc.collect()
        os.write(write, str(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    with os.fdopen(read) as answer:
        return int(answer.read())


def test_a_forked_worker_s_collection_leaves_the_inherited_objects_unwalked_and_the_parent_collects_them_again():
    assert in_worker.WARM_LOADER is not None  # the plugin is loaded: its fork hook is registered
    # 300,000 tracked objects, about 20 MiB of pages shared with the child: walked, each page would be copied.
    inherited = [[number] for number in range(300_000)]
    faults = faults_of_a_collection_in_a_forked_child()
    assert faults < 500, faults
    # The parent's objects are frozen only across the fork: its own collections still walk them.
    assert gc.get_freeze_count() == 0
    del inherited  # alive until the child has collected
