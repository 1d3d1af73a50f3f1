//! The bodies of the changes that take arguments. Each field is the core's
//! [`Value`] as the client sent it (a missing one reads as null): the
//! server's rules, not this type, say what a value may be, with the
//! reference's messages. The schemas say what the rules accept.

use gco_spec::json::{Object, Value};

/// The value of `key` in an object body; null when the body is no object
/// or lacks it (an empty body reads as `{}` for POST actions).
pub fn field(body: &Value, key: &str) -> Value {
    body.as_object()
        .and_then(|o| o.get(key))
        .cloned()
        .unwrap_or(Value::Null)
}

fn object(pairs: [(&str, &Value); 2]) -> Value {
    let mut o = Object::new();
    for (key, value) in pairs {
        o.insert(key, value.clone());
    }
    Value::Object(o)
}

fn one(key: &str, value: &Value) -> Value {
    let mut o = Object::new();
    o.insert(key, value.clone());
    Value::Object(o)
}

/// `PUT /api/endpoints/{name}/topology`: the XpYd topology of a split-mode
/// endpoint.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TopologyBody {
    #[cfg_attr(feature = "openapi", schema(value_type = i64, minimum = 1, maximum = 1000))]
    pub prefill: Value,
    #[cfg_attr(feature = "openapi", schema(value_type = i64, minimum = 1, maximum = 1000))]
    pub decode: Value,
}

impl TopologyBody {
    pub fn from_value(body: &Value) -> TopologyBody {
        TopologyBody {
            prefill: field(body, "prefill"),
            decode: field(body, "decode"),
        }
    }

    pub fn to_value(&self) -> Value {
        object([("prefill", &self.prefill), ("decode", &self.decode)])
    }
}

/// `PUT /api/endpoints/{name}/image`: the new image (per-region image URIs
/// are dropped).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ImageBody {
    #[cfg_attr(feature = "openapi", schema(value_type = String, min_length = 1))]
    pub image: Value,
    /// Move the PD proxy's image (`spec.mooncake.proxy.image`) to it too.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<bool>))]
    pub with_proxy: Value,
}

impl ImageBody {
    pub fn from_value(body: &Value) -> ImageBody {
        ImageBody {
            image: field(body, "image"),
            with_proxy: field(body, "with_proxy"),
        }
    }

    pub fn to_value(&self) -> Value {
        if self.with_proxy.is_null() {
            one("image", &self.image)
        } else {
            object([("image", &self.image), ("with_proxy", &self.with_proxy)])
        }
    }
}

/// `PUT /api/endpoints/{name}/replicas`: the replica count of a plain
/// endpoint.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReplicasBody {
    #[cfg_attr(feature = "openapi", schema(value_type = i64, minimum = 0))]
    pub replicas: Value,
}

impl ReplicasBody {
    pub fn from_value(body: &Value) -> ReplicasBody {
        ReplicasBody {
            replicas: field(body, "replicas"),
        }
    }

    pub fn to_value(&self) -> Value {
        one("replicas", &self.replicas)
    }
}

/// `POST /api/endpoints/{name}/regions`: a target region to add.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RegionBody {
    #[cfg_attr(feature = "openapi", schema(value_type = String, examples("eu-west-1")))]
    pub region: Value,
}

impl RegionBody {
    pub fn from_value(body: &Value) -> RegionBody {
        RegionBody {
            region: field(body, "region"),
        }
    }

    pub fn to_value(&self) -> Value {
        one("region", &self.region)
    }
}

#[cfg(test)]
mod tests {
    use gco_spec::json::parse;

    use super::*;

    #[test]
    fn a_body_reads_back_what_it_writes() {
        let body = TopologyBody {
            prefill: Value::int(2),
            decode: parse("99999999999999999999999").unwrap(),
        };
        assert_eq!(
            body.to_value().to_json(),
            r#"{"prefill": 2, "decode": 99999999999999999999999}"#
        );
        assert_eq!(TopologyBody::from_value(&body.to_value()), body);
    }

    #[test]
    fn a_missing_field_or_a_body_that_is_no_object_reads_as_null() {
        let empty = parse("{}").unwrap();
        assert_eq!(ImageBody::from_value(&empty).image, Value::Null);
        let list = parse("[1]").unwrap();
        assert_eq!(ReplicasBody::from_value(&list).replicas, Value::Null);
        let other = parse(r#"{"regions": "eu-west-1"}"#).unwrap();
        assert_eq!(RegionBody::from_value(&other).region, Value::Null);
    }
}

/// `POST /api/endpoints/{name}/canary`: a canary of a plain endpoint
/// (weight 10 and one replica unless given).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CanaryBody {
    #[cfg_attr(feature = "openapi", schema(value_type = String, min_length = 1))]
    pub image: Value,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>, minimum = 1, maximum = 99))]
    pub weight: Option<Value>,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>, minimum = 1))]
    pub replicas: Option<Value>,
}

impl CanaryBody {
    pub fn from_value(body: &Value) -> CanaryBody {
        let given = |key| body.as_object().and_then(|o| o.get(key)).cloned();
        CanaryBody {
            image: field(body, "image"),
            weight: given("weight"),
            replicas: given("replicas"),
        }
    }

    pub fn to_value(&self) -> Value {
        let mut o = Object::new();
        o.insert("image", self.image.clone());
        for (key, value) in [("weight", &self.weight), ("replicas", &self.replicas)] {
            if let Some(v) = value {
                o.insert(key, v.clone());
            }
        }
        Value::Object(o)
    }
}
