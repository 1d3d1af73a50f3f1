"""The CDK app's parameters: every context key it knows, what each may be,
and the example values a synth with no AWS account stands in with.

`Settings.from_context(context)` reads a context mapping (cdk.json's
`context`, `-c key=value`, or the CLI's whole context) and refuses an
unknown key, naming the closest known one: a misspelled `vpcID` would
otherwise be ignored and a new VPC made. README.md, "Run it for your
team", lists the keys.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

CDK_DIR = Path(__file__).resolve().parent
# Values for the parameters no two deployments share: what `python app.py`
# synthesizes with when no AWS account is set. A synth with an account
# never reads them, and refuses any value equal to one of them.
EXAMPLES_FILE = CDK_DIR / "examples.json"
ROLES = ("viewer", "operator", "admin")
# Names the stack sets in the console's environment; `environment` (extra
# variables) may not override them.
MANAGED_ENV = (
    "GCO_CONSOLE_ADDR",
    "GCO_AUTH",
    "GCO_ALB_ARN",
    "GCO_ROLES",
    "GCO_GROUPS_CLAIM",
    "GCO_HISTORY_TABLE",
    "INFERENCE_ENDPOINTS_TABLE_NAME",
    "DYNAMODB_REGION",
    "GCO_ALLOWED_HOSTS",
    "GCO_REGIONS",
    "GCO_REQUIRE_DYNAMODB",
    "GCO_EMF_INTERVAL",
)
# The parameters with no default: a deploy names them all.
REQUIRED_KEYS = (
    "endpointsTableRegion",
    "oidcIssuer",
    "oidcAuthorizationEndpoint",
    "oidcTokenEndpoint",
    "oidcUserInfoEndpoint",
    "oidcClientId",
    "oidcClientSecretArn",
    "certificateArn",
    "domainName",
)
# Every context key the app reads. Keys of the CDK itself (feature flags
# start with `@`; `aws:cdk:...` and lookup results hold a colon) and of its
# CLI pass untouched.
KNOWN_KEYS = (
    *REQUIRED_KEYS,
    "stackName",
    "endpointsTableName",
    "historyTableName",
    "oidcClientSecretField",
    "oidcScope",
    "sessionTimeout",
    "roles",
    "groupsClaim",
    "regions",
    "internetFacing",
    "ingressCidrs",
    "waf",
    "vpcId",
    "hostedZoneId",
    "hostedZoneName",
    "image",
    "desiredCount",
    "cpu",
    "memoryMiB",
    "logRetentionDays",
    "containerInsights",
    "deletionProtection",
    "alarmTopicArn",
    "alarmEmail",
    "viewAgeLimit",
    "emfInterval",
    "environment",
)
CLI_KEYS = ("acknowledged-issue-numbers",)
REGION_RE = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d$")
SECRET_ARN_RE = re.compile(r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$")
CERT_ARN_RE = re.compile(r"^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate/.+$")
TOPIC_ARN_RE = re.compile(r"^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]+$")
# The OIDC scopes the console needs: `email` names the user, `profile`
# (with the IdP's groups claim) gives the role.
DEFAULT_SCOPE = "openid email profile"
# The ALB's session: a working day. The ALB allows 1 s to 7 days.
DEFAULT_SESSION = "8h"
MAX_SESSION_SECONDS = 7 * 24 * 3600
DURATION_RE = re.compile(r"^(\d+)([smhd])$")
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class SettingsError(ValueError):
    """A parameter is missing or wrong; the message names it."""


def examples() -> dict[str, Any]:
    return json.loads(EXAMPLES_FILE.read_text())


def check_keys(keys) -> None:
    """Refuses a context key the app does not know, naming the closest."""
    for key in sorted(keys):
        if key.startswith("@") or ":" in key or key in CLI_KEYS or key in KNOWN_KEYS:
            continue
        lowered = {k.lower(): k for k in KNOWN_KEYS}
        closest = difflib.get_close_matches(key.lower(), list(lowered), n=1, cutoff=0.0)
        raise SettingsError(
            f"context {key!r} is not a parameter of this app; did you mean {lowered[closest[0]]!r}? "
            "(README.md, \"Run it for your team\", lists them)"
        )


def example_values_left(context: Mapping[str, Any]) -> list[str]:
    """The keys whose value is still examples.json's (or names the
    documentation's example domain or account)."""
    placeholder = re.compile(r"(^|[./@\"])example\.(com|org)([\"/]|$)|111122223333")
    left = []
    for key, example in examples().items():
        value = context.get(key)
        if value is None:
            continue
        if key == "regions":
            value = parse_list(key, value)
            example = tuple(example)
        elif key == "roles":
            value, example = parse_roles(value), parse_roles(example)
        if value == example or placeholder.search(json.dumps(value)):
            left.append(key)
    return left


def parse_list(key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [v for v in (part.strip() for part in value.split(",")) if v]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SettingsError(f"context {key!r} must be a list of strings or a comma-separated string")
    return tuple(value)


def parse_duration(key: str, value: Any, *, low: int, high: int) -> int:
    """`8h`, `30m`, `90s`, `1d` (or plain seconds) as seconds."""
    text = str(value).strip()
    match = DURATION_RE.match(text) or (re.match(r"^(\d+)()$", text))
    if not match:
        raise SettingsError(f"context {key!r} is {value!r}; give a duration such as 8h, 30m, 90s or 1d")
    seconds = int(match.group(1)) * UNIT_SECONDS.get(match.group(2) or "s", 1)
    if not low <= seconds <= high:
        raise SettingsError(f"context {key!r} is {value!r}; it must be between {low}s and {high}s")
    return seconds


@dataclass(frozen=True)
class Settings:
    """The stack's parameters. README.md lists each with its context key."""

    endpoints_table_name: str
    endpoints_table_region: str
    history_table_name: str
    oidc_issuer: str
    oidc_authorization_endpoint: str
    oidc_token_endpoint: str
    oidc_user_info_endpoint: str
    oidc_client_id: str
    oidc_client_secret_arn: str
    certificate_arn: str
    domain_name: str
    roles: Mapping[str, Any]
    oidc_client_secret_field: str | None = None
    oidc_scope: str = DEFAULT_SCOPE
    session_timeout_seconds: int = 8 * 3600
    groups_claim: str = "groups"
    internet_facing: bool = False
    waf: bool = False
    vpc_id: str | None = None
    hosted_zone_id: str | None = None
    hosted_zone_name: str | None = None
    image: str | None = None
    regions: tuple[str, ...] = ()
    ingress_cidrs: tuple[str, ...] = ()
    desired_count: int = 2
    cpu: int = 256
    memory_mib: int = 512
    log_retention_days: int = 90
    container_insights: bool = True
    deletion_protection: bool = True
    alarm_topic_arn: str | None = None
    alarm_email: str | None = None
    view_age_limit_seconds: int = 300
    emf_interval_seconds: int = 60
    environment: Mapping[str, str] = field(default_factory=dict)

    @staticmethod
    def from_context(context: Mapping[str, Any]) -> "Settings":
        """Reads the parameters from a context mapping; refuses unknown keys."""
        check_keys(context.keys())
        get = context.get

        def required(key: str) -> str:
            value = get(key)
            if value is None or str(value).strip() == "":
                raise SettingsError(f"context {key!r} is required (cdk.json, or cdk deploy -c {key}=...)")
            return str(value).strip()

        def optional(key: str) -> str | None:
            value = get(key)
            return None if value is None or str(value).strip() == "" else str(value).strip()

        def integer(key: str, default: int, low: int, high: int) -> int:
            value = get(key)
            if value is None:
                return default
            try:
                number = int(value)
            except (TypeError, ValueError):
                raise SettingsError(f"context {key!r} must be a whole number, not {value!r}") from None
            if not low <= number <= high:
                raise SettingsError(f"context {key!r} must be between {low} and {high}, not {number}")
            return number

        def boolean(key: str, default: bool) -> bool:
            value = get(key)
            if value is None:
                return default
            if isinstance(value, bool):
                return value
            if str(value).lower() in ("true", "1", "yes"):
                return True
            if str(value).lower() in ("false", "0", "no"):
                return False
            raise SettingsError(f"context {key!r} must be true or false, not {value!r}")

        def duration(key: str, default: str, low: int, high: int) -> int:
            return parse_duration(key, get(key) if get(key) is not None else default, low=low, high=high)

        missing = [key for key in REQUIRED_KEYS if get(key) is None or str(get(key)).strip() == ""]
        if missing:
            raise SettingsError(
                "these parameters are required (cdk.json, or -c KEY=VALUE): " + ", ".join(missing)
            )
        table = optional("endpointsTableName") or "gco-inference-endpoints"
        region = required("endpointsTableRegion")
        if not REGION_RE.match(region):
            raise SettingsError(f"context 'endpointsTableRegion': {region!r} is not an AWS region such as us-east-1")
        secret_arn = required("oidcClientSecretArn")
        if not SECRET_ARN_RE.match(secret_arn):
            raise SettingsError(
                "context 'oidcClientSecretArn' must be a Secrets Manager secret's ARN "
                "(arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME); the client secret itself never goes in the template"
            )
        certificate_arn = required("certificateArn")
        if not CERT_ARN_RE.match(certificate_arn):
            raise SettingsError(f"context 'certificateArn': {certificate_arn!r} is not an ACM certificate's ARN")
        for key in ("oidcIssuer", "oidcAuthorizationEndpoint", "oidcTokenEndpoint", "oidcUserInfoEndpoint"):
            if not required(key).startswith("https://"):
                raise SettingsError(f"context {key!r} must be an https:// URL")
        scope = optional("oidcScope") or DEFAULT_SCOPE
        if "openid" not in scope.split():
            raise SettingsError(f"context 'oidcScope' is {scope!r}; an OpenID Connect sign-in asks for 'openid'")
        regions = parse_list("regions", get("regions")) if get("regions") is not None else ()
        for r in regions:
            if not REGION_RE.match(r):
                raise SettingsError(f"context 'regions': {r!r} is not an AWS region such as us-east-1")
        environment = get("environment") or {}
        if isinstance(environment, str):
            try:
                environment = json.loads(environment)
            except json.JSONDecodeError as e:
                raise SettingsError(f"context 'environment' is not JSON: {e}") from None
        if not isinstance(environment, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in environment.items()
        ):
            raise SettingsError("context 'environment' must map variable names to strings")
        for name in environment:
            if name in MANAGED_ENV:
                raise SettingsError(f"context 'environment' may not set {name}: the stack sets it from its parameters")
        hosted_zone_id, hosted_zone_name = optional("hostedZoneId"), optional("hostedZoneName")
        if (hosted_zone_id is None) != (hosted_zone_name is None):
            raise SettingsError("context 'hostedZoneId' and 'hostedZoneName' go together (or neither)")
        internet_facing = boolean("internetFacing", False)
        # An internal ALB is reached from the VPC and what is routed to it
        # (VPN, peering, Transit Gateway): its users' networks are private.
        default_cidrs = ("0.0.0.0/0",) if internet_facing else ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
        ingress_cidrs = parse_list("ingressCidrs", get("ingressCidrs")) if get("ingressCidrs") is not None else default_cidrs
        topic = optional("alarmTopicArn")
        if topic and not TOPIC_ARN_RE.match(topic):
            raise SettingsError(f"context 'alarmTopicArn': {topic!r} is not an SNS topic's ARN")
        image = optional("image")
        if image and not re.match(r"^[a-z0-9.-]+(:\d+)?/[a-z0-9._/-]+(@sha256:[0-9a-f]{64}|:[A-Za-z0-9._-]+)$", image):
            raise SettingsError(
                f"context 'image': {image!r} is not an image reference such as "
                "ACCOUNT.dkr.ecr.REGION.amazonaws.com/gco-console@sha256:DIGEST"
            )
        return Settings(
            endpoints_table_name=table,
            endpoints_table_region=region,
            history_table_name=optional("historyTableName") or f"{table}-history",
            oidc_issuer=required("oidcIssuer"),
            oidc_authorization_endpoint=required("oidcAuthorizationEndpoint"),
            oidc_token_endpoint=required("oidcTokenEndpoint"),
            oidc_user_info_endpoint=required("oidcUserInfoEndpoint"),
            oidc_client_id=required("oidcClientId"),
            oidc_client_secret_arn=secret_arn,
            oidc_client_secret_field=optional("oidcClientSecretField"),
            oidc_scope=scope,
            session_timeout_seconds=duration("sessionTimeout", DEFAULT_SESSION, 60, MAX_SESSION_SECONDS),
            certificate_arn=certificate_arn,
            domain_name=required("domainName"),
            roles=parse_roles(get("roles")),
            groups_claim=optional("groupsClaim") or "groups",
            internet_facing=internet_facing,
            waf=boolean("waf", internet_facing),
            vpc_id=optional("vpcId"),
            hosted_zone_id=hosted_zone_id,
            hosted_zone_name=hosted_zone_name,
            image=image,
            regions=regions,
            ingress_cidrs=ingress_cidrs,
            desired_count=integer("desiredCount", 2, 1, 10),
            cpu=integer("cpu", 256, 256, 4096),
            memory_mib=integer("memoryMiB", 512, 512, 30720),
            log_retention_days=retention_days(get("logRetentionDays")),
            container_insights=boolean("containerInsights", True),
            deletion_protection=boolean("deletionProtection", True),
            alarm_topic_arn=topic,
            alarm_email=optional("alarmEmail"),
            view_age_limit_seconds=duration("viewAgeLimit", "5m", 10, 24 * 3600),
            emf_interval_seconds=duration("emfInterval", "60s", 10, 3600),
            environment=dict(environment),
        )


def retention_days(value: Any) -> int:
    if value is None:
        return 90
    try:
        days = int(value)
    except (TypeError, ValueError):
        days = -1
    if days not in RETENTION:
        raise SettingsError(
            f"context 'logRetentionDays' is {value!r}; CloudWatch keeps logs for one of {sorted(RETENTION)} days"
        )
    return days


def parse_roles(value: Any) -> dict[str, Any]:
    """The roles mapping: `{"default": ROLE, "groups": {GROUP: ROLE}}`.

    Given in cdk.json as that object, or on the command line as its JSON
    text. Without it every signed-in user is a viewer; `"default": "none"`
    gives a user in no listed group no role at all.
    """
    if value is None:
        value = {"default": "viewer", "groups": {}}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as e:
            raise SettingsError(f"context 'roles' is not JSON: {e}") from None
    if not isinstance(value, dict):
        raise SettingsError('context \'roles\' must be {"default": ROLE, "groups": {GROUP: ROLE}}')
    unknown = set(value) - {"default", "groups"}
    if unknown:
        raise SettingsError(f"context 'roles' has unknown keys {sorted(unknown)}; it has 'default' and 'groups'")
    default = value.get("default", "viewer")
    groups = value.get("groups", {})
    if not isinstance(groups, dict):
        raise SettingsError("context 'roles': 'groups' must map group names to roles")
    if default not in (*ROLES, "none"):
        raise SettingsError(
            f"context 'roles': default is {default!r}; a role is one of {', '.join(ROLES)} (or \"none\": no role)"
        )
    for group, role in groups.items():
        if role not in ROLES:
            raise SettingsError(f"context 'roles': groups.{group} is {role!r}; a role is one of {', '.join(ROLES)}")
    return {"default": default, "groups": dict(groups)}


def roles_toml(roles: Mapping[str, Any]) -> str:
    """The roles file's text (issue 32: `default` and a `[groups]` table).

    Keys and values are TOML basic strings; JSON's string escapes are
    valid ones.
    """
    lines = [f"default = {json.dumps(roles['default'])}", "", "[groups]"]
    lines += [f"{json.dumps(group)} = {json.dumps(role)}" for group, role in roles["groups"].items()]
    return "\n".join(lines) + "\n"


# CloudWatch Logs keeps logs for one of these numbers of days.
RETENTION = {
    1: "ONE_DAY", 3: "THREE_DAYS", 5: "FIVE_DAYS", 7: "ONE_WEEK", 14: "TWO_WEEKS",
    30: "ONE_MONTH", 60: "TWO_MONTHS", 90: "THREE_MONTHS", 120: "FOUR_MONTHS",
    150: "FIVE_MONTHS", 180: "SIX_MONTHS", 365: "ONE_YEAR", 400: "THIRTEEN_MONTHS",
    545: "EIGHTEEN_MONTHS", 731: "TWO_YEARS", 1096: "THREE_YEARS", 1827: "FIVE_YEARS",
    2192: "SIX_YEARS", 2557: "SEVEN_YEARS", 2922: "EIGHT_YEARS", 3288: "NINE_YEARS",
    3653: "TEN_YEARS",
}  # fmt: skip
