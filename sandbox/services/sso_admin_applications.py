"""IAM Identity Center applications and their assignments, which moto 5.2.5 lacks.

AWS-managed applications (a SageMaker AI domain in SSO mode is one) appear in
the region's Identity Center instance when the owning service creates them;
sagemaker_studio calls ``register_application`` and ``remove_application``, and
``user_assigned`` before it creates a user profile in an SSO domain.
Added operations: DescribeInstance, ListApplications (by instance, with its
ApplicationAccount and ApplicationProvider filter), DescribeApplication, CreateApplicationAssignment,
DeleteApplicationAssignment, DescribeApplicationAssignment and
ListApplicationAssignments, validated against botocore's model, with the
principal checked against the instance's identity store (ResourceNotFoundException
for an unknown group or user, as Identity Center answers), ConflictException for
an assignment that exists, ResourceNotFoundException for one that does not.
"""

from __future__ import annotations

import json
import random
import string

import moto.ssoadmin.models
import moto.ssoadmin.responses

from sandbox import core
from sandbox.core import AwsError, graft, now_epoch, state, validate_request

PROVIDER_ARN = "arn:aws:sso::aws:applicationProvider/sagemaker"


def _not_found(message: str) -> AwsError:
    return AwsError("ResourceNotFoundException", message)


def instance_backend(account_id: str, region: str):
    """The backend of the Identity Center instance a service of ``account_id`` uses in ``region``.

    With ``identity_center_home`` set, that is the organization's instance in its management account, and only in its
    home Region: "Many AWS managed applications can also operate only in a Region where IAM Identity Center is enabled"
    ("Considerations for choosing an AWS Region", IAM Identity Center User Guide). The application is listed there with
    the member account as ``ApplicationAccount`` (ListApplications, botocore's sso-admin model: "member accounts must use
    the applicationAccount parameter to filter the list to only applications created from that account").
    """
    home = core.identity_center_home()
    if home is not None and region == home[1]:
        account_id = home[0]
    return moto.ssoadmin.models.ssoadmin_backends[account_id][region]


def register_application(account_id: str, region: str, name: str, owner_arn: str) -> dict:
    """Create the AWS-managed application a service owns in the region's instance; return it."""
    backend = instance_backend(account_id, region)
    if not backend.instances:
        raise AwsError("ValidationException", "No IAM Identity Center instance exists in this Region.")
    instance = backend.instances[0]
    instance_id = instance.instance_arn.rsplit("/", 1)[-1]
    suffix = "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(16))
    arn = f"arn:aws:sso::{backend.account_id}:application/{instance_id}/apl-{suffix}"
    application = {
        "ApplicationArn": arn,
        "ApplicationProviderArn": PROVIDER_ARN,
        "Name": name,
        "ApplicationAccount": account_id,
        "InstanceArn": instance.instance_arn,
        "Status": "ENABLED",
        "PortalOptions": {"Visibility": "ENABLED", "SignInOptions": {"Origin": "APPLICATION"}},
        "Description": f"Application for {owner_arn}",
        "CreatedDate": now_epoch(),
        "CreatedFrom": region,
    }
    state(backend, "applications")[arn] = {"application": application, "identity_store_id": instance.identity_store_id, "assignments": []}
    return application


def user_assigned(account_id: str, region: str, arn: str, user_name: str) -> bool:
    """Whether the user named ``user_name`` is assigned to application ``arn``, directly or through a group."""
    from moto.identitystore.models import identitystore_backends

    backend = instance_backend(account_id, region)
    record = state(backend, "applications").get(arn)
    if record is None:
        return False
    store = identitystore_backends[backend.account_id][region].identity_stores.get(record["identity_store_id"])
    user_ids = [user_id for user_id, user in (store.users if store else {}).items() if user.UserName == user_name]
    if not user_ids:
        return False
    groups = {m["GroupId"] for m in store.group_memberships.values() if m["MemberId"].get("UserId") in user_ids}
    return any(
        (a["PrincipalType"] == "USER" and a["PrincipalId"] in user_ids) or (a["PrincipalType"] == "GROUP" and a["PrincipalId"] in groups)
        for a in record["assignments"]
    )


def remove_application(account_id: str, region: str, arn: str) -> None:
    state(instance_backend(account_id, region), "applications").pop(arn, None)


def _purge_owners(backend) -> None:
    # A domain that finished deleting takes its application with it: the domains of every account whose service made one.
    from moto.sagemaker.models import sagemaker_backends

    owners = {(backend.account_id, backend.region_name)}
    owners |= {(r["application"]["ApplicationAccount"], r["application"]["CreatedFrom"]) for r in state(backend, "applications").values()}
    for account_id, region in sorted(owners):
        sagemaker = sagemaker_backends[account_id][region]
        if hasattr(sagemaker, "studio_purge"):
            sagemaker.studio_purge()


def _assignment(params: dict) -> dict:
    return {"ApplicationArn": params["ApplicationArn"], "PrincipalType": params["PrincipalType"], "PrincipalId": params["PrincipalId"]}


class ApplicationsBackend:
    """Grafted onto moto's SSOAdminBackend."""

    def application_record(self, arn: str) -> dict:
        _purge_owners(self)
        record = state(self, "applications").get(arn)
        if record is None:
            raise _not_found(f"Application {arn} does not exist.")
        return record

    def _application_instance(self, instance_arn: str):
        for instance in self.instances:
            if instance.instance_arn == instance_arn:
                return instance
        # botocore's model lists no not-found error for DescribeInstance or ListApplications;
        # AWS's answer for an instance of another account is not documented: ValidationException.
        raise AwsError("ValidationException", f"Instance {instance_arn} does not exist.")

    def check_principal(self, record: dict, principal_type: str, principal_id: str) -> None:
        from moto.identitystore.models import identitystore_backends

        store = identitystore_backends[self.account_id][self.region_name].identity_stores.get(record["identity_store_id"])
        found = store and (store.groups if principal_type == "GROUP" else store.users).get(principal_id)
        if not found:
            raise _not_found(f"{principal_type.capitalize()} {principal_id} does not exist in identity store {record['identity_store_id']}.")


class ApplicationsResponse:
    """Grafted onto moto's SSOAdminResponse."""

    def _application_params(self, operation: str) -> dict:
        params = json.loads(self.body or "{}")
        validate_request("sso-admin", operation, params)
        return params

    def describe_instance(self) -> str:
        params = self._application_params("DescribeInstance")
        instance = self.ssoadmin_backend._application_instance(params["InstanceArn"])
        described = instance.to_json()
        described["IdentityStoreArn"] = f"arn:aws:identitystore::{instance.account_id}:identitystore/{instance.identity_store_id}"
        described["PrimaryRegion"] = self.ssoadmin_backend.region_name
        return json.dumps({k: v for k, v in described.items() if v is not None})

    def list_applications(self) -> str:
        params = self._application_params("ListApplications")
        backend = self.ssoadmin_backend
        instance = backend._application_instance(params["InstanceArn"])
        _purge_owners(backend)
        wanted = params.get("Filter") or {}
        found = [
            r["application"]
            for r in state(backend, "applications").values()
            if r["application"]["InstanceArn"] == instance.instance_arn
            and wanted.get("ApplicationAccount") in (None, r["application"]["ApplicationAccount"])
            and wanted.get("ApplicationProvider") in (None, r["application"]["ApplicationProviderArn"])
        ]
        start = int(params["NextToken"]) if params.get("NextToken", "").isdigit() else 0
        size = params.get("MaxResults") or 100
        result: dict = {"Applications": found[start : start + size]}
        if start + size < len(found):
            result["NextToken"] = str(start + size)
        return json.dumps(result)

    def describe_application(self) -> str:
        params = self._application_params("DescribeApplication")
        return json.dumps(self.ssoadmin_backend.application_record(params["ApplicationArn"])["application"])

    def create_application_assignment(self) -> str:
        params = self._application_params("CreateApplicationAssignment")
        backend = self.ssoadmin_backend
        record = backend.application_record(params["ApplicationArn"])
        backend.check_principal(record, params["PrincipalType"], params["PrincipalId"])
        assignment = _assignment(params)
        if assignment in record["assignments"]:
            raise AwsError("ConflictException", f"{params['PrincipalType']} {params['PrincipalId']} is already assigned to the application.")
        record["assignments"].append(assignment)
        return "{}"

    def _existing_assignment(self, operation: str) -> tuple[dict, dict]:
        """The application's record and the assignment the request names; ResourceNotFoundException when it is not assigned."""
        params = self._application_params(operation)
        record = self.ssoadmin_backend.application_record(params["ApplicationArn"])
        assignment = _assignment(params)
        if assignment not in record["assignments"]:
            raise _not_found(f"{params['PrincipalType']} {params['PrincipalId']} is not assigned to the application.")
        return record, assignment

    def delete_application_assignment(self) -> str:
        record, assignment = self._existing_assignment("DeleteApplicationAssignment")
        record["assignments"].remove(assignment)
        return "{}"

    def describe_application_assignment(self) -> str:
        return json.dumps(self._existing_assignment("DescribeApplicationAssignment")[1])

    def list_application_assignments(self) -> str:
        params = self._application_params("ListApplicationAssignments")
        record = self.ssoadmin_backend.application_record(params["ApplicationArn"])
        start = int(params["NextToken"]) if params.get("NextToken", "").isdigit() else 0
        size = params.get("MaxResults") or 100
        page = record["assignments"][start : start + size]
        result: dict = {"ApplicationAssignments": page}
        if start + size < len(record["assignments"]):
            result["NextToken"] = str(start + size)
        return json.dumps(result)


def install() -> None:
    graft(moto.ssoadmin.models.SSOAdminBackend, ApplicationsBackend)
    graft(moto.ssoadmin.responses.SSOAdminResponse, ApplicationsResponse)
