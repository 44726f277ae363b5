#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: sagemaker_domain
short_description: Manage a team's SageMaker AI domain (SageMaker Studio), its user profiles and its Identity Center group
version_added: 0.1.0
description:
  - Creates, updates or deletes the SageMaker AI domain of one team, named
    C(<name_prefix>-<team>) unless O(name) is given, and found by that name (C(ListDomains)),
    or by O(domain_id) when it is already resolved.
  - Manages the domain's user profiles (O(user_profiles)); in an V(SSO) domain each profile
    belongs to the Identity Center user of the same name (or O(user_profiles[].sso_user_name)).
  - A user profile is read with C(DescribeUserProfile) only when the module compares something
    on it, that is when O(user_profiles[].sso_user_name), O(user_profiles[].execution_role) or
    O(user_profiles[].fsx_path) is set for it; the others are known from C(ListUserProfiles)
    alone, and only these options are compared and returned for them.
  - In an V(SSO) domain, assigns the team's Identity Center group (O(identity_center_group)) to
    the domain's Identity Center application, so that the group's members see the domain in
    their AWS access portal, and removes the assignments of other groups. The group is assigned
    before user profiles are created (AWS creates an SSO user profile only for a user assigned
    to the application, directly or through a group); a profile for a user the application will
    not know fails before any write. A domain created before 1 October 2023 has no
    C(SingleSignOnApplicationArn), so the module then assigns nothing and warns, naming the domain.
  - Changes AWS can make in place go through C(UpdateDomain) and C(UpdateUserProfile). Changing
    the auth mode, the VPC or the Identity Center user of a profile, or changing the network
    access type or removing subnets while apps run, fails before any change is made, as do
    names outside the API's patterns and unknown Identity Center users and groups.
  - Deleting the domain (O(state=absent)) deletes its apps, spaces and user profiles first, then
    the domain, keeping the users' home EFS volume unless O(retain_home_efs=false).
  - Options left unset are left as they are on an existing domain.
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  team:
    description:
      - The team the domain belongs to; names the domain C(<name_prefix>-<team>) and its tags.
      - Lower-case letters, digits and inner hyphens.
    type: str
    required: true
  name:
    description:
      - The domain name, instead of C(<name_prefix>-<team>).
      - Letters, digits and inner hyphens, at most 63 characters.
    type: str
  domain_id:
    description:
      - The id of the domain, already resolved, not looked up (M(hyperpod.tenancy.shared_info)
        lists the domains once per run and returns the present teams' domain ids).
      - The module describes this domain instead of listing every domain to find it by name.
        It fails, before any change, when the domain does not exist, is being deleted or is not
        named C(<name_prefix>-<team>) (or O(name)); it never creates a second domain. With
        O(state=absent), a domain that no longer exists is no change.
    type: str
  auth_mode:
    description:
      - How users sign in. V(SSO) is IAM Identity Center; cannot change on an existing domain.
      - Unset, a new domain uses V(SSO) and an existing one keeps its mode.
    type: str
    choices: [SSO, IAM]
  vpc_id:
    description: The VPC of the domain. Cannot change on an existing domain.
    type: str
  subnet_ids:
    description: Subnets of O(vpc_id) Studio uses.
    type: list
    elements: str
  security_group_ids:
    description:
      - Security groups of the users' apps (C(DefaultUserSettings.SecurityGroups)), at most 5.
      - Required with O(app_network_access_type=VpcOnly).
    type: list
    elements: str
  app_network_access_type:
    description:
      - V(VpcOnly) sends all Studio traffic through O(subnet_ids); V(PublicInternetOnly) lets
        SageMaker provide internet access. AWS's default is V(PublicInternetOnly).
    type: str
    choices: [VpcOnly, PublicInternetOnly]
  execution_role:
    description:
      - ARN of the default IAM execution role of the users. Required to create a domain.
    type: str
  fsx_lustre:
    description:
      - The team's directory on an FSx for Lustre file system, mounted in every user's apps
        (C(DefaultUserSettings.CustomFileSystemConfigs)).
    type: dict
    suboptions:
      file_system_id:
        description: The file system, C(fs-...).
        type: str
        required: true
      path:
        description: The directory, for example V(/vision).
        type: str
        default: /
  studio_web_portal:
    description: Whether users get the Studio web portal.
    type: str
    choices: [enabled, disabled]
  default_landing_uri:
    description: Where users land when they open the domain, for example V(studio::).
    type: str
  tag_propagation:
    description: Whether the domain's custom tags propagate to what SageMaker creates for it.
    type: bool
    default: true
  user_profiles:
    description:
      - The domain's user profiles. Profiles not listed are kept unless O(purge_user_profiles=true).
      - Unset means the profiles are left as they are.
    type: list
    elements: dict
    suboptions:
      name:
        description: Profile name; letters, digits and inner hyphens, at most 63 characters.
        type: str
        required: true
      sso_user_name:
        description:
          - The Identity Center user name the profile belongs to (C(SingleSignOnUserValue)). Default O(user_profiles[].name).
          - V(SSO) domains only; cannot change on an existing profile.
        type: str
      execution_role:
        description: ARN of the profile's execution role, instead of the domain's.
        type: str
      fsx_path:
        description:
          - The user's home directory on O(fsx_lustre.file_system_id), for example V(/vision/home/alice),
            mounted besides the team directory.
        type: str
  purge_user_profiles:
    description:
      - Delete the user profiles not in O(user_profiles), after their apps and the spaces they own.
    type: bool
    default: false
  adopt_user_profiles:
    description:
      - A user profile of the domain is changed or deleted (by O(purge_user_profiles), or with O(state=absent)) only when
        it carries the team's ownership mark, the tags C(managed-by=hyperpod.tenancy) and the team tag naming O(team),
        which every profile this module creates carries. Any other, for instance one made by hand in the team's domain,
        is refused before any write, with an error naming it and its tags. The mark is read (C(ListTags) on the
        profile) only for the profiles the run would change or delete.
      - V(true) takes over the profiles of the domain that carry no mark and marks them (the team file's C(adopt)
        list with C(user_profiles); docs/team-file.md). One marked for another team is refused even then.
    type: bool
    default: false
  identity_center_group:
    description:
      - Display name of the team's Identity Center group, assigned to the domain. V(SSO) domains only.
      - Other groups assigned to the domain are removed.
    type: str
  identity_center_instance_arn:
    description: The Identity Center instance; default the one C(sso-admin ListInstances) returns.
    type: str
  identity_store_id:
    description:
      - The instance's identity store. When given, the instance is not looked up
        (M(hyperpod.tenancy.shared_info) reads it once per run).
    type: str
  identity_center_group_ids:
    description:
      - Group ids already resolved, by display name (M(hyperpod.tenancy.shared_info) returns them for
        every team). When O(identity_center_group) is found here, it is not looked up in the identity store.
    type: dict
  retain_home_efs:
    description:
      - With O(state=absent), keep the users' home EFS file system (C(RetentionPolicy.HomeEfsFileSystem=Retain)).
    type: bool
    default: true
  revoke_only:
    description:
      - With O(state=absent), only delete the assignments of the domain's IAM Identity Center application,
        the way the team's members reach Studio; the domain, its profiles, spaces and data stay.
      - Offboarding (role C(hyperpod.tenancy.team_offboard)) does this first, before it deletes anything.
      - A domain in IAM mode has no such application; its members' access is the permission set's.
    type: bool
    default: false
  wait_timeout:
    description: Seconds to wait for the domain, its profiles, spaces and apps to settle.
    type: int
    default: 1800
notes:
  - The domain always carries the team tags (team, cost-center, managed-by) besides O(tags);
    O(purge_tags) removes other tags only when O(tags) is given. New user profiles are created
    with the same tags.
  - A user profile created without O(user_profiles[].execution_role) or O(user_profiles[].fsx_path)
    uses the domain's defaults.
  - The Identity Center user of an existing profile is compared only when O(user_profiles[].sso_user_name)
    is set for it. A profile of the same name created out of band for another Identity Center user
    is therefore not detected unless O(user_profiles[].sso_user_name) is set; with it, the module
    fails before any change.
extends_documentation_fragment:
  - hyperpod.tenancy.ownership
  - hyperpod.tenancy.resource
  - hyperpod.tenancy.team
  - hyperpod.tenancy.team.name_prefix
  - hyperpod.tenancy.identity_center
"""

EXAMPLES = r"""
- name: Give team vision its Studio domain, with its members and its FSx directory
  hyperpod.tenancy.sagemaker_domain:
    team: vision
    cost_center: CC-1001
    vpc_id: vpc-0123456789abcdef0
    subnet_ids: [subnet-0123456789abcdef0, subnet-0123456789abcdef1]
    security_group_ids: [sg-0123456789abcdef0]
    app_network_access_type: VpcOnly
    execution_role: arn:aws:iam::123456789012:role/hyperpod-vision-studio-execution
    fsx_lustre:
      file_system_id: fs-0123456789abcdef0
      path: /vision
    identity_center_group: TeamVision
    user_profiles:
      - name: alice
      - name: bob
        fsx_path: /vision/home/bob
    purge_user_profiles: true

- name: Offboard team vision, keeping the users' home volume
  hyperpod.tenancy.sagemaker_domain:
    team: vision
    state: absent
  register: removed

- name: Show what was kept
  ansible.builtin.debug:
    var: removed.retained
"""

RETURN = r"""
domain:
  description: The domain after the change (predicted in check mode); empty when absent.
  returned: always
  type: dict
  contains:
    domain_id:
      description: The domain id.
      type: str
      sample: d-a1b2c3d4e5f6
    domain_arn:
      description: The domain ARN.
      type: str
      sample: arn:aws:sagemaker:us-east-1:123456789012:domain/d-a1b2c3d4e5f6
    domain_name:
      description: The domain name.
      type: str
      sample: hyperpod-vision
    url:
      description: The Studio URL.
      type: str
      sample: https://d-a1b2c3d4e5f6.studio.us-east-1.sagemaker.aws
    status:
      description: C(InService), or a transitional or failed status.
      type: str
      sample: InService
    auth_mode:
      description: C(SSO) or C(IAM).
      type: str
    single_sign_on_application_arn:
      description: The domain's Identity Center application (SSO domains).
      type: str
      sample: arn:aws:sso::123456789012:application/ssoins-1234567890abcdef/apl-1234567890abcdef
    home_efs_file_system_id:
      description: The users' home EFS file system.
      type: str
    vpc_id:
      description: The VPC.
      type: str
    subnet_ids:
      description: The subnets.
      type: list
      elements: str
    app_network_access_type:
      description: C(VpcOnly) or C(PublicInternetOnly).
      type: str
    default_user_settings:
      description: The default user settings, in snake_case.
      type: dict
    tag_propagation:
      description: C(ENABLED) or C(DISABLED).
      type: str
    tags:
      description: The domain's tags.
      type: dict
      sample: {team: vision, cost-center: CC-1001, managed-by: hyperpod.tenancy}
    user_profiles:
      description:
        - The user profiles, from C(ListUserProfiles), with what the module compares on each; the same
          in the result of a run, of a rerun and in the check-mode prediction.
      type: list
      elements: dict
      contains:
        domain_id:
          description: The domain id (null in check mode for a domain still to be created).
          type: str
        user_profile_name:
          description: The profile name.
          type: str
        status:
          description: The profile status; V(InService) in check mode for a profile the run creates or updates.
          type: str
          sample: InService
        single_sign_on_user_identifier:
          description: C(UserName), when O(user_profiles[].sso_user_name) is set for the profile.
          type: str
        single_sign_on_user_value:
          description: The Identity Center user of the profile, when O(user_profiles[].sso_user_name) is set for it.
          type: str
        user_settings:
          description:
            - The profile's own settings the module compares, in snake_case (C(execution_role) with
              O(user_profiles[].execution_role), C(custom_file_system_configs) with O(user_profiles[].fsx_path));
              empty for a profile with neither.
          type: dict
    identity_center_group_ids:
      description: Ids of the Identity Center groups assigned to the domain.
      type: list
      elements: str
retained:
  description: With O(state=absent), what the deletion kept.
  returned: when state is absent
  type: dict
  contains:
    home_efs_file_system_id:
      description: The home EFS file system, kept with O(retain_home_efs=true).
      type: str
      sample: fs-0123456789abcdef0
"""

from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.domain import MODULE_OPTIONS, converge


def main():
    run_module(MODULE_OPTIONS, converge)


if __name__ == "__main__":
    main()
