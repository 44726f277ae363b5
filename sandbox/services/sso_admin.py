"""IAM Identity Center (sso-admin) calls moto 5.2.5 lacks or gets wrong, and the IAM roles provisioning creates.

Added: TagResource, UntagResource, ListTagsForResource; Put/Get/DeletePermissionsBoundary…;
DescribePermissionSetProvisioningStatus. Corrected (moto's versions replaced):

- CreatePermissionSet: moto builds ARNs ``…:instance/ssoins-…/ps-…`` that break botocore's
  ``PermissionSetArn`` pattern; AWS's are ``arn:aws:sso:::permissionSet/ssoins-…/ps-…``. Names
  are unique per instance (ConflictException). SessionDuration defaults to ``PT1H``.
- UpdatePermissionSet: moto blanks every field the request leaves out; AWS keeps them.
- DeletePermissionSet: refused while the permission set is assigned to an account (ConflictException).
- Create/DeleteAccountAssignment: validated (the permission set must exist, a duplicate is a
  ConflictException) and asynchronous: ``IN_PROGRESS`` until the sandbox delay has passed, then
  ``SUCCEEDED`` (Describe…CreationStatus / …DeletionStatus).
- ListAccountsForProvisionedPermissionSet: the accounts that hold the permission set's role, and with
  ``ProvisioningStatus`` those that do (not) hold its latest version: every change to what the permission
  set grants makes the accounts' roles out of date until it is provisioned again.
- ListPermissionSetsProvisionedToAccount: the same, from the account's side, in pages (moto lists every
  permission set ever provisioned, whatever the account and status).
- ProvisionPermissionSet: ``IN_PROGRESS`` → ``SUCCEEDED`` or ``FAILED`` (a referenced customer managed
  policy missing from the account), read through DescribePermissionSetProvisioningStatus.

Quotas ("Quotas and limits in IAM Identity Center", both adjustable): permission sets per instance (3500) and permission
sets provisioned per account (500), the sandbox settings ``identity_center_permission_sets`` and
``identity_center_provisioned_per_account`` (``sandbox.core.SETTINGS``). A CreatePermissionSet in a full instance, and a
CreateAccountAssignment that would provision one more permission set to a full account, are refused with
ServiceQuotaExceededException (botocore's model lists it for both); ProvisionPermissionSet, whose model does not, fails
its request instead. So does provisioning when IAM refuses the role (its roles per account quota, services/iam_quotas.py).
The messages are the sandbox's: AWS does not document its wording.

Work in flight ("Quotas and limits in IAM Identity Center", throttle limits; none can be raised): at most 15
CreateAccountAssignment calls outstanding, 3 ProvisionPermissionSet calls at once, and one permission-set role updated at
a time per account (the settings ``identity_center_outstanding_assignments``, ``identity_center_concurrent_provisionings``
and ``identity_center_role_updates_per_account``). A request is outstanding while its status (Describe…Status) is
``IN_PROGRESS``. Assumptions, the docs being silent: a call beyond a limit is refused with ConflictException (botocore's
model lists it for both operations, "a retry (with appropriate backoff logic) is the recommended response"; AWS documents
no other answer); the limits count per instance (per sandbox backend); and "a role updated at a time per account" counts
ProvisionPermissionSet requests whose target is the account (an assignment's own first provisioning is counted by the
assignments' limit only).

Accounts and Regions: with the setting ``identity_center_home`` (``<account>/<region>``, ``sandbox.core``) the
organization's instance answers only in its management account and home Region, as AWS's admin APIs do
("IAM Identity Center Region availability": permission sets, application instances and assignments are
stored in the Region where it is enabled; ListInstances lists "the organization and account instances ...
that were created in or visible to the account calling this API", botocore's sso-admin model). Elsewhere
ListInstances answers an empty list, and a request naming an instance (``InstanceArn``) is refused with
AccessDeniedException: AWS's exact answer for another account's instance is not documented (botocore's
model lists AccessDeniedException for every operation with an InstanceArn). Without the setting every
account and Region has its own instance, as moto makes them.

Provisioning a permission set to an account (an assignment, or ProvisionPermissionSet) makes IAM
Identity Center create the role ``AWSReservedSSO_<name>_<16 hex>`` under the path
``/aws-reserved/sso.amazonaws.com/`` in that account, with the permission set's inline policy
(``AwsSSOInlinePolicy``), customer managed policies and permissions boundary. Removing the last
assignment of the permission set in an account deletes the role. The sandbox does both in moto's IAM.
"""

from __future__ import annotations

import functools
import json
import secrets
import threading
import uuid

import moto.ssoadmin.models
import moto.ssoadmin.responses
from moto.core.utils import camelcase_to_underscores, unix_time
from moto.iam.exceptions import LimitExceededException

from sandbox import core
from sandbox.core import AwsError, Lifecycle, graft, state

ROLE_PATH = "/aws-reserved/sso.amazonaws.com/"
INLINE_POLICY_NAME = "AwsSSOInlinePolicy"


# The server answers requests in threads: a limit's count and the request it admits are one step, or two requests at once
# would both see room for one.
_ADMITTING = threading.RLock()


def _admitting(method):
    @functools.wraps(method)
    def admitted(*args, **kwargs):
        with _ADMITTING:
            return method(*args, **kwargs)

    return admitted


def _not_found(message: str) -> AwsError:
    return AwsError("ResourceNotFoundException", message)


def _conflict(message: str) -> AwsError:
    return AwsError("ConflictException", message)


def _saml_trust(account_id: str, partition: str) -> str:
    provider = f"arn:{partition}:iam::{account_id}:saml-provider/AWSSSO_{secrets.token_hex(8)}_DO_NOT_DELETE"
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Federated": provider},
                    "Action": ["sts:AssumeRoleWithSAML", "sts:TagSession"],
                    "Condition": {"StringEquals": {"SAML:aud": "https://signin.aws.amazon.com/saml"}},
                }
            ],
        }
    )


def instance_visible(account_id: str, region: str) -> bool:
    """Whether Identity Center's admin APIs answer in ``account_id`` and ``region`` (``core.identity_center_home``)."""
    home = core.identity_center_home()
    return home is None or home == (account_id, region)


class SsoAdminBackend:
    """State: ``sso_requests`` (request id -> status), ``sso_roles`` ((ps arn, account) -> role name),
    ``sso_boundaries`` (ps arn -> boundary), ``sso_tags`` (instance arn -> tags)."""

    @property
    def instances(self) -> list:
        # moto's list; empty where the organization's instance does not answer (it is kept for when it does again).
        stored = self.__dict__.setdefault("_sandbox_instances", [])
        return stored if instance_visible(self.account_id, self.region_name) else []

    @instances.setter
    def instances(self, value: list) -> None:
        self.__dict__["_sandbox_instances"] = value

    def sandbox_require_instance(self, instance_arn: str, operation: str) -> None:
        """AccessDeniedException for an instance that does not answer in this account and Region."""
        if any(i.instance_arn == instance_arn for i in self.instances):
            return
        raise AwsError(
            "AccessDeniedException",
            f"User is not authorized to perform: sso:{operation} on resource: {instance_arn} from account {self.account_id} "
            f"in {self.region_name}: IAM Identity Center's admin APIs answer in the instance's management or delegated "
            "administrator account and its home Region",
        )

    def _sso_permission_set(self, instance_arn: str, permission_set_arn: str):
        return self._find_permission_set(instance_arn, permission_set_arn)

    def _sso_instance(self, instance_arn: str):
        for instance in self.instances:
            if instance.instance_arn == instance_arn:
                return instance
        raise _not_found(f"Could not find Instance with arn {instance_arn}")

    def _sso_request(self, kind: str, summary: dict, failure: str | None = None, accounts: tuple = ()) -> dict:
        request_id = str(uuid.uuid4())
        record = {"kind": kind, "summary": dict(summary, RequestId=request_id, CreatedDate=unix_time()), "lifecycle": Lifecycle("IN_PROGRESS", "SUCCEEDED")}
        # The accounts whose roles the request updates (ProvisionPermissionSet), for the per-account limit.
        record["accounts"] = tuple(accounts)
        if failure:
            record["lifecycle"].move("IN_PROGRESS", "FAILED")
            record["summary"]["FailureReason"] = failure
        state(self, "sso_requests")[request_id] = record
        return self._sso_status(record)

    @staticmethod
    def _sso_status(record: dict) -> dict:
        status = record["lifecycle"].status
        summary = dict(record["summary"], Status=status)
        if status != "FAILED":
            summary.pop("FailureReason", None)
        return summary

    def _sso_in_flight(self, kind: str, account_id: str | None = None) -> int:
        """How many ``kind`` requests are still ``IN_PROGRESS`` (those touching ``account_id``'s roles, when given)."""
        return sum(
            1
            for record in state(self, "sso_requests").values()
            if record["kind"] == kind
            and (account_id is None or account_id in record.get("accounts", ()))
            and record["lifecycle"].status == "IN_PROGRESS"
        )

    def _sso_refuse_beyond(self, kind: str, setting: str, what: str, account_id: str | None = None) -> None:
        """ConflictException when ``setting``'s limit of ``kind`` requests in flight is reached (an assumption: see above)."""
        limit = core.quota(setting)
        if self._sso_in_flight(kind, account_id) >= limit:
            raise _conflict(f"{what}: {limit} already in progress, the limit. Retry with backoff once one has completed.")

    def _sso_describe_request(self, kind: str, request_id: str) -> dict:
        record = state(self, "sso_requests").get(request_id)
        if record is None or record["kind"] != kind:
            raise _not_found(f"Could not find the {kind} request with id {request_id}")
        return self._sso_status(record)

    # --- the IAM role Identity Center keeps in each account -------------------------------------

    def _sso_iam(self, account_id: str):
        from moto.iam.models import iam_backends

        return iam_backends[account_id]["global"]

    def _sso_role_problem(self, permission_set, account_id: str) -> str | None:
        iam = self._sso_iam(account_id)
        arns = {p.arn for p in iam.managed_policies.values()}
        for reference in permission_set.customer_managed_policies:
            arn = f"arn:{self.partition}:iam::{account_id}:policy{reference.path}{reference.name}"
            if arn not in arns:
                return f"Received a 404 status error: Not supported policy {arn}."
        boundary = state(self, "sso_boundaries").get(permission_set.permission_set_arn)
        if boundary and "CustomerManagedPolicyReference" in boundary:
            ref = boundary["CustomerManagedPolicyReference"]
            arn = f"arn:{self.partition}:iam::{account_id}:policy{ref.get('Path', '/')}{ref['Name']}"
            if arn not in arns:
                return f"Received a 404 status error: Not supported policy {arn}."
        return None

    def _sso_quota_problem(self, permission_set_arn: str, account_id: str) -> str | None:
        """Why provisioning the permission set to ``account_id`` would pass the account's quota; None when it would not."""
        provisioned = {arn for arn, account in self._sso_provisioned(None) if account == account_id}
        quota = core.quota("identity_center_provisioned_per_account")
        if permission_set_arn in provisioned or len(provisioned) < quota:
            return None
        return f"Account {account_id} already has {len(provisioned)} provisioned permission sets, its quota of {quota}"

    def _sso_provision_role(self, permission_set, account_id: str) -> str | None:
        """Create or refresh the permission set's role in ``account_id``; a failure reason or None."""
        problem = self._sso_role_problem(permission_set, account_id) or self._sso_quota_problem(permission_set.permission_set_arn, account_id)
        if problem:
            return problem
        iam = self._sso_iam(account_id)
        roles = state(self, "sso_roles")
        key = (permission_set.permission_set_arn, account_id)
        name = roles.get(key)
        role = next((r for r in iam.roles.values() if r.name == name), None) if name else None
        if role is None:
            name = f"AWSReservedSSO_{permission_set.name}_{secrets.token_hex(8)}"
            try:
                role = iam.create_role(
                    role_name=name,
                    assume_role_policy_document=_saml_trust(account_id, self.partition),
                    path=ROLE_PATH,
                    permissions_boundary=None,
                    description="",
                    tags=[],
                    max_session_duration=None,
                )
            except LimitExceededException as e:
                return f"Could not create the role {name} in account {account_id}: {e.message}"
            roles[key] = name
        if permission_set.inline_policy:
            iam.put_role_policy(name, INLINE_POLICY_NAME, permission_set.inline_policy)
        elif INLINE_POLICY_NAME in role.policies:
            iam.delete_role_policy(name, INLINE_POLICY_NAME)
        wanted = {p.arn for p in permission_set.managed_policies}
        wanted |= {f"arn:{self.partition}:iam::{account_id}:policy{r.path}{r.name}" for r in permission_set.customer_managed_policies}
        known = {p.arn for p in iam.managed_policies.values()}
        for arn in list(role.managed_policies):
            if arn not in wanted:
                iam.detach_role_policy(arn, name)
        for arn in sorted(wanted - set(role.managed_policies)):
            # moto loads AWS managed policies into IAM only on request; attach the ones it knows.
            if arn in known:
                iam.attach_role_policy(arn, name)
        boundary = state(self, "sso_boundaries").get(permission_set.permission_set_arn)
        if boundary:
            if "ManagedPolicyArn" in boundary:
                boundary_arn = boundary["ManagedPolicyArn"]
            else:
                ref = boundary["CustomerManagedPolicyReference"]
                boundary_arn = f"arn:{self.partition}:iam::{account_id}:policy{ref.get('Path', '/')}{ref['Name']}"
            iam.put_role_permissions_boundary(name, boundary_arn)
        elif role.permissions_boundary:
            iam.delete_role_permissions_boundary(name)
        state(self, "sso_provisioned_versions")[key] = state(self, "sso_versions").get(permission_set.permission_set_arn, 0)
        return None

    def _sso_remove_role(self, permission_set_arn: str, account_id: str) -> None:
        state(self, "sso_provisioned_versions").pop((permission_set_arn, account_id), None)
        name = state(self, "sso_roles").pop((permission_set_arn, account_id), None)
        if not name:
            return
        iam = self._sso_iam(account_id)
        role = next((r for r in iam.roles.values() if r.name == name), None)
        if role is None:
            return
        for policy_name in list(role.policies):
            iam.delete_role_policy(name, policy_name)
        for arn in list(role.managed_policies):
            iam.detach_role_policy(arn, name)
        iam.delete_role(name)

    def _sso_bump(self, permission_set_arn: str) -> None:
        """The permission set changed: the accounts' roles hold an older version until provisioned again."""
        versions = state(self, "sso_versions")
        versions[permission_set_arn] = versions.get(permission_set_arn, 0) + 1

    def _sso_provisioned(self, provisioning_status: str | None) -> list:
        """(permission set ARN, account) of every role provisioning made, filtered by ``ProvisioningStatus``."""
        versions, provisioned = state(self, "sso_versions"), state(self, "sso_provisioned_versions")
        found = []
        for arn, account in state(self, "sso_roles"):
            latest = provisioned.get((arn, account)) == versions.get(arn, 0)
            if provisioning_status is None or (provisioning_status == "LATEST_PERMISSION_SET_PROVISIONED") == latest:
                found.append((arn, account))
        return sorted(found)

    def _sso_accounts(self, permission_set_arn: str, provisioning_status: str | None = None) -> list:
        return [account for arn, account in self._sso_provisioned(provisioning_status) if arn == permission_set_arn]

    def _sso_permission_sets_in(self, instance_arn: str, account_id: str, provisioning_status: str | None) -> list:
        instance_sets = {ps.permission_set_arn for ps in self.permission_sets if ps.instance_arn == instance_arn}
        return [arn for arn, account in self._sso_provisioned(provisioning_status) if account == account_id and arn in instance_sets]

    def _sso_assigned_accounts(self, permission_set_arn: str) -> set:
        return {a.target_id for a in self.account_assignments if a.permission_set_arn == permission_set_arn}

    # --- operations -------------------------------------------------------------------------------

    def sandbox_create_permission_set(self, name, description, instance_arn, session_duration, relay_state, tags) -> dict:
        self._sso_instance(instance_arn)
        if any(ps.name == name and ps.instance_arn == instance_arn for ps in self.permission_sets):
            raise _conflict(f"PermissionSet with name {name} already exists.")
        quota = core.quota("identity_center_permission_sets")
        if sum(ps.instance_arn == instance_arn for ps in self.permission_sets) >= quota:
            raise AwsError("ServiceQuotaExceededException", f"Instance {instance_arn} already has {quota} permission sets, its quota")
        created = self.create_permission_set(name, description, instance_arn, session_duration, relay_state, tags or [])
        permission_set = self.permission_sets[-1]
        permission_set.permission_set_arn = permission_set.permission_set_arn.replace(":instance/", ":permissionSet/", 1)
        created["PermissionSetArn"] = permission_set.permission_set_arn
        return created

    def sandbox_update_permission_set(self, instance_arn, permission_set_arn, description, session_duration, relay_state) -> None:
        permission_set = self._sso_permission_set(instance_arn, permission_set_arn)
        if description is not None:
            permission_set.description = description
        if session_duration is not None:
            permission_set.session_duration = session_duration
        if relay_state is not None:
            permission_set.relay_state = relay_state
        self._sso_bump(permission_set_arn)

    def sandbox_delete_permission_set(self, instance_arn, permission_set_arn) -> None:
        self._sso_permission_set(instance_arn, permission_set_arn)
        if self._sso_assigned_accounts(permission_set_arn):
            raise _conflict("Could not delete because PermissionSet has ApplicationProfile associated with it")
        for (arn, account) in list(state(self, "sso_roles")):
            if arn == permission_set_arn:
                self._sso_remove_role(arn, account)
        state(self, "sso_boundaries").pop(permission_set_arn, None)
        self.delete_permission_set(instance_arn, permission_set_arn)

    @_admitting
    def sandbox_create_account_assignment(self, p: dict) -> dict:
        permission_set = self._sso_permission_set(p["InstanceArn"], p["PermissionSetArn"])
        for a in self.account_assignments:
            same = (a.instance_arn, a.target_id, a.permission_set_arn, a.principal_type, a.principal_id)
            if same == (p["InstanceArn"], p["TargetId"], p["PermissionSetArn"], p["PrincipalType"], p["PrincipalId"]):
                raise _conflict("The specified account assignment already exists.")
        self._sso_refuse_beyond("AccountAssignmentCreation", "identity_center_outstanding_assignments", "CreateAccountAssignment calls outstanding")
        problem = self._sso_quota_problem(p["PermissionSetArn"], p["TargetId"])
        if problem:
            raise AwsError("ServiceQuotaExceededException", problem)
        self.create_account_assignment(p["InstanceArn"], p["TargetId"], p["TargetType"], p["PermissionSetArn"], p["PrincipalType"], p["PrincipalId"])
        failure = self._sso_provision_role(permission_set, p["TargetId"])
        if failure:
            self.account_assignments.pop()
        summary = {k: p[k] for k in ("TargetId", "TargetType", "PermissionSetArn", "PrincipalType", "PrincipalId")}
        return self._sso_request("AccountAssignmentCreation", summary, failure)

    def sandbox_delete_account_assignment(self, p: dict) -> dict:
        self._sso_permission_set(p["InstanceArn"], p["PermissionSetArn"])
        try:
            self.delete_account_assignment(p["InstanceArn"], p["TargetId"], p["TargetType"], p["PermissionSetArn"], p["PrincipalType"], p["PrincipalId"])
        except moto.ssoadmin.models.ResourceNotFoundException:
            raise _not_found("The specified account assignment does not exist.") from None
        if p["TargetId"] not in self._sso_assigned_accounts(p["PermissionSetArn"]):
            self._sso_remove_role(p["PermissionSetArn"], p["TargetId"])
        summary = {k: p[k] for k in ("TargetId", "TargetType", "PermissionSetArn", "PrincipalType", "PrincipalId")}
        return self._sso_request("AccountAssignmentDeletion", summary)

    @_admitting
    def sandbox_provision_permission_set(self, instance_arn, permission_set_arn, target_type, target_id) -> dict:
        permission_set = self._sso_permission_set(instance_arn, permission_set_arn)
        if target_type == "AWS_ACCOUNT":
            if not target_id:
                raise AwsError("ValidationException", "TargetId is required when TargetType is AWS_ACCOUNT")
            accounts = [target_id]
        else:
            if target_id:
                raise AwsError("ValidationException", "TargetId must not be set when TargetType is ALL_PROVISIONED_ACCOUNTS")
            accounts = self._sso_accounts(permission_set_arn)
        self._sso_refuse_beyond("PermissionSetProvisioning", "identity_center_concurrent_provisionings", "ProvisionPermissionSet calls")
        for account in accounts:
            self._sso_refuse_beyond(
                "PermissionSetProvisioning", "identity_center_role_updates_per_account", f"Permission set roles being updated in account {account}", account
            )
        failure = None
        for account in accounts:
            failure = failure or self._sso_provision_role(permission_set, account)
        instance = self._sso_instance(instance_arn)
        if permission_set not in instance.provisioned_permission_sets:
            instance.provisioned_permission_sets.append(permission_set)
        summary = {"PermissionSetArn": permission_set_arn}
        if target_type == "AWS_ACCOUNT":
            summary["AccountId"] = target_id
        return self._sso_request("PermissionSetProvisioning", summary, failure, accounts)

    def sandbox_put_permissions_boundary(self, instance_arn, permission_set_arn, boundary: dict) -> None:
        self._sso_permission_set(instance_arn, permission_set_arn)
        given = [k for k in ("CustomerManagedPolicyReference", "ManagedPolicyArn") if boundary.get(k)]
        if len(given) != 1:
            raise AwsError("ValidationException", "Exactly one of CustomerManagedPolicyReference and ManagedPolicyArn must be specified.")
        if given == ["ManagedPolicyArn"]:
            self._find_managed_policy(boundary["ManagedPolicyArn"])
            value = {"ManagedPolicyArn": boundary["ManagedPolicyArn"]}
        else:
            ref = boundary["CustomerManagedPolicyReference"]
            value = {"CustomerManagedPolicyReference": {"Name": ref["Name"], "Path": ref.get("Path", "/")}}
        state(self, "sso_boundaries")[permission_set_arn] = value
        self._sso_bump(permission_set_arn)

    def sandbox_get_permissions_boundary(self, instance_arn, permission_set_arn) -> dict:
        self._sso_permission_set(instance_arn, permission_set_arn)
        boundary = state(self, "sso_boundaries").get(permission_set_arn)
        if boundary is None:
            raise _not_found(f"Could not find PermissionsBoundary for PermissionSet with id {permission_set_arn.split('/')[-1]}")
        return boundary

    def sandbox_delete_permissions_boundary(self, instance_arn, permission_set_arn) -> None:
        self.sandbox_get_permissions_boundary(instance_arn, permission_set_arn)
        del state(self, "sso_boundaries")[permission_set_arn]
        self._sso_bump(permission_set_arn)

    def _sso_tag_holder(self, resource_arn: str, instance_arn: str | None):
        """(get, set) for the tag list of a permission set or an instance."""
        if ":permissionSet/" in resource_arn:
            for permission_set in self.permission_sets:
                if permission_set.permission_set_arn == resource_arn and (instance_arn is None or permission_set.instance_arn == instance_arn):
                    return (lambda ps=permission_set: list(ps.tags or [])), (lambda tags, ps=permission_set: setattr(ps, "tags", tags))
            raise _not_found(f"Could not find PermissionSet with id {resource_arn.split('/')[-1]}")
        if ":instance/" in resource_arn:
            self._sso_instance(resource_arn)
            tags = state(self, "sso_tags")
            return (lambda: list(tags.get(resource_arn, []))), (lambda value: tags.__setitem__(resource_arn, value))
        raise _not_found(f"Could not find resource {resource_arn}")

    def sandbox_tag_resource(self, resource_arn, instance_arn, tags: list) -> None:
        get, put = self._sso_tag_holder(resource_arn, instance_arn)
        merged = {t["Key"]: t["Value"] for t in get()}
        merged.update({t["Key"]: t["Value"] for t in tags})
        if len(merged) > 50:
            raise AwsError("ServiceQuotaExceededException", "A resource can have at most 50 tags.")
        put([{"Key": k, "Value": v} for k, v in merged.items()])

    def sandbox_untag_resource(self, resource_arn, instance_arn, keys: list) -> None:
        get, put = self._sso_tag_holder(resource_arn, instance_arn)
        put([t for t in get() if t["Key"] not in keys])

    def sandbox_list_tags(self, resource_arn, instance_arn) -> list:
        return self._sso_tag_holder(resource_arn, instance_arn)[0]()


class SsoAdminResponse:
    def _sso_params(self, operation: str) -> dict:
        params = json.loads(self.body) if self.body else {}
        core.validate_request("sso-admin", operation, params)
        return params

    def _forward(self, operation: str, method: str, *members: str, answer: str | None = None) -> str:
        return core.forwarded(getattr(self.ssoadmin_backend, method), self._sso_params(operation), members, answer)

    def _request_status(self, operation: str, kind: str, request_id: str, answer: str) -> str:
        p = self._sso_params(operation)
        return json.dumps({answer: self.ssoadmin_backend._sso_describe_request(kind, p[request_id])})

    def create_permission_set(self) -> str:
        p = self._sso_params("CreatePermissionSet")
        created = self.ssoadmin_backend.sandbox_create_permission_set(
            p["Name"], p.get("Description"), p["InstanceArn"], p.get("SessionDuration", "PT1H"), p.get("RelayState"), p.get("Tags")
        )
        return json.dumps({"PermissionSet": {k: v for k, v in created.items() if v is not None}})

    def describe_permission_set(self) -> str:
        p = self._sso_params("DescribePermissionSet")
        found = self.ssoadmin_backend._sso_permission_set(p["InstanceArn"], p["PermissionSetArn"]).to_json(True)
        return json.dumps({"PermissionSet": {k: v for k, v in found.items() if v is not None}})

    def update_permission_set(self) -> str:
        p = self._sso_params("UpdatePermissionSet")
        self.ssoadmin_backend.sandbox_update_permission_set(
            p["InstanceArn"], p["PermissionSetArn"], p.get("Description"), p.get("SessionDuration"), p.get("RelayState")
        )
        return "{}"

    def delete_permission_set(self) -> str:
        return self._forward("DeletePermissionSet", "sandbox_delete_permission_set", "InstanceArn", "PermissionSetArn")

    def create_account_assignment(self) -> str:
        p = self._sso_params("CreateAccountAssignment")
        return json.dumps({"AccountAssignmentCreationStatus": self.ssoadmin_backend.sandbox_create_account_assignment(p)})

    def delete_account_assignment(self) -> str:
        p = self._sso_params("DeleteAccountAssignment")
        return json.dumps({"AccountAssignmentDeletionStatus": self.ssoadmin_backend.sandbox_delete_account_assignment(p)})

    def describe_account_assignment_creation_status(self) -> str:
        return self._request_status(
            "DescribeAccountAssignmentCreationStatus", "AccountAssignmentCreation", "AccountAssignmentCreationRequestId", "AccountAssignmentCreationStatus"
        )

    def describe_account_assignment_deletion_status(self) -> str:
        return self._request_status(
            "DescribeAccountAssignmentDeletionStatus", "AccountAssignmentDeletion", "AccountAssignmentDeletionRequestId", "AccountAssignmentDeletionStatus"
        )

    def provision_permission_set(self) -> str:
        members = ("InstanceArn", "PermissionSetArn", "TargetType", "TargetId")
        return self._forward("ProvisionPermissionSet", "sandbox_provision_permission_set", *members, answer="PermissionSetProvisioningStatus")

    def describe_permission_set_provisioning_status(self) -> str:
        return self._request_status(
            "DescribePermissionSetProvisioningStatus", "PermissionSetProvisioning", "ProvisionPermissionSetRequestId", "PermissionSetProvisioningStatus"
        )

    def put_permissions_boundary_to_permission_set(self) -> str:
        members = ("InstanceArn", "PermissionSetArn", "PermissionsBoundary")
        return self._forward("PutPermissionsBoundaryToPermissionSet", "sandbox_put_permissions_boundary", *members)

    def get_permissions_boundary_for_permission_set(self) -> str:
        members = ("InstanceArn", "PermissionSetArn")
        return self._forward("GetPermissionsBoundaryForPermissionSet", "sandbox_get_permissions_boundary", *members, answer="PermissionsBoundary")

    def delete_permissions_boundary_from_permission_set(self) -> str:
        return self._forward("DeletePermissionsBoundaryFromPermissionSet", "sandbox_delete_permissions_boundary", "InstanceArn", "PermissionSetArn")

    def tag_resource(self) -> str:
        return self._forward("TagResource", "sandbox_tag_resource", "ResourceArn", "InstanceArn", "Tags")

    def untag_resource(self) -> str:
        return self._forward("UntagResource", "sandbox_untag_resource", "ResourceArn", "InstanceArn", "TagKeys")

    def list_accounts_for_provisioned_permission_set(self) -> str:
        # moto answers its own account for any provisioned permission set; AWS lists the accounts holding its
        # role, filtered by whether they hold its latest version (ProvisioningStatus).
        p = self._sso_params("ListAccountsForProvisionedPermissionSet")
        backend = self.ssoadmin_backend
        backend._sso_permission_set(p["InstanceArn"], p["PermissionSetArn"])
        return json.dumps({"AccountIds": backend._sso_accounts(p["PermissionSetArn"], p.get("ProvisioningStatus"))})

    def list_permission_sets_provisioned_to_account(self) -> str:
        # moto ignores AccountId, ProvisioningStatus and paging: it lists every permission set ever provisioned.
        p = self._sso_params("ListPermissionSetsProvisionedToAccount")
        backend = self.ssoadmin_backend
        backend._sso_instance(p["InstanceArn"])
        arns = backend._sso_permission_sets_in(p["InstanceArn"], p["AccountId"], p.get("ProvisioningStatus"))
        refuse = lambda: AwsError("ValidationException", "The nextToken provided is not valid")
        page, token = core.page(arns, p.get("MaxResults"), p.get("NextToken"), refuse)
        return json.dumps(dict({"PermissionSets": page}, **({"NextToken": token} if token else {})))

    def list_tags_for_resource(self) -> str:
        return self._forward("ListTagsForResource", "sandbox_list_tags", "ResourceArn", "InstanceArn", answer="Tags")


# moto's operations that change what a permission set grants.
CONTENT_WRITES = (
    "put_inline_policy_to_permission_set",
    "delete_inline_policy_from_permission_set",
    "attach_managed_policy_to_permission_set",
    "detach_managed_policy_from_permission_set",
    "attach_customer_managed_policy_reference_to_permission_set",
    "detach_customer_managed_policy_reference_from_permission_set",
)


def _track_content_writes() -> None:
    backend_cls = moto.ssoadmin.models.SSOAdminBackend
    for name in CONTENT_WRITES:
        original = getattr(backend_cls, name)
        if getattr(original, "_bumps_version", False):
            continue

        def wrapper(self, *args, _original=original, **kwargs):
            result = _original(self, *args, **kwargs)
            self._sso_bump(kwargs.get("permission_set_arn") or args[1])
            return result

        wrapper._bumps_version = True
        setattr(backend_cls, name, wrapper)


def _keep_instances() -> None:
    """moto's __init__ appends its instance through ``instances``: keep it where that list reads empty."""
    backend_cls = moto.ssoadmin.models.SSOAdminBackend
    original = backend_cls.__init__
    if getattr(original, "_keeps_instances", False):
        return

    def __init__(self, region_name: str, account_id: str) -> None:
        original(self, region_name, account_id)
        if not self.__dict__.get("_sandbox_instances"):
            self.__dict__["_sandbox_instances"] = [moto.ssoadmin.models.Instance(self.account_id, self.region_name)]

    __init__._keeps_instances = True
    backend_cls.__init__ = __init__


def _require_instances() -> None:
    """Every operation whose request names an instance answers only where the instance does (instance_visible)."""
    response_cls = moto.ssoadmin.responses.SSOAdminResponse
    model = core.service_model("sso-admin")
    for operation in model.operation_names:
        shape = model.operation_model(operation).input_shape
        name = camelcase_to_underscores(operation)
        method = getattr(response_cls, name, None)
        if shape is None or "InstanceArn" not in shape.members or method is None or getattr(method, "_requires_instance", False):
            continue

        def checked(self, _method=method, _operation=operation):
            instance_arn = (json.loads(self.body) if self.body else {}).get("InstanceArn")
            if isinstance(instance_arn, str):
                self.ssoadmin_backend.sandbox_require_instance(instance_arn, _operation)
            return _method(self)

        checked._requires_instance = True
        checked.__name__ = name
        setattr(response_cls, name, checked)


def install() -> None:
    graft(moto.ssoadmin.models.SSOAdminBackend, SsoAdminBackend)
    _keep_instances()
    _track_content_writes()
    graft(moto.ssoadmin.responses.SSOAdminResponse, SsoAdminResponse)
    _require_instances()
