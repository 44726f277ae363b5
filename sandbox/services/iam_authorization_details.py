"""IAM GetAccountAuthorizationDetails in pages, as AWS answers it: moto 5.2.5 sends every item at once, whatever MaxItems.

"Use the MaxItems and Marker parameters to paginate the results": MaxItems is 100 when not given and at most 1000
(the model refuses more), and the items of the answer's four lists (``UserDetailList``, ``GroupDetailList``,
``RoleDetailList``, ``Policies``, the paginator's result keys) count together, in that order. ``IsTruncated`` says
whether more follow and ``Marker`` where they start (GetAccountAuthorizationDetails, IAM API Reference).
"""

from __future__ import annotations

import moto.iam.responses
from moto.core.responses import ActionResult
from moto.iam.exceptions import ValidationError

from sandbox.core import graft, page, validate_request

LISTS = ("UserDetailList", "GroupDetailList", "RoleDetailList", "Policies")
_EVERY_ITEM = moto.iam.responses.IamResponse.get_account_authorization_details


class AuthorizationDetailsResponse:
    def get_account_authorization_details(self) -> ActionResult:
        params = self._get_params()
        validate_request("iam", "GetAccountAuthorizationDetails", params)
        whole = _EVERY_ITEM(self).result
        items = [(key, item) for key in LISTS for item in whole[key]]
        found, marker = page(items, params.get("MaxItems"), params.get("Marker"), lambda: ValidationError("Invalid Marker"))
        result = {key: [item for their_key, item in found if their_key == key] for key in LISTS}
        result["IsTruncated"] = marker is not None
        if marker is not None:
            result["Marker"] = marker
        return ActionResult(result)


def install() -> None:
    graft(moto.iam.responses.IamResponse, AuthorizationDetailsResponse)
