//! Per-region ECR image URIs: a deploy pulls each region's own replica.

use crate::json::Object;

/// The DNS suffix of a region's partition.
pub fn partition_suffix(region: &str) -> &'static str {
    if region.starts_with("cn-") {
        "amazonaws.com.cn"
    } else {
        "amazonaws.com"
    }
}

/// The image for `target_region`: an ECR URI
/// `<account>.dkr.ecr.<region>.<suffix>/<repo>[:tag|@digest]` gets the target
/// region and its partition's suffix. Anything else (a URI with a scheme, a
/// registry that is not ECR, a suffix that does not match its region's
/// partition) comes back unchanged.
pub fn rewrite_image_for_region(image: &str, target_region: &str) -> String {
    match parse_ecr(image) {
        Some((account, rest)) => {
            format!(
                "{account}.dkr.ecr.{target_region}.{}/{rest}",
                partition_suffix(target_region)
            )
        }
        None => image.to_owned(),
    }
}

/// The spec's `region_image_uris` for `image` deployed to `regions`: each
/// region's URI, when `image` is an ECR image and at least one region's
/// differs from it (deploy writes the map then, and only then).
pub fn region_image_uris(image: &str, regions: &[String]) -> Option<Object> {
    if !is_ecr_image(image) {
        return None;
    }
    let mut uris = Object::new();
    let mut differs = false;
    for region in regions {
        let uri = rewrite_image_for_region(image, region);
        differs |= uri != image;
        uris.insert(region, uri);
    }
    differs.then_some(uris)
}

/// Whether [`rewrite_image_for_region`] changes `image` for some region.
pub fn is_ecr_image(image: &str) -> bool {
    parse_ecr(image).is_some()
}

/// `(account, repository-and-reference)` of an ECR image URI.
fn parse_ecr(image: &str) -> Option<(&str, &str)> {
    if image.contains("://") {
        return None;
    }
    let (host, rest) = image.split_once('/')?;
    if rest.is_empty() {
        return None;
    }
    let mut labels = host.splitn(4, '.');
    let account = labels.next()?;
    let (dkr, ecr, tail) = (labels.next()?, labels.next()?, labels.next()?);
    let (region, suffix) = tail.split_once('.')?;
    let account_ok = account.len() == 12 && account.bytes().all(|c| c.is_ascii_digit());
    (account_ok
        && dkr == "dkr"
        && ecr == "ecr"
        && crate::names::is_region(region)
        && suffix == partition_suffix(region))
    .then_some((account, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_ecr_uris_per_partition() {
        let img = "123456789012.dkr.ecr.us-east-1.amazonaws.com/team/vllm:v1";
        assert_eq!(
            rewrite_image_for_region(img, "eu-west-1"),
            "123456789012.dkr.ecr.eu-west-1.amazonaws.com/team/vllm:v1"
        );
        assert_eq!(
            rewrite_image_for_region(img, "cn-north-1"),
            "123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn/team/vllm:v1"
        );
        assert_eq!(
            rewrite_image_for_region(img, "us-gov-west-1"),
            "123456789012.dkr.ecr.us-gov-west-1.amazonaws.com/team/vllm:v1"
        );
        let cn = "123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn/r@sha256:abc";
        assert_eq!(
            rewrite_image_for_region(cn, "us-east-1"),
            "123456789012.dkr.ecr.us-east-1.amazonaws.com/r@sha256:abc"
        );
    }

    #[test]
    fn leaves_other_images_alone() {
        for img in [
            "vllm/vllm-openai:v0.27.1",
            "ghcr.io/x/y:1",
            "https://123456789012.dkr.ecr.us-east-1.amazonaws.com/r",
            "123456789012.dkr.ecr.cn-north-1.amazonaws.com/r",
            "123456789012.dkr.ecr.us-east-1.amazonaws.com.cn/r",
            "12345.dkr.ecr.us-east-1.amazonaws.com/r",
            "123456789012.dkr.ecr.us-east-1.amazonaws.com/",
        ] {
            assert_eq!(rewrite_image_for_region(img, "eu-west-1"), img);
        }
    }

    #[test]
    fn region_image_uris_only_when_a_region_differs() {
        let regions = ["us-east-1".to_owned(), "cn-north-1".to_owned()];
        let img = "123456789012.dkr.ecr.us-east-1.amazonaws.com/r:1";
        assert_eq!(
            region_image_uris(img, &regions).map(|uris| crate::json::Value::Object(uris).to_json()),
            Some(
                r#"{"us-east-1": "123456789012.dkr.ecr.us-east-1.amazonaws.com/r:1", "cn-north-1": "123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn/r:1"}"#
                    .to_owned()
            )
        );
        // Its own region only, or no ECR image: deploy writes no map.
        assert_eq!(region_image_uris(img, &regions[..1]), None);
        assert_eq!(region_image_uris("vllm/vllm-openai:v1", &regions), None);
        assert_eq!(region_image_uris(img, &[]), None);
    }
}
