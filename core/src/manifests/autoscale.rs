//! A role's autoscaler (4.8): an HPA for cpu/memory metrics, a KEDA
//! ScaledObject as soon as one metric is a GPU one.

use std::collections::BTreeMap;

use k8s_openapi::api::autoscaling::v2::{
    CrossVersionObjectReference, HorizontalPodAutoscaler, HorizontalPodAutoscalerSpec, MetricSpec,
    MetricTarget, ResourceMetricSource,
};

use super::keda::{ScaleTargetRef, ScaleTrigger, ScaledObject, ScaledObjectSpec};
use super::meta::object_meta;
use super::{Endpoint, Manifest, ManifestError, Notes};
use crate::mooncake::Role;
use crate::plan::{Block, Kind, PlanError};

/// The CloudWatch namespace the cluster's observability agent publishes
/// per-pod GPU metrics to.
const GPU_METRIC_NAMESPACE: &str = "ContainerInsights";

fn i32_of(n: i64) -> i32 {
    i32::try_from(n).unwrap_or(if n < 0 { i32::MIN } else { i32::MAX })
}

/// The autoscaler of `role`'s Deployment `target`, of the skeleton's `kind`
/// (named as the Deployment it scales).
pub(super) fn role_autoscaler(
    ep: &Endpoint<'_>,
    target: &str,
    kind: Kind,
    block: &Block<'_>,
    role: Role,
    notes: &mut Notes,
) -> Result<Manifest, ManifestError> {
    let scaling = block
        .role_autoscaling(role)
        .expect("the skeleton lists an autoscaler only for a role that has one");
    let metadata = object_meta(target, ep.namespace, None, ep.owner.annotations());
    if kind == Kind::HorizontalPodAutoscaler {
        let metrics = scaling
            .metrics
            .iter()
            .map(|m| MetricSpec {
                type_: "Resource".to_owned(),
                resource: Some(ResourceMetricSource {
                    name: m.kind.as_str().to_owned(),
                    target: MetricTarget {
                        type_: "Utilization".to_owned(),
                        average_utilization: Some(i32_of(m.target)),
                        ..MetricTarget::default()
                    },
                }),
                ..MetricSpec::default()
            })
            .collect();
        return Ok(Manifest::HorizontalPodAutoscaler(Box::new(
            HorizontalPodAutoscaler {
                metadata,
                spec: HorizontalPodAutoscalerSpec {
                    scale_target_ref: CrossVersionObjectReference {
                        api_version: Some("apps/v1".to_owned()),
                        kind: "Deployment".to_owned(),
                        name: target.to_owned(),
                    },
                    min_replicas: Some(i32_of(scaling.min_replicas)),
                    max_replicas: i32_of(scaling.max_replicas),
                    metrics: Some(metrics),
                    ..HorizontalPodAutoscalerSpec::default()
                },
                ..HorizontalPodAutoscaler::default()
            },
        )));
    }
    let cluster = ep.ctx.cluster_name();
    let mut triggers = Vec::new();
    for metric in &scaling.metrics {
        let value = metric.target.to_string();
        let Some(cloudwatch_metric) = metric.kind.cloudwatch_metric() else {
            triggers.push(ScaleTrigger {
                type_: metric.kind.as_str().to_owned(),
                metric_type: Some("Utilization".to_owned()),
                metadata: BTreeMap::from([("value".to_owned(), value)]),
            });
            continue;
        };
        let Some(cluster) = cluster else {
            return Err(PlanError {
                path: format!("spec.mooncake.autoscaling.{}.metrics", role.as_str()),
                message: format!(
                    "the {} trigger of ScaledObject {target} names {}'s EKS cluster: give its cluster name (GCO's monitor reads it from CLUSTER_NAME; GCO has no default)",
                    metric.kind.as_str(),
                    ep.ctx.region
                ),
            });
        };
        let metadata = [
            ("namespace", GPU_METRIC_NAMESPACE.to_owned()),
            ("metricName", cloudwatch_metric.to_owned()),
            ("dimensionName", "ClusterName;Namespace;PodName".to_owned()),
            (
                "dimensionValue",
                format!("{cluster};{};{target}", ep.namespace),
            ),
            ("minMetricValue", "0".to_owned()),
            ("metricStat", "Average".to_owned()),
            ("identityOwner", "operator".to_owned()),
            ("targetMetricValue", value),
            ("awsRegion", ep.ctx.region.clone()),
        ];
        triggers.push(ScaleTrigger {
            type_: "aws-cloudwatch".to_owned(),
            metric_type: None,
            metadata: metadata
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        });
        notes.push(
            "aws-cloudwatch triggers: targetMetricValue (the metric's target) and awsRegion (the region) are as read; the facts list the other keys",
        );
    }
    notes.push(format!(
        "KEDA creates the HPA keda-hpa-{target} behind ScaledObject {target}"
    ));
    Ok(Manifest::ScaledObject(Box::new(ScaledObject::new(
        metadata,
        ScaledObjectSpec {
            scale_target_ref: ScaleTargetRef {
                api_version: Some("apps/v1".to_owned()),
                kind: Some("Deployment".to_owned()),
                name: target.to_owned(),
            },
            min_replica_count: i32_of(scaling.min_replicas),
            max_replica_count: i32_of(scaling.max_replicas),
            triggers,
        },
    ))))
}
