#!/usr/bin/env python3
"""The GCO console's CDK app: `python app.py` synthesizes it (cdk.json's
example context needs no AWS account); `cdk deploy -c key=value ...`
deploys it. README.md, "Run it for your team", lists the parameters."""

import json
import os
import re
import sys
from pathlib import Path

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from gco_console_stack import REPO_ROOT, ConsoleStack, Settings, SettingsError

# Parameters no two deployments share, and what cdk.json's placeholders for
# them look like (the documentation domain and account).
PLACEHOLDER = re.compile(r"(^|[./@])example\.com(/|$)|111122223333")
DEPLOYMENT_KEYS = (
    "oidcIssuer",
    "oidcAuthorizationEndpoint",
    "oidcTokenEndpoint",
    "oidcUserInfoEndpoint",
    "oidcClientId",
    "oidcClientSecretArn",
    "certificateArn",
    "domainName",
)
# What the Containerfile copies (scripts/image.sh stages it).
STAGED_BINARY = REPO_ROOT / "target" / "image" / "rootfs" / "usr" / "local" / "bin" / "gco-console"


def main() -> None:
    # The CDK CLI passes cdk.json's context (and -c) itself; run as
    # `python app.py`, the app reads cdk.json's context here.
    context = None
    if not {"CDK_CONTEXT_JSON", "CONTEXT_OVERFLOW_LOCATION_ENV"} & set(os.environ):
        context = json.loads((Path(__file__).parent / "cdk.json").read_text())["context"]
    app = cdk.App(context=context)
    try:
        settings = Settings.from_context(app.node.try_get_context)
    except SettingsError as e:
        sys.exit(f"gco-console stack: {e}")
    # The stack lives in the endpoints table's region (GCO's global
    # region), where the console's history table goes too.
    env = cdk.Environment(account=os.environ.get("CDK_DEFAULT_ACCOUNT"), region=settings.endpoints_table_region)
    if settings.vpc_id and not env.account:
        sys.exit("gco-console stack: vpcId needs an AWS account to look the VPC up (credentials, or CDK_DEFAULT_ACCOUNT)")
    if env.account:
        # With credentials (cdk deploy): refuse cdk.json's placeholders and
        # an image that was never staged.
        placeholders = [key for key in DEPLOYMENT_KEYS if PLACEHOLDER.search(str(app.node.try_get_context(key)))]
        if placeholders:
            sys.exit(
                "gco-console stack: these parameters still have cdk.json's example values: "
                + ", ".join(placeholders)
                + ". Give yours with -c KEY=VALUE (or in cdk.json)."
            )
        if not STAGED_BINARY.is_file():
            sys.exit(f"gco-console stack: {STAGED_BINARY} is missing: run scripts/image.sh (or scripts/image.sh --stage-only) first")
    ConsoleStack(
        app,
        app.node.try_get_context("stackName") or "GcoConsole",
        settings=settings,
        env=env,
        description="The GCO console behind an ALB with OIDC sign-in (gco deploy/cdk)",
    )
    # cdk-nag's AwsSolutions pack on every synth: a finding the stack does
    # not settle (README lists those it suppresses, and why) is an error
    # that stops `cdk deploy`.
    cdk.Aspects.of(app).add(AwsSolutionsChecks())
    app.synth()


if __name__ == "__main__":
    main()
