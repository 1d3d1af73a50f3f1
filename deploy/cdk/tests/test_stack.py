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
    HISTORY_PARTITION_KEY,
    HISTORY_SORT_KEY,
    ConsoleStack,
    Settings,
    SettingsError,
)

EXAMPLE = json.loads((CDK_DIR / "cdk.json").read_text())["context"]
POLICY = json.loads((REPO_ROOT / "deploy" / "iam-policy.json").read_text())


def synth(context: dict | None = None, *, nag: bool = False, account: str | None = None):
    context = EXAMPLE if context is None else context
    app = cdk.App(context=context)
    settings = Settings.from_context(context.get)
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


def only(template: Template, kind: str, props: dict | None = None) -> tuple[str, dict]:
    found = template.find_resources(kind, {"Properties": props} if props else None)
    assert len(found) == 1, f"one {kind} expected, found {sorted(found)}"
    return next(iter(found.items()))


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


def test_the_alb_is_internet_facing_and_logs_access(template):
    _, alb = only(template, "AWS::ElasticLoadBalancingV2::LoadBalancer")
    props = alb["Properties"]
    assert props["Scheme"] == "internet-facing"
    attributes = {a["Key"]: a["Value"] for a in props["LoadBalancerAttributes"]}
    assert attributes["access_logs.s3.enabled"] == "true"
    assert attributes["routing.http.drop_invalid_header_fields.enabled"] == "true"


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
    actions = {s["Sid"]: sorted(s["Action"]) for s in statements}
    assert actions == {s["Sid"]: sorted(s["Action"]) for s in POLICY["Statement"]}
    assert all(s["Effect"] == "Allow" for s in statements)
    resources = {s["Sid"]: s["Resource"] for s in statements}
    # GCO's table, imported: its name and region in the ARN.
    endpoints = stack.resolve(resources["EndpointsTable"])
    arn_text = json.dumps(endpoints)
    assert ":dynamodb:us-east-1:" in arn_text and ":table/gco-inference-endpoints" in arn_text
    history_id, _ = only(template, "AWS::DynamoDB::Table")
    assert resources["HistoryTable"] == {"Fn::GetAtt": [history_id, "Arn"]}


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


def test_the_history_key_is_the_one_the_console_writes():
    # The console's DynamoDB store makes the same table with --create-table
    # and writes its entries under these two attributes.
    store = (REPO_ROOT / "backend" / "src" / "store" / "dynamo.rs").read_text()
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
        assert group["Properties"]["RetentionInDays"] == 30


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


def nag_findings(context: dict) -> list[str]:
    stack, _ = synth(context, nag=True)
    annotations = Annotations.from_stack(stack)
    return [
        f"{m.id}: {m.entry.data}"
        for find in (annotations.find_error, annotations.find_warning)
        for m in find("*", Match.string_like_regexp("AwsSolutions-.*"))
    ]


def test_cdk_nag_aws_solutions_finds_nothing_unsettled():
    assert nag_findings(EXAMPLE) == []


def test_cdk_nag_settles_the_optional_shapes_too():
    context = copy.deepcopy(EXAMPLE)
    context.update(containerInsights=True, ingressCidrs=["203.0.113.0/24"], logRetentionDays=90)
    assert nag_findings(context) == []


# --- Parameters -----------------------------------------------------------


def test_settings_refuse_what_would_be_wrong():
    def refused(**changes) -> str:
        context = {**EXAMPLE, **changes}
        with pytest.raises(SettingsError) as e:
            Settings.from_context(context.get)
        return str(e.value)

    assert "'endpointsTableRegion' is required" in refused(endpointsTableRegion=None)
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
    from gco_console_stack import roles_toml

    text = roles_toml(Settings.from_context(context.get).roles)
    assert tomllib.loads(text) == {"default": "none", "groups": {"sre": "admin"}}


def test_roles_from_the_command_line_as_json_text():
    context = {**EXAMPLE, "roles": '{"default": "operator", "groups": {"sre \\"core\\"": "admin"}}'}
    settings = Settings.from_context(context.get)
    from gco_console_stack import roles_toml

    assert tomllib.loads(roles_toml(settings.roles)) == {"default": "operator", "groups": {'sre "core"': "admin"}}


def test_an_existing_vpc_is_looked_up_not_created():
    context = {**EXAMPLE, "vpcId": "vpc-0123456789abcdef0"}
    _, template = synth(context, account="111122223333")
    assert not template.find_resources("AWS::EC2::VPC")
    assert not template.find_resources("AWS::EC2::NatGateway")
    template.resource_count_is("AWS::ECS::Service", 1)


def test_a_hosted_zone_gets_the_alias_record():
    context = {**EXAMPLE, "hostedZoneId": "Z0123456789ABCDEFGHIJ", "hostedZoneName": "example.com"}
    _, template = synth(context)
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


def test_a_deploy_with_the_example_values_is_refused(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "CDK_"))}
    env.update(CDK_OUTDIR=str(tmp_path), CDK_DEFAULT_ACCOUNT="123456789012")
    run = subprocess.run(
        [sys.executable, "app.py"], cwd=CDK_DIR, env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode != 0
    assert "still have cdk.json's example values: oidcIssuer" in run.stderr, run.stderr
    assert "certificateArn, domainName" in run.stderr, run.stderr
