"""The stack's security settings, pinned, and twelve-plus deliberate
weakenings of its source, each of which a check here catches.

Each weakening is a one-line edit of the app's source (the table below):
the edited app is synthesized in a copy of deploy/cdk, and the check named
beside it must fail on the result, while every check passes on the app as
it is. A change that weakens the stack the same way fails this test.
"""

from __future__ import annotations

import importlib
import json
import shutil
import sys
from pathlib import Path

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

CDK_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = CDK_DIR.parents[1]
IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/gco-console@sha256:" + "ab" * 32

APP_MODULES = ("alarms", "settings", "gco_console_stack")


def resources(t: dict, kind: str) -> dict:
    return {k: r for k, r in t["Resources"].items() if r["Type"] == kind}


def one(t: dict, kind: str, **props) -> tuple[str, dict]:
    found = [
        (k, r["Properties"])
        for k, r in resources(t, kind).items()
        if all(r["Properties"].get(p) == v for p, v in props.items())
    ]
    assert len(found) == 1, f"one {kind} {props}, found {len(found)}"
    return found[0]


def oidc_configs(t: dict) -> list[dict]:
    _, https = one(t, "AWS::ElasticLoadBalancingV2::Listener", Port=443)
    _, rule = one(t, "AWS::ElasticLoadBalancingV2::ListenerRule")
    actions = https["DefaultActions"] + rule["Actions"]
    return [a["AuthenticateOidcConfig"] for a in actions if a["Type"] == "authenticate-oidc"]


def security_group(t: dict, description_start: str) -> tuple[str, dict]:
    found = [(k, r["Properties"]) for k, r in resources(t, "AWS::EC2::SecurityGroup").items()
             if r["Properties"]["GroupDescription"].startswith(description_start)]
    assert len(found) == 1
    return found[0]


def egress(t: dict, group_id: str, inline: dict) -> list[tuple]:
    """Every egress rule of a group: inline, and standalone ones naming it."""
    rules = list(inline.get("SecurityGroupEgress", []))
    rules += [r["Properties"] for r in resources(t, "AWS::EC2::SecurityGroupEgress").values()
              if r["Properties"]["GroupId"] == {"Fn::GetAtt": [group_id, "GroupId"]}]
    return sorted(
        (r["IpProtocol"], r.get("FromPort"), r.get("ToPort"), r.get("CidrIp") or json.dumps(r.get("DestinationSecurityGroupId")))
        for r in rules
    )


# --- The checks: each pins one setting --------------------------------------


def check_session_8h(t, _):
    assert {str(c["SessionTimeout"]) for c in oidc_configs(t)} == {"28800"}


def check_scope(t, _):
    assert {c["Scope"] for c in oidc_configs(t)} == {"openid email profile"}


def check_tls_policy(t, _):
    _, https = one(t, "AWS::ElasticLoadBalancingV2::Listener", Port=443)
    assert https["SslPolicy"] == "ELBSecurityPolicy-TLS13-1-2-2021-06"


def check_task_egress_https_only(t, _):
    group_id, group = security_group(t, "GCO console task")
    assert egress(t, group_id, group) == [("tcp", 443, 443, "0.0.0.0/0")]


def check_circuit_breaker(t, _):
    _, service = one(t, "AWS::ECS::Service")
    assert service["DeploymentConfiguration"].get("DeploymentCircuitBreaker") == {"Enable": True, "Rollback": True}


def check_alb_egress(t, _):
    group_id, group = security_group(t, "GCO console ALB")
    task_group, _ = security_group(t, "GCO console task")
    assert egress(t, group_id, group) == [
        ("tcp", 443, 443, "0.0.0.0/0"),
        ("tcp", 8080, 8080, json.dumps({"Fn::GetAtt": [task_group, "GroupId"]})),
    ]


def check_minimum_healthy(t, _):
    _, service = one(t, "AWS::ECS::Service")
    config = service["DeploymentConfiguration"]
    assert (config["MinimumHealthyPercent"], config["MaximumPercent"]) == (100, 200)


def check_api_denies(t, _):
    _, rule = one(t, "AWS::ElasticLoadBalancingV2::ListenerRule")
    [sign_in] = [a for a in rule["Actions"] if a["Type"] == "authenticate-oidc"]
    assert sign_in["AuthenticateOidcConfig"]["OnUnauthenticatedRequest"] == "deny"
    assert rule["Conditions"] == [{"Field": "path-pattern", "PathPatternConfig": {"Values": ["/api/*"]}}]


def check_drops_invalid_headers(t, _):
    _, alb = one(t, "AWS::ElasticLoadBalancingV2::LoadBalancer")
    attributes = {a["Key"]: a["Value"] for a in alb["LoadBalancerAttributes"]}
    assert attributes["routing.http.drop_invalid_header_fields.enabled"] == "true"


def check_internal_by_default(t, _):
    _, alb = one(t, "AWS::ElasticLoadBalancingV2::LoadBalancer")
    assert alb["Scheme"] == "internal"


def check_non_root(t, _):
    _, task = one(t, "AWS::ECS::TaskDefinition")
    [container] = task["ContainerDefinitions"]
    assert container.get("User") == "65532:65532"


def check_read_only_root(t, _):
    _, task = one(t, "AWS::ECS::TaskDefinition")
    [container] = task["ContainerDefinitions"]
    assert container.get("ReadonlyRootFilesystem") is True


def check_waf_rule_groups(_, public):
    _, acl = one(public, "AWS::WAFv2::WebACL")
    names = [r["Statement"]["ManagedRuleGroupStatement"]["Name"] for r in sorted(acl["Rules"], key=lambda r: r["Priority"])]
    assert names == ["AWSManagedRulesCommonRuleSet", "AWSManagedRulesAmazonIpReputationList"]


def check_default_security_group_closed(t, _):
    assert len(resources(t, "Custom::VpcRestrictDefaultSG")) == 1


def check_deletion_protection(t, _):
    _, alb = one(t, "AWS::ElasticLoadBalancingV2::LoadBalancer")
    attributes = {a["Key"]: a["Value"] for a in alb["LoadBalancerAttributes"]}
    assert attributes["deletion_protection.enabled"] == "true"


CHECKS = {f.__name__: f for f in [
    check_session_8h, check_scope, check_tls_policy, check_task_egress_https_only, check_circuit_breaker,
    check_alb_egress, check_minimum_healthy, check_api_denies, check_drops_invalid_headers,
    check_internal_by_default, check_non_root, check_read_only_root, check_waf_rule_groups,
    check_default_security_group_closed, check_deletion_protection,
]}

STACK, SETTINGS = "gco_console_stack.py", "settings.py"
# (weakening, file, text as it is, text weakened, the check that catches it)
WEAKENINGS = [
    ("session 8 h -> 7 days", SETTINGS, 'DEFAULT_SESSION = "8h"', 'DEFAULT_SESSION = "7d"', check_session_8h),
    ("scope -> openid", SETTINGS, 'DEFAULT_SCOPE = "openid email profile"', 'DEFAULT_SCOPE = "openid"', check_scope),
    ("TLS policy -> legacy", STACK, "ssl_policy=elbv2.SslPolicy.RECOMMENDED_TLS", "ssl_policy=elbv2.SslPolicy.LEGACY",
     check_tls_policy),
    ("task egress open to all", STACK,
     'description="GCO console task: port 8080 from the ALB only",\n            allow_all_outbound=False,',
     'description="GCO console task: port 8080 from the ALB only",\n            allow_all_outbound=True,',
     check_task_egress_https_only),
    ("circuit breaker removed", STACK, "            circuit_breaker=ecs.DeploymentCircuitBreaker(rollback=True),\n", "",
     check_circuit_breaker),
    ("ALB egress to all ports", STACK, "alb_sg.add_egress_rule(ec2.Peer.any_ipv4(), ec2.Port.tcp(443),",
     "alb_sg.add_egress_rule(ec2.Peer.any_ipv4(), ec2.Port.all_tcp(),", check_alb_egress),
    ("minimum healthy 0", STACK, "min_healthy_percent=100,", "min_healthy_percent=0,", check_minimum_healthy),
    ("/api/* redirected to the IdP, not 401", STACK, "action=sign_in(elbv2.UnauthenticatedAction.DENY)",
     "action=sign_in(elbv2.UnauthenticatedAction.AUTHENTICATE)", check_api_denies),
    ("invalid header fields passed on", STACK, "drop_invalid_header_fields=True,", "drop_invalid_header_fields=False,",
     check_drops_invalid_headers),
    ("internet-facing by default", SETTINGS, 'internet_facing = boolean("internetFacing", False)',
     'internet_facing = boolean("internetFacing", True)', check_internal_by_default),
    ("container runs as root", STACK, '            user="65532:65532",\n', "", check_non_root),
    ("WAF IP-reputation rules dropped", STACK,
     'WAF_RULE_GROUPS = ("AWSManagedRulesCommonRuleSet", "AWSManagedRulesAmazonIpReputationList")',
     'WAF_RULE_GROUPS = ("AWSManagedRulesCommonRuleSet",)', check_waf_rule_groups),
    ("writable root file system", STACK, "readonly_root_filesystem=True,", "readonly_root_filesystem=False,",
     check_read_only_root),
    ("VPC default security group left open", STACK, "restrict_default_security_group=True,",
     "restrict_default_security_group=False,", check_default_security_group_closed),
    ("ALB deletion protection off by default", SETTINGS, 'deletion_protection=boolean("deletionProtection", True)',
     'deletion_protection=boolean("deletionProtection", False)', check_deletion_protection),
]


def synth_copy(tmp: Path, edit: tuple[str, str, str] | None) -> tuple[dict, dict]:
    """The example templates (internal, internet-facing) of deploy/cdk as it
    is, or with one edit, imported from a copy in this process."""
    cdk_copy = tmp / "deploy" / "cdk"
    cdk_copy.mkdir(parents=True)
    for name in (*(f"{m}.py" for m in APP_MODULES), "cdk.json", "examples.json"):
        shutil.copy(CDK_DIR / name, cdk_copy / name)
    (tmp / "deploy" / "iam-policy.json").symlink_to(REPO_ROOT / "deploy" / "iam-policy.json")
    if edit:
        name, old, new = edit
        text = (cdk_copy / name).read_text()
        assert text.count(old) == 1, f"{name} no longer holds {old!r} once: update the table"
        (cdk_copy / name).write_text(text.replace(old, new))
    saved = {m: sys.modules.pop(m) for m in APP_MODULES if m in sys.modules}
    sys.path.insert(0, str(cdk_copy))
    try:
        stack_module = importlib.import_module("gco_console_stack")
        settings_module = sys.modules["settings"]
        base = {**settings_module.examples(), **json.loads((cdk_copy / "cdk.json").read_text())["context"], "image": IMAGE}
        templates = []
        for extra in ({}, {"internetFacing": True}):
            context = {**base, **extra}
            app = cdk.App(context=context)
            stack = stack_module.ConsoleStack(
                app,
                "GcoConsole",
                settings=settings_module.Settings.from_context(context),
                env=cdk.Environment(region="us-east-1"),
            )
            templates.append(Template.from_stack(stack).to_json())
        return templates[0], templates[1]
    finally:
        sys.path.remove(str(cdk_copy))
        for m in APP_MODULES:
            sys.modules.pop(m, None)
        sys.modules.update(saved)


@pytest.fixture(scope="module")
def weakened(tmp_path_factory):
    """Every weakening's templates."""
    return {
        name: synth_copy(tmp_path_factory.mktemp("weakened"), (path, old, new))
        for name, path, old, new, _ in WEAKENINGS
    }


def test_every_check_passes_on_the_stack_as_it_is(tmp_path):
    internal, public = synth_copy(tmp_path, None)
    for check in CHECKS.values():
        check(internal, public)


def test_there_are_at_least_twelve_weakenings_each_named_once():
    assert len(WEAKENINGS) >= 12
    assert len({w[0] for w in WEAKENINGS}) == len(WEAKENINGS)


@pytest.mark.parametrize("row", WEAKENINGS, ids=[w[0] for w in WEAKENINGS])
def test_each_weakening_fails_its_check(row, weakened):
    name, _, _, _, check = row
    internal, public = weakened[name]
    with pytest.raises(AssertionError):
        check(internal, public)
