"""Identity store ids and requests as AWS has them, on top of moto 5.2.5's identitystore.

- An Identity Center instance's identity store id is ``d-`` and 10 hexadecimal digits (botocore's
  IdentityStoreId pattern: ``d-[0-9a-f]{10}`` or a UUID, optionally in an identitystore ARN),
  where moto makes ``d-`` and 10 letters.
- Every identitystore request is validated against botocore's model (a malformed id is a
  ValidationException, as AWS's input validation answers), and an id of no Identity Center
  instance of the account and Region is ``ResourceNotFoundException`` with ResourceType
  ``IDENTITY_STORE`` (one of the ResourceType values botocore lists), where moto makes an empty
  store for any id it is given.
- Answers carry what botocore's model marks required and moto 5.2.5 leaves out: a group's, user's or
  membership's ARN (``GroupArn``, ``UserArn``, ``MembershipArn``: ``arn:aws:identitystore:::group/<id>``,
  as the API reference's example for Group gives it) and a ``Revision`` (a string of digits that
  "changes each time the group is modified"; the sandbox's groups and users are never modified
  through the API, so it stays ``1``).
"""

from __future__ import annotations

import json
import random

import moto.identitystore.models
import moto.identitystore.responses
import moto.ssoadmin.models
from moto.core.utils import camelcase_to_underscores
from moto.identitystore.exceptions import ResourceNotFoundException, ValidationException

from sandbox.core import AwsError, service_model, validate_request


def _store_ids(account_id: str, region: str) -> set[str]:
    return {i.identity_store_id for i in moto.ssoadmin.models.ssoadmin_backends[account_id][region].instances}


def _wrap_instance_ids() -> None:
    original = moto.ssoadmin.models.Instance.__init__

    def __init__(self, account_id: str, region: str):
        original(self, account_id, region)
        self.identity_store_id = "d-" + "".join(random.choice("0123456789abcdef") for _ in range(10))

    moto.ssoadmin.models.Instance.__init__ = __init__


def _wrap_store_lookup() -> None:
    backend_class = moto.identitystore.models.IdentityStoreBackend
    original = backend_class._IdentityStoreBackend__get_identity_store

    def get_identity_store(self, store_id: str):
        bare = store_id.rsplit("/", 1)[-1]
        if bare not in _store_ids(self.account_id, self.region_name):
            raise ResourceNotFoundException(message=f"Identity store {store_id} does not exist.", resource_type="IDENTITY_STORE")
        return original(self, bare)

    backend_class._IdentityStoreBackend__get_identity_store = get_identity_store


_ARNS = {"GroupArn": ("group", "GroupId"), "UserArn": ("user", "UserId"), "MembershipArn": ("membership", "MembershipId")}


def _complete(shape, value) -> None:
    """Add the ARNs and revision the output ``shape`` requires to the answer ``value``, in place."""
    if shape.type_name == "list" and isinstance(value, list):
        for item in value:
            _complete(shape.member, item)
    if shape.type_name != "structure" or not isinstance(value, dict):
        return
    required = shape.metadata.get("required", [])
    for member, (kind, id_member) in _ARNS.items():
        if member in required and member not in value and value.get(id_member):
            value[member] = f"arn:aws:identitystore:::{kind}/{value[id_member]}"
    if "Revision" in required and "Revision" not in value:
        value["Revision"] = "1"
    for name, item in value.items():
        if name in shape.members:
            _complete(shape.members[name], item)


def _validated(name: str, operation: str, method):
    output_shape = service_model("identitystore").operation_model(operation).output_shape

    def handler(self):
        params = json.loads(self.body or "{}")
        try:
            validate_request("identitystore", operation, params)
        except AwsError as error:
            raise ValidationException(message=json.loads(error.description)["message"]) from None
        answer = method(self)
        if output_shape is None or not isinstance(answer, str) or not answer.startswith("{"):
            return answer
        completed = json.loads(answer)
        _complete(output_shape, completed)
        return json.dumps(completed)

    handler.__name__ = name
    return handler


def install() -> None:
    _wrap_instance_ids()
    _wrap_store_lookup()
    response_class = moto.identitystore.responses.IdentityStoreResponse
    for operation in service_model("identitystore").operation_names:
        name = camelcase_to_underscores(operation)
        method = response_class.__dict__.get(name)
        if method is not None:
            setattr(response_class, name, _validated(name, operation, method))
