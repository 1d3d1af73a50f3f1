"""The GCO console's CDK stack, synthesized with no AWS account and checked
with aws_cdk.assertions and cdk-nag's AwsSolutions pack.

Run: python3 -m pytest deploy/cdk/tests (scripts/test-cdk.sh installs what
it needs first).
"""

from __future__ import annotations

import copy
import csv
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

CDK_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = CDK_DIR.parents[1]
sys.path.insert(0, str(CDK_DIR))

import aws_cdk as cdk  # noqa: E402
from aws_cdk.assertions import Annotations, Match, Template  # noqa: E402
from cdk_nag import AwsSolutionsChecks  # noqa: E402

from gco_console_stack import (  # noqa: E402
    AUDIT_INDEX_ATTRIBUTES,
    AUDIT_INDEX_NAME,
    AUDIT_INDEX_PARTITION_KEY,
    HISTORY_PARTITION_KEY,
    HISTORY_SORT_KEY,
    ConsoleStack,
)
from settings import Settings, SettingsError, examples, roles_toml  # noqa: E402

CDK_JSON = json.loads((CDK_DIR / "cdk.json").read_text())["context"]
# What `python app.py` synthesizes with when no account is set.
EXAMPLE = {**examples(), **CDK_JSON}
POLICY = json.loads((REPO_ROOT / "deploy" / "iam-policy.json").read_text())
ACCOUNT = "123456789012"


def synth(changes: dict | None = None, *, nag: bool = False, account: str | None = None):
    """The stack for cdk.json's context (its feature flags too), the
    examples, and `changes` (a None value removes a key)."""
    context = {**EXAMPLE, **(changes or {})}
    context = {k: v for k, v in context.items() if v is not None}
    app = cdk.App(context=context)
    settings = Settings.from_context(context)
    stack = ConsoleStack(
        app,
        "GcoConsole",
        settings=settings,
        env=cdk.Environment(account=account, region=settings.endpoints_table_region),
    )
    if nag:
        cdk.Aspects.of(app).add(AwsSolutionsChecks(verbose=True))
    return stack, Template.from_stack(stack)


@pytest.fixture(scope="module")
def example():
    return synth()


@pytest.fixture(scope="module")
def template(example):
    return example[1]


@pytest.fixture(scope="module")
def public():
    return synth({"internetFacing": True})[1]


def only(template: Template, kind: str, props: dict | None = None) -> tuple[str, dict]:
    found = template.find_resources(kind, {"Properties": props} if props else None)
    assert len(found) == 1, f"one {kind} expected, found {sorted(found)}"
    return next(iter(found.items()))


def dynamo_store_source() -> str:
    """The console's DynamoDB store, its files' text together."""
    folder = REPO_ROOT / "backend" / "src" / "store" / "dynamo"
    return "\n".join(path.read_text() for path in sorted(folder.glob("*.rs")))


def logical_id(stack: ConsoleStack, construct) -> str:
    return stack.resolve(construct.node.default_child.logical_id)


# --- The load balancer ----------------------------------------------------


def test_https_listener_signs_in_with_oidc_then_forwards(example):
    stack, template = example
    _, https = only(template, "AWS::ElasticLoadBalancingV2::Listener", {"Port": 443})
    props = https["Properties"]
    assert props["Protocol"] == "HTTPS"
    assert props["Certificates"] == [{"CertificateArn": EXAMPLE["certificateArn"]}]
    actions = sorted(props["DefaultActions"], key=lambda a: a["Order"])
    assert [a["Type"] for a in actions] == ["authenticate-oidc", "forward"]
    assert [a["Order"] for a in actions] == [1, 2]
    oidc = actions[0]["AuthenticateOidcConfig"]
    assert oidc["Issuer"] == EXAMPLE["oidcIssuer"]
    assert oidc["ClientId"] == EXAMPLE["oidcClientId"]
    assert oidc["AuthorizationEndpoint"] == EXAMPLE["oidcAuthorizationEndpoint"]
    assert oidc["TokenEndpoint"] == EXAMPLE["oidcTokenEndpoint"]
    assert oidc["UserInfoEndpoint"] == EXAMPLE["oidcUserInfoEndpoint"]
    assert oidc["OnUnauthenticatedRequest"] == "authenticate"
    assert (oidc["Scope"], oidc["SessionTimeout"]) == ("openid email profile", "28800")
    # The client secret is a dynamic reference CloudFormation resolves at
    # deploy time: never its value.
    assert oidc["ClientSecret"] == (
        "{{resolve:secretsmanager:" + EXAMPLE["oidcClientSecretArn"] + ":SecretString:::}}"
    )
    target_group_id, target_group = only(template, "AWS::ElasticLoadBalancingV2::TargetGroup")
    assert actions[1]["TargetGroupArn"] == {"Ref": target_group_id}
    tg = target_group["Properties"]
    assert (tg["HealthCheckPath"], tg["Matcher"], tg["Port"], tg["TargetType"]) == ("/healthz", {"HttpCode": "200"}, 8080, "ip")


def test_http_is_redirected_to_https(template):
    _, http = only(template, "AWS::ElasticLoadBalancingV2::Listener", {"Port": 80})
    assert http["Properties"]["DefaultActions"] == [
        {
            "Type": "redirect",
            "RedirectConfig": {"Port": "443", "Protocol": "HTTPS", "StatusCode": "HTTP_301"},
        }
    ]


def test_the_alb_is_internal_by_default_and_logs_access(template):
    _, alb = only(template, "AWS::ElasticLoadBalancingV2::LoadBalancer")
    props = alb["Properties"]
    assert props["Scheme"] == "internal"
    assert props["Subnets"] == private_subnets(template)
    attributes = {a["Key"]: a["Value"] for a in props["LoadBalancerAttributes"]}
    assert attributes["access_logs.s3.enabled"] == "true"
    assert attributes["routing.http.drop_invalid_header_fields.enabled"] == "true"
    assert attributes["deletion_protection.enabled"] == "true"


# --- The task and its network ---------------------------------------------


def test_only_the_alb_reaches_the_task(example):
    stack, template = example
    service_id, service = only(template, "AWS::ECS::Service")
    network = service["Properties"]["NetworkConfiguration"]["AwsvpcConfiguration"]
    assert network["AssignPublicIp"] == "DISABLED"
    [task_sg] = network["SecurityGroups"]
    task_sg_id = task_sg["Fn::GetAtt"][0]
    alb_sg_ids = [
        g["Fn::GetAtt"][0]
        for g in only(template, "AWS::ElasticLoadBalancingV2::LoadBalancer")[1]["Properties"]["SecurityGroups"]
    ]
    resources = template.to_json()["Resources"]
    # Rules inline in the task's group, and standalone rules naming it.
    inline = resources[task_sg_id]["Properties"].get("SecurityGroupIngress", [])
    standalone = [
        r["Properties"]
        for r in resources.values()
        if r["Type"] == "AWS::EC2::SecurityGroupIngress" and r["Properties"]["GroupId"] == {"Fn::GetAtt": [task_sg_id, "GroupId"]}
    ]
    rules = inline + standalone
    assert rules, "the ALB must reach the task"
    for rule in rules:
        assert "CidrIp" not in rule and "CidrIpv6" not in rule, rule
        assert rule["SourceSecurityGroupId"] == {"Fn::GetAtt": [alb_sg_ids[0], "GroupId"]}
        assert (rule["FromPort"], rule["ToPort"], rule["IpProtocol"]) == (8080, 8080, "tcp")
    # No rule anywhere opens the task's group to the internet.
    for r in resources.values():
        if r["Type"] == "AWS::EC2::SecurityGroup":
            for rule in r["Properties"].get("SecurityGroupIngress", []):
                if rule.get("CidrIp") == "0.0.0.0/0" or rule.get("CidrIpv6") == "::/0":
                    assert r is not resources[task_sg_id]
                    assert rule["FromPort"] in (80, 443)


def test_task_role_carries_exactly_the_policy_file(example):
    stack, template = example
    _, task_def = only(template, "AWS::ECS::TaskDefinition")
    role_id = task_def["Properties"]["TaskRoleArn"]["Fn::GetAtt"][0]
    policies = [
        p["Properties"]
        for p in template.find_resources("AWS::IAM::Policy").values()
        if {"Ref": role_id} in p["Properties"]["Roles"]
    ]
    assert len(policies) == 1, "one policy on the task role"
    role = template.to_json()["Resources"][role_id]["Properties"]
    assert "ManagedPolicyArns" not in role and "Policies" not in role
    statements = policies[0]["PolicyDocument"]["Statement"]
    # One action is written as a string, several as a list.
    actions = {s["Sid"]: sorted([s["Action"]] if isinstance(s["Action"], str) else s["Action"]) for s in statements}
    assert actions == {s["Sid"]: sorted(s["Action"]) for s in POLICY["Statement"]}
    assert all(s["Effect"] == "Allow" for s in statements)
    resources = {s["Sid"]: s["Resource"] for s in statements}
    # GCO's table, imported: its name and region in the ARN.
    endpoints = stack.resolve(resources["EndpointsTable"])
    arn_text = json.dumps(endpoints)
    assert ":dynamodb:us-east-1:" in arn_text and ":table/gco-inference-endpoints" in arn_text
    history_id, _ = only(template, "AWS::DynamoDB::Table")
    assert resources["HistoryTable"] == {"Fn::GetAtt": [history_id, "Arn"]}
    assert resources["HistoryIndex"] == {"Fn::Join": ["", [{"Fn::GetAtt": [history_id, "Arn"]}, f"/index/{AUDIT_INDEX_NAME}"]]}


def test_the_endpoints_table_is_imported_never_created(template):
    tables = template.find_resources("AWS::DynamoDB::Table")
    assert len(tables) == 1
    [table] = tables.values()
    assert table["Properties"]["TableName"] == "gco-inference-endpoints-history"
    assert not template.find_resources("AWS::DynamoDB::GlobalTable")
    assert not template.find_resources("Custom::DynamoDBTable")


def test_history_table_settings(template):
    _, table = only(template, "AWS::DynamoDB::Table")
    props = table["Properties"]
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert props["DeletionProtectionEnabled"] is True
    assert table["DeletionPolicy"] == "Retain" and table["UpdateReplacePolicy"] == "Retain"
    assert props["KeySchema"] == [
        {"AttributeName": HISTORY_PARTITION_KEY, "KeyType": "HASH"},
        {"AttributeName": HISTORY_SORT_KEY, "KeyType": "RANGE"},
    ]


def test_the_audit_index_is_the_one_the_console_reads(template):
    _, table = only(template, "AWS::DynamoDB::Table")
    [index] = table["Properties"]["GlobalSecondaryIndexes"]
    assert index == {
        "IndexName": AUDIT_INDEX_NAME,
        "KeySchema": [
            {"AttributeName": AUDIT_INDEX_PARTITION_KEY, "KeyType": "HASH"},
            {"AttributeName": HISTORY_SORT_KEY, "KeyType": "RANGE"},
        ],
        "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(AUDIT_INDEX_ATTRIBUTES)},
    }
    store = dynamo_store_source()
    assert f'pub const AUDIT_INDEX: &str = "{AUDIT_INDEX_NAME}";' in store
    assert f'("{AUDIT_INDEX_PARTITION_KEY}", KeyType::Hash)' in store
    attrs = ", ".join(f'"{a}"' for a in AUDIT_INDEX_ATTRIBUTES)
    assert f"AUDIT_INDEX_ATTRIBUTES: [&str; {len(AUDIT_INDEX_ATTRIBUTES)}] = [{attrs}];" in store


def test_the_history_key_is_the_one_the_console_writes():
    # The console's DynamoDB store makes the same table with --create-table
    # and writes its entries under these two attributes.
    store = dynamo_store_source()
    assert f'("{HISTORY_PARTITION_KEY}", KeyType::Hash)' in store
    assert f'("{HISTORY_SORT_KEY}", KeyType::Range)' in store


def test_console_environment(example):
    stack, template = example
    _, task_def = only(template, "AWS::ECS::TaskDefinition")
    [container] = task_def["Properties"]["ContainerDefinitions"]
    env = {e["Name"]: e["Value"] for e in container["Environment"]}
    alb_id = logical_id(stack, stack.alb)
    history_id, _ = only(template, "AWS::DynamoDB::Table")
    roles = env.pop("GCO_ROLES")
    assert env == {
        "GCO_CONSOLE_ADDR": "0.0.0.0:8080",
        "GCO_AUTH": "alb",
        "GCO_ALB_ARN": {"Ref": alb_id},
        "GCO_GROUPS_CLAIM": "groups",
        "GCO_HISTORY_TABLE": {"Ref": history_id},
        "INFERENCE_ENDPOINTS_TABLE_NAME": "gco-inference-endpoints",
        "DYNAMODB_REGION": "us-east-1",
        "GCO_ALLOWED_HOSTS": "gco-console.example.com",
        "GCO_REGIONS": "us-east-1,us-west-2",
        "GCO_EMF_INTERVAL": "60s",
    }
    # The roles file's text (issue 32's format), inline.
    assert tomllib.loads(roles) == {
        "default": "viewer",
        "groups": {"ml-engineers": "operator", "platform-admins": "admin"},
    }
    assert container["PortMappings"] == [{"ContainerPort": 8080, "Protocol": "tcp"}]
    assert container["ReadonlyRootFilesystem"] is True
    assert container["User"] == "65532:65532"
    assert "Secrets" not in container
    log = container["LogConfiguration"]
    assert log["LogDriver"] == "awslogs"
    props = task_def["Properties"]
    assert (props["Cpu"], props["Memory"]) == ("256", "512")
    assert props["RuntimePlatform"] == {"CpuArchitecture": "X86_64", "OperatingSystemFamily": "LINUX"}


def test_the_image_refuses_to_run_without_dynamodb():
    # GCO_REQUIRE_DYNAMODB comes from the image, not the task definition.
    text = (REPO_ROOT / "Containerfile").read_text()
    assert re.search(r"^FROM scratch$", text, re.M)
    assert "GCO_REQUIRE_DYNAMODB=true" in text
    user = re.search(r"^USER (\d+):(\d+)$", text, re.M)
    assert user and int(user.group(1)) != 0 and int(user.group(2)) != 0


def test_logs_have_a_retention(template):
    groups = template.find_resources("AWS::Logs::LogGroup")
    assert groups
    for group in groups.values():
        assert group["Properties"]["RetentionInDays"] == 90


def test_the_image_is_built_from_the_repositorys_containerfile(example):
    stack, _ = example
    assembly = stack.node.root.synth()
    manifest = json.loads((Path(assembly.directory) / f"{stack.artifact_id}.assets.json").read_text())
    [image] = manifest["dockerImages"].values()
    source = image["source"]
    assert (source["dockerFile"], source["platform"]) == ("Containerfile", "linux/amd64")
    # The build context is the repository root as .dockerignore leaves it:
    # the Containerfile and scripts/image.sh's staging, nothing else.
    staged = Path(assembly.directory) / source["directory"]
    assert (staged / "Containerfile").read_text() == (REPO_ROOT / "Containerfile").read_text()
    names = {p.relative_to(staged).parts[0] for p in staged.rglob("*")}
    assert names <= {"Containerfile", ".dockerignore", "target"}, names


# --- cdk-nag --------------------------------------------------------------


def nag_findings(changes: dict) -> list[str]:
    stack, _ = synth(changes, nag=True)
    annotations = Annotations.from_stack(stack)
    return [
        f"{m.id}: {m.entry.data}"
        for find in (annotations.find_error, annotations.find_warning)
        for m in find("*", Match.string_like_regexp("AwsSolutions-.*"))
    ]


def test_cdk_nag_aws_solutions_finds_nothing_unsettled():
    assert nag_findings({}) == []
    assert nag_findings({"internetFacing": True}) == []


def test_cdk_nag_settles_the_optional_shapes_too():
    changes = dict(containerInsights=False, ingressCidrs=["203.0.113.0/24"], logRetentionDays=30, waf=True)
    assert nag_findings(changes) == []
    assert nag_findings({"alarmTopicArn": "arn:aws:sns:us-east-1:123456789012:pager", "image": IMAGE}) == []


# --- Parameters -----------------------------------------------------------


def test_settings_refuse_what_would_be_wrong():
    def refused(**changes) -> str:
        context = {**EXAMPLE, **changes}
        with pytest.raises(SettingsError) as e:
            Settings.from_context(context)
        return str(e.value)

    assert "required (cdk.json, or -c KEY=VALUE): endpointsTableRegion" in refused(endpointsTableRegion=None)
    assert "never goes in the template" in refused(oidcClientSecretArn="hunter2-plaintext")
    assert "a role is one of viewer, operator, admin" in refused(roles={"default": "root"})
    assert "a role is one of" in refused(roles={"default": "viewer", "groups": {"ops": "none"}})
    assert "a role is one of" in refused(roles={"default": "viewer", "groups": {"ops": "superuser"}})
    assert "unknown keys" in refused(roles={"default": "viewer", "admins": ["a"]})
    assert "https:// URL" in refused(oidcIssuer="http://idp.example.com")
    assert "may not set GCO_AUTH" in refused(environment={"GCO_AUTH": "none"})
    assert "CloudWatch keeps logs" in refused(logRetentionDays=31)
    assert "go together" in refused(hostedZoneId="Z123")


def test_default_none_leaves_unlisted_users_without_a_role():
    context = {**EXAMPLE, "roles": {"default": "none", "groups": {"sre": "admin"}}}

    text = roles_toml(Settings.from_context(context).roles)
    assert tomllib.loads(text) == {"default": "none", "groups": {"sre": "admin"}}


def test_roles_from_the_command_line_as_json_text():
    context = {**EXAMPLE, "roles": '{"default": "operator", "groups": {"sre \\"core\\"": "admin"}}'}
    settings = Settings.from_context(context)

    assert tomllib.loads(roles_toml(settings.roles)) == {"default": "operator", "groups": {'sre "core"': "admin"}}


def test_an_existing_vpc_is_looked_up_not_created():
    _, template = synth({"vpcId": VPC_ID, **vpc_lookup()}, account=ACCOUNT)
    assert not template.find_resources("AWS::EC2::VPC")
    assert not template.find_resources("AWS::EC2::NatGateway")
    template.resource_count_is("AWS::ECS::Service", 1)


def test_a_hosted_zone_gets_the_alias_record():
    _, template = synth({"hostedZoneId": "Z0123456789ABCDEFGHIJ", "hostedZoneName": "example.com"})
    _, record = only(template, "AWS::Route53::RecordSet")
    assert record["Properties"]["Name"] == "gco-console.example.com."
    assert record["Properties"]["Type"] == "A"


def test_python_app_py_synthesizes_with_no_account(tmp_path):
    # As a user runs it: cdk.json's example context, no credentials, and
    # cdk-nag applied by the app itself (an unsettled finding fails synth).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "CDK_"))}
    env["CDK_OUTDIR"] = str(tmp_path)
    run = subprocess.run(
        [sys.executable, "app.py"], cwd=CDK_DIR, env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    metadata = json.loads((tmp_path / "GcoConsole.metadata.json").read_text())
    entries = [e for found in metadata.values() for e in found]
    assert [e["data"] for e in entries if e["type"] in ("aws:cdk:error", "aws:cdk:warning")] == []
    # cdk-nag's report: every rule it checked, none left non-compliant.
    with open(tmp_path / "AwsSolutions--GcoConsole-NagReport.csv", newline="") as f:
        report = list(csv.DictReader(f))
    assert report and [r for r in report if r["Compliance"] == "Non-Compliant"] == []
    template = json.loads((tmp_path / "GcoConsole.template.json").read_text())
    assert "AWS::ECS::Service" in {r["Type"] for r in template["Resources"].values()}


# --- Deploying for real -----------------------------------------------------

IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/gco-console@sha256:" + "ab" * 32
VPC_ID = "vpc-0123456789abcdef0"
# A team's own values: none of them an example.
REAL = {
    "oidcIssuer": "https://login.corp.internal",
    "oidcAuthorizationEndpoint": "https://login.corp.internal/authorize",
    "oidcTokenEndpoint": "https://login.corp.internal/token",
    "oidcUserInfoEndpoint": "https://login.corp.internal/userinfo",
    "oidcClientId": "0oa1gco",
    "oidcClientSecretArn": "arn:aws:secretsmanager:us-east-1:123456789012:secret:gco-oidc-Xy12Ab",
    "certificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/1b2c3d4e-0000-4000-8000-000000000001",
    "domainName": "gco.corp.internal",
    "roles": {"default": "none", "groups": {"ml-platform": "admin"}},
    "regions": ["eu-west-1"],
    "image": IMAGE,
}


def vpc_lookup(*, public: bool = False) -> dict:
    """cdk.context.json's record of VPC_ID: private subnets with a route
    out in two zones (and public ones when asked)."""

    def subnets(first: int) -> list[dict]:
        return [
            {
                "subnetId": f"subnet-0000000000000000{first + i}",
                "cidr": f"10.0.{first + i}.0/24",
                "availabilityZone": f"us-east-1{zone}",
                "routeTableId": f"rtb-0000000000000000{first + i}",
            }
            for i, zone in enumerate("ab")
        ]

    groups = [{"name": "Private", "type": "Private", "subnets": subnets(1)}]
    if public:
        groups.append({"name": "Public", "type": "Public", "subnets": subnets(3)})
    key = f"vpc-provider:account={ACCOUNT}:filter.vpc-id={VPC_ID}:region=us-east-1:returnAsymmetricSubnets=true"
    return {
        key: {
            "vpcId": VPC_ID,
            "vpcCidrBlock": "10.0.0.0/16",
            "ownerAccountId": ACCOUNT,
            "availabilityZones": [],
            "subnetGroups": groups,
        }
    }


def run_app(context: dict | None, tmp_path: Path, *, account: str | None = None) -> subprocess.CompletedProcess:
    """`python app.py` as the CDK CLI runs it: the context in CDK_CONTEXT_JSON
    (cdk.json's when None), the account when the CLI found credentials."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "CDK_"))}
    env["CDK_OUTDIR"] = str(tmp_path)
    if context is not None:
        env["CDK_CONTEXT_JSON"] = json.dumps({**CDK_JSON, **context})
    if account:
        env["CDK_DEFAULT_ACCOUNT"] = account
    return subprocess.run([sys.executable, "app.py"], cwd=CDK_DIR, env=env, capture_output=True, text=True, timeout=300)


def test_a_deploy_with_any_example_value_is_refused(tmp_path):
    # cdk.json alone: every required parameter is missing, none made up.
    run = run_app(None, tmp_path, account=ACCOUNT)
    assert run.returncode != 0
    assert run.stderr.strip() == (
        "gco-console stack: these parameters are required (cdk.json, or -c KEY=VALUE): oidcIssuer, "
        "oidcAuthorizationEndpoint, oidcTokenEndpoint, oidcUserInfoEndpoint, oidcClientId, oidcClientSecretArn, "
        "certificateArn, domainName"
    ), run.stderr
    # Each example left, alone among real values, is named.
    for key, value in examples().items():
        run = run_app({**REAL, key: value}, tmp_path, account=ACCOUNT)
        assert run.returncode != 0, key
        assert f"still have example values (examples.json, or the documentation's example.com and 111122223333): {key}." in run.stderr, run.stderr
    # regions as the CLI's -c gives it: a comma-separated string.
    run = run_app({**REAL, "regions": "us-east-1,us-west-2"}, tmp_path, account=ACCOUNT)
    assert "example values" in run.stderr and ": regions." in run.stderr, run.stderr
    run = run_app({**REAL, "domainName": "console.example.com"}, tmp_path, account=ACCOUNT)
    assert ": domainName." in run.stderr, run.stderr


def test_a_deploy_with_real_values_and_a_pushed_image_synthesizes(tmp_path):
    run = run_app(REAL, tmp_path, account=ACCOUNT)
    assert run.returncode == 0, run.stderr
    assert "WARNING" not in run.stderr, run.stderr
    template = json.loads((tmp_path / "GcoConsole.template.json").read_text())
    # The execution role may pull from that repository only.
    assert "arn:aws:ecr:us-east-1:123456789012:repository/gco-console" in json.dumps(template)
    [task] = [r for r in template["Resources"].values() if r["Type"] == "AWS::ECS::TaskDefinition"]
    assert task["Properties"]["ContainerDefinitions"][0]["Image"] == {
        "Fn::Join": ["", ["123456789012.dkr.ecr.us-east-1.", {"Ref": "AWS::URLSuffix"}, "/gco-console@sha256:" + "ab" * 32]]
    }
    # Nothing is built on the deployer's machine.
    assets = json.loads((tmp_path / "GcoConsole.assets.json").read_text())
    assert assets.get("dockerImages", {}) == {}


def test_an_unknown_context_key_fails_naming_the_closest(tmp_path):
    for key, closest in (("vpcID", "vpcId"), ("sesionTimeout", "sessionTimeout"), ("internet_facing", "internetFacing")):
        with pytest.raises(SettingsError, match=f"context '{key}' is not a parameter of this app; did you mean '{closest}'"):
            synth({key: "x"})
    run = run_app({"vpcID": "vpc-1"}, tmp_path)
    assert run.returncode == 1
    assert run.stderr.strip().endswith(
        "gco-console stack: context 'vpcID' is not a parameter of this app; did you mean 'vpcId'? "
        '(README.md, "Run it for your team", lists them)'
    ), run.stderr
    # The CDK's own keys pass: feature flags, lookups, the CLI's.
    synth({"@aws-cdk/core:newStyleStackSynthesis": True, "acknowledged-issue-numbers": [1]})


def test_a_private_only_vpc_takes_an_internal_alb_and_refuses_a_public_one(tmp_path):
    _, template = synth({"vpcId": VPC_ID, **vpc_lookup()}, account=ACCOUNT)
    _, alb = only(template, "AWS::ElasticLoadBalancingV2::LoadBalancer")
    assert alb["Properties"]["Scheme"] == "internal"
    assert alb["Properties"]["Subnets"] == ["subnet-00000000000000001", "subnet-00000000000000002"]
    message = "context 'internetFacing' is true, and VPC vpc-0123456789abcdef0 has no public subnets"
    with pytest.raises(SettingsError, match=message):
        synth({"vpcId": VPC_ID, "internetFacing": True, **vpc_lookup()}, account=ACCOUNT)
    run = run_app({**REAL, "vpcId": VPC_ID, "internetFacing": "true", **vpc_lookup()}, tmp_path, account=ACCOUNT)
    assert run.returncode == 1
    assert run.stderr.strip().startswith("gco-console stack: " + message), run.stderr
    assert "Traceback" not in run.stderr and "jsii" not in run.stderr, run.stderr
    # With public subnets too, an internet-facing ALB goes in them.
    _, template = synth({"vpcId": VPC_ID, "internetFacing": True, **vpc_lookup(public=True)}, account=ACCOUNT)
    _, alb = only(template, "AWS::ElasticLoadBalancingV2::LoadBalancer")
    assert alb["Properties"]["Subnets"] == ["subnet-00000000000000003", "subnet-00000000000000004"]


def test_the_cdk_cli_is_pinned_and_synth_prints_no_flag_note(tmp_path):
    package = json.loads((CDK_DIR / "package.json").read_text())
    assert re.fullmatch(r"\d+\.\d+\.\d+", package["devDependencies"]["aws-cdk"])
    lock = json.loads((CDK_DIR / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/aws-cdk"]["version"] == package["devDependencies"]["aws-cdk"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "CDK_"))}
    env.update(CDK_DISABLE_CLI_TELEMETRY="true")
    run = subprocess.run(
        ["npx", "--yes", "cdk", "synth", "-q", "--no-notices", "-o", str(tmp_path)],
        cwd=CDK_DIR, env=env, capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "feature flags are not configured" not in run.stdout + run.stderr, run.stderr
    # Every flag this aws-cdk-lib recommends is set in cdk.json.
    import tarfile

    jsii = next((Path(cdk.__file__).parent / "_jsii").glob("aws-cdk-lib@*.jsii.tgz"))
    with tarfile.open(jsii) as tar:
        recommended = json.load(tar.extractfile("package/recommended-feature-flags.json"))
    assert set(recommended) <= set(CDK_JSON)
    # One is turned off, for lookups: see README.
    assert {k for k in recommended if CDK_JSON[k] != recommended[k]} == {"@aws-cdk/core:validateAgainstDefaultRules"}


def test_python_packages_are_pinned_indirect_ones_too():
    pins = {}
    for line in (CDK_DIR / "constraints.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[name] = version
    for name in ("aws-cdk-lib", "constructs", "cdk-nag", "jsii", "typeguard", "cattrs", "pytest"):
        assert name in pins, name
    for path in ("requirements.txt", "requirements-dev.txt"):
        for line in (CDK_DIR / path).read_text().splitlines():
            spec = line.split("#", 1)[0].strip()
            if spec:
                name, _, version = spec.partition("==")
                assert pins[name] == version, spec


# --- What the stack guards ----------------------------------------------------


def private_subnets(template: Template) -> list:
    return [
        {"Ref": k}
        for k, r in template.to_json()["Resources"].items()
        if r["Type"] == "AWS::EC2::Subnet" and "private" in k.lower()
    ]


def public_subnets(template: Template) -> list:
    return [
        {"Ref": k}
        for k, r in template.to_json()["Resources"].items()
        if r["Type"] == "AWS::EC2::Subnet" and "public" in k.lower()
    ]


def test_api_paths_answer_401_without_a_session(example):
    stack, template = example
    _, rule = only(template, "AWS::ElasticLoadBalancingV2::ListenerRule")
    props = rule["Properties"]
    assert props["Conditions"] == [{"Field": "path-pattern", "PathPatternConfig": {"Values": ["/api/*"]}}]
    actions = sorted(props["Actions"], key=lambda a: a["Order"])
    assert [a["Type"] for a in actions] == ["authenticate-oidc", "forward"]
    oidc = actions[0]["AuthenticateOidcConfig"]
    assert oidc["OnUnauthenticatedRequest"] == "deny"
    # The same sign-in as the pages', so the session the page made counts.
    https_id, https = only(template, "AWS::ElasticLoadBalancingV2::Listener", {"Port": 443})
    assert props["ListenerArn"] == {"Ref": https_id}
    page = next(a for a in https["Properties"]["DefaultActions"] if a["Type"] == "authenticate-oidc")
    same = {k: str(v) for k, v in page["AuthenticateOidcConfig"].items() if k != "OnUnauthenticatedRequest"}
    assert {k: str(v) for k, v in oidc.items() if k != "OnUnauthenticatedRequest"} == same


def test_the_internet_facing_layout(public):
    _, alb = only(public, "AWS::ElasticLoadBalancingV2::LoadBalancer")
    assert alb["Properties"]["Scheme"] == "internet-facing"
    assert alb["Properties"]["Subnets"] == public_subnets(public)
    # Open to the internet on 443 and 80 only.
    _, sg = only(public, "AWS::EC2::SecurityGroup", {"GroupDescription": Match.string_like_regexp("^GCO console ALB")})
    assert sorted((r["CidrIp"], r["FromPort"]) for r in sg["Properties"]["SecurityGroupIngress"]) == [
        ("0.0.0.0/0", 80),
        ("0.0.0.0/0", 443),
    ]
    acl_id, acl = only(public, "AWS::WAFv2::WebACL")
    assert acl["Properties"]["Scope"] == "REGIONAL"
    assert acl["Properties"]["DefaultAction"] == {"Allow": {}}
    rules = sorted(acl["Properties"]["Rules"], key=lambda r: r["Priority"])
    assert [
        (r["Statement"]["ManagedRuleGroupStatement"]["VendorName"], r["Statement"]["ManagedRuleGroupStatement"]["Name"])
        for r in rules
    ] == [("AWS", "AWSManagedRulesCommonRuleSet"), ("AWS", "AWSManagedRulesAmazonIpReputationList")]
    assert all(r["OverrideAction"] == {"None": {}} for r in rules)
    # Only the common set's body-size rule is counted instead of blocking:
    # the console takes bodies up to 256 KiB.
    common, reputation = (r["Statement"]["ManagedRuleGroupStatement"] for r in rules)
    assert common["RuleActionOverrides"] == [{"Name": "SizeRestrictions_BODY", "ActionToUse": {"Count": {}}}]
    assert "RuleActionOverrides" not in reputation
    body = (REPO_ROOT / "backend" / "src" / "api" / "body.rs").read_text()
    assert "pub const MAX_BODY_BYTES: usize = 256 * 1024;" in body
    alb_id, _ = only(public, "AWS::ElasticLoadBalancingV2::LoadBalancer")
    _, association = only(public, "AWS::WAFv2::WebACLAssociation")
    assert association["Properties"] == {"ResourceArn": {"Ref": alb_id}, "WebACLArn": {"Fn::GetAtt": [acl_id, "Arn"]}}


def test_an_internal_alb_takes_private_networks_and_no_waf_unless_asked(template):
    _, sg = only(template, "AWS::EC2::SecurityGroup", {"GroupDescription": Match.string_like_regexp("^GCO console ALB")})
    assert {r["CidrIp"] for r in sg["Properties"]["SecurityGroupIngress"]} == {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"}
    assert not template.find_resources("AWS::WAFv2::WebACL")
    _, with_waf = synth({"waf": True})
    with_waf.resource_count_is("AWS::WAFv2::WebACL", 1)
    _, without = synth({"internetFacing": True, "waf": False})
    without.resource_count_is("AWS::WAFv2::WebACL", 0)


def test_two_tasks_in_two_zones_and_the_default_security_group_closed(template):
    _, service = only(template, "AWS::ECS::Service")
    props = service["Properties"]
    assert props["DesiredCount"] == 2
    subnets = props["NetworkConfiguration"]["AwsvpcConfiguration"]["Subnets"]
    assert subnets == private_subnets(template)
    resources = template.to_json()["Resources"]
    zones = {json.dumps(resources[s["Ref"]]["Properties"]["AvailabilityZone"]) for s in subnets}
    assert len(zones) == 2
    _, vpc = only(template, "AWS::EC2::VPC")
    _, restrict = only(template, "Custom::VpcRestrictDefaultSG")
    assert restrict["Properties"]["DefaultSecurityGroupId"] == {"Fn::GetAtt": [next(iter(template.find_resources("AWS::EC2::VPC"))), "DefaultSecurityGroup"]}


def test_parameters_change_what_they_name():
    _, t = synth(
        {
            "sessionTimeout": "30m",
            "oidcScope": "openid email profile groups",
            "logRetentionDays": 365,
            "desiredCount": 3,
            "deletionProtection": False,
        }
    )
    _, https = only(t, "AWS::ElasticLoadBalancingV2::Listener", {"Port": 443})
    oidc = next(a for a in https["Properties"]["DefaultActions"] if a["Type"] == "authenticate-oidc")["AuthenticateOidcConfig"]
    assert (oidc["SessionTimeout"], oidc["Scope"]) == ("1800", "openid email profile groups")
    assert all(g["Properties"]["RetentionInDays"] == 365 for g in t.find_resources("AWS::Logs::LogGroup").values())
    assert only(t, "AWS::ECS::Service")[1]["Properties"]["DesiredCount"] == 3
    _, alb = only(t, "AWS::ElasticLoadBalancingV2::LoadBalancer")
    attributes = {a["Key"]: a["Value"] for a in alb["Properties"]["LoadBalancerAttributes"]}
    assert attributes["deletion_protection.enabled"] == "false"
    with pytest.raises(SettingsError, match="'sessionTimeout' is '8d'; it must be between 60s and 604800s"):
        synth({"sessionTimeout": "8d"})
    with pytest.raises(SettingsError, match="an OpenID Connect sign-in asks for 'openid'"):
        synth({"oidcScope": "email profile"})


# --- Alarms -------------------------------------------------------------------


def alarms_by_metric(template: Template) -> dict[str, dict]:
    found = {}
    for alarm in template.find_resources("AWS::CloudWatch::Alarm").values():
        p = alarm["Properties"]
        name = p.get("MetricName") or "+".join(sorted(m["MetricStat"]["Metric"]["MetricName"] for m in p["Metrics"] if "MetricStat" in m))
        found[name] = p
    return found


def test_alarms_go_to_the_stacks_topic(example):
    stack, template = example
    topic_id, _ = only(template, "AWS::SNS::Topic")
    _, topic_policy = only(template, "AWS::SNS::TopicPolicy")
    assert '"aws:SecureTransport": "false"' in json.dumps(topic_policy)
    alarms = alarms_by_metric(template)
    assert sorted(alarms) == [
        "HTTPCode_Target_5XX_Count",
        "RunningTaskCount",
        "ThrottledRequests+ThrottledRequests+ThrottledRequests",
        "UnHealthyHostCount",
        "gco_view_age_seconds",
    ]
    for alarm in alarms.values():
        assert alarm["AlarmActions"] == [{"Ref": topic_id}] and alarm["OKActions"] == [{"Ref": topic_id}]
    five_xx = alarms["HTTPCode_Target_5XX_Count"]
    assert (five_xx["Namespace"], five_xx["Statistic"], five_xx["Period"], five_xx["Threshold"]) == ("AWS/ApplicationELB", "Sum", 300, 5)
    unhealthy = alarms["UnHealthyHostCount"]
    assert (unhealthy["Threshold"], unhealthy["EvaluationPeriods"], unhealthy["ComparisonOperator"]) == (1, 3, "GreaterThanOrEqualToThreshold")
    running = alarms["RunningTaskCount"]
    assert (running["Namespace"], running["Threshold"], running["ComparisonOperator"], running["TreatMissingData"]) == (
        "ECS/ContainerInsights", 2, "LessThanThreshold", "breaching",
    )
    throttled = alarms["ThrottledRequests+ThrottledRequests+ThrottledRequests"]
    history_id, _ = only(template, "AWS::DynamoDB::Table")
    operations = sorted(
        {d["Name"]: d["Value"] for d in m["MetricStat"]["Metric"]["Dimensions"]}["Operation"]
        for m in throttled["Metrics"] if "MetricStat" in m
    )
    assert operations == ["PutItem", "Query", "TransactWriteItems"]
    for m in throttled["Metrics"]:
        if "MetricStat" in m:
            assert {"Name": "TableName", "Value": {"Ref": history_id}} in m["MetricStat"]["Metric"]["Dimensions"]
    view = alarms["gco_view_age_seconds"]
    assert (view["Namespace"], view["Dimensions"], view["Threshold"], view["Statistic"]) == (
        "GcoConsole", [{"Name": "Table", "Value": "gco-inference-endpoints"}], 300, "Maximum",
    )


def test_alarms_go_to_a_given_topic_and_count_healthy_tasks_without_insights():
    arn = "arn:aws:sns:us-east-1:123456789012:pager"
    _, template = synth({"alarmTopicArn": arn, "containerInsights": False, "viewAgeLimit": "2m"})
    template.resource_count_is("AWS::SNS::Topic", 0)
    alarms = alarms_by_metric(template)
    assert all(a["AlarmActions"] == [arn] for a in alarms.values())
    assert "HealthyHostCount" in alarms and "RunningTaskCount" not in alarms
    assert alarms["gco_view_age_seconds"]["Threshold"] == 120


def test_the_console_writes_the_figure_the_view_age_alarm_reads():
    # backend/src/emf.rs names the namespace, metric and dimension.
    from alarms import EMF_DIMENSION, EMF_NAMESPACE, VIEW_AGE_METRIC

    emf = (REPO_ROOT / "backend" / "src" / "emf.rs").read_text()
    assert f'pub const NAMESPACE: &str = "{EMF_NAMESPACE}";' in emf
    assert f'pub const DIMENSION: &str = "{EMF_DIMENSION}";' in emf
    assert '"Metrics": [{"Name": VIEW_AGE' in emf
    metrics = (REPO_ROOT / "backend" / "src" / "metrics.rs").read_text()
    assert f'pub const VIEW_AGE: &str = "{VIEW_AGE_METRIC}";' in metrics
