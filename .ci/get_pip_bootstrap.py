"""Stand-in for ansible-test's get-pip bootstrap script.

``ansible-test sanity --venv`` downloads get-pip.py from ansible's CI file host,
which our machines cannot reach. This does the same job from what is here:
pip from the standard library's ensurepip, then pip installs the packages
ansible-test asked for (their pinned versions) from PyPI. The Makefile copies it
to ansible-test's cache path when no real script is cached there.
"""

import ensurepip
import importlib
import os
import sys

GET_PIP_ONLY_OPTIONS = {"--no-setuptools", "--no-wheel"}

# ensurepip hides pip's configuration (PIP_CONFIG_FILE=/dev/null, PIP_* unset); the install
# below needs it back, since that is where a machine keeps its index and certificate settings.
environment = dict(os.environ)
ensurepip.bootstrap(upgrade=True)
os.environ.clear()
os.environ.update(environment)
importlib.invalidate_caches()
from pip._internal.cli.main import main  # noqa: E402

sys.exit(main(["install", "--upgrade"] + [arg for arg in sys.argv[1:] if arg not in GET_PIP_ONLY_OPTIONS]))
