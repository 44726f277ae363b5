"""SageMaker AI domains (Studio) as AWS runs them, on top of moto 5.2.5's Domain.

moto keeps domains (``SageMakerModelBackend.domains``, its ``Domain`` objects and
their tags); this addition keeps that data and adds what AWS does around it:

- CreateDomain/DescribeDomain/ListDomains/DeleteDomain validate against botocore's
  model; the domain id is ``d-`` and 12 characters as AWS's; status moves
  Pending -> InService and Deleting -> gone (DescribeDomain then answers
  ResourceNotFound, not moto's ValidationException); only SSO domains get a
  ``SingleSignOnApplicationArn`` (an Identity Center application of the region's
  instance, registered with sso_admin_applications so it can be assigned; with the
  ``legacy_sso_domains`` setting, new SSO domains are as those created before
  1 October 2023, whose DescribeDomain has no ``SingleSignOnApplicationArn``);
  subnets and security groups must exist in the domain's VPC, an FSx file system
  named in ``CustomFileSystemConfigs`` must exist; the home EFS file system is a
  real moto EFS file system, deleted with the domain only when
  ``RetentionPolicy.HomeEfsFileSystem`` is ``Delete`` (AWS's default is Retain).
- UpdateDomain: only when InService; VpcId cannot change; subnets must stay in
  the VPC; AppNetworkAccessType or removing subnets needs no running apps.
- User profiles (Create/Describe/Update/Delete/ListUserProfiles): Pending ->
  InService, Updating -> InService, Deleting -> gone; SSO domains need
  ``SingleSignOnUserIdentifier=UserName`` and a ``SingleSignOnUserValue`` that is
  a user of the instance's identity store, assigned (itself or through a group) to
  the domain's Identity Center application, one profile per user; IAM domains take
  neither.
- Spaces and apps (Create/Describe/Delete/List), so deletion order is enforced:
  DeleteDomain is ResourceInUse while user profiles, spaces or apps remain;
  DeleteUserProfile and DeleteSpace while their apps run (or, for a profile, while
  it owns spaces). Deleted apps stay listed with status Deleted, as in AWS.
"""

from __future__ import annotations

import copy
import json
import random
import string

import moto.sagemaker.models
import moto.sagemaker.responses
from moto.core.responses import ActionResult, EmptyResult
from moto.core.utils import utcnow

from sandbox import iam_propagation
from sandbox.core import AwsError, Lifecycle, graft, page, setting, state, validate_request

GONE = "Gone"
APP_ACTIVE = ("InService", "Pending", "Deleting")
_ID_CHARS = string.ascii_lowercase + string.digits


def _validation(message: str) -> AwsError:
    return AwsError("ValidationException", message)


def _not_found(message: str) -> AwsError:
    return AwsError("ResourceNotFound", message)


def _in_use(message: str) -> AwsError:
    return AwsError("ResourceInUse", message)


def _random_id(length: int = 12) -> str:
    return "".join(random.choice(_ID_CHARS) for _ in range(length))


class _Extra:
    """What the addition keeps about a moto Domain besides moto's own fields."""

    def __init__(self, tag_propagation: str, home_efs_creation: str | None):
        self.lifecycle = Lifecycle("Pending", "InService")
        self.tag_propagation = tag_propagation
        self.home_efs_creation = home_efs_creation
        self.retention: str | None = None
        # A domain as SSO domains created before 1 October 2023 are (the ``legacy_sso_domains`` setting).
        self.legacy = False


class _InDomain:
    """A user profile, space or app: known by its domain and name, Pending -> InService once created."""

    def __init__(self, domain_id: str, name: str, arn: str):
        self.domain_id = domain_id
        self.name = name
        self.arn = arn
        self.lifecycle = Lifecycle("Pending", "InService")
        self.created = utcnow()
        self.modified = self.created


class _Profile(_InDomain):
    def __init__(self, domain_id: str, name: str, arn: str, uid: str, sso_identifier, sso_value, settings, tags):
        super().__init__(domain_id, name, arn)
        self.uid = uid
        self.sso_identifier = sso_identifier
        self.sso_value = sso_value
        self.settings = settings or {}
        self.tags = tags or []

    def describe(self) -> dict:
        result = {
            "DomainId": self.domain_id,
            "UserProfileArn": self.arn,
            "UserProfileName": self.name,
            "HomeEfsFileSystemUid": self.uid,
            "Status": self.lifecycle.status,
            "CreationTime": self.created,
            "LastModifiedTime": self.modified,
            "UserSettings": copy.deepcopy(self.settings),
        }
        if self.sso_identifier:
            result["SingleSignOnUserIdentifier"] = self.sso_identifier
            result["SingleSignOnUserValue"] = self.sso_value
        return result

    def summary(self) -> dict:
        return {k: v for k, v in self.describe().items() if k in ("DomainId", "UserProfileName", "Status", "CreationTime", "LastModifiedTime")}


class _Space(_InDomain):
    def __init__(self, domain_id: str, name: str, arn: str, owner: str | None, settings, sharing, display_name):
        super().__init__(domain_id, name, arn)
        self.owner = owner
        self.settings = settings or {}
        self.sharing = sharing
        self.display_name = display_name

    def describe(self) -> dict:
        result = {
            "DomainId": self.domain_id,
            "SpaceArn": self.arn,
            "SpaceName": self.name,
            "Status": self.lifecycle.status,
            "CreationTime": self.created,
            "LastModifiedTime": self.modified,
            "SpaceSettings": copy.deepcopy(self.settings),
        }
        if self.owner:
            result["OwnershipSettings"] = {"OwnerUserProfileName": self.owner}
        if self.sharing:
            result["SpaceSharingSettings"] = copy.deepcopy(self.sharing)
        if self.display_name:
            result["SpaceDisplayName"] = self.display_name
        return result

    def summary(self) -> dict:
        result = {k: v for k, v in self.describe().items() if k in ("DomainId", "SpaceName", "Status", "CreationTime", "LastModifiedTime", "SpaceDisplayName")}
        if self.owner:
            result["OwnershipSettingsSummary"] = {"OwnerUserProfileName": self.owner}
        return result


class _App(_InDomain):
    def __init__(self, domain_id: str, user: str | None, space: str | None, app_type: str, name: str, arn: str, spec):
        super().__init__(domain_id, name, arn)
        self.user = user
        self.space = space
        self.app_type = app_type
        self.spec = spec

    def describe(self) -> dict:
        result = {
            "AppArn": self.arn,
            "AppType": self.app_type,
            "AppName": self.name,
            "DomainId": self.domain_id,
            "Status": self.lifecycle.status,
            "CreationTime": self.created,
        }
        if self.user:
            result["UserProfileName"] = self.user
        if self.space:
            result["SpaceName"] = self.space
        if self.spec:
            result["ResourceSpec"] = copy.deepcopy(self.spec)
        return result

    def summary(self) -> dict:
        return {k: v for k, v in self.describe().items() if k != "AppArn"}

    @property
    def active(self) -> bool:
        return self.lifecycle.status in APP_ACTIVE


def _merge_settings(current: dict, update: dict | None) -> dict:
    """AWS's update semantics for UserSettings/DomainSettings: members sent replace, others stay."""
    merged = copy.deepcopy(current or {})
    for key, value in (update or {}).items():
        merged[key] = copy.deepcopy(value)
    return merged


def _listed(items, params: dict, **filters) -> list:
    """``items`` that pass each filter the request sets (name -> test(item, value)), sorted as it asks."""
    found = [item for item in items if all(test(item, params[name]) for name, test in filters.items() if params.get(name))]
    key = "modified" if params.get("SortBy") == "LastModifiedTime" else "created"
    found.sort(key=lambda item: getattr(item, key), reverse=params.get("SortOrder", "Descending") == "Descending")
    return found


def _refuse_unless_settled(what: str, lifecycle: Lifecycle, action: str) -> None:
    """AWS refuses to delete what is still being created, updated or deleted."""
    if lifecycle.status in ("Pending", "Updating", "Deleting"):
        raise _in_use(f"{what} is in status {lifecycle.status} and cannot be {action}.")


def _page(items: list, max_results, next_token) -> tuple[list, str | None]:
    return page(items, max_results, next_token, lambda: _validation(f"Invalid pagination token: {next_token}"))


class StudioBackend:
    """Grafted onto moto's SageMakerModelBackend."""

    # ------------------------------------------------------------------ helpers

    def _studio_extras(self) -> dict:
        return state(self, "studio_domains")

    def _studio_profiles(self) -> dict:
        return state(self, "studio_user_profiles")

    def _studio_spaces(self) -> dict:
        return state(self, "studio_spaces")

    def _studio_apps(self) -> dict:
        return state(self, "studio_apps")

    def studio_purge(self) -> None:
        """Forget what finished deleting: domains (with what AWS deletes with them), profiles, spaces."""
        for key, profile in list(self._studio_profiles().items()):
            if profile.lifecycle.status == GONE:
                del self._studio_profiles()[key]
        for key, space in list(self._studio_spaces().items()):
            if space.lifecycle.status == GONE:
                del self._studio_spaces()[key]
        for domain_id, extra in list(self._studio_extras().items()):
            if extra.lifecycle.status != GONE:
                continue
            domain = self.domains.pop(domain_id, None)
            del self._studio_extras()[domain_id]
            for store in (self._studio_profiles(), self._studio_spaces(), self._studio_apps()):
                for key in [k for k in store if k[0] == domain_id]:
                    del store[key]
            if domain is None:
                continue
            if extra.retention == "Delete" and domain.home_efs_file_system_id:
                from moto.efs.models import efs_backends

                efs = efs_backends[self.account_id][self.region_name]
                if domain.home_efs_file_system_id in efs.file_systems_by_id:
                    efs.delete_file_system(domain.home_efs_file_system_id)
            if domain.single_sign_on_managed_application_arn:
                from sandbox.services.sso_admin_applications import remove_application

                remove_application(self.account_id, self.region_name, domain.single_sign_on_managed_application_arn)

    def studio_domain(self, domain_id: str, missing=_not_found):
        self.studio_purge()
        domain = self.domains.get(domain_id)
        if domain is None or domain_id not in self._studio_extras():
            raise missing(f"Domain '{self._domain_arn(domain_id)}' does not exist.")
        return domain, self._studio_extras()[domain_id]

    def _domain_to_create_in(self, domain_id: str, what: str):
        """The domain, when ``what`` can be created in it (a missing domain is a ValidationException here)."""
        domain, extra = self.studio_domain(domain_id, missing=_validation)
        if extra.lifecycle.status not in ("InService", "Updating"):
            raise _in_use(f"Domain {domain.arn} is in status {extra.lifecycle.status}; {what} cannot be created.")
        return domain

    def _domain_arn(self, domain_id: str) -> str:
        return f"arn:aws:sagemaker:{self.region_name}:{self.account_id}:domain/{domain_id}"

    def studio_describe_domain(self, domain) -> dict:
        extra = self._studio_extras()[domain.id]
        result = domain.describe()
        result["Status"] = extra.lifecycle.status
        result["TagPropagation"] = extra.tag_propagation
        if extra.home_efs_creation:
            result["HomeEfsFileSystemCreation"] = extra.home_efs_creation
        if extra.legacy:
            # "This value is only returned for domains created after October 1, 2023" (botocore's
            # DescribeDomain documentation of SingleSignOnApplicationArn).
            result.pop("SingleSignOnApplicationArn", None)
        for key in ("SingleSignOnManagedApplicationInstanceId", "SingleSignOnApplicationArn", "FailureReason"):
            if not result.get(key):
                result.pop(key, None)
        return {k: v for k, v in result.items() if v is not None}

    def _check_network(self, vpc_id: str | None, subnet_ids, security_groups, where: str) -> None:
        from moto.ec2.models import ec2_backends

        ec2 = ec2_backends[self.account_id][self.region_name]
        for subnet_id in subnet_ids or []:
            try:
                subnet = ec2.get_subnet(subnet_id)
            except Exception:
                raise _validation(f"Subnet {subnet_id} does not exist.") from None
            if vpc_id and subnet.vpc_id != vpc_id:
                raise _validation(f"Subnet {subnet_id} does not belong to VPC {vpc_id}.")
        for group_id in security_groups or []:
            group = ec2.get_security_group_from_id(group_id)
            if group is None:
                raise _validation(f"Security group {group_id} in {where} does not exist.")
            if vpc_id and group.vpc_id != vpc_id:
                raise _validation(f"Security group {group_id} in {where} does not belong to VPC {vpc_id}.")

    def _check_file_systems(self, settings: dict | None, where: str) -> None:
        from moto.fsx.models import fsx_backends

        fsx = fsx_backends[self.account_id][self.region_name]
        for config in (settings or {}).get("CustomFileSystemConfigs") or []:
            lustre = config.get("FSxLustreFileSystemConfig")
            if lustre and lustre["FileSystemId"] not in fsx.file_systems:
                raise _validation(f"FSx for Lustre file system {lustre['FileSystemId']} in {where} does not exist.")

    def _active_apps(self, domain_id: str, user: str | None = None, space: str | None = None) -> list:
        return [
            app
            for key, app in self._studio_apps().items()
            if key[0] == domain_id and app.active and (user is None or app.user == user) and (space is None or app.space == space)
        ]

    # ------------------------------------------------------------------ domains

    def studio_create_domain(self, params: dict) -> dict:
        validate_request("sagemaker", "CreateDomain", params)
        iam_propagation.refuse_new_role("CreateDomain", self.account_id, (params.get("DefaultUserSettings") or {}).get("ExecutionRole"))
        self.studio_purge()
        # A second domain of a name in use is accepted: AWS documents no uniqueness of DomainName (a
        # domain is known by its DomainId) and accepts such a domain (issue 21). Had AWS refused it,
        # the collection would be right too: sagemaker_domain refuses to pick one of two domains of a
        # name, and a run that created a twin deletes its own (DomainManager._yield_to_an_earlier_twin).
        name = params["DomainName"]
        vpc_id, subnets = params.get("VpcId"), params.get("SubnetIds")
        settings = params["DefaultUserSettings"]
        access = params.get("AppNetworkAccessType") or "PublicInternetOnly"
        if access == "VpcOnly" and not (vpc_id and subnets):
            raise _validation("VpcId and SubnetIds are required when AppNetworkAccessType is VpcOnly.")
        if access == "VpcOnly" and not settings.get("SecurityGroups"):
            raise _validation("DefaultUserSettings.SecurityGroups is required when AppNetworkAccessType is VpcOnly.")
        if subnets and not vpc_id:
            raise _validation("VpcId is required when SubnetIds are given.")
        self._check_network(vpc_id, subnets, settings.get("SecurityGroups"), "DefaultUserSettings")
        self._check_network(vpc_id, None, (params.get("DomainSettings") or {}).get("SecurityGroupIds"), "DomainSettings")
        self._check_file_systems(settings, "DefaultUserSettings")

        domain = moto.sagemaker.models.Domain(
            domain_name=name,
            auth_mode=params["AuthMode"],
            default_user_settings=copy.deepcopy(settings),
            subnet_ids=subnets,
            vpc_id=vpc_id,
            account_id=self.account_id,
            region_name=self.region_name,
            domain_settings=params.get("DomainSettings"),
            tags=list(params.get("Tags") or []),
            app_network_access_type=access,
            home_efs_file_system_kms_key_id=params.get("HomeEfsFileSystemKmsKeyId"),
            kms_key_id=params.get("KmsKeyId"),
            app_security_group_management=params.get("AppSecurityGroupManagement"),
            default_space_settings=params.get("DefaultSpaceSettings"),
        )
        # AWS's identifiers, not moto's name-derived ones.
        domain.id = "d-" + _random_id()
        domain.arn = self._domain_arn(domain.id)
        domain.url = f"https://{domain.id}.studio.{self.region_name}.sagemaker.aws"
        domain.security_group_id_for_domain_boundary = None
        domain.home_efs_file_system_id = None
        if params.get("HomeEfsFileSystemCreation") != "Disabled":
            from moto.efs.models import efs_backends

            efs = efs_backends[self.account_id][self.region_name].create_file_system(
                creation_token=f"{domain.id}-home",
                performance_mode="generalPurpose",
                encrypted=True,
                kms_key_id=domain.home_efs_file_system_kms_key_id,
                throughput_mode="bursting",
                provisioned_throughput_in_mibps=None,
                availability_zone_name=None,
                backup=False,
                tags=[{"Key": "ManagedByAmazonSageMakerResource", "Value": domain.arn}],
            )
            domain.home_efs_file_system_id = efs.file_system_id
        if params["AuthMode"] == "SSO":
            from sandbox.services.sso_admin_applications import register_application

            application = register_application(self.account_id, self.region_name, f"SageMakerStudio-{domain.id}", domain.arn)
            domain.single_sign_on_managed_application_arn = application["ApplicationArn"]
            domain.single_sign_on_managed_application_instance_id = application["ApplicationArn"].rsplit("/", 1)[-1]
        else:
            domain.single_sign_on_managed_application_arn = None
            domain.single_sign_on_managed_application_instance_id = None
        self.domains[domain.id] = domain
        extra = self._studio_extras()[domain.id] = _Extra(params.get("TagPropagation") or "DISABLED", params.get("HomeEfsFileSystemCreation"))
        extra.legacy = params["AuthMode"] == "SSO" and setting("legacy_sso_domains") > 0
        return {"DomainArn": domain.arn, "DomainId": domain.id, "Url": domain.url}

    def studio_update_domain(self, params: dict) -> dict:
        validate_request("sagemaker", "UpdateDomain", params)
        domain, extra = self.studio_domain(params["DomainId"])
        status = extra.lifecycle.status
        if status != "InService":
            raise _in_use(f"Domain {domain.arn} is in status {status} and cannot be updated.")
        if params.get("VpcId") and domain.vpc_id and params["VpcId"] != domain.vpc_id:
            raise _validation(f"The VPC of domain {domain.id} cannot be changed from {domain.vpc_id} to {params['VpcId']}.")
        vpc_id = params.get("VpcId") or domain.vpc_id
        subnets = params.get("SubnetIds")
        running = self._active_apps(domain.id)
        if subnets is not None:
            if not vpc_id:
                raise _validation("SubnetIds cannot be set on a domain without a VPC.")
            self._check_network(vpc_id, subnets, None, "SubnetIds")
            if set(domain.subnet_ids or []) - set(subnets) and running:
                raise _validation("Subnets can only be removed when the domain has no apps in the InService, Pending or Deleting state.")
        access = params.get("AppNetworkAccessType")
        if access and access != domain.app_network_access_type and running:
            raise _validation("AppNetworkAccessType can only be modified when the domain has no apps in the InService, Pending or Deleting state.")
        settings = _merge_settings(domain.default_user_settings, params.get("DefaultUserSettings"))
        if (access or domain.app_network_access_type) == "VpcOnly" and not settings.get("SecurityGroups"):
            raise _validation("DefaultUserSettings.SecurityGroups is required when AppNetworkAccessType is VpcOnly.")
        self._check_network(vpc_id, None, (params.get("DefaultUserSettings") or {}).get("SecurityGroups"), "DefaultUserSettings")
        self._check_network(vpc_id, None, (params.get("DomainSettingsForUpdate") or {}).get("SecurityGroupIds"), "DomainSettingsForUpdate")
        self._check_file_systems(params.get("DefaultUserSettings"), "DefaultUserSettings")

        domain.default_user_settings = settings
        if params.get("DomainSettingsForUpdate"):
            domain.domain_settings = _merge_settings(domain.domain_settings, params["DomainSettingsForUpdate"])
        if params.get("DefaultSpaceSettings") is not None:
            domain.default_space_settings = copy.deepcopy(params["DefaultSpaceSettings"])
        if subnets is not None:
            domain.subnet_ids = list(subnets)
        if params.get("VpcId"):
            domain.vpc_id = params["VpcId"]
        if access:
            domain.app_network_access_type = access
        if params.get("AppSecurityGroupManagement"):
            domain.app_security_group_management = params["AppSecurityGroupManagement"]
        if params.get("TagPropagation"):
            extra.tag_propagation = params["TagPropagation"]
        if params.get("HomeEfsFileSystemCreation"):
            extra.home_efs_creation = params["HomeEfsFileSystemCreation"]
        domain.last_modified_time = utcnow()
        extra.lifecycle.move("Updating", "InService")
        return {"DomainArn": domain.arn}

    def studio_delete_domain(self, params: dict) -> None:
        validate_request("sagemaker", "DeleteDomain", params)
        domain, extra = self.studio_domain(params["DomainId"])
        _refuse_unless_settled(f"Domain {domain.arn}", extra.lifecycle, "deleted")
        profiles = [p.name for k, p in self._studio_profiles().items() if k[0] == domain.id]
        spaces = [s.name for k, s in self._studio_spaces().items() if k[0] == domain.id]
        apps = [a.name for a in self._active_apps(domain.id)]
        if profiles or spaces or apps:
            raise _in_use(
                f"Domain {domain.arn} cannot be deleted while it has user profiles {sorted(profiles)}, spaces {sorted(spaces)} or apps {sorted(apps)}."
            )
        extra.retention = (params.get("RetentionPolicy") or {}).get("HomeEfsFileSystem") or "Retain"
        domain.last_modified_time = utcnow()
        extra.lifecycle.move("Deleting", GONE)

    def studio_list_domains(self) -> list:
        self.studio_purge()
        return [self.studio_describe_domain(d) for d in self.domains.values() if d.id in self._studio_extras()]

    # ------------------------------------------------------------ user profiles

    def _in_domain(self, store: dict, what: str, domain_id: str, name: str):
        self.studio_purge()
        found = store.get((domain_id, name))
        if found is None:
            raise _not_found(f"{what} '{name}' does not exist in domain {domain_id}.")
        return found

    def _profile(self, domain_id: str, name: str) -> _Profile:
        return self._in_domain(self._studio_profiles(), "User profile", domain_id, name)

    def _sso_user_exists(self, user_name: str) -> bool:
        from moto.identitystore.models import identitystore_backends

        from sandbox.services.sso_admin_applications import instance_backend

        # The instance the domain's application is in: the organization's, perhaps another account's.
        center = instance_backend(self.account_id, self.region_name)
        instances = center.instances
        stores = identitystore_backends[center.account_id][self.region_name].identity_stores
        for instance in instances:
            store = stores.get(instance.identity_store_id)
            if store and any(u.UserName == user_name for u in store.users.values()):
                return True
        return False

    def studio_create_user_profile(self, params: dict) -> dict:
        validate_request("sagemaker", "CreateUserProfile", params)
        domain = self._domain_to_create_in(params["DomainId"], "user profiles")
        name = params["UserProfileName"]
        profiles = self._studio_profiles()
        if (domain.id, name) in profiles:
            raise _in_use(f"User profile {name} already exists in domain {domain.id}.")
        identifier, value = params.get("SingleSignOnUserIdentifier"), params.get("SingleSignOnUserValue")
        if domain.auth_mode == "SSO":
            if not identifier or not value:
                raise _validation("SingleSignOnUserIdentifier and SingleSignOnUserValue are required for a domain in SSO auth mode.")
            if not self._sso_user_exists(value):
                raise _validation(f"User {value} does not exist in the IAM Identity Center identity store.")
            # "If you're using IAM Identity Center authentication, a user in IAM Identity Center, or a
            # group in IAM Identity Center containing that user, must be assigned to the Amazon SageMaker
            # Studio application ... to create a user profile" (AWS CloudFormation User Guide,
            # AWS::SageMaker::UserProfile). AWS does not document the error; the sandbox answers
            # ValidationException, the code CreateUserProfile's other input checks use.
            from sandbox.services.sso_admin_applications import user_assigned

            if not user_assigned(self.account_id, self.region_name, domain.single_sign_on_managed_application_arn, value):
                raise _validation(
                    f"User {value} is not assigned to the IAM Identity Center application of domain {domain.id}, directly or through a group; "
                    "assign the user or one of the user's groups to the application first."
                )
            taken = [p.name for k, p in profiles.items() if k[0] == domain.id and p.sso_value == value]
            if taken:
                raise _in_use(f"User {value} already has user profile {taken[0]} in domain {domain.id}.")
        elif identifier or value:
            raise _validation("SingleSignOnUserIdentifier and SingleSignOnUserValue can only be specified for a domain in SSO auth mode.")
        settings = params.get("UserSettings") or {}
        self._check_network(domain.vpc_id, None, settings.get("SecurityGroups"), "UserSettings")
        self._check_file_systems(settings, "UserSettings")
        uids = state(self, "studio_next_uid", lambda: {"next": 200001})
        uid = str(uids["next"])
        uids["next"] += 1
        arn = f"arn:aws:sagemaker:{self.region_name}:{self.account_id}:user-profile/{domain.id}/{name}"
        profiles[(domain.id, name)] = _Profile(domain.id, name, arn, uid, identifier, value, copy.deepcopy(settings), params.get("Tags"))
        return {"UserProfileArn": arn}

    def studio_update_user_profile(self, params: dict) -> dict:
        validate_request("sagemaker", "UpdateUserProfile", params)
        domain, _ = self.studio_domain(params["DomainId"])
        profile = self._profile(domain.id, params["UserProfileName"])
        if profile.lifecycle.status != "InService":
            raise _in_use(f"User profile {profile.name} is in status {profile.lifecycle.status} and cannot be updated.")
        update = params.get("UserSettings") or {}
        self._check_network(domain.vpc_id, None, update.get("SecurityGroups"), "UserSettings")
        self._check_file_systems(update, "UserSettings")
        profile.settings = _merge_settings(profile.settings, update)
        profile.modified = utcnow()
        profile.lifecycle.move("Updating", "InService")
        return {"UserProfileArn": profile.arn}

    def studio_delete_user_profile(self, params: dict) -> None:
        validate_request("sagemaker", "DeleteUserProfile", params)
        domain, _ = self.studio_domain(params["DomainId"])
        profile = self._profile(domain.id, params["UserProfileName"])
        _refuse_unless_settled(f"User profile {profile.name}", profile.lifecycle, "deleted")
        apps = [a.name for a in self._active_apps(domain.id, user=profile.name)]
        spaces = [s.name for k, s in self._studio_spaces().items() if k[0] == domain.id and s.owner == profile.name]
        if apps or spaces:
            raise _in_use(f"User profile {profile.name} cannot be deleted while it has apps {sorted(apps)} or owns spaces {sorted(spaces)}.")
        profile.modified = utcnow()
        profile.lifecycle.move("Deleting", GONE)

    def _studio_list(self, operation: str, params: dict, store: dict, **filters) -> list:
        """The answer of the List operation of a domain's user profiles, spaces or apps: the request checked, what is
        gone purged, then ``_listed`` with DomainIdEquals (they all take it) and the operation's other ``filters``."""
        validate_request("sagemaker", operation, params)
        self.studio_purge()
        return _listed(store.values(), params, DomainIdEquals=lambda item, value: item.domain_id == value, **filters)

    def studio_list_user_profiles(self, params: dict) -> list:
        return self._studio_list("ListUserProfiles", params, self._studio_profiles(), UserProfileNameContains=lambda p, value: value in p.name)

    # ------------------------------------------------------------ spaces, apps

    def studio_create_space(self, params: dict) -> dict:
        validate_request("sagemaker", "CreateSpace", params)
        domain = self._domain_to_create_in(params["DomainId"], "spaces")
        name = params["SpaceName"]
        if (domain.id, name) in self._studio_spaces():
            raise _in_use(f"Space {name} already exists in domain {domain.id}.")
        owner = (params.get("OwnershipSettings") or {}).get("OwnerUserProfileName")
        if owner and (domain.id, owner) not in self._studio_profiles():
            raise _validation(f"User profile {owner} does not exist in domain {domain.id}.")
        arn = f"arn:aws:sagemaker:{self.region_name}:{self.account_id}:space/{domain.id}/{name}"
        self._studio_spaces()[(domain.id, name)] = _Space(
            domain.id, name, arn, owner, params.get("SpaceSettings"), params.get("SpaceSharingSettings"), params.get("SpaceDisplayName")
        )
        return {"SpaceArn": arn}

    def _space(self, domain_id: str, name: str) -> _Space:
        return self._in_domain(self._studio_spaces(), "Space", domain_id, name)

    def studio_delete_space(self, params: dict) -> None:
        validate_request("sagemaker", "DeleteSpace", params)
        domain, _ = self.studio_domain(params["DomainId"])
        space = self._space(domain.id, params["SpaceName"])
        _refuse_unless_settled(f"Space {space.name}", space.lifecycle, "deleted")
        apps = [a.name for a in self._active_apps(domain.id, space=space.name)]
        if apps:
            raise _in_use(f"Space {space.name} cannot be deleted while it has apps {sorted(apps)}.")
        space.lifecycle.move("Deleting", GONE)

    def studio_list_spaces(self, params: dict) -> list:
        return self._studio_list("ListSpaces", params, self._studio_spaces(), SpaceNameContains=lambda s, value: value in s.name)

    def studio_create_app(self, params: dict) -> dict:
        validate_request("sagemaker", "CreateApp", params)
        domain, _ = self.studio_domain(params["DomainId"], missing=_validation)
        user, space = params.get("UserProfileName"), params.get("SpaceName")
        if bool(user) == bool(space):
            raise _validation("Exactly one of UserProfileName and SpaceName must be specified.")
        owner = self._studio_profiles().get((domain.id, user)) if user else self._studio_spaces().get((domain.id, space))
        if owner is None:
            raise _validation(f"{'User profile' if user else 'Space'} {user or space} does not exist in domain {domain.id}.")
        if owner.lifecycle.status != "InService":
            raise _in_use(f"{'User profile' if user else 'Space'} {user or space} is in status {owner.lifecycle.status}.")
        key = (domain.id, user or "", space or "", params["AppType"], params["AppName"])
        existing = self._studio_apps().get(key)
        if existing and existing.active:
            raise _in_use(f"App {params['AppName']} of type {params['AppType']} already exists.")
        owner_path = user or space
        arn = f"arn:aws:sagemaker:{self.region_name}:{self.account_id}:app/{domain.id}/{owner_path}/{params['AppType'].lower()}/{params['AppName']}"
        self._studio_apps()[key] = _App(domain.id, user, space, params["AppType"], params["AppName"], arn, params.get("ResourceSpec"))
        return {"AppArn": arn}

    def _app(self, params: dict) -> _App:
        key = (params["DomainId"], params.get("UserProfileName") or "", params.get("SpaceName") or "", params["AppType"], params["AppName"])
        app = self._studio_apps().get(key)
        if app is None:
            raise _not_found(f"App {params['AppName']} of type {params['AppType']} does not exist.")
        return app

    def studio_delete_app(self, params: dict) -> None:
        validate_request("sagemaker", "DeleteApp", params)
        self.studio_domain(params["DomainId"])
        app = self._app(params)
        status = app.lifecycle.status
        if status in ("Deleted", "Deleting"):
            raise _not_found(f"App {app.name} of type {app.app_type} is {status}.")
        if status == "Pending":
            raise _in_use(f"App {app.name} is in status Pending and cannot be deleted.")
        app.lifecycle.move("Deleting", "Deleted")

    def studio_list_apps(self, params: dict) -> list:
        # ListApps sorts by CreationTime only (its SortBy enum).
        return self._studio_list(
            "ListApps", params, self._studio_apps(),
            UserProfileNameEquals=lambda a, value: a.user == value,
            SpaceNameEquals=lambda a, value: a.space == value,
        )


class StudioResponse:
    """Grafted onto moto's SageMakerResponse; replaces moto's domain operations."""

    def _studio_params(self) -> dict:
        return json.loads(self.body or "{}")

    def create_domain(self) -> ActionResult:
        return ActionResult(self.sagemaker_backend.studio_create_domain(self._studio_params()))

    def describe_domain(self) -> ActionResult:
        params = self._studio_params()
        validate_request("sagemaker", "DescribeDomain", params)
        backend = self.sagemaker_backend
        domain, _ = backend.studio_domain(params["DomainId"])
        return ActionResult(backend.studio_describe_domain(domain))

    def list_domains(self) -> ActionResult:
        params = self._studio_params()
        validate_request("sagemaker", "ListDomains", params)
        keys = ("DomainArn", "DomainId", "DomainName", "Status", "CreationTime", "LastModifiedTime", "Url")
        domains = [{k: d[k] for k in keys if k in d} for d in self.sagemaker_backend.studio_list_domains()]
        page, token = _page(domains, params.get("MaxResults"), params.get("NextToken"))
        return ActionResult({"Domains": page, "NextToken": token})

    def update_domain(self) -> ActionResult:
        return ActionResult(self.sagemaker_backend.studio_update_domain(self._studio_params()))

    def delete_domain(self) -> ActionResult:
        self.sagemaker_backend.studio_delete_domain(self._studio_params())
        return EmptyResult()

    def create_user_profile(self) -> ActionResult:
        return ActionResult(self.sagemaker_backend.studio_create_user_profile(self._studio_params()))

    def _describe_in_domain(self, operation: str, lookup: str, name_key: str) -> ActionResult:
        params = self._studio_params()
        validate_request("sagemaker", operation, params)
        backend = self.sagemaker_backend
        domain, _ = backend.studio_domain(params["DomainId"])
        return ActionResult(getattr(backend, lookup)(domain.id, params[name_key]).describe())

    def _summaries(self, listing: str, key: str) -> ActionResult:
        params = self._studio_params()
        found = [item.summary() for item in getattr(self.sagemaker_backend, listing)(params)]
        page, token = _page(found, params.get("MaxResults"), params.get("NextToken"))
        return ActionResult({key: page, "NextToken": token})

    def describe_user_profile(self) -> ActionResult:
        return self._describe_in_domain("DescribeUserProfile", "_profile", "UserProfileName")

    def update_user_profile(self) -> ActionResult:
        return ActionResult(self.sagemaker_backend.studio_update_user_profile(self._studio_params()))

    def delete_user_profile(self) -> ActionResult:
        self.sagemaker_backend.studio_delete_user_profile(self._studio_params())
        return EmptyResult()

    def list_user_profiles(self) -> ActionResult:
        return self._summaries("studio_list_user_profiles", "UserProfiles")

    def create_space(self) -> ActionResult:
        return ActionResult(self.sagemaker_backend.studio_create_space(self._studio_params()))

    def describe_space(self) -> ActionResult:
        return self._describe_in_domain("DescribeSpace", "_space", "SpaceName")

    def delete_space(self) -> ActionResult:
        self.sagemaker_backend.studio_delete_space(self._studio_params())
        return EmptyResult()

    def list_spaces(self) -> ActionResult:
        return self._summaries("studio_list_spaces", "Spaces")

    def create_app(self) -> ActionResult:
        return ActionResult(self.sagemaker_backend.studio_create_app(self._studio_params()))

    def describe_app(self) -> ActionResult:
        params = self._studio_params()
        validate_request("sagemaker", "DescribeApp", params)
        backend = self.sagemaker_backend
        backend.studio_domain(params["DomainId"])
        return ActionResult(backend._app(params).describe())

    def delete_app(self) -> ActionResult:
        self.sagemaker_backend.studio_delete_app(self._studio_params())
        return EmptyResult()

    def list_apps(self) -> ActionResult:
        return self._summaries("studio_list_apps", "Apps")


def _wrap_resource_lookup() -> None:
    """Tags on domains that finished deleting (and on user profiles) resolve as AWS resolves them."""
    backend_class = moto.sagemaker.models.SageMakerModelBackend
    original = backend_class._get_resource_from_arn

    def _get_resource_from_arn(self, arn: str):
        if ":domain/" in arn:
            self.studio_purge()
            domain = self.domains.get(arn.rsplit("/", 1)[-1])
            if domain is None:
                raise _validation(f"Resource {arn} not found.")
            if domain.tags is None:
                domain.tags = []
            return domain
        if ":user-profile/" in arn:
            self.studio_purge()
            domain_id, name = arn.split(":user-profile/", 1)[1].split("/", 1)
            profile = self._studio_profiles().get((domain_id, name))
            if profile is None:
                raise _validation(f"Resource {arn} not found.")
            return profile
        return original(self, arn)

    backend_class._get_resource_from_arn = _get_resource_from_arn


def install() -> None:
    graft(moto.sagemaker.models.SageMakerModelBackend, StudioBackend)
    graft(moto.sagemaker.responses.SageMakerResponse, StudioResponse)
    _wrap_resource_lookup()
