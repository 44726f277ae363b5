"""The sandbox: moto plus what moto lacks (docs/development.md, "The sandbox").

Where AWS or Kubernetes follow a rule the collection also writes down (IAM evaluation, where each
Kubernetes kind is served), the sandbox uses the collection's own code from plugins/module_utils,
importable from here on.
"""

import sys
from pathlib import Path

_COLLECTIONS = str(Path(__file__).resolve().parent.parent / "collections")
if _COLLECTIONS not in sys.path:
    sys.path.insert(0, _COLLECTIONS)
