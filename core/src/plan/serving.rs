//! The spec's fields the serving pods are built from, read in one place with
//! GCO's defaults, for the plan and the manifests alike (what only the
//! manifests read is compiled with them).

use super::PlanError;
use crate::framework::{Framework, runtime_framework};
use crate::json::{Object, Value};
#[cfg(feature = "manifests")]
use crate::limits::DEFAULT_HEALTH_CHECK_PATH;
use crate::limits::{DEFAULT_GPU_COUNT, DEFAULT_PORT, DEFAULT_REPLICAS};
#[cfg(feature = "manifests")]
use crate::pyrepr::py_str;

/// A spec as the monitor reads it for the serving pods.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ServingSpec<'a> {
    pub spec: &'a Object,
}

impl<'a> ServingSpec<'a> {
    /// The value of `key`; a null one counts as not given.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.spec.get(key).filter(|v| !v.is_null())
    }

    /// The value of `key` as stored, else `default`.
    fn value_or(&self, key: &str, default: i64) -> Value {
        self.get(key).cloned().unwrap_or(Value::int(default))
    }

    /// The integer at `key`, else `default` (absent, or not an integer).
    fn int_or(&self, key: &str, default: i64) -> i64 {
        self.get(key)
            .and_then(Value::as_int)
            .and_then(|i| i.as_i64())
            .unwrap_or(default)
    }

    /// `port` as stored: what the plan shows.
    pub fn port_value(&self) -> Value {
        self.value_or("port", DEFAULT_PORT)
    }

    /// `port` as an integer.
    pub fn port(&self) -> i64 {
        self.int_or("port", DEFAULT_PORT)
    }

    /// `port` as a Kubernetes port field: the default unless it fits.
    #[cfg(feature = "manifests")]
    pub fn container_port(&self) -> i32 {
        let default = i32::try_from(DEFAULT_PORT).expect("a TCP port");
        i32::try_from(self.port()).unwrap_or(default)
    }

    /// `replicas` as stored.
    pub fn replicas_value(&self) -> Value {
        self.value_or("replicas", DEFAULT_REPLICAS)
    }

    /// `replicas` as an integer.
    #[cfg(feature = "manifests")]
    pub fn replicas(&self) -> i64 {
        self.int_or("replicas", DEFAULT_REPLICAS)
    }

    /// `gpu_count` as stored.
    pub fn gpu_count_value(&self) -> Value {
        self.value_or("gpu_count", DEFAULT_GPU_COUNT)
    }

    /// `gpu_count` as an integer.
    #[cfg(feature = "manifests")]
    pub fn gpu_count(&self) -> i64 {
        self.int_or("gpu_count", DEFAULT_GPU_COUNT)
    }

    /// `health_check_path` as Python's `str()` prints it.
    #[cfg(feature = "manifests")]
    pub fn health_check_path(&self) -> String {
        self.get("health_check_path")
            .map_or_else(|| DEFAULT_HEALTH_CHECK_PATH.to_owned(), py_str)
    }

    /// The image the pods run in `region`: `spec.region_image_uris[region]`,
    /// else `spec.image` (the region's own ECR copy when deploy wrote one).
    pub fn image(&self, region: &str) -> Result<&'a str, PlanError> {
        let regional = self
            .spec
            .get("region_image_uris")
            .and_then(Value::as_object)
            .and_then(|m| m.get(region));
        regional
            .or_else(|| self.spec.get("image"))
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| PlanError {
                path: "spec.image".into(),
                message: "Image must be a non-empty string".into(),
            })
    }

    /// The framework GCO's monitor renders the pods for, with `image` the
    /// region's (see [`runtime_framework`]).
    pub fn runtime_framework(&self, image: &str) -> Option<Framework> {
        runtime_framework(self.spec, image)
    }

    /// GCO starts SGLang with its own launcher unless the spec has a
    /// `command`.
    pub fn runs_sglang_launcher(&self, image: &str) -> bool {
        self.get("command").is_none() && self.runtime_framework(image) == Some(Framework::Sglang)
    }

    /// GCO keeps SGLang pods off GPUs older than Ampere by a required node
    /// affinity, on NVIDIA GPUs only (`inference_monitor.py@7a0b3c6fd4`).
    pub fn keeps_off_pre_ampere(&self, image: &str) -> bool {
        self.runtime_framework(image) == Some(Framework::Sglang)
            && self.get("accelerator").and_then(Value::as_str) != Some("neuron")
            && self.int_or("gpu_count", DEFAULT_GPU_COUNT) > 0
    }

    /// Whether `spec.env` has an entry `key` (whatever its value).
    pub fn env_has(&self, key: &str) -> bool {
        self.get("env")
            .and_then(Value::as_object)
            .is_some_and(|env| env.contains_key(key))
    }
}
