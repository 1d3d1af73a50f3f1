"""The GCO console on ECS Fargate behind an ALB that signs users in (OIDC).

`Settings.from_context` reads the parameters (cdk.json's context, or
`cdk deploy -c key=value`); `ConsoleStack` builds what README.md's "Run it
for your team" describes. GCO's endpoints table is imported by name and
region and never created or changed; the history table is the stack's own
and outlives it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from aws_cdk import (
    CfnOutput,
    Duration,
    RemovalPolicy,
    SecretValue,
    Stack,
    aws_dynamodb as dynamodb,
    aws_ec2 as ec2,
    aws_ecr_assets as ecr_assets,
    aws_ecs as ecs,
    aws_elasticloadbalancingv2 as elbv2,
    aws_iam as iam,
    aws_logs as logs,
    aws_route53 as route53,
    aws_route53_targets as route53_targets,
    aws_s3 as s3,
)
from cdk_nag import NagPackSuppression, NagSuppressions
from constructs import Construct

REPO_ROOT = Path(__file__).resolve().parents[2]
POLICY_FILE = REPO_ROOT / "deploy" / "iam-policy.json"
# The policy file's statements, by Sid, and the table each one is about.
POLICY_TABLES = ("EndpointsTable", "HistoryTable")
ROLES = ("viewer", "operator", "admin")
# The history table's key (issue 32): the endpoint's name and a sortable
# change id. The console's --create-table makes the same table locally.
HISTORY_PARTITION_KEY = "endpoint_name"
HISTORY_SORT_KEY = "change_id"
CONTAINER_PORT = 8080
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
)
REGION_RE = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d$")
SECRET_ARN_RE = re.compile(r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$")
CERT_ARN_RE = re.compile(r"^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate/.+$")


class SettingsError(ValueError):
    """A parameter is missing or wrong; the message names it."""


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
    oidc_scope: str = "openid email profile"
    groups_claim: str = "groups"
    vpc_id: str | None = None
    hosted_zone_id: str | None = None
    hosted_zone_name: str | None = None
    regions: tuple[str, ...] = ()
    ingress_cidrs: tuple[str, ...] = ("0.0.0.0/0",)
    desired_count: int = 1
    cpu: int = 256
    memory_mib: int = 512
    log_retention_days: int = 30
    container_insights: bool = False
    environment: Mapping[str, str] = field(default_factory=dict)

    @staticmethod
    def from_context(get) -> "Settings":
        """Reads the parameters through `get(key)` (a node's try_get_context)."""

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

        def listed(key: str, default: tuple[str, ...]) -> tuple[str, ...]:
            value = get(key)
            if value is None:
                return default
            if isinstance(value, str):
                value = [v for v in (part.strip() for part in value.split(",")) if v]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise SettingsError(f"context {key!r} must be a list of strings or a comma-separated string")
            return tuple(value)

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
        regions = listed("regions", ())
        for r in regions:
            if not REGION_RE.match(r):
                raise SettingsError(f"context 'regions': {r!r} is not an AWS region such as us-east-1")
        environment = get("environment") or {}
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
            oidc_scope=optional("oidcScope") or "openid email profile",
            certificate_arn=certificate_arn,
            domain_name=required("domainName"),
            roles=parse_roles(get("roles")),
            groups_claim=optional("groupsClaim") or "groups",
            vpc_id=optional("vpcId"),
            hosted_zone_id=hosted_zone_id,
            hosted_zone_name=hosted_zone_name,
            regions=regions,
            ingress_cidrs=listed("ingressCidrs", ("0.0.0.0/0",)),
            desired_count=integer("desiredCount", 1, 1, 10),
            cpu=integer("cpu", 256, 256, 4096),
            memory_mib=integer("memoryMiB", 512, 512, 30720),
            log_retention_days=retention_days(get("logRetentionDays")),
            container_insights=boolean("containerInsights", False),
            environment=dict(environment),
        )


def retention_days(value: Any) -> int:
    if value is None:
        return 30
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


def policy_statements(policy_file: Path, table_arns: Mapping[str, str]) -> list[iam.PolicyStatement]:
    """The policy file's statements with each Sid's table ARN as resource.

    Actions and conditions come from the file as they are; only the
    resource is this deployment's table.
    """
    document = json.loads(policy_file.read_text())
    statements = []
    sids = [s.get("Sid") for s in document["Statement"]]
    if sorted(sids) != sorted(table_arns):
        raise SettingsError(f"{policy_file}: its statements are {sids}; this stack knows {sorted(table_arns)}")
    for statement in document["Statement"]:
        if statement.get("Effect") != "Allow":
            raise SettingsError(f"{policy_file}: statement {statement['Sid']} is not an Allow")
        actions = statement["Action"]
        statements.append(
            iam.PolicyStatement(
                sid=statement["Sid"],
                actions=[actions] if isinstance(actions, str) else list(actions),
                resources=[table_arns[statement["Sid"]]],
                conditions=statement.get("Condition"),
            )
        )
    return statements


class ConsoleStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, *, settings: Settings, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        s = settings
        self.settings = s

        # --- Network -------------------------------------------------------
        if s.vpc_id:
            vpc = ec2.Vpc.from_lookup(self, "Vpc", vpc_id=s.vpc_id)
        else:
            # Two AZs (an ALB needs two), one NAT gateway (the cheapest that
            # lets the task reach the ALB's public-key endpoint and ECR),
            # and free gateway endpoints so DynamoDB and ECR's layers (S3)
            # stay off the NAT.
            vpc = ec2.Vpc(
                self,
                "Vpc",
                max_azs=2,
                nat_gateways=1,
                subnet_configuration=[
                    ec2.SubnetConfiguration(name="public", subnet_type=ec2.SubnetType.PUBLIC, cidr_mask=24),
                    ec2.SubnetConfiguration(
                        name="private", subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS, cidr_mask=24
                    ),
                ],
                gateway_endpoints={
                    "DynamoDb": ec2.GatewayVpcEndpointOptions(service=ec2.GatewayVpcEndpointAwsService.DYNAMODB),
                    "S3": ec2.GatewayVpcEndpointOptions(service=ec2.GatewayVpcEndpointAwsService.S3),
                },
            )
            flow_logs = logs.LogGroup(
                self,
                "FlowLogs",
                retention=retention(s.log_retention_days),
                removal_policy=RemovalPolicy.DESTROY,
            )
            vpc.add_flow_log(
                "FlowLog",
                destination=ec2.FlowLogDestination.to_cloud_watch_logs(flow_logs),
                traffic_type=ec2.FlowLogTrafficType.REJECT,
            )
        self.vpc = vpc

        # --- Tables --------------------------------------------------------
        # GCO's own table: imported by ARN, so nothing here can change it.
        endpoints_table = dynamodb.Table.from_table_arn(
            self,
            "EndpointsTable",
            Stack.of(self).format_arn(
                service="dynamodb",
                region=s.endpoints_table_region,
                resource="table",
                resource_name=s.endpoints_table_name,
            ),
        )
        history_table = dynamodb.Table(
            self,
            "HistoryTable",
            table_name=s.history_table_name,
            partition_key=dynamodb.Attribute(name=HISTORY_PARTITION_KEY, type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name=HISTORY_SORT_KEY, type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            deletion_protection=True,
            removal_policy=RemovalPolicy.RETAIN,
        )
        self.history_table = history_table

        # --- Logs ----------------------------------------------------------
        log_group = logs.LogGroup(
            self,
            "Logs",
            retention=retention(s.log_retention_days),
            removal_policy=RemovalPolicy.DESTROY,
        )

        # --- Load balancer -------------------------------------------------
        alb_sg = ec2.SecurityGroup(
            self,
            "AlbSecurityGroup",
            vpc=vpc,
            description="GCO console ALB: HTTPS, and HTTP redirected, from users",
            allow_all_outbound=False,
        )
        for cidr in s.ingress_cidrs:
            peer = ec2.Peer.ipv4(cidr)
            alb_sg.add_ingress_rule(peer, ec2.Port.tcp(443), "HTTPS from users")
            alb_sg.add_ingress_rule(peer, ec2.Port.tcp(80), "HTTP from users, redirected to HTTPS")
        # The ALB itself calls the IdP's token and user info endpoints.
        alb_sg.add_egress_rule(ec2.Peer.any_ipv4(), ec2.Port.tcp(443), "The IdP's token and user info endpoints")

        access_logs = s3.Bucket(
            self,
            "AlbAccessLogs",
            encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            lifecycle_rules=[s3.LifecycleRule(expiration=Duration.days(s.log_retention_days))],
            removal_policy=RemovalPolicy.RETAIN,
        )
        alb = elbv2.ApplicationLoadBalancer(
            self,
            "Alb",
            vpc=vpc,
            internet_facing=True,
            security_group=alb_sg,
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PUBLIC),
            drop_invalid_header_fields=True,
        )
        alb.log_access_logs(access_logs, prefix="alb")
        self.alb = alb

        # --- The console ---------------------------------------------------
        cluster = ecs.Cluster(
            self,
            "Cluster",
            vpc=vpc,
            container_insights_v2=(
                ecs.ContainerInsights.ENABLED if s.container_insights else ecs.ContainerInsights.DISABLED
            ),
        )
        task_role = iam.Role(
            self,
            "TaskRole",
            assumed_by=iam.ServicePrincipal("ecs-tasks.amazonaws.com"),
            description="The GCO console: deploy/iam-policy.json on GCO's table and the history table",
        )
        policy = iam.Policy(
            self,
            "TaskPolicy",
            statements=policy_statements(
                POLICY_FILE,
                {"EndpointsTable": endpoints_table.table_arn, "HistoryTable": history_table.table_arn},
            ),
        )
        policy.attach_to_role(task_role)

        task = ecs.FargateTaskDefinition(
            self,
            "Task",
            cpu=s.cpu,
            memory_limit_mib=s.memory_mib,
            task_role=task_role,
            runtime_platform=ecs.RuntimePlatform(
                operating_system_family=ecs.OperatingSystemFamily.LINUX,
                cpu_architecture=ecs.CpuArchitecture.X86_64,
            ),
        )
        image = ecr_assets.DockerImageAsset(
            self,
            "Image",
            directory=str(REPO_ROOT),
            file="Containerfile",
            platform=ecr_assets.Platform.LINUX_AMD64,
        )
        environment = {
            **s.environment,
            "GCO_CONSOLE_ADDR": f"0.0.0.0:{CONTAINER_PORT}",
            "GCO_AUTH": "alb",
            "GCO_ALB_ARN": alb.load_balancer_arn,
            "GCO_ROLES": roles_toml(s.roles),
            "GCO_GROUPS_CLAIM": s.groups_claim,
            "GCO_HISTORY_TABLE": history_table.table_name,
            "INFERENCE_ENDPOINTS_TABLE_NAME": s.endpoints_table_name,
            "DYNAMODB_REGION": s.endpoints_table_region,
            "GCO_ALLOWED_HOSTS": s.domain_name,
        }
        if s.regions:
            environment["GCO_REGIONS"] = ",".join(s.regions)
        container = task.add_container(
            "console",
            image=ecs.ContainerImage.from_docker_image_asset(image),
            environment=environment,
            logging=ecs.LogDrivers.aws_logs(stream_prefix="console", log_group=log_group),
            port_mappings=[ecs.PortMapping(container_port=CONTAINER_PORT, protocol=ecs.Protocol.TCP)],
            # With DynamoDB the console writes no file.
            readonly_root_filesystem=True,
            user="65532:65532",
            essential=True,
        )
        self.container = container

        task_sg = ec2.SecurityGroup(
            self,
            "TaskSecurityGroup",
            vpc=vpc,
            description="GCO console task: port 8080 from the ALB only",
            allow_all_outbound=False,
        )
        # DynamoDB, ECR, CloudWatch Logs and the ALB's public-key endpoint,
        # all HTTPS. (The VPC's DNS resolver is not filtered by groups.)
        task_sg.add_egress_rule(ec2.Peer.any_ipv4(), ec2.Port.tcp(443), "HTTPS to AWS APIs")
        service = ecs.FargateService(
            self,
            "Service",
            cluster=cluster,
            task_definition=task,
            desired_count=s.desired_count,
            security_groups=[task_sg],
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
            assign_public_ip=False,
            min_healthy_percent=100,
            max_healthy_percent=200,
            circuit_breaker=ecs.DeploymentCircuitBreaker(rollback=True),
        )
        self.service = service

        target_group = elbv2.ApplicationTargetGroup(
            self,
            "Targets",
            vpc=vpc,
            port=CONTAINER_PORT,
            protocol=elbv2.ApplicationProtocol.HTTP,
            target_type=elbv2.TargetType.IP,
            deregistration_delay=Duration.seconds(15),
            health_check=elbv2.HealthCheck(
                path="/healthz",
                healthy_http_codes="200",
                interval=Duration.seconds(15),
                healthy_threshold_count=2,
                unhealthy_threshold_count=3,
            ),
            targets=[service],
        )

        https = alb.add_listener(
            "Https",
            port=443,
            protocol=elbv2.ApplicationProtocol.HTTPS,
            certificates=[elbv2.ListenerCertificate.from_arn(s.certificate_arn)],
            ssl_policy=elbv2.SslPolicy.RECOMMENDED_TLS,
            open=False,
            default_action=elbv2.ListenerAction.authenticate_oidc(
                issuer=s.oidc_issuer,
                authorization_endpoint=s.oidc_authorization_endpoint,
                token_endpoint=s.oidc_token_endpoint,
                user_info_endpoint=s.oidc_user_info_endpoint,
                client_id=s.oidc_client_id,
                client_secret=SecretValue.secrets_manager(
                    s.oidc_client_secret_arn, json_field=s.oidc_client_secret_field
                ),
                scope=s.oidc_scope,
                session_timeout=Duration.hours(8),
                on_unauthenticated_request=elbv2.UnauthenticatedAction.AUTHENTICATE,
                next=elbv2.ListenerAction.forward([target_group]),
            ),
        )
        alb.add_listener(
            "Http",
            port=80,
            protocol=elbv2.ApplicationProtocol.HTTP,
            open=False,
            default_action=elbv2.ListenerAction.redirect(protocol="HTTPS", port="443", permanent=True),
        )
        # Only the ALB reaches the task, on its port.
        task_sg.add_ingress_rule(alb_sg, ec2.Port.tcp(CONTAINER_PORT), "The console's ALB")
        alb_sg.add_egress_rule(task_sg, ec2.Port.tcp(CONTAINER_PORT), "The console's task")
        self.https_listener = https

        if s.hosted_zone_id:
            zone = route53.HostedZone.from_hosted_zone_attributes(
                self, "Zone", hosted_zone_id=s.hosted_zone_id, zone_name=s.hosted_zone_name
            )
            route53.ARecord(
                self,
                "Alias",
                zone=zone,
                record_name=s.domain_name,
                target=route53.RecordTarget.from_alias(route53_targets.LoadBalancerTarget(alb)),
            )

        # cdk-nag's AwsSolutions findings this design accepts, each with
        # its reason (the tests run the pack over the stack).
        if any(c in ("0.0.0.0/0", "::/0") for c in s.ingress_cidrs):
            suppress(
                alb_sg,
                "AwsSolutions-EC23",
                "The ALB is the console's front door for its users: ports 443 and 80 (redirected) only, and every "
                "request is signed in by the ALB's OIDC action before it reaches the console. Narrow it with "
                "the ingressCidrs parameter.",
            )
        suppress(
            access_logs,
            "AwsSolutions-S1",
            "This bucket holds the ALB's access logs; logging the access to the log bucket itself would need "
            "another bucket for no added record (only the ELB log delivery service writes here).",
        )
        if not s.container_insights:
            suppress(
                cluster,
                "AwsSolutions-ECS4",
                "One small task: the ALB's target metrics, the task's logs and the console's /metrics cover it, "
                "and Container Insights is billed per metric. Turn it on with containerInsights=true.",
            )
        suppress(
            task,
            "AwsSolutions-ECS2",
            "The environment holds no secret: table names, the region, the ALB's ARN, the domain and the "
            "group-to-role mapping. The one secret, the OIDC client secret, is resolved by CloudFormation from "
            "Secrets Manager into the ALB's listener and never reaches the task.",
        )
        suppress(
            task.obtain_execution_role(),
            "AwsSolutions-IAM5",
            "ecr:GetAuthorizationToken has no resource-level permission (it must be granted on *); the execution "
            "role's other statements name the image repository and the log group.",
            applies_to=["Resource::*"],
        )

        CfnOutput(self, "ConsoleUrl", value=f"https://{s.domain_name}")
        CfnOutput(
            self,
            "AlbDnsName",
            value=alb.load_balancer_dns_name,
            description=f"Point {s.domain_name} here (CNAME or alias) unless hostedZoneId made the record",
        )
        CfnOutput(self, "HistoryTableName", value=history_table.table_name)
        CfnOutput(
            self,
            "OidcRedirectUri",
            value=f"https://{s.domain_name}/oauth2/idpresponse",
            description="Register this redirect URI with the IdP's client",
        )


def suppress(construct: Construct, rule: str, reason: str, applies_to: list[str] | None = None) -> None:
    NagSuppressions.add_resource_suppressions(
        construct,
        [NagPackSuppression(id=rule, reason=reason, applies_to=applies_to)],
        apply_to_children=True,
    )


# CloudWatch Logs keeps logs for one of these numbers of days.
RETENTION = {
    1: "ONE_DAY", 3: "THREE_DAYS", 5: "FIVE_DAYS", 7: "ONE_WEEK", 14: "TWO_WEEKS",
    30: "ONE_MONTH", 60: "TWO_MONTHS", 90: "THREE_MONTHS", 120: "FOUR_MONTHS",
    150: "FIVE_MONTHS", 180: "SIX_MONTHS", 365: "ONE_YEAR", 400: "THIRTEEN_MONTHS",
    545: "EIGHTEEN_MONTHS", 731: "TWO_YEARS", 1096: "THREE_YEARS", 1827: "FIVE_YEARS",
    2192: "SIX_YEARS", 2557: "SEVEN_YEARS", 2922: "EIGHT_YEARS", 3288: "NINE_YEARS",
    3653: "TEN_YEARS",
}  # fmt: skip


def retention(days: int) -> logs.RetentionDays:
    return getattr(logs.RetentionDays, RETENTION[days])
