"""The console's alarms, each to one SNS topic (given by ARN, or the
stack's own): the ALB's targets answering 5xx, unhealthy targets, running
tasks below the desired count, throttled requests on the history table, and
the console's view of GCO's table growing old (`gco_view_age_seconds`,
which the console writes to its log as an embedded-metric-format line every
`--emf-interval`, and CloudWatch Logs turns into a metric).
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import (
    Duration,
    aws_cloudwatch as cloudwatch,
    aws_cloudwatch_actions as cloudwatch_actions,
    aws_dynamodb as dynamodb,
    aws_ecs as ecs,
    aws_elasticloadbalancingv2 as elbv2,
    aws_sns as sns,
    aws_sns_subscriptions as subscriptions,
)
from constructs import Construct

# What the console's EMF line names (backend/src/emf.rs): its namespace,
# the metric, and the one dimension, the endpoints table's name.
EMF_NAMESPACE = "GcoConsole"
VIEW_AGE_METRIC = "gco_view_age_seconds"
EMF_DIMENSION = "Table"
# Target 5xx answers in five minutes that page someone: the console answers
# 5xx only when DynamoDB or its own code fails, never for a user's mistake.
TARGET_5XX_LIMIT = 5
# Throttled history requests in five minutes (on-demand tables throttle
# only past their account or partition limits).
THROTTLE_LIMIT = 1
# The history table's operations the console makes: changes are written in
# a transaction with the endpoint, the history page queries.
HISTORY_OPERATIONS = (
    dynamodb.Operation.TRANSACT_WRITE_ITEMS,
    dynamodb.Operation.PUT_ITEM,
    dynamodb.Operation.QUERY,
)


@dataclass(frozen=True)
class Watched:
    """What the alarms watch."""

    alb: elbv2.ApplicationLoadBalancer
    target_group: elbv2.ApplicationTargetGroup
    service: ecs.FargateService
    cluster: ecs.Cluster
    history_table: dynamodb.Table
    endpoints_table_name: str
    desired_count: int
    container_insights: bool
    view_age_limit_seconds: int


def alarm_topic(scope: Construct, topic_arn: str | None, email: str | None) -> sns.ITopic:
    """The topic given by ARN, else one the stack makes (SSL only)."""
    if topic_arn:
        return sns.Topic.from_topic_arn(scope, "AlarmTopic", topic_arn)
    topic = sns.Topic(scope, "AlarmTopic", display_name="GCO console alarms", enforce_ssl=True)
    if email:
        topic.add_subscription(subscriptions.EmailSubscription(email))
    return topic


def add_alarms(scope: Construct, watched: Watched, topic: sns.ITopic) -> dict[str, cloudwatch.Alarm]:
    w = watched
    minute, five = Duration.minutes(1), Duration.minutes(5)
    alarms: dict[str, cloudwatch.Alarm] = {}

    def alarm(name: str, description: str, metric: cloudwatch.IMetric, **kwargs) -> None:
        made = cloudwatch.Alarm(
            scope,
            name,
            alarm_description=description,
            metric=metric,
            treat_missing_data=kwargs.pop("treat_missing_data", cloudwatch.TreatMissingData.NOT_BREACHING),
            **kwargs,
        )
        made.add_alarm_action(cloudwatch_actions.SnsAction(topic))
        made.add_ok_action(cloudwatch_actions.SnsAction(topic))
        alarms[name] = made

    alarm(
        "Target5xxAlarm",
        f"The console answered 5xx at least {TARGET_5XX_LIMIT} times in 5 minutes",
        w.alb.metrics.http_code_target(elbv2.HttpCodeTarget.TARGET_5XX_COUNT, period=five, statistic="Sum"),
        threshold=TARGET_5XX_LIMIT,
        evaluation_periods=1,
        comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    )
    alarm(
        "UnhealthyTargetsAlarm",
        "A console task has failed the ALB's /healthz check for 3 minutes",
        w.target_group.metrics.unhealthy_host_count(period=minute, statistic="Maximum"),
        threshold=1,
        evaluation_periods=3,
        comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    )
    if w.container_insights:
        running = cloudwatch.Metric(
            namespace="ECS/ContainerInsights",
            metric_name="RunningTaskCount",
            dimensions_map={"ClusterName": w.cluster.cluster_name, "ServiceName": w.service.service_name},
            period=minute,
            statistic="Minimum",
        )
        what = "running"
    else:
        # Without Container Insights ECS publishes no task count: the
        # tasks the ALB finds healthy stand in for the running ones.
        running = w.target_group.metrics.healthy_host_count(period=minute, statistic="Minimum")
        what = "healthy"
    alarm(
        "TasksBelowDesiredAlarm",
        f"Fewer than {w.desired_count} console tasks {what} for 5 minutes",
        running,
        threshold=w.desired_count,
        evaluation_periods=5,
        comparison_operator=cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        # No figure at all means no task reports: as bad as too few.
        treat_missing_data=cloudwatch.TreatMissingData.BREACHING,
    )
    alarm(
        "HistoryThrottleAlarm",
        "DynamoDB throttled the console's requests on the history table",
        w.history_table.metric_throttled_requests_for_operations(
            operations=list(HISTORY_OPERATIONS), period=five
        ),
        threshold=THROTTLE_LIMIT,
        evaluation_periods=1,
        comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    )
    alarm(
        "ViewAgeAlarm",
        f"The console's view of {w.endpoints_table_name} has been older than "
        f"{w.view_age_limit_seconds} s for 3 minutes while users look (reads of the table fail)",
        cloudwatch.Metric(
            namespace=EMF_NAMESPACE,
            metric_name=VIEW_AGE_METRIC,
            dimensions_map={EMF_DIMENSION: w.endpoints_table_name},
            period=minute,
            statistic="Maximum",
        ),
        threshold=w.view_age_limit_seconds,
        evaluation_periods=3,
        comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    )
    return alarms
