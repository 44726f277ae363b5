"""SageMaker CreatePresignedDomainUrl and UpdateSpace, which moto 5.2.5 lacks (what a team member calls).

AWS answers with a URL that signs the caller into Studio as the user profile (CreatePresignedDomainUrl:
"Creates a URL for a specified UserProfile in a Domain ... the URL is valid only for 5 minutes").
Who may ask is decided on the *user profile* (its ARN and tags), which ``sandbox/authorization.py``
evaluates before this runs; the profile must exist. UpdateSpace changes a space's display name and
settings (merged as UpdateSpace merges them) and moves it through Updating to InService; a space that is
not InService is refused with ResourceInUse.
"""

from __future__ import annotations

import secrets

import moto.sagemaker.models
import moto.sagemaker.responses
from moto.core.responses import ActionResult

from sandbox.core import AwsError, graft, validate_request
from sandbox.services.sagemaker_studio import _merge_settings


class PresignedUrlBackend:
    def studio_presigned_domain_url(self, params: dict) -> dict:
        validate_request("sagemaker", "CreatePresignedDomainUrl", params)
        domain, _ = self.studio_domain(params["DomainId"])
        profile = self._studio_profiles().get((domain.id, params["UserProfileName"]))
        if profile is None:
            raise AwsError("ResourceNotFound", f"User profile '{params['UserProfileName']}' does not exist in domain {domain.id}.")
        token = secrets.token_urlsafe(24)
        return {"AuthorizedUrl": f"https://{domain.id}.studio.{self.region_name}.sagemaker.aws/auth?token={token}"}

    def studio_update_space(self, params: dict) -> dict:
        validate_request("sagemaker", "UpdateSpace", params)
        domain, _ = self.studio_domain(params["DomainId"])
        space = self._space(domain.id, params["SpaceName"])
        if space.lifecycle.status != "InService":
            raise AwsError("ResourceInUse", f"Space {space.arn} is in status {space.lifecycle.status}.")
        if "SpaceSettings" in params:
            space.settings = _merge_settings(space.settings, params["SpaceSettings"])
        if "SpaceDisplayName" in params:
            space.display_name = params["SpaceDisplayName"]
        space.lifecycle.move("Updating", "InService")
        return {"SpaceArn": space.arn}


class PresignedUrlResponse:
    def create_presigned_domain_url(self) -> ActionResult:
        return ActionResult(self.sagemaker_backend.studio_presigned_domain_url(self._studio_params()))

    def update_space(self) -> ActionResult:
        return ActionResult(self.sagemaker_backend.studio_update_space(self._studio_params()))


def install() -> None:
    graft(moto.sagemaker.models.SageMakerModelBackend, PresignedUrlBackend)
    graft(moto.sagemaker.responses.SageMakerResponse, PresignedUrlResponse)
