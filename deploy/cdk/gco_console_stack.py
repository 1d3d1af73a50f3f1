"""The GCO console on ECS Fargate behind an ALB that signs users in (OIDC).

`settings.Settings` holds the parameters; `ConsoleStack` builds what
README.md's "Run it for your team" describes: by default an internal ALB in
private subnets, two tasks in two zones, alarms to an SNS topic, and (for
an internet-facing ALB) a WAF web ACL. GCO's endpoints table is imported by
name and region and never created or changed; the history table is the
stack's own and outlives it.
"""

from __future__ import annotations

import json
import re
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
    aws_ecr as ecr,
    aws_ecr_assets as ecr_assets,
    aws_ecs as ecs,
    aws_elasticloadbalancingv2 as elbv2,
    aws_iam as iam,
    aws_logs as logs,
    aws_route53 as route53,
    aws_route53_targets as route53_targets,
    aws_s3 as s3,
    aws_sns as sns,
    aws_wafv2 as wafv2,
)
from cdk_nag import NagPackSuppression, NagSuppressions
from constructs import Construct

from alarms import Watched, add_alarms, alarm_topic
from settings import RETENTION, Settings, SettingsError, roles_toml

REPO_ROOT = Path(__file__).resolve().parents[2]
POLICY_FILE = REPO_ROOT / "deploy" / "iam-policy.json"
# The history table's key (issue 32): the endpoint's name and a sortable
# change id. The console's --create-table makes the same table locally.
HISTORY_PARTITION_KEY = "endpoint_name"
HISTORY_SORT_KEY = "change_id"
# The audit view's index (issue 43): every endpoint's changes by time, one
# partition per operation (an attribute every entry already has, so the
# entries written before the index are in it too); it holds what the view
# lists, never the contents. The console's `--create-table` makes the same.
AUDIT_INDEX_NAME = "by_operation_time"
AUDIT_INDEX_PARTITION_KEY = "operation"
AUDIT_INDEX_ATTRIBUTES = ("at", "who", "request_id", "client_request_id")
CONTAINER_PORT = 8080
# The console's API: a request here without the ALB's session is answered
# 401 (the page then offers to sign in again) instead of being redirected
# to the IdP, which a fetch cannot follow.
API_PATHS = ("/api/*",)
# An image in ECR: account, region, China's suffix, repository, and the
# digest (`@sha256:...`) or tag (`:...`).
ECR_IMAGE_RE = re.compile(
    r"^(\d{12})\.dkr\.ecr\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?/([a-z0-9._/-]+)(@sha256:[0-9a-f]{64}|:[A-Za-z0-9._-]+)$"
)
# AWS's managed rule groups the web ACL runs, in order.
WAF_RULE_GROUPS = ("AWSManagedRulesCommonRuleSet", "AWSManagedRulesAmazonIpReputationList")
# Rules only counted, not enforced: the common set blocks bodies over 8 KB,
# and an endpoint's deploy or change may be larger (the console takes up
# to 256 KiB and refuses more itself).
WAF_COUNT_ONLY = {"AWSManagedRulesCommonRuleSet": ("SizeRestrictions_BODY",)}


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
    """The console behind an ALB that signs users in with OIDC, on Fargate,
    over GCO's endpoints table and its own history table. Each step below
    makes one part, in the order the template lists them."""

    def __init__(self, scope: Construct, construct_id: str, *, settings: Settings, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        s = settings
        self.settings = s
        self.vpc = self.network(s)
        endpoints_table, self.history_table = self.tables(s)
        log_group = logs.LogGroup(
            self,
            "Logs",
            retention=retention(s.log_retention_days),
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.alb, alb_sg, access_logs = self.load_balancer(s)
        cluster, task = self.console_task(s, endpoints_table, log_group)
        self.service, task_sg, target_group = self.console_service(s, cluster, task)
        self.https_listener = self.listeners(s, target_group)
        # Only the ALB reaches the task, on its port.
        task_sg.add_ingress_rule(alb_sg, ec2.Port.tcp(CONTAINER_PORT), "The console's ALB")
        alb_sg.add_egress_rule(task_sg, ec2.Port.tcp(CONTAINER_PORT), "The console's task")
        if s.waf:
            self.web_acl(self.alb)
        topic = self.alarms_to(s, target_group, cluster)
        self.dns_record(s)
        self.settle_findings(alb_sg, access_logs, cluster, task, topic)
        self.outputs(s, topic)

    def tables(self, s: Settings) -> tuple[dynamodb.ITable, dynamodb.Table]:
        """GCO's endpoints table (imported) and the console's history table."""
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
        history_table.add_global_secondary_index(
            index_name=AUDIT_INDEX_NAME,
            partition_key=dynamodb.Attribute(name=AUDIT_INDEX_PARTITION_KEY, type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name=HISTORY_SORT_KEY, type=dynamodb.AttributeType.STRING),
            projection_type=dynamodb.ProjectionType.INCLUDE,
            non_key_attributes=list(AUDIT_INDEX_ATTRIBUTES),
        )
        return endpoints_table, history_table

    def load_balancer(self, s: Settings) -> tuple[elbv2.ApplicationLoadBalancer, ec2.SecurityGroup, s3.Bucket]:
        """The ALB, its security group and its access-log bucket."""
        vpc = self.vpc
        # The ALB's subnets: public for an internet-facing one, else
        # private ones with a route out, since the ALB itself calls the
        # IdP's token and user info endpoints.
        alb_subnets = ec2.SubnetType.PUBLIC if s.internet_facing else ec2.SubnetType.PRIVATE_WITH_EGRESS
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
            internet_facing=s.internet_facing,
            security_group=alb_sg,
            vpc_subnets=ec2.SubnetSelection(subnet_type=alb_subnets),
            drop_invalid_header_fields=True,
            deletion_protection=s.deletion_protection,
        )
        alb.log_access_logs(access_logs, prefix="alb")
        return alb, alb_sg, access_logs

    def console_task(
        self, s: Settings, endpoints_table: dynamodb.ITable, log_group: logs.LogGroup
    ) -> tuple[ecs.Cluster, ecs.FargateTaskDefinition]:
        """The cluster, and the task: its role (deploy/iam-policy.json) and
        the console's container with its settings."""
        vpc, alb, history_table = self.vpc, self.alb, self.history_table
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
                {
                    "EndpointsTable": endpoints_table.table_arn,
                    "HistoryTable": history_table.table_arn,
                    "HistoryIndex": f"{history_table.table_arn}/index/{AUDIT_INDEX_NAME}",
                },
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
            "GCO_EMF_INTERVAL": f"{s.emf_interval_seconds}s",
        }
        if s.regions:
            environment["GCO_REGIONS"] = ",".join(s.regions)
        container = task.add_container(
            "console",
            image=self.image(s),
            environment=environment,
            logging=ecs.LogDrivers.aws_logs(stream_prefix="console", log_group=log_group),
            port_mappings=[ecs.PortMapping(container_port=CONTAINER_PORT, protocol=ecs.Protocol.TCP)],
            # With DynamoDB the console writes no file.
            readonly_root_filesystem=True,
            user="65532:65532",
            essential=True,
        )
        self.container = container
        return cluster, task


    def console_service(
        self, s: Settings, cluster: ecs.Cluster, task: ecs.FargateTaskDefinition
    ) -> tuple[ecs.FargateService, ec2.SecurityGroup, elbv2.ApplicationTargetGroup]:
        """The Fargate service, its security group and the ALB's target group."""
        vpc = self.vpc
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
            # Private subnets in two zones: ECS spreads the tasks over them.
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
            assign_public_ip=False,
            min_healthy_percent=100,
            max_healthy_percent=200,
            circuit_breaker=ecs.DeploymentCircuitBreaker(rollback=True),
        )

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
        return service, task_sg, target_group

    def listeners(self, s: Settings, target_group: elbv2.ApplicationTargetGroup) -> elbv2.ApplicationListener:
        """HTTPS behind the OIDC sign-in (the API refused, not redirected,
        without a session), and HTTP redirected to it."""
        alb = self.alb

        def sign_in(on_unauthenticated: elbv2.UnauthenticatedAction) -> elbv2.ListenerAction:
            return elbv2.ListenerAction.authenticate_oidc(
                issuer=s.oidc_issuer,
                authorization_endpoint=s.oidc_authorization_endpoint,
                token_endpoint=s.oidc_token_endpoint,
                user_info_endpoint=s.oidc_user_info_endpoint,
                client_id=s.oidc_client_id,
                client_secret=SecretValue.secrets_manager(
                    s.oidc_client_secret_arn, json_field=s.oidc_client_secret_field
                ),
                scope=s.oidc_scope,
                session_timeout=Duration.seconds(s.session_timeout_seconds),
                on_unauthenticated_request=on_unauthenticated,
                next=elbv2.ListenerAction.forward([target_group]),
            )

        https = alb.add_listener(
            "Https",
            port=443,
            protocol=elbv2.ApplicationProtocol.HTTPS,
            certificates=[elbv2.ListenerCertificate.from_arn(s.certificate_arn)],
            ssl_policy=elbv2.SslPolicy.RECOMMENDED_TLS,
            open=False,
            default_action=sign_in(elbv2.UnauthenticatedAction.AUTHENTICATE),
        )
        https.add_action(
            "Api",
            priority=10,
            conditions=[elbv2.ListenerCondition.path_patterns(list(API_PATHS))],
            action=sign_in(elbv2.UnauthenticatedAction.DENY),
        )
        alb.add_listener(
            "Http",
            port=80,
            protocol=elbv2.ApplicationProtocol.HTTP,
            open=False,
            default_action=elbv2.ListenerAction.redirect(protocol="HTTPS", port="443", permanent=True),
        )
        return https

    def alarms_to(self, s: Settings, target_group: elbv2.ApplicationTargetGroup, cluster: ecs.Cluster) -> sns.ITopic:
        """The alarms (alarms.py), and the topic they notify."""
        topic = alarm_topic(self, s.alarm_topic_arn, s.alarm_email)
        self.alarms = add_alarms(
            self,
            Watched(
                alb=self.alb,
                target_group=target_group,
                service=self.service,
                cluster=cluster,
                history_table=self.history_table,
                endpoints_table_name=s.endpoints_table_name,
                desired_count=s.desired_count,
                container_insights=s.container_insights,
                view_age_limit_seconds=s.view_age_limit_seconds,
            ),
            topic,
        )
        return topic

    def dns_record(self, s: Settings) -> None:
        """The console's name as an alias of the ALB, when the zone is given."""
        if s.hosted_zone_id:
            zone = route53.HostedZone.from_hosted_zone_attributes(
                self, "Zone", hosted_zone_id=s.hosted_zone_id, zone_name=s.hosted_zone_name
            )
            route53.ARecord(
                self,
                "Alias",
                zone=zone,
                record_name=s.domain_name,
                target=route53.RecordTarget.from_alias(route53_targets.LoadBalancerTarget(self.alb)),
            )

    def outputs(self, s: Settings, topic: sns.ITopic) -> None:
        """Where the console answers, and what to register with the IdP."""
        CfnOutput(self, "ConsoleUrl", value=f"https://{s.domain_name}")
        CfnOutput(
            self,
            "AlbDnsName",
            value=self.alb.load_balancer_dns_name,
            description=f"Point {s.domain_name} here (CNAME or alias) unless hostedZoneId made the record",
        )
        CfnOutput(self, "HistoryTableName", value=self.history_table.table_name)
        CfnOutput(self, "AlarmTopicArn", value=topic.topic_arn)
        CfnOutput(
            self,
            "OidcRedirectUri",
            value=f"https://{s.domain_name}/oauth2/idpresponse",
            description="Register this redirect URI with the IdP's client",
        )

    def network(self, s: Settings) -> ec2.IVpc:
        """The VPC given by vpcId, checked for the subnets this layout needs;
        else a new one whose default security group admits nothing."""
        if s.vpc_id:
            vpc = ec2.Vpc.from_lookup(self, "Vpc", vpc_id=s.vpc_id)
            if s.internet_facing and not vpc.public_subnets:
                raise SettingsError(
                    f"context 'internetFacing' is true, and VPC {s.vpc_id} has no public subnets for an "
                    "internet-facing ALB; leave internetFacing false for an internal ALB in its private subnets"
                )
            if not vpc.private_subnets:
                raise SettingsError(
                    f"VPC {s.vpc_id} has no private subnets with a route out (NAT gateway or Transit Gateway): "
                    "the tasks reach ECR, CloudWatch Logs and the ALB's public-key endpoint, and the ALB the IdP, "
                    "through one"
                )
            return vpc
        # Two AZs (an ALB needs two), one NAT gateway (the cheapest that
        # lets the task reach the ALB's public-key endpoint and ECR, and the
        # ALB the IdP), and free gateway endpoints so DynamoDB and ECR's
        # layers (S3) stay off the NAT.
        vpc = ec2.Vpc(
            self,
            "Vpc",
            max_azs=2,
            nat_gateways=1,
            restrict_default_security_group=True,
            subnet_configuration=[
                ec2.SubnetConfiguration(name="public", subnet_type=ec2.SubnetType.PUBLIC, cidr_mask=24),
                ec2.SubnetConfiguration(name="private", subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS, cidr_mask=24),
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
        return vpc

    def image(self, s: Settings) -> ecs.ContainerImage:
        """The image pushed already (`image`: a registry reference, best by
        digest), else the Containerfile built here as an asset."""
        if s.image:
            ecr_image = ECR_IMAGE_RE.match(s.image)
            if not ecr_image:
                return ecs.ContainerImage.from_registry(s.image)
            # From ECR: the execution role is granted this repository only.
            account, region, suffix, name, reference = ecr_image.groups()
            partition = "aws-cn" if suffix else "aws"
            repository = ecr.Repository.from_repository_attributes(
                self,
                "ImageRepository",
                repository_arn=f"arn:{partition}:ecr:{region}:{account}:repository/{name}",
                repository_name=name,
            )
            return ecs.ContainerImage.from_ecr_repository(repository, tag=reference.lstrip("@:"))
        return ecs.ContainerImage.from_docker_image_asset(
            ecr_assets.DockerImageAsset(
                self,
                "Image",
                directory=str(REPO_ROOT),
                file="Containerfile",
                platform=ecr_assets.Platform.LINUX_AMD64,
            )
        )

    def web_acl(self, alb: elbv2.ApplicationLoadBalancer) -> wafv2.CfnWebACL:
        """AWS's managed common and IP-reputation rule groups before the ALB."""

        def visibility(name: str) -> wafv2.CfnWebACL.VisibilityConfigProperty:
            return wafv2.CfnWebACL.VisibilityConfigProperty(
                cloud_watch_metrics_enabled=True, metric_name=name, sampled_requests_enabled=True
            )

        acl = wafv2.CfnWebACL(
            self,
            "WebAcl",
            scope="REGIONAL",
            default_action=wafv2.CfnWebACL.DefaultActionProperty(allow={}),
            visibility_config=visibility("gco-console"),
            rules=[
                wafv2.CfnWebACL.RuleProperty(
                    name=group,
                    priority=priority,
                    override_action=wafv2.CfnWebACL.OverrideActionProperty(none={}),
                    statement=wafv2.CfnWebACL.StatementProperty(
                        managed_rule_group_statement=wafv2.CfnWebACL.ManagedRuleGroupStatementProperty(
                            vendor_name="AWS",
                            name=group,
                            rule_action_overrides=[
                                wafv2.CfnWebACL.RuleActionOverrideProperty(
                                    name=rule, action_to_use=wafv2.CfnWebACL.RuleActionProperty(count={})
                                )
                                for rule in WAF_COUNT_ONLY.get(group, ())
                            ]
                            or None,
                        )
                    ),
                    visibility_config=visibility(group),
                )
                for priority, group in enumerate(WAF_RULE_GROUPS)
            ],
        )
        wafv2.CfnWebACLAssociation(
            self, "WebAclAssociation", resource_arn=alb.load_balancer_arn, web_acl_arn=acl.attr_arn
        )
        self.acl = acl
        return acl

    def settle_findings(self, alb_sg, access_logs, cluster, task, topic) -> None:
        """cdk-nag's AwsSolutions findings this design accepts, each with
        its reason (the tests run the pack over the stack)."""
        s = self.settings
        if any(c in ("0.0.0.0/0", "::/0") for c in s.ingress_cidrs):
            suppress(
                alb_sg,
                "AwsSolutions-EC23",
                "The ALB is the console's front door for its users: ports 443 and 80 (redirected) only, every "
                "request is signed in by the ALB's OIDC action before it reaches the console, and (waf) AWS's "
                "managed rules screen it. Narrow it with the ingressCidrs parameter.",
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
                "Turned off by containerInsights=false: the ALB's target metrics stand in for the task count, "
                "and the task's logs and the console's /metrics cover the rest.",
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


def suppress(construct: Construct, rule: str, reason: str, applies_to: list[str] | None = None) -> None:
    NagSuppressions.add_resource_suppressions(
        construct,
        [NagPackSuppression(id=rule, reason=reason, applies_to=applies_to)],
        apply_to_children=True,
    )


def retention(days: int) -> logs.RetentionDays:
    return getattr(logs.RetentionDays, RETENTION[days])
