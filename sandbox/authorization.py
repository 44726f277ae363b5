"""IAM enforcement for requests signed with a principal's credentials.

A request signed with the sandbox's admin key (``SANDBOX_CREDENTIALS``: what the playbooks and tests
use) is let through as before. A request signed with keys that moto issued for a principal (an
``sts:AssumeRole`` session, the keys of an IAM user) is authorized as AWS authorizes it, with
``plugins/module_utils/iam_evaluation.py``: the role's inline and attached policies, its permissions
boundary, the session policy given to AssumeRole, the bucket policy, explicit denies, conditions with
the resource's tags (``aws:ResourceTag/*``), the principal's tags and the request's keys (``s3:prefix``).
Keys nobody issued are refused as AWS refuses them (S3 ``InvalidAccessKeyId``, others
``InvalidClientTokenId`` / ``UnrecognizedClientException``): made-up credentials read nothing.

What AWS evaluates for a request ("Request context", reference_policies_evaluation-logic.html) comes
from :func:`requests_for`: the action (``service:Operation``, with the S3 and Budgets names that
differ from the operation), the resource ARN (S3 buckets and objects, SageMaker domains, user
profiles, spaces, apps, clusters, compute quotas, EKS clusters, IAM roles, budgets) and the keys.
An operation whose resource this file does not name is authorized on ``*``: only a statement with
``"Resource": "*"`` allows it, so the sandbox is never easier than AWS there.

Before any of that, every request is authenticated as AWS authenticates it ("Authenticating Requests
(AWS Signature Version 4)", S3 API Reference; "Signature Version 4 signing process", IAM User Guide):

- an unsigned request is refused, unless botocore's model marks the operation ``smithy.api#noAuth``
  (STS AssumeRoleWithWebIdentity / AssumeRoleWithSAML): S3 answers 403 ``AccessDenied`` (the anonymous
  principal may do nothing on a bucket without a public policy, and the sandbox serves none), query
  services 403 ``MissingAuthenticationToken`` "Request is missing Authentication Token", JSON services
  403 ``MissingAuthenticationTokenException`` ("Common Errors" of each API reference);
- the signature (``Authorization`` header or a presigned URL's ``X-Amz-Signature``) is recomputed from
  the canonical request with the key's secret (the admin key's, or the one moto issued with the key):
  a mismatch is S3 ``SignatureDoesNotMatch``, query ``SignatureDoesNotMatch``, JSON
  ``InvalidSignatureException``; S3's ``x-amz-content-sha256`` must be the body's hash
  (``XAmzContentSHA256Mismatch``); a presigned URL past ``X-Amz-Expires`` is ``AccessDenied``
  "Request has expired"; a header-signed request more than 15 minutes from the server's clock is
  refused as expired ("Signature expired");
- a session token must be the one issued with the key (S3 ``InvalidToken``, others
  ``InvalidClientTokenId`` / ``UnrecognizedClientException``); long-term keys carry none.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import json
import re
import uuid
from urllib.parse import parse_qs, quote, unquote
from xml.etree import ElementTree

# The evaluator is the collection's own (plugins/module_utils), so the sandbox and verify_isolation agree.
from ansible_collections.hyperpod.tenancy.plugins.module_utils import iam_evaluation, isolation

from sandbox.client import SANDBOX_CREDENTIALS
from sandbox.services import eks_kubernetes_proxy

# The admin key and its secret (``SANDBOX_CREDENTIALS``): what playbooks and tests sign with.
ADMIN_SECRETS = {SANDBOX_CREDENTIALS["AWS_ACCESS_KEY_ID"]: SANDBOX_CREDENTIALS["AWS_SECRET_ACCESS_KEY"]}
ADMIN_ACCESS_KEYS = frozenset(ADMIN_SECRETS)
# Actions AWS allows whatever the policies say.
ALWAYS_ALLOWED = frozenset({"sts:GetCallerIdentity"})
_CREDENTIAL = re.compile(r"Credential=([^/,\s]+)/\d{8}/([^/]+)/([^/]+)/aws4_request")


class UnknownCredentials(Exception):
    pass


def credentials(environ: dict) -> tuple[str, str, str, str] | None:
    """(access key, region, signing name, session token) of a signed request, or None when unsigned."""
    match = _CREDENTIAL.search(environ.get("HTTP_AUTHORIZATION", ""))
    query = parse_qs(environ.get("QUERY_STRING", ""))
    if not match and "X-Amz-Credential" in query:
        match = _CREDENTIAL.search("Credential=" + query["X-Amz-Credential"][0])
        token = query.get("X-Amz-Security-Token", [""])[0]
    else:
        token = environ.get("HTTP_X_AMZ_SECURITY_TOKEN", "")
    if not match:
        return None
    return match.group(1), match.group(2), match.group(3), token


# --- who signed ----------------------------------------------------------------------------------


def _iam(account_id: str):
    from moto.iam.models import iam_backends

    return iam_backends[account_id]["global"]


def _policy_document(policy) -> str:
    version = next((v for v in getattr(policy, "versions", []) if v.is_default), None)
    return version.document if version is not None else policy.document


def _role_policies(iam, role) -> list[tuple[str, str]]:
    found = [(name, document) for name, document in role.policies.items()]
    found += [(arn, _policy_document(policy)) for arn, policy in role.managed_policies.items()]
    return found


def _boundary(iam, arn: str | None):
    if not arn:
        return None
    try:
        return _policy_document(iam.get_policy(arn))
    except Exception:  # noqa: BLE001 - a boundary that no longer exists allows nothing
        return {"Version": "2012-10-17", "Statement": []}


def principal_for(access_key: str, token: str) -> tuple[str, iam_evaluation.Principal | None]:
    """(secret, principal) of the key: principal None for the admin key; UnknownCredentials when nobody issued it."""
    from moto.sts.models import sts_backends

    if access_key in ADMIN_SECRETS:
        if token:
            raise UnknownCredentials("InvalidToken")  # a long-term key carries no session token
        return ADMIN_SECRETS[access_key], None
    for account_id in list(sts_backends.keys()):
        sts = sts_backends[account_id]["aws"]
        session = sts.get_assumed_role_from_access_key(access_key)
        if session is None:
            continue
        if not hmac.compare_digest(token, session.session_token):
            raise UnknownCredentials("InvalidToken")
        if session.expiration < datetime.datetime.now(datetime.UTC).replace(tzinfo=None):
            # A session's credentials stop at its Expiration ("AssumeRole", AWS STS API Reference).
            raise UnknownCredentials("ExpiredToken")
        iam = _iam(account_id)
        try:
            role = iam.get_role_by_arn(session.role_arn)
        except Exception:  # noqa: BLE001 - the role was deleted: its sessions have no permissions
            role = None
        policies = _role_policies(iam, role) if role else []
        return session.secret_access_key, iam_evaluation.Principal(
            account_id,
            policies,
            role_arn=session.role_arn,
            session_arn=session.arn,
            boundary=_boundary(iam, role.permissions_boundary_arn) if role else None,
            session_policy=session.policy or None,
            role_id=role.id if role else None,
            tags={t["Key"]: t["Value"] for t in (role.tags if role else [])},
            # Session tags (EKS Pod Identity's, sandbox/services/eks_auth.py) win over the role's tags of the same key,
            # whatever its case (iam_evaluation.Principal.principal_tags).
            session_tags=getattr(session, "session_tags", {}),
        )
    from moto.iam.models import iam_backends

    for account_id in list(iam_backends.keys()):
        iam = _iam(account_id)
        for user in iam.users.values():
            key = next((k for k in user.access_keys if k.access_key_id == access_key), None)
            if key is None:
                continue
            if key.status != "Active" or token:
                # An inactive key is refused as an unknown one ("Managing access keys", IAM User Guide).
                raise UnknownCredentials("InvalidToken" if token else "InvalidId")
            policies, boundary = user_policies(iam, user)
            return key.secret_access_key, iam_evaluation.Principal(
                account_id,
                policies,
                user_arn=user.arn,
                boundary=boundary,
                tags={t["Key"]: t["Value"] for t in (user.tags.values() if isinstance(user.tags, dict) else user.tags or [])},
            )
    raise UnknownCredentials("InvalidId")


def user_policies(iam, user) -> tuple[list, dict | None]:
    """An IAM user's identity policies, its groups' included ("Policies and permissions in IAM"), and its boundary."""
    policies = list(user.policies.items()) + [(arn, _policy_document(p)) for arn, p in user.managed_policies.items()]
    for group in iam.groups.values():
        if user in group.users:
            policies += list(group.policies.items()) + [(arn, _policy_document(p)) for arn, p in group.managed_policies.items()]
    return policies, _boundary(iam, getattr(user, "permissions_boundary_arn", None))


# --- is it signed, and signed right --------------------------------------------------------------

_SIGNED_HEADERS = re.compile(r"SignedHeaders=([^,\s]+)")
_SIGNATURE = re.compile(r"Signature=([0-9a-f]+)")
SIGV4_TIMESTAMP = "%Y%m%dT%H%M%SZ"
# "The signed portions (using AWS Signatures) of requests are valid within 15 minutes of the timestamp
# in the request" (S3 API Reference, Authenticating Requests: Using the Authorization Header).
MAX_SKEW = datetime.timedelta(minutes=15)
UNSIGNED_PAYLOADS = ("UNSIGNED-PAYLOAD", "STREAMING-")


class BadSignature(Exception):
    """The request's signature is not the one its key's secret gives (or the request expired)."""

    def __init__(self, code: str, message: str, details: dict | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.details = code, message, details or {}


def _header(environ: dict, name: str) -> str | None:
    key = {"content-type": "CONTENT_TYPE", "content-length": "CONTENT_LENGTH"}.get(name, "HTTP_" + name.upper().replace("-", "_"))
    return environ.get(key)


def _canonical_query(raw_query: str, presigned: bool) -> str:
    pairs = []
    for pair in raw_query.split("&") if raw_query else []:
        key, _, value = pair.partition("=")
        key, value = unquote(key), unquote(value)
        if presigned and key == "X-Amz-Signature":
            continue
        pairs.append((quote(key, safe="-_.~"), quote(value, safe="-_.~")))
    return "&".join(f"{k}={v}" for k, v in sorted(pairs))


def _canonical_uri(environ: dict, s3: bool) -> str:
    from botocore.utils import normalize_url_path

    raw = (environ.get("RAW_URI") or environ.get("REQUEST_URI") or quote(environ.get("PATH_INFO", "/"))).split("?", 1)[0] or "/"
    if raw.startswith(("http://", "https://")):
        raw = "/" + raw.split("/", 3)[-1] if raw.count("/") >= 3 else "/"
    # S3 signs the path as sent; every other service normalizes it and encodes it once more (SigV4, step 1).
    return raw if s3 else quote(normalize_url_path(raw), safe="/~")


def _signing_key(secret: str, date: str, region: str, service: str) -> bytes:
    key = ("AWS4" + secret).encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return key


def check_signature(environ: dict, body: bytes, secret: str, now: datetime.datetime | None = None) -> None:
    """Raise BadSignature unless the request is signed with ``secret`` as SigV4 signs it."""
    query = parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
    presigned = "X-Amz-Signature" in query and not environ.get("HTTP_AUTHORIZATION")
    authorization = environ.get("HTTP_AUTHORIZATION", "")
    if presigned:
        credential, signed, provided = query.get("X-Amz-Credential", [""])[0], query.get("X-Amz-SignedHeaders", [""])[0], query["X-Amz-Signature"][0]
        stamp = query.get("X-Amz-Date", [""])[0]
    else:
        match_headers, match_signature = _SIGNED_HEADERS.search(authorization), _SIGNATURE.search(authorization)
        if not authorization.startswith("AWS4-HMAC-SHA256 ") or not match_headers or not match_signature:
            raise BadSignature("IncompleteSignature", "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters.")
        credential = _CREDENTIAL.search(authorization).group(0)[len("Credential=") :]
        signed, provided = match_headers.group(1), match_signature.group(1)
        stamp = environ.get("HTTP_X_AMZ_DATE", "")
    scope = credential.split("/", 1)[1] if "/" in credential else ""
    date, region, service = (scope.split("/") + ["", "", ""])[:3]
    try:
        when = datetime.datetime.strptime(stamp, SIGV4_TIMESTAMP).replace(tzinfo=datetime.UTC)
    except ValueError:
        raise BadSignature("IncompleteSignature", "Date must be in ISO-8601 'basic format'.") from None
    now = now or datetime.datetime.now(datetime.UTC)
    if presigned:
        expires = query.get("X-Amz-Expires", ["0"])[0]
        if not expires.isdigit() or now > when + datetime.timedelta(seconds=int(expires)):
            raise BadSignature("AccessDenied", "Request has expired")
    elif abs(now - when) > MAX_SKEW:
        raise BadSignature(
            "SignatureDoesNotMatch",
            f"Signature expired: {stamp} is now earlier than {(now - MAX_SKEW).strftime(SIGV4_TIMESTAMP)} ({now.strftime(SIGV4_TIMESTAMP)} - 15 min.)",
        )
    s3 = service == "s3"
    headers = []
    for name in signed.split(";"):
        value = _header(environ, name)
        if value is None:
            raise BadSignature("SignatureDoesNotMatch", f"The header {name} is signed but not in the request.")
        headers.append(f"{name}:{' '.join(value.split())}")
    content_hash = environ.get("HTTP_X_AMZ_CONTENT_SHA256")
    if presigned and s3:
        payload = "UNSIGNED-PAYLOAD"
    elif content_hash:
        payload = content_hash
        if s3 and not content_hash.startswith(UNSIGNED_PAYLOADS) and not hmac.compare_digest(content_hash, hashlib.sha256(body).hexdigest()):
            raise BadSignature("XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header does not match what was computed.")
    else:
        payload = hashlib.sha256(body).hexdigest()
    canonical = "\n".join(
        [
            environ.get("REQUEST_METHOD", "GET").upper(),
            _canonical_uri(environ, s3),
            _canonical_query(environ.get("QUERY_STRING", ""), presigned),
            "\n".join(headers) + "\n",
            signed,
            payload,
        ]
    )
    string_to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    expected = hmac.new(_signing_key(secret, date, region, service), string_to_sign.encode(), hashlib.sha256).hexdigest()
    if date != stamp[:8] or not hmac.compare_digest(expected, provided):
        raise BadSignature(
            "SignatureDoesNotMatch",
            "The request signature we calculated does not match the signature you provided. Check your key and signing method.",
            {"StringToSign": string_to_sign, "SignatureProvided": provided, "CanonicalRequest": canonical},
        )


def _unsigned_allowed(environ: dict, body: bytes) -> bool:
    """Whether AWS serves this unsigned request: an operation botocore's model marks ``smithy.api#noAuth``."""
    action = parse_qs(environ.get("QUERY_STRING", "")).get("Action") or parse_qs(body.decode("utf-8", "replace")).get("Action")
    return bool(action) and action[0] in _no_auth_operations("sts")


_NO_AUTH: dict = {}


def _no_auth_operations(service: str) -> frozenset:
    if service not in _NO_AUTH:
        import botocore.session

        model = botocore.session.get_session().get_service_model(service)
        _NO_AUTH[service] = frozenset(op for op in model.operation_names if model.operation_model(op).auth_type == "none")
    return _NO_AUTH[service]


# --- what is asked -------------------------------------------------------------------------------

# One table for the sandbox and verify_isolation: the IAM action of each S3 operation.
S3_ACTIONS, S3_VERSIONED = isolation.S3_ACTIONS, isolation.S3_VERSIONED
BUDGET_READS = ("Describe",)
# The Studio creates whose tags need sagemaker:AddTags (requests_for).
SAGEMAKER_TAGGING_CREATES = frozenset({"CreateSpace", "CreateApp", "CreateUserProfile", "CreateDomain"})
# EKS operations on a cluster's sub-resources authorized on the cluster ("Actions defined by Amazon Elastic Kubernetes
# Service", Service Authorization Reference: resource type cluster). An access entry's are on its ARN
# (EKS_ON_ACCESS_ENTRY); the others (an association's, an add-on's own ARN) are authorized here on "*": the sandbox does
# not name those ARNs.
EKS_ON_CLUSTER = frozenset(
    {"CreateAccessEntry", "CreateAddon", "CreatePodIdentityAssociation", "ListAccessEntries", "ListAddons", "ListPodIdentityAssociations"}
)
# EKS operations on one access entry, authorized on its ARN (resource type access-entry, the same reference), which
# eks_access.access_entry_arn names. CreateAccessEntry is on the cluster (above).
EKS_ON_ACCESS_ENTRY = frozenset(
    {"AssociateAccessPolicy", "DeleteAccessEntry", "DescribeAccessEntry", "DisassociateAccessPolicy", "ListAssociatedAccessPolicies", "UpdateAccessEntry"}
)
SAGEMAKER_RESOURCES = {
    # botocore input member(s) -> ARN path
    "UserProfile": ("user-profile", ("DomainId", "UserProfileName")),
    "Space": ("space", ("DomainId", "SpaceName")),
    "Domain": ("domain", ("DomainId",)),
    "ComputeQuota": ("compute-quota", ("ComputeQuotaId",)),
    "ClusterSchedulerConfig": ("cluster-scheduler-config", ("ClusterSchedulerConfigId",)),
}


def _s3_bucket_and_key(environ: dict) -> tuple[str, str]:
    host = environ.get("HTTP_HOST", "").split(":")[0]
    path = unquote(environ.get("PATH_INFO", ""))
    labels = host.split(".")
    # Virtual-hosted style: <bucket>.s3.<region>.amazonaws.com or <bucket>.localhost.
    if len(labels) > 1 and (labels[1] == "s3" or labels[1].startswith("s3-") or host.endswith(".localhost")) and not re.fullmatch(r"[\d.]+", host):
        return labels[0], path.lstrip("/")
    parts = path.lstrip("/").split("/", 1)
    return parts[0], parts[1] if len(parts) > 1 else ""


def _s3_requests(operation: str, environ: dict, body: bytes, partition: str) -> list[tuple[str, str, dict]]:
    bucket, key = _s3_bucket_and_key(environ)
    query = parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
    if not bucket:
        return [("s3:" + S3_ACTIONS.get(operation, operation).split(":")[-1], "*", {})]
    action = S3_ACTIONS.get(operation, "s3:" + operation)
    context: dict = {}
    if action in S3_VERSIONED and "versionId" in query:
        action = action.replace("Object", "ObjectVersion", 1)
        context["s3:VersionId"] = query["versionId"][0]
    bucket_arn = f"arn:{partition}:s3:::{bucket}"
    if operation in ("ListObjects", "ListObjectsV2", "ListObjectVersions", "ListMultipartUploads"):
        for name, context_key in (("prefix", "s3:prefix"), ("delimiter", "s3:delimiter"), ("max-keys", "s3:max-keys")):
            if name in query:
                context[context_key] = query[name][0]
        return [(action, bucket_arn, context)]
    if operation == "DeleteObjects":
        keys = [element.text or "" for element in ElementTree.fromstring(body or b"<Delete/>").iter() if element.tag.endswith("Key")]
        return [("s3:DeleteObject", f"{bucket_arn}/{k}", {}) for k in keys] or [("s3:DeleteObject", f"{bucket_arn}/*", {})]
    if not key:
        return [(action, bucket_arn, context)]
    found = [(action, f"{bucket_arn}/{key}", context)]
    source = environ.get("HTTP_X_AMZ_COPY_SOURCE")
    if operation in ("CopyObject", "UploadPartCopy") or source:
        found = [("s3:PutObject", f"{bucket_arn}/{key}", {})]
        if source:
            source_path, _, source_query = unquote(source).lstrip("/").partition("?")
            version = parse_qs(source_query).get("versionId")
            found.append(("s3:GetObjectVersion" if version else "s3:GetObject", f"arn:{partition}:s3:::{source_path}", {}))
    return found


def _sagemaker_resource(operation: str, params: dict, base: str, backend) -> str:
    if operation.endswith("App") or operation == "ListApps":
        if {"DomainId", "AppType", "AppName"} <= set(params):
            owner = params.get("UserProfileName") or params.get("SpaceName") or ""
            return f"{base}app/{params['DomainId']}/{owner}/{params['AppType'].lower()}/{params['AppName']}"
        return "*"
    if operation == "CreatePresignedDomainUrl":
        return f"{base}user-profile/{params.get('DomainId', '')}/{params.get('UserProfileName', '')}"
    for noun, (kind, members) in SAGEMAKER_RESOURCES.items():
        if operation.endswith(noun) and all(m in params for m in members):
            return base + kind + "/" + "/".join(str(params[m]) for m in members)
    if "Cluster" in operation and "ClusterName" in params:
        name = params["ClusterName"]
        if name.startswith("arn:"):
            return name
        cluster = (getattr(backend, "clusters", None) or {}).get(name)
        return cluster.arn if cluster is not None else f"{base}cluster/{name}"
    return "*"


def _sagemaker_tags(backend, arn: str) -> dict:
    try:
        tags = backend.list_tags(arn)
        tags = tags[0] if isinstance(tags, tuple) else tags  # moto pages ListTags: (tags, next token)
        return {t["Key"]: t["Value"] for t in tags or []}
    except Exception:  # noqa: BLE001 - not a resource moto tags: look for it below
        pass
    # Spaces and apps made in a domain with TagPropagation ENABLED carry the domain's custom tags
    # (CreateDomain, TagPropagation: "Indicates whether custom tag propagation is supported for the domain").
    match = re.search(r":(?:space|app)/([^/]+)/", arn)
    if match:
        extra = backend.__dict__.get("studio_domains", {}).get(match.group(1))
        if extra is not None and extra.tag_propagation == "ENABLED":
            return _sagemaker_tags(backend, ":".join(arn.split(":")[:5]) + ":domain/" + match.group(1))
    return {}


# The Studio operations whose request context holds sagemaker:InstanceTypes and sagemaker:OwnerUserProfileArn (Service
# Authorization Reference, "Actions, resources, and condition keys for Amazon SageMaker AI": CreateSpace, UpdateSpace and
# CreateApp list both; DeleteSpace and DeleteApp list the owner only, not set here).
STUDIO_CONDITION_OPERATIONS = frozenset({"CreateSpace", "UpdateSpace", "CreateApp"})


def _studio_condition_keys(operation: str, params: dict, base: str, backend) -> dict:
    """sagemaker:InstanceTypes and sagemaker:OwnerUserProfileArn of a CreateSpace, UpdateSpace or CreateApp, when the request
    gives them: the instance types of SpaceSettings.<app>AppSettings.DefaultResourceSpec (botocore SpaceSettings) or of
    CreateApp's ResourceSpec; the owner from OwnershipSettings.OwnerUserProfileName, or for an update or an app in a space,
    that space's owner (as SageMaker knows it); an app of a user profile is owned by that profile."""
    if operation not in STUDIO_CONDITION_OPERATIONS:
        return {}
    context: dict = {}
    specs = [params.get("ResourceSpec")] if operation == "CreateApp" else [
        (settings or {}).get("DefaultResourceSpec") for key, settings in (params.get("SpaceSettings") or {}).items() if key.endswith("AppSettings")
    ]
    types = sorted({spec["InstanceType"] for spec in specs if isinstance(spec, dict) and spec.get("InstanceType")})
    if types:
        context["sagemaker:InstanceTypes"] = types
    domain_id = params.get("DomainId", "")
    owner = (params.get("OwnershipSettings") or {}).get("OwnerUserProfileName")
    if owner is None and operation == "CreateApp" and params.get("UserProfileName"):
        owner = params["UserProfileName"]
    if owner is None and params.get("SpaceName"):
        space = backend.__dict__.get("studio_spaces", {}).get((domain_id, params["SpaceName"]))
        owner = getattr(space, "owner", None)
    if owner:
        context["sagemaker:OwnerUserProfileArn"] = f"{base}user-profile/{domain_id}/{owner}"
    return context


def _json_params(body: bytes) -> dict:
    try:
        params = json.loads(body or b"{}")
    except ValueError:
        return {}
    return params if isinstance(params, dict) else {}


# The request members that pass an IAM role to the service, and the service ``iam:PassedToService`` then names: a call that
# passes a role is also authorized as ``iam:PassRole`` on the role ("Grant a user permissions to pass a role to an AWS
# service", IAM User Guide; the condition key "iam:PassedToService", IAM User Guide, "IAM and AWS STS condition context
# keys"). SageMaker's ExecutionRole (domains, user profiles, cluster instance groups: "SageMaker Roles", SageMaker
# Developer Guide) goes to sagemaker.amazonaws.com; EKS Pod Identity's roleArn (associations, an add-on's
# podIdentityAssociations) to pods.eks.amazonaws.com ("Learn how EKS Pod Identity grants pods access to AWS services",
# EKS User Guide); Managed Grafana's workspaceRoleArn to grafana.amazonaws.com. Assumption: an add-on's
# serviceAccountRoleArn (IRSA) is passed to eks.amazonaws.com (the EKS pages do not name the service).
PASSED_ROLES = {
    "sagemaker": {"ExecutionRole": "sagemaker.amazonaws.com", "RoleArn": "sagemaker.amazonaws.com"},
    "eks": {"roleArn": "pods.eks.amazonaws.com", "serviceAccountRoleArn": "eks.amazonaws.com"},
    "grafana": {"workspaceRoleArn": "grafana.amazonaws.com"},
}
PASSING_OPERATIONS = ("Create", "Update")


def _passed_roles(value, members: dict, found: list) -> list:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in members and isinstance(item, str) and item.startswith("arn:"):
                found.append((item, members[key]))
            else:
                _passed_roles(item, members, found)
    elif isinstance(value, list):
        for item in value:
            _passed_roles(item, members, found)
    return found


def passes_roles(service: str, operation: str, body: bytes) -> list[tuple[str, str, dict]]:
    """The ``iam:PassRole`` requests a create or update implies: one per role ARN it names, with ``iam:PassedToService``."""
    members = PASSED_ROLES.get(service)
    if not members or not operation.startswith(PASSING_OPERATIONS):
        return []
    return [("iam:PassRole", arn, {"iam:PassedToService": to}) for arn, to in _passed_roles(_json_params(body), members, [])]


def requests_for(service: str, signing_name: str, operation: str, region: str, account_id: str, environ: dict, body: bytes) -> list[tuple[str, str, dict]]:
    """The (action, resource ARN, condition keys) AWS authorizes for one request, with the iam:PassRole it implies."""
    return _requests_for(service, signing_name, operation, region, account_id, environ, body) + passes_roles(service, operation, body)


def _requests_for(service: str, signing_name: str, operation: str, region: str, account_id: str, environ: dict, body: bytes) -> list[tuple[str, str, dict]]:
    partition = "aws"
    prefix = signing_name
    if service == "s3":
        return _s3_requests(operation, environ, body, partition)
    if service == "sagemaker":
        from moto.sagemaker.models import sagemaker_backends

        backend = sagemaker_backends[account_id][region]
        params = _json_params(body)
        arn = _sagemaker_resource(operation, params, f"arn:{partition}:sagemaker:{region}:{account_id}:", backend)
        context = {}
        if arn != "*":
            context = {f"aws:ResourceTag/{k}": v for k, v in _sagemaker_tags(backend, arn).items()}
        for tag in params.get("Tags") or []:
            context[f"aws:RequestTag/{tag.get('Key')}"] = tag.get("Value")
        if params.get("Tags"):
            context["aws:TagKeys"] = [t.get("Key") for t in params["Tags"]]
        context.update(_studio_condition_keys(operation, params, f"arn:{partition}:sagemaker:{region}:{account_id}:", backend))
        asked = [(f"sagemaker:{operation}", arn, context)]
        if operation in SAGEMAKER_TAGGING_CREATES and params.get("Tags") and arn != "*":
            # A create that tags what it makes needs sagemaker:AddTags too, on the same resource: the Service Authorization
            # Reference ("Actions, resources, and condition keys for Amazon SageMaker AI") lists AddTags as a dependent
            # action of CreateSpace and CreateUserProfile (checked); of CreateApp and CreateDomain, an assumption (rows not
            # checked; the other Studio creates that take Tags list it).
            asked.append(("sagemaker:AddTags", arn, dict(context)))
        return asked
    if service == "budgets":
        params = _json_params(body)
        action = "budgets:ViewBudget" if operation.startswith(BUDGET_READS) else "budgets:ModifyBudget"
        # CreateBudget names its budget inside Budget; the tag operations by its ARN.
        name = params.get("BudgetName") or (params.get("Budget") or {}).get("BudgetName")
        arn = params.get("ResourceARN") or (f"arn:{partition}:budgets::{account_id}:budget/{name}" if name else "*")
        return [(action, arn, {})]
    if service == "eks" and eks_kubernetes_proxy.is_request(environ):
        # The Kubernetes API through EKS, as an AWS service reaches it for the caller (eks_kubernetes_proxy).
        return eks_kubernetes_proxy.requests_for(environ, region, account_id)
    if service == "eks":
        path = environ.get("PATH_INFO", "")
        match = re.match(r"/clusters/([^/]+)", path)
        on_cluster = operation.endswith("Cluster") or operation in EKS_ON_CLUSTER
        arn = f"arn:{partition}:eks:{region}:{account_id}:cluster/{unquote(match.group(1))}" if match and on_cluster else "*"
        entry = re.match(r"/clusters/([^/]+)/access-entries/(.+?)(/access-policies.*)?$", path)
        if entry and operation in EKS_ON_ACCESS_ENTRY:
            from sandbox.services import eks_access

            arn = eks_access.access_entry_arn(account_id, region, unquote(entry.group(1)), unquote(entry.group(2))) or "*"
        return [(f"eks:{operation}", arn, {})]
    if service in ("iam", "sts"):
        params = parse_qs(body.decode("utf-8", "replace")) if body else parse_qs(environ.get("QUERY_STRING", ""))
        arn = "*"
        if "RoleArn" in params:
            arn = params["RoleArn"][0]
        elif "RoleName" in params:
            try:
                arn = _iam(account_id).get_role(params["RoleName"][0]).arn
            except Exception:  # noqa: BLE001 - a role that does not exist: AWS still authorizes on its ARN
                arn = f"arn:{partition}:iam::{account_id}:role/{params['RoleName'][0]}"
        elif "PolicyArn" in params:
            arn = params["PolicyArn"][0]
        return [(f"{prefix}:{operation}", arn, {})]
    return [(f"{prefix}:{operation}", "*", {})]


def bucket_policy(account_id: str, resource: str):
    if not resource.startswith("arn:aws:s3:::"):
        return None
    from moto.s3.models import s3_backends

    bucket = s3_backends[account_id]["aws"].buckets.get(resource[len("arn:aws:s3:::") :].split("/", 1)[0])
    if bucket is None or not bucket.policy:
        return None
    return bucket.policy.decode() if isinstance(bucket.policy, bytes) else bucket.policy


# --- the answer ----------------------------------------------------------------------------------


def authorize(principal, asked: list[tuple[str, str, dict]], environ: dict, region: str) -> tuple[dict, str, str] | None:
    """None when every (action, resource) is allowed; else the first refused (result, action, resource)."""
    # aws:SecureTransport: "whether the request was sent using TLS" (IAM User Guide, "AWS global condition context keys").
    # The sandbox listens on plain HTTP on the loopback, but it stands for AWS's endpoints, which the SDKs and the CLI reach
    # over HTTPS: SageMaker, EKS, IAM, STS, Identity Center and the others are "accessed through the network" with TLS
    # ("Clients must support Transport Layer Security (TLS) 1.2 or later", each service's "Infrastructure security" page),
    # and S3, which also serves HTTP, is reached over HTTPS by current AWS tools ("Protecting data in transit with
    # encryption", S3 User Guide). So every request is taken as sent over TLS: a statement allowed only under
    # aws:SecureTransport applies, as on AWS.
    transport = {"aws:SecureTransport": True, "aws:RequestedRegion": region}
    for action, resource, context in asked:
        if action in ALWAYS_ALLOWED:
            continue
        keys = dict(transport, **context)
        result = iam_evaluation.evaluate(principal, action, resource, keys, bucket_policy(principal.account_id, resource))
        if result["EvalDecision"] != iam_evaluation.ALLOWED:
            return result, action, resource
    return None


def access_denied(protocol: str, principal, result: dict, action: str, resource: str, head: bool = False) -> tuple[str, list, bytes]:
    """AccessDenied as the protocol shapes it: S3 XML 403, JSON AccessDeniedException, query AccessDenied."""
    message = f"User: {principal.arn} is not authorized to perform: {action} on resource: {resource} {iam_evaluation.denial_reason(principal, result)}"
    request_id = str(uuid.uuid4())
    if protocol == "rest-xml":
        # S3 (since 2024) names the principal, the action and the reason in AccessDenied's message.
        message = message.replace(f"resource: {resource}", f'resource: "{resource}"')
        body = (
            f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>{_xml(message)}</Message>'
            f"<RequestId>{request_id}</RequestId><HostId>sandbox</HostId></Error>"
        ).encode()
        return "403 Forbidden", [("Content-Type", "application/xml"), ("x-amz-request-id", request_id)], b"" if head else body
    if protocol == "query":
        body = (
            f"<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>{_xml(message)}</Message></Error>"
            f"<RequestId>{request_id}</RequestId></ErrorResponse>"
        ).encode()
        return "403 Forbidden", [("Content-Type", "text/xml"), ("x-amzn-RequestId", request_id)], body
    headers = [("x-amzn-RequestId", request_id), ("x-amzn-ErrorType", "AccessDeniedException")]
    if protocol == "json":
        body = json.dumps({"__type": "AccessDeniedException", "message": message}).encode()
        return "400 Bad Request", [("Content-Type", "application/x-amz-json-1.1")] + headers, body
    body = json.dumps({"message": message}).encode()
    return "403 Forbidden", [("Content-Type", "application/json")] + headers, body


def unknown_credentials(protocol: str, reason: str, head: bool = False) -> tuple[str, list, bytes]:
    if reason == "ExpiredToken":
        return expired_token(protocol, head)
    if protocol == "rest-xml":
        code, message = (
            ("InvalidToken", "The provided token is malformed or otherwise invalid.")
            if reason == "InvalidToken"
            else ("InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.")
        )
        body = f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>{message}</Message><RequestId>sandbox</RequestId></Error>'
        return ("400 Bad Request" if code == "InvalidToken" else "403 Forbidden"), [("Content-Type", "application/xml")], b"" if head else body.encode()
    message = "The security token included in the request is invalid."
    if protocol == "query":
        body = (
            f"<ErrorResponse><Error><Type>Sender</Type><Code>InvalidClientTokenId</Code><Message>{message}</Message></Error>"
            "<RequestId>sandbox</RequestId></ErrorResponse>"
        )
        return "403 Forbidden", [("Content-Type", "text/xml")], body.encode()
    body = json.dumps({"__type": "UnrecognizedClientException", "message": message}).encode()
    return "403 Forbidden", [("Content-Type", "application/x-amz-json-1.1"), ("x-amzn-ErrorType", "UnrecognizedClientException")], body


def expired_token(protocol: str, head: bool = False) -> tuple[str, list, bytes]:
    """A request signed with an expired session's keys: ``ExpiredToken`` (S3, STS and the Query services; botocore's sts
    model lists ExpiredTokenException for AssumeRole's own token), ``ExpiredTokenException`` for the JSON services
    (assumption: the wording and status are the sandbox's; AWS answers each service its own way)."""
    message = "The security token included in the request is expired"
    if protocol == "rest-xml":
        body = f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>ExpiredToken</Code><Message>{message}</Message><RequestId>sandbox</RequestId></Error>'
        return "400 Bad Request", [("Content-Type", "application/xml")], b"" if head else body.encode()
    if protocol == "query":
        body = (f"<ErrorResponse><Error><Type>Sender</Type><Code>ExpiredToken</Code><Message>{message}</Message></Error>"
                "<RequestId>sandbox</RequestId></ErrorResponse>")
        return "403 Forbidden", [("Content-Type", "text/xml")], body.encode()
    body = json.dumps({"__type": "ExpiredTokenException", "message": message}).encode()
    return "403 Forbidden", [("Content-Type", "application/x-amz-json-1.1"), ("x-amzn-ErrorType", "ExpiredTokenException")], body


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def missing_authentication(environ: dict, head: bool = False) -> tuple[str, list, bytes]:
    """An unsigned request, refused as its protocol refuses it (the protocol from the request: no signature names the service)."""
    request_id = str(uuid.uuid4())
    if environ.get("HTTP_X_AMZ_TARGET"):
        body = json.dumps({"__type": "MissingAuthenticationTokenException", "message": "Missing Authentication Token"}).encode()
        return "403 Forbidden", [("Content-Type", "application/x-amz-json-1.1"), ("x-amzn-ErrorType", "MissingAuthenticationTokenException")], body
    if "Action=" in environ.get("QUERY_STRING", "") or environ.get("CONTENT_TYPE", "").startswith("application/x-www-form-urlencoded"):
        body = (
            "<ErrorResponse><Error><Type>Sender</Type><Code>MissingAuthenticationToken</Code><Message>Request is missing Authentication Token"
            f"</Message></Error><RequestId>{request_id}</RequestId></ErrorResponse>"
        ).encode()
        return "403 Forbidden", [("Content-Type", "text/xml"), ("x-amzn-RequestId", request_id)], body
    # Any other unsigned request on the sandbox's one endpoint is routed to S3 (moto's default), as anonymous.
    body = (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message>'
        f"<RequestId>{request_id}</RequestId><HostId>sandbox</HostId></Error>"
    ).encode()
    return "403 Forbidden", [("Content-Type", "application/xml"), ("x-amz-request-id", request_id)], b"" if head else body


def bad_signature(protocol: str, access_key: str, error: BadSignature, head: bool = False) -> tuple[str, list, bytes]:
    request_id = str(uuid.uuid4())
    if protocol == "rest-xml":
        status = "400 Bad Request" if error.code in ("XAmzContentSHA256Mismatch", "IncompleteSignature") else "403 Forbidden"
        details = "".join(f"<{k}>{_xml(v)}</{k}>" for k, v in error.details.items())
        body = (
            f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{error.code}</Code><Message>{_xml(error.message)}</Message>'
            f"<AWSAccessKeyId>{_xml(access_key)}</AWSAccessKeyId>{details}<RequestId>{request_id}</RequestId><HostId>sandbox</HostId></Error>"
        ).encode()
        return status, [("Content-Type", "application/xml"), ("x-amz-request-id", request_id)], b"" if head else body
    if protocol == "query":
        code = "SignatureDoesNotMatch" if error.code == "XAmzContentSHA256Mismatch" else error.code
        body = (
            f"<ErrorResponse><Error><Type>Sender</Type><Code>{code}</Code><Message>{_xml(error.message)}</Message></Error>"
            f"<RequestId>{request_id}</RequestId></ErrorResponse>"
        ).encode()
        return "403 Forbidden", [("Content-Type", "text/xml"), ("x-amzn-RequestId", request_id)], body
    code = {"SignatureDoesNotMatch": "InvalidSignatureException", "XAmzContentSHA256Mismatch": "InvalidSignatureException"}.get(error.code, error.code)
    if code == "InvalidSignatureException" and error.message.startswith("The request signature"):
        message = (
            "The request signature we calculated does not match the signature you provided. "
            "Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
        )
    else:
        message = error.message
    body = json.dumps({"__type": code, "message": message}).encode()
    content_type = "application/x-amz-json-1.1" if protocol == "json" else "application/json"
    return "403 Forbidden", [("Content-Type", content_type), ("x-amzn-RequestId", request_id), ("x-amzn-ErrorType", code)], body


ASKED = "sandbox.asked"


def _admin_account(access_key: str, environ: dict) -> str:
    """The account the admin key acts in: moto's ``x-moto-account-id`` (sandbox.seed._as_account) or the key's."""
    from moto.iam.models import get_account_id_from

    return environ.get("HTTP_X_MOTO_ACCOUNT_ID") or get_account_id_from(access_key)


def enforce(environ: dict, body: bytes, service: str, operation: str, protocol: str):
    """None to let the request through; else (status, headers, body) of the refusal."""
    head = environ.get("REQUEST_METHOD") == "HEAD"
    signed = credentials(environ)
    if signed is None:
        return None if _unsigned_allowed(environ, body) else missing_authentication(environ, head)
    access_key, region, signing_name, token = signed
    try:
        secret, principal = principal_for(access_key, token)
    except UnknownCredentials as error:
        return unknown_credentials(protocol, str(error), head)
    try:
        check_signature(environ, body, secret)
    except BadSignature as error:
        return bad_signature(protocol, access_key, error, head)
    if principal is None:
        # The admin key is not checked; what it asks is only logged, and a request the log cannot read still passes.
        try:
            environ[ASKED] = ("admin", requests_for(service, signing_name, operation, region, _admin_account(access_key, environ), environ, body))
        except Exception:  # noqa: BLE001 - the log is for tests; the request is the admin's, as before
            environ[ASKED] = ("admin", [])
        return None
    asked = requests_for(service, signing_name, operation, region, principal.account_id, environ, body)
    # What the request asked IAM, kept in the sandbox's request log (sandbox/server.py): what a policy must allow
    # (plugins/module_utils/automation_policy.py is proved against it).
    environ[ASKED] = (principal.arn, asked)
    refused = authorize(principal, asked, environ, region)
    if refused is None:
        return None
    return access_denied(protocol, principal, *refused, head=head)
